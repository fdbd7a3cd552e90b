#!/usr/bin/env python3
"""One race-analysis case: a program of tests/programs/race (or, with
--oshrun, an OpenSHMEM program of tests/programs/race_shmem) natively and
under vcx-run --analysis race, its reported races against the races written
into its source.

  race_case.py --vcx-run PATH (--mpiexec PATH | --oshrun PATH) --program PATH
               --source PATH -n N
               [--stall waits|never] [--chaos-delay-us D --chaos-seed S]
               [--expect-exit-code-with K] [--local-accesses] [--timeout S] [--keep]
  race_case.py --list-expected --source PATH [--source PATH]...

Expected races (the oracle, written by hand from the MPI standard's
semantics, or the OpenSHMEM specification's, never computed by vcx):

  * A comment /* race: TAG */ on the source line of an MPI (OpenSHMEM) call
    marks that call as one side of the race TAG; several tags may share a
    comment (/* race: a b */). Each RMA (one-sided) call of a program is on
    one line, and the tool reports a race as the pair of lines of its two
    calls.
  * Every tag occurs exactly twice in the file: on two lines, the race
    between those two lines; or twice on one line (/* race: f f */), a line
    that races with itself (the same call run twice, e.g. in a loop, or by
    two ranks).
  * The expected set of a program is the set of unordered pairs
    {(basename of the source, line), (basename, line)} over its tags. Two
    tags naming the same pair of lines are an error (the pair would be
    counted once). A program without marks is race-free: its expected set
    is empty.

Steps (each under --timeout seconds; on timeout the whole process tree is
killed):
  1. native run: mpiexec -n N program must exit 0; with --oshrun (an
     OpenSHMEM program) oshrun instead, with what this platform needs, as
     run_case.py runs OpenSHMEM programs natively;
  2. tool run: vcx-run --analysis race --report OUT.json [--stall M] -n N
     -- program must exit 0 (the program's own status; vcx-run tells an
     OpenSHMEM program by itself); with
     --chaos-delay-us D it runs with VCX_CHAOS_DELAY_US=D and
     VCX_CHAOS_SEED=S in its environment;
  3. the findings of OUT.json with analysis "race" (report version 1: a
     "findings" list, each with exactly two "accesses" that have "file" and
     "line") give the set of unordered pairs {(basename(file), line), ...},
     which must equal the expected set; otherwise the missing and the
     unexpected pairs are printed with the tool's stderr;
  4. vcx-run's human report on stderr names both "basename:line" of every
     expected pair, and its last count of races ("N data race(s)", or "no
     data race") says as many races as expected ("no data race" or 0 for a
     race-free program); its last line says that the program's loads and
     stores were checked on every rank with --local-accesses (a program
     built with a vcx compiler wrapper), else that they were not;
  5. with --expect-exit-code-with K: the tool run once more with
     --race-exit-code K must exit K if the program has expected races, else
     0.
On failure the temp dir (reports, stdout and stderr of every step) is kept
and its path printed; on success it is removed (unless --keep).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# The same process handling as the clock cases: starting a run the way it
# runs without vcx, and killing a step's whole tree on a timeout.
from run_case import kill_tree, native_launcher  # noqa: E402  (this script's folder)

TAIL_LINES = 60
MARK = re.compile(r"/\*\s*race:([^*]*)\*/")
# A tag: letters, digits, '_', '-', '.'.
TAG = re.compile(r"^[A-Za-z0-9_.-]+$")
# The counts in vcx-run's human report.
COUNT = re.compile(r"\b(\d+)\s+(?:distinct\s+)?data[- ]races?\b"
                   r"|\bno\s+(?:distinct\s+)?data[- ]races?\b", re.IGNORECASE)


class CaseFailure(Exception):
    pass


# ---------------------------------------------------------------- marks


def pair(a, b) -> tuple:
    """An unordered pair of (file, line) as a sorted tuple."""
    return (a, b) if a <= b else (b, a)


def expected_pairs(source: str) -> set:
    """The expected races of a source file: {((file, line), (file, line))}.
    Raises CaseFailure if the marks break the convention."""
    base = os.path.basename(source)
    lines_of = {}  # tag -> [line, ...], one entry per occurrence
    try:
        with open(source, encoding="utf-8") as f:
            text = f.read().splitlines()
    except OSError as e:
        raise CaseFailure(f"cannot read the source {source}: {e}") from None
    for number, line in enumerate(text, start=1):
        marks = MARK.findall(line)
        if len(marks) > 1:
            raise CaseFailure(f"{base}:{number}: more than one race comment on the line "
                              f"(put all its tags in one)")
        for body in marks:
            tags = body.split()
            if not tags:
                raise CaseFailure(f"{base}:{number}: race comment without a tag")
            for tag in tags:
                if not TAG.match(tag):
                    raise CaseFailure(f"{base}:{number}: bad race tag {tag!r}")
                lines_of.setdefault(tag, []).append(number)
    # A comment that looks like a mark but is none ("// race: a",
    # "/* race : a */") would silently be missed.
    for number, line in enumerate(text, start=1):
        if re.search(r"(/\*|//)\s*race\s*:", MARK.sub("", line)):
            raise CaseFailure(f"{base}:{number}: malformed race comment: {line.strip()!r}")
    pairs, by_pair = set(), {}
    for tag, where in sorted(lines_of.items()):
        if len(where) != 2:
            raise CaseFailure(f"{base}: race tag {tag!r} occurs {len(where)} time(s) "
                              f"(lines {', '.join(map(str, where))}); every tag must occur "
                              f"exactly twice")
        p = pair((base, where[0]), (base, where[1]))
        if p in by_pair:
            raise CaseFailure(f"{base}: race tags {by_pair[p]!r} and {tag!r} name the same "
                              f"pair of lines {where[0]} and {where[1]}")
        by_pair[p] = tag
        pairs.add(p)
    return pairs


def show_pair(p) -> str:
    (fa, la), (fb, lb) = p
    return f"{fa}:{la} <-> {fb}:{lb}"


# ---------------------------------------------------------------- report


def reported_pairs(path: str, n: int) -> tuple:
    """(set of pairs, number of race findings) from a version-1 report."""
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
    except OSError as e:
        raise CaseFailure(f"no report {path}: {e}") from None
    except ValueError as e:
        raise CaseFailure(f"the report {path} is not JSON: {e}") from None
    if not isinstance(report, dict):
        raise CaseFailure(f"the report is not a JSON object: {path}")
    if report.get("version") != 1:
        raise CaseFailure(f"report version {report.get('version')!r}, expected 1: {path}")
    if "ranks" in report and report["ranks"] != n:
        raise CaseFailure(f"the report says {report['ranks']!r} ranks, the run had {n}")
    findings = report.get("findings")
    if not isinstance(findings, list):
        raise CaseFailure(f"the report has no list of findings: {path}")
    pairs, count = set(), 0
    for i, finding in enumerate(findings):
        if not isinstance(finding, dict):
            raise CaseFailure(f"finding {i} is not an object")
        if finding.get("analysis") != "race":
            continue
        count += 1
        accesses = finding.get("accesses")
        if not isinstance(accesses, list) or len(accesses) != 2:
            raise CaseFailure(f"finding {i} does not have exactly two accesses: "
                              f"{json.dumps(finding)[:400]}")
        ends = []
        for a in accesses:
            if (not isinstance(a, dict) or not isinstance(a.get("file"), str)
                    or not isinstance(a.get("line"), int) or isinstance(a.get("line"), bool)):
                raise CaseFailure(f"finding {i} has an access without a file name and an "
                                  f"integer line: {json.dumps(a)[:400]}")
            ends.append((os.path.basename(a["file"]), a["line"]))
        pairs.add(pair(ends[0], ends[1]))
    return pairs, count


# What the report's last line says was not checked: loads and stores of a
# program not built with the vcx compiler wrappers.
LOCAL_CHECKED = "Local loads and stores checked on every rank."
LOCAL_UNCHECKED = "Not checked: local loads and stores"


def human_report_problems(stderr: str, expected: set, local_accesses: bool = False) -> list:
    problems = []
    want, other = ((LOCAL_CHECKED, LOCAL_UNCHECKED) if local_accesses
                   else (LOCAL_UNCHECKED, LOCAL_CHECKED))
    if want not in stderr or other in stderr:
        problems.append(f"the human report's last line does not say {want!r} (the program was "
                        f"{'' if local_accesses else 'not '}built with a vcx compiler wrapper)")
    for p in sorted(expected):
        for f, line in p:
            if not re.search(rf"(?<![\w.-]){re.escape(f)}:{line}(?!\d)", stderr):
                problems.append(f"the human report does not name {f}:{line} "
                                f"(expected race {show_pair(p)})")
    counts = list(COUNT.finditer(stderr))
    if not counts:
        problems.append("the human report says nowhere how many data races were found "
                        "(no 'N data race(s)' or 'no data race')")
        return problems
    last = counts[-1]
    said = 0 if last.group(1) is None else int(last.group(1))
    if said != len(expected):
        problems.append(f"the human report's last count says {said} data race(s) "
                        f"({last.group(0)!r}), expected {len(expected)}")
    return problems


# ---------------------------------------------------------------- processes


class Step:
    def __init__(self, name, argv, code, out_path, err_path, seconds):
        self.name, self.argv, self.code = name, argv, code
        self.out_path, self.err_path, self.seconds = out_path, err_path, seconds

    def stderr(self) -> str:
        with open(self.err_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def describe(self) -> str:
        lines = self.stderr().splitlines()
        tail = lines[-TAIL_LINES:]
        head = (f"  ... ({len(lines) - len(tail)} earlier lines in {self.err_path})\n"
                if len(lines) > len(tail) else "")
        body = head + "".join(f"  | {x}\n" for x in tail) if tail else "  (empty)\n"
        status = "killed (timeout)" if self.code is None else f"exit {self.code}"
        return (f"{self.name}: {status} after {self.seconds:.1f}s\n"
                f"  command: {shlex.join(self.argv)}\n  stderr:\n{body}")


def run_step(name, argv, work, timeout, env_extra=None) -> Step:
    env = dict(os.environ)
    env.update(env_extra or {})
    out_path = os.path.join(work, f"{name}.stdout")
    err_path = os.path.join(work, f"{name}.stderr")
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            # A session of its own: on timeout launcher and ranks go together.
            proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                    env=env, start_new_session=True)
        except OSError as e:
            raise CaseFailure(f"{name}: cannot start {shlex.join(argv)}: {e}") from None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc)
            code = None
    step = Step(name, argv, code, out_path, err_path, time.monotonic() - start)
    if code is None:
        raise CaseFailure(f"TIMEOUT: {name} did not finish within {timeout:g}s "
                          f"(process tree killed)\n{step.describe()}")
    print(f"[race_case] {name}: exit {code} in {step.seconds:.1f}s: {shlex.join(argv)}",
          flush=True)
    return step


# ---------------------------------------------------------------- the case


def vcx_command(args, report, extra=()) -> list:
    cmd = [args.vcx_run, "--analysis", "race", "--report", report]
    if args.stall:
        cmd += ["--stall", args.stall]
    cmd += list(extra)
    return cmd + ["-n", str(args.n), "--", args.program]


def run_case(args, work) -> None:
    expected = expected_pairs(args.source)
    kind = f"{len(expected)} expected race(s)" if expected else "race-free"
    print(f"[race_case] {os.path.basename(args.source)}: {kind}", flush=True)

    native = run_step("native", native_launcher(args) + ["-n", str(args.n), args.program],
                      work, args.timeout)
    if native.code != 0:
        raise CaseFailure(f"the program fails natively\n{native.describe()}")

    env = {}
    if args.chaos_delay_us is not None:
        env = {"VCX_CHAOS_DELAY_US": str(args.chaos_delay_us),
               "VCX_CHAOS_SEED": str(args.chaos_seed)}
    report = os.path.join(work, "report.json")
    tool = run_step("tool", vcx_command(args, report), work, args.timeout, env)
    if tool.code != 0:
        raise CaseFailure(f"vcx-run did not exit 0 (the program's status)\n{tool.describe()}")

    got, findings = reported_pairs(report, args.n)
    failures = []
    missing, unexpected = expected - got, got - expected
    if missing or unexpected:
        text = [f"reported races differ from the expected ones ({len(expected)} expected, "
                f"{len(got)} reported):"]
        text += [f"  missing:    {show_pair(p)}" for p in sorted(missing)]
        text += [f"  unexpected: {show_pair(p)}" for p in sorted(unexpected)]
        failures.append("\n".join(text))
    elif findings != len(got):
        print(f"[race_case] note: {findings} race findings for {len(got)} distinct pairs "
              f"of lines", flush=True)
    failures += human_report_problems(tool.stderr(), expected, args.local_accesses)
    if failures:
        raise CaseFailure("\n".join(failures) + f"\n  report: {report}\n" + tool.describe())

    if args.expect_exit_code_with is not None:
        k = args.expect_exit_code_with
        want = k if expected else 0
        report2 = os.path.join(work, "report-exit-code.json")
        again = run_step("tool-exit-code",
                         vcx_command(args, report2, ["--race-exit-code", str(k)]),
                         work, args.timeout, env)
        if again.code != want:
            raise CaseFailure(f"with --race-exit-code {k} vcx-run exited {again.code}, "
                              f"expected {want} ({kind})\n{again.describe()}")


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vcx-run")
    ap.add_argument("--mpiexec", help="MPICH's mpiexec")
    ap.add_argument("--oshrun", help="Open MPI's oshrun: the program is an OpenSHMEM one, "
                                     "run natively with it instead of mpiexec")
    ap.add_argument("--program")
    ap.add_argument("--source", action="append", default=[],
                    help="the program's source, with its race marks (several with "
                         "--list-expected)")
    ap.add_argument("-n", type=int)
    ap.add_argument("--stall", choices=["waits", "never"],
                    help="run vcx-run with --stall (default: vcx-run's own default)")
    ap.add_argument("--chaos-delay-us", type=int, metavar="D",
                    help="VCX_CHAOS_DELAY_US for the tool run")
    ap.add_argument("--chaos-seed", type=int, metavar="S", help="VCX_CHAOS_SEED (default 1)")
    ap.add_argument("--expect-exit-code-with", type=int, metavar="K",
                    help="also run with --race-exit-code K: exit K if racy, 0 if race-free")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per step")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir on success")
    ap.add_argument("--local-accesses", action="store_true",
                    help="the program was built with a vcx compiler wrapper: the report must "
                         "say its loads and stores were checked (else: that they were not)")
    ap.add_argument("--list-expected", action="store_true",
                    help="print the expected pairs of each --source and exit")
    args = ap.parse_args(argv)
    if not args.source:
        ap.error("--source is required")
    if args.list_expected:
        return args
    if len(args.source) != 1:
        ap.error("one --source per case")
    launcher = args.oshrun if args.oshrun is not None else args.mpiexec
    missing = [o for o, v in (("--vcx-run", args.vcx_run), ("--mpiexec or --oshrun", launcher),
                              ("--program", args.program), ("-n", args.n)) if v is None]
    if missing:
        ap.error(f"required: {', '.join(missing)}")
    if args.chaos_seed is not None and args.chaos_delay_us is None:
        ap.error("--chaos-seed needs --chaos-delay-us")
    if args.chaos_delay_us is not None and args.chaos_seed is None:
        args.chaos_seed = 1
    if args.expect_exit_code_with is not None and not 1 <= args.expect_exit_code_with <= 255:
        ap.error("--expect-exit-code-with takes 1..255")
    args.source = args.source[0]
    return args


def list_expected(sources) -> int:
    status = 0
    for source in sources:
        try:
            pairs = expected_pairs(source)
        except CaseFailure as e:
            print(f"{source}: ERROR: {e}", flush=True)
            status = 1
            continue
        print(f"{os.path.basename(source)}: {len(pairs)} expected race(s)"
              f"{'' if pairs else ' (race-free)'}")
        for p in sorted(pairs, key=lambda q: (q[0][1], q[1][1])):
            print(f"  {show_pair(p)}")
    return status


def main(argv=None) -> int:
    args = parse(argv)
    if args.list_expected:
        return list_expected(args.source)
    name = os.path.basename(args.program)
    label = f"{name} -n {args.n}"
    if args.stall:
        label += " --stall " + args.stall
    if args.chaos_delay_us is not None:
        label += f" (chaos {args.chaos_delay_us} us, seed {args.chaos_seed})"
    if args.expect_exit_code_with is not None:
        label += f" --race-exit-code {args.expect_exit_code_with}"
    work = tempfile.mkdtemp(prefix=f"race-case-{name}-n{args.n}-")
    try:
        run_case(args, work)
    except CaseFailure as e:
        print(f"[race_case] FAILED: {label}\n{e}", flush=True)
        print(f"[race_case] kept {work} (report*.json, *.stdout, *.stderr)", flush=True)
        return 1
    except BaseException:
        print(f"[race_case] interrupted; kept {work}", flush=True)
        raise
    if args.keep:
        print(f"[race_case] kept {work}", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(f"[race_case] PASSED: {label}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
