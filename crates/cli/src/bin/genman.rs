//! `kubeadm-genman <dir>`: writes kubeadm's man pages into `<dir>` (created when missing), as
//! upstream's `genman <dir> kubeadm` does with cobra's man generator. The pages are dated with
//! `SOURCE_DATE_EPOCH` when it is set (reproducible builds), else with the clock.
// This binary is a build tool: it reads its arguments, the environment and the clock and writes
// files itself, unlike the command handlers that clippy.toml keeps off the host.
#![allow(clippy::disallowed_methods)]

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: kubeadm-genman <output directory>");
        return ExitCode::from(2);
    };
    let seconds = match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("kubeadm-genman: invalid SOURCE_DATE_EPOCH {v:?}: {e}");
                return ExitCode::from(1);
            }
        },
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
            .unwrap_or(0),
    };
    let dir = PathBuf::from(dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("kubeadm-genman: cannot create {}: {e}", dir.display());
        return ExitCode::from(1);
    }
    let date = kubeadm_cli::ManDate::from_unix(seconds);
    for page in kubeadm_cli::man_pages(&date) {
        let path = dir.join(&page.file_name);
        if let Err(e) = std::fs::write(&path, page.text) {
            eprintln!("kubeadm-genman: cannot write {}: {e}", path.display());
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}
