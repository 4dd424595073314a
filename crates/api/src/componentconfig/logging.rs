//! Shared component-base pieces of the component configs: logging and tracing options, resource
//! quantities, and Go's JSON rendering of floating-point numbers.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::omitempty::is_false;

/// A `resource.Quantity` kept as text (`"0"`, `"100Mi"`); numbers on input are read as their text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Quantity(pub String);

impl Default for Quantity {
    /// Go's zero `Quantity` marshals as `"0"`.
    fn default() -> Self {
        Quantity("0".to_string())
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) => Ok(Quantity(s)),
            serde_json::Value::Number(n) => Ok(Quantity(n.to_string())),
            other => Err(serde::de::Error::custom(format!(
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {other}"
            ))),
        }
    }
}

/// Floats as Go's `encoding/json` writes them: integral values without a fraction (`5`, not `5.0`).
pub(crate) mod go_float {
    use serde::Serializer;

    /// A plain `float64`/`float32` field.
    pub(crate) fn plain<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.fract() == 0.0 && v.abs() < 1e15 {
            s.serialize_i64(*v as i64)
        } else {
            s.serialize_f64(*v)
        }
    }

    /// A `*float64` field.
    pub(crate) fn option<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => plain(v, s),
            None => s.serialize_none(),
        }
    }
}

/// `tracing/api/v1.TracingConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TracingConfiguration {
    /// `endpoint`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// `samplingRatePerMillion`.
    #[serde(rename = "samplingRatePerMillion", skip_serializing_if = "Option::is_none")]
    pub sampling_rate_per_million: Option<i32>,
}

/// `LoggingConfiguration`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LoggingConfiguration {
    /// `format`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub format: String,
    /// `flushFrequency`.
    #[serde(rename = "flushFrequency")]
    pub flush_frequency: i64,
    /// `verbosity`.
    pub verbosity: u32,
    /// `vmodule`.
    #[serde(rename = "vmodule", skip_serializing_if = "Vec::is_empty")]
    pub vmodule: Vec<VModuleItem>,
    /// `options`.
    pub options: FormatOptions,
}

/// `FormatOptions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FormatOptions {
    /// `json`.
    pub json: JSONOptions,
}

/// `JSONOptions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct JSONOptions {
    /// `splitStream`.
    #[serde(rename = "splitStream", skip_serializing_if = "is_false")]
    pub split_stream: bool,
    /// `infoBufferSize`.
    #[serde(rename = "infoBufferSize")]
    pub info_buffer_size: Quantity,
}

/// `VModuleItem`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VModuleItem {
    /// `filePattern`.
    #[serde(rename = "filePattern")]
    pub file_pattern: String,
    /// `verbosity`.
    pub verbosity: u32,
}
