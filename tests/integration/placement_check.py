#!/usr/bin/env python3
"""Checks that vcx-run --placement really binds both jobs where it says.

  placement_check.py --vcx-run PATH --toolproc PATH --placement split|shared -n N

The application is a shell printing its rank and CPU affinity; the tool
executable is wrapped (VCX_TOOLPROC) by a script that writes its own affinity
to a file, then runs the real tool. Expected, with C = the CPUs this test may
use (ascending) and h = ceil(C/2):
  split:  application rank i on C[i mod h], tool rank i on C[h + i mod (C-h)]
  shared: application rank i and tool rank i both on C[i mod C]
Exits 77 (skipped) for split when fewer than 2 CPUs are available.
"""
import argparse
import os
import re
import stat
import subprocess
import sys
import tempfile


def cpus_of(text: str):
    out = []
    for part in text.strip().split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out += list(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--toolproc", required=True)
    ap.add_argument("--placement", required=True, choices=["split", "shared"])
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()

    avail = sorted(os.sched_getaffinity(0))
    if args.placement == "split" and len(avail) < 2:
        print(f"skipped: split placement needs 2 CPUs, {len(avail)} available")
        return 77
    half = (len(avail) + 1) // 2
    if args.placement == "split":
        want_app = [avail[i % half] for i in range(args.n)]
        want_tool = [avail[half + i % (len(avail) - half)] for i in range(args.n)]
    else:
        want_app = want_tool = [avail[i % len(avail)] for i in range(args.n)]

    with tempfile.TemporaryDirectory(prefix="vcx-placement-") as work:
        wrapper = os.path.join(work, "toolproc.sh")
        with open(wrapper, "w") as f:
            f.write("#!/bin/sh\n"
                    f"grep Cpus_allowed_list /proc/self/status > {work}/tool-$PMI_RANK\n"
                    f"exec {args.toolproc} \"$@\"\n")
        os.chmod(wrapper, stat.S_IRWXU)
        env = dict(os.environ, VCX_TOOLPROC=wrapper)
        cmd = [args.vcx_run, "--placement", args.placement, "-n", str(args.n), "/bin/sh", "-c",
               'echo "rank $PMI_RANK $(grep Cpus_allowed_list /proc/self/status)"']
        run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
        if run.returncode != 0:
            print(f"vcx-run failed ({run.returncode}):\n{run.stdout}{run.stderr}")
            return 1
        got_app = {}
        for line in run.stdout.splitlines():
            m = re.match(r"rank (\d+) Cpus_allowed_list:\s*(\S+)", line)
            if m:
                got_app[int(m.group(1))] = cpus_of(m.group(2))
        got_tool = {}
        for r in range(args.n):
            with open(os.path.join(work, f"tool-{r}")) as f:
                got_tool[r] = cpus_of(f.read().split(":", 1)[1])
    problems = []
    for r in range(args.n):
        if got_app.get(r) != [want_app[r]]:
            problems.append(f"application rank {r} runs on {got_app.get(r)}, want [{want_app[r]}]")
        if got_tool.get(r) != [want_tool[r]]:
            problems.append(f"tool rank {r} runs on {got_tool.get(r)}, want [{want_tool[r]}]")
    for p in problems:
        print(p)
    if not problems:
        print(f"{args.placement}: application {want_app}, tools {want_tool}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
