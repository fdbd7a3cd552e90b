#!/usr/bin/env python3
"""bench.scale_model: checks the scale model of bench/scale.

1. Hand-computed cases: binomial trees, MPICH's allgather selection and
   counts, today's message sizes, the critical path of the smallest case,
   the clock pool's growth.
2. The model's rules against the exact simulation (simulate.py, real
   vector clocks) for every pattern and variant, N = 2 .. 33: the messages
   of a steady-state iteration must agree one by one (sender, receiver,
   kind, bytes, merged entries).
3. The simulation against reality: runs bench/scale's pattern program
   under vcx-run for small N and compares the messages and bytes every tool
   reports (stats-<rank>.json) with the simulation's whole run (its first
   iterations included, where clocks are still sparse), rank by rank:
   with differential clocks (the default) against "today+diff", and with
   whole clocks only (--clock-diff-mib 0) against "today".

    test_model.py --build <build directory>
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
import simulate  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print(f"bench.scale_model: FAILED: {what}", file=sys.stderr)


def hand_cases():
    # BinomialTree (core/include/vcx/binomial_tree.h), root 0.
    check(model.tree_children(0, 8) == [1, 2, 4], "children of 0 in 8")
    check(model.tree_children(4, 8) == [5, 6], "children of 4 in 8")
    check(model.tree_children(6, 8) == [7], "children of 6 in 8")
    check(model.tree_children(4, 6) == [5], "children of 4 in 6")
    check(model.tree_children(5, 8) == [], "5 is a leaf in 8")
    check(model.tree_parent(6) == 4 and model.tree_parent(5) == 4 and model.tree_parent(4) == 0,
          "parents in 8")
    check([model.subtree_size(r, 7) for r in range(7)] == [7, 1, 2, 1, 3, 1, 1], "subtrees in 7")
    check([model.tree_depth(n) for n in (2, 3, 4, 5, 768, 100000)] == [1, 2, 2, 3, 10, 17],
          "tree depths")
    for n in (5, 12, 768):
        check(sum(model.subtree_size(c, n) for c in range(1, n)) ==
              sum(len(path_to_root(r)) for r in range(n)), f"subtree sizes in {n} sum to depths")
    check([model.dims_create(n) for n in (2, 4, 7, 12, 768)] ==
          [(2, 1), (2, 2), (7, 1), (4, 3), (32, 24)], "MPI_Dims_create(n, 2)")
    check(model.grid_neighbours(4, 9) == [1, 7, 3, 5], "the middle of a 3x3 grid")

    # MPICH's allgather of one int: algorithm, messages, bytes.
    ag = model.allgather(8)
    check((ag["algorithm"], ag["steps"], ag["messages"], ag["bytes"]) ==
          ("recursive doubling", 3, 24, 8 * 7 * 4), f"allgather at 8: {ag}")
    ag = model.allgather(6)
    check((ag["algorithm"], ag["step_bytes"], ag["messages"], ag["bytes"]) ==
          ("Bruck", [4, 8, 8], 18, 6 * 5 * 4), f"allgather at 6: {ag}")
    ag = model.allgather(768)
    check((ag["algorithm"], ag["steps"], ag["bytes"]) == ("Bruck", 10, 768 * 767 * 4),
          f"allgather at 768: {ag}")
    check(model.allgather(65536)["algorithm"] == "recursive doubling", "allgather at 65536")
    check(model.allgather(131072)["algorithm"] == "ring", "allgather at 131072 (512 KiB in all)")
    ag = model.allgather(100000)
    check((ag["algorithm"], ag["steps"], ag["messages"]) == ("ring", 99999, 100000 * 99999),
          f"allgather at 100000: {ag['algorithm']}")

    # Today's sizes (clock_codec.h): one all-to-all over 3 ranks sends two
    # up messages holding one entry each (one 8-byte pair beats three 4-byte
    # entries) and two down messages of all three entries, 4 bytes each.
    msgs = model.iteration("barrier", 3)
    check(len(msgs) == 4 and sorted(m.size[0] for m in msgs) == [40, 40, 44, 44],
          "one barrier at 3 ranks: two up messages of 40 bytes, two down of 44")
    check(sum(m.size[1] for m in msgs) == 4 * (32 + 3 * 8), "one dense barrier at 3 ranks")
    # Uncontended lock epochs are taken under a lease: none sends anything.
    check(model.iteration("lock", 5) == [], "lock epochs at 5 ranks under leases")
    n = 768
    today = sum(m.size[0] for m in model.iteration("barrier", n))
    check(today == (n - 1) * (32 + 4 * n) + sum(32 + min(4 * n, 8 * model.subtree_size(c, n))
                                                for c in range(1, n)), "today's barrier at 768")
    dense = sum(m.size[1] for m in model.iteration("barrier", n))
    check(dense == 2 * (n - 1) * (32 + 8 * n), "dense barrier at 768")

    # Critical path of one barrier at 2 ranks: up and down, each a send,
    # the network and a receive that merges both entries; both messages
    # carry the two entries 4 bytes each (a pair would take as much).
    p = model.Params(latency_us=2.0, overhead_us=1.0, gbytes_per_s=10.0, merge_ns=0.5)
    hop = 2 * p.o + p.L + p.G * 40 + p.m * 2
    got = model.critical_path(model.iteration("barrier", 2), 2, 0, p)
    check(abs(got - 2 * hop) < 1e-9, f"critical path of a barrier at 2: {got} != {2 * hop}")
    ag = model.allgather(4)
    check(abs(model.allgather_latency(ag, p) - (2 * (2 * p.o + p.L) + p.G * 12)) < 1e-9,
          "allgather latency at 4")
    # At 4 ranks the root sends down to 2 (which forwards to 3), then to 1
    # (a leaf): with 1 first, 2 would finish its receive one send later.
    first = model.iteration("barrier", 4)
    msgs = model.iteration("barrier", 4, smallest_first=True)
    check([(m.src, m.dst) for m in first if m.kind == "a2a_down"] == [(0, 2), (0, 1), (2, 3)],
          "largest subtree first: the order of the sends down")
    check([(m.src, m.dst) for m in msgs if m.kind == "a2a_down"] == [(0, 1), (0, 2), (2, 3)],
          "smallest subtree first: the order of the sends down")
    send = p.o + p.G * (32 + 4 * 4)
    saved = model.critical_path(msgs, 4, 0, p) - model.critical_path(first, 4, 0, p)
    check(abs(saved - send) < 1e-9, f"largest subtree first saves one send at 4: {saved}")
    # At 6 the root's children 4 and 2 both head subtrees of two: the
    # farther goes first, as BinomialTree::for_each_child_largest_first does.
    six = model.iteration("barrier", 6)
    check([m.dst for m in six if m.kind == "a2a_down" and m.src == 0] == [4, 2, 1],
          "largest subtree first at 6")

    check([model.pool_capacity(k) for k in (3, 16, 17, 80, 81)] == [16, 16, 80, 80, 144],
          "clock pool growth")
    check([model.varint_len(v) for v in (0, 1, 127, 128, 16383, 16384)] == [1, 1, 1, 2, 2, 3],
          "LEB128 lengths")


def path_to_root(r):
    out = []
    while r:
        r = model.tree_parent(r)
        out.append(r)
    return out


def against_simulation():
    iterations = 4
    for pattern in model.PATTERNS:
        for n in list(range(2, 25)) + [31, 32, 33]:
            sim = simulate.simulate(pattern, n, iterations)
            with_incr = pattern == "barrier"
            width = len(model.ALL_VARIANTS) if with_incr else len(model.VARIANTS)

            def key(src, dst, kind, size, entries):
                return (src, dst, kind, tuple(size[:width]), tuple(entries[:width]))

            got = Counter(key(s, d, k, sz, e) for i, s, d, k, sz, e in sim.messages
                          if i == iterations - 1)
            want = Counter(key(m.src, m.dst, m.kind, m.size, m.entries)
                           for m in model.iteration(pattern, n))
            if got != want:
                check(False, f"{pattern} at {n}: the model's iteration differs from the "
                             f"simulation; simulation only: {list((got - want).items())[:2]}, "
                             f"model only: {list((want - got).items())[:2]}")


# A Done message of the tools' termination: its type and two counts.
DONE_BYTES = 1 + 2 * 8


def run_one(build, pattern, n, iterations, variant="today+diff"):
    vcx_run = os.path.join(build, "bin", "vcx-run")
    program = os.path.join(build, "bench", "scale_pattern")
    for path in (vcx_run, program):
        if not os.access(path, os.X_OK):
            check(False, f"{path} is missing; build the project first")
            return
    # A tool whose collective waits long (ranks oversubscribed) would also
    # ask the group's first member about it: a message the model does not
    # count, sent or not depending on timing.
    cmd = [vcx_run, "-n", str(n), "--keep-session", "--option", "vclock.probe-ms=0"]
    if variant == "today":
        cmd += ["--clock-diff-mib", "0"]
    cmd += [program, "--pattern", pattern, "--iterations", str(iterations)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=180)
    except subprocess.TimeoutExpired:
        check(False, f"{' '.join(cmd)} did not end within 180 s")
        return
    m = re.search(r"session directory kept: (\S+)", p.stdout)
    try:
        check(p.returncode == 0, f"{pattern} at {n}: vcx-run exited with {p.returncode}: "
                                 f"{p.stdout.strip()[-500:]}")
        check(m is not None, f"{pattern} at {n}: vcx-run did not say where the session is")
        if p.returncode != 0 or not m:
            return
        stats = []
        for r in range(n):
            with open(os.path.join(m.group(1), f"stats-{r}.json")) as f:
                stats.append(json.load(f))
        want_msgs, want_bytes = simulate.run_totals(
            simulate.simulate(pattern, n, iterations), variant)
        notes = []
        for r, s in enumerate(stats):
            # A race of the shutdown, after every clock was exchanged: a
            # tool that reads a peer's end of file before its own Terminate
            # has arrived sends every other tool an Abort notice of
            # 1 + len(reason) bytes (tool_process.cpp, abort_all), and the
            # tools that receive it report the same reason without sending
            # anything. A tool that reports such a reason therefore sent
            # exactly the model's messages, or those and one notice each.
            if not (s["aborted"] and s["app"] == "finalized" and re.fullmatch(
                    r"connection from tool rank \d+ closed: .*", s["reason"])):
                continue
            notice = (want_msgs[r] + n - 1, want_bytes[r] + (n - 1) * (1 + len(s["reason"])))
            if (s["messages_sent"], s["bytes_sent"]) == notice:
                want_msgs[r], want_bytes[r] = notice
                notes.append(f"rank {r}: {s['reason']}")
        for r, s in enumerate(stats):
            # The end of the run (toolproc/tool/termination.h): a tool that
            # reported its subtree done sends Done again, 1 + 16 bytes, when
            # the subtree's counts of exchange messages change after that (a
            # message still on its way when it first reported): one more
            # control message than the model's, depending on timing.
            extra = s["messages_sent"] - want_msgs[r]
            if r > 0 and 0 < extra <= 2 and s["bytes_sent"] - want_bytes[r] == extra * DONE_BYTES:
                want_msgs[r] += extra
                want_bytes[r] += extra * DONE_BYTES
                notes.append(f"rank {r}: Done sent again {extra}x")
        got = ([s["messages_sent"] for s in stats], [s["bytes_sent"] for s in stats])
        ok = got == (want_msgs, want_bytes)
        check(ok, f"{pattern} at {n} ({variant}): tools sent {got}, the model predicts "
                  f"{(want_msgs, want_bytes)}")
        extra = f" (shutdown counted: {'; '.join(notes)})" if notes else ""
        print(f"bench.scale_model: {pattern} at {n} ranks, {iterations} iterations, "
              f"{variant}: {sum(got[0])} messages, {sum(got[1])} bytes, as predicted{extra}"
              if ok else f"bench.scale_model: {pattern} at {n} ranks ({variant}): mismatch")
    finally:
        if m:
            shutil.rmtree(m.group(1), ignore_errors=True)


def against_runs(build):
    cases = [(p, n) for p in model.PATTERNS for n in (2, 3, 5, 8)]
    cases += [("stencil", 6), ("stencil", 9)]
    for pattern, n in cases:
        run_one(build, pattern, n, 3)
    # Whole clocks only (--clock-diff-mib 0), the encoding before differential
    # clocks.
    for pattern in model.PATTERNS:
        run_one(build, pattern, 5, 3, "today")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build directory (bin/vcx-run, bench/)")
    args = ap.parse_args()
    hand_cases()
    against_simulation()
    print(f"bench.scale_model: hand cases and simulation: "
          f"{'ok' if not failures else f'{len(failures)} failures'}")
    against_runs(args.build)
    if failures:
        print(f"bench.scale_model: {len(failures)} checks failed", file=sys.stderr)
        return 1
    print("bench.scale_model: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
