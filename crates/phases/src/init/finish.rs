//! What `kubeadm init` prints when it is done: the "initialized successfully" text with the join
//! commands (upstream's `initDoneTempl` and `joinCommandTemplate`), and what they are made from —
//! the current cluster of `admin.conf` (its server and CA) and the CA's public key pin, the
//! SHA-256 of the certificate's SubjectPublicKeyInfo. The `cluster-info` ConfigMap is built from the
//! same cluster entry.

use std::path::Path;

use crate::pki::public_key_pin;
use base64::Engine as _;
use kubeadm_core::pki::CertInfo;
use serde_json::Value;

use crate::InitData;

/// Why the join command could not be made (upstream's texts).
#[derive(Debug, thiserror::Error)]
pub enum JoinCommandError {
    /// `admin.conf` could not be read or parsed.
    #[error("failed to load kubeconfig: {0}")]
    Load(String),
    /// No cluster for the current context.
    #[error("failed to get default cluster config")]
    NoCluster,
    /// The CA data is not PEM certificates.
    #[error("failed to parse CA certificate from kubeconfig: {0}")]
    BadCa(String),
    /// The CA file the kubeconfig names could not be read.
    #[error("failed to load CA certificate referenced by kubeconfig: {0}")]
    CaFile(String),
    /// Neither CA data nor a CA file.
    #[error("no CA certificates found in kubeconfig")]
    NoCa,
}

/// The cluster entry of a kubeconfig's current context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentCluster {
    /// `server`.
    pub server: String,
    /// The CA bundle (PEM), from `certificate-authority-data` or the file `certificate-authority`.
    pub ca_pem: Vec<u8>,
}

/// Reads the current context's cluster from a kubeconfig file.
pub fn current_cluster(
    fs: &dyn kubeadm_effects::fs::Fs,
    path: &Path,
) -> Result<CurrentCluster, JoinCommandError> {
    let load = |e: String| JoinCommandError::Load(e);
    let bytes = fs.read(path).map_err(|e| {
        load(format!(
            "open {}: {}",
            path.display(),
            kubeadm_api::gofmt::io_error(&e)
        ))
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let doc = kubeadm_yaml::parse_documents(&text)
        .map_err(|e| load(e.to_string()))?
        .into_iter()
        .next()
        .map(|d| d.value)
        .unwrap_or(Value::Null);
    let config = kubeadm_core::kubeconfig::Config::from_value(&doc);
    let cluster = config
        .current_cluster()
        .map_err(|_| JoinCommandError::NoCluster)?;
    let server = cluster.server.clone();
    let data = Some(cluster.certificate_authority_data.as_str()).filter(|s| !s.is_empty());
    let ca_pem = if let Some(d) = data {
        base64::engine::general_purpose::STANDARD
            .decode(d.trim())
            .map_err(|e| load(e.to_string()))?
    } else if let Some(file) = Some(cluster.certificate_authority.as_str()).filter(|s| !s.is_empty()) {
        fs.read(Path::new(file)).map_err(|e| {
            JoinCommandError::CaFile(format!("open {file}: {}", kubeadm_api::gofmt::io_error(&e)))
        })?
    } else {
        return Err(JoinCommandError::NoCa);
    };
    Ok(CurrentCluster { server, ca_pem })
}

/// The pins of every certificate in a PEM bundle.
pub fn ca_pins(ca_pem: &[u8]) -> Result<Vec<String>, JoinCommandError> {
    let certs = CertInfo::chain_from_pem(&String::from_utf8_lossy(ca_pem))
        .map_err(|e| JoinCommandError::BadCa(e.to_string()))?;
    if certs.is_empty() {
        return Err(JoinCommandError::BadCa(
            "data does not contain any valid RSA or ECDSA certificates".into(),
        ));
    }
    Ok(certs.iter().map(public_key_pin).collect())
}

/// What a join command is made of.
#[derive(Debug, Clone)]
pub struct JoinInputs<'a> {
    /// `host:port` of the API server (the kubeconfig's server without `https://`).
    pub host_port: &'a str,
    /// The token, or `<value withheld>`.
    pub token: &'a str,
    /// The CA pins.
    pub pins: &'a [String],
    /// The certificate key (may be empty), or `<value withheld>`.
    pub certificate_key: &'a str,
}

/// `joinCommandTemplate`: the worker command, or with `control_plane` the control-plane one.
pub fn join_command(inputs: &JoinInputs<'_>, control_plane: bool) -> String {
    let mut out = format!(
        "kubeadm join {} --token {} \\\n\t",
        inputs.host_port, inputs.token
    );
    for pin in inputs.pins {
        out.push_str(&format!("--discovery-token-ca-cert-hash {pin} "));
    }
    if control_plane {
        out.push_str("\\\n\t--control-plane ");
        if !inputs.certificate_key.is_empty() {
            out.push_str(&format!("--certificate-key {}", inputs.certificate_key));
        }
    }
    out
}

/// What the final text shows besides the commands.
#[derive(Debug, Clone)]
pub struct DoneText<'a> {
    /// The admin kubeconfig path shown in the `sudo cp` line.
    pub kubeconfig_path: &'a str,
    /// Whether a control-plane endpoint is configured (only then the control-plane join is shown).
    pub control_plane_endpoint: bool,
    /// `--upload-certs`.
    pub upload_certs: bool,
    /// The control-plane join command.
    pub join_control_plane: &'a str,
    /// The worker join command.
    pub join_worker: &'a str,
}

/// `initDoneTempl`, rendered.
pub fn done_text(t: &DoneText<'_>) -> String {
    let mut out = format!(
        "
Your Kubernetes control-plane has initialized successfully!

To start using your cluster, you need to run the following as a regular user:

  mkdir -p $HOME/.kube
  sudo cp -i {} $HOME/.kube/config
  sudo chown $(id -u):$(id -g) $HOME/.kube/config

Alternatively, if you are the root user, you can run:

  export KUBECONFIG=/etc/kubernetes/admin.conf

You should now deploy a pod network to the cluster.
Run \"kubectl apply -f [podnetwork].yaml\" with one of the options listed at:
  https://kubernetes.io/docs/concepts/cluster-administration/addons/

",
        t.kubeconfig_path
    );
    if t.control_plane_endpoint {
        if t.upload_certs {
            out.push_str(&format!(
                "You can now join any number of the control-plane node running the following command on each as root:

  {}

Please note that the certificate-key gives access to cluster sensitive data, keep it secret!
As a safeguard, uploaded-certs will be deleted in two hours; If necessary, you can use
\"kubeadm init phase upload-certs --upload-certs\" to reload certs afterward.

",
                t.join_control_plane
            ));
        } else {
            out.push_str(&format!(
                "You can now join any number of control-plane nodes by copying certificate authorities
and service account keys on each node and then running the following as root:

  {}

",
                t.join_control_plane
            ));
        }
    }
    out.push_str(&format!(
        "Then you can join any number of worker nodes by running the following on each as root:\n\n{}\n",
        t.join_worker
    ));
    out
}

/// Upstream's `showJoinCommand`: the final text once per bootstrap token.
pub fn show(data: &InitData) -> Result<(), JoinCommandError> {
    let path = &data.cluster.kubeconfig_path;
    let cluster = current_cluster(&*data.effects.fs, path)?;
    let pins = ca_pins(&cluster.ca_pem)?;
    let host_port = cluster.server.replace("https://", "");
    let withheld = "<value withheld>";
    let key = if data.skip_certificate_key_print {
        withheld
    } else {
        data.cfg.init.certificate_key.as_str()
    };
    for token in &data.cfg.init.bootstrap_tokens {
        let shown = token.token.as_ref().map(ToString::to_string).unwrap_or_default();
        let token_text = if data.skip_token_print {
            withheld
        } else {
            shown.as_str()
        };
        let control_plane = join_command(
            &JoinInputs {
                host_port: &host_port,
                token: token_text,
                pins: &pins,
                certificate_key: key,
            },
            true,
        );
        let worker = join_command(
            &JoinInputs {
                host_port: &host_port,
                token: token_text,
                pins: &pins,
                certificate_key: "",
            },
            false,
        );
        data.effects.reporter.out(&done_text(&DoneText {
            kubeconfig_path: &path.display().to_string(),
            control_plane_endpoint: !data.cfg.cluster.control_plane_endpoint.is_empty(),
            upload_certs: data.upload_certs,
            join_control_plane: &control_plane,
            join_worker: &worker,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};
    use std::path::PathBuf;

    use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
    use kubeadm_api::v1beta3::BootstrapTokenString;

    use super::*;

    fn golden(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../core/tests/golden/cluster/{name}"))
    }

    /// The final text of upstream's `init --dry-run` (golden files from the upstream binary),
    /// rebuilt from the config, the CA upstream generated (read from its cluster-info ConfigMap)
    /// and the admin.conf path it printed: the CA hash and the template must match byte for byte.
    #[test]
    fn done_text_matches_upstream_dry_runs() {
        for name in ["default", "custom", "external"] {
            let text = std::fs::read_to_string(golden(&format!("{name}.dryrun.txt"))).expect("golden");
            let yaml = std::fs::read_to_string(golden(&format!("{name}.yaml"))).expect("config");
            let host = HostFacts {
                hostname: "node1".to_string(),
                default_route_ipv4: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2))),
                ..HostFacts::default()
            };
            let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").expect("token");
            let mut inputs = DynamicInputs {
                host: &host,
                new_token: &mut new_token,
                fetch_version: &kubeadm_api::version::offline,
            };
            let cfg = kubeadm_api::internal::load_init_config(name, &yaml, &mut inputs).expect("config");

            let ca_b64 = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("certificate-authority-data: "))
                .expect("ca");
            let ca = base64::engine::general_purpose::STANDARD
                .decode(ca_b64)
                .expect("base64");
            let server = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("server: "))
                .expect("server");
            let kubeconfig_path = text
                .lines()
                .find_map(|l| l.strip_prefix("  sudo cp -i "))
                .and_then(|l| l.split(' ').next())
                .expect("admin.conf path");
            let pins = ca_pins(&ca).expect("pins");
            let host_port = server.replace("https://", "");
            let upload_certs = text.contains("[upload-certs] Using certificate key:");

            let mut got = String::from("[addons] Applied essential addon: kube-proxy\n");
            for token in &cfg.init.bootstrap_tokens {
                let token = token.token.as_ref().expect("token").to_string();
                let control_plane = JoinInputs {
                    host_port: &host_port,
                    token: &token,
                    pins: &pins,
                    certificate_key: &cfg.init.certificate_key,
                };
                let worker = JoinInputs {
                    certificate_key: "",
                    ..control_plane.clone()
                };
                got.push_str(&done_text(&DoneText {
                    kubeconfig_path,
                    control_plane_endpoint: !cfg.cluster.control_plane_endpoint.is_empty(),
                    upload_certs,
                    join_control_plane: &join_command(&control_plane, true),
                    join_worker: &join_command(&worker, false),
                }));
            }
            let want = &text[text
                .find("[addons] Applied essential addon: kube-proxy\n")
                .expect("end")..];
            assert!(
                want == got,
                "{name}:\n{}",
                kubeadm_testkit::oracle::diff(want, &got)
            );
        }
    }
}
