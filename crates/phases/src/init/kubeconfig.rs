//! The `kubeconfig` phase of `kubeadm init` and its sub-phases (upstream's
//! `cmd/phases/init/kubeconfig.go`): each bound to the file it writes in [`crate::kubeconfig`], which
//! `join --control-plane`'s `control-plane-prepare kubeconfig` shares.

use crate::InitData;
use crate::kubeconfig;

/// Every selector the kubeconfig phases bind, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![
        ("kubeconfig", kubeconfig::run_parent),
        ("kubeconfig/admin", kubeconfig::run_admin),
        ("kubeconfig/kubelet", kubeconfig::run_kubelet),
        (
            "kubeconfig/controller-manager",
            kubeconfig::run_controller_manager,
        ),
        ("kubeconfig/scheduler", kubeconfig::run_scheduler),
    ]
}
