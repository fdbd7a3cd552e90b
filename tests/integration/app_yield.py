#!/usr/bin/env python3
"""Checks that vcx-run --app-yield decides how blocking MPI calls wait.

  app_yield.py --vcx-run PATH --program PATH (yield_probe)

yield_probe counts the sched_yield() calls of each rank while it sends,
receives, waits and reduces. With --app-yield on every rank's blocking calls
test and yield (many calls), with off they block in MPI (none from vcx), and
--placement shared turns it on by default (auto), as the tools share cores.
"""
import argparse
import re
import subprocess
import sys


def yields(vcx_run, program, extra):
    cmd = [vcx_run, "-n", "2"] + extra + [program]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=180)
    counts = {int(r): int(c) for r, c in re.findall(r"^yields (\d+) (\d+)$", p.stdout, re.M)}
    if p.returncode != 0 or sorted(counts) != [0, 1]:
        sys.exit(f"app_yield: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-2000:]}")
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    a = ap.parse_args()
    off = yields(a.vcx_run, a.program, ["--app-yield", "off"])
    on = yields(a.vcx_run, a.program, ["--app-yield", "on"])
    auto_shared = yields(a.vcx_run, a.program, ["--placement", "shared"])
    problems = []
    # Each rank waits in 100 receives and 50 allreduces; a blocking call
    # that yields tests at least once before it may yield, so count only
    # that it yielded at all, and more than MPI did on its own.
    for r in (0, 1):
        if on[r] <= off[r]:
            problems.append(f"rank {r}: {on[r]} yields with --app-yield on, {off[r]} with off")
        if auto_shared[r] <= off[r]:
            problems.append(f"rank {r}: {auto_shared[r]} yields with --placement shared, "
                            f"{off[r]} with --app-yield off")
    if problems:
        sys.exit("app_yield: " + "; ".join(problems))
    print(f"app_yield: yields per rank: off {off}, on {on}, shared placement {auto_shared}")


if __name__ == "__main__":
    main()
