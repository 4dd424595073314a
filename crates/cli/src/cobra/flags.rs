//! A pflag-compatible flag parser.
//!
//! Interprets the [`FlagSpec`]s of one command (its own, persistent and inherited flags, merged as
//! cobra merges them) with pflag v1.0.5's rules: `--flag=value`, `--flag value`, `-f value`,
//! `-f=value`, `-fvalue`, grouped shorthands, booleans that never take the next argument,
//! string slices that replace their default on first use and then append, `--` as terminator,
//! positional arguments interspersed with flags, and "changed" marks. Errors carry pflag's text.

use kubeadm_workflow::FlagSpec;

use crate::cobra::go_values::{go_quote, parse_bool, parse_csv, parse_duration, parse_int, parse_uint};

/// A parsed flag value, typed after the flag's pflag type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum FlagValue {
    Bool(bool),
    Str(String),
    Strings(Vec<String>),
    /// Nanoseconds.
    Duration(i64),
    Int(i64),
    Uint(u64),
}

/// A flag parse error, worded as pflag's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FlagError {
    #[error("unknown flag: --{0}")]
    UnknownFlag(String),
    #[error("unknown shorthand flag: {} in -{}", quote_char(*.0), .1)]
    UnknownShorthand(char, String),
    #[error("bad flag syntax: {0}")]
    BadSyntax(String),
    #[error("flag needs an argument: {0}")]
    NeedsArgument(String),
    #[error("flag needs an argument: {} in -{}", quote_char(*.0), .1)]
    ShorthandNeedsArgument(char, String),
    #[error("invalid argument {} for {} flag: {}", go_quote(.value), go_quote(.flag), .reason)]
    InvalidValue {
        value: String,
        flag: String,
        reason: crate::cobra::go_values::ValueError,
    },
}

/// Go's `%q` of a byte (rune), as in `'x'`.
fn quote_char(c: char) -> String {
    match c {
        '\'' => "'\\''".to_string(),
        '\\' => "'\\\\'".to_string(),
        c => format!("'{c}'"),
    }
}

/// The flags of one command, ready to parse, with their values.
#[derive(Debug, Clone)]
pub(crate) struct FlagSet {
    specs: Vec<FlagSpec>,
    values: Vec<FlagValue>,
    changed: Vec<bool>,
    /// Positional arguments, in order.
    pub(crate) args: Vec<String>,
    /// Messages pflag prints while parsing (deprecations), in order.
    pub(crate) notices: Vec<String>,
}

fn default_value(spec: &FlagSpec) -> FlagValue {
    let d = spec.default;
    match spec.value_type {
        "bool" => FlagValue::Bool(d == "true"),
        "stringSlice" | "stringArray" => {
            let inner = d.trim_start_matches('[').trim_end_matches(']');
            FlagValue::Strings(if inner.is_empty() {
                Vec::new()
            } else {
                inner.split(',').map(str::to_string).collect()
            })
        }
        "duration" => FlagValue::Duration(parse_duration(d).unwrap_or(0)),
        "int" | "int32" | "int64" | "Level" => FlagValue::Int(d.parse().unwrap_or(0)),
        "uint" | "uint32" | "uint64" => FlagValue::Uint(d.parse().unwrap_or(0)),
        _ => FlagValue::Str(d.to_string()),
    }
}

impl FlagSet {
    /// A flag set over `specs`; the first spec of a name wins, as pflag's `AddFlagSet` keeps it.
    pub(crate) fn new(specs: impl IntoIterator<Item = FlagSpec>) -> Self {
        let mut unique: Vec<FlagSpec> = Vec::new();
        for s in specs {
            if !unique.iter().any(|u| u.name == s.name) {
                unique.push(s);
            }
        }
        let values = unique.iter().map(default_value).collect();
        let changed = vec![false; unique.len()];
        FlagSet {
            specs: unique,
            values,
            changed,
            args: Vec::new(),
            notices: Vec::new(),
        }
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.specs.iter().position(|s| s.name == name)
    }

    fn index_short(&self, c: char) -> Option<usize> {
        self.specs.iter().position(|s| s.shorthand.starts_with(c))
    }

    /// The spec of a flag.
    pub(crate) fn spec(&self, name: &str) -> Option<&FlagSpec> {
        self.index(name).map(|i| &self.specs[i])
    }

    /// Whether a flag with a default-when-bare value exists under this long name.
    pub(crate) fn has_no_opt_default(&self, name: &str) -> bool {
        self.spec(name).is_some_and(|s| !s.no_opt_default.is_empty())
    }

    /// Same, for the first letter of a shorthand group.
    pub(crate) fn short_has_no_opt_default(&self, name: &str) -> bool {
        name.chars()
            .next()
            .and_then(|c| self.index_short(c))
            .is_some_and(|i| !self.specs[i].no_opt_default.is_empty())
    }

    /// The value of a flag.
    pub(crate) fn value(&self, name: &str) -> Option<&FlagValue> {
        self.index(name).map(|i| &self.values[i])
    }

    /// Whether a flag was set on the command line.
    pub(crate) fn changed(&self, name: &str) -> bool {
        self.index(name).is_some_and(|i| self.changed[i])
    }

    /// Names of the flags set on the command line.
    pub(crate) fn changed_names(&self) -> Vec<&'static str> {
        self.specs
            .iter()
            .zip(&self.changed)
            .filter(|(_, c)| **c)
            .map(|(s, _)| s.name)
            .collect()
    }

    /// A string-typed flag's value ("" when absent).
    pub(crate) fn string(&self, name: &str) -> String {
        match self.value(name) {
            Some(FlagValue::Str(s)) => s.clone(),
            _ => String::new(),
        }
    }

    /// A bool flag's value.
    pub(crate) fn bool(&self, name: &str) -> bool {
        matches!(self.value(name), Some(FlagValue::Bool(true)))
    }

    /// A string-slice flag's value.
    pub(crate) fn strings(&self, name: &str) -> Vec<String> {
        match self.value(name) {
            Some(FlagValue::Strings(v)) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// A duration flag's value, in nanoseconds (Go durations may be negative).
    pub(crate) fn duration_nanos(&self, name: &str) -> i64 {
        match self.value(name) {
            Some(FlagValue::Duration(v)) => *v,
            _ => 0,
        }
    }

    /// An integer flag's value.
    pub(crate) fn int(&self, name: &str) -> i64 {
        match self.value(name) {
            Some(FlagValue::Int(v)) => *v,
            _ => 0,
        }
    }

    /// Sets a flag from its textual value, as pflag's `FlagSet.Set`.
    fn set(&mut self, i: usize, text: &str) -> Result<(), FlagError> {
        let spec = self.specs[i];
        let parsed = match spec.value_type {
            "bool" => parse_bool(text).map(FlagValue::Bool),
            "stringSlice" | "stringArray" => {
                let items = if spec.value_type == "stringArray" {
                    Ok(vec![text.to_string()])
                } else {
                    parse_csv(text)
                };
                items.map(|items| match (&self.values[i], self.changed[i]) {
                    (FlagValue::Strings(old), true) => {
                        FlagValue::Strings(old.iter().cloned().chain(items).collect())
                    }
                    _ => FlagValue::Strings(items),
                })
            }
            "duration" => parse_duration(text).map(FlagValue::Duration),
            "int" | "int64" => parse_int(text, true, 64).map(FlagValue::Int),
            "int32" => parse_int(text, true, 32).map(FlagValue::Int),
            "Level" => parse_int(text, false, 32).map(FlagValue::Int),
            "uint" | "uint64" => parse_uint(text).map(FlagValue::Uint),
            _ => Ok(FlagValue::Str(text.to_string())),
        };
        match parsed {
            Ok(v) => {
                self.values[i] = v;
                self.changed[i] = true;
                if !spec.deprecated.is_empty() {
                    self.notices.push(format!(
                        "Flag --{} has been deprecated, {}",
                        spec.name, spec.deprecated
                    ));
                }
                Ok(())
            }
            Err(reason) => {
                let flag = if !spec.shorthand.is_empty() && spec.shorthand_deprecated.is_empty() {
                    format!("-{}, --{}", spec.shorthand, spec.name)
                } else {
                    format!("--{}", spec.name)
                };
                Err(FlagError::InvalidValue {
                    value: text.to_string(),
                    flag,
                    reason,
                })
            }
        }
    }

    /// Parses `args`, collecting positional arguments into `self.args`.
    pub(crate) fn parse(&mut self, args: &[String]) -> Result<(), FlagError> {
        let mut rest = args.iter();
        while let Some(s) = rest.next() {
            if s.len() < 2 || !s.starts_with('-') {
                self.args.push(s.clone());
                continue;
            }
            if s == "--" {
                self.args.extend(rest.cloned());
                break;
            }
            if let Some(body) = s.strip_prefix("--") {
                if body.starts_with('-') || body.starts_with('=') {
                    return Err(FlagError::BadSyntax(s.clone()));
                }
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (body, None),
                };
                let Some(i) = self.index(name) else {
                    return Err(FlagError::UnknownFlag(name.to_string()));
                };
                let value = match inline {
                    Some(v) => v.to_string(),
                    None if !self.specs[i].no_opt_default.is_empty() => {
                        self.specs[i].no_opt_default.to_string()
                    }
                    None => match rest.next() {
                        Some(v) => v.clone(),
                        None => return Err(FlagError::NeedsArgument(s.clone())),
                    },
                };
                self.set(i, &value)?;
            } else {
                let group = &s[1..];
                let mut shorts = group;
                // pflag hands every letter of a group the arguments as they were before the group
                // (a quirk we keep): only the letter that consumes one advances the iterator.
                while let Some(c) = shorts.chars().next() {
                    let after = &shorts[c.len_utf8()..];
                    let Some(i) = self.index_short(c) else {
                        return Err(FlagError::UnknownShorthand(c, group.to_string()));
                    };
                    let spec = self.specs[i];
                    // `-o=` (nothing after the `=`) is not the `-f=value` form for pflag: "=" is the value.
                    let value = if let Some(v) = after.strip_prefix('=').filter(|_| after.len() > 1) {
                        shorts = "";
                        v.to_string()
                    } else if !spec.no_opt_default.is_empty() {
                        shorts = after;
                        spec.no_opt_default.to_string()
                    } else if !after.is_empty() {
                        shorts = "";
                        after.to_string()
                    } else {
                        shorts = "";
                        match rest.next() {
                            Some(v) => v.clone(),
                            None => return Err(FlagError::ShorthandNeedsArgument(c, group.to_string())),
                        }
                    };
                    if !spec.shorthand_deprecated.is_empty() {
                        self.notices.push(format!(
                            "Flag shorthand -{} has been deprecated, {}",
                            spec.shorthand, spec.shorthand_deprecated
                        ));
                    }
                    self.set(i, &value)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> Vec<FlagSpec> {
        vec![
            FlagSpec {
                default: "false",
                no_opt_default: "true",
                ..FlagSpec::new("dry-run", "bool")
            },
            FlagSpec {
                shorthand: "v",
                default: "0",
                ..FlagSpec::new("v", "Level")
            },
            FlagSpec {
                default: "[]",
                ..FlagSpec::new("apiserver-cert-extra-sans", "stringSlice")
            },
            FlagSpec {
                default: "[a]",
                ..FlagSpec::new("usages", "stringSlice")
            },
            FlagSpec {
                default: "24h0m0s",
                ..FlagSpec::new("ttl", "duration")
            },
            FlagSpec {
                shorthand: "o",
                ..FlagSpec::new("output", "string")
            },
            FlagSpec {
                shorthand: "f",
                default: "false",
                no_opt_default: "true",
                ..FlagSpec::new("force", "bool")
            },
        ]
    }

    fn parse(args: &[&str]) -> Result<FlagSet, FlagError> {
        let mut fs = FlagSet::new(specs());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        fs.parse(&args).map(|()| fs)
    }

    #[test]
    fn value_forms() {
        for args in [&["-v=5"][..], &["-v", "5"], &["-v5"], &["--v=5"], &["--v", "5"]] {
            let fs = parse(args).expect("parses");
            assert_eq!(fs.int("v"), 5, "{args:?}");
            assert!(fs.changed("v"));
        }
    }

    #[test]
    fn bools_never_take_the_next_argument() {
        let fs = parse(&["--dry-run", "false"]).expect("parses");
        assert!(fs.bool("dry-run"));
        assert_eq!(fs.args, ["false"]);
        let fs = parse(&["--dry-run=false"]).expect("parses");
        assert!(!fs.bool("dry-run"));
        assert!(fs.changed("dry-run"));
        let fs = parse(&["-fo", "json"]).expect("parses");
        assert!(fs.bool("force"));
        assert_eq!(fs.string("output"), "json");
    }

    #[test]
    fn slices_replace_the_default_then_append() {
        let fs = parse(&["--usages", "x,y", "--usages=z"]).expect("parses");
        assert_eq!(fs.strings("usages"), ["x", "y", "z"]);
        let fs = parse(&[]).expect("parses");
        assert_eq!(fs.strings("usages"), ["a"]);
        assert!(!fs.changed("usages"));
    }

    #[test]
    fn terminator_and_interspersed_args() {
        let fs = parse(&["a", "--ttl", "1h", "b", "--", "--dry-run", "-v"]).expect("parses");
        assert_eq!(fs.args, ["a", "b", "--dry-run", "-v"]);
        assert_eq!(fs.value("ttl"), Some(&FlagValue::Duration(3_600_000_000_000)));
        assert!(!fs.changed("dry-run"));
    }

    #[test]
    fn errors_read_as_pflag() {
        let msg = |a: &[&str]| parse(a).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(msg(&["--foo"]), "unknown flag: --foo");
        assert_eq!(msg(&["-x"]), "unknown shorthand flag: 'x' in -x");
        assert_eq!(msg(&["--output"]), "flag needs an argument: --output");
        assert_eq!(msg(&["-o"]), "flag needs an argument: 'o' in -o");
        assert_eq!(msg(&["---x"]), "bad flag syntax: ---x");
        assert_eq!(parse(&["-o="]).expect("parses").string("output"), "=");
        assert_eq!(parse(&["-o=x"]).expect("parses").string("output"), "x");
        assert_eq!(
            msg(&["-v", "abc"]),
            r#"invalid argument "abc" for "-v, --v" flag: strconv.ParseInt: parsing "abc": invalid syntax"#
        );
        assert_eq!(
            msg(&["--ttl", "5x"]),
            r#"invalid argument "5x" for "--ttl" flag: time: unknown unit "x" in duration "5x""#
        );
    }
}
