//! The output printers of kubeadm's `-o/--experimental-output` flag beyond `text`, `json` and `yaml`:
//! cli-runtime's JSONPath (`jsonpath`, `jsonpath-as-json`, `jsonpath-file`) and Go template
//! (`go-template`, `go-template-file`, `template`, `templatefile`) printers, chosen and built as
//! upstream's flags do (`-o FORMAT=TEMPLATE`, or `-o FORMAT-file=PATH`), with their error texts.
//!
//! Both walk the object as JSON: the JSON of `-o json` (the commands build it), decoded as upstream
//! decodes it (every number a float64 for JSONPath; integers as int64 for templates).

pub(crate) mod gofmt;
pub(crate) mod gotemplate;
pub(crate) mod jsonpath;

use kubeadm_effects::fs::Fs;
use serde_json::Value;

use crate::error::CommandError;

/// What `-o` asks for.
#[derive(Debug)]
pub(crate) enum Printer {
    Text,
    Json,
    Yaml,
    /// A JSONPath or Go template printer.
    Template(TemplatePrinter),
}

/// A JSONPath or Go template printer and the template text it was given.
#[derive(Debug)]
pub(crate) struct TemplatePrinter {
    raw: String,
    engine: Engine,
}

#[derive(Debug)]
enum Engine {
    JsonPath(jsonpath::JsonPath),
    GoTemplate(gotemplate::Template),
}

const JSONPATH_FORMATS: [&str; 3] = ["jsonpath", "jsonpath-as-json", "jsonpath-file"];
const TEMPLATE_FORMATS: [&str; 4] = ["go-template", "go-template-file", "template", "templatefile"];

/// Upstream's `PrintFlags.ToPrinter` for `format` (the `-o` value): `allowed` lists the formats in
/// the error of a format none matches; `allow_missing` is `--allow-missing-template-keys`. Every
/// error is bad input (exit code 3), prefixed as upstream's commands prefix it.
pub(crate) fn printer(format: &str, allow_missing: bool, allowed: &str) -> Result<Printer, CommandError> {
    let bad = |m: String| CommandError::Validation(format!("could not construct output printer: {m}"));
    match format {
        "text" => return Ok(Printer::Text),
        "json" => return Ok(Printer::Json),
        "yaml" => return Ok(Printer::Yaml),
        _ => {}
    }
    let split = |formats: &[&'static str]| -> Option<(&'static str, String)> {
        formats.iter().find_map(|f| {
            if format == *f {
                Some((*f, String::new()))
            } else {
                format.strip_prefix(&format!("{f}=")).map(|t| (*f, t.to_string()))
            }
        })
    };
    let (kind, template, jsonpath) = if let Some((k, t)) = split(&JSONPATH_FORMATS) {
        (k, t, true)
    } else if let Some((k, t)) = split(&TEMPLATE_FORMATS) {
        (k, t, false)
    } else {
        return Err(bad(format!(
            "unable to match a printer suitable for the output format {}, allowed formats are: {allowed}",
            kubeadm_api::gofmt::quote(format)
        )));
    };
    if template.is_empty() {
        return Err(bad("template format specified but no template given".into()));
    }
    let raw = if kind.ends_with("file") {
        kubeadm_host::fs::RealFs
            .read(std::path::Path::new(&template))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| {
                bad(format!(
                    "error reading --template {template}, {}",
                    kubeadm_api::gofmt::read_file_error(&template, &e)
                ))
            })?
    } else {
        template
    };
    let engine = if jsonpath {
        let mut jp =
            jsonpath::JsonPath::parse(&raw).map_err(|e| bad(format!("error parsing jsonpath {raw}, {e}")))?;
        jp.allow_missing_keys = allow_missing;
        jp.output_json = kind == "jsonpath-as-json";
        Engine::JsonPath(jp)
    } else {
        let mut t = gotemplate::Template::parse("output", &raw)
            .map_err(|e| bad(format!("error parsing template {raw}, {e}")))?;
        t.missing_key_error = !allow_missing;
        Engine::GoTemplate(t)
    };
    Ok(Printer::Template(TemplatePrinter { raw, engine }))
}

impl TemplatePrinter {
    /// Prints `object` (the JSON the command prints with `-o json`) into `out`. On failure, `out`
    /// holds what upstream writes to standard output before it fails, and the error is its message.
    pub(crate) fn print(&mut self, object: &Value, out: &mut String) -> Result<(), String> {
        match &mut self.engine {
            Engine::JsonPath(jp) => match jp.execute(object) {
                Ok(text) => {
                    out.push_str(&text);
                    Ok(())
                }
                Err(e) => Err(format!(
                    "error executing jsonpath {}: Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{}\n\tobject given to jsonpath engine was:\n\t\t{}\n\n\n",
                    kubeadm_api::gofmt::quote(&self.raw),
                    self.raw,
                    gofmt::sharp_v(object, false),
                )),
            },
            Engine::GoTemplate(t) => {
                if let Err(e) = t.execute(object, out) {
                    let raw_data = compact_struct_json(object);
                    out.push_str(&format!(
                        "Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{}\n\traw data was:\n\t\t{raw_data}\n\tobject given to template engine was:\n\t\t{}\n\n",
                        self.raw,
                        gofmt::v(object, true),
                    ));
                    return Err(format!(
                        "error executing template {}: {e}",
                        kubeadm_api::gofmt::quote(&self.raw)
                    ));
                }
                Ok(())
            }
        }
    }
}

/// `json.Marshal` of the Go object: compact, fields in the order `object` holds them.
fn compact_struct_json(object: &Value) -> String {
    serde_json::to_string(object)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}
