#!/usr/bin/env python3
"""Physical times in traces, and their correction for the clock condition.

Each program runs twice under `vcx-run -n 3 --trace DIR`:

1. As it is. Every clocked call of `vcx-trace export` must have its enter
   and return times, in program order on its rank, and a call site naming a
   line of the program's sources within a call of that MPI function (read
   from the sources, as matches_lines.py does). The ranks share this node's
   clock, so no call may return before the enter of a call of another rank
   it happened after: the clock condition, checked here from its definition
   on the exported vector clocks. `vcx-trace correct` must say that every
   rank read rank 0's clock (no offset applied) and move no event.
2. With each rank's clock skewed (VCX_TEST_CLOCK_SKEW: rank 1 50 ms behind
   and 300 ppm fast, rank 2 40 ms ahead and 200 ppm slow), as on nodes whose
   clocks are not synchronised. Now the condition must fail somewhere, and
   `vcx-trace correct` must count exactly the violations found here, report
   the injected offsets as the ones it measured, and leave no violation;
   `vcx-trace export --corrected` must give times that break none and keep
   every rank's program order, with the measured offsets applied first and
   without them (`--no-offsets`: the logical correction alone, which never
   moves an event back).

  trace_times.py --vcx-run PATH --vcx-trace PATH --sources DIR [--sources DIR...]
                 --program NAME=EXE [...] [--arg ARG ...]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_cases  # noqa: E402
from matches_lines import call_spans  # noqa: E402

SKEW = "1:-50000000:300,2:40000000:-200"
MIN_LATENCY_NS = 1


def violations(records: list[dict]) -> int:
    """Returns before the enter of a call of another rank they happened
    after. A call happened after call j of rank k when its clock's entry k
    reached the value call j ticked it to (every clocked call ticks its own
    entry once); only entries that grew since the rank's previous call need
    checking, the rest an earlier call of the rank already followed."""
    by_rank: dict[int, list[dict]] = {}
    for r in records:
        by_rank.setdefault(r["rank"], []).append(r)
    n = len(records[0]["clock"])
    found = 0
    for rank, calls in by_rank.items():
        last = [0] * n
        for c in calls:
            for k in range(n):
                v = c["clock"][k]
                if k == rank or v <= last[k]:
                    continue
                source = next((s for s in by_rank.get(k, []) if s["clock"][k] >= v), None)
                if source is not None and c["leave_ns"] < source["enter_ns"] + MIN_LATENCY_NS:
                    found += 1
            last = c["clock"]
    return found


def export(args, trace: str, *extra: str) -> list[dict]:
    p = subprocess.run([args.vcx_trace, "export", *extra, trace], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=args.timeout)
    if p.returncode != 0:
        raise RuntimeError(f"vcx-trace export {' '.join(extra)} failed: {p.stderr}")
    return [json.loads(line) for line in p.stdout.splitlines()]


def run(args, exe: str, trace: str, skew: str | None) -> None:
    env = dict(os.environ)
    env.pop("VCX_TEST_CLOCK_SKEW", None)
    if skew:
        env["VCX_TEST_CLOCK_SKEW"] = skew
    p = subprocess.run([args.vcx_run, "-n", "3", "--trace", trace, *args.vcx_arg, exe, *args.arg],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=args.timeout)
    if p.returncode != 0:
        raise RuntimeError(f"vcx-run failed ({p.returncode}): {p.stderr[-2000:]}")


def offset_problems(report: str) -> list[str]:
    """The offsets vcx-trace correct reports must be the injected ones:
    rank 0's clock minus the rank's, at the start, within a few ms (the
    measuring round trip on an oversubscribed node)."""
    problems = []
    want = {0: 0.0}
    for item in SKEW.split(","):
        rank, offset, _ = item.split(":")
        want[int(rank)] = -int(offset) / 1e6  # ms
    got = {}
    for m in re.finditer(r"^\s*(\d+)\s+([+-][\d.]+) (ns|us|ms)\s+[+-]", report, re.M):
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0}[m.group(3)]
        got[int(m.group(1))] = float(m.group(2)) * scale
    shared = shared_clock_ranks(report)
    for rank, offset in want.items():
        if offset == 0 and rank in shared:
            continue  # an unskewed rank reads rank 0's clock: nothing measured
        if rank not in got or abs(got[rank] - offset) > 5:
            problems.append(f"rank {rank}'s clock offset measured {got.get(rank)} ms, "
                            f"injected {offset} ms")
    return problems


def shared_clock_ranks(report: str) -> set[int]:
    """The ranks vcx-trace correct says read rank 0's clock."""
    return {int(m.group(1)) for m in
            re.finditer(r"^\s*(\d+)\s+rank 0's clock \(same node\): no offset$", report, re.M)}


def moved_events(report: str) -> dict[int, int]:
    """Events moved per rank, from vcx-trace correct's last table."""
    table = report[report.rfind("events moved"):]
    return {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^\s*(\d+)\s+\d+\s+(\d+)\s", table, re.M)}


def program_order(records: list[dict]) -> list[str]:
    problems = []
    last: dict[int, int] = {}
    for r in records:
        if "enter_ns" not in r or "leave_ns" not in r:
            problems.append(f"rank {r['rank']} call {r['seq']} ({r['call']}) has no times")
            continue
        if r["leave_ns"] < r["enter_ns"]:
            problems.append(f"rank {r['rank']} call {r['seq']} returns before it is entered")
        if r["enter_ns"] < last.get(r["rank"], 0):
            problems.append(f"rank {r['rank']} call {r['seq']} is entered before the previous "
                            "one returned")
        last[r["rank"]] = r["leave_ns"]
    return problems


def site_problems(records: list[dict], source_dirs: list[str]) -> list[str]:
    problems = []
    texts: dict[str, str] = {}
    for r in records:
        m = re.fullmatch(r"(.+):(\d+)", r.get("site", ""))
        if not m:
            problems.append(f"{r['call']} of rank {r['rank']} has site {r.get('site')!r}")
            continue
        path, line = os.path.normpath(m.group(1)), int(m.group(2))
        if not any(os.path.dirname(os.path.abspath(path)).startswith(os.path.abspath(d))
                   for d in source_dirs):
            problems.append(f"{r['call']} at {r['site']}: not in the program's sources")
            continue
        if path not in texts:
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        if not any(a <= line <= b for a, b in call_spans(texts[path], r["call"])):
            problems.append(f"{r['call']} at {r['site']}: no call of {r['call']} there")
    return sorted(set(problems))


def check(name: str, exe: str, args, work: str) -> list[str]:
    problems = []
    plain = os.path.join(work, name + "-plain")
    run(args, exe, plain, None)
    records = export(args, plain)
    if not records:
        return [f"{name}: the trace is empty"]
    problems += program_order(records)
    problems += site_problems(records, args.sources)
    v = violations(records)
    if v:
        problems.append(f"{v} violations of the clock condition on one node's clock")
    # One node, one clock: no offset may be applied, so nothing moves.
    p = subprocess.run([args.vcx_trace, "correct", plain], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=args.timeout)
    shared = shared_clock_ranks(p.stdout)
    if shared != {0, 1, 2}:
        problems.append(f"on one node, ranks {sorted({0, 1, 2} - shared)} were given an offset "
                        f"to rank 0's clock:\n{p.stdout}")
    moved = moved_events(p.stdout)
    if sorted(moved) != [0, 1, 2] or any(moved.values()):
        problems.append(f"on one node's clock the correction moved events: {moved}\n{p.stdout}")
    print(f"[trace_times] {name}: {len(records)} calls timed, sites named, 0 violations",
          flush=True)

    skewed = os.path.join(work, name + "-skewed")
    run(args, exe, skewed, SKEW)
    raw = export(args, skewed)
    problems += program_order(raw)
    found = violations(raw)
    if found == 0:
        problems.append("the skewed clocks broke the clock condition nowhere")
    p = subprocess.run([args.vcx_trace, "correct", skewed], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=args.timeout)
    m = re.search(r": (\d+) violations? .*, (\d+) left after correction", p.stdout)
    if p.returncode != 0 or not m:
        problems.append(f"vcx-trace correct failed ({p.returncode}): {p.stdout}{p.stderr}")
    elif (int(m.group(1)), int(m.group(2))) != (found, 0):
        problems.append(f"vcx-trace correct counts {m.group(1)} violations and leaves "
                        f"{m.group(2)}; the definition gives {found}")
    problems += offset_problems(p.stdout)
    # The logical correction alone, without the measured offsets, and both.
    for extra in (["--no-offsets"], []):
        fixed = export(args, skewed, "--corrected", *extra)
        problems += [f"{' '.join(extra)} {x}" for x in program_order(fixed)]
        left = violations(fixed)
        if left:
            problems.append(f"{left} violations left in the corrected times {extra}")
        if [(r["rank"], r["seq"]) for r in fixed] != [(r["rank"], r["seq"]) for r in raw]:
            problems.append("the corrected export has other calls than the raw one")
        back = [r for r, f in zip(raw, fixed)
                if f["enter_ns"] < r["enter_ns"] or f["leave_ns"] < r["leave_ns"]]
        if extra and back:
            problems.append(f"{len(back)} calls moved back, e.g. {back[0]}")
    print(f"[trace_times] {name}: skewed, {found} violations, none after correction",
          flush=True)
    return [f"{name}: {x}" for x in problems]


if __name__ == "__main__":
    sys.exit(trace_cases.main(
        "trace_times", check,
        lambda ap: (ap.add_argument("--sources", action="append", required=True),
                    ap.add_argument("--vcx-arg", action="append", default=[],
                                    help="an option of vcx-run for every run"))))
