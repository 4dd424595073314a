//! The `addon` phase of `kubeadm init` (upstream's `cmd/phases/init/addons.go`), bound to
//! [`crate::addons`], which `upgrade apply` shares.

use crate::InitData;
use crate::addons;

/// Every selector the addon phases bind, for the workflow.
pub(crate) fn bindings() -> Vec<(&'static str, kubeadm_workflow::RunFn<InitData>)> {
    vec![
        ("addon/coredns", addons::run_coredns),
        ("addon/kube-proxy", addons::run_kube_proxy),
    ]
}
