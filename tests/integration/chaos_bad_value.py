#!/usr/bin/env python3
"""Bad values of VCX_CHAOS_DELAY_US and VCX_CHAOS_SEED (delay injection,
docs/testing.md): vcx-run refuses them before anything starts; stderr holds
one line saying what is wrong and nothing about jobs; vcx-run returns 64 (a
usage error) and prints nothing on stdout.

  chaos_bad_value.py --vcx-run PATH [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [
    ({"VCX_CHAOS_DELAY_US": "2ms"},
     "vcx: VCX_CHAOS_DELAY_US must be a whole number of microseconds from 0 to 1000000, "
     "not '2ms'; unset it to run without delay injection"),
    ({"VCX_CHAOS_DELAY_US": "1000001"},
     "vcx: VCX_CHAOS_DELAY_US must be a whole number of microseconds from 0 to 1000000, "
     "not '1000001'; unset it to run without delay injection"),
    ({"VCX_CHAOS_DELAY_US": "-5"},
     "vcx: VCX_CHAOS_DELAY_US must be a whole number of microseconds from 0 to 1000000, "
     "not '-5'; unset it to run without delay injection"),
    ({"VCX_CHAOS_DELAY_US": "100", "VCX_CHAOS_SEED": "seven"},
     "vcx: VCX_CHAOS_SEED must be a whole number from 0 to 2^64-1, not 'seven'"),
]


def check(vcx_run, env_extra, expected, timeout, work) -> list:
    marker = os.path.join(work, "program-ran")
    env = dict(os.environ)
    env.pop("VCX_CHAOS_DELAY_US", None)
    env.pop("VCX_CHAOS_SEED", None)
    env.update(env_extra)
    cmd = [vcx_run, "-n", "2", "--", "sh", "-c", f"touch '{marker}'"]
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return [f"{env_extra}: vcx-run did not end within {timeout:g}s"]
    problems = []
    lines = proc.stderr.splitlines()
    if proc.returncode != 64:
        problems.append(f"exit status {proc.returncode}, not 64")
    if proc.stdout:
        problems.append(f"stdout is not empty: {proc.stdout!r}")
    if os.path.exists(marker):
        problems.append("the program ran")
    mine = [l for l in lines if l.startswith("vcx: VCX_CHAOS_")]
    if mine != [expected]:
        problems.append(f"expected exactly one line {expected!r}, got {mine!r}")
    if len(lines) != 1:
        problems.append(f"expected one line on stderr, got {len(lines)}")
    return [f"{env_extra}: {p}\n  stderr:\n" + "".join(f"    {l}\n" for l in lines)
            for p in problems]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="vcx-chaos-bad-")
    failures = []
    try:
        for env_extra, expected in CASES:
            failures += check(args.vcx_run, env_extra, expected, args.timeout, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print("FAILED:", f)
    if not failures:
        print(f"PASSED: {len(CASES)} bad settings refused")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
