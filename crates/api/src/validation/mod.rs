//! Validation of the kubeadm configuration (upstream `apis/kubeadm/validation`): every error is
//! collected, and each renders as apimachinery's `field.Error` does
//! (`podSubnet: Invalid value: "x": couldn't parse subnet`), so that a list prints as upstream's
//! aggregate and the CLI can exit 3 as upstream does.

mod config;
mod network;

use std::collections::BTreeMap;
use std::fmt;

pub use config::{
    subnet_warnings, validate_cluster, validate_init, validate_join, validate_node_registration,
};
pub use network::{
    AddrError, HostPortError, go_split_host_port, is_dns1123_subdomain_errors, parse_cidr, parse_host_port,
};

/// apimachinery's `field.ErrorType`, as far as kubeadm uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    /// `Invalid value`.
    Invalid,
    /// `Required value`.
    Required,
}

/// The offending value, printed as Go's `field.Error` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    /// A string: `"x"`.
    Str(String),
    /// An integer: `0`.
    Int(i64),
    /// A `[]string`: `[]string{"a", "b"}`.
    StrList(Vec<String>),
    /// A `map[string]bool`: `map[string]bool{"A":true}`.
    BoolMap(BTreeMap<String, bool>),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Str(s) => write!(f, "{}", go_quote(s)),
            BadValue::Int(i) => write!(f, "{i}"),
            BadValue::StrList(v) => {
                let items: Vec<String> = v.iter().map(|s| go_quote(s)).collect();
                write!(f, "[]string{{{}}}", items.join(", "))
            }
            BadValue::BoolMap(m) => {
                let items: Vec<String> = m.iter().map(|(k, v)| format!("{}:{v}", go_quote(k))).collect();
                write!(f, "map[string]bool{{{}}}", items.join(", "))
            }
        }
    }
}

pub(crate) use crate::gofmt::quote as go_quote;

/// One validation error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// Upstream's field path (`networking` fields are named without the `networking.` prefix, as
    /// upstream names them).
    pub field: String,
    /// JSON pointer of the field in the source document, to point at a line and column.
    pub pointer: String,
    /// Where the field is in the user's file, when it came from one (filled in by the loader; not
    /// part of the upstream-format message).
    pub location: Option<crate::document::Location>,
    /// Invalid or required.
    pub kind: ErrorType,
    /// The value (absent for `Required`).
    pub value: Option<BadValue>,
    /// Why.
    pub detail: String,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        match (self.kind, &self.value) {
            (ErrorType::Required, _) => f.write_str("Required value")?,
            (ErrorType::Invalid, Some(v)) => write!(f, "Invalid value: {v}")?,
            (ErrorType::Invalid, None) => f.write_str("Invalid value: \"null\"")?,
        }
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Every error found, in upstream's order.
#[derive(Debug, Clone, Default, PartialEq, Eq, thiserror::Error)]
pub struct ErrorList(pub Vec<FieldError>);

impl ErrorList {
    /// No errors?
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(())` when empty, else the list as an error.
    pub fn into_result(self) -> Result<(), ErrorList> {
        if self.is_empty() { Ok(()) } else { Err(self) }
    }

    pub(crate) fn invalid(&mut self, field: &str, pointer: &str, value: BadValue, detail: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_string(),
            pointer: pointer.to_string(),
            location: None,
            kind: ErrorType::Invalid,
            value: Some(value),
            detail: detail.into(),
        });
    }

    pub(crate) fn required(&mut self, field: &str, pointer: &str, detail: impl Into<String>) {
        self.0.push(FieldError {
            field: field.to_string(),
            pointer: pointer.to_string(),
            location: None,
            kind: ErrorType::Required,
            value: None,
            detail: detail.into(),
        });
    }

    pub(crate) fn extend(&mut self, other: ErrorList) {
        self.0.extend(other.0);
    }
}

impl fmt::Display for ErrorList {
    /// As `ErrorList.ToAggregate().Error()`: duplicates dropped, one message alone, several as `[a, b]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut seen: Vec<String> = Vec::new();
        for e in &self.0 {
            let msg = e.to_string();
            if !seen.contains(&msg) {
                seen.push(msg);
            }
        }
        match seen.len() {
            0 => Ok(()),
            1 => f.write_str(&seen[0]),
            _ => write!(f, "[{}]", seen.join(", ")),
        }
    }
}

/// Upstream's `ValidateIgnorePreflightErrors`: the lower-cased union of the checks to ignore from the
/// command line and the config file, refusing `all` in the file and `all` mixed with named checks.
pub fn validate_ignore_preflight_errors(
    from_cli: &[String],
    from_file: &[String],
) -> Result<std::collections::BTreeSet<String>, ErrorList> {
    let mut set: std::collections::BTreeSet<String> = from_file.iter().map(|s| s.to_lowercase()).collect();
    let mut errs = ErrorList::default();
    if set.contains("all") {
        errs.invalid(
            "ignorePreflightErrors",
            "/nodeRegistration/ignorePreflightErrors",
            BadValue::Str("all".into()),
            "'all' cannot be used in configuration file",
        );
    }
    set.extend(from_cli.iter().map(|s| s.to_lowercase()));
    if set.contains("all") && set.len() > 1 {
        let joined = set.iter().cloned().collect::<Vec<_>>().join(",");
        errs.invalid(
            "ignore-preflight-errors",
            "",
            BadValue::Str(joined),
            "don't specify individual checks if 'all' is used",
        );
    }
    errs.into_result().map(|()| set)
}

#[cfg(test)]
mod ignore_preflight_tests {
    use super::*;

    #[test]
    fn all_with_named_checks_is_refused_in_upstream_words() {
        let err = validate_ignore_preflight_errors(&["all".into(), "Swap".into()], &[]).expect_err("mixed");
        assert_eq!(
            err.to_string(),
            "ignore-preflight-errors: Invalid value: \"all,swap\": don't specify individual checks if 'all' is used"
        );
        let ok = validate_ignore_preflight_errors(&["Swap".into()], &["NumCPU".into()]).expect("ok");
        assert_eq!(ok.into_iter().collect::<Vec<_>>(), ["numcpu", "swap"]);
        assert!(validate_ignore_preflight_errors(&[], &["all".into()]).is_err());
    }
}
