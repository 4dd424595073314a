//! The `kubeadm` binary: the command line in, the exit code out; everything else is in the
//! library (`src/lib.rs`).

use std::process::ExitCode;

fn main() -> ExitCode {
    #[allow(clippy::disallowed_methods)] // main alone reads the command line
    let args: Vec<String> = std::env::args().skip(1).collect();
    kubeadm_cli::run(&args)
}
