//! How `kubeadm upgrade plan` prints an upgrade (upstream's `printUpgradePlan`): text tables, or
//! one `output.kubeadm.k8s.io/v1alpha2` `UpgradePlan` with `-o json|yaml`.

use kubeadm_api::gofmt::tabwrite;
use kubeadm_core::upgrade::plan::{Upgrade, component_plan};
use serde_json::{Value, json};

use crate::upgrade::common::{Format, Printer};
use crate::upgrade::{SEPARATOR, UpgradeError};

/// Upstream's `printUpgradePlan`: in text, the kubelets to upgrade by hand, the control plane's
/// table, the command to run and the kubeadm to get first; in JSON/YAML, the `UpgradePlan`.
pub fn print_upgrade(up: &Upgrade, external_etcd: bool, printer: &Printer<'_>) -> Result<(), UpgradeError> {
    let (rows, flag) = component_plan(up, external_etcd)?;
    let mut shown = Vec::new();
    let mut text = String::new();
    let mut table: Vec<String> = Vec::new();
    let flush = |table: &mut Vec<String>, text: &mut String| {
        if !table.is_empty() {
            text.push_str(&tabwrite(table, 10, 3));
            text.push('\n');
            table.clear();
        }
    };
    let mut add_row = |table: &mut Vec<String>, name: &str, current: &str, new: &str| {
        if table.is_empty() {
            table.push("COMPONENT\tCURRENT\tTARGET".into());
        }
        table.push(format!("{name}\t{current}\t{new}"));
        shown.push(json!({"name": name, "currentVersion": current, "newVersion": new}));
    };
    let mut manual_header = true;
    let mut control_plane_header = true;
    for row in &rows {
        if external_etcd && row.name == "etcd" {
            continue;
        }
        if row.name == "kubelet" {
            // Only the first kubelet row is named.
            let name = if manual_header { "kubelet" } else { "" };
            if manual_header {
                text.push_str("Components that must be upgraded manually after you have upgraded the control plane with 'kubeadm upgrade apply':\n");
                manual_header = false;
            }
            add_row(&mut table, name, &row.current_version, &row.new_version);
        } else {
            if control_plane_header {
                flush(&mut table, &mut text);
                text.push_str(&format!("Upgrade to the latest {}:\n\n", up.description));
                control_plane_header = false;
            }
            add_row(&mut table, &row.name, &row.current_version, &row.new_version);
        }
    }
    flush(&mut table, &mut text);
    text.push_str(&format!(
        "You can now apply the upgrade by executing the following command:\n\n\tkubeadm upgrade apply {}{flag}\n\n",
        up.after.kube_version
    ));
    if up.before.kubeadm_version != up.after.kubeadm_version {
        text.push_str(&format!(
            "Note: Before you can perform this upgrade, you have to update kubeadm to {}.\n\n",
            up.after.kubeadm_version
        ));
    }
    text.push_str(SEPARATOR);
    match printer.format {
        Format::Text => printer.rep.out(&text),
        Format::Json => printer.rep.out(&plan_json(&shown)),
        Format::Yaml => printer.rep.out(&plan_yaml(&shown)),
    }
    Ok(())
}

/// The `UpgradePlan` as kube's JSON printer writes it: fields in Go's declaration order, four
/// spaces of indent. Upstream never fills in `configVersions` here, so it is always null.
fn plan_json(components: &[Value]) -> String {
    use serde::Serialize;
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Component<'a> {
        name: &'a str,
        current_version: &'a str,
        new_version: &'a str,
    }
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Plan<'a> {
        kind: &'a str,
        api_version: &'a str,
        components: Vec<Component<'a>>,
        config_versions: Option<()>,
    }
    let field = |c: &'_ Value, k: &str| -> String {
        c.get(k).and_then(Value::as_str).unwrap_or_default().to_string()
    };
    let owned: Vec<[String; 3]> = components
        .iter()
        .map(|c| {
            [
                field(c, "name"),
                field(c, "currentVersion"),
                field(c, "newVersion"),
            ]
        })
        .collect();
    let plan = Plan {
        kind: "UpgradePlan",
        api_version: "output.kubeadm.k8s.io/v1alpha2",
        components: owned
            .iter()
            .map(|[n, c, v]| Component {
                name: n,
                current_version: c,
                new_version: v,
            })
            .collect(),
        config_versions: None,
    };
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(
        &mut buf,
        serde_json::ser::PrettyFormatter::with_indent(b"    "),
    );
    // Serializing plain strings into memory cannot fail.
    let _ = plan.serialize(&mut ser);
    let mut text = String::from_utf8_lossy(&buf).into_owned();
    text.push('\n');
    text
}

/// The `UpgradePlan` as kube's YAML printer writes it (keys sorted).
fn plan_yaml(components: &[Value]) -> String {
    kubeadm_yaml::to_string(&json!({
        "apiVersion": "output.kubeadm.k8s.io/v1alpha2",
        "kind": "UpgradePlan",
        "components": components,
        "configVersions": null,
    }))
}
