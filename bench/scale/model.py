#!/usr/bin/env python3
"""Scale model of vcx's tool protocol (docs/performance.md, "Scale model").

Counts what the tool processes send each other (messages, bytes, per tool,
tree depth, per-tool memory, critical-path latency) for N ranks running a
communication pattern, as the vclock engine (engines/vclock) does it with
whole clocks ("today") and with differential clocks ("today+diff", the
default), as it did with full 8-byte clocks, and with an encoding not built,
and compares one all-to-all with an MPI_Allgather of one integer per rank as
MPICH does it.

    model.py                                  # the table for N = 2 ... 100000
    model.py --ranks 768 --pattern barrier    # one case
    model.py --ranks 2-64 --csv out.csv       # also write the rows as CSV
    model.py --markdown --pattern barrier,stencil,collective,master_worker
                                              # the tables of docs/performance.md

What the engine does with whole clocks (vcx-run --clock-diff-mib 0;
messages.h, clock_codec.h, point_to_point.cpp, collectives.cpp,
lock_deposition.cpp), and so what the "today" rows count:

* every message between engines has a 32-byte header (P2PHeader or
  CollHeader); a message that carries a clock carries it in the smallest of
  two layouts (values below 2^32, as in any run shorter than four billion
  events per rank): all N entries of 4 bytes, or an (index, value) pair of
  4 + 4 bytes for each non-zero entry; ties go to the dense layout;
* a signal (MPI_Send, MPI_Isend, ...) is one message with the sender's
  clock to the receiver's tool;
* collectives run over a binomial tree of the group rooted at the root's
  position (position 0 for all-to-all): all-to-all sends N-1 messages up
  and N-1 down, one-to-all N-1 down, all-to-one N-1 up. An all-to-all
  member contributes only its own entry (no entry is larger anywhere than
  at its own rank), so an up
  message over the world holds its subtree's entries only and goes sparse
  where that is smaller;
* a lock epoch (MPI_Win_lock ... MPI_Win_unlock) sends Acquire, Grant and
  Release without a clock and GrantClock and ReleaseClock with one, except
  under a lease: a lock nobody else asked for is taken again without any
  message, and handed back (Release, ReleaseClock) only when recalled or
  at MPI_Win_free;
* at the end 17-byte Done messages go up a binomial tree rooted at tool 0
  (a tool sends its parent one once its whole subtree is done; without
  analysis modules nobody sends it again) and 1-byte Terminate messages
  come down it.

The other variants, each used for a message only when it is smaller:

* dense: every clock as all N entries of 8 bytes, as the engine sent them
  before the layouts above (the baseline the numbers are compared with);
* today+diff (Singhal-Kshemkalyani; vcx's default, clock_baselines.h): a
  message may also carry only the entries that changed since the last
  clock sent to the same peer, 8 bytes each (index, value). The model gives
  every pair a baseline from its first message, as the engine does while
  its budget (vcx-run --clock-diff-mib, 64 MiB) holds one for every peer
  (up to 2048 ranks); beyond, only the pairs the budget holds keep one,
  and the model's figures are a bound;
* increments (a hypothetical beyond the issue, reported for the barrier
  pattern only): every entry of the full or sparse form as the increase
  since the last clock sent to that peer, one LEB128 byte when below 128.
"""

import argparse
import csv
import heapq
import math
import os
import sys

HEADER = 32          # P2PHeader and CollHeader
ENTRY = 8            # one clock entry as the engine holds it (uint64): the dense variant
NARROW = 4           # one entry of the dense layout on the wire (uint32 value)
PAIR = 8             # index (uint32) + value (uint32): the sparse layout and diff
DONE = 17            # Done: one byte and the analysis messages sent and received (two u64)
TERMINATE = 1        # Terminate: one byte; both for the tools' control part
DIFF_BUDGET = 64 * 2**20  # a tool's memory for baselines (clock_baselines.h), by default
TCP_FRAME = 8        # the TCP transport's frame header (not counted in bytes)

VARIANTS = ("today", "dense", "today+diff")
INCREMENTS = "increments"  # hypothetical, barrier only
ALL_VARIANTS = VARIANTS + (INCREMENTS,)
PATTERNS = ("barrier", "stencil", "collective", "master_worker", "lock")
TREE_PATTERNS = ("barrier", "stencil", "collective")  # collectives in every iteration
DOC_RANKS = (2, 16, 128, 768, 4096, 100000)

# Per-tool memory constants, read from the code (approximate sizes of the
# structures; they only matter where multiplied by N).
BASE_RSS_MIB = 20.0        # a tool's resident size at N = 3 (stats-*.json, max_rss_kb)
IN_BUFFER = 64 * 1024      # TcpTransport::Incoming::buf, per accepted connection
CONNECTION_OBJECT = 256    # socket object and bookkeeping per connection
ENDPOINT_BYTES = 32 + 8 + 8  # std::string (short) + out_ and in_ slots per rank
GROUP_BYTES = 8            # world members in the engine's and the translator's tables
SEQ_ENTRY = 72             # send_seq_ node per (peer, queue)
IN_QUEUE = 720             # in_ node per (peer, queue): InQueue with its deque's first block
POOL_FIRST, POOL_GROW = 16, 64  # ClockPool chunks


# ---------------------------------------------------------------------------
# Trees and grids, as the code builds them

def lowbit(r):
    return r & -r


def tree_parent(r):
    """Parent of position r in the binomial tree rooted at 0 (BinomialTree)."""
    return r & (r - 1)


def tree_children(r, n):
    """Children of r in the order BinomialTree::for_each_child visits them."""
    out = []
    bit = 1
    limit = lowbit(r) if r else 1 << 62
    while bit < limit and r + bit < n:
        out.append(r + bit)
        bit <<= 1
    return out


def subtree_size(r, n):
    """Members of r's subtree: positions r .. r + lowbit(r) - 1 (within n)."""
    return n if r == 0 else min(lowbit(r), n - r)


def tree_depth(n):
    return (n - 1).bit_length()


def dims_create(n):
    """MPI_Dims_create(n, 2): the most balanced factorisation, larger first."""
    b = int(math.isqrt(n))
    while n % b:
        b -= 1
    return n // b, b


def grid_neighbours(r, n):
    """The stencil's neighbours of r, in pattern.c's order (up, down, left, right)."""
    d0, d1 = dims_create(n)
    row, col = divmod(r, d1)
    nb = []
    if row > 0:
        nb.append(r - d1)
    if row + 1 < d0:
        nb.append(r + d1)
    if col > 0:
        nb.append(r - 1)
    if col + 1 < d1:
        nb.append(r + 1)
    return nb


def varint_len(v):
    """Bytes of v as unsigned LEB128."""
    return max(1, (v.bit_length() + 6) // 7)


# ---------------------------------------------------------------------------
# Message sizes per variant

class Msg:
    """One message between tools: sizes per variant, entries the receiver
    merges per variant (for latency), and the messages its sender must have
    received before sending it (for the critical path)."""

    __slots__ = ("src", "dst", "kind", "size", "entries", "deps")

    def __init__(self, src, dst, kind, size, entries, deps=()):
        self.src, self.dst, self.kind = src, dst, kind
        self.size, self.entries, self.deps = size, entries, tuple(deps)


def choose(forms):
    """The smallest (bytes, entries) among the forms available."""
    return min(forms)


def today_form(n, nonzero):
    """(bytes, entries) of the layout clock_codec.h chooses for a clock of n
    entries of which `nonzero` are non-zero: sparse only when smaller."""
    if PAIR * nonzero < NARROW * n:
        return (PAIR * nonzero, nonzero)
    return (NARROW * n, n)


def clock_sizes(n, changed, nonzero=None, incr=None):
    """Bytes and merged entries per variant of a message with a clock.

    changed: entries that differ from the last clock sent to that peer;
    nonzero: the clock's non-zero entries (all n unless given);
    incr: (bytes, entries) of the increments form, where modelled."""
    today = today_form(n, n if nonzero is None else nonzero)
    forms = {
        "today": [today],
        "dense": [(ENTRY * n, n)],
        "today+diff": [today, (PAIR * changed, changed)],
    }
    sizes, entries = [], []
    for v in VARIANTS:
        b, e = choose(forms[v])
        sizes.append(HEADER + b)
        entries.append(e)
    if incr is not None:
        b, e = choose(forms["today+diff"] + [incr])
        sizes.append(HEADER + b)
        entries.append(e)
    else:
        sizes.append(None)
        entries.append(None)
    return tuple(sizes), tuple(entries)


NO_CLOCK = ((HEADER,) * len(ALL_VARIANTS), (0,) * len(ALL_VARIANTS))


# ---------------------------------------------------------------------------
# The patterns: the messages of one iteration in steady state
#
# Each builder returns the messages of one iteration after the first few
# (the clocks then change the same way every iteration), with the number
# of entries changed since the last clock on the same pair of tools worked
# out from the clock rules. simulate.py computes the same from real vector
# clocks for small N; test_model.py checks that the two agree.

class Builder:
    def __init__(self, n, smallest_first=False):
        self.n = n
        self.msgs = []
        self.smallest_first = smallest_first

    def down_order(self, children):
        """BinomialTree::for_each_child_largest_first: the largest subtree
        first, of equal ones the farther child; smallest_first (the order
        before, for comparison) keeps the tree's increasing order."""
        if self.smallest_first:
            return children
        return sorted(children[::-1], key=lambda c: -subtree_size(c, self.n))

    def add(self, src, dst, kind, sizes, deps=()):
        self.msgs.append(Msg(src, dst, kind, sizes[0], sizes[1], deps))
        return len(self.msgs) - 1

    def all_to_all(self, entry_deps, down_changed, incr=False, kind="a2a"):
        """Blocking all-to-all over the world; returns each rank's completion deps.

        entry_deps[r]: messages r has received before it contributes.
        down_changed(p, c): entries changed on that pair. An up message
        leaves as its call is queued, aside (no baseline on that pair, and
        it sets none): its subtree's entries against zeros."""
        n = self.n
        up = {}
        for c in range(n - 1, 0, -1):
            deps = list(entry_deps[c]) + [up[k] for k in tree_children(c, n)]
            s = subtree_size(c, n)
            sizes = clock_sizes(n, s, nonzero=s, incr=(s, s) if incr else None)
            up[c] = self.add(c, tree_parent(c), kind + "_up", sizes, deps)
        done = [None] * n
        done[0] = list(entry_deps[0]) + [up[k] for k in tree_children(0, n)]
        down = {}
        for p in range(n):
            deps = done[0] if p == 0 else [down[p]]
            for c in self.down_order(tree_children(p, n)):
                sizes = clock_sizes(n, down_changed(p, c), incr=(n, n) if incr else None)
                down[c] = self.add(p, c, kind + "_down", sizes, deps)
        for c in range(1, n):
            done[c] = [down[c]]
        return done

    def one_to_all(self, entry_deps, changed, kind):
        n = self.n
        down = {}
        done = [None] * n
        done[0] = list(entry_deps[0])
        for p in range(n):
            deps = done[0] if p == 0 else [down[p]]
            for c in self.down_order(tree_children(p, n)):
                down[c] = self.add(p, c, kind, clock_sizes(n, changed(p, c)), deps)
        for c in range(1, n):
            done[c] = list(entry_deps[c]) + [down[c]]
        return done

    def all_to_one(self, entry_deps, changed, kind):
        n = self.n
        up = {}
        for c in range(n - 1, 0, -1):
            deps = list(entry_deps[c]) + [up[k] for k in tree_children(c, n)]
            up[c] = self.add(c, tree_parent(c), kind, clock_sizes(n, changed(c)), deps)
        done = [list(entry_deps[r]) for r in range(n)]
        done[0] += [up[k] for k in tree_children(0, n)]
        return done


def pattern_barrier(n, smallest_first=False):
    """Back-to-back MPI_Barrier: between two barriers every rank ticks once,
    so up messages change their subtree's entries by 1 and down messages
    every entry by 1."""
    b = Builder(n, smallest_first)
    b.all_to_all([[] for _ in range(n)], lambda p, c: n, incr=True)
    return b.msgs


def pattern_stencil(n, smallest_first=False):
    """Halo exchange on a 2-D grid (signals) and an MPI_Allreduce per iteration.

    At the start of an iteration every rank's clock holds every entry at
    its value of the last all-reduce. A signal therefore differs from the
    last all-reduce result sent down the same pair only in the sender's own
    entry, and from the last signal on the pair in every entry (up messages
    go aside and are no pair's baseline). A down message always changes
    every entry."""
    b = Builder(n, smallest_first)
    nbs = [grid_neighbours(r, n) for r in range(n)]
    into = [[] for _ in range(n)]
    for a in range(n):
        for dst in nbs[a]:
            if dst != 0 and tree_parent(dst) == a:
                changed = 1
            else:
                changed = n
            into[dst].append(b.add(a, dst, "signal", clock_sizes(n, changed)))

    b.all_to_all(into, lambda p, c: n, kind="allreduce")
    return b.msgs


def pattern_collective(n, smallest_first=False):
    """MPI_Barrier, MPI_Allreduce, MPI_Bcast and MPI_Reduce (root 0) per
    iteration; all four use the same binomial tree rooted at rank 0.

    Barrier and allreduce up messages go aside (their subtree's entries
    against no baseline). Reduce up (full clocks) follows the last reduce
    up on the pair: every entry. Barrier and allreduce down change every
    entry; the broadcast of the
    root's clock follows the allreduce result, which differs only in the
    root's own entry."""
    b = Builder(n, smallest_first)
    done = b.all_to_all([[] for _ in range(n)], lambda p, c: n, kind="barrier")
    done = b.all_to_all(done, lambda p, c: n, kind="allreduce")
    done = b.one_to_all(done, lambda p, c: 1, "bcast_down")
    b.all_to_one(done, lambda c: n, "reduce_up")
    return b.msgs


def pattern_master_worker(n, smallest_first=False):
    """Rank 0 sends a task to every worker and receives every result with
    MPI_ANY_SOURCE. Between two tasks to one worker the master learned every
    worker's new results, and between two results a worker learned the
    master's new clock: every entry changes, so only the full form is used."""
    b = Builder(n, smallest_first)
    for w in range(1, n):
        task = b.add(0, w, "task", clock_sizes(n, n))
        b.add(w, 0, "result", clock_sizes(n, n), [task])
    return b.msgs


def pattern_lock(n, smallest_first=False):
    """Each rank locks its right neighbour's window exclusively, puts, and
    unlocks. Nobody else wants that lock, so after the first epoch the
    rank holds it as a lease (architecture.md, "Leases"): later epochs
    send nothing. The first epoch's Acquire, Grant and GrantClock and the
    lease's Release and ReleaseClock at MPI_Win_free are once per run, not
    per iteration."""
    return []


BUILDERS = {
    "barrier": pattern_barrier,
    "stencil": pattern_stencil,
    "collective": pattern_collective,
    "master_worker": pattern_master_worker,
    "lock": pattern_lock,
}


def iteration(pattern, n, smallest_first=False):
    if n < 2:
        raise ValueError("the model needs at least 2 ranks")
    return BUILDERS[pattern](n, smallest_first)


# ---------------------------------------------------------------------------
# MPI_Allgather of one int per rank, as MPICH 4 selects it
# (maint/tuning/coll/mpir/generic.json, "collective=allgather")

def allgather(n, item=4):
    """MPICH's intra-communicator allgather: recursive doubling for a
    power-of-two size and less than 512 KiB in all, Bruck for other sizes
    and less than 80 KiB, the ring otherwise. Each rank ends with n items,
    so n(n-1) items travel whichever algorithm runs; they differ in steps
    (critical path) and in message count. Bytes are payload only, as for
    vcx (MPICH's envelopes are not counted, nor vcx's TCP frames)."""
    total = item * n
    pow2 = n & (n - 1) == 0
    if pow2 and total < 524288:
        alg = "recursive doubling"
        steps = [item * (1 << k) for k in range(tree_depth(n))]
    elif not pow2 and total < 81920:
        alg = "Bruck"
        steps = []
        p = 1
        while p <= n // 2:
            steps.append(item * p)
            p *= 2
        if n - p:
            steps.append(item * (n - p))
    else:
        alg = "ring"
        steps = [item] * (n - 1)
    return {
        "algorithm": alg,
        "steps": len(steps),
        "step_bytes": steps,
        "messages": n * len(steps),
        "bytes": n * sum(steps),
    }


def allgather_latency(ag, params):
    """Every step is a send and a receive on every rank at once."""
    return sum(2 * params.o + params.L + params.G * b for b in ag["step_bytes"])


# ---------------------------------------------------------------------------
# Critical path: LogGP-like, one CPU per tool

class Params:
    def __init__(self, latency_us=2.0, overhead_us=1.0, gbytes_per_s=10.0, merge_ns=0.5):
        self.L = latency_us
        self.o = overhead_us
        self.G = 1e-3 / gbytes_per_s      # µs per byte
        self.m = merge_ns * 1e-3          # µs per clock entry merged


def critical_path(msgs, n, vi, params):
    """Time (µs) from the start of one iteration until the last tool has
    handled its last message, when every message waits for the messages
    its sender must receive first. A tool does one thing at a time: sending
    costs o + G·bytes, receiving o + m·(entries it merges); the network
    adds L."""
    pending = [len(m.deps) for m in msgs]
    dependents = [[] for _ in msgs]
    for i, m in enumerate(msgs):
        for d in m.deps:
            dependents[d].append(i)
    cpu = [0.0] * n
    events = []
    end = 0.0

    def send(i, ready):
        m = msgs[i]
        start = max(cpu[m.src], ready)
        cpu[m.src] = start + params.o + params.G * m.size[vi]
        heapq.heappush(events, (cpu[m.src] + params.L, i))

    for i, p in enumerate(pending):
        if p == 0:
            send(i, 0.0)
    while events:
        t, i = heapq.heappop(events)
        m = msgs[i]
        start = max(cpu[m.dst], t)
        cpu[m.dst] = start + params.o + params.m * m.entries[vi]
        end = max(end, cpu[m.dst])
        for j in dependents[i]:
            pending[j] -= 1
            if pending[j] == 0:
                send(j, cpu[m.dst])
    return end


# ---------------------------------------------------------------------------
# Per-tool memory and sockets

def pool_capacity(peak):
    """Clocks the ClockPool holds once `peak` are in use at once."""
    if peak <= POOL_FIRST:
        return POOL_FIRST
    return POOL_FIRST + POOL_GROW * -(-(peak - POOL_FIRST) // POOL_GROW)


def peak_clocks(pattern, r, n):
    """Clocks a tool holds at once at most: the stored signals not yet
    merged, a collective's up and down, the message being read. For the
    master: every worker's result may arrive before the master's
    application reports its receives."""
    if pattern == "master_worker":
        return n + 1 if r == 0 else 3
    if pattern == "stencil":
        return len(grid_neighbours(r, n)) + 3
    return 4


def tool_memory(pattern, n, msgs, variant):
    """(bytes, sockets, rank) of the tool with the largest resident size."""
    vi = ALL_VARIANTS.index(variant)
    out_max = [dict() for _ in range(n)]   # dst -> largest message
    in_max = [dict() for _ in range(n)]    # src -> largest message
    clock_senders = [set() for _ in range(n)]
    clock_receivers = [set() for _ in range(n)]
    seq_entries = [0] * n
    queues = [0] * n

    def note(src, dst, size):
        if src == dst:
            return
        out_max[src][dst] = max(out_max[src].get(dst, 0), size)
        in_max[dst][src] = max(in_max[dst].get(src, 0), size)

    for m in msgs:
        size = m.size[vi] if m.size[vi] is not None else m.size[0]
        note(m.src, m.dst, size)
        if m.entries[0]:
            clock_senders[m.dst].add(m.src)
            clock_receivers[m.src].add(m.dst)
        if m.kind in ("signal", "task", "result"):
            seq_entries[m.src] += 1
            queues[m.dst] += 1
    if pattern == "lock":
        for m in pattern_barrier(n):  # MPI_Win_free
            note(m.src, m.dst, m.size[0])
    for r in range(1, n):  # Done up and Terminate down the tree rooted at tool 0
        note(r, tree_parent(r), DONE)
        note(tree_parent(r), r, TERMINATE)

    best = None
    for r in range(n):
        fixed = BASE_RSS_MIB * 2**20
        clocks = ENTRY * n * (1 + pool_capacity(peak_clocks(pattern, r, n))) \
            + (HEADER + ENTRY * n) + n
        tables = n * (ENDPOINT_BYTES + GROUP_BYTES) + SEQ_ENTRY * seq_entries[r] \
            + IN_QUEUE * queues[r]
        conns = sum(CONNECTION_OBJECT + 2 * (TCP_FRAME + s) for s in out_max[r].values()) \
            + sum(CONNECTION_OBJECT + max(IN_BUFFER, TCP_FRAME + s + 4096)
                  for s in in_max[r].values())
        extra = 0
        if variant in ("today+diff", INCREMENTS):
            # A baseline (8N bytes) for every peer this tool sends clocks to
            # and every peer that sends it clocks (clock_baselines.h).
            # No more than the budget (vcx-run --clock-diff-mib): beyond it
            # pairs go without, and their bytes are today's.
            extra = min(DIFF_BUDGET,
                        ENTRY * n * (len(clock_receivers[r]) + len(clock_senders[r])))
        total = fixed + clocks + tables + conns + extra
        sockets = len(out_max[r]) + len(in_max[r])
        if best is None or total > best[0]:
            best = (total, sockets, r)
    return best


# ---------------------------------------------------------------------------
# Rows

def model_row(pattern, n, variant, params, with_latency=True, msgs=None):
    msgs = msgs if msgs is not None else iteration(pattern, n)
    vi = ALL_VARIANTS.index(variant)
    if any(m.size[vi] is None for m in msgs):
        return None  # the increments are modelled for the barrier only
    sent = [0] * n
    recv = [0] * n
    total = 0
    for m in msgs:
        b = m.size[vi]
        total += b
        sent[m.src] += b
        recv[m.dst] += b
    busiest = max(range(n), key=lambda r: sent[r] + recv[r])
    mem, sockets, mem_rank = tool_memory(pattern, n, msgs, variant)
    row = {
        "pattern": pattern,
        "variant": variant,
        "ranks": n,
        "messages": len(msgs),
        "bytes": total,
        "busiest_tool": busiest,
        "busiest_tool_bytes": sent[busiest] + recv[busiest],
        "tree_depth": tree_depth(n) if pattern in TREE_PATTERNS else None,
        "tool_memory_mib": mem / 2**20,
        "memory_rank": mem_rank,
        "sockets": sockets,
        "critical_path_us": critical_path(msgs, n, vi, params) if with_latency else None,
    }
    ag = allgather(n)
    row["allgather_algorithm"] = ag["algorithm"]
    row["allgather_messages"] = ag["messages"]
    row["allgather_bytes"] = ag["bytes"]
    row["ratio_to_allgather"] = total / ag["bytes"]
    row["allgather_latency_us"] = allgather_latency(ag, params)
    return row


def parse_ranks(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                out.extend(range(lo, hi + 1))
            else:
                out.append(int(part))
        except ValueError:
            raise SystemExit(f"vcx: --ranks takes numbers and ranges such as 2,16,128 or 2-64, "
                             f"not '{part}'")
    if not out or min(out) < 2:
        raise SystemExit("vcx: --ranks needs rank counts of at least 2")
    return out


def parse_list(text, allowed, what):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if items == ["all"]:
        return list(allowed)
    for x in items:
        if x not in allowed:
            raise SystemExit(f"vcx: unknown {what} '{x}'; choose from {', '.join(allowed)} or all")
    return items


def human(v):
    if v is None:
        return "-"
    for unit, f in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= f:
            return f"{v / f:.3g} {unit}"
    return f"{v:.3g}"


def print_tables(rows, out):
    by_pattern = {}
    for r in rows:
        by_pattern.setdefault(r["pattern"], []).append(r)
    for pattern, prs in by_pattern.items():
        out.write(f"\n{pattern}: per iteration, steady state\n")
        head = ("ranks", "variant", "messages", "bytes", "vs allgather", "busiest tool B",
                "depth", "memory MiB", "sockets", "critical path µs")
        out.write("  ".join(f"{h:>15}" for h in head) + "\n")
        for r in prs:
            cells = (str(r["ranks"]), r["variant"], human(r["messages"]), human(r["bytes"]),
                     f"{r['ratio_to_allgather']:.2f}×", human(r["busiest_tool_bytes"]),
                     human(r["tree_depth"]), f"{r['tool_memory_mib']:.1f}", str(r["sockets"]),
                     "-" if r["critical_path_us"] is None else f"{r['critical_path_us']:.1f}")
            out.write("  ".join(f"{c:>15}" for c in cells) + "\n")
    ags = {r["ranks"]: r for r in rows}
    out.write("\nMPI_Allgather of one int per rank (MPICH's selection)\n")
    out.write(f"{'ranks':>8}  {'algorithm':>20}  {'messages':>10}  {'bytes':>10}  {'latency µs':>10}\n")
    for n in sorted(ags):
        r = ags[n]
        out.write(f"{n:>8}  {r['allgather_algorithm']:>20}  {human(r['allgather_messages']):>10}  "
                  f"{human(r['allgather_bytes']):>10}  {r['allgather_latency_us']:>10.1f}\n")


def size_text(v):
    """Bytes in decimal units, as in docs/performance.md."""
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if v >= f:
            return f"{v / f:.3g} {unit}"
    return f"{v} B"


def number(v):
    """Three significant digits, never an exponent."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def print_markdown(rows, out):
    """The tables of docs/performance.md, "Scale model"."""
    get = {(r["pattern"], r["ranks"], r["variant"]): r for r in rows}
    ranks = sorted({r["ranks"] for r in rows})

    def cell(pattern, n, v, ratio=True):
        r = get.get((pattern, n, v))
        if not r:
            return "-"
        return size_text(r["bytes"]) + (f" ({r['ratio_to_allgather']:.2f}×)" if ratio else "")

    if any(r["pattern"] == "barrier" for r in rows):
        out.write("| ranks | MPI_Allgather (MPICH) | its messages | its bytes | vcx messages "
                  "| today | dense | today + diff | increments |\n")
        out.write("|---|---|---|---|---|---|---|---|---|\n")
        for n in ranks:
            r = get.get(("barrier", n, "today"))
            if not r:
                continue
            out.write(f"| {n} | {r['allgather_algorithm']} | {human(r['allgather_messages'])} "
                      f"| {size_text(r['allgather_bytes'])} | {human(r['messages'])} | "
                      + " | ".join(cell("barrier", n, v) for v in ALL_VARIANTS) + " |\n")
        out.write("\n")
    out.write("| pattern | ranks | messages | today | dense | today + diff |\n")
    out.write("|---|---|---|---|---|---|\n")
    for pattern in PATTERNS:
        for n in ranks:
            r = get.get((pattern, n, "today"))
            if r and pattern != "barrier":
                out.write(f"| {pattern} | {n} | {human(r['messages'])} | "
                          + " | ".join(cell(pattern, n, v, False) for v in VARIANTS) + " |\n")
    out.write("\n| pattern | ranks | tree depth | busiest tool, bytes per iteration "
              "(today / dense) | tool memory, MiB (today / today + diff) | sockets "
              "| critical path, µs (today / dense) | MPI_Allgather, µs |\n")
    out.write("|---|---|---|---|---|---|---|---|\n")
    for pattern in PATTERNS:
        for n in ranks:
            t = get.get((pattern, n, "today"))
            d = get.get((pattern, n, "dense"))
            m = get.get((pattern, n, "today+diff"))
            if not t or not d or not m or pattern == "lock":
                continue
            lat = "-" if t["critical_path_us"] is None else \
                f"{number(t['critical_path_us'])} / {number(d['critical_path_us'])}"
            out.write(f"| {pattern} | {n} | {human(t['tree_depth'])} | "
                      f"{size_text(t['busiest_tool_bytes'])} / {size_text(d['busiest_tool_bytes'])} | "
                      f"{number(t['tool_memory_mib'])} / {number(m['tool_memory_mib'])} | "
                      f"{t['sockets']} | {lat} | {number(t['allgather_latency_us'])} |\n")


FIELDS = ("pattern", "variant", "ranks", "messages", "bytes", "ratio_to_allgather",
          "busiest_tool", "busiest_tool_bytes", "tree_depth", "tool_memory_mib", "memory_rank",
          "sockets", "critical_path_us", "allgather_algorithm", "allgather_messages",
          "allgather_bytes", "allgather_latency_us")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default=",".join(map(str, DOC_RANKS)),
                    help="rank counts, e.g. 2,16,128 or 2-64 (default: %(default)s)")
    ap.add_argument("--pattern", default="all",
                    help=f"comma-separated: {', '.join(PATTERNS)} or all (default)")
    ap.add_argument("--variant", default="all",
                    help=f"comma-separated: {', '.join(ALL_VARIANTS)} or all (default; "
                         "increments only for the barrier)")
    ap.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    ap.add_argument("--out", metavar="DIR", help="write DIR/scale-model.csv")
    ap.add_argument("--markdown", action="store_true",
                    help="print the tables of docs/performance.md instead")
    ap.add_argument("--smallest-first", action="store_true",
                    help="send a tree's messages down to the smallest subtree first (the "
                         "order before; today the largest goes first); changes the critical path")
    ap.add_argument("--no-latency", action="store_true",
                    help="skip the critical path (the slow part at 100000 ranks)")
    ap.add_argument("--latency-us", type=float, default=2.0, help="network latency L (µs)")
    ap.add_argument("--overhead-us", type=float, default=1.0,
                    help="per-message CPU cost o on each side (µs)")
    ap.add_argument("--gbytes-per-s", type=float, default=10.0, help="bandwidth (1/G)")
    ap.add_argument("--merge-ns", type=float, default=0.5, help="cost of merging one clock entry")
    args = ap.parse_args(argv)

    ranks = parse_ranks(args.ranks)
    patterns = parse_list(args.pattern, PATTERNS, "pattern")
    variants = parse_list(args.variant, ALL_VARIANTS, "variant")
    for name, v in (("--latency-us", args.latency_us), ("--overhead-us", args.overhead_us),
                    ("--gbytes-per-s", args.gbytes_per_s), ("--merge-ns", args.merge_ns)):
        if not v >= 0 or (name == "--gbytes-per-s" and v == 0):
            raise SystemExit(f"vcx: {name} needs a positive number")
    params = Params(args.latency_us, args.overhead_us, args.gbytes_per_s, args.merge_ns)

    rows = []
    for pattern in patterns:
        for n in ranks:
            msgs = iteration(pattern, n, args.smallest_first)
            for v in variants:
                row = model_row(pattern, n, v, params, not args.no_latency, msgs)
                if row:
                    rows.append(row)
    (print_markdown if args.markdown else print_tables)(rows, sys.stdout)
    paths = [p for p in (args.csv, args.out and f"{args.out}/scale-model.csv") if p]
    for path in paths:
        if args.out:
            os.makedirs(args.out, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            for r in rows:
                w.writerow({k: r[k] for k in FIELDS})
    return 0


if __name__ == "__main__":
    sys.exit(main())
