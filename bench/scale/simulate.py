#!/usr/bin/env python3
"""Exact simulation of the tool protocol for small N (bench/scale).

Runs a pattern of bench/scale/pattern.c with real vector clocks, following
the clock rules (docs/clock-rules.md) and the vclock engine's messages
(engines/vclock), and records every message between tools with the clock
it carries. Each message's size per variant is then computed from the
clocks themselves: which entries changed since the last clock sent on the
same pair, which are non-zero, by how much they grew. model.py works the
same sizes out from the rules for any N; test_model.py checks that both
agree, and that the totals of today's encoding equal what the tools of a
real run report.

    simulate.py --pattern stencil --ranks 12 --iterations 4

Costs O(N²) per collective: meant for N up to a few hundred.
"""

import argparse
import sys

import model
from model import (ALL_VARIANTS, ENTRY, HEADER, NO_CLOCK, PAIR, subtree_size, tree_children,
                   tree_parent, varint_len)


class Simulation:
    def __init__(self, n):
        if n < 2:
            raise ValueError("the simulation needs at least 2 ranks")
        self.n = n
        self.clock = [[0] * n for _ in range(n)]
        self.last = {}        # (src, dst) -> the last clock sent on that pair
        self.messages = []    # (iteration, src, dst, kind, sizes, entries)
        self.iteration = 0

    # -- clocks -------------------------------------------------------------

    def tick(self, r):
        self.clock[r][r] += 1

    def merge(self, r, v):
        c = self.clock[r]
        for k, x in enumerate(v):
            if x > c[k]:
                c[k] = x

    # -- messages -----------------------------------------------------------

    def send(self, src, dst, kind, vec=None, subtree=None, aside=False):
        """Records one message; `subtree` (the members an all-to-all up
        message stands for) makes the increments of its entries available.
        `aside`: sent as its call is queued, out of program order, against
        no baseline and kept as none (an all-to-all's up message over the
        world, collectives.cpp contribute_ahead)."""
        if vec is None:
            sizes, entries = NO_CLOCK
        elif aside:
            sizes, entries = self.sizes([0] * self.n, vec, subtree)
        else:
            sizes, entries = self.sizes(self.last.get((src, dst), [0] * self.n), vec, subtree)
            self.last[(src, dst)] = list(vec)
        self.messages.append((self.iteration, src, dst, kind, sizes, entries))

    def sizes(self, last, vec, subtree):
        n = self.n
        changed = sum(1 for a, b in zip(last, vec) if a != b)
        today = model.today_form(n, sum(1 for x in vec if x))
        diff = (PAIR * changed, changed)
        forms = {"today": [today], "dense": [(ENTRY * n, n)], "today+diff": [today, diff]}
        incr = [today, diff]
        if all(b >= a for a, b in zip(last, vec)):
            incr.append((sum(varint_len(b - a) for a, b in zip(last, vec)), n))
        if subtree is not None:
            inside = set(subtree)
            outside = sum(1 for k, x in enumerate(vec) if k not in inside and x)
            if outside == 0 and all(vec[k] >= last[k] for k in inside):
                incr.append((sum(varint_len(vec[k] - last[k]) for k in inside), len(inside)))
        forms[model.INCREMENTS] = incr
        chosen = [min(forms[v]) for v in ALL_VARIANTS]
        return tuple(HEADER + b for b, _ in chosen), tuple(e for _, e in chosen)

    # -- collectives over the world, binomial tree rooted at rank 0 ----------

    def all_to_all(self, kind):
        """Blocking all-to-all: each member contributes its own entry, as
        its call is queued (up messages go aside)."""
        n = self.n
        up = [None] * n
        for r in range(n):
            self.tick(r)
            up[r] = [0] * n
            up[r][r] = self.clock[r][r]
        for c in range(n - 1, 0, -1):  # children have higher positions than parents
            for k in tree_children(c, n):
                up[c] = [max(a, b) for a, b in zip(up[c], up[k])]
            self.send(c, tree_parent(c), kind + "_up", up[c],
                      subtree=range(c, c + subtree_size(c, n)), aside=True)
        result = up[0]
        for k in tree_children(0, n):
            result = [max(a, b) for a, b in zip(result, up[k])]
        for p in range(n):
            for c in tree_children(p, n):
                self.send(p, c, kind + "_down", result)
        for r in range(n):
            self.merge(r, result)

    def one_to_all(self, kind):
        n = self.n
        self.tick(0)
        root = list(self.clock[0])
        for p in range(n):
            for c in tree_children(p, n):
                self.send(p, c, kind, root)
        for r in range(1, n):
            self.tick(r)
            self.merge(r, root)

    def all_to_one(self, kind):
        n = self.n
        up = [None] * n
        for r in range(1, n):
            self.tick(r)
            up[r] = list(self.clock[r])
        for c in range(n - 1, 0, -1):
            for k in tree_children(c, n):
                up[c] = [max(a, b) for a, b in zip(up[c], up[k])]
            self.send(c, tree_parent(c), kind, up[c])
        self.tick(0)
        for k in tree_children(0, n):
            self.merge(0, up[k])

    # -- the patterns of pattern.c ------------------------------------------

    def barrier(self):
        self.all_to_all("a2a")

    def stencil(self):
        n = self.n
        arrived = [[] for _ in range(n)]
        for a in range(n):
            for b in model.grid_neighbours(a, n):
                self.tick(a)                      # MPI_Isend
                self.send(a, b, "signal", self.clock[a])
                arrived[b].append(list(self.clock[a]))
        for r in range(n):                        # MPI_Waitall
            self.tick(r)
            for v in arrived[r]:
                self.merge(r, v)
        self.all_to_all("allreduce")

    def collective(self):
        self.all_to_all("barrier")
        self.all_to_all("allreduce")
        self.one_to_all("bcast_down")
        self.all_to_one("reduce_up")

    def master_worker(self):
        n = self.n
        tasks = {}
        for w in range(1, n):                     # MPI_Send of the tasks
            self.tick(0)
            tasks[w] = list(self.clock[0])
            self.send(0, w, "task", tasks[w])
        results = {}
        for w in range(1, n):                     # MPI_Recv, MPI_Send
            self.tick(w)
            self.merge(w, tasks[w])
            self.tick(w)
            results[w] = list(self.clock[w])
            self.send(w, 0, "result", results[w])
        for w in range(1, n):                     # MPI_Recv(MPI_ANY_SOURCE)
            self.tick(0)
            self.merge(0, results[w])

    def lock(self):
        n = self.n
        if not hasattr(self, "released"):
            self.released = [None] * n            # the last release of each rank's lock
            self.leased = [False] * n             # rank r holds its target's lock as a lease
        target = [(r + 1) % n for r in range(n)]
        for r in range(n):                        # the tool reads MPI_Win_lock: Acquire
            if not self.leased[r]:
                self.send(r, target[r], "acquire")
        grants = {}
        for r in range(n):                        # the deposition grants at once, with a
            if self.leased[r]:                    # lease: nobody else waits for the lock
                continue
            q = target[r]
            grants[r] = self.released[q] or [0] * n
            self.send(q, r, "grant")
            self.send(q, r, "grant_clock", grants[r])
        for r in range(n):
            q = target[r]
            self.tick(r)                          # MPI_Win_lock merges the grant's clock;
            if not self.leased[r]:                # under the lease, nothing
                self.merge(r, grants[r])
            self.tick(r)                          # MPI_Win_unlock keeps the lease: nothing sent
            self.released[q] = list(self.clock[r])
            self.leased[r] = True

    def run(self, pattern, iterations):
        step = getattr(self, pattern)
        for i in range(iterations):
            self.iteration = i
            step()
        if pattern == "lock":                     # MPI_Win_free
            self.iteration = iterations
            n = self.n
            for r in range(n):                    # the leases go back, with the last release
                q = (r + 1) % n
                self.send(r, q, "release")
                self.send(r, q, "release_clock", self.released[q])
            self.all_to_all("win_free")
        return self


def simulate(pattern, n, iterations):
    return Simulation(n).run(pattern, iterations)


def run_totals(sim, variant="today+diff"):
    """Per-tool messages and bytes of a real run, control messages included:
    "today+diff" as vcx runs by default (every pair keeps a baseline),
    "today" with whole clocks only (vcx-run --clock-diff-mib 0)."""
    n = sim.n
    vi = ALL_VARIANTS.index(variant)
    msgs, nbytes = [0] * n, [0] * n
    for _, src, _, _, sizes, _ in sim.messages:
        msgs[src] += 1
        nbytes[src] += sizes[vi]
    for r in range(n):                            # along the tree rooted at tool 0:
        down = len(tree_children(r, n))           # Terminate down
        up = 1 if r != 0 else 0                   # Done up
        msgs[r] += down + up
        nbytes[r] += down * model.TERMINATE + up * model.DONE
    return msgs, nbytes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pattern", required=True, choices=model.PATTERNS)
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--iterations", type=int, default=4)
    args = ap.parse_args(argv)
    if args.ranks < 2 or args.iterations < 1:
        raise SystemExit("vcx: simulate.py needs --ranks of at least 2 and --iterations of at least 1")
    sim = simulate(args.pattern, args.ranks, args.iterations)
    last = [m for m in sim.messages if m[0] == args.iterations - 1]
    print(f"{args.pattern}, {args.ranks} ranks: iteration {args.iterations - 1} of {args.iterations}")
    for i, v in enumerate(ALL_VARIANTS):
        sizes = [m[4][i] for m in last]
        if None not in sizes:
            print(f"  {v:>12}: {len(last)} messages, {sum(sizes)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
