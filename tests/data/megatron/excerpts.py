#!/usr/bin/env python3
"""The lines of Megatron-LM that moeflow's rule citations point at, as
committed test data (tests/data/megatron/excerpts/TREE.txt), so that
test_megatron_rules checks every citation without the Megatron trees.

usage: excerpts.py write MEGATRON_DIR [EXCERPT_DIR] < CITATIONS
       excerpts.py check MEGATRON_DIR [EXCERPT_DIR] < CITATIONS

CITATIONS: what `tests/unit/study/test_megatron_rules --citations` prints, one
citation a line: TREE <tab> PATH <tab> LINE <tab> RULE.  MEGATRON_DIR holds
TREE.tar.xz (../shared/megatron).  write (re)writes the excerpts: for each
citation the few lines test_megatron_rules reads, no more: the line before
it through the end of the statement that starts on the line after it (a
statement runs on while its brackets are open or its line ends in a
backslash, at most 8 lines, as test_megatron_rules reads it); ranges of one
file merged.  check compares every committed line with the tarball's and
fails on a citation whose lines are not all in the excerpt.  EXCERPT_DIR
(default: excerpts/ beside this file) holds another set the same way:
graph-excerpts/, for `tests/unit/analysis/test_graph_evidence --citations`.
"""
import os
import sys
import tarfile

STATEMENT_MAX = 8
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "excerpts")


def citations():
    out = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        tree, path, n, _rule = line.rstrip("\n").split("\t")
        out.setdefault(tree, {}).setdefault(path, set()).add(int(n))
    return out


def source(megatron, tree):
    tar = tarfile.open(os.path.join(megatron, tree + ".tar.xz"))

    def lines(path):
        f = tar.extractfile(tree + "/" + path)
        return f.read().decode("utf-8").split("\n")
    return lines


def statement_end(src, n):
    """The last line of the statement on line n (n itself if it has none)."""
    depth = 0
    for k in range(n, min(n + STATEMENT_MAX, len(src) + 1)):
        line = src[k - 1]
        depth += sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")
        if depth <= 0 and not line.endswith("\\"):
            return k
    return min(n + STATEMENT_MAX - 1, len(src))


def wanted(src, cited):
    keep = set()
    for n in cited:
        last = max(statement_end(src, k) for k in (n - 1, n, n + 1) if 1 <= k <= len(src))
        keep.update(range(max(1, n - 1), last + 1))
    return sorted(keep)


def read_excerpt(here, tree):
    files, cur = {}, None
    with open(os.path.join(here, tree + ".txt"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== "):
                cur = files.setdefault(line[3:], {})
            elif line and not line.startswith("#"):
                n, text = line.split("\t", 1)
                cur[int(n)] = text
    return files


def main():
    mode, megatron = sys.argv[1], sys.argv[2]
    here = sys.argv[3] if len(sys.argv) > 3 else HERE
    bad = 0
    for tree, paths in sorted(citations().items()):
        lines = source(megatron, tree)
        if mode == "write":
            with open(os.path.join(here, tree + ".txt"), "w", encoding="utf-8") as out:
                out.write(f"# {tree}: the lines of Megatron-LM that moeflow's rules cite, and\n"
                          "# the lines around each that test_megatron_rules reads, copied by\n"
                          f"# tests/data/megatron/excerpts.py from ../shared/megatron/{tree}.tar.xz.\n"
                          "# Copyright (c) 2019-2025, NVIDIA CORPORATION. All rights reserved.\n"
                          "# Redistributed under the BSD 3-Clause licence in LICENSE beside this file.\n"
                          "# Format: '== PATH', then LINE<tab>TEXT.\n")
                for path in sorted(paths):
                    src = lines(path)
                    out.write(f"== {path}\n")
                    for n in wanted(src, paths[path]):
                        if n <= len(src):
                            out.write(f"{n}\t{src[n - 1]}\n")
            continue
        have = read_excerpt(here, tree)
        for path in sorted(paths):
            src = lines(path)
            got = have.get(path, {})
            for n in wanted(src, paths[path]):
                if n > len(src):
                    continue
                if n not in got:
                    print(f"{tree} {path}:{n}: not in the excerpt (excerpts.py write)")
                    bad += 1
                elif got[n] != src[n - 1]:
                    print(f"{tree} {path}:{n}: the excerpt says {got[n]!r}, the source {src[n - 1]!r}")
                    bad += 1
            for n in got:
                if n > len(src) or got[n] != src[n - 1]:
                    if n not in wanted(src, paths[path]):
                        print(f"{tree} {path}:{n}: an excerpt line the source does not have")
                        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
