#!/usr/bin/env python3
"""Checks that the workflows of `crates/phases` do not borrow from each other (see ARCHITECTURE.md).

A workflow folder is a folder of `crates/phases/src` that holds one command's phases: `init/`,
`join/`, `reset/`, `upgrade/`. A module inside one may use its own folder and the shared modules at
the top of the crate (static pods, PKI, addons, the configuration from the cluster, …), never another
workflow's folder; a shared module uses no workflow folder at all. What two workflows both need moves
to a shared module named by its concern, as upstream keeps `cmd/phases/<workflow>` apart from
`app/phases/<concern>`. Imports are read as `.ci/modcycles.py` reads them (`crate::…`, `super::…`,
`use crate::{…}` groups).

    python3 .ci/workflows.py [PHASES_SRC_DIR]     default: crates/phases/src
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modcycles import edges_of, module_files  # noqa: E402

WORKFLOWS = ("init", "join", "reset", "upgrade")


def check(root):
    files = module_files(root)
    modules = set(files)
    missing = [w for w in WORKFLOWS if (w,) not in modules]
    if missing:
        return [f"{root}: no workflow folder {', '.join(missing)}: update WORKFLOWS in .ci/workflows.py"]
    bad = []
    for mod, path in sorted(files.items()):
        own = mod[0] if mod and mod[0] in WORKFLOWS else None
        for target in sorted(edges_of(modules, mod, open(path).read())):
            other = target[0] if target and target[0] in WORKFLOWS else None
            if other is None or other == own:
                continue
            who = f"the {own} workflow" if own else "a shared module"
            bad.append(f"{os.path.relpath(path)}: {who} uses {'::'.join(target)}, in the {other} workflow's folder")
    return bad


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "crates/phases/src"
    bad = check(root)
    for line in bad:
        print("workflows:", line, file=sys.stderr)
    if bad:
        print(f"workflows: {len(bad)} imports across workflow folders; move what they share to a module "
              "at the top of the crate", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
