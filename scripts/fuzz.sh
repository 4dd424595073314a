#!/usr/bin/env bash
# Runs the cargo-fuzz (libFuzzer) targets of fuzz/ for SECONDS each (default 60): first the inputs
# of fuzz/regressions/TARGET (crashes found before, each must pass), then the fuzzer from its corpus
# (fuzz/corpus/TARGET, kept between runs, not committed) and the seeds (fuzz/seeds/TARGET and, for
# yaml, config and flags, the configs and command lines of tests/corpus). A crash, a hang (10 s) or
# more than 2 GiB fails the run; libFuzzer leaves the input in fuzz/artifacts/TARGET. Logs, one per
# target, in fuzz/out/logs.
#
# Stable toolchain, no sanitizer (`-s none`): the project has no unsafe code, so what the fuzzers
# find are panics, aborts, hangs and runaway memory, all of which libFuzzer sees without one.
#
# Inputs grow up to 32 KiB (`-max_len`): enough for 10 000 nested YAML collections (20 KB), which
# once overflowed the stack (fuzz/regressions/*/nested-10000-block-sequences).
#
# FUZZ_SEED fixes libFuzzer's random seed (the test command sets it, so that a CI run explores what
# the previous one did from the same fresh corpus; the long run leaves it unset).
#
# usage: scripts/fuzz.sh [-t SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
if [ "${1:-}" = -t ]; then
  seconds=$2
  shift 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: cargo fuzz is not installed (cargo install --locked cargo-fuzz)" >&2
  exit 1
fi
targets=("$@")
if [ ${#targets[@]} = 0 ]; then mapfile -t targets < <(cargo fuzz list); fi
# The build lives with the other caches (as the workspace's, see .ci/run), apart from it: other
# flags, and a workspace of its own.
export CARGO_TARGET_DIR="${KUBEADM_RS_CACHE:-$HOME/.cache/kubeadm-rs}/fuzz-target"
cargo fuzz build -s none
out=fuzz/out

# Seeds from the test corpus: every config file, and each command line of flag-errors.txt (its
# arguments NUL-separated, as the flags target splits its input).
generated=$out/seeds
rm -rf "$generated"
for t in yaml config; do
  mkdir -p "$generated/$t"
  find tests/corpus -mindepth 2 -type f -exec cp -t "$generated/$t" {} +
done
mkdir -p "$generated/flags"
n=0
while IFS= read -r line; do
  case "$line" in '' | '#'*) continue ;; esac
  n=$((n + 1))
  printf '%s' "$line" | tr ' ' '\0' >"$generated/flags/line-$n"
done <tests/corpus/flag-errors.txt

logs=$out/logs
mkdir -p "$logs"
failed=()
for t in "${targets[@]}"; do
  log="$logs/$t.log"
  if [ -d "fuzz/regressions/$t" ] && [ -n "$(ls -A "fuzz/regressions/$t")" ]; then
    if ! cargo fuzz run -s none "$t" "fuzz/regressions/$t"/* -- -runs=1 >"$log" 2>&1; then
      echo "fuzz $t: a regression input fails again (log: $log)"
      tail -n 30 "$log"
      failed+=("$t")
      continue
    fi
  fi
  mkdir -p "fuzz/corpus/$t"
  seeds=()
  for d in "fuzz/seeds/$t" "$generated/$t"; do [ -d "$d" ] && seeds+=("$d"); done
  if cargo fuzz run -s none "$t" "fuzz/corpus/$t" "${seeds[@]}" -- -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -max_len=32768 -print_final_stats=1 ${FUZZ_SEED:+-seed="$FUZZ_SEED"} >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "fuzz $t: ${seconds}s, ${runs:-?} inputs run, $cov, corpus $(find "fuzz/corpus/$t" -type f | wc -l) inputs"
  else
    echo "fuzz $t: FAILED (log: $log; the input is in fuzz/artifacts/$t)"
    grep -v '^#' "$log" | tail -n 40
    failed+=("$t")
  fi
done
if [ ${#failed[@]} != 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
