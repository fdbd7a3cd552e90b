#!/usr/bin/env python3
"""One integration case: a test program natively and under vcx-run.

  run_case.py --vcx-run PATH --vcx-trace PATH --mpiexec PATH [--oshrun PATH]
              --program PATH -n N [--stall waits|never] [--transport tcp|shm|mpi] [--channel shm|tcp] [--vcx-arg ARG]...
              [--expect-stderr TEXT] [--check-matches] [--timeout S] [--keep]
              [-- program args]
  run_case.py --self-check-only --mpiexec PATH --program PATH -n N [...]

Steps (each under --timeout; on timeout the whole process tree is killed):
  1. native run: mpiexec -n N program (an OpenSHMEM program: oshrun, with
     --oshrun), ground truth logged to a temp dir;
     the oracle must evaluate that ground truth without errors;
  2. tool run: vcx-run -n N --trace DIR [--stall M] -- program, ground truth
     logged to another temp dir; with --transport (--channel), vcx-run gets
     it too and every tool's statistics must name that transport (channel);
     with --expect-stderr its stderr must contain TEXT;
  3. transparency: same exit code and same sorted stdout lines;
  4. vcx-trace export DIR > trace.jsonl, then (unless --no-clock-check) the
     oracle compares the tool's clocks with those computed from the tool
     run's ground truth;
  5. with --check-matches, vcx-run also ran --analysis matches --report FILE,
     and the findings must be exactly the alternatives tests/oracle/
     matches_oracle.py computes from the tool run's ground truth.
With --self-check-only only step 1 runs (the oracle's own check of the
program's log, which needs no tool). On failure the temp dirs are kept and
their paths printed; on success they are removed (unless --keep).
"""

from __future__ import annotations

import argparse
import difflib
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# Keep the source tree free of __pycache__.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "oracle"))
import oracle  # noqa: E402
import matches_oracle  # noqa: E402

TAIL_LINES = 40


class CaseFailure(Exception):
    pass


class StepTimeout(CaseFailure):
    def __init__(self, message, step):
        super().__init__(message)
        self.step = step


class Step:
    """A finished command: its argv, exit code and captured output files."""

    def __init__(self, name, argv, code, stdout_path, stderr_path, seconds):
        self.name, self.argv, self.code = name, argv, code
        self.stdout_path, self.stderr_path = stdout_path, stderr_path
        self.seconds = seconds

    def stdout(self) -> str:
        with open(self.stdout_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stderr_tail(self) -> str:
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        tail = lines[-TAIL_LINES:]
        skipped = len(lines) - len(tail)
        head = f"  ... ({skipped} earlier lines in {self.stderr_path})\n" if skipped else ""
        return head + "".join(f"  | {x}\n" for x in tail) if tail else "  (empty)\n"

    def describe(self) -> str:
        status = "killed" if self.code is None else f"exit {self.code}"
        return (f"{self.name}: {status} after {self.seconds:.1f}s\n"
                f"  command: {shlex.join(self.argv)}\n"
                f"  stderr tail:\n{self.stderr_tail()}")


def descendants(pid: int) -> list:
    """All live descendants of pid, from /proc. MPICH's hydra proxies start
    their own sessions, so killing the launcher's process group alone can
    leave ranks behind."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # Field 4 (ppid) follows the parenthesised command name.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def kill_tree(proc: subprocess.Popen) -> None:
    tree = descendants(proc.pid)
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        for pid in tree:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        tree = [p for p in tree if os.path.exists(f"/proc/{p}")]
        if not tree:
            return
        time.sleep(0.5)


def run_step(name, argv, workdir, timeout, env_extra=None, stdout_path=None) -> Step:
    env = dict(os.environ)
    env.update(env_extra or {})
    out_path = stdout_path or os.path.join(workdir, f"{name}.stdout")
    err_path = os.path.join(workdir, f"{name}.stderr")
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            # Own session: a timeout kills launcher and ranks together.
            proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    env=env, start_new_session=True)
        except OSError as e:
            raise CaseFailure(f"{name}: cannot start {shlex.join(argv)}: {e}") from None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            step = Step(name, argv, None, out_path, err_path, time.monotonic() - start)
            raise StepTimeout(f"TIMEOUT: {name} did not finish within {timeout:g}s "
                              f"(process tree killed)\n{step.describe()}", step) from None
    step = Step(name, argv, code, out_path, err_path, time.monotonic() - start)
    print(f"[run_case] {name}: exit {code} in {step.seconds:.1f}s: {shlex.join(argv)}",
          flush=True)
    return step


def oracle_call(*args, **kwargs) -> tuple:
    out, err = io.StringIO(), io.StringIO()
    code = oracle.run(*args, out=out, err=err, **kwargs)
    return code, out.getvalue(), err.getvalue()


def self_check(gt_dir, n, label) -> None:
    code, out, err = oracle_call(gt_dir, None, n, True)
    if code != oracle.EXIT_OK:
        raise CaseFailure(f"oracle self-check of the {label} ground truth failed "
                          f"(exit {code}):\n{err}")
    print(f"[run_case] {label} ground truth: {err.strip()}", flush=True)


def sorted_lines(text: str) -> list:
    return sorted(text.splitlines())


def native_launcher(args) -> list:
    """How the program runs without vcx: mpiexec, or for OpenSHMEM programs
    oshrun with what this platform needs (Open MPI refuses root without
    --allow-run-as-root and more ranks than cores without --oversubscribe;
    shmem_finalize crashes in the rdma one-sided component: --mca osc ucx)."""
    if not args.oshrun:
        return [args.mpiexec]
    cmd = [args.oshrun]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd + ["--oversubscribe", "--mca", "osc", "ucx"]


def run_case(args, work) -> None:
    prog = [args.program] + args.program_args
    n = str(args.n)

    native_gt = os.path.join(work, "native-gt")
    os.mkdir(native_gt)
    try:
        native = run_step("native", native_launcher(args) + ["-n", n] + prog, work,
                          args.timeout, {"VCX_TEST_GT_DIR": native_gt})
    except StepTimeout as e:
        # The reference run involves no vcx: a hang there is the MPI or
        # OpenSHMEM library's (Open MPI's OpenSHMEM has hung a native run
        # of shmem_flags at 4 PEs on 2 cores about once in a few thousand
        # runs). It is run once more; vcx's run is never repeated.
        print(f"[run_case] the native run hung, running it once more:\n{e}", flush=True)
        shutil.rmtree(native_gt)
        os.mkdir(native_gt)
        native = run_step("native", native_launcher(args) + ["-n", n] + prog, work,
                          args.timeout, {"VCX_TEST_GT_DIR": native_gt})
    if native.code != 0:
        raise CaseFailure(f"the program fails natively\n{native.describe()}")
    self_check(native_gt, args.n, "native")
    if args.self_check_only:
        return

    tool_gt = os.path.join(work, "tool-gt")
    trace_dir = os.path.join(work, "trace")
    os.mkdir(tool_gt)
    os.mkdir(trace_dir)
    cmd = [args.vcx_run, "-n", n, "--trace", trace_dir]
    if args.stall:
        cmd += ["--stall", args.stall]
    cmd += args.vcx_arg
    if args.force_match:
        cmd += ["--force-match", args.force_match]
    report = os.path.join(work, "report.json")
    if args.check_matches:
        cmd += ["--analysis", "matches", "--report", report]
    expected = {}
    if args.transport:
        cmd += ["--transport", args.transport]
        expected["transport"] = args.transport
    if args.channel:
        cmd += ["--channel", args.channel]
        expected["channel"] = args.channel
    if args.expect_leases:
        expected["leases"] = True
    if expected:
        cmd.append("--keep-session")
    failures = []
    try:
        tool = run_step("tool", cmd + ["--"] + prog, work, args.timeout,
                        {"VCX_TEST_GT_DIR": tool_gt})
    except StepTimeout as e:
        # Keep going: the partial trace against the oracle shows where it hung.
        failures.append(str(e))
        tool = None

    if tool is not None and args.expect_stderr:
        with open(tool.stderr_path, encoding="utf-8", errors="replace") as f:
            if args.expect_stderr not in f.read():
                failures.append(f"vcx-run's stderr lacks {args.expect_stderr!r}\n"
                                + tool.describe())

    if tool is not None and expected:
        problem = check_stats(tool, args.n, expected)
        if problem:
            failures.append(problem + "\n" + tool.describe())

    if tool is not None and not args.force_match:
        problems = []
        if tool.code != native.code:
            problems.append(f"exit code differs: native {native.code}, "
                            f"under vcx-run {tool.code}")
        a, b = sorted_lines(native.stdout()), sorted_lines(tool.stdout())
        if a != b:
            diff = "".join(f"  {x}\n" for x in difflib.unified_diff(
                a, b, "native (sorted)", "vcx-run (sorted)", lineterm="", n=2))
            problems.append(f"stdout differs (sorted lines):\n{diff}")
        if problems:
            failures.append("transparency: " + "\n".join(problems) + "\n"
                            + native.describe() + tool.describe())

    trace_file = os.path.join(work, "trace.jsonl")
    try:
        export = run_step("export", [args.vcx_trace, "export", trace_dir], work,
                          args.timeout, stdout_path=trace_file)
    except StepTimeout as e:
        failures.append(str(e))
        raise CaseFailure("\n".join(failures)) from None
    if export.code != 0:
        failures.append(f"vcx-trace export failed\n{export.describe()}")
        raise CaseFailure("\n".join(failures))
    if args.force_match:
        # What MPI was called with: the forced receives want their source.
        forced_gt = os.path.join(work, "tool-gt-forced")
        matches_oracle.apply_forced(tool_gt, forced_gt,
                                    matches_oracle.parse_forced(args.force_match))
        tool_gt = forced_gt
    if failures:
        failures.append(progress(tool_gt, trace_file, args.n))

    if args.check_matches and not failures:
        out_m, err_m = io.StringIO(), io.StringIO()
        if matches_oracle.run(tool_gt, report, n=args.n, out=out_m, err=err_m) != 0:
            failures.append("the matches analysis differs from the oracle:\n"
                            f"{out_m.getvalue()}{err_m.getvalue()}" + tool.describe())
        else:
            print(f"[run_case] {out_m.getvalue().strip()}", flush=True)

    partial = " (of an unsuccessful tool run)" if failures else ""
    if args.no_clock_check and not failures:
        print("[run_case] clocks not compared (--no-clock-check)", flush=True)
        return
    code, out, err = oracle_call(tool_gt, trace_file, args.n, False, args.max_diffs,
                                 flag_merges=not args.no_flag_merges)
    if code == oracle.EXIT_ORACLE_ERROR:
        failures.append(f"oracle could not evaluate the tool run's ground truth{partial}:\n"
                        f"{err}" + (tool.describe() if tool else ""))
    elif code != oracle.EXIT_OK:
        cli = oracle_cli(tool_gt, trace_file, args.n, args.no_flag_merges)
        failures.append(f"clocks differ from the oracle{partial}:\n{out}{err}"
                        f"  oracle command: {shlex.join(cli)}\n"
                        + (tool.describe() if tool else ""))
    if failures:
        if code == oracle.EXIT_OK:
            failures.append(f"the trace matches the ground truth as far as both go: "
                            f"{out.strip()}")
        raise CaseFailure("\n".join(failures))
    print(f"[run_case] {out.strip()}", flush=True)


def check_stats(tool, n, expected) -> str:
    """The kept session's statistics show that every tool used what
    `expected` names ({"transport": ..., "channel": ...}) and that none
    stopped as aborted; removes the session directory. Returns a problem,
    or ""."""
    with open(tool.stderr_path, encoding="utf-8", errors="replace") as f:
        kept = [line.split("session directory kept: ", 1)[1].strip()
                for line in f if "session directory kept: " in line]
    if not kept:
        return "vcx-run did not report the kept session directory"
    session = kept[-1]
    leased = 0
    try:
        for rank in range(n):
            path = os.path.join(session, f"stats-{rank}.json")
            try:
                with open(path, encoding="utf-8") as f:
                    stats = json.load(f)
            except (OSError, ValueError) as e:
                return f"no statistics of tool rank {rank}: {e}"
            leased += stats.get("leased_acquisitions", 0)
            for key, want in expected.items():
                if key == "leases":
                    continue
                if stats.get(key) != want:
                    return f"tool rank {rank} used {key} {stats.get(key)!r}, not {want!r}"
            # Every tool but 0 tells tool 0 that it is done; on one machine
            # the shm transport carries that through shared memory.
            if (expected.get("transport") == "shm" and rank != 0
                    and not stats.get("shm_messages_sent")):
                return f"tool rank {rank} sent nothing through shared memory"
            # A run that ended well ends well for every tool too.
            if tool.code == 0 and stats.get("aborted"):
                return (f"tool rank {rank} stopped as aborted in a run that succeeded: "
                        f"{stats.get('reason')!r}")
    finally:
        shutil.rmtree(session, ignore_errors=True)
    # A program that takes an uncontended lock again and again, over shared
    # memory: some of those acquisitions must have been made under a lease.
    if expected.get("leases") and leased == 0:
        return "no lock was taken under a lease"
    return ""


def progress(gt_dir, trace_file, n) -> str:
    """How far each rank got, by its own log and by the trace: after a hang or
    a crash this points at the call where things stopped."""
    out = ["progress per rank (program's log vs trace):"]
    try:
        trace, _ = oracle.load_trace(trace_file)
    except OSError:
        trace = {}
    for rank in range(n):
        calls = []
        try:
            with open(os.path.join(gt_dir, f"gt-{rank}.jsonl"), encoding="utf-8") as f:
                calls = [json.loads(x)["call"] for x in f if x.strip()]
        except (OSError, ValueError, KeyError):
            pass
        evs = trace.get(rank, [])
        last_gt = calls[-1] if calls else "-"
        last_ev = f"{evs[-1]['call']} {evs[-1]['clock']}" if evs else "-"
        out.append(f"  rank {rank}: {len(calls)} logged calls (last {last_gt}); "
                   f"{len(evs)} trace events (last {last_ev})")
    return "\n".join(out)


def oracle_cli(gt, trace, n, no_flag_merges=False) -> list:
    return [sys.executable, os.path.join(HERE, "..", "oracle", "oracle.py"), "--gt", gt,
            "--trace", trace, "-n", str(n)] + (["--no-flag-merges"] if no_flag_merges else [])


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vcx-run")
    ap.add_argument("--vcx-trace")
    ap.add_argument("--mpiexec", required=True, help="MPICH's mpiexec")
    ap.add_argument("--oshrun", help="Open MPI's oshrun: the native launcher of an "
                    "OpenSHMEM program")
    ap.add_argument("--program", required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--stall", choices=["waits", "never"],
                    help="run vcx-run with --stall (default: vcx-run's own default)")
    ap.add_argument("--transport", choices=["tcp", "shm", "mpi"],
                    help="run vcx-run with --transport and check that the tools used it")
    ap.add_argument("--channel", choices=["shm", "tcp"],
                    help="run vcx-run with --channel and check that the tools used it")
    ap.add_argument("--vcx-arg", action="append", default=[], metavar="ARG",
                    help="a further vcx-run argument (repeat for several: --vcx-arg=--placement "
                         "--vcx-arg=split)")
    ap.add_argument("--expect-stderr", metavar="TEXT",
                    help="the tool run's stderr must contain TEXT (e.g. the notice of a "
                         "setting that must have reached the tools)")
    ap.add_argument("--expect-leases", action="store_true",
                    help="check that some lock acquisitions were made under a lease")
    ap.add_argument("--force-match", metavar="R:I=S,...",
                    help="replay with these matches forced (vcx-run --force-match): the "
                         "oracles see the forced receives as wanting the forced source, and "
                         "the program's output is not compared with the native run's")
    ap.add_argument("--check-matches", action="store_true",
                    help="run --analysis matches too and compare its findings with the "
                         "matches oracle")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per step")
    ap.add_argument("--self-check-only", action="store_true",
                    help="native run and oracle self-check only")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir on success")
    ap.add_argument("--max-diffs", type=int, default=10)
    ap.add_argument("--no-flag-merges", action="store_true",
                    help="the oracle's OpenSHMEM flag waits merge no writes "
                         "(for vcx-run --shmem-flags off)")
    ap.add_argument("--no-clock-check", action="store_true",
                    help="skip step 4's comparison with the oracle (OpenSHMEM programs under "
                         "vcx-run --analysis race, where every write that may be a flag is a "
                         "clocked call of its own, which the ground truth does not log)")
    ap.add_argument("program_args", nargs="*", help="after --")
    args = ap.parse_args(argv)
    if not args.self_check_only and not (args.vcx_run and args.vcx_trace):
        ap.error("--vcx-run and --vcx-trace are required (or --self-check-only)")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    name = os.path.basename(args.program)
    work = tempfile.mkdtemp(prefix=f"vcx-case-{name}-n{args.n}-")
    try:
        run_case(args, work)
    except CaseFailure as e:
        print(f"[run_case] FAILED: {name} -n {args.n}"
              f"{' --stall ' + args.stall if args.stall else ''}"
              f"{' --transport ' + args.transport if args.transport else ''}"
              f"{' --channel ' + args.channel if args.channel else ''}\n{e}", flush=True)
        print(f"[run_case] kept {work} (native-gt/, tool-gt/, trace/, trace.jsonl, "
              f"*.stdout, *.stderr)", flush=True)
        return 1
    except BaseException:
        print(f"[run_case] interrupted; kept {work}", flush=True)
        raise
    if args.keep:
        print(f"[run_case] kept {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"[run_case] PASSED: {name} -n {args.n}"
          f"{' (self-check only)' if args.self_check_only else ''}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
