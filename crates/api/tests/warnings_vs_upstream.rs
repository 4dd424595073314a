//! What upstream only warns about (unknown fields, repeated keys, ignored or deprecated documents):
//! the file must still load, and every unknown field upstream names must be named by us too, with
//! its line.

use kubeadm_api::dynamic::{DynamicInputs, HostFacts};
use kubeadm_api::internal::load_init_config;
use kubeadm_api::v1beta3::BootstrapTokenString;
use kubeadm_testkit::oracle::{run, upstream_kubeadm};

fn upstream(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, text).expect("write");
    let path = path.to_string_lossy().into_owned();
    let r = run(
        &upstream_kubeadm(),
        &["config", "images", "list", "--config", &path],
        dir.path(),
        &[],
    );
    (r.code, r.stderr)
}

fn ours(text: &str) -> Result<Vec<String>, String> {
    let host = HostFacts {
        hostname: "node-a".into(),
        ..HostFacts::default()
    };
    let mut new_token = || BootstrapTokenString::parse("abcdef.0123456789abcdef").unwrap_or_default();
    let mut inputs = DynamicInputs {
        host: &host,
        new_token: &mut new_token,
        fetch_version: &kubeadm_api::version::offline,
    };
    load_init_config("config.yaml", text, &mut inputs)
        .map(|c| c.warnings)
        .map_err(|e| e.to_string())
}

/// (name, file, what each of upstream's and our warnings must mention)
fn cases() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    vec![
        (
            "unknown fields",
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\nfoo: bar\nnetworking:\n  bogus: 1\n  PodSubnet: 10.0.0.0/16\n",
            vec!["\"foo\"", "\"networking.bogus\"", "\"networking.PodSubnet\""],
        ),
        (
            "repeated key, last wins",
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.23.0\nkubernetesVersion: v1.25.3\n",
            vec!["\"kubernetesVersion\""],
        ),
        (
            "unknown kind and foreign document",
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: Foo\n---\napiVersion: foo/v1\nkind: Bar\n",
            vec!["Kind=Foo", "Kind=Bar"],
        ),
        (
            "join document next to init",
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubeadm.k8s.io/v1beta3\nkind: JoinConfiguration\nbogus: 1\n",
            vec!["Kind=JoinConfiguration", "\"bogus\""],
        ),
        (
            "v1beta2",
            "apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\nuseHyperKubeImage: true\n---\napiVersion: kubeadm.k8s.io/v1beta2\nkind: InitConfiguration\nskipPhases: [preflight]\nlocalAPIEndpoint:\n  advertiseAddress: 10.0.0.5\nnodeRegistration:\n  name: node-a\n  criSocket: unix:///x.sock\n",
            vec!["deprecated API spec", "\"skipPhases\""],
        ),
        (
            "component configs",
            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\n---\napiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: cgroupfs\nnope: 1\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: ipvs\n",
            vec!["\"nope\""],
        ),
    ]
}

#[test]
fn warnings_agree_with_upstream() {
    let mut failures = Vec::new();
    for (name, text, mentions) in cases() {
        let (code, stderr) = upstream(text);
        assert_eq!(code, 0, "{name}: upstream refused it: {stderr}");
        let got = match ours(text) {
            Ok(w) => w,
            Err(e) => {
                failures.push(format!("{name}: we refused it: {e}"));
                continue;
            }
        };
        let ours_all = got.join("\n");
        for m in mentions {
            if !stderr.contains(m) {
                failures.push(format!(
                    "{name}: upstream does not mention {m} (test is stale): {stderr}"
                ));
            }
            if !ours_all.contains(m) {
                failures.push(format!("{name}: we do not mention {m}: {ours_all}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn unknown_fields_point_at_their_line() {
    let text = "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.25.3\nnetworking:\n  bogus: 1\n";
    let warnings = ours(text).expect("loads");
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("config.yaml:5:3: unknown field \"networking.bogus\"")),
        "{warnings:?}"
    );
}
