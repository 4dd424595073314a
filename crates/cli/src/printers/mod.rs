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
pub(crate) mod sorted_json;

use kubeadm_effects::fs::Fs;
use serde_json::Value;

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

/// Why a template printer failed on an object, in the words of upstream's printers (the commands
/// put their own words before it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PrintError {
    /// The JSONPath template failed on the object; the message ends with the template and the
    /// object (Go's `%#v`), as cli-runtime's JSONPath printer adds them for debugging.
    #[error(
        "error executing jsonpath {}: Error executing template: {source}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{template}\n\tobject given to jsonpath engine was:\n\t\t{object}\n\n\n",
        kubeadm_api::gofmt::quote(.template)
    )]
    JsonPath {
        /// The template text.
        template: String,
        /// The object as Go's `%#v` prints it.
        object: String,
        /// Why the template failed.
        source: jsonpath::JsonPathError,
    },
    /// The Go template failed on the object.
    #[error("error executing template {}: {source}", kubeadm_api::gofmt::quote(.template))]
    GoTemplate {
        /// The template text.
        template: String,
        /// Why the template failed (boxed: an execution error is large).
        source: Box<gotemplate::TemplateError>,
    },
}

#[derive(Debug)]
enum Engine {
    JsonPath(jsonpath::JsonPath),
    GoTemplate(gotemplate::Template),
}

const JSONPATH_FORMATS: [&str; 3] = ["jsonpath", "jsonpath-as-json", "jsonpath-file"];
const TEMPLATE_FORMATS: [&str; 4] = ["go-template", "go-template-file", "template", "templatefile"];

/// Why an output printer could not be made (every one of these is bad input, exit code 3), or
/// could not print; upstream's words, prefixed as upstream's commands prefix them. The template
/// engines report their own errors as text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PrinterError {
    /// No printer has this format.
    #[error(
        "could not construct output printer: unable to match a printer suitable for the output format {}, allowed formats are: {allowed}",
        kubeadm_api::gofmt::quote(format)
    )]
    UnknownFormat {
        /// The `-o` value.
        format: String,
        /// The formats the command allows, as upstream lists them.
        allowed: String,
    },
    /// A template format without a template.
    #[error("could not construct output printer: template format specified but no template given")]
    NoTemplate,
    /// The template file could not be read.
    #[error(
        "could not construct output printer: error reading --template {path}, {}",
        kubeadm_api::gofmt::read_file_error(path, source)
    )]
    ReadTemplate {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The JSONPath expression does not parse.
    #[error("could not construct output printer: error parsing jsonpath {raw}, {reason}")]
    JsonPath {
        /// The expression.
        raw: String,
        /// The parser's error.
        reason: jsonpath::JsonPathError,
    },
    /// The Go template does not parse.
    #[error("could not construct output printer: error parsing template {raw}, {reason}")]
    Template {
        /// The template.
        raw: String,
        /// The parser's error.
        reason: Box<gotemplate::TemplateError>,
    },
    /// The template failed on the object.
    #[error("unable to print {object}: {reason}")]
    Print {
        /// What was printed (`images`, `token <token>`).
        object: String,
        /// The template engine's error.
        reason: PrintError,
    },
}

/// Upstream's `PrintFlags.ToPrinter` for `format` (the `-o` value): `allowed` lists the formats in
/// the error of a format none matches; `allow_missing` is `--allow-missing-template-keys`. Every
/// error is bad input (exit code 3), prefixed as upstream's commands prefix it.
pub(crate) fn printer(format: &str, allow_missing: bool, allowed: &str) -> Result<Printer, PrinterError> {
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
        return Err(PrinterError::UnknownFormat {
            format: format.to_string(),
            allowed: allowed.to_string(),
        });
    };
    if template.is_empty() {
        return Err(PrinterError::NoTemplate);
    }
    let raw = if kind.ends_with("file") {
        kubeadm_host::fs::RealFs
            .read(std::path::Path::new(&template))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|source| PrinterError::ReadTemplate {
                path: template.clone(),
                source,
            })?
    } else {
        template
    };
    let engine = if jsonpath {
        let mut jp = jsonpath::JsonPath::parse(&raw).map_err(|reason| PrinterError::JsonPath {
            raw: raw.clone(),
            reason,
        })?;
        jp.allow_missing_keys = allow_missing;
        jp.output_json = kind == "jsonpath-as-json";
        Engine::JsonPath(jp)
    } else {
        let mut t = gotemplate::Template::parse("output", &raw).map_err(|reason| PrinterError::Template {
            raw: raw.clone(),
            reason: Box::new(reason),
        })?;
        t.missing_key_error = !allow_missing;
        Engine::GoTemplate(t)
    };
    Ok(Printer::Template(TemplatePrinter { raw, engine }))
}

impl TemplatePrinter {
    /// Prints `object` (the JSON the command prints with `-o json`) into `out`. On failure, `out`
    /// holds what upstream writes to standard output before it fails, and the error is its message.
    pub(crate) fn print(&mut self, object: &Value, out: &mut String) -> Result<(), PrintError> {
        match &mut self.engine {
            Engine::JsonPath(jp) => match jp.execute(object) {
                Ok(text) => {
                    out.push_str(&text);
                    Ok(())
                }
                Err(source) => Err(PrintError::JsonPath {
                    template: self.raw.clone(),
                    object: gofmt::sharp_v(object, false),
                    source,
                }),
            },
            Engine::GoTemplate(t) => {
                if let Err(e) = t.execute(object, out) {
                    let raw_data = compact_struct_json(object);
                    out.push_str(&format!(
                        "Error executing template: {e}. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{}\n\traw data was:\n\t\t{raw_data}\n\tobject given to template engine was:\n\t\t{}\n\n",
                        self.raw,
                        gofmt::v(object, true),
                    ));
                    return Err(PrintError::GoTemplate {
                        template: self.raw.clone(),
                        source: Box::new(e),
                    });
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Expected outputs below come from cli-runtime v0.25.16's printers run (by a small Go
    /// program outside this repository) on the same object, typed as kubeadm's are (JSONPath sees
    /// float64 numbers, templates int64 ones).
    const OBJECT: &str = r#"{"kind":"X","n":31535999000000000,"f":1.5,"i":3,"z":null,"b":true,"s":"a\"<b>","m":{"x":1,"y":[true,"s",2.25]},"items":[{"name":"a","v":1},{"name":"b","v":2.5},{"name":"c"}]}"#;

    fn print(format: &str, allow_missing: bool) -> (String, Result<(), PrintError>) {
        let object: Value = serde_json::from_str(OBJECT).expect("object");
        let Ok(Printer::Template(mut p)) = printer(format, allow_missing, "") else {
            panic!("{format}: not a template printer");
        };
        let mut out = String::new();
        let r = p.print(&object, &mut out);
        (out, r)
    }

    fn ok(format: &str) -> String {
        let (out, r) = print(format, true);
        if let Err(e) = r {
            panic!("{format}: {e}");
        }
        out
    }

    #[test]
    fn jsonpath_prints_as_upstream() {
        assert_eq!(
            ok("jsonpath={.n} {.f} {.i} {.z} {.b} {.s} {.m}"),
            r#"3.1535999e+16 1.5 3 <nil> true a"<b> {"x":1,"y":[true,"s",2.25]}"#
        );
        assert_eq!(ok("jsonpath={.items[?(@.v)].name}"), "a b");
        assert_eq!(ok(r#"jsonpath={.items[?(@.name=="b")].v}"#), "2.5");
        assert_eq!(
            ok("jsonpath={range .items[*]}{.name}:{.v};{end}"),
            "a:1;b:2.5;c:;"
        );
        assert_eq!(ok("jsonpath={.items[-2].name}"), "b");
        assert_eq!(
            ok("jsonpath={.items[*]}"),
            r#"{"name":"a","v":1} {"name":"b","v":2.5} {"name":"c"}"#
        );
        assert_eq!(
            ok("jsonpath-as-json={.m}{.items[*].v}"),
            "[\n    {\n        \"x\": 1,\n        \"y\": [\n            true,\n            \"s\",\n            2.25\n        ]\n    }\n]\n[\n    1,\n    2.5\n]\n"
        );
    }

    #[test]
    fn jsonpath_errors_as_upstream() {
        let (out, r) = print("jsonpath={.items[?(@.v>=2)].name}", true);
        assert_eq!(out, "");
        assert_eq!(
            r.expect_err("an int literal does not compare with a float64")
                .to_string(),
            "error executing jsonpath \"{.items[?(@.v>=2)].name}\": Error executing template: incompatible types for comparison. Printing more information for debugging the template:\n\ttemplate was:\n\t\t{.items[?(@.v>=2)].name}\n\tobject given to jsonpath engine was:\n\t\tmap[string]interface {}{\"b\":true, \"f\":1.5, \"i\":3, \"items\":[]interface {}{map[string]interface {}{\"name\":\"a\", \"v\":1}, map[string]interface {}{\"name\":\"b\", \"v\":2.5}, map[string]interface {}{\"name\":\"c\"}}, \"kind\":\"X\", \"m\":map[string]interface {}{\"x\":1, \"y\":[]interface {}{true, \"s\", 2.25}}, \"n\":3.1535999e+16, \"s\":\"a\\\"<b>\", \"z\":interface {}(nil)}\n\n\n"
        );
    }

    #[test]
    fn templates_print_as_upstream() {
        assert_eq!(
            ok("go-template={{.n}} {{.f}} {{.i}} {{.z}} {{.b}} {{.s}} {{.m}} {{.items}}"),
            r#"31535999000000000 1.5 3 <no value> true a"<b> map[x:1 y:[true s 2.25]] [map[name:a v:1] map[name:b v:2.5] map[name:c]]"#
        );
        assert_eq!(
            ok(r#"go-template={{printf "%d|%5.2f|%v|%q|%x|%s" .i .f .m .s .i .b}}"#),
            r#"3| 1.50|map[x:1 y:[true s 2.25]]|"a\"<b>"|3|%!s(bool=true)"#
        );
        assert_eq!(
            ok("go-template={{range .items}}{{.name}}={{.v}} {{end}}"),
            "a=1 b=2.5 c=<no value> "
        );
        assert_eq!(
            ok(r#"go-template={{len .m}} {{index .m "y" 2}} {{index .items 1 "name"}}"#),
            "2 2.25 b"
        );
        assert_eq!(
            ok("go-template={{range $k, $v := .m}}{{$k}}->{{$v}};{{end}}"),
            "x->1;y->[true s 2.25];"
        );
    }

    #[test]
    fn template_errors_as_upstream() {
        let (out, r) = print("go-template={{eq .i 3}} {{lt .f 2.0}} {{.q}}", false);
        assert_eq!(
            r.expect_err("a missing key").to_string(),
            "error executing template \"{{eq .i 3}} {{lt .f 2.0}} {{.q}}\": template: output:1:28: executing \"output\" at <.q>: map has no entry for key \"q\""
        );
        // What was written before the failing action, then the printer's debugging text.
        assert!(out.starts_with("true true Error executing template: template: output:1:28: executing \"output\" at <.q>: map has no entry for key \"q\". Printing more information for debugging the template:\n\ttemplate was:\n\t\t{{eq .i 3}} {{lt .f 2.0}} {{.q}}\n\traw data was:\n\t\t{\"kind\":\"X\",\"n\":31535999000000000,\"f\":1.5,\"i\":3,\"z\":null,\"b\":true,\"s\":\"a\\\"\\u003cb\\u003e\",\"m\":{\"x\":1,\"y\":[true,\"s\",2.25]},\"items\":[{\"name\":\"a\",\"v\":1},{\"name\":\"b\",\"v\":2.5},{\"name\":\"c\"}]}\n\tobject given to template engine was:\n\t\tmap[b:true f:1.5 i:3 items:[map[name:a v:1] map[name:b v:2.5] map[name:c]] kind:X m:map[x:1 y:[true s 2.25]] n:31535999000000000 s:a\"<b> z:<nil>]\n\n"), "{out}");
    }
}
