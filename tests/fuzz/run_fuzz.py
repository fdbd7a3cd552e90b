#!/usr/bin/env python3
"""Fuzz campaign: random MPI or OpenSHMEM programs natively and under vcx-run.

  run_fuzz.py --build DIR N [--shmem] [--start-seed S] [--delay-us D]
              [--rounds R] [--race] [--matches] [--failures DIR] [--timeout S]

Runs the seeds S .. S+N-1 of vcx-fuzz-runner (tests/fuzz/fuzz_runner.c),
or with --shmem of vcx-shmem-fuzz-runner (tests/fuzz/shmem_fuzz_runner.c,
run natively with Open MPI's oshrun), through
tests/integration/run_case.py: native run, tool run, transparency, and
the tool's clocks against the oracle (with --matches also the matches
analysis's findings against tests/oracle/matches_oracle.py). Seed s runs on 2 + s % 3 ranks,
in no-stall mode when s is odd, so consecutive seeds cover every
combination. With --delay-us D the tools delay their messages by a random
0..D us (VCX_CHAOS_DELAY_US, VCX_CHAOS_SEED = the program's seed).

Every failing case is kept as a reproducer in the failures directory
(default ./fuzz-failures): [shmem.]seed<s>.n<N>.<mode>[.delay<D>]/ with
command.sh (the exact run_case.py command and environment), output.txt
(the harness's report: the oracle diff, stderr tails) and the harness's
directories (native-gt/, tool-gt/, trace/, trace.jsonl, logs).
Exit status: 0 when every case passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_CASE = os.path.join(HERE, "..", "integration", "run_case.py")


def find_mpiexec() -> str:
    path = shutil.which("mpiexec.mpich") or shutil.which("mpiexec.hydra")
    if not path:
        sys.exit("vcx: MPICH's mpiexec.mpich was not found; install MPICH (scripts/install-deps)")
    return path


def find_oshrun() -> str:
    path = shutil.which("oshrun")
    if not path:
        sys.exit("vcx: Open MPI's oshrun was not found; install Open MPI (scripts/install-deps) "
                 "or leave out --shmem")
    return path


def case_of(seed: int):
    n = 2 + seed % 3
    mode = "nostall" if seed % 2 else "stall"
    return n, mode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("count", type=int, metavar="N", help="number of programs (seeds)")
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--shmem", action="store_true",
                    help="random OpenSHMEM programs (vcx-shmem-fuzz-runner) instead of MPI ones")
    ap.add_argument("--start-seed", type=int, default=1)
    ap.add_argument("--delay-us", type=int, default=0,
                    help="VCX_CHAOS_DELAY_US for the tools (0: no delay injection)")
    ap.add_argument("--rounds", type=int, default=60, help="rounds per program")
    ap.add_argument("--race", action="store_true",
                    help="run under vcx-run --analysis race: the report must find no race "
                         "(not checked with --delay-us, whose line is expected instead)")
    ap.add_argument("--matches", action="store_true",
                    help="also run --analysis matches: its findings must be the matches "
                         "oracle's (MPI programs)")
    ap.add_argument("--failures", default="fuzz-failures",
                    help="where failing cases are kept (default ./fuzz-failures)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step of a case")
    args = ap.parse_args(argv)
    if args.count < 1 or args.start_seed < 0 or args.delay_us < 0 or args.rounds < 1:
        ap.error("N and --rounds must be positive, --start-seed and --delay-us not negative")

    bin_dir = os.path.join(args.build, "bin")
    runner = os.path.join(args.build, "tests", "programs",
                          "vcx-shmem-fuzz-runner" if args.shmem else "vcx-fuzz-runner")
    if args.shmem and args.rounds > 1000:
        ap.error("--shmem: at most 1000 rounds")
    for path in (os.path.join(bin_dir, "vcx-run"), os.path.join(bin_dir, "vcx-trace"), runner):
        if not os.access(path, os.X_OK):
            sys.exit(f"vcx: {path} is missing; build first (scripts/build)")
    mpiexec = find_mpiexec()
    native = ["--oshrun", find_oshrun()] if args.shmem else []

    failed = []
    started = time.monotonic()
    for seed in range(args.start_seed, args.start_seed + args.count):
        n, mode = case_of(seed)
        label = (("shmem." if args.shmem else "") + ("race." if args.race else "")
                 + ("matches." if args.matches else "")
                 + f"seed{seed}.n{n}.{mode}"
                 + (f".delay{args.delay_us}" if args.delay_us else ""))
        cmd = [sys.executable, os.path.abspath(RUN_CASE),
               "--vcx-run", os.path.join(bin_dir, "vcx-run"),
               "--vcx-trace", os.path.join(bin_dir, "vcx-trace"),
               "--mpiexec", mpiexec, *native, "--program", runner, "-n", str(n),
               "--timeout", str(args.timeout)]
        cmd += ["--stall", "never" if mode == "nostall" else "waits"]
        if args.matches:
            cmd.append("--check-matches")
        if args.race:
            # Random programs synchronise their one-sided calls: no race.
            cmd += ["--vcx-arg=--analysis", "--vcx-arg=race"]
            if args.shmem:
                # Every write that may be a flag is then a clocked call of
                # its own, which the ground truth does not log.
                cmd.append("--no-clock-check")
            if not args.delay_us:
                cmd.append("--expect-stderr=no data race found")
        env = dict(os.environ)
        env_set = {}
        if args.delay_us:
            env_set = {"VCX_CHAOS_DELAY_US": str(args.delay_us), "VCX_CHAOS_SEED": str(seed)}
            cmd.append(f"--expect-stderr=random 0..{args.delay_us} us (VCX_CHAOS_DELAY_US), "
                       f"seed {seed};")
        env.update(env_set)
        cmd += ["--", str(seed), str(args.rounds)]
        t0 = time.monotonic()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace")
        secs = time.monotonic() - t0
        if proc.returncode == 0:
            print(f"[fuzz] {label}: passed ({secs:.1f}s)", flush=True)
            continue
        failed.append(label)
        keep = os.path.join(args.failures, label)
        shutil.rmtree(keep, ignore_errors=True)
        os.makedirs(keep)
        kept = re.findall(r"^\[run_case\] kept (\S+)", proc.stdout, re.M)
        if kept and os.path.isdir(kept[-1]):
            shutil.copytree(kept[-1], os.path.join(keep, "case"))
            shutil.rmtree(kept[-1], ignore_errors=True)
        with open(os.path.join(keep, "output.txt"), "w", encoding="utf-8") as f:
            f.write(proc.stdout)
        with open(os.path.join(keep, "command.sh"), "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n# Reproduces the failing fuzz case " + label + ".\n")
            f.write(" ".join(f"{k}={shlex.quote(v)}" for k, v in env_set.items()))
            f.write((" " if env_set else "") + shlex.join(cmd) + "\n")
        os.chmod(os.path.join(keep, "command.sh"), 0o755)
        print(f"[fuzz] {label}: FAILED ({secs:.1f}s), kept in {keep}", flush=True)
        print("".join(f"  | {line}\n" for line in proc.stdout.splitlines()[-30:]), flush=True)

    total = time.monotonic() - started
    print(f"[fuzz] {args.count} program(s), {len(failed)} failed, {total:.0f}s"
          + (f": {', '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
