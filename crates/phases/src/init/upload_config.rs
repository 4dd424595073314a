//! The `upload-config` phase of `kubeadm init` (upstream's `cmd/phases/init/uploadconfig.go`),
//! bound to [`crate::upload_config`], which `upgrade apply` shares.

use crate::InitData;
use crate::upload_config;

/// Every selector the upload-config phases bind, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![
        ("upload-config/kubeadm", upload_config::run_kubeadm),
        ("upload-config/kubelet", upload_config::run_kubelet),
    ]
}
