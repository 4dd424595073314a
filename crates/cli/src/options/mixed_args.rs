//! Upstream's rule on mixing `--config` with other flags (`ValidateMixedArguments`): when
//! `--config` is given, only a few flags may accompany it.

use crate::cobra::flags::FlagSet;

/// Flags allowed together with `--config`, besides every `--skip-*` flag.
const ALLOWED: &[&str] = &[
    "config",
    "ignore-preflight-errors",
    "dry-run",
    "kubeconfig",
    "node-name",
    "kubeconfig-dir",
    "upload-certs",
    "print-join-command",
    "rootfs",
    "v",
    "log-file",
];

/// Flags mixed with `--config` that upstream refuses.
#[derive(Debug, thiserror::Error)]
#[error("can not mix '--config' with arguments [{}]", .0.join(" "))]
pub(crate) struct MixedArguments(pub(crate) Vec<String>);

/// Checks the rule over the flags set on the command line.
pub(crate) fn validate(flags: &FlagSet) -> Result<(), MixedArguments> {
    if !flags.changed("config") {
        return Ok(());
    }
    let mut bad: Vec<String> = flags
        .changed_names()
        .into_iter()
        .filter(|n| !ALLOWED.contains(n) && !n.starts_with("skip-"))
        .map(str::to_string)
        .collect();
    bad.sort();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(MixedArguments(bad))
    }
}

#[cfg(test)]
mod tests {
    use kubeadm_workflow::FlagSpec;

    use super::*;

    #[test]
    fn only_allowed_flags_mix_with_config() {
        let specs =
            ["config", "ttl", "token", "skip-phases", "v", "dry-run"].map(|n| FlagSpec::new(n, "string"));
        let parse = |args: &[&str]| {
            let mut fs = FlagSet::new(specs);
            fs.parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .expect("parses");
            validate(&fs).err().map(|e| e.to_string())
        };
        assert_eq!(parse(&["--ttl", "1h"]), None);
        assert_eq!(
            parse(&[
                "--config",
                "c",
                "--skip-phases",
                "x",
                "--v",
                "1",
                "--dry-run",
                "t"
            ]),
            None
        );
        // pflag visits set flags sorted by name.
        assert_eq!(
            parse(&["--ttl", "1h", "--config", "c", "--token", "t"]),
            Some("can not mix '--config' with arguments [token ttl]".to_string())
        );
    }
}
