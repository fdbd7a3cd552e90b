#!/usr/bin/env python3
"""Several programs in one launch, as mpiexec runs them ("-n 1 ./a : -n 2
./b"), with mpiexec's -l and -genv: vcx-run gives the tool job every
program's ranks, starts the application with the same options and ':'
syntax, and each rank is analysed. The run
must end like the native one (status, stdout as a multiset of lines), and
the summary and the trace must cover every rank.

  mpmd.py --vcx-run PATH --vcx-trace PATH --mpiexec PATH --program EXE
"""

from __future__ import annotations

import argparse
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
    ap.add_argument("--vcx-trace", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    # mpiexec's own options too: -l labels every line with its rank, which
    # shows that it reached the application's mpiexec.
    programs = ["-l", "-genv", "VCX_TEST_MPMD", "1", "-n", "1", args.program, ":", "-n", "2",
                "-env", "VCX_TEST_MPMD", "2", args.program]
    code, native_out, err = run([args.mpiexec] + programs, args.timeout)
    if not re.search(r"^\[\d+\] ", native_out, re.M):
        print(f"the native run's output has no rank labels:\n{native_out}")
        return 1
    if code != 0:
        print(f"the native run failed ({code}):\n{native_out}{err}")
        return 1
    failures = []
    with tempfile.TemporaryDirectory(prefix="vcx-mpmd-") as work:
        trace = f"{work}/trace"
        for mode, extra in (("stall", ["--stall", "waits"]), ("nostall", ["--no-stall"])):
            try:
                code, out, err = run([args.vcx_run, "-v", "--trace", trace] + extra + programs,
                                     args.timeout)
            except subprocess.TimeoutExpired:
                failures.append(f"{mode}: no end within {args.timeout:.0f} s (hang)")
                continue
            if code != 0 or sorted(out.splitlines()) != sorted(native_out.splitlines()):
                failures.append(f"{mode}: status {code}, stdout {out!r}, native {native_out!r}\n"
                                f"stderr:\n{err}")
                continue
            if not re.search(r"^vcx: 3 ranks, \d+ events", err, re.M):
                failures.append(f"{mode}: the summary does not cover 3 ranks:\n{err}")
            code, summary, serr = run([args.vcx_trace, "summary", trace], args.timeout)
            ranks = re.findall(r"^\s*rank\s+(\d+)", summary, re.M | re.I)
            if code != 0 or sorted(set(ranks)) != ["0", "1", "2"]:
                failures.append(f"{mode}: the trace does not hold ranks 0-2 "
                                f"(vcx-trace summary: {code}):\n{summary}{serr}")
    for f in failures:
        print(f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
