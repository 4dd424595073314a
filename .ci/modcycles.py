#!/usr/bin/env python3
"""Checks that the modules of a crate do not import each other in a cycle (see ARCHITECTURE.md).

A module is a source file (`commands/init.rs` is `commands::init`, `commands/mod.rs` is
`commands`). An edge A -> B is any path in A that names B: `crate::b::...` or, at the top level of
a file, `super::...` (inside an inline `mod tests` block, `super` is the file itself). A parent's
`mod child;` declaration is not an edge: the dispatch table in `commands/mod.rs` may use every
handler, but then no handler may use `crate::commands::something` defined in `commands/mod.rs`.

    python3 .ci/modcycles.py [CRATE_SRC_DIR...]     default: crates/cli/src crates/phases/src
"""
import os
import re
import sys

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}", re.S)


def module_of(root, path):
    rel = os.path.relpath(path, root)[: -len(".rs")]
    parts = rel.split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def resolve(modules, base, names):
    """The longest module named by a path's leading segments (base is where it starts)."""
    best = base
    cur = base
    for n in names:
        cur = cur + (n,)
        if cur in modules:
            best = cur
        else:
            break
    return best


# What hides paths from the reader, in one pass so that each starts where the one before ended: raw
# strings, strings (a `\` before a line break included), character literals, line and block comments.
HIDDEN = re.compile(
    r'r(#*)"(?:.|\n)*?"\1|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//[^\n]*|/\*(?:.|\n)*?\*/',
    re.S,
)


def strip_comments(text):
    def blank(m):
        s = m.group(0)
        if s.startswith("//") or s.startswith("/*"):
            return "\n" * s.count("\n")
        return '""' + "\n" * s.count("\n")

    return HIDDEN.sub(blank, text)


def edges_of(modules, mod, text):
    out = set()
    for line in strip_comments(text).split("\n"):
        indented = line.startswith((" ", "\t"))
        for m in GROUP.finditer(line):
            pass  # groups spanning lines are handled below on the whole text
        for m in PATH.finditer(line):
            kind, rest = m.group(1), m.group(2)
            names = rest.split("::")[1:]
            if kind == "crate":
                target = resolve(modules, (), names)
            elif indented:
                continue  # `super` inside an inline module: this file
            else:
                target = resolve(modules, mod[:-1], names)
            if target != mod and not (len(target) < len(mod) and mod[: len(target)] == target and target == ()):
                out.add(target)
    # `use crate::{a::x, b};` and `use crate::a::{b, c};` groups: each member names a module too.
    for m in GROUP.finditer(strip_comments(text)):
        base = () if m.group(1) == "crate" else mod[:-1]
        prefix = m.group(2).split("::")[1:]
        for item in re.split(r",(?![^{]*\})", m.group(3)):
            names = prefix + [n for n in re.split(r"::|\{|\}", item.strip()) if re.fullmatch(r"[A-Za-z_]\w*", n)]
            if names:
                target = resolve(modules, base, names)
                if target != mod and target != ():
                    out.add(target)
    return out


def module_files(root):
    """Every module of the crate whose sources are under `root`, with its file."""
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                files[module_of(root, p)] = p
    return files


def check(root):
    files = module_files(root)
    modules = set(files)
    graph = {m: edges_of(modules, m, open(p).read()) for m, p in files.items()}
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    bad = []
    for comp in sccs:
        names = sorted("::".join(c) or "crate" for c in comp)
        inner = sorted(
            f"{'::'.join(a) or 'crate'} -> {'::'.join(b) or 'crate'}"
            for a in comp for b in graph[a] if b in comp
        )
        bad.append(f"{root}: modules in a cycle: {', '.join(names)} ({'; '.join(inner)})")
    return bad


def main():
    roots = sys.argv[1:] or ["crates/cli/src", "crates/phases/src"]
    bad = [line for r in roots for line in check(r)]
    for line in bad:
        print("modcycles:", line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
