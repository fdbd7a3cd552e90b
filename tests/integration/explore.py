#!/usr/bin/env python3
"""vcx-run --explore on examples/wildcard.c: the first run takes rank 0's
message first and passes; exploring replays the one alternative (rank 1's
receive #0 taking rank 2's message), whose run fails, and reports it with
the --force-match line that reproduces it; that line, run, fails the same
way. A program without alternatives explores nothing.

  explore.py --vcx-run PATH --program PATH --quiet-program PATH [--timeout S]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--quiet-program", required=True, help="a program with no alternatives")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    failures = []

    p = subprocess.run([args.vcx_run, "--explore", "4", "-n", "3", args.program],
                       capture_output=True, text=True, timeout=args.timeout * 3)
    if p.returncode != 1:
        failures.append(f"--explore should exit 1 when a replay's outcome differs, got "
                        f"{p.returncode}")
    if "rank 1: ok" not in p.stdout:
        failures.append("the first run's output is not shown")
    if "1 replay(s) run, 1 with another outcome" not in p.stderr:
        failures.append("the summary should count one replay with another outcome")
    m = re.search(r"reproduce with:\n  vcx-run (--force-match \S+) (.*)\n", p.stderr)
    if not m or m.group(1) != "--force-match 1:0=2" or "--explore" in m.group(2):
        failures.append("no reproducing line for 1:0=2 (without --explore)")
    else:
        q = subprocess.run([args.vcx_run] + m.group(1).split() + m.group(2).split(),
                           capture_output=True, text=True, timeout=args.timeout)
        if q.returncode != 1 or "unexpected order" not in q.stdout:
            failures.append(f"the reproducing line does not reproduce: exit {q.returncode}, "
                            f"{q.stdout!r}")
    if failures:
        failures.append("stderr was:\n" + p.stderr)

    p = subprocess.run([args.vcx_run, "--explore", "4", "-n", "2", args.quiet_program],
                       capture_output=True, text=True, timeout=args.timeout * 3)
    if p.returncode != 0 or "0 replay(s) run" not in p.stderr:
        failures.append(f"a program without alternatives: exit {p.returncode}\n{p.stderr}")

    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("explore: the failing alternative was found and reproduced")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
