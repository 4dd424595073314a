#!/usr/bin/env bash
# The dependency audit: cargo-deny's advisories, licences, bans and sources checks against deny.toml.
#
# The advisory database is a snapshot of the RustSec database kept beside the project's clone
# (../shared/advisory-db, or the folder $KUBEADM_RS_ADVISORY_DB names), because the machines cannot
# reach the database's own repository. cargo-deny wants a git repository in its database folder: the
# snapshot's files are committed into a temporary one, dated as the snapshot, and nothing is fetched
# (`--offline`). The snapshot's date is printed: an audit against an old database finds only what was
# known then.
#
# `--selftest` first shows that the audit can fail: with an advisory against one of our dependencies
# added to the database, the advisories check must fail and name it.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo-deny >/dev/null || { echo "deny.sh: cargo-deny is missing: cargo install --locked cargo-deny" >&2; exit 1; }

snapshot="${KUBEADM_RS_ADVISORY_DB:-../shared/advisory-db}"
checks=(licenses bans sources)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -f "$snapshot/SNAPSHOT.md" ]; then
  # The folder cargo-deny 0.20 keeps the default database in, under its db-path.
  db="$work/dbs/advisory-db-3157b0e258782691"
  mkdir -p "$db"
  cp -r "$snapshot"/. "$db"/
  date="$(grep -oE '\(20[0-9]{2}-[0-9]{2}-[0-9]{2}\)' "$snapshot/SNAPSHOT.md" | head -1 | tr -d '()')"
  [ -n "$date" ] || { echo "deny.sh: no snapshot date in $snapshot/SNAPSHOT.md" >&2; exit 1; }
  git -C "$db" init -q
  git -C "$db" add -A
  GIT_AUTHOR_DATE="${date}T00:00:00Z" GIT_COMMITTER_DATE="${date}T00:00:00Z" \
    git -C "$db" -c user.name=snapshot -c user.email=snapshot@localhost commit -q -m "advisory database snapshot of $date"
  export KUBEADM_RS_ADVISORY_DBS="$work/dbs"
  if [ "${1:-}" = --selftest ]; then
    cp -r "$work/dbs" "$work/planted"
    mkdir -p "$work/planted/advisory-db-3157b0e258782691/crates/libc"
    cat >"$work/planted/advisory-db-3157b0e258782691/crates/libc/RUSTSEC-2099-0001.md" <<'ADVISORY'
```toml
[advisory]
id = "RUSTSEC-2099-0001"
package = "libc"
date = "2099-01-01"
url = "https://example.invalid/RUSTSEC-2099-0001"

[versions]
patched = []
```

# A planted advisory (deny.sh --selftest)

Every version of libc is affected: the audit must fail.
ADVISORY
    git -C "$work/planted/advisory-db-3157b0e258782691" add -A
    GIT_COMMITTER_DATE="${date}T00:00:00Z" git -C "$work/planted/advisory-db-3157b0e258782691" \
      -c user.name=snapshot -c user.email=snapshot@localhost commit -q -m planted
    cargo fetch --quiet
    if out="$(KUBEADM_RS_ADVISORY_DBS="$work/planted" cargo deny --offline check advisories 2>&1)"; then
      echo "deny.sh --selftest: the audit passed with a planted advisory against libc" >&2
      exit 1
    fi
    grep -q RUSTSEC-2099-0001 <<<"$out" || { echo "deny.sh --selftest: the failure does not name the planted advisory:" >&2; echo "$out" >&2; exit 1; }
    echo "deny.sh --selftest: a planted advisory against libc fails the audit"
  fi
  checks=(advisories "${checks[@]}")
  echo "deny.sh: advisory database snapshot of $date ($(find "$db/crates" -name 'RUSTSEC-*.md' | wc -l) crate advisories)"
else
  echo "deny.sh: no advisory database snapshot at $snapshot: advisories NOT checked (set KUBEADM_RS_ADVISORY_DB)"
fi

# cargo-deny reads the whole dependency graph for every target; fetched here, so that the check itself
# runs offline.
cargo fetch --quiet
cargo deny --offline check --show-stats "${checks[@]}"
