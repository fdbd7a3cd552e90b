#!/usr/bin/env python3
"""One deadlock-analysis case: a program of tests/programs/deadlock under
vcx-run --analysis deadlock, its reported deadlock against the one written
into its source.

  deadlock_case.py --vcx-run PATH --mpiexec PATH [--oshrun PATH] --program PATH --source PATH
                   -n N [--stall waits|never] [--chaos-delay-us D --chaos-seed S]
                   [--timeout S] [--keep]

Expected deadlock (the oracle, written by hand from the MPI standard's
semantics, never computed by vcx):

  * A comment /* deadlock: RANKS */ on the line of an MPI call says that
    the ranks RANKS stay blocked in that call for ever; RANKS is a list of
    world ranks, or "all", or "rest" (every rank but 0). A rank may be
    marked on several lines when which of them it stays in depends on the
    MPI library (a collective mismatch).
  * The expected deadlocked ranks are those marked, below N. A program
    without marks never deadlocks.
  * A comment /* mismatch: RANKS */ on the line of a collective call says
    that it is the ranks' call at the first collective whose members do not
    all make the same call (MPI 4.0, 6.14): the report must have one
    "collective-mismatch" finding with exactly the marked ranks below N,
    each at its marked line. A program without such marks has none.
  * A comment /* potential: RANKS */ on the line of an MPI call says that,
    were standard sends not buffered (MPI 4.0, 3.5 allows it), the ranks
    RANKS would stay blocked in that call for ever, though the run
    finishes: the report must have one "potential-deadlock" finding with
    exactly the marked ranks below N, each at its marked line, and vcx-run
    exits with the program's status (0). A program without such marks has
    none.
  * A comment /* vcx-run-options: OPTIONS */ adds OPTIONS to vcx-run's
    command line.

Steps (each under --timeout seconds; on timeout the process tree is killed):
  1. a program without marks runs natively (mpiexec -n N; an OpenSHMEM
     program, with --oshrun: oshrun as run_case.py runs it) and must exit 0;
     a deadlocking one is not run natively (it would hang);
  2. tool run: vcx-run --analysis deadlock --report OUT.json [--stall M]
     -n N program, with VCX_CHAOS_DELAY_US=D and VCX_CHAOS_SEED=S for
     --chaos-delay-us;
  3. a deadlocking program: vcx-run exits 65, its report has exactly one
     finding with analysis "deadlock", whose ranks are the expected ones, and
     each rank's call "at" names a line marked for that rank; stderr says
     "vcx: deadlock:" with every rank's line. A program without marks: exit
     0 and no deadlock finding.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MARK = re.compile(r"/\*\s*deadlock:\s*([^*]*)\*/")
MISMATCH_MARK = re.compile(r"/\*\s*mismatch:\s*([^*]*)\*/")
POTENTIAL_MARK = re.compile(r"/\*\s*potential:\s*([^*]*)\*/")
OPTIONS_MARK = re.compile(r"/\*\s*vcx-run-options:\s*([^*]*)\*/")
EXIT_DEADLOCK = 65

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_case import native_launcher  # noqa: E402  (the same native launch as the other tests)


class CaseFailure(Exception):
    pass


def expected_lines(source: str, n: int, mark=MARK) -> dict:
    """world rank -> the set of "basename:line" it may stay blocked at (or,
    with MISMATCH_MARK, it calls the mismatched collective at)."""
    base = os.path.basename(source)
    out: dict = {}
    with open(source, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            m = mark.search(text)
            if not m:
                continue
            ranks = set()
            for word in m.group(1).split():
                if word == "all":
                    ranks |= set(range(n))
                elif word == "rest":
                    ranks |= set(range(1, n))
                else:
                    ranks.add(int(word))
            for r in ranks:
                if r < n:
                    out.setdefault(r, set()).add(f"{base}:{number}")
    return out


def kill_tree(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_step(name, argv, work, timeout, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    err_path = os.path.join(work, f"{name}.stderr")
    start = time.monotonic()
    with open(os.path.join(work, f"{name}.stdout"), "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            code = None
    with open(err_path, encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    print(f"[deadlock_case] {name}: exit {code} in {time.monotonic() - start:.1f}s: "
          f"{shlex.join(argv)}", flush=True)
    if code is None:
        raise CaseFailure(f"TIMEOUT: {name} did not end within {timeout:g}s\n{stderr}")
    return code, stderr


def check(args, work) -> None:
    expected = expected_lines(args.source, args.n)
    if not expected:
        code, err = run_step("native", native_launcher(args) + ["-n", str(args.n), args.program],
                             work,
                             args.timeout)
        if code != 0:
            raise CaseFailure(f"the program fails natively (exit {code}):\n{err}")
    report = os.path.join(work, "report.json")
    cmd = [args.vcx_run, "--analysis", "deadlock", "--report", report]
    with open(args.source, encoding="utf-8") as f:
        for m in OPTIONS_MARK.finditer(f.read()):
            cmd += m.group(1).split()
    if args.stall:
        cmd += ["--stall", args.stall]
    cmd += ["-n", str(args.n), args.program]
    env = {}
    if args.chaos_delay_us:
        env = {"VCX_CHAOS_DELAY_US": str(args.chaos_delay_us),
               "VCX_CHAOS_SEED": str(args.chaos_seed)}
    code, err = run_step("tool", cmd, work, args.timeout, env)
    with open(report, encoding="utf-8") as f:
        mine = [x for x in json.load(f)["findings"] if x.get("analysis") == "deadlock"]
    findings = [x for x in mine if x.get("kind") == "deadlock"]
    mismatches = [x for x in mine if x.get("kind") == "collective-mismatch"]
    potential = [x for x in mine if x.get("kind") == "potential-deadlock"]
    if len(findings) + len(mismatches) + len(potential) != len(mine):
        raise CaseFailure(f"findings of unknown kinds: {mine}")
    check_mismatch(args, mismatches, err)
    check_marked(args, potential, err, POTENTIAL_MARK, "potential-deadlock",
                 "vcx: potential deadlock:")
    if expected_lines(args.source, args.n, POTENTIAL_MARK) and code != 0:
        raise CaseFailure(f"a potential deadlock: exit {code}, expected the program's 0\n{err}")
    if not expected:
        if code != 0 or findings or "vcx: deadlock:" in err:
            raise CaseFailure(f"a program that never deadlocks: exit {code}, findings "
                              f"{findings}\n{err}")
        return
    problems = []
    if code != EXIT_DEADLOCK:
        problems.append(f"exit {code}, expected {EXIT_DEADLOCK}")
    if len(findings) != 1:
        problems.append(f"{len(findings)} deadlock findings, expected 1")
    else:
        calls = {c["rank"]: c for c in findings[0]["calls"]}
        if set(calls) != set(expected):
            problems.append(f"deadlocked ranks {sorted(calls)}, expected {sorted(expected)}")
        for rank, call in calls.items():
            at = os.path.basename(call.get("at", "")) if call.get("at") else ""
            if rank in expected and at not in expected[rank]:
                problems.append(f"rank {rank} reported at '{call.get('at')}', expected one of "
                                f"{sorted(expected[rank])}")
            if at and at not in err:
                problems.append(f"stderr does not name rank {rank}'s line {at}")
    if "vcx: deadlock:" not in err:
        problems.append("stderr has no 'vcx: deadlock:' report")
    if problems:
        raise CaseFailure("\n".join(problems) + f"\nfindings: {json.dumps(findings)}\n{err}")


def check_mismatch(args, mismatches, err) -> None:
    check_marked(args, mismatches, err, MISMATCH_MARK, "collective-mismatch",
                 "vcx: collective mismatch:")


def check_marked(args, found, err, mark, kind, headline) -> None:
    """At most one finding of `kind`, with exactly the ranks `mark` marks
    below N, each at one of its marked lines, and `headline` on stderr."""
    expected = expected_lines(args.source, args.n, mark)
    if not expected:
        if found or headline in err:
            raise CaseFailure(f"no {kind} expected, reported {found}\n{err}")
        return
    problems = []
    if len(found) != 1:
        problems.append(f"{len(found)} {kind} findings, expected 1")
    else:
        calls = {c["rank"]: c for c in found[0]["calls"]}
        if set(calls) != set(expected):
            problems.append(f"{kind} calls of ranks {sorted(calls)}, expected "
                            f"{sorted(expected)}")
        for rank, call in calls.items():
            at = os.path.basename(call.get("at", "")) if call.get("at") else ""
            if rank in expected and at not in expected[rank]:
                problems.append(f"rank {rank}'s {kind} call reported at "
                                f"'{call.get('at')}', expected one of {sorted(expected[rank])}")
            if at and at not in err:
                problems.append(f"stderr does not name rank {rank}'s line {at}")
    if headline not in err:
        problems.append(f"stderr has no '{headline}' report")
    if problems:
        raise CaseFailure("\n".join(problems) + f"\nfindings: {json.dumps(found)}\n{err}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vcx-run", required=True)
    p.add_argument("--mpiexec", required=True)
    p.add_argument("--oshrun", help="Open MPI's oshrun, for OpenSHMEM programs")
    p.add_argument("--program", required=True)
    p.add_argument("--source", required=True)
    p.add_argument("-n", type=int, required=True)
    p.add_argument("--stall", choices=["waits", "never"])
    p.add_argument("--chaos-delay-us", type=int, default=0)
    p.add_argument("--chaos-seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--keep", action="store_true")
    args = p.parse_args()
    work = tempfile.mkdtemp(prefix="vcx-deadlock-case-")
    try:
        check(args, work)
    except CaseFailure as e:
        print(f"FAIL: {e}\n(files kept in {work})", file=sys.stderr)
        return 1
    if args.keep:
        print(f"files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
