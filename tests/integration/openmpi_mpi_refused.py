#!/usr/bin/env python3
"""An MPI program built with Open MPI (mpicc.openmpi, linking Open MPI's
libmpi without liboshmem) is refused before anything starts: vcx-run
returns 64 (a usage error), prints nothing on stdout and exactly one line
on stderr, which starts with "vcx:", names the program and says to rebuild
it with mpicc.mpich; the program never runs (it would create a file).

  openmpi_mpi_refused.py --vcx-run PATH --mpicc-openmpi PATH [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "w");
  if (f) fclose(f);
  MPI_Init(&argc, &argv);
  MPI_Finalize();
  return 0;
}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--mpicc-openmpi", required=True)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vcx-ompi-mpi-") as work:
        src = os.path.join(work, "ompi_mpi.c")
        exe = os.path.join(work, "ompi_mpi")
        marker = os.path.join(work, "program-ran")
        with open(src, "w") as f:
            f.write(PROGRAM)
        subprocess.run([args.mpicc_openmpi, "-o", exe, src], check=True, timeout=args.timeout)
        p = subprocess.run([args.vcx_run, "-n", "2", exe, marker], capture_output=True,
                           text=True, timeout=args.timeout)
        problems = []
        if p.returncode != 64:
            problems.append(f"exit status {p.returncode}, expected 64")
        if p.stdout:
            problems.append(f"stdout not empty: {p.stdout!r}")
        lines = p.stderr.splitlines()
        if len(lines) != 1:
            problems.append(f"expected one line on stderr, got {len(lines)}: {p.stderr!r}")
        elif not (lines[0].startswith("vcx: " + exe + " is an MPI program built with Open MPI")
                  and "mpicc.mpich" in lines[0]):
            problems.append(f"unexpected message: {lines[0]!r}")
        if os.path.exists(marker):
            problems.append("the program ran")
        for problem in problems:
            print("FAIL:", problem)
        if not problems:
            print("ok:", lines[0])
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
