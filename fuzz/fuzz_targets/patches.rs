//! `--patches`: a patch file (name and content: target, strategic/merge/json type, YAML or JSON,
//! several documents) read as a patch directory is read, then applied to every target's document.
//! Input: file name NUL file content NUL the document to patch (YAML or JSON; a pod by default).
#![no_main]

use kubeadm_core::patches::{KNOWN_TARGETS, PatchFile, PatchManager};
use libfuzzer_sys::fuzz_target;
use serde_json::json;

fuzz_target!(|data: &[u8]| {
    let [name, content, doc] = kubeadm_fuzz::parts(data, 3)[..] else {
        unreachable!()
    };
    let files = [PatchFile {
        path: kubeadm_fuzz::text(name),
        content: content.to_vec(),
    }];
    let Ok(manager) = PatchManager::from_files("/fuzz/patches", &files) else {
        return;
    };
    let doc = kubeadm_fuzz::document(doc).unwrap_or_else(|| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "etcd"},
               "spec": {"containers": [{"name": "etcd", "image": "registry.k8s.io/etcd:3.5.9-0"}]}})
    });
    for target in KNOWN_TARGETS {
        if let Ok(patched) = manager.apply(target, &doc) {
            let written = kubeadm_yaml::to_string(&patched.value);
            assert!(kubeadm_yaml::parse_documents(&written).is_ok(), "{written}");
        }
    }
    let _ = manager.patch_kubelet_config(&doc);
});
