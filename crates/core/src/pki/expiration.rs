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
