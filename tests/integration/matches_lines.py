#!/usr/bin/env python3
"""The matches analysis names each wildcard receive by the source line of the
call that posted it: the application's return address of MPI_Irecv,
MPI_Recv, MPI_Mprobe, ... and, for a persistent receive, of the MPI_Start or
MPI_Startall that started it. Each program runs under
`vcx-run -n 3 --analysis matches --report FILE`; every finding's receive must
name a file:line that lies within a call of the finding's "call" in one of
the case's source files (found by reading those files, not by line numbers
kept here), and the text report on stderr must name the same places.

crooked_barrier.c posts its receives through gt_irecv and gt_recv, so its
receives are named by the MPI_Irecv and MPI_Recv calls in gt.c; persistent.c
and probe.c make the posting calls themselves.

  matches_lines.py --vcx-run PATH --sources DIR --program NAME=EXE [...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# program: (the source files its receives may be posted from, the posting
# calls its wildcard receives may name, the calls that must be named).
CASES = {
    "crooked_barrier": (("crooked_barrier.c", "gt.c"), {"MPI_Irecv", "MPI_Recv"}, {"MPI_Irecv"}),
    "persistent": (("persistent.c", "gt.c"), {"MPI_Start", "MPI_Startall"}, {"MPI_Start"}),
    "probe": (("probe.c", "gt.c"), {"MPI_Mprobe", "MPI_Improbe"}, {"MPI_Mprobe"}),
}


def call_spans(text: str, call: str) -> list[tuple[int, int]]:
    """The 1-based line ranges of every call of `call` in C source `text`,
    from its name to its closing parenthesis."""
    spans = []
    for m in re.finditer(r"\b" + re.escape(call) + r"\s*\(", text):
        depth, i = 0, m.end() - 1
        while i < len(text):
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        spans.append((text.count("\n", 0, m.start()) + 1, text.count("\n", 0, i) + 1))
    return spans


def check(name: str, exe: str, args, work: str) -> list[str]:
    sources, calls, required = CASES[name]
    report = os.path.join(work, f"{name}.json")
    cmd = [args.vcx_run, "-n", "3", "--analysis", "matches", "--report", report, exe]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return [f"{name}: no end within {args.timeout:.0f} s (hang)"]
    if p.returncode != 0:
        return [f"{name}: vcx-run ended with status {p.returncode}:\n{p.stderr}"]
    try:
        with open(report) as f:
            findings = json.load(f).get("findings", [])
    except (OSError, ValueError) as e:
        return [f"{name}: no readable report {report}: {e}\n{p.stderr}"]
    findings = [x for x in findings if x.get("analysis") == "matches"]
    texts = {}
    for s in sources:
        with open(os.path.join(args.sources, s)) as f:
            texts[s] = f.read()
    failures = []
    named = set()
    places = set()
    for x in findings:
        r = x.get("receive", {})
        call, path, line = r.get("call"), r.get("file"), r.get("line")
        what = f"{name}: rank {r.get('rank')}'s wildcard receive #{r.get('index')} ({call})"
        if call not in calls:
            failures.append(f"{what}: not one of the calls {sorted(calls)}")
            continue
        if not isinstance(path, str) or not isinstance(line, int):
            failures.append(f"{what}: no source line (file {path!r}, line {line!r})")
            continue
        base = os.path.basename(path)
        if base not in texts:
            failures.append(f"{what}: named by {path}:{line}, not in one of {list(sources)}")
            continue
        spans = call_spans(texts[base], call)
        if not any(lo <= line <= hi for lo, hi in spans):
            failures.append(f"{what}: named by {path}:{line}, but {call} is called from "
                            f"{base} at lines {[lo for lo, _ in spans]}")
            continue
        if f"{call} at {path}:{line}:" not in p.stderr:
            failures.append(f"{what}: the text report does not name {call} at {path}:{line}:\n"
                            f"{p.stderr}")
        named.add(call)
        places.add(f"{call} at {base}:{line}")
    if not findings:
        failures.append(f"{name}: no wildcard receive with alternatives was reported:\n"
                        f"{p.stderr}")
    elif not required <= named:
        failures.append(f"{name}: no finding names {sorted(required - named)}")
    if not failures:
        print(f"{name}: {len(findings)} findings, at {', '.join(sorted(places))}")
    return failures


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--sources", required=True, help="tests/programs of the source tree")
    ap.add_argument("--program", action="append", required=True, metavar="NAME=EXE",
                    help=f"a test program, NAME one of {sorted(CASES)}")
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="vcx-matches-lines-") as work:
        for spec in args.program:
            name, _, exe = spec.partition("=")
            if name not in CASES or not exe:
                ap.error(f"--program {spec}: expected NAME=EXE, NAME one of {sorted(CASES)}")
            failures += check(name, exe, args, work)
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
