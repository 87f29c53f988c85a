#!/usr/bin/env python3
"""Hostile report JSONs for `ptrace compare` (issue 42, item 1).

hostile_reports.py PTRACE A.json B.json

Every leaf of report A (the first two elements of each list) is set in turn
to each of a list of hostile values (negative, zero, 1e308, ±2^62, a
fraction, a string, null, control characters) or deleted, and `ptrace
compare A' B` runs on the result. A run is fine when compare refuses
(exit status ≠ 0 and a message: the report's file and JSON path, or a run
left out) or compares exactly as it does the original. A report compared differently without a word is silently
wrong — unless the value changed is a label (a name a report may hold any
value of: the run's directory, a kind's or construct's name), which compare
shows as given. Prints the counts and exits 1 on any silently wrong case.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

# Labels: renaming them makes another valid-looking report, not a lie a
# reader can catch.
LABELS = ("trace.dir", "critical_path.by_kind.0.name", "critical_path.by_kind.1.name",
          "tasks.constructs.0.kind", "tasks.constructs.1.kind")
HOSTILE = [-1, 0, 1e308, -1e308, 2**62, -2**62, 0.5, 1.5, "x", None, "\x1b[2J" * 3]


def leaves(v, path):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from leaves(x, path + [k])
    elif isinstance(v, list):
        for i, x in enumerate(v[:2]):
            yield from leaves(x, path + [i])
        if not v:
            yield path, v
    else:
        yield path, v


def put(d, path, val, delete):
    for p in path[:-1]:
        d = d[p]
    if delete:
        d.pop(path[-1])
    else:
        d[path[-1]] = val


def main():
    pt, a_path, b_path = sys.argv[1:4]
    a = json.load(open(a_path))
    tmp = tempfile.mkdtemp(prefix="hostile-")
    bad = os.path.join(tmp, "run.json")
    json.dump(a, open(bad, "w"))
    base = subprocess.run([pt, "compare", "-q", "--json", "-", bad, b_path], capture_output=True, text=True)
    if base.returncode != 0:
        sys.exit("the unchanged report is refused: " + base.stderr)
    n = refused = same = labels = 0
    silent = []
    for path, v in list(leaves(a, [])):
        for x in HOSTILE + ["<deleted>"]:
            if x == v:
                continue
            d = copy.deepcopy(a)
            put(d, path, x, x == "<deleted>")
            json.dump(d, open(bad, "w"))
            r = subprocess.run([pt, "compare", "-q", "--json", "-", bad, b_path], capture_output=True, text=True, timeout=120)
            n += 1
            name = ".".join(map(str, path))
            if r.returncode != 0:
                refused += 1
                if not r.stderr.strip():
                    silent.append(f"{name} = {x!r:.30}: exit {r.returncode} without a message")
            elif r.stdout == base.stdout:
                same += 1
            elif name in LABELS:
                labels += 1
            else:
                silent.append(f"{name} = {x!r:.30}")
    print(f"{n} hostile reports: {refused} refused, {same} compared as the original, "
          f"{labels} with a label renamed, {len(silent)} silently wrong")
    for s in silent:
        print("  silently wrong:", s)
    sys.exit(1 if silent else 0)


if __name__ == "__main__":
    main()
