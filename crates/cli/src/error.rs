//! A command's failure and the exit code it gives (1 generic, 2 preflight, 3 validation): the one
//! place that decides exit codes. Handlers return [`CommandError`]; `main` prints it in upstream's
//! format and exits with [`CommandError::exit_code`].
//!
//! Each variant carries the typed error it comes from, and its text is that error's. The messages
//! a handler words itself are the variants of a small error type per command here ([`TokenError`],
//! [`CertsError`], …), each carrying the pieces its text is made of; errors made outside the
//! handlers are defined where they are made (`options::config_load`, `printers`, `setup`).

use kubeadm_phases::upgrade::UpgradeError;
use kubeadm_workflow::{FailureKind, WorkflowError};

use std::path::PathBuf;

use kubeadm_core::layout::ADMIN_CONF;

use crate::cobra::completion::CompletionError;
use crate::options::config_load::ConfigLoadError;
use crate::options::mixed_args::MixedArguments;
use crate::printers::PrinterError;
use crate::setup::RootfsError;
use crate::setup::workflow_data::ClientError;

/// What a handler writes to standard output.
pub(crate) type Output = String;

/// A handler's failure; the variant (and, for a few, the error it carries) decides the exit code.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CommandError {
    /// A workflow failed: exit code 2 when a preflight check failed, 3 for a phase name that does
    /// not exist, else 1.
    #[error(transparent)]
    Workflow(#[from] WorkflowError),
    /// `kubeadm upgrade apply` failed: exit code 2 for a preflight check, 3 for bad input, else 1.
    #[error(transparent)]
    Upgrade(#[from] UpgradeError),
    /// `kubeadm upgrade diff` failed: exit code 3 for bad input, else 1.
    #[error(transparent)]
    Diff(#[from] kubeadm_phases::upgrade::diff::DiffError),
    /// A certificate renewal or expiration check failed: exit code 1.
    #[error(transparent)]
    Renewal(#[from] kubeadm_phases::renewal::RenewalError),
    /// The kubeadm configuration could not be read or loaded: exit code 3 when it is bad input,
    /// else 1.
    #[error(transparent)]
    Config(#[from] ConfigLoadError),
    /// An output printer could not be made, or could not print: exit code 3.
    #[error(transparent)]
    Printer(#[from] PrinterError),
    /// Flags or arguments that are not valid: exit code 3.
    #[error(transparent)]
    BadInput(#[from] BadInput),
    /// No Kubernetes client from the kubeconfig file: exit code 1.
    #[error("couldn't create a Kubernetes client from file {kubeconfig:?}: {source}")]
    Client {
        /// The kubeconfig file.
        kubeconfig: String,
        /// Why.
        #[source]
        source: ClientError,
    },
    /// `kubeadm completion` without a shell it knows: exit code 1.
    #[error(transparent)]
    Completion(#[from] CompletionError),
    /// A command that only groups subcommands, run on its own: exit code 1.
    #[error(transparent)]
    MissingSubcommand(#[from] MissingSubcommand),
    /// `--rootfs` could not be entered: exit code 1.
    #[error(transparent)]
    Rootfs(#[from] RootfsError),
    /// `kubeadm version -o` with a format it does not know: exit code 1.
    #[error(transparent)]
    Version(#[from] crate::commands::version::InvalidOutput),
    /// `kubeadm init phase addon … --print-manifest` failed: exit code 1.
    #[error(transparent)]
    Addon(#[from] kubeadm_core::addons::AddonError),
    /// `kubeadm init` failed outside its workflow: exit code 1.
    #[error(transparent)]
    Init(#[from] InitError),
    /// `kubeadm join` failed outside its workflow: exit code 1.
    #[error(transparent)]
    Join(#[from] JoinError),
    /// `kubeadm reset` failed outside its workflow: exit code 1.
    #[error(transparent)]
    Reset(#[from] ResetError),
    /// `kubeadm upgrade node` failed outside its workflow: exit code 1.
    #[error(transparent)]
    UpgradeNode(#[from] UpgradeNodeError),
    /// `kubeadm upgrade plan` failed: exit code 3 for bad input, else 1.
    #[error(transparent)]
    UpgradePlan(#[from] UpgradePlanError),
    /// A `kubeadm config` command failed: exit code 1.
    #[error(transparent)]
    ConfigCommand(#[from] ConfigCommandError),
    /// A `kubeadm certs` command failed: exit code 1.
    #[error(transparent)]
    Certs(#[from] CertsError),
    /// `kubeadm kubeconfig user` failed: exit code 1.
    #[error(transparent)]
    Kubeconfig(#[from] KubeconfigError),
    /// A `kubeadm token` command failed: exit code 3 for bad input, else 1.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// Exit code 1, without upstream's stack-trace hint: a command we do not have yet.
    #[error("kubeadm: {command:?} is not implemented yet in kubeadm-rs")]
    NotImplemented {
        /// The command's path (`kubeadm alpha …`).
        command: String,
    },
}

impl CommandError {
    /// The process exit code upstream uses for this kind of error.
    ///
    /// A failed preflight check exits 2, as kubeadm documents and this project's rules ask; the
    /// upstream v1.25.16 binary exits 1 there, because its workflow wraps the preflight error and
    /// so loses the type its exit code is chosen by. A `--skip-phases` entry that names no phase
    /// is bad input: exit 3 (upstream: 1).
    pub(crate) fn exit_code(&self) -> u8 {
        const FAILED: u8 = 1;
        const PREFLIGHT: u8 = 2;
        const VALIDATION: u8 = 3;
        match self {
            CommandError::Workflow(WorkflowError::InvalidPhaseName(_)) => VALIDATION,
            CommandError::Workflow(e) => match e.failure_kind() {
                FailureKind::Preflight => PREFLIGHT,
                FailureKind::Failed => FAILED,
            },
            CommandError::Upgrade(e) if e.is_preflight() => PREFLIGHT,
            CommandError::Upgrade(e) if e.is_bad_input() => VALIDATION,
            CommandError::Diff(e) if diff_is_bad_input(e) => VALIDATION,
            CommandError::Config(e) if e.is_bad_input() => VALIDATION,
            CommandError::Printer(_) | CommandError::BadInput(_) => VALIDATION,
            CommandError::UpgradePlan(e) if e.is_bad_input() => VALIDATION,
            CommandError::Token(e) if e.is_bad_input() => VALIDATION,
            _ => FAILED,
        }
    }
}

/// Bad input to `upgrade diff` (an empty manifest path, a version that is not one, a wrong number
/// of arguments) exits 3, as this project's rule says; upstream returns every one of these as a
/// plain error and exits 1. A file that cannot be used, or a cluster that cannot be asked, exits 1.
fn diff_is_bad_input(e: &kubeadm_phases::upgrade::diff::DiffError) -> bool {
    use kubeadm_phases::upgrade::diff::DiffError;
    matches!(
        e,
        DiffError::EmptyPath
            | DiffError::MissingVersion
            | DiffError::TooManyArguments
            | DiffError::Version(_)
    )
}

/// Flags, arguments or environment values that are not valid: exit code 3 (upstream exits 1 for
/// most of these).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BadInput {
    /// `--config` with flags it does not go with.
    #[error(transparent)]
    MixedArguments(#[from] MixedArguments),
    /// `--feature-gates`.
    #[error(transparent)]
    FeatureGates(#[from] kubeadm_api::features::FeatureGateError),
    /// `--ignore-preflight-errors` (with the configuration's list).
    #[error(transparent)]
    IgnorePreflightErrors(#[from] kubeadm_api::validation::ErrorList),
    /// A bootstrap token.
    #[error(transparent)]
    Token(#[from] kubeadm_api::v1beta3::BootstrapTokenError),
    /// An address that is not an IP address.
    #[error("cannot parse IP address: {0}")]
    UnparsableAddress(String),
    /// An address the API server cannot bind to.
    #[error("cannot use {0:?} as the bind address for the API Server")]
    BindAddress(String),
    /// `kubeadm config migrate` without `--old-config`.
    #[error("the --old-config flag is mandatory")]
    NoOldConfig,
    /// A timeout from the environment that is not a duration.
    #[error(transparent)]
    Timeout(kubeadm_phases::TimeoutEnvError),
}

/// Upstream's `SubCmdRunE`: a command that only groups subcommands was run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum MissingSubcommand {
    /// Without arguments.
    #[error("missing subcommand; {name:?} is not meant to be run on its own")]
    Missing {
        /// The command's name.
        name: String,
    },
    /// With one that names no subcommand.
    #[error("invalid subcommand: {arg:?}")]
    Invalid {
        /// The first argument.
        arg: String,
    },
}

/// `kubeadm init`'s failures outside its workflow.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InitError {
    /// Whether the CA is external could not be told.
    #[error(transparent)]
    ExternalCa(#[from] kubeadm_phases::pki::CertsError),
    /// `--upload-certs` with a CA whose key is not here.
    #[error("can't use upload-certs with an external CA or an external front-proxy CA")]
    UploadCertsWithExternalCa,
    /// The closing join command could not be made.
    #[error("failed to print join command: {0}")]
    PrintJoinCommand(#[source] kubeadm_phases::init::finish::JoinCommandError),
}

/// `kubeadm join`'s failures outside its workflow.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JoinError {
    /// A control-plane phase without discovery flags, and no admin.conf to discover from.
    #[error(
        "File {} does not exists. Please use 'kubeadm join phase control-plane-prepare' subcommands to generate it.",
        ADMIN_CONF
    )]
    NoAdminConf,
    /// admin.conf holds no usable kubeconfig.
    #[error("Error loading {}: invalid configuration", ADMIN_CONF)]
    InvalidAdminConf,
}

/// `kubeadm reset`'s failures outside its workflow.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResetError {
    /// More than one CRI socket found on the host.
    #[error(transparent)]
    CriSocket(MultipleCriSockets),
}

/// More than one known CRI socket exists on the host (upstream's `DetectCRISocket`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Found multiple CRI endpoints on the host. Please define which one do you wish to use by setting the 'criSocket' field in the kubeadm configuration file: {}",
    .0.join(", ")
)]
pub(crate) struct MultipleCriSockets(pub(crate) Vec<String>);

/// `kubeadm upgrade node`'s failures outside its workflow.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpgradeNodeError {
    /// A worker's configuration could not be fetched.
    #[error(transparent)]
    NodeConfig(#[from] kubeadm_phases::config_from_cluster::FetchError),
    /// A control-plane node's configuration could not be fetched.
    #[error("unable to fetch the kubeadm-config ConfigMap: {0}")]
    ClusterConfig(#[source] kubeadm_phases::config_from_cluster::FetchConfigError),
}

/// `kubeadm upgrade plan`'s failures.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UpgradePlanError {
    /// `--feature-gates` (exit code 3).
    #[error("[upgrade/config] FATAL: {0}")]
    FeatureGates(#[source] kubeadm_api::features::FeatureGateError),
    /// The available upgrades could not be computed (exit code 3 when the target version is not
    /// one).
    #[error("[upgrade/versions] FATAL: {source}")]
    Versions {
        /// Why.
        source: kubeadm_core::upgrade::plan::PlanError,
        /// Whether the target version given is not a version.
        bad_target: bool,
    },
    /// The component configurations' state could not be read.
    #[error("[upgrade/versions] FATAL: {0}")]
    ComponentConfigs(#[source] kubeadm_phases::upgrade::component_configs::ComponentConfigError),
}

impl UpgradePlanError {
    /// Whether the fault is in the flags or arguments.
    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            UpgradePlanError::FeatureGates(_) | UpgradePlanError::Versions { bad_target: true, .. }
        )
    }
}

/// The `kubeadm config` commands' failures.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigCommandError {
    /// The default configuration could not be printed.
    #[error(transparent)]
    Defaults(#[from] kubeadm_api::print::PrintError),
    /// `--old-config` could not be read.
    #[error("{}", kubeadm_api::gofmt::read_file_error(path, source))]
    ReadOld {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `--new-config` could not be written.
    #[error(
        "failed to write the new configuration to the file {path:?}: open {path}: {}",
        kubeadm_api::gofmt::io_error(source)
    )]
    WriteNew {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// An image could not be pulled.
    #[error("failed to pull image {image:?}: {source}")]
    Pull {
        /// The image.
        image: String,
        /// Why (boxed: the runtime's errors are large).
        source: Box<kubeadm_effects::cri::CriError>,
    },
}

/// The `kubeadm certs` commands' failures.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CertsError {
    /// A certificate that exists does not load.
    #[error("failed to load existing certificate {name}")]
    LoadCertificate {
        /// Its base name.
        name: String,
    },
    /// Keys could not be generated.
    #[error(transparent)]
    Keys(#[from] kubeadm_phases::pki::CertsError),
    /// A certificate's template could not be made.
    #[error(transparent)]
    Template(#[from] kubeadm_core::pki::SanError),
    /// A CSR could not be made.
    #[error(transparent)]
    Csr(#[from] kubeadm_core::pki::IssueError),
    /// A kubeconfig's server could not be told.
    #[error(transparent)]
    Server(#[from] kubeadm_core::kubeconfig::EndpointError),
    /// A file could not be written.
    #[error("unable to write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key or CSR is there already.
    #[error("file already exists: key or CSR {}/{name}", dir.display())]
    KeyOrCsrExists {
        /// The certificate directory.
        dir: PathBuf,
        /// The certificate's base name.
        name: String,
    },
    /// A kubeconfig file is there already.
    #[error("file already exists: kube config: {}", .0.display())]
    KubeconfigExists(PathBuf),
    /// A kubeconfig's key or CSR is there already (upstream names the kubeconfig file).
    #[error("file already exists: csr: {}", .0.display())]
    KubeconfigCsrExists(PathBuf),
}

/// `kubeadm kubeconfig user`'s failures.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KubeconfigError {
    /// `--config ""`.
    #[error("the kubeadm configuration path cannot be empty")]
    NoConfigPath,
    /// The CA certificate or key does not load.
    #[error(
        "couldn't create a kubeconfig; the CA files couldn't be loaded: failed to load {what}: couldn't load the {what} file {}",
        path.display()
    )]
    LoadCa {
        /// `certificate` or `private key`.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The control-plane endpoint could not be told.
    #[error(transparent)]
    Endpoint(#[from] kubeadm_core::kubeconfig::EndpointError),
    /// The client key could not be generated.
    #[error(transparent)]
    KeyGen(#[from] kubeadm_effects::keygen::KeyGenError),
    /// The generated key does not load.
    #[error(transparent)]
    Key(#[from] kubeadm_core::pki::KeyError),
    /// The client certificate could not be issued.
    #[error("failure while creating {client_name} client certificate: {source}")]
    ClientCertificate {
        /// `--client-name`.
        client_name: String,
        /// Why.
        source: kubeadm_core::pki::IssueError,
    },
}

/// The `kubeadm token` commands' failures.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// No client from the kubeconfig.
    #[error(transparent)]
    Client(#[from] crate::setup::workflow_data::ClientError),
    /// The clock is before 1970 or too far ahead.
    #[error("the system clock is out of range")]
    Clock,
    /// The tokens could not be created.
    #[error(transparent)]
    Create(#[from] kubeadm_phases::init::CreateTokensError),
    /// `--print-join-command` failed.
    #[error("failed to get join command: {0}")]
    JoinCommand(#[source] kubeadm_phases::init::finish::JoinCommandError),
    /// `--certificate-key` without `--print-join-command` (exit code 3).
    #[error("cannot use --certificate-key without --print-join-command")]
    CertificateKeyWithoutJoinCommand,
    /// The tokens could not be listed.
    #[error("failed to list bootstrap tokens: {0}")]
    List(#[source] kubeadm_effects::cluster::ClusterError),
    /// A token could not be deleted.
    #[error("failed to delete bootstrap token {id:?}: {source}")]
    Delete {
        /// The token's id.
        id: String,
        /// Why.
        source: kubeadm_effects::cluster::ClusterError,
    },
    /// `token delete` without arguments (exit code 3).
    #[error("missing subcommand; 'token delete' is missing token of form \"\\\\A([a-z0-9]{{6}})\\\\z\"")]
    MissingToken,
    /// `token delete` with an argument that is neither a token nor its id (exit code 3).
    #[error(
        "given token didn't match pattern \"\\\\A([a-z0-9]{{6}})\\\\z\" or \"\\\\A([a-z0-9]{{6}})\\\\z\""
    )]
    BadToken,
}

impl TokenError {
    /// Whether the fault is in the flags or arguments.
    fn is_bad_input(&self) -> bool {
        matches!(
            self,
            TokenError::CertificateKeyWithoutJoinCommand | TokenError::MissingToken | TokenError::BadToken
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few texts and exit codes, as the handlers gave them when they formatted the messages.
    #[test]
    fn texts_and_exit_codes() {
        let cases: Vec<(CommandError, &str, u8)> = vec![
            (
                TokenError::MissingToken.into(),
                "missing subcommand; 'token delete' is missing token of form \"\\\\A([a-z0-9]{6})\\\\z\"",
                3,
            ),
            (
                TokenError::BadToken.into(),
                "given token didn't match pattern \"\\\\A([a-z0-9]{6})\\\\z\" or \"\\\\A([a-z0-9]{6})\\\\z\"",
                3,
            ),
            (TokenError::Clock.into(), "the system clock is out of range", 1),
            (
                BadInput::BindAddress("127.0.0.1".into()).into(),
                "cannot use \"127.0.0.1\" as the bind address for the API Server",
                3,
            ),
            (
                JoinError::NoAdminConf.into(),
                "File /etc/kubernetes/admin.conf does not exists. Please use 'kubeadm join phase control-plane-prepare' subcommands to generate it.",
                1,
            ),
            (
                MissingSubcommand::Missing { name: "token".into() }.into(),
                "missing subcommand; \"token\" is not meant to be run on its own",
                1,
            ),
            (
                CertsError::KeyOrCsrExists {
                    dir: PathBuf::from("/etc/kubernetes/pki"),
                    name: "apiserver".into(),
                }
                .into(),
                "file already exists: key or CSR /etc/kubernetes/pki/apiserver",
                1,
            ),
            (
                KubeconfigError::LoadCa {
                    what: "private key",
                    path: PathBuf::from("/pki/ca.key"),
                }
                .into(),
                "couldn't create a kubeconfig; the CA files couldn't be loaded: failed to load private key: couldn't load the private key file /pki/ca.key",
                1,
            ),
            (
                UpgradeError::VersionSkew {
                    errors: vec!["too new".into()],
                    mandatory: false,
                }
                .into(),
                "[upgrade/version] FATAL: the --version argument is invalid due to these errors:\n\n\t- too new\n\nCan be bypassed if you pass the --force flag",
                1,
            ),
            (
                UpgradeError::TooManyArguments.into(),
                "too many arguments. Required arguments: [version]",
                3,
            ),
            (
                WorkflowError::InvalidPhaseName("nope".into()).into(),
                "invalid phase name: nope",
                3,
            ),
            (
                CommandError::NotImplemented {
                    command: "kubeadm alpha".into(),
                },
                "kubeadm: \"kubeadm alpha\" is not implemented yet in kubeadm-rs",
                1,
            ),
        ];
        for (e, text, code) in cases {
            assert_eq!((e.to_string().as_str(), e.exit_code()), (text, code));
        }
    }

    /// A workflow's exit code follows the failure kind of the phase that stopped it.
    #[test]
    fn a_failed_preflight_phase_exits_2() {
        use kubeadm_workflow::{Phase, PhaseError, Workflow};
        let workflow = || Workflow::<bool> {
            phases: vec![Phase {
                run: Some(|p: &mut bool| {
                    if *p {
                        Err(PhaseError::preflight("[preflight] Some fatal errors occurred"))
                    } else {
                        Err("failed".into())
                    }
                }),
                ..Phase::new("preflight", "")
            }],
            additional_flags: &[],
        };
        for (preflight, code) in [(true, 2), (false, 1)] {
            let e: CommandError = workflow()
                .run(&mut { preflight }, &[], &[])
                .expect_err("fails")
                .into();
            assert_eq!(e.exit_code(), code);
        }
    }
}
