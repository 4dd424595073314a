//! Certificates and keys: the certificate table upstream's `certs` phases are generated from, SAN
//! rules, issuing certificates and CSRs, key encodings, checks of files that already exist and the
//! `certs check-expiration` table.
//!
//! Pure: keys come from the key-generation effect, time and serial numbers are arguments and file
//! contents are passed in as text.

mod cert;
mod der;
mod existing;
mod expiration;
mod issue;
mod keys;
mod messages;
mod names;
mod spec;

pub use cert::{CertInfo, CertParseError};
pub use der::{DerError, PemBlock, pem_decode_all};
pub use existing::{
    CaCheck, ExistingError, ExternalCaStatus, X509Error, check_existing_ca, check_existing_chain,
    check_existing_signed, external_ca_leaves, external_ca_status, period_warning,
};
pub use expiration::{
    EXPIRATION_OUTPUT_API_VERSION, ExpirationEntry, ExpirationRow, expiration_entries, expiration_info,
    render_expiration_table,
};
pub use issue::{CertTemplate, IssueError, Issued, issue_ca, issue_csr, issue_signed, serial_from_random};
pub use keys::{KeyAlgorithm, KeyError, PrivateKey};
pub use messages::CertsMessage;
pub use names::{https_url, is_dns1123_subdomain, parse_host_port, parse_ip_sloppy};
pub use spec::{
    AltNames, CA_BACKDATE_SECS, CA_VALIDITY_SECS, CERT_FILE_MODE, CERT_SPECS, CERT_VALIDITY_SECS,
    CSR_FILE_MODE, CertId, CertSpec, CommonName, EtcdMode, ExtKeyUsage, KEY_FILE_MODE, KUBECONFIG_FILE_MODE,
    PKI_DIR_MODE, PkiInputs, SA_KEY_BASE_NAME, SanError, SanRule, alt_names, api_server_virtual_ip,
    cert_list, cert_spec,
};
