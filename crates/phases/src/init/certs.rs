//! The `certs` phase of `kubeadm init` and its sub-phases (upstream's `cmd/phases/init/certs.go`):
//! each bound to the certificate it creates in [`crate::certs`], which `join --control-plane`'s
//! `control-plane-prepare certs` shares.

use crate::InitData;
use crate::certs;

/// Every selector the certificate phases bind, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![
        ("certs", certs::run_parent),
        ("certs/ca", certs::run_ca),
        ("certs/apiserver", certs::run_apiserver),
        (
            "certs/apiserver-kubelet-client",
            certs::run_apiserver_kubelet_client,
        ),
        ("certs/front-proxy-ca", certs::run_front_proxy_ca),
        ("certs/front-proxy-client", certs::run_front_proxy_client),
        ("certs/etcd-ca", certs::run_etcd_ca),
        ("certs/etcd-server", certs::run_etcd_server),
        ("certs/etcd-peer", certs::run_etcd_peer),
        (
            "certs/etcd-healthcheck-client",
            certs::run_etcd_healthcheck_client,
        ),
        ("certs/apiserver-etcd-client", certs::run_apiserver_etcd_client),
        ("certs/sa", certs::run_sa),
    ]
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::{Arc, Mutex};

    use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
    use kubeadm_api::v1beta3::{BootstrapTokenString, ClusterConfiguration, InitConfiguration};
    use kubeadm_effects::fs::{DryRunFs, Fs};
    use kubeadm_effects::keygen::{GeneratedKey, KeyAlgorithm, KeyGen, KeyGenError};
    use kubeadm_effects::report::{Reporter, Severity};

    use crate::InitData;

    /// A file system with nothing on it (writes land in the dry-run overlay on top).
    struct Empty;
    impl Fs for Empty {
        fn read(&self, _: &Path) -> io::Result<Vec<u8>> {
            Err(io::ErrorKind::NotFound.into())
        }
        fn write(&self, _: &Path, _: &[u8], _: u32) -> io::Result<()> {
            Err(io::ErrorKind::PermissionDenied.into())
        }
        fn exists(&self, _: &Path) -> bool {
            false
        }
        fn create_dir_all(&self, _: &Path, _: u32) -> io::Result<()> {
            Ok(())
        }
        fn remove_file(&self, _: &Path) -> io::Result<()> {
            Ok(())
        }
    }

    /// Hands out copies of one RSA key and records every batch asked for.
    struct RecordingKeyGen {
        rsa: Vec<u8>,
        batches: Arc<Mutex<Vec<usize>>>,
    }
    impl KeyGen for RecordingKeyGen {
        fn generate(&self, algorithms: &[KeyAlgorithm]) -> Result<Vec<GeneratedKey>, KeyGenError> {
            self.batches.lock().expect("lock").push(algorithms.len());
            Ok(algorithms
                .iter()
                .map(|a| GeneratedKey {
                    algorithm: *a,
                    pkcs8_der: self.rsa.clone(),
                })
                .collect())
        }
    }

    struct Lines(Arc<Mutex<String>>);
    impl Reporter for Lines {
        fn out(&self, text: &str) {
            self.0.lock().expect("lock").push_str(text);
        }
        fn err(&self, _: &str) {}
        fn verbosity(&self) -> u8 {
            0
        }
        fn log(&self, _: Severity, _: u8, _: &str, _: &str) {}
    }

    fn data(batches: Arc<Mutex<Vec<usize>>>, out: Arc<Mutex<String>>) -> InitData {
        let host = HostFacts {
            hostname: "node1".into(),
            default_route_ipv4: "10.0.0.5".parse().ok(),
            default_route_ipv6: None,
            host_address_error: None,
            loopback_address: None,
            existing_cri_sockets: vec!["unix:///var/run/containerd/containerd.sock".into()],
            systemd_resolved_active: false,
            init_system_error: None,
        };
        let mut token = || BootstrapTokenString::generate(|| 7);
        let mut inputs = DynamicInputs {
            host: &host,
            new_token: &mut token,
            fetch_version: &kubeadm_api::version::offline,
        };
        let cfg = kubeadm_api::internal::defaulted_init_config(
            InitConfiguration::default(),
            ClusterConfiguration {
                kubernetes_version: "v1.25.16".into(),
                ..Default::default()
            },
            &mut inputs,
        )
        .expect("config");
        let rsa = rcgen::KeyPair::generate_rsa_for(&rcgen::PKCS_RSA_SHA256, rcgen::RsaKeySize::_2048)
            .expect("rsa")
            .serialize_der();
        InitData {
            cfg,
            dry_run: false,
            ignore_preflight_errors: Default::default(),
            upload_certs: false,
            skip_token_print: false,
            skip_certificate_key_print: false,
            manifest_dir: PathBuf::from("/etc/kubernetes/manifests"),
            kubelet_dir: PathBuf::from("/var/lib/kubelet"),
            hostname: "node".into(),
            runtime: Box::new(
                kubeadm_host::cri::CriClient::new("unix:///nonexistent/cri.sock").expect("endpoint"),
            ),
            kubeconfig_dir: PathBuf::from("/etc/kubernetes"),
            patches: None,
            manifest_facts: Default::default(),
            keys: Default::default(),
            now: 1_800_000_000,
            planned: Default::default(),
            external_ca: false,
            period_checked: Default::default(),
            cluster: Default::default(),
            effects: kubeadm_effects::Effects {
                fs: Arc::new(DryRunFs::new(Empty)),
                init_system: Arc::new(kubeadm_effects::init_system::DryRunInitSystem::new(
                    kubeadm_host::init_system::HostInitSystem::detect(),
                )),
                host_probe: Arc::new(kubeadm_testkit::fakes::FakeHost::default()),
                cri: Arc::new(|endpoint| panic!("the certs phases opened a runtime at {endpoint}")),
                etcd: Arc::new(|_, _| Err("no etcd in this test".into())),
                keygen: Arc::new(RecordingKeyGen { rsa, batches }),
                clock: Arc::new(|| 1_800_000_000),
                random: || 42,
                reporter: Arc::new(Lines(out)),
            },
        }
    }

    fn plan(data: &mut InitData, filter: &[String]) {
        data.planned = crate::init::workflow()
            .plan(filter, &[])
            .expect("plan")
            .into_iter()
            .filter_map(|(s, on)| on.then_some(s))
            .collect();
    }

    /// `certs` + `kubeconfig`: one batch of 15 keys (10 certificates, sa, 4 kubeconfigs) at the
    /// `certs` parent, none afterwards; a second run reuses everything and generates nothing.
    #[test]
    fn the_certs_parent_generates_every_key_in_one_batch() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let out = Arc::new(Mutex::new(String::new()));
        let mut d = data(batches.clone(), out.clone());
        let filter = vec!["certs".to_string(), "kubeconfig".to_string()];
        plan(&mut d, &filter);
        crate::init::workflow()
            .run(&mut d, &filter, &[])
            .expect("first run");
        assert_eq!(*batches.lock().expect("lock"), vec![15]);
        let text = out.lock().expect("lock").clone();
        assert_eq!(text.matches("[certs] Generating").count(), 11, "{text}");
        assert_eq!(text.matches("[kubeconfig] Writing").count(), 4, "{text}");

        out.lock().expect("lock").clear();
        d.keys = Default::default();
        crate::init::workflow()
            .run(&mut d, &filter, &[])
            .expect("second run");
        assert_eq!(
            *batches.lock().expect("lock"),
            vec![15],
            "nothing generated on reuse"
        );
        let text = out.lock().expect("lock").clone();
        assert!(!text.contains("Generating"), "{text}");
        assert_eq!(text.matches("[kubeconfig] Using existing").count(), 4, "{text}");
    }

    /// With the keys prefetched before the run (as `init` does before its preflight checks), the
    /// parents generate nothing more; the files and output are those of a run without prefetch.
    #[test]
    fn prefetched_keys_are_used_and_no_more_are_made() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let out = Arc::new(Mutex::new(String::new()));
        let mut d = data(batches.clone(), out.clone());
        let filter = vec!["certs".to_string(), "kubeconfig".to_string()];
        plan(&mut d, &filter);
        crate::certs::prefetch_keys(&mut d);
        let rsa = d
            .keys
            .available(kubeadm_core::pki::KeyAlgorithm::Rsa2048)
            .expect("prefetch");
        assert_eq!(rsa, 15, "every key made before the run");
        assert_eq!(*batches.lock().expect("lock"), vec![15]);
        crate::init::workflow().run(&mut d, &filter, &[]).expect("run");
        assert_eq!(
            *batches.lock().expect("lock"),
            vec![15],
            "the prefetched batch only"
        );
        assert_eq!(
            d.keys
                .available(kubeadm_core::pki::KeyAlgorithm::Rsa2048)
                .expect("pool"),
            0,
            "all used"
        );
        let text = out.lock().expect("lock").clone();
        assert_eq!(text.matches("[certs] Generating").count(), 11, "{text}");
        assert_eq!(text.matches("[kubeconfig] Writing").count(), 4, "{text}");

        // A prefetch for a single sub-phase makes its one key; the run then makes none.
        let batches = Arc::new(Mutex::new(Vec::new()));
        let mut d = data(batches.clone(), Arc::new(Mutex::new(String::new())));
        let filter = vec!["certs/ca".to_string()];
        plan(&mut d, &filter);
        crate::certs::prefetch_keys(&mut d);
        crate::init::workflow().run(&mut d, &filter, &[]).expect("run");
        assert_eq!(*batches.lock().expect("lock"), vec![1]);
    }

    /// A single sub-phase generates its key on demand.
    #[test]
    fn a_single_phase_generates_on_demand() {
        let batches = Arc::new(Mutex::new(Vec::new()));
        let out = Arc::new(Mutex::new(String::new()));
        let mut d = data(batches.clone(), out.clone());
        let filter = vec!["certs/ca".to_string()];
        plan(&mut d, &filter);
        crate::init::workflow().run(&mut d, &filter, &[]).expect("run");
        assert_eq!(*batches.lock().expect("lock"), vec![1]);
        assert_eq!(
            *out.lock().expect("lock"),
            "[certs] Generating \"ca\" certificate and key\n"
        );
    }
}
