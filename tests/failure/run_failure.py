#!/usr/bin/env python3
"""End-to-end failure tests of vcx (docs/user-guide.md, "Failures"):: real vcx-run and mpiexec runs where something goes wrong.

  run_failure.py CASE --vcx-run P --vcx-trace P --mpiexec P --program P
                 [--interceptor P] [-n N] [--seed S] [--timeout S] [--keep]

Cases:
  crash-kill, crash-segv, crash-abort, crash-exit
      one application rank dies at a random point of a communication loop
      (SIGKILL, a null pointer store, MPI_Abort(5), exit(3) without
      MPI_Finalize). No hang; vcx-run names the rank and the cause and
      returns the application job's status; the trace of every rank is
      readable, is a prefix of the trace of the same program run to its end
      (same calls, same clocks, checked there by the oracle), and the dead
      rank's trace holds every clocked call it finished (run with --stall
      waits, where the tools are never behind).
  crash-abort-nostall, crash-kill-nostall
      the same by default (--stall never), where the dead rank's trace is
      the prefix its tool had computed.
  tool-stops-stall, tool-stops-nostall
      one rank makes an annotation its tool rejects, so that tool stops the
      analysis: in either stall mode the job ends within seconds with status
      70, and vcx-run names the call each aborted rank was in and the cause
      the tool logged.
  tool-kill-abort, tool-kill-continue-env, tool-kill-continue-flag
      one vcx-toolproc process gets SIGKILL while the application runs. The
      application is never left hanging; by default its interceptors abort
      it (status 70); with VCX_ON_TOOL_FAILURE=continue or
      --on-tool-failure=continue it runs to its end with its normal output,
      and vcx-run returns 0.
  start-timeout
      VCX_TOOLPROC names a program that never gets ready: one error line
      after VCX_START_TIMEOUT, status 70, the application never starts,
      nothing left running.
  no-launcher
      the interceptor preloaded into a plain mpiexec run: same output and
      status as without it, exactly one warning line.
  bad-input
      bad flags and values, an unknown module, a missing program: one
      "vcx:" line each, the documented status, nothing started.

Random choices come from --seed (default: $VCX_FAILURE_SEED, else a fresh
one); the seed is printed so that a failure can be reproduced. Every command
runs under --timeout; a command still running then is a hang: its process
tree is killed and the case fails.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import oracle  # noqa: E402
from run_case import descendants  # noqa: E402  (the process tree, from /proc)

ITERATIONS = 12  # of crash_loop.c's loop in the crash cases
STEPS = 5        # steps per iteration, see crash_loop.c
# Ground-truth lines per iteration and before each step: Send, Recv,
# Isend + Irecv + Waitall, Allreduce, Bcast.
STEPS_LINES = 7
STEP_LINES = [0, 1, 2, 5, 6]
TAIL_LINES = 30


class CaseFailure(Exception):
    pass


# ---------------------------------------------------------------------------
# Processes


def kill_tree(proc: subprocess.Popen) -> None:
    tree = descendants(proc.pid)
    for pid in [proc.pid] + tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


class Run:
    """A finished command: exit code (None: killed after the timeout) and
    its output."""

    def __init__(self, name, argv, code, stdout, stderr, seconds):
        self.name, self.argv, self.code = name, argv, code
        self.stdout, self.stderr, self.seconds = stdout, stderr, seconds

    def describe(self) -> str:
        status = "killed after the timeout" if self.code is None else f"exit {self.code}"
        lines = self.stderr.splitlines()
        tail = lines[-TAIL_LINES:]
        more = f"  ... ({len(lines) - len(tail)} earlier lines)\n" if len(lines) > len(tail) else ""
        out_lines = self.stdout.splitlines()[-10:]
        return (f"{self.name}: {status} after {self.seconds:.1f}s\n"
                f"  command: {shlex.join(self.argv)}\n"
                f"  stdout tail:\n" + "".join(f"  | {x}\n" for x in out_lines) +
                f"  stderr tail:\n{more}" + "".join(f"  | {x}\n" for x in tail))


def start(argv, workdir, name, env_extra=None):
    env = dict(os.environ)
    for k, v in (env_extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    out = open(os.path.join(workdir, f"{name}.stdout"), "wb")
    err = open(os.path.join(workdir, f"{name}.stderr"), "wb")
    try:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
    except OSError as e:
        raise CaseFailure(f"{name}: cannot start {shlex.join(argv)}: {e}") from None
    finally:
        out.close()
        err.close()
    return proc


def finish(proc, argv, workdir, name, timeout, started) -> Run:
    remaining = max(0.1, started + timeout - time.monotonic())
    try:
        code = proc.wait(timeout=remaining)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        code = None
    with open(os.path.join(workdir, f"{name}.stdout"), encoding="utf-8", errors="replace") as f:
        stdout = f.read()
    with open(os.path.join(workdir, f"{name}.stderr"), encoding="utf-8", errors="replace") as f:
        stderr = f.read()
    run = Run(name, argv, code, stdout, stderr, time.monotonic() - started)
    print(f"[failure] {name}: {'HANG' if code is None else f'exit {code}'} in "
          f"{run.seconds:.1f}s: {shlex.join(argv)}", flush=True)
    if code is None:
        raise CaseFailure(f"HANG: {name} did not end within {timeout:g}s (process tree "
                          f"killed)\n{run.describe()}")
    return run


def run(argv, workdir, name, timeout, env_extra=None) -> Run:
    started = time.monotonic()
    proc = start(argv, workdir, name, env_extra)
    return finish(proc, argv, workdir, name, timeout, started)


def vcx_lines(text: str) -> list:
    return [x for x in text.splitlines() if x.startswith("vcx:")]


def expect(cond: bool, what: str, run_: Run = None) -> None:
    if not cond:
        raise CaseFailure(what + ("\n" + run_.describe() if run_ else ""))


# ---------------------------------------------------------------------------
# Traces


def export(args, trace_dir, work, name) -> dict:
    """vcx-trace export of trace_dir, per rank: [(call, clock), ...]."""
    r = run([args.vcx_trace, "export", trace_dir], work, name, args.timeout)
    expect(r.code == 0, f"vcx-trace export of {trace_dir} failed", r)
    events = {}
    for line in r.stdout.splitlines():
        if not line.strip():
            continue
        ev = json.loads(line)
        events.setdefault(ev["rank"], []).append(ev)
    for rank, evs in events.items():
        seqs = [e["seq"] for e in evs]
        expect(seqs == list(range(len(evs))),
               f"rank {rank}: trace seq numbers are not 0..{len(evs) - 1}: {seqs[:10]}")
    return {rank: [(e["call"], e["clock"]) for e in evs] for rank, evs in events.items()}


def gt_lines(gt_dir, rank) -> list:
    path = os.path.join(gt_dir, f"gt-{rank}.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        # A line cut short by the death of its writer does not count.
        return [x for x in f.read().split("\n")[:-1] if x.strip()]


def reference_run(args, work):
    """The crash program run to its end under vcx-run: its trace, checked
    against the oracle, and its ground truth."""
    gt = os.path.join(work, "reference-gt")
    trace = os.path.join(work, "reference-trace")
    os.mkdir(gt)
    prog = [args.program, "none", "-1", "-1", "-1", str(ITERATIONS)]
    r = run([args.vcx_run, "-n", str(args.n), "--trace", trace, "--"] + prog, work, "reference",
            args.timeout, {"VCX_TEST_GT_DIR": gt})
    expect(r.code == 0, "the reference run (nobody dies) failed", r)
    expect(r.stderr == "", "a clean run under vcx-run must print nothing on stderr", r)
    check_output(r, args.n, ITERATIONS)
    ev = export(args, trace, work, "reference-export")
    o, e = io.StringIO(), io.StringIO()
    with open(os.path.join(work, "reference.jsonl"), "w", encoding="utf-8") as f:
        for rank in sorted(ev):
            for seq, (call, clock) in enumerate(ev[rank]):
                f.write(json.dumps({"rank": rank, "seq": seq, "call": call, "clock": clock}) + "\n")
    code = oracle.run(gt, os.path.join(work, "reference.jsonl"), args.n, out=o, err=e)
    expect(code == oracle.EXIT_OK, f"the reference trace differs from the oracle:\n"
                                   f"{o.getvalue()}{e.getvalue()}")
    res = oracle.evaluate(oracle.load_ground_truth(gt, args.n), args.n)
    # Per rank: for each ground-truth line, whether it is a clocked call.
    clocked_lines = {rank: {c.line for c in res.clocked[rank]} for rank in range(args.n)}
    return ev, gt, clocked_lines


# ---------------------------------------------------------------------------
# Cases


CAUSES = {
    # how: (pattern of vcx-run's line about the victim, statuses mpiexec may report)
    "kill": (r"application ranks? (?:\d+, )*{v}(?:, \d+)* ended without notice \(.*\)", {9}),
    "segv": (r"application rank {v} was killed by signal 11 \(SIGSEGV\)", {11, 9}),
    "abort": (r"application rank {v} called MPI_Abort with error code 5", {5}),
    "exit": (r"application rank {v} exited with status 3 without calling MPI_Finalize", {3, 9}),
}


def case_crash(args, work, how, stall="waits"):
    rng = random.Random(args.seed)
    victim = rng.randrange(args.n)
    iteration = rng.randrange(ITERATIONS)
    step = rng.randrange(STEPS)
    print(f"[failure] rank {victim} dies ({how}) before step {step} of iteration {iteration}",
          flush=True)
    ref, ref_gt, clocked_lines = reference_run(args, work)

    gt = os.path.join(work, "crash-gt")
    trace = os.path.join(work, "crash-trace")
    os.mkdir(gt)
    prog = [args.program, how, str(victim), str(iteration), str(step), str(ITERATIONS)]
    r = run([args.vcx_run, "-n", str(args.n), "--stall", stall, "--trace", trace, "--"] + prog,
            work, "crash", args.timeout, {"VCX_TEST_GT_DIR": gt})

    pattern, statuses = CAUSES[how]
    expect(r.code not in (None, 0), "vcx-run returned 0 although a rank died", r)
    expect(r.code in statuses, f"vcx-run returned {r.code}; mpiexec reports one of "
                               f"{sorted(statuses)} for this death", r)
    ended = re.findall(r"^vcx: the application job ended with exit status (\d+)$", r.stderr, re.M)
    expect(ended == [str(r.code)], "vcx-run must report the application job's status once, "
                                   "and return it", r)
    expect(re.search("^vcx: " + pattern.format(v=victim) + "$", r.stderr, re.M) is not None,
           f"vcx-run does not name rank {victim} and how it ended", r)
    named = re.findall(r"^vcx: application rank (\d+) (?:was killed|called MPI_Abort|exited)",
                       r.stderr, re.M)
    expect(named in ([], [str(victim)]), f"vcx-run blames ranks {named}, not rank {victim}", r)
    expect("aborting the job" not in r.stderr and "aborted by vcx" not in r.stderr,
           "an interceptor blamed its tool for another rank's death", r)

    got = export(args, trace, work, "crash-export")
    for rank in range(args.n):
        events = got.get(rank, [])
        want = ref.get(rank, [])
        expect(events == want[:len(events)],
               f"rank {rank}: the trace after the crash is not a prefix of the complete run's:\n"
               f"  crash: {events}\n  complete: {want[:len(events) + 1]}")
        logged = gt_lines(gt, rank)
        ref_logged = gt_lines(ref_gt, rank)
        expect(logged == ref_logged[:len(logged)],
               f"rank {rank}: the program's log is not a prefix of the complete run's")
        finished = sum(1 for i in range(len(logged)) if i in clocked_lines[rank])
        print(f"[failure] rank {rank}: {len(logged)} calls logged ({finished} clocked), "
              f"{len(events)} in the trace", flush=True)
        # One call may be cut short after its event reached the tool.
        expect(len(events) <= finished + 1,
               f"rank {rank}: the trace has {len(events)} calls, the program finished only "
               f"{finished} clocked calls")
        if rank == victim:
            # The victim dies between two calls: everything it finished is
            # in its trace, nothing more.
            expected_lines = iteration * STEPS_LINES + STEP_LINES[step]
            expect(len(logged) == expected_lines,
                   f"rank {rank} logged {len(logged)} calls, expected {expected_lines}")
            # Without stalls the tools may lag behind: the analysis stops
            # when the rank dies, and its trace holds what its tool had
            # computed by then (a prefix, checked above).
            if stall != "waits":
                continue
            expect(len(events) == finished,
                   f"the dead rank {rank}: its trace has {len(events)} clocked calls, it "
                   f"finished {finished}")


def tool_pids(vcx_run_pid: int) -> dict:
    """vcx-toolproc processes under vcx-run, by their tool rank (PMI_RANK)."""
    out = {}
    for pid in descendants(vcx_run_pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if not argv or not os.path.basename(argv[0]).startswith(b"vcx-toolproc"):
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(x.split(b"=", 1) for x in f.read().split(b"\0") if b"=" in x)
        except OSError:
            continue
        if b"PMI_RANK" in env:
            out[int(env[b"PMI_RANK"])] = pid
    return out


def wait_until(cond, what, timeout, proc):
    deadline = time.monotonic() + timeout
    while not cond():
        if proc.poll() is not None:
            raise CaseFailure(f"vcx-run ended (exit {proc.returncode}) while waiting for {what}")
        if time.monotonic() > deadline:
            raise CaseFailure(f"gave up waiting for {what} after {timeout:g}s")
        time.sleep(0.02)


def case_tool_kill(args, work, policy):
    rng = random.Random(args.seed)
    target = rng.randrange(args.n)
    after = rng.randrange(10, 200)  # ground-truth lines of rank 0 before the kill
    print(f"[failure] tool rank {target} gets SIGKILL once application rank 0 has made "
          f"{after} calls", flush=True)
    gt = os.path.join(work, "gt")
    os.mkdir(gt)
    stopfile = os.path.join(work, "stop")
    env = {"VCX_TEST_GT_DIR": gt, "VCX_ON_TOOL_FAILURE": None}
    flags = []
    if policy == "continue-env":
        env["VCX_ON_TOOL_FAILURE"] = "continue"
    elif policy == "continue-flag":
        flags = ["--on-tool-failure=continue"]
    limit = 100000
    argv = ([args.vcx_run, "-n", str(args.n)] + flags +
            ["--", args.program, "stop", "-1", "-1", "-1", str(limit), stopfile])
    started = time.monotonic()
    proc = start(argv, work, "tool-kill", env)
    try:
        wait_until(lambda: len(gt_lines(gt, 0)) >= after, f"{after} calls of rank 0",
                   args.timeout / 2, proc)
        pids = tool_pids(proc.pid)
        expect(sorted(pids) == list(range(args.n)), f"tool processes found: {pids}")
        os.kill(pids[target], signal.SIGKILL)
        print(f"[failure] killed tool rank {target} (pid {pids[target]})", flush=True)
    finally:
        # The application loops until this file exists.
        open(stopfile, "w").close()
    r = finish(proc, argv, work, "tool-kill", args.timeout, started)

    expect("vcx: the tool job failed" in r.stderr, "vcx-run does not report the tool failure", r)
    if policy == "abort":
        expect(r.code == 70, f"expected status 70 (the interceptors abort the job), got {r.code}",
               r)
        # The interceptor's own line may be lost when mpiexec takes the job
        # down before forwarding it; vcx-run's summary repeats it.
        expect(re.search(r"^vcx: application ranks? [\d, ]+ (?:was|were) aborted by vcx with "
                         r"status 70 in MPI_\w+ because the tool process failed", r.stderr, re.M)
               is not None, "vcx-run does not say that vcx aborted the application, and in "
                            "which call", r)
        return
    noticed = re.findall(r"^vcx: rank (\d+): the tool process stopped", r.stderr, re.M)
    expect(noticed, "no interceptor reports that its tool stopped", r)
    expect(r.code == 0, f"with the continue policy vcx-run must return the application's "
                        f"status 0, got {r.code}", r)
    expect(all("running on without analysis" in x
               for x in r.stderr.splitlines() if re.match(r"vcx: rank \d+: the tool", x)),
           "an interceptor did not run on", r)
    check_output(r, args.n, None)


def check_output(r, n, iterations):
    """crash_loop.c's last lines: every rank, the same number of iterations
    (`iterations` if given), the right sums, and SIGUSR1 handled by the
    program's own handler on rank 0 only."""
    lines = sorted(r.stdout.splitlines())
    m = [re.fullmatch(r"rank (\d+): (\d+) iterations, allreduce sum (-?\d+), "
                      r"SIGUSR1 handled (\d+)", x) for x in lines]
    expect(all(m) and [int(x.group(1)) for x in m] == list(range(n)),
           "the application's normal output is incomplete", r)
    iters = {int(x.group(2)) for x in m}
    expect(len(iters) == 1, "the ranks disagree on the number of iterations", r)
    n_it = iters.pop()
    expect(iterations is None or n_it == iterations, f"{n_it} iterations, not {iterations}", r)
    want = sum(n * i + n * (n - 1) // 2 for i in range(n_it))
    expect(all(int(x.group(3)) == want for x in m), f"wrong allreduce sums (want {want})", r)
    usr1 = [int(x.group(4)) for x in m]
    expect(usr1 == [1 if n_it > 1 else 0] + [0] * (n - 1),
           f"SIGUSR1 handled {usr1} times per rank: the program's handler must see it once", r)


def case_tool_stops(args, work, mode):
    """A tool stops the analysis on its own (it rejects an annotation): the
    application learns it within seconds, in either stall mode, and vcx-run
    names the call each aborted rank was in and the cause the tool logged."""
    rng = random.Random(args.seed)
    victim, iteration, step = rng.randrange(args.n), rng.randrange(1, 4), rng.randrange(5)
    print(f"[failure] rank {victim} annotates a signal to a rank outside the job at iteration "
          f"{iteration} step {step} ({mode})", flush=True)
    gt = os.path.join(work, "gt")
    os.mkdir(gt)
    flags = ["--stall", "never" if mode == "nostall" else "waits"]
    # Far more iterations than the run may take: only vcx can end it in time.
    argv = ([args.vcx_run, "-n", str(args.n)] + flags +
            ["--", args.program, "annotate", str(victim), str(iteration), str(step), "1000000"])
    started = time.monotonic()
    r = run(argv, work, "tool-stops", args.timeout, {"VCX_TEST_GT_DIR": gt})
    took = time.monotonic() - started
    expect(r.code == 70, f"expected status 70 (the interceptors abort the job), got {r.code}", r)
    expect(took < 15, f"the job took {took:.1f} s to end after its tool stopped", r)
    reason = r"rank \d+ is not a rank of the communicator"
    expect(re.search(rf"^vcx-tool\[{victim}\]: critical: .*{reason}", r.stderr, re.M)
           is not None, f"tool {victim} does not say why it stopped", r)
    # ... and names the call it was reading, with its source line.
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crash_loop.c")
    with open(source) as f:
        line = next(i for i, text in enumerate(f, 1) if "/* the rejected call */" in text)
    expect(re.search(rf"^vcx-tool\[{victim}\]: critical: .*\(in vcx_annotate_\w+ at "
                     rf"\S*crash_loop\.c:{line}, event \d+ of rank {victim}\)$", r.stderr, re.M)
           is not None,
           f"tool {victim} does not name the call and its line (crash_loop.c:{line})", r)
    summary = re.findall(r"^vcx: application ranks? [\d, ]+ (?:was|were) aborted by vcx with "
                         r"status 70 in (MPI_\w+) because the tool process failed \((.*)\)",
                         r.stderr, re.M)
    expect(summary, "vcx-run does not name the call and the tool's cause", r)
    expect(all(re.search(reason, cause) for _, cause in summary),
           "vcx-run's summary does not give the cause the tool logged", r)


def case_start_timeout(args, work):
    fake = os.path.join(work, "never-ready")
    marker = f"vcx-failure-never-ready-{os.getpid()}"
    with open(fake, "w") as f:
        # Ignores its arguments and never writes the ready file.
        f.write(f"#!/bin/sh\nexec sleep 600 # {marker}\n")
    os.chmod(fake, 0o755)
    gt = os.path.join(work, "gt")
    os.mkdir(gt)
    timeout_s = 2
    r = run([args.vcx_run, "-n", str(args.n), "--", args.program, "none", "-1", "-1", "-1", "3"],
            work, "start-timeout", args.timeout,
            {"VCX_TOOLPROC": fake, "VCX_START_TIMEOUT": str(timeout_s), "VCX_TEST_GT_DIR": gt})
    expect(r.code == 70, f"expected status 70, got {r.code}", r)
    lines = vcx_lines(r.stderr)
    expect(len(lines) == 1, f"expected one vcx: line, got {len(lines)}", r)
    expect(f"not ready after {timeout_s} s" in lines[0] and fake in lines[0]
           and "VCX_START_TIMEOUT" in lines[0],
           "the error must name the tool program, the wait and what to change", r)
    expect(r.stderr.strip() == lines[0], "nothing but the error line on stderr", r)
    # The start timeout plus the stop's grace (SIGTERM, 5 s, SIGKILL) at most.
    expect(r.seconds < timeout_s + 5 + 5, f"took {r.seconds:.1f}s", r)
    expect(os.listdir(gt) == [], "the application started although the tools were not ready", r)
    left = [p for p in os.listdir("/proc") if p.isdigit() and marker_in(p, marker)]
    expect(not left, f"processes left running: {left}")


def marker_in(pid, marker) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return marker.encode() in f.read()
    except OSError:
        return False


def case_no_launcher(args, work):
    prog = [args.program, "none", "-1", "-1", "-1", "4"]
    plain = run([args.mpiexec, "-n", str(args.n)] + prog, work, "plain", args.timeout)
    expect(plain.code == 0, "the program fails without vcx", plain)
    env = {"LD_PRELOAD": args.interceptor, "VCX_SESSION_DIR": None, "VCX_SESSION_TOKEN": None}
    check_output(plain, args.n, 4)
    pre = run([args.mpiexec, "-n", str(args.n)] + prog, work, "preloaded", args.timeout, env)
    expect(pre.code == plain.code, f"status {pre.code}, without the interceptor {plain.code}", pre)
    expect(sorted(pre.stdout.splitlines()) == sorted(plain.stdout.splitlines()),
           "the output differs from the run without the interceptor", pre)
    warnings = [x for x in pre.stderr.splitlines() if "vcx" in x]
    expect(len(warnings) == 1 and warnings[0].startswith("vcx: ") and "vcx-run" in warnings[0],
           f"expected exactly one warning line, got {warnings}", pre)
    expect(pre.stderr.strip() == warnings[0], "nothing but the warning on stderr", pre)


def case_bad_input(args, work):
    n = str(args.n)
    prog = [args.program, "none", "-1", "-1", "-1", "2"]
    not_exec = os.path.join(work, "not-executable")
    with open(not_exec, "w") as f:
        f.write("data\n")
    cases = [
        # (name, argv after vcx-run, extra env, status, text the line must hold)
        ("unknown flag", ["--frobnicate", "-n", n] + prog, {}, 64, "--frobnicate"),
        ("':' without a program", ["-n", n] + prog + [":"], {}, 64, "program"),
        ("-n 0", ["-n", "0"] + prog, {}, 64, "'0'"),
        ("-n not a number", ["-n", "four"] + prog, {}, 64, "'four'"),
        ("-n negative", ["-n", "-2"] + prog, {}, 64, "'-2'"),
        ("no program", ["-n", n], {}, 64, "program"),
        ("unknown module", ["-n", n, "--modules", "nosuch"] + prog, {}, 64, "nosuch"),
        ("bad module name", ["-n", n, "--modules", "a/b"] + prog, {}, 64, "a/b"),
        ("bad --on-tool-failure", ["-n", n, "--on-tool-failure=maybe"] + prog, {}, 64, "maybe"),
        ("bad VCX_ON_TOOL_FAILURE", ["-n", n] + prog, {"VCX_ON_TOOL_FAILURE": "maybe"}, 64,
         "maybe"),
        ("bad VCX_START_TIMEOUT", ["-n", n] + prog, {"VCX_START_TIMEOUT": "soon"}, 64, "soon"),
        ("program not found", ["-n", n, os.path.join(work, "no-such-program")], {}, 127,
         "no-such-program"),
        ("program not executable", ["-n", n, not_exec], {}, 127, "not-executable"),
    ]
    gt = os.path.join(work, "gt")
    os.mkdir(gt)
    problems = []
    for i, (name, argv, env, status, text) in enumerate(cases):
        env = dict(env)
        env["VCX_TEST_GT_DIR"] = gt
        env.setdefault("VCX_ON_TOOL_FAILURE", None)
        r = run([args.vcx_run] + argv, work, f"bad-input-{i}", args.timeout, env)
        lines = r.stderr.splitlines()
        if r.code != status:
            problems.append(f"{name}: status {r.code}, expected {status}\n{r.describe()}")
        elif len(lines) != 1 or not lines[0].startswith("vcx: ") or text not in lines[0]:
            problems.append(f"{name}: expected one 'vcx:' line naming {text!r}\n{r.describe()}")
        elif r.stdout:
            problems.append(f"{name}: unexpected output on stdout\n{r.describe()}")
        else:
            print(f"[failure] {name}: {lines[0]}", flush=True)
    if os.listdir(gt):
        problems.append(f"the program ran in a bad-input case: {os.listdir(gt)}")
    expect(not problems, "\n".join(problems))


CASES = {
    "crash-kill": lambda a, w: case_crash(a, w, "kill"),
    "crash-segv": lambda a, w: case_crash(a, w, "segv"),
    "crash-abort": lambda a, w: case_crash(a, w, "abort"),
    "crash-exit": lambda a, w: case_crash(a, w, "exit"),
    "crash-abort-nostall": lambda a, w: case_crash(a, w, "abort", "never"),
    "crash-kill-nostall": lambda a, w: case_crash(a, w, "kill", "never"),
    "tool-kill-abort": lambda a, w: case_tool_kill(a, w, "abort"),
    "tool-kill-continue-env": lambda a, w: case_tool_kill(a, w, "continue-env"),
    "tool-kill-continue-flag": lambda a, w: case_tool_kill(a, w, "continue-flag"),
    "tool-stops-stall": lambda a, w: case_tool_stops(a, w, "stall"),
    "tool-stops-nostall": lambda a, w: case_tool_stops(a, w, "nostall"),
    "start-timeout": case_start_timeout,
    "no-launcher": case_no_launcher,
    "bad-input": case_bad_input,
}


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--vcx-trace", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--program", required=True, help="crash_loop.c built")
    ap.add_argument("--interceptor", help="libvcx-mpi-intercept.so (no-launcher)")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per command")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args(argv)
    if args.seed is None:
        env_seed = os.environ.get("VCX_FAILURE_SEED")
        args.seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1 << 31)
    if args.case == "no-launcher" and not args.interceptor:
        ap.error("no-launcher needs --interceptor")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    print(f"[failure] case {args.case}, seed {args.seed} (repeat with VCX_FAILURE_SEED="
          f"{args.seed})", flush=True)
    work = tempfile.mkdtemp(prefix=f"vcx-failure-{args.case}-")
    try:
        CASES[args.case](args, work)
    except CaseFailure as e:
        print(f"FAILED: {args.case} (seed {args.seed}; files kept in {work})\n{e}", flush=True)
        return 1
    print(f"[failure] {args.case}: ok", flush=True)
    if args.keep:
        print(f"[failure] files kept in {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
