//! `kubeadm.k8s.io/v1beta2`, read only (upstream accepts it with a deprecation warning and converts it).
//!
//! v1beta2 is v1beta3 without `skipPhases`, `patches` and `nodeRegistration.imagePullPolicy`, and with
//! `useHyperKubeImage` and `dns.type`, which v1beta3 dropped. Rather than a second copy of every type,
//! a v1beta2 document is rewritten into v1beta3 shape: fields v1beta2 does not have are reported as
//! unknown (as upstream's strict pass against v1beta2 does), fields v1beta3 dropped are checked for
//! type and removed, and conversion then sets `imagePullPolicy: IfNotPresent` as upstream's does.

use serde_json::Value;

/// `kubeadm.k8s.io/v1beta2`.
pub const API_VERSION: &str = "kubeadm.k8s.io/v1beta2";

/// What rewriting a v1beta2 document found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Rewrite {
    /// JSON pointers of fields that v1beta2 does not define.
    pub unknown: Vec<String>,
    /// A v1beta2-only field of the wrong type: (pointer, expected Go type).
    pub type_error: Option<(String, &'static str)>,
}

/// Rewrites a v1beta2 document of `kind` in place into v1beta3 shape.
pub(crate) fn rewrite(kind: &str, value: &mut Value) -> Rewrite {
    let mut out = Rewrite::default();
    let Some(map) = value.as_object_mut() else {
        return out;
    };
    match kind {
        "ClusterConfiguration" => {
            if let Some(v) = map.remove("useHyperKubeImage")
                && !(v.is_boolean() || v.is_null())
            {
                out.type_error = Some(("/useHyperKubeImage".to_string(), "bool"));
            }
            if let Some(dns) = map.get_mut("dns").and_then(Value::as_object_mut)
                && let Some(v) = dns.remove("type")
                && !(v.is_string() || v.is_null())
            {
                out.type_error = Some(("/dns/type".to_string(), "string"));
            }
        }
        "InitConfiguration" | "JoinConfiguration" => {
            for field in ["skipPhases", "patches"] {
                if map.remove(field).is_some() {
                    out.unknown.push(format!("/{field}"));
                }
            }
            if let Some(nr) = map.get_mut("nodeRegistration").and_then(Value::as_object_mut)
                && nr.remove("imagePullPolicy").is_some()
            {
                out.unknown.push("/nodeRegistration/imagePullPolicy".to_string());
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_into_v1beta3_shape() {
        let mut c =
            serde_json::json!({"useHyperKubeImage": true, "dns": {"type": "CoreDNS", "imageTag": "x"}});
        assert_eq!(rewrite("ClusterConfiguration", &mut c), Rewrite::default());
        assert_eq!(c, serde_json::json!({"dns": {"imageTag": "x"}}));

        let mut i = serde_json::json!({"skipPhases": ["addon/kube-proxy"], "nodeRegistration": {"name": "n", "imagePullPolicy": "Always"}});
        let r = rewrite("InitConfiguration", &mut i);
        assert_eq!(r.unknown, ["/skipPhases", "/nodeRegistration/imagePullPolicy"]);
        assert_eq!(i, serde_json::json!({"nodeRegistration": {"name": "n"}}));

        let mut bad = serde_json::json!({"useHyperKubeImage": "yes"});
        assert_eq!(
            rewrite("ClusterConfiguration", &mut bad).type_error,
            Some(("/useHyperKubeImage".to_string(), "bool"))
        );
    }
}
