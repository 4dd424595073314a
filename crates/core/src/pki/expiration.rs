//! `kubeadm certs check-expiration`: which certificates and CAs are listed (sorted by name, the three
//! control-plane kubeconfig files included), and the two tables rendered as Go's `tabwriter` does with
//! upstream's settings (minwidth 10, padding 3, spaces).

use super::der::civil_from_unix;
use super::spec::{CertId, EtcdMode, cert_list, cert_spec};
use kubeadm_api::gofmt::{short_human_duration, tabwrite};

/// One line the command reports on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpirationEntry {
    /// The name shown (`apiserver`, `admin.conf`, `etcd-ca`, …).
    pub name: String,
    /// Certificate base name under the certificates dir, or kubeconfig file name under the
    /// kubernetes dir when `in_kubeconfig`.
    pub file: String,
    /// Whether the certificate is embedded in a kubeconfig file.
    pub in_kubeconfig: bool,
    /// The signing CA's name (`ca`, `front-proxy-ca`, `etcd-ca`); `None` for CA lines.
    pub ca_name: Option<&'static str>,
    /// The signing CA, for the externally-managed check; `None` for CA lines.
    pub ca: Option<CertId>,
}

/// The certificate lines and the CA lines, each sorted by name as upstream's renewal manager does.
pub fn expiration_entries(etcd: &EtcdMode) -> (Vec<ExpirationEntry>, Vec<ExpirationEntry>) {
    let mut certs = Vec::new();
    let mut cas = Vec::new();
    for spec in cert_list(etcd) {
        match spec.ca {
            Some(ca) => certs.push(ExpirationEntry {
                name: spec.name.to_string(),
                file: spec.base_name.to_string(),
                in_kubeconfig: false,
                ca_name: Some(cert_spec(ca).name),
                ca: Some(ca),
            }),
            None => cas.push(ExpirationEntry {
                name: spec.name.to_string(),
                file: spec.base_name.to_string(),
                in_kubeconfig: false,
                ca_name: None,
                ca: None,
            }),
        }
    }
    for file in ["admin.conf", "controller-manager.conf", "scheduler.conf"] {
        certs.push(ExpirationEntry {
            name: file.to_string(),
            file: file.to_string(),
            in_kubeconfig: true,
            ca_name: Some("ca"),
            ca: Some(CertId::Ca),
        });
    }
    certs.sort_by(|a, b| a.name.cmp(&b.name));
    cas.sort_by(|a, b| a.name.cmp(&b.name));
    (certs, cas)
}

/// One rendered line: the entry and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpirationRow {
    /// The name shown.
    pub name: String,
    /// The CA name column (certificate table only).
    pub ca_name: Option<String>,
    /// `(NotAfter as Unix seconds, externally managed)`, or `None` when the file is missing.
    pub found: Option<(i64, bool)>,
}

/// `SystemTime` as signed Unix nanoseconds.
fn unix_nanos(t: std::time::SystemTime) -> i128 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Go's `Format("Jan 02, 2006 15:04 MST")` of a UTC instant.
fn expires(unix: i64) -> String {
    let c = civil_from_unix(unix);
    let month = MONTHS
        .get((c.month as usize).saturating_sub(1))
        .copied()
        .unwrap_or("???");
    format!(
        "{month} {:02}, {} {:02}:{:02} UTC",
        c.day, c.year, c.hour, c.minute
    )
}

fn yes_no(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// Both tables exactly as upstream prints them (certificate lines, a blank line, CA lines).
pub fn render_expiration_table(
    certs: &[ExpirationRow],
    cas: &[ExpirationRow],
    now: std::time::SystemTime,
) -> String {
    let now = unix_nanos(now);
    let residual = |not_after: i64| short_human_duration(i128::from(not_after) * 1_000_000_000 - now);
    let mut lines: Vec<String> =
        vec!["CERTIFICATE\tEXPIRES\tRESIDUAL TIME\tCERTIFICATE AUTHORITY\tEXTERNALLY MANAGED".to_string()];
    for row in certs {
        lines.push(match row.found {
            Some((not_after, external)) => format!(
                "{}\t{}\t{}\t{}\t{:<8}",
                row.name,
                expires(not_after),
                residual(not_after),
                row.ca_name.as_deref().unwrap_or_default(),
                yes_no(external)
            ),
            None => format!("!MISSING! {}\t\t\t\t", row.name),
        });
    }
    lines.push(String::new());
    lines.push("CERTIFICATE AUTHORITY\tEXPIRES\tRESIDUAL TIME\tEXTERNALLY MANAGED".to_string());
    for row in cas {
        lines.push(match row.found {
            Some((not_after, external)) => format!(
                "{}\t{}\t{}\t{:<8}",
                row.name,
                expires(not_after),
                residual(not_after),
                yes_no(external)
            ),
            None => format!("!MISSING! {}\t\t\t", row.name),
        });
    }
    tabwrite(&lines, 10, 3)
}

/// The API version of [`expiration_info`]'s object: later upstream releases (v1.30 on) print
/// `check-expiration -o json|yaml` in this group and version.
pub const EXPIRATION_OUTPUT_API_VERSION: &str = "output.kubeadm.k8s.io/v1alpha3";

/// One `Certificate` of the output API: name, expiration date (RFC 3339, `null` when missing),
/// residual time in whole seconds (Go's `Duration / time.Second`, truncated toward zero), externally
/// managed, the CA's name (omitted for CAs) and missing.
fn expiration_certificate(row: &ExpirationRow, now_nanos: i128) -> serde_json::Value {
    let (date, residual, external) = match row.found {
        Some((not_after, external)) => (
            kubeadm_api::timestamp::Time::from_unix_seconds(not_after)
                .map_or(serde_json::Value::Null, |t| t.to_string().into()),
            (i128::from(not_after) * 1_000_000_000 - now_nanos) / 1_000_000_000,
            external,
        ),
        None => (serde_json::Value::Null, 0, false),
    };
    let mut object = serde_json::Map::new();
    object.insert("name".into(), row.name.clone().into());
    object.insert("expirationDate".into(), date);
    object.insert(
        "residualTime".into(),
        i64::try_from(residual).unwrap_or(i64::MAX).into(),
    );
    object.insert("externallyManaged".into(), external.into());
    // Upstream leaves the CA name empty (omitted) on a missing certificate's line.
    if let (Some(ca), Some(_)) = (&row.ca_name, row.found) {
        object.insert("caName".into(), ca.clone().into());
    }
    object.insert("missing".into(), row.found.is_none().into());
    serde_json::Value::Object(object)
}

/// The `CertificateExpirationInfo` object later upstream releases print for `certs
/// check-expiration -o json|yaml` (`output.kubeadm.k8s.io/v1alpha3`), fields in Go's order: the
/// same rows and values as the text tables.
pub fn expiration_info(
    certs: &[ExpirationRow],
    cas: &[ExpirationRow],
    now: std::time::SystemTime,
) -> serde_json::Value {
    let now = unix_nanos(now);
    serde_json::json!({
        "kind": "CertificateExpirationInfo",
        "apiVersion": EXPIRATION_OUTPUT_API_VERSION,
        "certificates": certs.iter().map(|r| expiration_certificate(r, now)).collect::<Vec<_>>(),
        "certificateAuthorities": cas.iter().map(|r| expiration_certificate(r, now)).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod info_tests {
    use super::*;

    #[test]
    fn expiration_info_has_upstreams_fields_and_values() {
        let now = std::time::UNIX_EPOCH + std::time::Duration::new(1_000, 500_000_000);
        let certs = [
            ExpirationRow {
                name: "apiserver".into(),
                ca_name: Some("ca".into()),
                found: Some((1_000 + 86_400, false)),
            },
            ExpirationRow {
                name: "etcd-peer".into(),
                ca_name: Some("etcd-ca".into()),
                found: None,
            },
        ];
        let cas = [ExpirationRow {
            name: "ca".into(),
            ca_name: None,
            found: Some((500, true)),
        }];
        let info = expiration_info(&certs, &cas, now);
        assert_eq!(
            info.to_string(),
            concat!(
                r#"{"kind":"CertificateExpirationInfo","apiVersion":"output.kubeadm.k8s.io/v1alpha3","#,
                r#""certificates":[{"name":"apiserver","expirationDate":"1970-01-02T00:16:40Z","residualTime":86399,"externallyManaged":false,"caName":"ca","missing":false},"#,
                r#"{"name":"etcd-peer","expirationDate":null,"residualTime":0,"externallyManaged":false,"missing":true}],"#,
                r#""certificateAuthorities":[{"name":"ca","expirationDate":"1970-01-01T00:08:20Z","residualTime":-500,"externallyManaged":true,"missing":false}]}"#
            )
        );
    }
}
