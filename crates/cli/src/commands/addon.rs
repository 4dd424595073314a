//! `kubeadm init phase addon coredns|kube-proxy|all --print-manifest`: the addon objects printed
//! instead of applied, so no cluster is needed (applying them is the `addon` phase in kubeadm-phases).

use kubeadm_core::addons::{self, Addon};
use kubeadm_effects::report::Reporter;

use crate::cobra::execute::Invocation;
use crate::error::{CommandError, Output};
use crate::options::init_options;
use crate::setup::reporter;

/// Whether this phase invocation is an addon phase asked to print its manifests.
pub(crate) fn wants_print(selector: &str, inv: &Invocation<'_>) -> bool {
    matches!(selector, "addon" | "addon/coredns" | "addon/kube-proxy") && inv.flags.bool("print-manifest")
}

/// Prints the manifests of the addons `selector` names, as upstream's addon phases do with
/// `--print-manifest` (after the same option checks as every init phase).
pub(crate) fn print(selector: &str, inv: &Invocation<'_>, out: &mut Output) -> Result<(), CommandError> {
    let rep = reporter(inv);
    let opts = init_options::load(inv, &rep)?;
    let which: &[Addon] = match selector {
        "addon/coredns" => &[Addon::CoreDns],
        "addon/kube-proxy" => &[Addon::KubeProxy],
        _ => &[Addon::CoreDns, Addon::KubeProxy],
    };
    for addon in which {
        let printed = addons::print_manifest(*addon, &opts.cfg)?;
        for w in &printed.warnings {
            rep.warn("addons.rs", w);
        }
        out.push_str(&printed.text);
    }
    Ok(())
}
