//! The `kubeadm` binary: parses the command line, builds the effects and runs the command.
//! Exit codes are decided here only.

use std::process::ExitCode;

fn main() -> ExitCode {
    eprintln!("kubeadm-rs: not implemented yet");
    ExitCode::from(1)
}
