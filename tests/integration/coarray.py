#!/usr/bin/env python3
"""A Coarray Fortran program (OpenCoarrays over MPICH) runs unchanged under
vcx-run: built with caf.mpich, run with 3 images natively and under vcx-run
(--stall waits and --stall never); each run must end with status 0
and print image 1's lines with the values the puts carried, the same as the
native run, and vcx must have analysed the MPI calls OpenCoarrays makes.

  coarray.py --vcx-run PATH --caf PATH --mpiexec PATH --source F90 [-n 3]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(argv, timeout):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--caf", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    want = [f"image 1, round {r}: a = {42 + r}, events {args.n - 1}" for r in (1, 2, 3)]
    failures = []
    with tempfile.TemporaryDirectory(prefix="vcx-coarray-") as work:
        exe = os.path.join(work, "caf_events")
        code, out, err = run([args.caf, "-o", exe, args.source], args.timeout)
        if code != 0:
            print(f"caf failed ({code}):\n{out}{err}")
            return 1
        runs = {
            "native": [args.mpiexec, "-n", str(args.n), exe],
            "stall": [args.vcx_run, "-v", "--stall", "waits", "-n", str(args.n), exe],
            "nostall": [args.vcx_run, "-v", "--stall", "never", "-n", str(args.n), exe],
        }
        for mode, argv in runs.items():
            try:
                code, out, err = run(argv, args.timeout)
            except subprocess.TimeoutExpired:
                failures.append(f"{mode}: no end within {args.timeout:.0f} s (hang)")
                continue
            # Only the program's lines: MPICH's UCX layer warns on stdout about
            # the messages OpenCoarrays sends at its end and never receives.
            lines = [x.strip() for x in out.splitlines() if x.startswith("image ")]
            if code != 0 or lines != want:
                failures.append(f"{mode}: status {code}, stdout {lines!r}, expected {want!r}\n"
                                f"stderr:\n{err}")
                continue
            if mode != "native":
                m = re.search(r"^vcx: \d+ ranks, (\d+) events, (\d+) clocked calls", err, re.M)
                if not m or int(m.group(2)) == 0:
                    failures.append(f"{mode}: vcx analysed nothing:\n{err}")
                    continue
            print(f"{mode}: ok ({' '.join(argv[:-1])})")
    for f in failures:
        print("FAILED " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
