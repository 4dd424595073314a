//! The command line: pflag syntax (long, short, grouped shorts, `=` forms, `--`), typed values
//! (bools, durations, ints, string slices and maps), cobra's command finding, argument rules,
//! help and completion requests; resolved as `kubeadm` resolves it, short of running a command.
//! Input: the arguments, separated by NUL bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let args: Vec<String> = data.split(|b| *b == 0).take(64).map(kubeadm_fuzz::text).collect();
    let _ = kubeadm_cli::resolve_only(&args);
});
