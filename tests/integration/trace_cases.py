"""What the trace tests share: their command line (vcx-run, vcx-trace, the
programs, arguments for every program) and running each program's check."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from typing import Callable


def run(cmd: list[str], timeout: float) -> str:
    """Runs a command; its stdout, or RuntimeError with its stderr's tail."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout


def main(tag: str, check: Callable[[str, str, argparse.Namespace, str], list[str]],
         add_arguments: Callable[[argparse.ArgumentParser], None] = lambda ap: None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--vcx-trace", required=True)
    ap.add_argument("--program", action="append", required=True, help="NAME=EXE")
    ap.add_argument("--arg", action="append", default=[], help="argument of every program")
    ap.add_argument("--timeout", type=float, default=120)
    add_arguments(ap)
    args = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory(prefix=f"vcx-{tag}-") as work:
        for spec in args.program:
            name, exe = spec.split("=", 1)
            try:
                problems += check(name, exe, args, work)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                problems.append(f"{name}: {e}")
    for p in problems[:50]:
        print(f"[{tag}] FAIL {p}", file=sys.stderr)
    return 1 if problems else 0
