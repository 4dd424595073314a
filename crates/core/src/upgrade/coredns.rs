//! The CoreDNS preflight checks of `kubeadm upgrade` (upstream's `CoreDNSUnsupportedPlugins` and
//! `CoreDNSMigration`, which ask the `corefile-migration` library whether the deployed CoreDNS
//! version is one it can migrate from). Only the version side is modelled: the library's
//! per-version plugin tables are not, so a Corefile with plugins unknown to the deployed version
//! passes here.

/// The CoreDNS versions `corefile-migration` v1.0.17 (vendored by kubeadm 1.25) knows, oldest
/// first; each migrates to the next.
const KNOWN_VERSIONS: [&str; 36] = [
    "1.1.3", "1.1.4", "1.2.0", "1.2.1", "1.2.2", "1.2.3", "1.2.4", "1.2.5", "1.2.6", "1.3.0", "1.3.1",
    "1.4.0", "1.5.0", "1.5.1", "1.5.2", "1.6.0", "1.6.1", "1.6.2", "1.6.3", "1.6.4", "1.6.5", "1.6.6",
    "1.6.7", "1.6.9", "1.7.0", "1.7.1", "1.8.0", "1.8.3", "1.8.4", "1.8.5", "1.8.6", "1.8.7", "1.9.0",
    "1.9.1", "1.9.2", "1.9.3",
];

/// What the cluster runs: the `coredns` ConfigMap's `Corefile` and the DNS Deployment's image tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreDnsState {
    /// No `coredns` ConfigMap (upstream then checks the empty version, which fails).
    Absent,
    /// The ConfigMap has no `Corefile` key.
    NoCorefile,
    /// The deployed version (image tag) with its Corefile.
    Deployed {
        /// The image tag, e.g. `v1.9.3`.
        version: String,
    },
}

/// The error of each check, `None` when it passes: (`CoreDNSUnsupportedPlugins`, `CoreDNSMigration`).
/// `target` is the CoreDNS version kubeadm installs.
pub fn coredns_checks(state: &CoreDnsState, target: &str) -> (Option<String>, Option<String>) {
    let version = match state {
        CoreDnsState::NoCorefile => {
            let e = "unable to find the CoreDNS Corefile data".to_string();
            return (Some(e.clone()), Some(e));
        }
        CoreDnsState::Absent => "",
        // Upstream's `strings.TrimLeft(v, "v")`.
        CoreDnsState::Deployed { version } => version.trim_start_matches('v'),
    };
    let target = target.trim_start_matches('v');
    let known = |v: &str| KNOWN_VERSIONS.iter().position(|k| *k == v);
    let unsupported = known(version)
        .is_none()
        .then(|| format!("start version '{version}' not supported"));
    let migration = if version == target {
        None
    } else {
        match (known(version), known(target)) {
            (None, _) => Some(format!("start version '{version}' not supported")),
            (Some(from), Some(to)) if from < to => None,
            _ => Some(format!("cannot migrate up to '{target}' from '{version}'")),
        }
        .map(|e| format!("CoreDNS will not be upgraded: {e}"))
    };
    (unsupported, migration)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployed(v: &str) -> CoreDnsState {
        CoreDnsState::Deployed { version: v.into() }
    }

    #[test]
    fn versions_the_migration_library_knows_pass() {
        assert_eq!(coredns_checks(&deployed("v1.9.3"), "v1.9.3"), (None, None));
        assert_eq!(coredns_checks(&deployed("v1.8.6"), "v1.9.3"), (None, None));
    }

    #[test]
    fn unknown_versions_and_missing_config_fail_both_checks() {
        let (u, m) = coredns_checks(&deployed("v1.10.1"), "v1.9.3");
        assert_eq!(u.as_deref(), Some("start version '1.10.1' not supported"));
        assert_eq!(
            m.as_deref(),
            Some("CoreDNS will not be upgraded: start version '1.10.1' not supported")
        );
        let (u, m) = coredns_checks(&CoreDnsState::Absent, "v1.9.3");
        assert_eq!(u.as_deref(), Some("start version '' not supported"));
        assert_eq!(
            m.as_deref(),
            Some("CoreDNS will not be upgraded: start version '' not supported")
        );
        let (u, m) = coredns_checks(&CoreDnsState::NoCorefile, "v1.9.3");
        assert_eq!(u, m);
        assert_eq!(u.as_deref(), Some("unable to find the CoreDNS Corefile data"));
    }
}
