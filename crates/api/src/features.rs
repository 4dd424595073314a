//! kubeadm's own feature gates and the `--feature-gates` flag syntax (`Key=bool,Key=bool`).

use std::collections::BTreeMap;

/// Maturity of a feature gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreRelease {
    /// Alpha: off by default.
    Alpha,
    /// Beta.
    Beta,
    /// Generally available; may be locked to its default.
    Ga,
    /// Deprecated: refused on the command line.
    Deprecated,
}

/// One feature gate kubeadm knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureSpec {
    /// Its name.
    pub name: &'static str,
    /// Default value.
    pub default: bool,
    /// Maturity.
    pub pre_release: PreRelease,
}

/// The feature gates of kubeadm v1.25, in the order upstream's help lists them.
pub const INIT_FEATURE_GATES: [FeatureSpec; 3] = [
    FeatureSpec {
        name: "PublicKeysECDSA",
        default: false,
        pre_release: PreRelease::Alpha,
    },
    FeatureSpec {
        name: "RootlessControlPlane",
        default: false,
        pre_release: PreRelease::Alpha,
    },
    FeatureSpec {
        name: "UnversionedKubeletConfigMap",
        default: true,
        pre_release: PreRelease::Ga,
    },
];

/// Why a `--feature-gates` value was refused; messages are upstream's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureGateError {
    /// `Key` without `=value`.
    #[error("missing bool value for feature-gate key:{0}")]
    MissingValue(String),
    /// A key kubeadm does not know.
    #[error("unrecognized feature-gate key: {0}")]
    Unknown(String),
    /// A deprecated key.
    #[error("feature-gate key is deprecated: {0}")]
    Deprecated(String),
    /// A value that is not a Go boolean.
    #[error("invalid value {value} for feature-gate key: {key}, use true|false instead")]
    NotBool {
        /// The key.
        key: String,
        /// The value given.
        value: String,
    },
}

/// Parses a `--feature-gates` value as upstream's `NewFeatureGate` does.
pub fn parse_feature_gates(value: &str) -> Result<BTreeMap<String, bool>, FeatureGateError> {
    let mut gates = BTreeMap::new();
    for item in value.split(',').filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(FeatureGateError::MissingValue(item.to_string()));
        };
        let (k, v) = (k.trim(), v.trim());
        let spec = INIT_FEATURE_GATES
            .iter()
            .find(|f| f.name == k)
            .ok_or_else(|| FeatureGateError::Unknown(k.to_string()))?;
        if spec.pre_release == PreRelease::Deprecated {
            return Err(FeatureGateError::Deprecated(k.to_string()));
        }
        let b = go_parse_bool(v).ok_or_else(|| FeatureGateError::NotBool {
            key: k.to_string(),
            value: v.to_string(),
        })?;
        gates.insert(k.to_string(), b);
    }
    Ok(gates)
}

/// Go's `strconv.ParseBool`.
pub fn go_parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Whether a gate is on in `gates`, falling back to its default.
pub fn enabled(gates: &BTreeMap<String, bool>, name: &str) -> bool {
    gates.get(name).copied().unwrap_or_else(|| {
        INIT_FEATURE_GATES
            .iter()
            .find(|f| f.name == name)
            .is_some_and(|f| f.default)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_upstream() {
        let g = parse_feature_gates("PublicKeysECDSA=T, RootlessControlPlane =0,").expect("valid");
        assert_eq!(g.get("PublicKeysECDSA"), Some(&true));
        assert_eq!(g.get("RootlessControlPlane"), Some(&false));
        assert_eq!(
            parse_feature_gates("Foo=true").expect_err("unknown").to_string(),
            "unrecognized feature-gate key: Foo"
        );
        assert_eq!(
            parse_feature_gates("PublicKeysECDSA=maybe")
                .expect_err("bool")
                .to_string(),
            "invalid value maybe for feature-gate key: PublicKeysECDSA, use true|false instead"
        );
        assert_eq!(
            parse_feature_gates("PublicKeysECDSA")
                .expect_err("missing")
                .to_string(),
            "missing bool value for feature-gate key:PublicKeysECDSA"
        );
        assert!(enabled(&BTreeMap::new(), "UnversionedKubeletConfigMap"));
        assert!(!enabled(&BTreeMap::new(), "PublicKeysECDSA"));
    }
}
