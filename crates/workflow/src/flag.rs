//! Command-line flag and positional-argument descriptions, as plain data.
//!
//! A phase carries the flags it adds and names the flags it inherits; this module only describes
//! them (name, type, default, help). Parsing belongs to the binary, which knows pflag's rules.

/// One flag, described exactly as pflag knows it, so help text and parsing can match upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagSpec {
    /// Long name, without dashes.
    pub name: &'static str,
    /// One-letter shorthand, or "" when the flag has none.
    pub shorthand: &'static str,
    /// pflag's type name (`Value.Type()`): "bool", "string", "stringSlice", "duration", "int32", ...
    pub value_type: &'static str,
    /// The default value as pflag prints it (`DefValue`).
    pub default: &'static str,
    /// The help text.
    pub usage: &'static str,
    /// The value used when the flag is given without one (`--dry-run`), or "".
    pub no_opt_default: &'static str,
    /// Hidden from help.
    pub hidden: bool,
    /// Deprecation message, or "".
    pub deprecated: &'static str,
    /// Deprecation message of the shorthand, or "".
    pub shorthand_deprecated: &'static str,
    /// Must be given (cobra's "required flag" annotation).
    pub required: bool,
}

impl FlagSpec {
    /// A flag with the given name and type and every other field empty; for tests and builders.
    pub const fn new(name: &'static str, value_type: &'static str) -> Self {
        FlagSpec {
            name,
            shorthand: "",
            value_type,
            default: "",
            usage: "",
            no_opt_default: "",
            hidden: false,
            deprecated: "",
            shorthand_deprecated: "",
            required: false,
        }
    }
}

/// How many positional arguments a command accepts, as cobra's stock validators express it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgsRule {
    /// No validator: cobra's legacy rule (only the root rejects arguments, as unknown commands).
    Legacy,
    /// `cobra.NoArgs`.
    None,
    /// `cobra.ArbitraryArgs`.
    Any,
    /// `cobra.MaximumNArgs(n)`.
    Max(usize),
    /// `cobra.ExactArgs(n)`.
    Exact(usize),
    /// `cobra.MinimumNArgs(n)`.
    Min(usize),
}
