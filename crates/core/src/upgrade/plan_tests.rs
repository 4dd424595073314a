//! The cases of upstream's `TestGetAvailableUpgrades` and `TestKubeletUpgrade`
//! (`phases/upgrade/compute_test.go`, v1.25.16) as data, plus the offline behaviour observed from
//! the upstream binary on a machine without internet.

use super::*;

/// Upstream's `fakeVersionGetter`: fixed versions, one kubelet.
#[derive(Default)]
struct Fake {
    cluster: &'static str,
    kubeadm: &'static str,
    stable: &'static str,
    latest: &'static str,
    latest_dev_branch: &'static str,
    stable_patch: &'static str,
    kubelet: &'static str,
    labels_asked: Vec<String>,
}

impl VersionGetter for Fake {
    type Error = std::convert::Infallible;
    fn cluster_version(&mut self) -> Result<String, Self::Error> {
        Ok(self.cluster.into())
    }
    fn kubeadm_version(&mut self) -> String {
        self.kubeadm.into()
    }
    fn version_from_label(&mut self, label: &str, _: &str) -> Result<(String, Vec<String>), Self::Error> {
        self.labels_asked.push(label.to_string());
        let v = match label {
            "stable" => self.stable,
            "latest" => self.latest,
            l if !self.latest_dev_branch.is_empty() && l.starts_with("latest-") => self.latest_dev_branch,
            _ => self.stable_patch,
        };
        Ok((v.into(), Vec::new()))
    }
    fn kubelet_versions(&mut self) -> Result<BTreeMap<String, u16>, Self::Error> {
        Ok(BTreeMap::from([(self.kubelet.to_string(), 1)]))
    }
    fn etcd_version(&mut self) -> Result<String, Self::Error> {
        Ok(CURRENT_ETCD.into())
    }
    fn dns_version(&mut self) -> Result<String, Self::Error> {
        Ok(CURRENT_DNS.into())
    }
}

/// upstream's `fakeCurrentEtcdVersion` and `fakeCurrentCoreDNSVersion`.
const CURRENT_ETCD: &str = "3.1.12";
const CURRENT_DNS: &str = "1.0.6";

struct Case {
    name: &'static str,
    getter: Fake,
    target: Option<&'static str>,
    experimental: bool,
    rcs: bool,
    external_etcd: bool,
    /// description, after.kube_version, after.kubeadm_version, after.etcd_version
    expected: &'static [(&'static str, &'static str, &'static str, &'static str)],
}

fn fake(
    cluster: &'static str,
    kubelet: &'static str,
    kubeadm: &'static str,
    stable_patch: &'static str,
    stable: &'static str,
) -> Fake {
    Fake {
        cluster,
        kubelet,
        kubeadm,
        stable_patch,
        stable,
        ..Fake::default()
    }
}

fn cases() -> Vec<Case> {
    let case = |name, getter, expected| Case {
        name,
        getter,
        target: None,
        experimental: false,
        rcs: false,
        external_etcd: false,
        expected,
    };
    vec![
        case(
            "no action needed, already up-to-date",
            fake("v1.15.0", "v1.15.0", "v1.15.0", "v1.15.0", "v1.15.0"),
            &[],
        ),
        case(
            "simple patch version upgrade",
            fake("v1.15.1", "v1.15.1", "v1.15.2", "v1.15.3", "v1.15.3"),
            &[("version in the v1.15 series", "v1.15.3", "v1.15.3", "3.3.10")],
        ),
        Case {
            external_etcd: true,
            ..case(
                "simple patch version upgrade with external etcd",
                fake("v1.15.1", "v1.15.1", "v1.15.2", "v1.15.3", "v1.15.3"),
                &[("version in the v1.15 series", "v1.15.3", "v1.15.3", "")],
            )
        },
        Case {
            target: None,
            ..case(
                "no version provided to offline version getter does not change behavior",
                fake("v1.15.1", "v1.15.1", "v1.15.2", "v1.15.3", "v1.15.3"),
                &[("version in the v1.15 series", "v1.15.3", "v1.15.3", "3.3.10")],
            )
        },
        case(
            "minor version upgrade only",
            fake("v1.15.1", "v1.15.1", "v1.16.0", "v1.15.1", "v1.16.0"),
            &[("stable version", "v1.16.0", "v1.16.0", "3.3.17-0")],
        ),
        case(
            "both minor version upgrade and patch version upgrade available",
            fake("v1.15.3", "v1.15.3", "v1.15.5", "v1.15.5", "v1.16.1"),
            &[
                ("version in the v1.15 series", "v1.15.5", "v1.15.5", "3.3.10"),
                ("stable version", "v1.16.1", "v1.16.1", "3.3.17-0"),
            ],
        ),
        Case {
            experimental: true,
            ..case(
                "allow experimental upgrades, but no upgrade available",
                Fake {
                    latest: "v1.16.0-alpha.2",
                    ..fake("v1.16.0-alpha.2", "v1.15.5", "v1.15.5", "v1.15.5", "v1.15.5")
                },
                &[],
            )
        },
        Case {
            experimental: true,
            ..case(
                "upgrade to an unstable version should be supported",
                Fake {
                    latest: "v1.16.0-alpha.2",
                    ..fake("v1.15.5", "v1.15.5", "v1.15.5", "v1.15.5", "v1.15.5")
                },
                &[(
                    "experimental version",
                    "v1.16.0-alpha.2",
                    "v1.16.0-alpha.2",
                    "3.3.17-0",
                )],
            )
        },
        Case {
            experimental: true,
            ..case(
                "upgrade from an unstable version to an unstable version should be supported",
                Fake {
                    latest: "v1.16.0-alpha.2",
                    ..fake("v1.16.0-alpha.1", "v1.15.5", "v1.15.5", "v1.15.5", "v1.15.5")
                },
                &[(
                    "experimental version",
                    "v1.16.0-alpha.2",
                    "v1.16.0-alpha.2",
                    "3.3.17-0",
                )],
            )
        },
        Case {
            experimental: true,
            ..case(
                "v1.X.0-alpha.0 should be ignored",
                Fake {
                    latest_dev_branch: "v1.16.0-beta.1",
                    latest: "v1.15.0-alpha.0",
                    ..fake("v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5")
                },
                &[(
                    "experimental version",
                    "v1.16.0-beta.1",
                    "v1.16.0-beta.1",
                    "3.3.17-0",
                )],
            )
        },
        Case {
            rcs: true,
            ..case(
                "upgrade to an RC version should be supported",
                Fake {
                    latest_dev_branch: "v1.16.0-rc.1",
                    latest: "v1.15.0-alpha.1",
                    ..fake("v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5")
                },
                &[(
                    "release candidate version",
                    "v1.16.0-rc.1",
                    "v1.16.0-rc.1",
                    "3.3.17-0",
                )],
            )
        },
        Case {
            experimental: true,
            ..case(
                "the latest version from the previous branch is an rc and the current latest is alpha.0: show the RC",
                Fake {
                    latest_dev_branch: "v1.16.0-rc.1",
                    latest: "v1.15.0-alpha.0",
                    ..fake("v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5")
                },
                &[("experimental version", "v1.16.0-rc.1", "v1.16.0-rc.1", "3.3.17-0")],
            )
        },
        Case {
            experimental: true,
            rcs: true,
            ..case(
                "upgrade to an RC version should be supported. There may also be an even newer unstable version.",
                Fake {
                    latest_dev_branch: "v1.16.0-rc.1",
                    latest: "v1.15.0-alpha.1",
                    ..fake("v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5", "v1.14.5")
                },
                &[
                    (
                        "release candidate version",
                        "v1.16.0-rc.1",
                        "v1.16.0-rc.1",
                        "3.3.17-0",
                    ),
                    (
                        "experimental version",
                        "v1.15.0-alpha.1",
                        "v1.15.0-alpha.1",
                        "3.3.10",
                    ),
                ],
            )
        },
        Case {
            target: Some("v1.16.1"),
            ..case(
                "offline version getter",
                Fake {
                    cluster: "v1.15.1",
                    kubelet: "v1.15.0",
                    kubeadm: "v1.15.1",
                    ..Fake::default()
                },
                &[("version in the v1.15 series", "v1.16.1", "v1.16.1", "3.3.17-0")],
            )
        },
    ]
}

#[test]
fn available_upgrades_match_upstreams_table() {
    for mut c in cases() {
        let options = PlanOptions {
            experimental: c.experimental,
            release_candidates: c.rcs,
            external_etcd: c.external_etcd,
        };
        let mut messages = Vec::new();
        let got = available_upgrades(&mut c.getter, c.target, options, &mut |m| messages.push(m))
            .unwrap_or_else(|e| panic!("{}: {e}", c.name));
        let before = ClusterState {
            kube_version: c.getter.cluster.into(),
            dns_version: CURRENT_DNS.into(),
            kubeadm_version: c.getter.kubeadm.into(),
            kubelet_versions: BTreeMap::from([(c.getter.kubelet.to_string(), 1)]),
            etcd_version: if c.external_etcd { "" } else { CURRENT_ETCD }.into(),
        };
        let expected: Vec<Upgrade> = c
            .expected
            .iter()
            .map(|(description, kube, kubeadm, etcd)| Upgrade {
                description: description.to_string(),
                before: before.clone(),
                after: ClusterState {
                    kube_version: kube.to_string(),
                    dns_version: "v1.9.3".into(),
                    kubeadm_version: kubeadm.to_string(),
                    kubelet_versions: BTreeMap::new(),
                    etcd_version: etcd.to_string(),
                },
            })
            .collect();
        assert_eq!(got, expected, "{}", c.name);
        // With a target version, no label is ever resolved (upstream's OfflineVersionGetter).
        if c.target.is_some() {
            assert!(c.getter.labels_asked.is_empty(), "{}", c.name);
        }
    }
}

#[test]
fn kubelet_upgrade_matches_upstreams_table() {
    // TestKubeletUpgrade.
    type KubeletCase = (&'static [(&'static str, u16)], &'static str, bool);
    let cases: &[KubeletCase] = &[
        (&[("v1.10.1", 1)], "v1.10.3", true),
        (&[("v1.10.1", 1), ("v1.10.3", 100)], "v1.10.3", true),
        (&[("v1.10.3", 1)], "v1.10.3", false),
        (&[("v1.10.3", 2)], "v1.10.3", false),
        (&[], "v1.10.3", false),
    ];
    for (before, after, expected) in cases {
        let up = Upgrade {
            description: String::new(),
            before: ClusterState {
                kubelet_versions: before.iter().map(|(v, n)| (v.to_string(), *n)).collect(),
                ..ClusterState::default()
            },
            after: ClusterState {
                kube_version: after.to_string(),
                ..ClusterState::default()
            },
        };
        assert_eq!(up.can_upgrade_kubelets(), *expected, "{before:?} -> {after}");
    }
}

#[test]
fn offline_labels_and_bad_targets_print_what_upstream_printed() {
    // Seen from upstream v1.25.16 without internet: `upgrade plan` falls back to its own version
    // for `stable` and `stable-1.25`, and offers nothing on a v1.25.16 cluster.
    let mut g = fake("v1.25.16", "v1.25.16", "v1.25.16", "v1.25.16", "v1.25.16");
    let mut messages = Vec::new();
    let got =
        available_upgrades(&mut g, None, PlanOptions::default(), &mut |m| messages.push(m)).expect("plan");
    assert!(got.is_empty());
    assert_eq!(g.labels_asked, ["stable", "stable-1.25"]);
    let printed: String = messages
        .iter()
        .filter_map(|m| match m {
            Message::Print(s) => Some(s.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        printed,
        "[upgrade] Fetching available versions to upgrade to\n\
         [upgrade/versions] Cluster version: v1.25.16\n\
         [upgrade/versions] kubeadm version: v1.25.16\n\
         [upgrade/versions] Target version: v1.25.16\n\
         [upgrade/versions] Latest version in the v1.25 series: v1.25.16\n\n"
    );

    // `upgrade plan foo`: warnings, no plan, success.
    let mut messages = Vec::new();
    let got = available_upgrades(&mut g, Some("foo"), PlanOptions::default(), &mut |m| {
        messages.push(m)
    })
    .expect("plan");
    assert!(got.is_empty());
    let warnings: Vec<&Message> = messages
        .iter()
        .filter(|m| matches!(m, Message::Warning(_)))
        .collect();
    assert_eq!(
        warnings,
        [
            &Message::Warning(
                r#"[upgrade/versions] WARNING: Couldn't parse version stable version: could not parse "foo" as version"#.into()
            ),
            &Message::Warning(
                "[upgrade/versions] WARNING: Falling back to current kubeadm version as latest stable version".into()
            ),
            &Message::Warning(
                r#"[upgrade/versions] WARNING: Couldn't parse version version in the v1.25 series: could not parse "foo" as version"#.into()
            ),
        ]
    );
}

#[test]
fn component_plan_rows_and_flags() {
    // As upstream printed `upgrade plan v1.26.0-rc.1` on a v1.25.16 cluster with a v1.24.9 kubelet.
    let up = Upgrade {
        description: "version in the v1.25 series".into(),
        before: ClusterState {
            kube_version: "v1.25.16".into(),
            dns_version: "v1.9.3".into(),
            kubeadm_version: "v1.25.16".into(),
            kubelet_versions: BTreeMap::from([("v1.24.9".to_string(), 1)]),
            etcd_version: "3.5.9-0".into(),
        },
        after: ClusterState {
            kube_version: "v1.26.0-rc.1".into(),
            dns_version: "v1.9.3".into(),
            kubeadm_version: "v1.26.0-rc.1".into(),
            kubelet_versions: BTreeMap::new(),
            etcd_version: "3.5.9-0".into(),
        },
    };
    let (rows, flag) = component_plan(&up, false).expect("plan");
    assert_eq!(flag, " --allow-release-candidate-upgrades");
    let table: Vec<String> = rows
        .iter()
        .map(|r| format!("{}|{}|{}", r.name, r.current_version, r.new_version))
        .collect();
    assert_eq!(
        table,
        [
            "kubelet|1 x v1.24.9|v1.26.0-rc.1",
            "kube-apiserver|v1.25.16|v1.26.0-rc.1",
            "kube-controller-manager|v1.25.16|v1.26.0-rc.1",
            "kube-scheduler|v1.25.16|v1.26.0-rc.1",
            "kube-proxy|v1.25.16|v1.26.0-rc.1",
            "CoreDNS|v1.9.3|v1.9.3",
            "etcd|3.5.9-0|3.5.9-0",
        ]
    );
    let (rows, flag) = component_plan(&up, true).expect("plan");
    assert!(rows.iter().all(|r| r.name != "etcd"));
    assert_eq!(flag, " --allow-release-candidate-upgrades");
    let beta = Upgrade {
        after: ClusterState {
            kube_version: "v1.26.0-beta.0".into(),
            ..up.after.clone()
        },
        ..up.clone()
    };
    assert_eq!(
        component_plan(&beta, false).expect("plan").1,
        " --allow-experimental-upgrades"
    );
}
