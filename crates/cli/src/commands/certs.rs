//! `kubeadm certs check-expiration`, `certs renew <name>|all` and `certs generate-csr`, as upstream's
//! `cmd/certs.go` with the renewal manager (`phases/certs/renewal`): the certificates of the table
//! plus the client certificates embedded in admin.conf, controller-manager.conf and scheduler.conf.
//!
//! Beyond v1.25.16: `check-expiration -o json|yaml` prints the `CertificateExpirationInfo` object
//! of `output.kubeadm.k8s.io/v1alpha3`, with the flags upstream added for it in v1.30
//! (`-o, --experimental-output`, `--show-managed-fields`, `--allow-missing-template-keys`); the
//! default `text` output is v1.25.16's.

use std::path::{Path, PathBuf};

use kubeadm_api::internal::InitConfig;
use kubeadm_api::v1beta3::ClusterConfiguration;
use kubeadm_core::kubeconfig::{
    CLIENT_KEY_ALGORITHM, KUBECONFIG_SPECS, UserAuth, build_kubeconfig, server_url,
};
use kubeadm_core::layout::KUBERNETES_DIR;
use kubeadm_core::pki::{
    CERT_SPECS, CSR_FILE_MODE, CertInfo, CertTemplate, ExpirationRow, KEY_FILE_MODE, KUBECONFIG_FILE_MODE,
    expiration_entries, expiration_info, issue_csr, render_expiration_table,
};
use kubeadm_effects::fs::Fs;
use kubeadm_effects::report::Reporter as _;
use kubeadm_host::fs::RealFs;
use kubeadm_host::keygen::AwsLcKeyGen;
use kubeadm_phases::renewal::{
    RenewRequest, externally_managed, handlers, read_handler_cert, renew_certificates,
};
use kubeadm_phases::{KeyPool, pki_inputs};

use crate::cobra::execute::Invocation;
use crate::error::{CertsError, CommandError, Output};
use crate::options::config_load::{go_json_indent, load_or_default_init, log_warnings};
use crate::printers::sorted_json;
use crate::printers::{Printer, PrinterError};
use crate::setup::host_facts;
use crate::setup::reporter;
use crate::setup::unix_now;

fn read_text(path: &Path) -> Option<String> {
    kubeadm_phases::pki::read_text(&RealFs, path)
}

/// Upstream's `getInternalCfg`: without a config file, the configuration of the cluster the
/// `--kubeconfig` names when a client can be made from it (with `--cert-dir` kept, as upstream
/// overrides the fetched `certificatesDir` with the flag, which always has a value); when the
/// cluster cannot be read, upstream's fallback line and the defaults; else the config file or the
/// defaults. What the cluster's configuration changes here is chiefly external etcd: its
/// certificates are neither listed nor renewed. `quiet` (`-o json|yaml`, beyond upstream) keeps
/// the progress lines off standard output.
fn internal_cfg(
    inv: &Invocation<'_>,
    prefix: &str,
    quiet: bool,
    out: &mut Output,
) -> Result<InitConfig, CommandError> {
    let config_path = inv.flags.string("config");
    let cert_dir = inv.flags.string("cert-dir");
    if config_path.is_empty() {
        let kubeconfig = inv.flags.string("kubeconfig");
        if let Ok(client) = kubeadm_host::cluster::KubeCluster::from_kubeconfig(Path::new(&kubeconfig)) {
            let mut say = |text: &str| {
                if !quiet {
                    out.push_str(text);
                }
            };
            say(&format!("[{prefix}] Reading configuration from the cluster...\n"));
            say(&format!(
                "[{prefix}] FYI: You can look at this config file with 'kubectl -n kube-system get cm kubeadm-config -o yaml'\n"
            ));
            match fetch_from_cluster(inv, &client) {
                Ok(mut cfg) => {
                    say("\n");
                    if !cert_dir.is_empty() {
                        cfg.cluster.certificates_dir = cert_dir;
                    }
                    return Ok(cfg);
                }
                Err(e) => {
                    reporter(inv).info(1, "certs.go", &format!("[{prefix}] {e}"));
                    say(&format!(
                        "[{prefix}] Error reading configuration from the Cluster. Falling back to default configuration\n\n"
                    ));
                }
            }
        }
    }
    let cluster = ClusterConfiguration {
        kubernetes_version: kubeadm_api::version::CURRENT_KUBERNETES_VERSION.to_string(),
        certificates_dir: cert_dir,
        ..Default::default()
    };
    let cfg = load_or_default_init(&host_facts::gather(), &config_path, cluster, "")?;
    log_warnings(&reporter(inv), &cfg.warnings);
    Ok(cfg)
}

/// Upstream's `FetchInitConfigurationFromCluster` as `getInternalCfg` calls it: the node's own
/// registration and API endpoint read too (this is a node of the cluster), the kubelet's and
/// kube-proxy's configurations from their ConfigMaps; their warnings logged.
fn fetch_from_cluster(
    inv: &Invocation<'_>,
    client: &kubeadm_host::cluster::KubeCluster,
) -> Result<InitConfig, kubeadm_phases::config_from_cluster::FetchConfigError> {
    let rep = reporter(inv);
    let host = host_facts::gather();
    // Defaulting fills a bootstrap token nothing here uses; it must still be a valid one.
    let mut token = crate::setup::secrets::new_token;
    let mut inputs = kubeadm_api::dynamic::DynamicInputs {
        host: &host,
        new_token: &mut token,
        fetch_version: &kubeadm_api::version::offline,
    };
    let mut warnings = Vec::new();
    let fetched = kubeadm_phases::config_from_cluster::fetch_init_config_with_components(
        client,
        &RealFs,
        &kubeadm_core::layout::Layout::default().kubelet_conf(),
        &mut inputs,
        &mut warnings,
        "",
    );
    kubeadm_phases::config_from_cluster::log_config_warnings(&rep, &warnings);
    let cfg = fetched?;
    kubeadm_phases::config_from_cluster::log_config_warnings(&rep, &cfg.warnings);
    Ok(cfg)
}

/// The formats of kubeadm's output printers, as upstream lists them in its error.
const OUTPUT_FORMATS: &str = "go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,template,templatefile,text,yaml";

fn output_format(inv: &Invocation<'_>) -> Result<Printer, PrinterError> {
    crate::printers::printer(
        &inv.flags.string("experimental-output"),
        inv.flags.bool("allow-missing-template-keys"),
        OUTPUT_FORMATS,
    )
}

/// `kubeadm certs check-expiration [-o text|json|yaml]`.
pub(crate) fn check_expiration(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let mut format = output_format(inv)?;
    let text = matches!(format, Printer::Text);
    let cfg = internal_cfg(inv, "check-expiration", !text, out)?;
    let now_time = crate::setup::now();
    let now = crate::setup::unix_seconds(now_time);
    let cert_dir = PathBuf::from(&cfg.cluster.certificates_dir);
    let etcd = pki_inputs(&cfg).etcd;
    let (certs, cas) = expiration_entries(&etcd);
    let by_name = handlers(Path::new(KUBERNETES_DIR), &cert_dir, &etcd);
    let mut rows = Vec::new();
    for entry in &certs {
        let Some(h) = by_name.iter().find(|h| h.name == entry.name) else {
            continue;
        };
        let found = if RealFs.exists(&h.path) {
            let external = externally_managed(&RealFs, &cert_dir, h.ca, now)?;
            let cert = read_handler_cert(&RealFs, h, &cert_dir)?;
            Some((cert.not_after, external))
        } else {
            None
        };
        rows.push(ExpirationRow {
            name: entry.name.clone(),
            ca_name: entry.ca_name.map(str::to_string),
            found,
        });
    }
    let mut ca_rows = Vec::new();
    for entry in &cas {
        let Some(spec) = CERT_SPECS.iter().find(|s| s.name == entry.name) else {
            continue;
        };
        let path = cert_dir.join(format!("{}.crt", spec.base_name));
        let found = if RealFs.exists(&path) {
            let external = externally_managed(&RealFs, &cert_dir, spec.id, now)?;
            let cert = read_text(&path)
                .and_then(|t| CertInfo::from_pem(&t).ok())
                .ok_or_else(|| CertsError::LoadCertificate {
                    name: spec.base_name.to_string(),
                })?;
            Some((cert.not_after, external))
        } else {
            None
        };
        ca_rows.push(ExpirationRow {
            name: entry.name.clone(),
            ca_name: None,
            found,
        });
    }
    match &mut format {
        Printer::Text => out.push_str(&render_expiration_table(&rows, &ca_rows, now_time)),
        // cli-runtime's JSON printer: four-space indent and a newline.
        Printer::Json => {
            out.push_str(&go_json_indent(&expiration_info(&rows, &ca_rows, now_time)));
            out.push('\n');
        }
        // Its YAML printer: the JSON through sigs.k8s.io/yaml, keys sorted.
        Printer::Template(t) => t
            .print(&expiration_info(&rows, &ca_rows, now_time), out)
            .map_err(|reason| PrinterError::Print {
                object: "certificate expiration info".to_string(),
                reason,
            })?,
        Printer::Yaml => out.push_str(&kubeadm_yaml::to_string(&sorted_json::sorted_keys(
            &expiration_info(&rows, &ca_rows, now_time),
        ))),
    }
    Ok(())
}

/// `kubeadm certs renew <name>` and `certs renew all`.
pub(crate) fn renew(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let cfg = internal_cfg(inv, "renew", false, out)?;
    let inputs = pki_inputs(&cfg);
    let req = RenewRequest {
        which: inv.command.name(),
        kubernetes_dir: Path::new(KUBERNETES_DIR),
        cert_dir: Path::new(&cfg.cluster.certificates_dir),
        etcd: &inputs.etcd,
        key_algorithm: inputs.key_algorithm,
        now: unix_now(),
    };
    renew_certificates(
        &RealFs,
        &AwsLcKeyGen,
        &req,
        &mut crate::setup::secrets::random_u64,
        out,
    )?;
    Ok(())
}

/// `kubeadm certs generate-csr`: keys and CSRs for every signed certificate and kubeconfig file.
pub(crate) fn generate_csr(inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let mut cfg = load_or_default_init(
        &host_facts::gather(),
        &inv.flags.string("config"),
        ClusterConfiguration::default(),
        "",
    )?;
    log_warnings(&reporter(inv), &cfg.warnings);
    let cert_dir_flag = inv.flags.string("cert-dir");
    if !cert_dir_flag.is_empty() {
        cfg.cluster.certificates_dir = cert_dir_flag;
    }
    let kube_dir = PathBuf::from(inv.flags.string("kubeconfig-dir"));
    let inputs = pki_inputs(&cfg);
    let cert_dir = PathBuf::from(&cfg.cluster.certificates_dir);
    let rep = reporter(inv);
    // Upstream uses the full table here, etcd included, whatever the etcd mode.
    let leaves: Vec<_> = CERT_SPECS.iter().filter(|s| !s.is_ca()).collect();
    let mut pool = KeyPool::default();
    let mut wanted = vec![inputs.key_algorithm; leaves.len()];
    wanted.extend([CLIENT_KEY_ALGORITHM; KUBECONFIG_SPECS.len()]);
    pool.fill(&AwsLcKeyGen, &wanted).map_err(CertsError::from)?;
    let write = |path: &Path, text: &str, mode: u32| {
        RealFs
            .write(path, text.as_bytes(), mode)
            .map_err(|source| CertsError::Write {
                path: path.to_path_buf(),
                source,
            })
    };
    out.push_str(&format!("generating keys and CSRs in {}\n", cert_dir.display()));
    for spec in leaves {
        let csr_path = cert_dir.join(format!("{}.csr", spec.base_name));
        let key_path = cert_dir.join(format!("{}.key", spec.base_name));
        if RealFs.exists(&csr_path) || RealFs.exists(&key_path) {
            return Err(CertsError::KeyOrCsrExists {
                dir: cert_dir.clone(),
                name: spec.base_name.to_string(),
            }
            .into());
        }
        let template = CertTemplate::for_spec(spec, &inputs).map_err(CertsError::from)?;
        for w in &template.alt_names.warnings {
            kubeadm_effects::report::Reporter::warn(&rep, "certlist.go", w);
        }
        let key = pool
            .take(&AwsLcKeyGen, inputs.key_algorithm)
            .map_err(CertsError::from)?;
        let csr = issue_csr(&template, &key).map_err(CertsError::from)?;
        write(&key_path, &key.to_pem(), KEY_FILE_MODE)?;
        write(&csr_path, &csr.pem, CSR_FILE_MODE)?;
        out.push_str(&format!("  {}\n", spec.base_name));
    }
    out.push_str(&format!("generating keys and CSRs in {}\n", kube_dir.display()));
    for spec in &KUBECONFIG_SPECS {
        let path = kube_dir.join(spec.file_name);
        if RealFs.exists(&path) {
            return Err(CertsError::KubeconfigExists(path).into());
        }
        let csr_path = kube_dir.join(format!("{}.csr", spec.file_name));
        if RealFs.exists(&csr_path) || RealFs.exists(&kube_dir.join(format!("{}.key", spec.file_name))) {
            return Err(CertsError::KubeconfigCsrExists(path).into());
        }
        let user = spec.client_name(&inputs);
        let template = CertTemplate {
            common_name: user.clone(),
            organization: spec.organizations.iter().map(|s| (*s).to_string()).collect(),
            alt_names: Default::default(),
            ext_key_usages: vec![kubeadm_core::pki::ExtKeyUsage::ClientAuth],
        };
        let key = pool
            .take(&AwsLcKeyGen, CLIENT_KEY_ALGORITHM)
            .map_err(CertsError::from)?;
        let csr = issue_csr(&template, &key).map_err(CertsError::from)?;
        let server = server_url(spec, &inputs).map_err(CertsError::from)?;
        let doc = build_kubeconfig(
            &server,
            &inputs.cluster_name,
            &user,
            None,
            &UserAuth::KeyOnly {
                key_pem: key.to_pem(),
            },
        );
        write(&path, &kubeadm_yaml::to_string(&doc), KUBECONFIG_FILE_MODE)?;
        write(&csr_path, &csr.pem, CSR_FILE_MODE)?;
        out.push_str(&format!("  {}\n", spec.file_name));
    }
    Ok(())
}
