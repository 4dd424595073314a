//! `--patches` compared with upstream kubeadm v1.25.16: each patch set is written to `/patches` in
//! a temporary root; upstream's `init phase control-plane all`, `init phase etcd local` and
//! `init phase kubelet-start` write the patched files; ours reads the same listing and patches the
//! same unpatched objects. Files, `[patches]` messages and errors are compared.
// The no-I/O rule (clippy.toml) is the library's: tests read fixtures and run upstream.
#![allow(clippy::disallowed_methods)]

mod manifests_support;

use kubeadm_core::kubelet;
use kubeadm_core::manifests::{self, ManifestHostFacts};
use kubeadm_core::patches::{PatchFile, PatchManager};
use manifests_support::{Root, assert_same, load, require_root};
use serde_json::{Value, json};

fn config() -> Vec<Value> {
    vec![
        json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "InitConfiguration",
            "localAPIEndpoint": { "advertiseAddress": "10.0.0.5" },
            "nodeRegistration": { "name": "node-a" },
            "patches": { "directory": "/patches" },
        }),
        json!({
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "ClusterConfiguration",
            "kubernetesVersion": "v1.25.16",
        }),
    ]
}

/// Every regular file under `dir`, with `/`-separated relative paths.
fn list(dir: &std::path::Path) -> Vec<PatchFile> {
    fn walk(base: &std::path::Path, dir: &std::path::Path, out: &mut Vec<PatchFile>) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let rel = p
                    .strip_prefix(base)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                out.push(PatchFile {
                    path: rel,
                    content: std::fs::read(&p).expect("read"),
                });
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out
}

/// Our outputs for a patch directory: file path → content, and the `[patches]` lines in the order
/// upstream prints them for the three runs.
struct Ours {
    files: Vec<(String, String)>,
    messages: Vec<String>,
}

fn ours(root: &Root, docs: &[Value]) -> Result<Ours, String> {
    let loaded = load(docs);
    let pm = PatchManager::from_files("/patches", &list(&root.path().join("patches")))
        .map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    let mut messages = Vec::new();
    let host = ManifestHostFacts::default();
    let endpoint = &loaded.init.local_api_endpoint;
    // Run 1: control-plane all (one process: the directory is read once).
    messages.extend(pm.messages().iter().cloned());
    for pod in manifests::control_plane_pods(&loaded.cluster, endpoint, &loaded.resolved, &host) {
        let (pod, m) = pm.patch_static_pod(&pod).map_err(|e| e.to_string())?;
        messages.extend(m);
        files.push((
            format!("etc/kubernetes/manifests/{}.yaml", pod.name),
            pod.to_yaml(),
        ));
    }
    // Run 2: etcd local.
    messages.extend(pm.messages().iter().cloned());
    let pod = manifests::etcd_pod(&loaded.cluster, endpoint, "node-a", &[], &loaded.resolved)
        .map_err(|e| e.to_string())?;
    let (pod, m) = pm.patch_static_pod(&pod).map_err(|e| e.to_string())?;
    messages.extend(m);
    files.push(("etc/kubernetes/manifests/etcd.yaml".into(), pod.to_yaml()));
    // Run 3: kubelet-start.
    messages.extend(pm.messages().iter().cloned());
    let (yaml, m) = pm
        .patch_kubelet_config(&kubelet::config_value(&loaded.kubelet))
        .map_err(|e| e.to_string())?;
    messages.extend(m);
    files.push(("var/lib/kubelet/config.yaml".into(), yaml));
    Ok(Ours { files, messages })
}

/// Runs the three upstream phases; on failure returns the failing run's stderr.
fn upstream(root: &Root) -> Result<Vec<String>, String> {
    let mut messages = Vec::new();
    for args in [
        &["init", "phase", "control-plane", "all"][..],
        &["init", "phase", "etcd", "local"][..],
        &["init", "phase", "kubelet-start"][..],
    ] {
        let mut full = args.to_vec();
        full.extend(["--config", "/cfg.yaml"]);
        let run = root.upstream(&full, &[]);
        if run.code != 0 {
            return Err(run.stderr);
        }
        messages.extend(
            run.stdout
                .lines()
                .filter(|l| l.starts_with("[patches]"))
                .map(str::to_string),
        );
    }
    Ok(messages)
}

type Files = &'static [(&'static str, &'static str)];

fn good_cases() -> Vec<(&'static str, Files)> {
    vec![
        (
            "apiserver strategic: env, resources, annotation, volume and mount",
            &[(
                "kube-apiserver.yaml",
                "metadata:\n  annotations:\n    example.test/owner: team-a\nspec:\n  containers:\n  - name: kube-apiserver\n    env:\n    - name: GOMAXPROCS\n      value: \"2\"\n    resources:\n      limits:\n        memory: 2Gi\n    volumeMounts:\n    - name: audit\n      mountPath: /var/log/audit\n  volumes:\n  - name: audit\n    hostPath:\n      path: /var/log/audit\n      type: DirectoryOrCreate\n",
            )],
        ),
        (
            "controller-manager merge patch",
            &[(
                "kube-controller-manager+merge.yaml",
                "metadata:\n  labels:\n    tier: null\n    example.test/team: b\nspec:\n  dnsPolicy: ClusterFirstWithHostNet\n  priorityClassName: system-cluster-critical\n",
            )],
        ),
        (
            "scheduler json patch",
            &[(
                "kube-scheduler+json.json",
                r#"[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--v=4"},
                    {"op": "replace", "path": "/spec/containers/0/image", "value": "registry.example.test/kube-scheduler:v1.25.16-custom"},
                    {"op": "remove", "path": "/spec/containers/0/startupProbe"},
                    {"op": "add", "path": "/metadata/labels/extra", "value": "yes"}]"#,
            )],
        ),
        (
            "etcd strategic: command replaced, resources merged",
            &[(
                "etcd.json",
                r#"{"spec": {"containers": [{"name": "etcd", "command": ["etcd", "--name=custom"], "resources": {"requests": {"memory": "512Mi"}}}]}}"#,
            )],
        ),
        (
            "kubeletconfiguration, three patch types",
            &[
                (
                    "kubeletconfiguration0.yaml",
                    "maxPods: 300\nfeatureGates:\n  NodeSwap: true\nclusterDNS:\n- 10.96.0.53\n",
                ),
                (
                    "kubeletconfiguration1+merge.yaml",
                    "featureGates:\n  CSIMigration: false\nrotateCertificates: null\n",
                ),
                (
                    "kubeletconfiguration2+json.yaml",
                    "- op: replace\n  path: /cgroupDriver\n  value: cgroupfs\n- op: add\n  path: /clusterDNS/-\n  value: 10.96.0.54\n",
                ),
            ],
        ),
        (
            "suffix ordering across types",
            &[
                (
                    "kube-apiserver1+merge.yaml",
                    "metadata:\n  labels:\n    order: merge-second\n",
                ),
                (
                    "kube-apiserver0+json.yaml",
                    "- op: add\n  path: /metadata/labels/order\n  value: json-first\n",
                ),
                (
                    "kube-apiserver2.yaml",
                    "metadata:\n  labels:\n    order: strategic-third\n    kept: \"true\"\n",
                ),
            ],
        ),
        (
            "multi-document file, subdirectory and ignored files",
            &[
                (
                    "kube-scheduler.yaml",
                    "---\nmetadata:\n  labels:\n    doc: one\n---\nmetadata:\n  labels:\n    doc: two\n    second: \"yes\"\n---\n",
                ),
                (
                    "sub/kube-scheduler-z+json.yaml",
                    "- op: add\n  path: /metadata/labels/from-subdir\n  value: \"true\"\n",
                ),
                ("README.md", "not a patch\n"),
                ("unknown.yaml", "a: b\n"),
                ("kubeletconfiguration.yml", "maxPods: 1\n"),
                ("etcd-empty.yaml", ""),
            ],
        ),
        (
            "strategic delete directives",
            &[(
                "kube-apiserver.yaml",
                "spec:\n  volumes:\n  - name: ca-certs\n    $patch: delete\n  containers:\n  - name: kube-apiserver\n    volumeMounts:\n    - mountPath: /etc/ssl/certs\n      $patch: delete\n",
            )],
        ),
        (
            "strategic replace directive on a list and a map",
            &[(
                "kube-controller-manager.yaml",
                "spec:\n  volumes:\n  - name: only\n    hostPath:\n      path: /only\n  - $patch: replace\n  securityContext:\n    $patch: replace\n    runAsNonRoot: true\n  containers:\n  - name: kube-controller-manager\n    volumeMounts:\n    - $patch: replace\n    - name: only\n      mountPath: /only\n",
            )],
        ),
        (
            "new container, tolerations and node selector",
            &[(
                "etcd.yaml",
                "spec:\n  containers:\n  - name: sidecar\n    image: busybox:1.36\n    command: [\"sleep\", \"infinity\"]\n  tolerations:\n  - operator: Exists\n  nodeSelector:\n    kubernetes.io/os: linux\n",
            )],
        ),
        (
            "strategic directives: setElementOrder, retainKeys, primitive list merge and delete",
            &[(
                "kube-apiserver.yaml",
                concat!(
                    "spec:\n  $setElementOrder/volumes:\n  - name: k8s-certs\n  - name: ca-certs\n",
                    "  volumes:\n  - name: k8s-certs\n    $retainKeys: [name, emptyDir]\n    emptyDir: {}\n",
                    "---\nmetadata:\n  finalizers: [a, b, c]\n",
                    "---\nmetadata:\n  finalizers: [c, d, a]\n",
                    "---\nmetadata:\n  $deleteFromPrimitiveList/finalizers: [b]\n",
                ),
            )],
        ),
        (
            "list order across successive strategic patches",
            &[(
                "kube-controller-manager.yaml",
                concat!(
                    "spec:\n  containers:\n  - name: kube-controller-manager\n    env:\n    - name: A\n      value: \"1\"\n    - name: B\n      value: \"2\"\n",
                    "---\nspec:\n  containers:\n  - name: kube-controller-manager\n    env:\n    - name: C\n      value: \"3\"\n    - name: A\n      value: \"10\"\n",
                    "    volumeMounts:\n    - mountPath: /new\n      name: new\n    - mountPath: /etc/kubernetes/pki\n      name: k8s-certs\n  volumes:\n  - name: new\n    hostPath:\n      path: /new\n",
                ),
            )],
        ),
        (
            "json patch copy, move and test",
            &[(
                "etcd+json.yaml",
                concat!(
                    "- op: test\n  path: /metadata/name\n  value: etcd\n",
                    "- op: copy\n  from: /spec/containers/0/livenessProbe\n  path: /spec/containers/0/readinessProbe\n",
                    "- op: move\n  from: /metadata/annotations\n  path: /metadata/labels/moved\n",
                    "- op: replace\n  path: /metadata/labels/moved\n  value: \"yes\"\n",
                    "- op: add\n  path: /spec/containers/0/command/1\n  value: --inserted=true\n",
                ),
            )],
        ),
        (
            "read back through v1.Pod: unknown fields, empty values, quantities",
            &[(
                "kube-scheduler.yaml",
                "spec:\n  hostNetwork: false\n  bogus: 1\n  containers:\n  - name: kube-scheduler\n    notAField: x\n    imagePullPolicy: \"\"\n    resources:\n      requests:\n        cpu: \"0.5\"\n        memory: 1024Mi\n      limits:\n        cpu: 2000m\n    volumeMounts:\n    - mountPath: /etc/kubernetes/scheduler.conf\n      readOnly: false\n",
            )],
        ),
    ]
}

#[test]
fn patches_match_upstream() {
    require_root();
    let docs = config();
    for (name, files) in good_cases() {
        let root = Root::new(&docs);
        root.mkdir("patches");
        for (path, content) in files {
            root.write(&format!("patches/{path}"), content);
        }
        let upstream_messages = upstream(&root).unwrap_or_else(|e| panic!("{name}: upstream failed: {e}"));
        let ours = ours(&root, &docs).unwrap_or_else(|e| panic!("{name}: ours failed: {e}"));
        for (file, content) in &ours.files {
            assert_same(name, file, &root.read(file), content);
        }
        assert_eq!(upstream_messages, ours.messages, "{name}: [patches] messages");
    }
}

/// Bad patches: both fail; where the text is ours to match exactly (everything but YAML parser
/// messages), upstream's error contains ours.
#[test]
fn bad_patches_fail_like_upstream() {
    require_root();
    let docs = config();
    let cases: Vec<(&str, Files, bool)> = vec![
        (
            "unknown patch type",
            &[("kube-apiserver+bogus.yaml", "a: b\n")],
            true,
        ),
        ("missing patch type", &[("etcd+.yaml", "a: b\n")], true),
        (
            "json patch path missing",
            &[(
                "kube-apiserver+json.yaml",
                "- op: add\n  path: /spec/nothere/x\n  value: 1\n",
            )],
            true,
        ),
        (
            "json patch remove missing key",
            &[(
                "kube-scheduler+json.yaml",
                "- op: remove\n  path: /metadata/annotations\n",
            )],
            true,
        ),
        (
            "json patch test fails",
            &[(
                "kube-scheduler+json.yaml",
                "- op: test\n  path: /metadata/name\n  value: other\n",
            )],
            true,
        ),
        (
            "json patch not a list",
            &[("kube-scheduler+json.yaml", "op: add\n")],
            true,
        ),
        (
            "strategic without merge key",
            &[(
                "kube-controller-manager.yaml",
                "spec:\n  containers:\n  - image: x\n",
            )],
            true,
        ),
        (
            "strategic unknown directive",
            &[("kube-controller-manager.yaml", "spec:\n  $patch: frob\n")],
            true,
        ),
        (
            "merge patch scalar",
            &[("kube-apiserver+merge.yaml", "5\n")],
            true,
        ),
        (
            "invalid yaml",
            &[("kube-apiserver.yaml", "spec: [unclosed\n")],
            false,
        ),
    ];
    for (name, files, exact) in cases {
        let root = Root::new(&docs);
        root.mkdir("patches");
        for (path, content) in files {
            root.write(&format!("patches/{path}"), content);
        }
        let up = upstream(&root).expect_err(&format!("{name}: upstream should fail"));
        let ours = ours(&root, &docs)
            .err()
            .unwrap_or_else(|| panic!("{name}: ours should fail"));
        if exact {
            assert!(
                up.contains(&ours),
                "{name}: upstream error\n{up}\ndoes not contain ours\n{ours}"
            );
        }
    }
}
