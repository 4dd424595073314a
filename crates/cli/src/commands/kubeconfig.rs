//! `kubeadm kubeconfig user`: a kubeconfig for an additional user on stdout, with a client
//! certificate signed by the cluster CA (or a token), as upstream's `cmd/kubeconfig.go`.

use std::path::PathBuf;

use kubeadm_api::v1beta3::ClusterConfiguration;
use kubeadm_core::kubeconfig::{CLIENT_KEY_ALGORITHM, UserAuth, build_kubeconfig, control_plane_endpoint};
use kubeadm_core::pki::{
    AltNames, CERT_VALIDITY_SECS, CertInfo, CertTemplate, ExtKeyUsage, PrivateKey, issue_signed,
    period_warning, serial_from_random,
};
use kubeadm_effects::keygen::KeyGen as _;
use kubeadm_effects::report::Reporter as _;
use kubeadm_host::fs::RealFs;
use kubeadm_host::keygen::AwsLcKeyGen;
use kubeadm_phases::pki_inputs;

use crate::cobra::execute::Invocation;
use crate::error::{CommandError, KubeconfigError, Output};
use crate::options::config_load::{load_or_default_init, log_warnings};
use crate::setup::host_facts;
use crate::setup::reporter;
use crate::setup::unix_now;

/// `kubeadm kubeconfig user`.
pub(crate) fn user(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let f = &inv.flags;
    let config_path = f.string("config");
    if config_path.is_empty() {
        return Err(KubeconfigError::NoConfigPath.into());
    }
    let cfg = load_or_default_init(
        &host_facts::gather(),
        &config_path,
        ClusterConfiguration::default(),
        "",
    )?;
    let rep = reporter(inv);
    log_warnings(&rep, &cfg.warnings);
    let validity_nanos = f.duration_nanos("validity-period");
    if validity_nanos > CERT_VALIDITY_SECS * 1_000_000_000 {
        rep.warn(
            "kubeconfig.go",
            &format!(
                "WARNING: the specified certificate validity period {} is longer than the default duration {}, this may increase security risks.",
                kubeadm_api::duration::Duration::from_nanos(validity_nanos),
                kubeadm_api::duration::Duration::from_nanos(CERT_VALIDITY_SECS * 1_000_000_000)
            ),
        );
    }
    let now = unix_now();
    let not_after = now + validity_nanos.div_euclid(1_000_000_000);

    let cert_dir = PathBuf::from(&cfg.cluster.certificates_dir);
    let read = |name: &str| kubeadm_phases::pki::read_text(&RealFs, &cert_dir.join(name));
    let ca_load_error = |what: &'static str, name: &str| KubeconfigError::LoadCa {
        what,
        path: cert_dir.join(name),
    };
    let ca_cert = read("ca.crt")
        .and_then(|t| CertInfo::from_pem(&t).ok())
        .ok_or_else(|| ca_load_error("certificate", "ca.crt"))?;
    let ca_key = read("ca.key")
        .and_then(|t| PrivateKey::from_pem(&t).ok())
        .ok_or_else(|| ca_load_error("private key", "ca.key"))?;
    if let Some(w) = period_warning("ca", &ca_cert, now) {
        rep.warn("certs.go", &w);
    }
    let inputs = pki_inputs(&cfg);
    let (server, warning) = control_plane_endpoint(&inputs).map_err(KubeconfigError::from)?;
    if let Some(w) = warning {
        rep.warn("endpoint.go", &w);
    }
    let client_name = f.string("client-name");
    let token = f.string("token");
    let auth = if token.is_empty() {
        let key = AwsLcKeyGen
            .generate_one(kubeadm_effects::keygen::KeyAlgorithm::Rsa2048)
            .map_err(KubeconfigError::from)
            .and_then(|k| PrivateKey::from_pkcs8_der(&k.pkcs8_der).map_err(KubeconfigError::from))?;
        debug_assert_eq!(key.algorithm(), CLIENT_KEY_ALGORITHM);
        let template = CertTemplate {
            common_name: client_name.clone(),
            organization: f.strings("org"),
            alt_names: AltNames::default(),
            ext_key_usages: vec![ExtKeyUsage::ClientAuth],
        };
        let cert = issue_signed(
            &template,
            &ca_cert,
            &ca_key,
            &key,
            now,
            Some(not_after),
            serial_from_random(crate::setup::secrets::random_u64()),
        )
        .map_err(|source| KubeconfigError::ClientCertificate {
            client_name: client_name.clone(),
            source,
        })?;
        UserAuth::ClientCert {
            cert_pem: cert.pem,
            key_pem: key.to_pem(),
        }
    } else {
        UserAuth::Token(token)
    };
    let doc = build_kubeconfig(&server, &inputs.cluster_name, &client_name, Some(&ca_cert), &auth);
    out.push_str(&kubeadm_yaml::to_string(&doc));
    out.push('\n');
    Ok(())
}
