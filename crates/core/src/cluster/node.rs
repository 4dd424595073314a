//! Changes kubeadm makes to its own Node object: the control-plane labels and taints
//! (`mark-control-plane`), the CRI socket annotation, and the strategic-merge patch upstream sends
//! for them (`apiclient.PatchNode`: the two-way diff of the node before and after the change).

use kubeadm_api::v1beta3::Taint;
use serde_json::{Map, Value};

use super::meta::set_meta_entry;

/// `LabelNodeRoleControlPlane`.
pub const LABEL_NODE_ROLE_CONTROL_PLANE: &str = "node-role.kubernetes.io/control-plane";
/// `LabelExcludeFromExternalLB`.
pub const LABEL_EXCLUDE_FROM_EXTERNAL_LB: &str = "node.kubernetes.io/exclude-from-external-load-balancers";
/// The labels `mark-control-plane` adds, in upstream's order (1.25 adds no `master` label or taint).
pub const CONTROL_PLANE_LABELS: [&str; 2] = [LABEL_NODE_ROLE_CONTROL_PLANE, LABEL_EXCLUDE_FROM_EXTERNAL_LB];
/// `AnnotationKubeadmCRISocket`.
pub const ANNOTATION_CRI_SOCKET: &str = "kubeadm.alpha.kubernetes.io/cri-socket";
/// `v1.LabelHostname`: upstream waits for the kubelet to set it before patching.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";

/// `Taint.ToString`: `key=value:effect`, without `=value` when it has none, and without `:effect`
/// when it has neither (a value without an effect keeps the colon: `key=value:`).
pub fn taint_string(t: &Taint) -> String {
    match (t.value.is_empty(), t.effect.is_empty()) {
        (true, true) => t.key.clone(),
        (true, false) => format!("{}:{}", t.key, t.effect),
        (false, _) => format!("{}={}:{}", t.key, t.value, t.effect),
    }
}

/// The lines `mark-control-plane` prints before patching.
pub fn mark_control_plane_messages(node_name: &str, taints: &[Taint]) -> Vec<String> {
    let mut lines = vec![format!(
        "[mark-control-plane] Marking the node {node_name} as control-plane by adding the labels: [{}]",
        CONTROL_PLANE_LABELS.join(" ")
    )];
    if !taints.is_empty() {
        let list: Vec<String> = taints.iter().map(taint_string).collect();
        lines.push(format!(
            "[mark-control-plane] Marking the node {node_name} as control-plane by adding the taints [{}]",
            list.join(" ")
        ));
    }
    lines
}

/// Whether the kubelet has registered the node far enough for kubeadm to patch it.
pub fn has_hostname_label(node: &Value) -> bool {
    node.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|l| l.contains_key(LABEL_HOSTNAME))
}

fn taint_value(t: &Taint) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// Upstream compares taints as Go structs, where `timeAdded` is a pointer: two taints with a time
/// are never equal. Taints from a configuration carry none, so this matters only for node taints.
fn same_taint(a: &Value, b: &Value) -> bool {
    let time = |v: &Value| v.get("timeAdded").is_some_and(|t| !t.is_null());
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    !time(a)
        && !time(b)
        && ["key", "value", "effect"]
            .iter()
            .all(|k| field(a, k) == field(b, k))
}

/// `markControlPlaneNode`: adds the control-plane labels, and sets the taints to `taints` followed by
/// the node's existing taints that are not among them.
pub fn mark_control_plane(node: &mut Value, taints: &[Taint]) {
    for label in CONTROL_PLANE_LABELS {
        set_meta_entry(node, "labels", label, "");
    }
    let mut wanted: Vec<Value> = taints.iter().map(taint_value).collect();
    let existing: Vec<Value> = node
        .pointer("/spec/taints")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for t in existing {
        if !wanted.iter().any(|w| same_taint(w, &t)) {
            wanted.push(t);
        }
    }
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    let spec = obj.entry("spec").or_insert_with(|| Value::Object(Map::new()));
    if let Some(spec) = spec.as_object_mut() {
        if wanted.is_empty() {
            // `n.Spec.Taints = taints` with an empty list: omitempty drops it either way.
            spec.remove("taints");
        } else {
            spec.insert("taints".into(), Value::Array(wanted));
        }
    }
}

/// `annotateNodeWithCRISocket`: the CRI endpoint exactly as the configuration holds it. Defaulting
/// has already given a scheme to a bare path (`/run/x.sock` → `unix:///run/x.sock`); an endpoint
/// that starts with `unix` but lacks `://` (`unix:x.sock`) is stored as written, as upstream does.
pub fn annotate_cri_socket(node: &mut Value, cri_socket: &str) {
    set_meta_entry(node, "annotations", ANNOTATION_CRI_SOCKET, cri_socket);
}

/// The two-way merge patch from `old` to `new`: changed and added fields, removed ones as `null`,
/// lists replaced whole. For a Node this is exactly the strategic merge patch, since the fields
/// kubeadm changes (labels, annotations, `spec.taints`) carry no list merge strategy.
pub fn two_way_merge_patch(old: &Value, new: &Value) -> Value {
    let mut patch = Map::new();
    if let (Some(o), Some(n)) = (old.as_object(), new.as_object()) {
        for (k, nv) in n {
            match o.get(k) {
                Some(ov) if ov == nv => {}
                Some(ov) if ov.is_object() && nv.is_object() => {
                    patch.insert(k.clone(), two_way_merge_patch(ov, nv));
                }
                _ => {
                    patch.insert(k.clone(), nv.clone());
                }
            }
        }
        for k in o.keys() {
            if !n.contains_key(k) {
                patch.insert(k.clone(), Value::Null);
            }
        }
    }
    Value::Object(patch)
}

/// A patch as the compact JSON Go writes for it (maps with sorted keys).
pub fn patch_json(patch: &Value) -> String {
    sorted(patch).to_string()
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taints_print_as_go_does() {
        let taint = |key: &str, value: &str, effect: &str| Taint {
            key: key.into(),
            value: value.into(),
            effect: effect.into(),
            ..Default::default()
        };
        assert_eq!(taint_string(&taint("k", "", "")), "k");
        assert_eq!(taint_string(&taint("k", "", "NoSchedule")), "k:NoSchedule");
        assert_eq!(taint_string(&taint("k", "v", "")), "k=v:");
        assert_eq!(taint_string(&taint("k", "v", "NoExecute")), "k=v:NoExecute");
    }
}
