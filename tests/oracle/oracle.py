#!/usr/bin/env python3
"""Independent vector-clock oracle for vcx (the rules of docs/clock-rules.md).

The test programs log their own ground truth (tests/programs/gt.h, format in
docs/testing.md): one JSON object per MPI call, in program order, saying
which message each receive got, which requests each Wait/Test completed and
which communicator members took part in each collective. From that alone
this module recomputes the clock of every clocked call and compares it with
the tool's trace as exported by `vcx-trace export` (JSON Lines with at least
rank, seq, call, clock). The rules are those of docs/clock-rules.md:

  * A call is clocked iff it has a signal or a wait part. It ticks its own
    entry once, first; its signals deposit the post-tick clock; its waits
    merge (element-wise max); the recorded clock is the state after all
    merges.
  * Point-to-point: send ops signal; recv/mrecv ops and completing a receive
    request wait for the message; a sync send waits for the receiver's answer
    (blocking: in the same call; non-blocking or started persistent: where
    the request completes). Posting a receive (Irecv, Start(all) of a
    persistent receive, Mprobe/Improbe) does nothing; init, free, status,
    probes and completing other sends do nothing.
  * Synchronous answers: a blocking receive (recv op) answers with its
    recorded clock; a posted one (post, mprobe) with the clock at its posting
    call: that call's post-tick clock if it is itself clocked, otherwise the
    recorded clock of the rank's last clocked call before it (zeros if none).
    The answer also merges what MPI's non-overtaking rule adds (below).
  * Non-overtaking: a receive is a recv op (posted and completed there), a
    post op (completed by the complete op of its req, or cancelled there,
    or never) or an mprobe op (completed by the mrecv of its handle or by
    the complete of the req an imrecv gave it). When receive B of a rank
    took message m, E(B) is every receive A of that rank posted before B
    (gt line, then op order), still pending at B's posting (completed after
    it or never), not cancelled, and able to match m: same comm, wanted src
    "any" or m's sender, wanted tag "any" or m's tag. MPI let none of them
    be overtaken, so each had matched its own message m_A before B matched.
    T(B) = union over A in E(B) of {m_A} and T(A). The answer to a
    synchronous m merges, besides the node above, the sender's post-tick
    clock of every message in T(B). This needs the optional matching fields
    (send: comm, tag; recv, post, mprobe: comm, src, tag) of the messages
    and candidates involved; missing ones there, or an A that could match
    but never completed (its message unknown), are an OracleError.
  * Collectives, per member role: all_to_all (signal and wait, merges every
    member), one_to_all (root signals; the others wait for it), all_to_one
    (the others signal; the root waits for them), prefix (member i waits for
    members 0..i-1 and signals when it has a member above it; a lone member
    does both), neighbor (signals if it has out-neighbours, waits for its
    in-neighbours if it has any). On an intercommunicator all_to_all is
    bipartite (merges the other group) and in rooted kinds only the root and
    the other group take part. A blocking call does both parts of its role;
    a non-blocking initiation or persistent start does the signal part and
    the completion of its request the wait part. Except for neighbor, the
    role alone decides the parts, not how many peers there are (the only
    member of a communicator, as root of an Ireduce, still waits, merging
    nothing). What a wait merges is each source member's clock at its
    signal part (post-tick).
  * Collectives match by (communicator name, k-th collective op on it),
    except starts of persistent collectives: MPI orders their
    initialisations, not their starts, so the j-th start of the i-th
    persistent collective initialised on a communicator matches the j-th
    start of the i-th at every member.
  * Cancellation: MPI_Cancel does nothing; a request whose completion
    reports it cancelled matched nothing and merges nothing (a cancelled
    send's message must then never be received).
  * Windows (one-sided): created over a communicator, group in its rank
    order. MPI_Win_fence and MPI_Win_free are all-to-all on the window's
    group; the k-th fence-or-free of a window matches the k-th at every
    member. Post/start/complete/wait (a post orders the start, a complete
    the wait it matches): a post signals
    each origin in its group, a start waits for the post of each target in
    its group (the k-th start of o towards t matches the k-th post of t to
    o); a complete signals each target of its start group, a wait (or a
    true MPI_Win_test) waits for the complete of each origin of its post
    group (k-th with k-th per pair). Each of them is clocked only with a
    non-empty group.
  * Locks: the epochs on the lock of (window, target) are ordered by the
    count the program logged for each: an exclusive epoch read the number
    of exclusive epochs before it (0..E-1, each once), a shared one the
    number of exclusive epochs before it. An exclusive acquisition merges
    the release of the previous exclusive epoch and of every shared epoch
    between the two; a shared acquisition merges the release of the
    previous exclusive epoch. MPI_Win_lock_all is a shared acquisition of
    every member's lock and MPI_Win_unlock_all their release, each clocked
    once. Lock calls are always clocked, releases deposit their post-tick
    clock.
  * OpenSHMEM flags (docs/clock-rules.md, "Flags"): a flag write is not
    clocked and deposits the writer's current clock (the recorded clock of
    its last clocked call before it, zeros if none); a wait that returned
    (wait_until, wait, a test that returned 1) is clocked and merges every
    write to that flag at its PE whose position in the flag's modification
    order (the `order` the program logged) is not after the write it read,
    that is a store of the value it read or a counter step (up or down);
    writes that stored nothing (a failed compare-and-swap) never merge.
  * User annotations (vcx/annotate.h): a tick is clocked and merges
    nothing; a process signal/wait pair is matched k-th with k-th per
    (origin, destination, queue), like a message; a resource wait merges
    the post-tick clock of every deposit on that resource (at that
    deposition) whose ordinal is below the count the program logged, and a
    deposit merges nothing.

Evaluation is dependency driven: every call has a "tick" node (post-tick
clock, what it deposits) and a "clock" node (recorded clock), each evaluated
once everything it needs is known. Inconsistent ground truth (a receive of a
message nobody sent, a collective some member never logged, a dependency
cycle, ...) is an OracleError, distinct from a clock mismatch.

CLI:
  oracle.py --gt GT_DIR --trace TRACE.jsonl [-n N]   compare; exit 0 / 1
  oracle.py --gt GT_DIR --self-check [-n N]          print computed clocks
Exit status: 0 match, 1 mismatch, 2 oracle error (ground truth unusable).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Tuple

SEND_MODES = ("std", "buffered", "ready", "sync")
COLL_KINDS = ("all_to_all", "one_to_all", "all_to_one", "prefix", "neighbor")
REQ_TYPES = ("send", "recv", "coll")

EXIT_OK = 0
EXIT_MISMATCH = 1
EXIT_ORACLE_ERROR = 2


class OracleError(Exception):
    """The ground truth is inconsistent or cannot be evaluated."""


# --------------------------------------------------------------------------
# Ground truth model


@dataclass
class Call:
    rank: int
    line: int  # 0-based line index in gt-<rank>.jsonl (program order)
    name: str
    ops: list
    # Filled by analysis:
    # ("msg", id) | ("coll", key) | ("post", pair) | ("wcomplete", pair) | ("unlock", epoch)
    signals: List[tuple] = field(default_factory=list)
    # ("msg", id) | ("ack", id) | ("coll", key) | ("post", pair) | ("wcomplete", pair)
    # | ("lock", epoch); pair = (window, from, to, k): the k-th on that pair
    waits: List[tuple] = field(default_factory=list)
    ticks: bool = False  # an annotated tick: clocked without signals or waits
    seq: Optional[int] = None  # index among the rank's clocked calls
    prev: Optional["Call"] = None  # previous clocked call of the rank
    tick: Optional[List[int]] = None
    clock: Optional[List[int]] = None

    @property
    def clocked(self) -> bool:
        return bool(self.signals or self.waits or self.ticks)

    def where(self) -> str:
        s = f"rank {self.rank} gt line {self.line + 1} {self.name}"
        if self.seq is not None:
            s += f" (seq {self.seq})"
        return s


@dataclass
class Posting:
    """Where a non-blocking receive was posted: the posting call and the
    rank's last clocked call before it (None: no clocked call yet)."""
    call: Call
    prev: Optional[Call]


@dataclass
class Receive:
    """One receive of a rank, for MPI's non-overtaking rule: a recv op, a
    posted request (post) or a matched probe (mprobe)."""
    call: Call  # the posting call
    order: int  # postings of all ranks numbered in program order, rank by rank
    what: str  # for messages, e.g. "receive request r3"
    want: Optional[tuple]  # (comm, src, tag) as logged; None: not logged
    before: List["Receive"]  # the rank's receives still pending at this posting
    msg: Optional[str] = None  # the message it got; None: cancelled or never completed
    cancelled: bool = False

    def where(self) -> str:
        return f"{self.what} posted at {self.call.where()}"


@dataclass
class Message:
    msg: str
    sender: Call
    dest: int
    mode: str
    match: Optional[tuple] = None  # (comm, tag) of the send op; None: not logged
    # Receiving side, once known:
    recv_call: Optional[Call] = None
    # None for a blocking receive, which answers with its own recorded clock.
    posting: Optional[Posting] = None
    rx: Optional[Receive] = None  # the receive that took it
    cancelled: bool = False  # the send's completion reported it cancelled
    # Acknowledged synchronous message: T of its receive (non-overtaking),
    # whose senders' ticks its answer also merges.
    earlier: List[str] = field(default_factory=list)


@dataclass
class Collective:
    comm: str
    index: int  # k-th collective on comm (i-th persistent one with `start`)
    kind: str
    desc: tuple  # what every member must log identically
    expected: List[int]  # every rank that must log it (incl. non-participants)
    inter: bool
    calls: Dict[int, Call] = field(default_factory=dict)  # rank -> call that logged it
    sig_call: Dict[int, Call] = field(default_factory=dict)  # rank -> its signal part
    sources: Dict[int, List[int]] = field(default_factory=dict)  # waiting rank -> sources
    edges: Dict[int, Tuple[List[int], List[int]]] = field(default_factory=dict)  # neighbor
    space: str = "comm"  # "window": a fence or free, `comm` names the window
    start: Optional[int] = None  # j-th start of a persistent collective

    def label(self) -> str:
        if self.space == "window":
            return f"fence/free #{self.index} on window {self.comm!r} ({self.desc[0]})"
        if self.start is not None:
            return (f"start #{self.start} of persistent collective #{self.index} on comm "
                    f"{self.comm!r} ({self.kind})")
        return f"collective #{self.index} on comm {self.comm!r} ({self.kind})"


@dataclass
class Window:
    name: str
    members: List[int]  # world ranks, in the creating communicator's rank order
    created: Dict[int, Call] = field(default_factory=dict)  # rank -> its creation call


@dataclass
class LockEpoch:
    """One holding of the lock of (window, target) by one origin."""
    win: str
    target: int
    origin: int
    exclusive: bool
    count: int  # exclusive epochs on this lock before this one, as the program read it
    acq: Call  # MPI_Win_lock or MPI_Win_lock_all
    rel: Optional[Call] = None  # MPI_Win_unlock or MPI_Win_unlock_all
    merges: List["LockEpoch"] = field(default_factory=list)  # whose releases acq merges

    def label(self) -> str:
        kind = "exclusive" if self.exclusive else "shared"
        return (f"{kind} epoch (count {self.count}) of rank {self.origin} on the lock of "
                f"rank {self.target}, window {self.win!r}")


@dataclass
class Result:
    n: int
    calls: Dict[int, List[Call]]  # rank -> all logged calls
    clocked: Dict[int, List[Call]]  # rank -> clocked calls, seq order
    messages: Dict[str, Message]
    collectives: Dict[tuple, Collective]  # (comm, k) or ("window", win, k)
    warnings: List[str]
    rma: "_Rma"
    annot: "_Annot"
    shmem_locks: "_ShmemLocks"
    shmem_flags: "_ShmemFlags"
    # Whether flag waits merge the writes they read (vcx-run --shmem-flags
    # on, the default); with off they merge nothing.
    flag_merges: bool = True


# --------------------------------------------------------------------------
# Loading


GT_NAME = re.compile(r"^gt-(\d+)\.jsonl$")


def load_ground_truth(gt_dir: str, n: Optional[int] = None) -> Dict[int, List[dict]]:
    """Read gt-<rank>.jsonl files: rank -> list of call objects."""
    if not os.path.isdir(gt_dir):
        raise OracleError(f"ground-truth directory {gt_dir} does not exist")
    found = {}
    for entry in os.listdir(gt_dir):
        m = GT_NAME.match(entry)
        if m:
            found[int(m.group(1))] = os.path.join(gt_dir, entry)
    if not found:
        raise OracleError(f"no gt-<rank>.jsonl files in {gt_dir}")
    size = n if n is not None else max(found) + 1
    missing = [r for r in range(size) if r not in found]
    extra = [r for r in found if r >= size]
    if missing:
        raise OracleError(f"ground truth missing for rank(s) {missing} in {gt_dir}")
    if extra:
        raise OracleError(f"ground truth for rank(s) {sorted(extra)} but -n is {size}")
    gt = {}
    for rank in range(size):
        lines = []
        with open(found[rank], encoding="utf-8") as f:
            for i, text in enumerate(f):
                if not text.strip():
                    continue
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as e:
                    raise OracleError(f"{found[rank]}:{i + 1}: invalid JSON: {e}") from None
                lines.append(obj)
        gt[rank] = lines
    return gt


def load_trace(path: str) -> Tuple[Dict[int, List[dict]], List[str]]:
    """Read the exported trace: rank -> events sorted by seq, plus problems
    with the trace itself (reported as mismatches: the tool wrote it)."""
    events = defaultdict(list)
    problems = []
    with open(path, encoding="utf-8") as f:
        for i, text in enumerate(f):
            if not text.strip():
                continue
            try:
                ev = json.loads(text)
            except json.JSONDecodeError as e:
                problems.append(f"trace line {i + 1}: invalid JSON: {e}")
                continue
            bad = [k for k in ("rank", "seq", "call", "clock") if k not in ev]
            if bad:
                problems.append(f"trace line {i + 1}: missing field(s) {bad}")
                continue
            if not (isinstance(ev["rank"], int) and isinstance(ev["seq"], int)
                    and isinstance(ev["clock"], list)):
                problems.append(f"trace line {i + 1}: rank/seq must be ints, clock a list")
                continue
            events[ev["rank"]].append(ev)
    for rank in events:
        events[rank].sort(key=lambda e: e["seq"])
    return dict(events), problems


# --------------------------------------------------------------------------
# Analysis: parse ops, match messages, requests and collectives


def _need(cond: bool, call: Call, what: str) -> None:
    if not cond:
        raise OracleError(f"{call.where()}: {what}")


def _is_rank(r, n: int) -> bool:
    return isinstance(r, int) and not isinstance(r, bool) and 0 <= r < n


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _match_fields(c: Call, op: dict, n: int, receive: bool) -> Optional[tuple]:
    """The optional matching fields of a send op, (comm, tag), or of a
    recv/post/mprobe op, (comm, src, tag) with "any" for a wildcard; None if
    the op logs none of them."""
    keys = ("comm", "src", "tag") if receive else ("comm", "tag")
    have = [k for k in keys if k in op]
    if not have:
        return None
    kind = op.get("op")
    _need(len(have) == len(keys), c, f"{kind} op logs {have}; the matching fields "
                                     f"{list(keys)} go together")
    comm, tag = op["comm"], op["tag"]
    _need(isinstance(comm, str) and bool(comm), c, f"{kind} comm {comm!r}")
    if receive:
        _need(_is_count(tag) or tag == "any", c, f"{kind} tag {tag!r}: a tag >= 0 or 'any'")
        src = op["src"]
        _need(src == "any" or _is_rank(src, n), c,
              f"{kind} src {src!r}: a rank in 0..{n - 1} or 'any'")
        return (comm, src, tag)
    _need(_is_count(tag), c, f"{kind} tag {tag!r}: a tag >= 0")
    return (comm, tag)


def _parse_coll(c: Call, op: dict, n: int) -> dict:
    """A coll op: the instance description every member must share, who must
    log it, and this member's role (signal part?, wait part?, whose signal
    parts the wait merges)."""
    kind, comm, root = op.get("kind"), op.get("comm"), op.get("root")
    _need(kind in COLL_KINDS, c, f"collective kind {kind!r}")
    _need(isinstance(comm, str) and comm, c, f"comm {comm!r}")
    me = c.rank

    def ranks(key: str, allow_empty: bool = False, distinct: bool = True) -> List[int]:
        v = op.get(key)
        ok = (isinstance(v, list) and (allow_empty or bool(v))
              and all(_is_rank(x, n) for x in v)
              and (not distinct or len(set(v)) == len(v)))
        _need(ok, c, f"{key} {v!r} must be a list of {'distinct ' if distinct else ''}"
                     f"ranks in 0..{n - 1}")
        return list(v)

    if "remote" in op:
        local, remote = ranks("local"), ranks("remote")
        _need(me in local, c, f"logs a collective on intercommunicator {comm} whose local "
                              f"group {local} it is not in")
        _need(not set(local) & set(remote), c, f"local {local} and remote {remote} overlap")
        _need(kind in ("all_to_all", "one_to_all", "all_to_one"), c,
              f"{kind} collective on intercommunicator {comm}")
        if kind == "all_to_all":
            _need(root is None, c, "all_to_all collective with a root")
            role = (True, True, remote)  # bipartite: merges the other group
        else:
            _need(root in local or root in remote, c, f"root {root!r} is in neither group")
            root_signals = kind == "one_to_all"
            if root == me:
                role = (root_signals, not root_signals, [] if root_signals else remote)
            elif root in remote:
                role = (not root_signals, root_signals, [root] if root_signals else [])
            else:
                role = (False, False, [])  # the root's group (MPI_PROC_NULL): no part
        return dict(kind=kind, comm=comm, inter=True, expected=local + remote,
                    desc=(kind, frozenset((tuple(local), tuple(remote))), root),
                    role=role, edges=None)

    members = ranks("members")
    _need(me in members, c, f"logs a collective on {comm} it is no member of")
    edges = None
    if kind == "neighbor":
        _need(root is None, c, "neighbor collective with a root")
        inn = ranks("in", allow_empty=True, distinct=False)
        out = ranks("out", allow_empty=True, distinct=False)
        _need(all(x in members for x in inn + out), c,
              f"neighbours in={inn} out={out} outside the members {members}")
        role = (bool(out), bool(inn), inn)
        edges = (inn, out)
    elif kind == "all_to_all":
        _need(root is None, c, "all_to_all collective with a root")
        role = (True, True, members)
    elif kind == "prefix":
        _need(root is None, c, "prefix collective with a root")
        i, size = members.index(me), len(members)
        # First member: signal only; last: wait only; a lone member is both.
        role = (i < size - 1 or size == 1, i > 0 or size == 1, members[:i])
    else:
        _need(root in members, c, f"root {root!r} is not a member")
        if kind == "one_to_all":
            role = (True, False, []) if me == root else (False, True, [root])
        else:
            role = ((False, True, [m for m in members if m != root]) if me == root
                    else (True, False, []))
    return dict(kind=kind, comm=comm, inter=False, expected=members,
                desc=(kind, tuple(members), root), role=role, edges=edges)


RMA_OPS = ("win_create", "win_fence", "win_free", "win_post", "win_start", "win_complete",
           "win_wait", "win_lock", "win_unlock", "win_lock_all", "win_unlock_all")
LOCK_TYPES = ("exclusive", "shared")


class _Rma:
    """One-sided synchronisation of all ranks: windows, fence/free instances
    (kept with the collectives), post/start/complete/wait pairs and lock
    epochs. Ranks are fed in turn, each in program order; finish() then
    matches across ranks."""

    def __init__(self, n: int, collectives: Dict[tuple, Collective], warnings: List[str]):
        self.n = n
        self.collectives = collectives
        self.warnings = warnings
        self.windows: Dict[str, Window] = {}
        # Per (window, from, to) pair, in the order of the rank that logs
        # them: the k-th entries of matching lists belong together.
        self.posts = defaultdict(list)  # (win, target, origin) -> posts of target
        self.starts = defaultdict(list)  # (win, origin, target) -> starts of origin
        self.completes = defaultdict(list)  # (win, origin, target) -> completes of origin
        self.waits = defaultdict(list)  # (win, target, origin) -> waits of target
        self.locks: Dict[Tuple[str, int], List[LockEpoch]] = defaultdict(list)
        self.rank = -1
        self.local: Dict[str, dict] = {}

    def begin_rank(self, rank: int) -> None:
        self.rank = rank
        self.local = {}  # window name -> this rank's state of it

    def end_rank(self) -> None:
        for w, st in self.local.items():
            where = f"rank {self.rank}: window {w}"
            if st["exposure"] is not None:
                self.warnings.append(f"{where}: exposure epoch to {st['exposure']} never "
                                     f"ended (MPI_Win_wait)")
            if st["access"] is not None:
                self.warnings.append(f"{where}: access epoch to {st['access']} never ended "
                                     f"(MPI_Win_complete)")
            for t in st["held"]:
                self.warnings.append(f"{where}: lock of rank {t} never released")
            if st["lock_all"] is not None:
                self.warnings.append(f"{where}: MPI_Win_lock_all never released")

    def _group(self, c: Call, op: dict, members: List[int]) -> List[int]:
        g = op.get("group")
        ok = (isinstance(g, list) and all(_is_rank(x, self.n) for x in g)
              and len(set(g)) == len(g))
        _need(ok, c, f"group {g!r} must be a list of distinct ranks")
        _need(all(x in members for x in g), c,
              f"group {g} is not part of the window's group {members}")
        return list(g)

    def op(self, c: Call, op: dict, kind: str) -> None:
        w = op.get("win")
        _need(isinstance(w, str) and bool(w), c, f"window name {w!r}")
        me = c.rank
        if kind == "win_create":
            m = op.get("members")
            ok = (isinstance(m, list) and m and all(_is_rank(x, self.n) for x in m)
                  and len(set(m)) == len(m))
            _need(ok, c, f"members {m!r} must be a list of distinct ranks")
            _need(me in m, c, f"creates window {w} without being a member of {m}")
            _need(w not in self.local, c, f"window name {w} created twice")
            win = self.windows.get(w)
            if win is None:
                win = self.windows[w] = Window(name=w, members=list(m))
            elif win.members != m:
                other = next(iter(win.created.values()))
                raise OracleError(f"{c.where()}: window {w} created with members {m}, but "
                                  f"{other.where()} logged {win.members}")
            win.created[me] = c
            self.local[w] = dict(open=True, syncs=0, exposure=None, access=None, held={},
                                 lock_all=None)
            return

        st = self.local.get(w)
        _need(st is not None, c, f"uses window {w}, which it never created")
        _need(st["open"], c, f"uses window {w} after freeing it")
        members = self.windows[w].members

        if kind in ("win_fence", "win_free"):
            what = kind[4:]
            if kind == "win_free":
                busy = (st["exposure"] is not None or st["access"] is not None or st["held"]
                        or st["lock_all"] is not None)
                _need(not busy, c, f"frees window {w} with an epoch still open")
                st["open"] = False
            k = st["syncs"]
            st["syncs"] += 1
            key = ("window", w, k)
            desc = (what, tuple(members), None)
            co = self.collectives.get(key)
            if co is None:
                co = Collective(comm=w, index=k, kind="all_to_all", desc=desc,
                                expected=list(members), inter=False, space="window")
                self.collectives[key] = co
            elif co.desc != desc:
                other = next(iter(co.calls.values()))
                raise OracleError(f"{c.where()}: {co.label()} is a {what} here, but "
                                  f"{other.where()} logged a {co.desc[0]}")
            co.calls[me] = c
            co.sig_call[me] = c
            co.sources[me] = list(members)
            c.signals.append(("coll", key))
            c.waits.append(("coll", key))
        elif kind == "win_post":
            g = self._group(c, op, members)
            _need(st["exposure"] is None, c, f"MPI_Win_post on window {w} while an exposure "
                                             f"epoch is open")
            st["exposure"] = g
            for o in g:
                lst = self.posts[(w, me, o)]
                c.signals.append(("post", (w, me, o, len(lst))))
                lst.append(c)
        elif kind == "win_start":
            g = self._group(c, op, members)
            _need(st["access"] is None, c, f"MPI_Win_start on window {w} while an access "
                                           f"epoch is open")
            st["access"] = g
            for t in g:
                lst = self.starts[(w, me, t)]
                c.waits.append(("post", (w, t, me, len(lst))))
                lst.append(c)
        elif kind == "win_complete":
            g = self._group(c, op, members)
            _need(st["access"] is not None, c, f"completes no access epoch on window {w}")
            _need(sorted(g) == sorted(st["access"]), c,
                  f"complete group {g} differs from the start group {st['access']}")
            st["access"] = None
            for t in g:
                lst = self.completes[(w, me, t)]
                c.signals.append(("wcomplete", (w, me, t, len(lst))))
                lst.append(c)
        elif kind == "win_wait":
            g = self._group(c, op, members)
            _need(st["exposure"] is not None, c, f"waits for no exposure epoch on window {w}")
            _need(sorted(g) == sorted(st["exposure"]), c,
                  f"wait group {g} differs from the post group {st['exposure']}")
            st["exposure"] = None
            for o in g:
                lst = self.waits[(w, me, o)]
                c.waits.append(("wcomplete", (w, o, me, len(lst))))
                lst.append(c)
        elif kind == "win_lock":
            t, typ, count = op.get("target"), op.get("type"), op.get("count")
            _need(t in members and _is_rank(t, self.n), c,
                  f"lock target {t!r} is not in the window's group {members}")
            _need(typ in LOCK_TYPES, c, f"lock type {typ!r}")
            _need(_is_count(count), c, f"lock count {count!r}")
            _need(st["lock_all"] is None and t not in st["held"], c,
                  f"locks rank {t} on window {w} while already holding that lock")
            ep = LockEpoch(win=w, target=t, origin=me, exclusive=typ == "exclusive",
                           count=count, acq=c)
            st["held"][t] = ep
            self.locks[(w, t)].append(ep)
            c.waits.append(("lock", ep))
        elif kind == "win_unlock":
            t = op.get("target")
            _need(t in st["held"], c, f"unlocks rank {t!r} on window {w} without holding it")
            ep = st["held"].pop(t)
            ep.rel = c
            c.signals.append(("unlock", ep))
        elif kind == "win_lock_all":
            counts = op.get("counts")
            ok = (isinstance(counts, list) and len(counts) == len(members)
                  and all(_is_count(x) for x in counts))
            _need(ok, c, f"counts {counts!r} must give one count per member of {members}")
            _need(st["lock_all"] is None and not st["held"], c,
                  f"MPI_Win_lock_all on window {w} while holding a lock")
            eps = []
            for t, count in zip(members, counts):
                ep = LockEpoch(win=w, target=t, origin=me, exclusive=False, count=count, acq=c)
                self.locks[(w, t)].append(ep)
                c.waits.append(("lock", ep))
                eps.append(ep)
            st["lock_all"] = eps
        elif kind == "win_unlock_all":
            _need(st["lock_all"] is not None, c, f"MPI_Win_unlock_all on window {w} without "
                                                 f"MPI_Win_lock_all")
            for ep in st["lock_all"]:
                ep.rel = c
                c.signals.append(("unlock", ep))
            st["lock_all"] = None
        else:
            raise OracleError(f"{c.where()}: unknown op {kind!r}")

    def finish(self) -> None:
        for win in self.windows.values():
            missing = sorted(set(win.members) - set(win.created))
            if missing:
                raise OracleError(f"missing match: window {win.name} with members "
                                  f"{win.members}: rank(s) {missing} never created it")
        self._pairs(self.posts, self.starts, "posted to", "started towards")
        self._pairs(self.waits, self.completes, "waited for", "completed towards")
        for key, eps in self.locks.items():
            self._order(key, eps)

    @staticmethod
    def _pairs(by_target, by_origin, t_verb: str, o_verb: str) -> None:
        """Every (target, origin) pair has as many target-side calls as
        origin-side ones."""
        keys = {(w, t, o) for (w, t, o) in by_target} | {(w, t, o) for (w, o, t) in by_origin}
        for w, t, o in sorted(keys):
            a, b = len(by_target.get((w, t, o), ())), len(by_origin.get((w, o, t), ()))
            if a != b:
                raise OracleError(f"missing match: window {w}: rank {t} {t_verb} rank {o} "
                                  f"{a} time(s), rank {o} {o_verb} rank {t} {b} time(s)")

    def _order(self, key: Tuple[str, int], eps: List[LockEpoch]) -> None:
        """Place the epochs of one lock by their counts and note whose
        releases each acquisition merges."""
        w, t = key
        excl = sorted((e for e in eps if e.exclusive), key=lambda e: e.count)
        counts = [e.count for e in excl]
        if counts != list(range(len(excl))):
            raise OracleError(f"lock of rank {t} on window {w}: the exclusive epochs read "
                              f"counts {counts}, expected each of 0..{len(excl) - 1} once: "
                              + "; ".join(f"{e.label()} at {e.acq.where()}" for e in excl))
        shared_at = defaultdict(list)  # count -> shared epochs right before that exclusive
        for e in eps:
            if not e.exclusive:
                if e.count > len(excl):
                    raise OracleError(f"{e.label()} at {e.acq.where()}: read {e.count}, but "
                                      f"only {len(excl)} exclusive epoch(s) exist")
                shared_at[e.count].append(e)
        for e in eps:
            prev_excl = [excl[e.count - 1]] if e.count > 0 else []
            e.merges = prev_excl + shared_at[e.count] if e.exclusive else prev_excl
            for m in e.merges:
                if m.rel is None:
                    raise OracleError(f"{e.label()} at {e.acq.where()} merges the release of "
                                      f"{m.label()}, which was never released")


ANNOT_OPS = ("annot_tick", "annot_signal", "annot_wait", "annot_deposit", "annot_fetch")


class _Annot:
    """User annotations of all ranks: process queues and resources."""

    def __init__(self, n: int, warnings: List[str]):
        self.n = n
        self.warnings = warnings
        self.signals = defaultdict(list)  # (origin, dest, queue) -> signal calls
        self.waits = defaultdict(list)  # (origin, dest, queue) -> wait calls
        self.deposits: Dict[tuple, Dict[int, Call]] = defaultdict(dict)  # (res, dep) -> ordinal
        self.fetches: List[Tuple[Call, tuple, int]] = []

    def op(self, c: Call, op: dict, kind: str) -> None:
        me = c.rank
        if kind == "annot_tick":
            c.ticks = True
        elif kind in ("annot_signal", "annot_wait"):
            peer_key = "dest" if kind == "annot_signal" else "origin"
            peer, q = op.get(peer_key), op.get("queue")
            _need(_is_rank(peer, self.n), c, f"{peer_key} {peer!r} out of range 0..{self.n - 1}")
            _need(isinstance(q, str) and bool(q), c, f"queue {q!r}")
            if kind == "annot_signal":
                lst = self.signals[(me, peer, q)]
                c.signals.append(("asignal", (me, peer, q, len(lst))))
            else:
                lst = self.waits[(peer, me, q)]
                c.waits.append(("asignal", (peer, me, q, len(lst))))
            lst.append(c)
        else:
            res, dep = op.get("resource"), op.get("deposition")
            _need(isinstance(res, str) and bool(res), c, f"resource {res!r}")
            _need(_is_rank(dep, self.n), c, f"deposition {dep!r} out of range 0..{self.n - 1}")
            key = (res, dep)
            if kind == "annot_deposit":
                k = op.get("ordinal")
                _need(_is_count(k), c, f"ordinal {k!r}")
                if k in self.deposits[key]:
                    raise OracleError(f"{c.where()}: deposit #{k} on resource {res!r} at rank "
                                      f"{dep} logged twice (first at "
                                      f"{self.deposits[key][k].where()})")
                self.deposits[key][k] = c
                c.signals.append(("deposit", key))
            else:
                seen = op.get("seen")
                _need(_is_count(seen), c, f"seen {seen!r}")
                self.fetches.append((c, key, seen))
                c.waits.append(("fetch", (key, seen)))

    def finish(self) -> None:
        for key in sorted(set(self.signals) | set(self.waits)):
            a, b = len(self.signals.get(key, ())), len(self.waits.get(key, ()))
            o, d, q = key
            if b > a:
                raise OracleError(f"missing match: rank {d} waits {b} time(s) for rank {o} on "
                                  f"annotated queue {q!r}, which signals {a} time(s)")
            if a > b:
                self.warnings.append(f"rank {o} signals rank {d} {a} time(s) on annotated "
                                     f"queue {q!r}, which waits {b} time(s)")
        for key, deps in self.deposits.items():
            if sorted(deps) != list(range(len(deps))):
                raise OracleError(f"resource {key[0]!r} at rank {key[1]}: deposit ordinals "
                                  f"{sorted(deps)}, expected each of 0..{len(deps) - 1} once")
        for c, key, seen in self.fetches:
            have = len(self.deposits.get(key, {}))
            if seen > have:
                raise OracleError(f"{c.where()}: fetches {seen} deposit(s) on resource "
                                  f"{key[0]!r} at rank {key[1]}, but only {have} exist")

    def sources(self, w: tuple) -> List[Call]:
        if w[0] == "asignal":
            o, d, q, k = w[1]
            return [self.signals[(o, d, q)][k]]
        key, seen = w[1]
        return [self.deposits[key][k] for k in range(seen)]


SHMEM_LOCK_OPS = ("shmem_lock", "shmem_unlock")


class _ShmemLocks:
    """OpenSHMEM locks of all PEs. The programs measure the real order: the
    holder increments a counter kept for the lock right after acquiring it,
    so its acquisition logs count k (0, 1, ... per lock, each once). The
    k-th acquisition merges the release that ended the (k-1)-th, the next
    shmem_unlock of the same lock by the PE that held it."""

    def __init__(self, n: int, warnings: List[str]):
        self.n = n
        self.warnings = warnings
        self.acquisitions: Dict[str, Dict[int, Call]] = defaultdict(dict)  # lock -> count -> call
        self.releases: Dict[Tuple[str, int], Call] = {}  # (lock, count) -> release call
        self.held: Dict[Tuple[int, str], int] = {}  # (rank, lock) -> count held

    def op(self, c: Call, op: dict, kind: str) -> None:
        name = op.get("lock")
        _need(isinstance(name, str) and bool(name), c, f"lock {name!r}")
        key = (c.rank, name)
        if kind == "shmem_lock":
            k = op.get("count")
            _need(_is_count(k), c, f"count {k!r}")
            _need(key not in self.held, c, f"acquires lock {name!r}, which it holds already")
            if k in self.acquisitions[name]:
                raise OracleError(f"{c.where()}: acquisition #{k} of lock {name!r} logged twice "
                                  f"(first at {self.acquisitions[name][k].where()})")
            self.acquisitions[name][k] = c
            self.held[key] = k
            c.waits.append(("slock", (name, k)))
        else:
            _need(key in self.held, c, f"releases lock {name!r}, which it does not hold")
            k = self.held.pop(key)
            self.releases[(name, k)] = c
            c.signals.append(("sunlock", (name, k)))

    def finish(self) -> None:
        for (rank, name), k in self.held.items():
            self.warnings.append(f"rank {rank} never released lock {name!r} "
                                 f"(acquisition #{k})")
        for name, acq in self.acquisitions.items():
            if sorted(acq) != list(range(len(acq))):
                raise OracleError(f"lock {name!r}: acquisition counts {sorted(acq)}, expected "
                                  f"each of 0..{len(acq) - 1} once")
            for k in acq:
                if k > 0 and (name, k - 1) not in self.releases:
                    raise OracleError(f"{acq[k].where()} acquired lock {name!r} as #{k}, but "
                                      f"acquisition #{k - 1} ({acq[k - 1].where()}) was never "
                                      f"released")

    def sources(self, w: tuple) -> List[Call]:
        name, k = w[1]
        return [self.releases[(name, k - 1)]] if k > 0 else []


SHMEM_FLAG_OPS = ("flag_write", "flag_wait")
FLAG_MODES = ("store", "up", "down", "none")


@dataclass
class FlagWrite:
    call: Call
    prev: Optional[Call]  # the writer's last clocked call before it: its clock is deposited
    flag: str
    pe: int
    mode: str
    value: int
    order: int


class _ShmemFlags:
    """OpenSHMEM flags of all PEs: writes (any PE to a flag at PE pe) and
    the waits that returned on them. The programs log each write's position
    in the flag's modification order (`order`, known by construction: a
    round number, a counter's value) and each wait's value and the order of
    the write it read."""

    def __init__(self, n: int, warnings: List[str]):
        self.n = n
        self.warnings = warnings
        self.writes: Dict[Tuple[str, int], List[FlagWrite]] = defaultdict(list)  # (flag, pe)
        self.waits: List[Tuple[Call, str, int, int]] = []

    def op(self, c: Call, op: dict, kind: str, last_clocked: Optional[Call]) -> None:
        name = op.get("flag")
        _need(isinstance(name, str) and bool(name), c, f"flag {name!r}")
        value, order = op.get("value"), op.get("order")
        _need(isinstance(value, int) and not isinstance(value, bool), c, f"value {value!r}")
        _need(isinstance(order, int) and not isinstance(order, bool), c, f"order {order!r}")
        if kind == "flag_write":
            pe, mode = op.get("pe"), op.get("mode")
            _need(_is_rank(pe, self.n), c, f"pe {pe!r} out of range 0..{self.n - 1}")
            _need(mode in FLAG_MODES, c, f"mode {mode!r}")
            self.writes[(name, pe)].append(FlagWrite(c, last_clocked, name, pe, mode, value,
                                                     order))
        else:
            key = (name, c.rank, value, order)
            self.waits.append((c, name, value, order))
            c.waits.append(("sflag", key))

    def finish(self) -> None:
        for (name, pe), ws in self.writes.items():
            seen: Dict[int, FlagWrite] = {}
            for w in ws:
                _need(not w.call.clocked, w.call, "a flag write in a clocked call")
                if w.mode == "none":
                    continue
                if w.order in seen:
                    raise OracleError(f"{w.call.where()}: flag {name!r} at PE {pe}: order "
                                      f"{w.order} logged twice (first at "
                                      f"{seen[w.order].call.where()})")
                seen[w.order] = w
        for c, name, value, order in self.waits:
            read = [w for w in self.writes.get((name, c.rank), ())
                    if w.order == order and w.mode != "none"]
            if order > 0 and not read:
                self.warnings.append(f"{c.where()}: read flag {name!r} as written by the write "
                                     f"of order {order}, which nobody logged")

    def sources(self, w: tuple) -> List[FlagWrite]:
        name, pe, value, order = w[1]
        return [x for x in self.writes.get((name, pe), ())
                if x.order <= order and (x.mode in ("up", "down")
                                         or (x.mode == "store" and x.value == value))]


def _analyse(gt: Dict[int, List[dict]], n: int) -> Result:
    calls: Dict[int, List[Call]] = {}
    messages: Dict[str, Message] = {}
    collectives: Dict[tuple, Collective] = {}
    warnings: List[str] = []
    rma = _Rma(n, collectives, warnings)
    annot = _Annot(n, warnings)
    shmem_locks = _ShmemLocks(n, warnings)
    shmem_flags = _ShmemFlags(n, warnings)
    # Receives seen before their send is known are resolved at the end:
    # (msg, receiving call, posting or None for a blocking receive, receive).
    receives: List[Tuple[str, Call, Optional[Posting], Receive]] = []
    serial = itertools.count()  # Receive.order

    for rank in range(n):
        lst = []
        active: Dict[str, dict] = {}  # req name -> what completing it does
        persistent: Dict[str, str] = {}  # persistent req name -> type, until freed
        handles: Dict[str, Posting] = {}  # matched-probe handle -> its posting
        handle_rx: Dict[str, Receive] = {}  # matched-probe handle -> its receive
        # This rank's posted receives not completed yet (program order): the
        # candidates of the non-overtaking rule for the next posting.
        pending_rx: Dict[int, Receive] = {}
        coll_count = defaultdict(int)
        pcoll_count = defaultdict(int)  # persistent collectives initialised per comm
        pcoll: Dict[str, list] = {}  # persistent coll req -> [comm, i, starts so far]
        last_clocked: Optional[Call] = None
        rma.begin_rank(rank)
        for line, obj in enumerate(gt.get(rank, [])):
            if not isinstance(obj, dict) or not isinstance(obj.get("call"), str) \
                    or not isinstance(obj.get("ops"), list):
                raise OracleError(f"rank {rank} gt line {line + 1}: need 'call' and 'ops'")
            c = Call(rank=rank, line=line, name=obj["call"], ops=obj["ops"])

            def start(req, rtype: str) -> None:
                """Activate request req as rtype (initiation or start)."""
                _need(isinstance(req, str) and req, c, f"req {req!r}")
                _need(req not in active, c, f"request {req} started while still active")
                if req in persistent:
                    _need(persistent[req] == rtype, c, f"persistent request {req} of type "
                                                       f"{persistent[req]} started as {rtype}")

            def msg_of(op: dict, what: str) -> str:
                msg = op.get("msg")
                _need(isinstance(msg, str) and bool(msg), c, f"{what} msg {msg!r}")
                return msg

            def handle_of(op: dict) -> str:
                h = op.get("handle")
                _need(isinstance(h, str) and bool(h), c, f"message handle {h!r}")
                return h

            def posted(what: str, op: dict, blocking: bool = False) -> Receive:
                """A receive posted by this op; a non-blocking one stays
                pending until its completion."""
                rx = Receive(call=c, order=next(serial), what=what,
                             want=_match_fields(c, op, n, True),
                             before=list(pending_rx.values()))
                if not blocking:
                    pending_rx[id(rx)] = rx
                return rx

            def finished(rx: Receive, msg: Optional[str]) -> None:
                """rx completed here, with msg or cancelled (None)."""
                pending_rx.pop(id(rx), None)
                rx.msg, rx.cancelled = msg, msg is None

            for op in c.ops:
                _need(isinstance(op, dict), c, f"op {op!r} is not an object")
                kind = op.get("op")
                if kind == "send":
                    mode, dest = op.get("mode"), op.get("dest")
                    msg = msg_of(op, "send")
                    _need(mode in SEND_MODES, c, f"send mode {mode!r}")
                    _need(_is_rank(dest, n), c, f"send dest {dest!r} out of range 0..{n - 1}")
                    if msg in messages:
                        raise OracleError(f"{c.where()}: message {msg} sent twice (first by "
                                          f"{messages[msg].sender.where()})")
                    messages[msg] = Message(msg=msg, sender=c, dest=dest, mode=mode,
                                            match=_match_fields(c, op, n, False))
                    c.signals.append(("msg", msg))
                    req = op.get("req")
                    if req is None:
                        if mode == "sync":
                            c.waits.append(("ack", msg))
                    else:
                        start(req, "send")
                        active[req] = dict(type="send", mode=mode, msg=msg)
                elif kind == "recv":
                    msg = msg_of(op, "recv")
                    rx = posted("blocking receive", op, blocking=True)
                    finished(rx, msg)
                    c.waits.append(("msg", msg))
                    receives.append((msg, c, None, rx))
                elif kind == "post":
                    req = op.get("req")
                    start(req, "recv")
                    # Own line excluded: if this call is clocked, its tick is
                    # the answer, else the last clocked call before it.
                    active[req] = dict(type="recv", posting=Posting(c, last_clocked),
                                       rx=posted(f"receive request {req}", op))
                elif kind == "complete":
                    req = op.get("req")
                    _need(req in active, c, f"completes unknown or inactive request {req!r}")
                    info = active.pop(req)
                    if "cancelled" in op:
                        # Matched nothing: no wait, no answer, no queue position.
                        _need(op["cancelled"] is True, c, f"cancelled {op['cancelled']!r}")
                        _need(info.get("cancel", False), c,
                              f"request {req} completed as cancelled, but was never cancelled")
                        _need(op.get("msg") is None, c,
                              f"cancelled request {req} names a received msg")
                        if info["type"] == "send":
                            messages[info["msg"]].cancelled = True
                        elif info["type"] == "recv":
                            finished(info["rx"], None)
                    elif info["type"] == "recv":
                        msg = op.get("msg")
                        _need(isinstance(msg, str) and msg, c,
                              f"completion of receive request {req} without the msg it got")
                        finished(info["rx"], msg)
                        c.waits.append(("msg", msg))
                        receives.append((msg, c, info["posting"], info["rx"]))
                    else:
                        _need(op.get("msg") is None, c,
                              f"completion of {info['type']} request {req} names a received msg")
                        if info["type"] == "send" and info["mode"] == "sync":
                            c.waits.append(("ack", info["msg"]))
                        elif info["type"] == "coll" and info["wait"]:
                            c.waits.append(("coll", info["key"]))
                elif kind == "coll":
                    pc = _parse_coll(c, op, n)
                    comm = pc["comm"]
                    p = pcoll.get(op.get("req"))
                    if p is not None:
                        _need(p[0] == comm, c, f"persistent collective {op.get('req')} "
                                               f"initialised on {p[0]}, started on {comm}")
                        k, j = p[1], p[2]
                        p[2] += 1
                        key = (comm, "persistent", k, j)
                    else:
                        k, j = coll_count[comm], None
                        coll_count[comm] += 1
                        key = (comm, k)
                    co = collectives.get(key)
                    if co is None:
                        co = Collective(comm=comm, index=k, kind=pc["kind"], desc=pc["desc"],
                                        expected=pc["expected"], inter=pc["inter"], start=j)
                        collectives[key] = co
                    elif co.desc != pc["desc"]:
                        other = next(iter(co.calls.values()))
                        raise OracleError(
                            f"{c.where()}: {co.label()} logged as {_desc_text(pc['desc'])}, "
                            f"but {other.where()} logged {_desc_text(co.desc)}")
                    co.calls[rank] = c
                    if pc["edges"] is not None:
                        co.edges[rank] = pc["edges"]
                    has_sig, has_wait, sources = pc["role"]
                    if has_sig:
                        co.sig_call[rank] = c
                        c.signals.append(("coll", key))
                    if has_wait:
                        co.sources[rank] = list(sources)
                    req = op.get("req")
                    if req is None:
                        if has_wait:
                            c.waits.append(("coll", key))
                    else:
                        start(req, "coll")
                        active[req] = dict(type="coll", key=key, wait=has_wait)
                elif kind == "cancel":
                    req = op.get("req")
                    _need(req in active, c, f"cancels unknown or inactive request {req!r}")
                    _need(active[req]["type"] != "coll", c,
                          f"cancels collective request {req}")
                    active[req]["cancel"] = True
                elif kind in RMA_OPS:
                    rma.op(c, op, kind)
                elif kind in ANNOT_OPS:
                    annot.op(c, op, kind)
                elif kind in SHMEM_LOCK_OPS:
                    shmem_locks.op(c, op, kind)
                elif kind in SHMEM_FLAG_OPS:
                    shmem_flags.op(c, op, kind, last_clocked)
                elif kind == "init":
                    req, rtype = op.get("req"), op.get("type")
                    _need(isinstance(req, str) and req, c, f"init req {req!r}")
                    _need(rtype in REQ_TYPES, c, f"init type {rtype!r}")
                    _need(req not in persistent and req not in active, c,
                          f"request {req} created while it exists")
                    persistent[req] = rtype
                    if rtype == "coll":
                        comm = op.get("comm")
                        _need(isinstance(comm, str) and comm, c,
                              f"persistent collective {req} without its comm")
                        pcoll[req] = [comm, pcoll_count[comm], 0]
                        pcoll_count[comm] += 1
                elif kind == "free":
                    req = op.get("req")
                    _need(req in persistent or req in active, c, f"frees unknown request {req!r}")
                    if req in active:
                        warnings.append(f"{c.where()}: request {req} freed while active; "
                                        f"its completion is never seen")
                        del active[req]
                    persistent.pop(req, None)
                    pcoll.pop(req, None)
                elif kind == "status":
                    req = op.get("req")
                    _need(req in persistent or req in active, c,
                          f"status of unknown request {req!r}")
                elif kind == "mprobe":
                    h = handle_of(op)
                    _need(h not in handles, c, f"message handle {h} probed twice")
                    handles[h] = Posting(c, last_clocked)
                    handle_rx[h] = posted(f"matched probe {h}", op)
                elif kind == "mrecv":
                    h = handle_of(op)
                    _need(h in handles, c, f"receives unknown or used message handle {h}")
                    msg = msg_of(op, "mrecv")
                    rx = handle_rx.pop(h)
                    finished(rx, msg)
                    c.waits.append(("msg", msg))
                    receives.append((msg, c, handles.pop(h), rx))
                elif kind == "imrecv":
                    h = handle_of(op)
                    _need(h in handles, c, f"receives unknown or used message handle {h}")
                    req = op.get("req")
                    start(req, "recv")
                    _need(req not in persistent, c, f"MPI_Imrecv into persistent request {req}")
                    active[req] = dict(type="recv", posting=handles.pop(h),
                                       rx=handle_rx.pop(h))
                else:
                    raise OracleError(f"{c.where()}: unknown op {kind!r}")
            if c.clocked:
                c.prev = last_clocked
                last_clocked = c
            lst.append(c)
        calls[rank] = lst
        rma.end_rank()
        for req, info in active.items():
            if info["type"] == "send":
                what = f"message {info['msg']}"
            elif info["type"] == "recv":
                what = "receive"
            else:
                what = f"collective #{info['key'][1]} on {info['key'][0]}"
            warnings.append(f"rank {rank}: request {req} ({what}) never completed")
        for h, p in handles.items():
            warnings.append(f"rank {rank}: message handle {h} from {p.call.where()} "
                            f"never received")

    for msg, c, posting, rx in receives:
        m = messages.get(msg)
        if m is None:
            raise OracleError(f"missing match: {c.where()} received message {msg}, "
                              f"which no rank logged sending")
        if m.recv_call is not None:
            raise OracleError(f"message {msg} received twice: by {m.recv_call.where()} "
                              f"and by {c.where()}")
        if m.dest != c.rank:
            raise OracleError(f"message {msg} was sent by {m.sender.where()} to rank {m.dest} "
                              f"but received by {c.where()}")
        if m.cancelled:
            raise OracleError(f"message {msg} from {m.sender.where()} was cancelled but "
                              f"received by {c.where()}")
        if rx.want is not None and m.match is not None:
            comm, src, tag = rx.want
            if (comm != m.match[0] or src not in ("any", m.sender.rank)
                    or tag not in ("any", m.match[1])):
                raise OracleError(f"{rx.where()} wants comm {comm!r} src {src!r} tag {tag!r} "
                                  f"but got message {msg}, sent by {m.sender.where()} on comm "
                                  f"{m.match[0]!r} with tag {m.match[1]}")
        m.recv_call, m.posting, m.rx = c, posting, rx

    for m in messages.values():
        if m.recv_call is None and not m.cancelled:
            if m.mode == "sync" and any(("ack", m.msg) in c.waits
                                        for c in calls[m.sender.rank]):
                raise OracleError(f"missing match: synchronous message {m.msg} from "
                                  f"{m.sender.where()} completed but was never received")
            warnings.append(f"message {m.msg} from {m.sender.where()} was never received")

    _non_overtaking(messages, calls)
    rma.finish()
    annot.finish()
    shmem_locks.finish()
    shmem_flags.finish()
    for co in collectives.values():
        _check_collective(co)

    clocked = {}
    for rank, lst in calls.items():
        seq = [c for c in lst if c.clocked]
        for i, c in enumerate(seq):
            c.seq = i
        clocked[rank] = seq
    return Result(n=n, calls=calls, clocked=clocked, messages=messages,
                  collectives=collectives, warnings=warnings, rma=rma, annot=annot,
                  shmem_locks=shmem_locks, shmem_flags=shmem_flags)


def _overtaking_set(b: Receive, messages: Dict[str, Message]) -> List[Receive]:
    """E(b): the receives that b's match came after by MPI's non-overtaking
    rule (module docstring). b took a message; needed for the answer to a
    synchronous one."""
    cands = [a for a in b.before if not a.cancelled]
    if not cands:
        return []
    m = messages[b.msg]
    bare = [a for a in cands if a.want is None]
    if m.match is None or bare:
        what = ([f"{m.sender.where()} (send of message {m.msg}) logs no comm/tag"]
                if m.match is None else [])
        what += [f"{a.where()} logs no comm/src/tag" for a in bare]
        raise OracleError(
            f"MPI's non-overtaking rule (needed for the answer to a synchronous message) "
            f"applies to {b.where()}, which took message {m.msg}, because of the "
            f"receive(s) pending at its posting: {'; '.join(a.where() for a in cands)}. "
            f"But {'; '.join(what)}: the program must log the matching fields (gt_match)")
    comm, tag = m.match
    out = []
    for a in cands:
        acomm, asrc, atag = a.want
        if acomm == comm and asrc in ("any", m.sender.rank) and atag in ("any", tag):
            if a.msg is None:
                raise OracleError(f"{a.where()} could have matched message {m.msg}, taken by "
                                  f"{b.where()} while it was pending, but it never completed "
                                  f"(what it matched is unknown): this case of MPI's "
                                  f"non-overtaking rule is not modelled")
            out.append(a)
    return out


def _non_overtaking(messages: Dict[str, Message], calls: Dict[int, List[Call]]) -> None:
    """Set Message.earlier of every acknowledged synchronous message: T of
    the receive that took it."""
    acked = sorted({w[1] for lst in calls.values() for c in lst for w in c.waits
                    if w[0] == "ack"})
    esets: Dict[int, List[Receive]] = {}  # id(receive) -> E(receive)
    needed: List[Receive] = []  # receives whose E set the answers need
    work = [messages[x].rx for x in acked if messages[x].rx is not None]
    while work:
        b = work.pop()
        if id(b) in esets:
            continue
        esets[id(b)] = e = _overtaking_set(b, messages)
        needed.append(b)
        work.extend(e)
    # E(b) holds receives posted before b on b's rank: their T sets are done
    # first in program order.
    needed.sort(key=lambda r: r.order)
    tsets: Dict[int, set] = {}
    for b in needed:
        t = set()
        # Latest first: once m_A is in t, so is T(A) (m_A got there through
        # a receive whose T holds T(A)), and A is skipped.
        for a in sorted(esets[id(b)], key=lambda r: -r.order):
            if a.msg not in t:
                t.add(a.msg)
                t |= tsets[id(a)]
        tsets[id(b)] = t
    for x in acked:
        m = messages[x]
        if m.rx is not None:
            m.earlier = sorted(tsets[id(m.rx)])


def _desc_text(desc: tuple) -> str:
    kind, groups, root = desc
    if isinstance(groups, frozenset):
        groups = " | ".join(str(list(g)) for g in sorted(groups))
        return f"kind={kind} groups={groups} root={root}"
    return f"kind={kind} members={list(groups)} root={root}"


def _check_collective(co: Collective) -> None:
    got = sorted(co.calls)
    if got != sorted(co.expected):
        missing = sorted(set(co.expected) - set(got))
        raise OracleError(f"missing match: {co.label()} with members {co.expected}: "
                          f"rank(s) {missing} never logged it")
    if co.kind == "neighbor":
        # Every edge a->b must be listed as often in a's out-list as in b's
        # in-list: MPI pairs them up one to one.
        outs = Counter((a, b) for a, (_, out) in co.edges.items() for b in out)
        ins = Counter((a, b) for b, (inn, _) in co.edges.items() for a in inn)
        if outs != ins:
            bad = sorted(set(outs.items()) ^ set(ins.items()))
            raise OracleError(f"{co.label()}: out- and in-neighbour lists disagree on edges "
                              f"(from, to) x count: out-lists {sorted(outs.items())}, "
                              f"in-lists {sorted(ins.items())}; first difference {bad[0]}")
    for r, srcs in co.sources.items():
        for s in srcs:
            if s not in co.sig_call:
                raise OracleError(f"{co.label()}: rank {r} waits for rank {s}, which has no "
                                  f"signal part ({co.calls[s].where()})")


# --------------------------------------------------------------------------
# Evaluation


TICK, CLOCK = 0, 1


def _answer(m: Message) -> Optional[Tuple[Call, int]]:
    """The node whose value answers synchronous message m (None: zeros)."""
    if m.posting is None:
        return (m.recv_call, CLOCK)
    if m.posting.call.clocked:
        return (m.posting.call, TICK)
    if m.posting.prev is not None:
        return (m.posting.prev, CLOCK)
    return None  # posted before the receiver's first clocked call


def _earlier_senders(res: Result, m: Message) -> List[Call]:
    """The sending calls of m.earlier whose ticks m's answer merges: per
    rank only the last one, whose tick covers the rank's earlier ones."""
    last: Dict[int, Call] = {}
    for x in m.earlier:
        s = res.messages[x].sender
        if s.rank not in last or s.line > last[s.rank].line:
            last[s.rank] = s
    return [last[r] for r in sorted(last)]


def _sources(res: Result, c: Call) -> List[Tuple[Call, int]]:
    """The nodes whose values the recorded clock of c merges."""
    out = []
    for w in c.waits:
        if w[0] == "msg":
            out.append((res.messages[w[1]].sender, TICK))
        elif w[0] == "ack":
            m = res.messages[w[1]]
            a = _answer(m)
            if a is not None:
                out.append(a)
            out.extend((s, TICK) for s in _earlier_senders(res, m))
        elif w[0] == "post":
            win, t, o, k = w[1]
            out.append((res.rma.posts[(win, t, o)][k], TICK))
        elif w[0] == "wcomplete":
            win, o, t, k = w[1]
            out.append((res.rma.completes[(win, o, t)][k], TICK))
        elif w[0] == "lock":
            out.extend((e.rel, TICK) for e in w[1].merges)
        elif w[0] in ("asignal", "fetch"):
            out.extend((s, TICK) for s in res.annot.sources(w))
        elif w[0] == "slock":
            out.extend((s, TICK) for s in res.shmem_locks.sources(w))
        elif w[0] == "sflag":
            if res.flag_merges:
                out.extend((x.prev, CLOCK) for x in res.shmem_flags.sources(w)
                           if x.prev is not None)
        else:
            co = res.collectives[w[1]]
            out.extend((co.sig_call[s], TICK) for s in co.sources[c.rank])
    return out


def _node_name(node: Tuple[Call, int]) -> str:
    c, part = node
    return f"{c.where()} [{'tick' if part == TICK else 'clock'}]"


def evaluate(gt: Dict[int, List[dict]], n: Optional[int] = None,
             flag_merges: bool = True) -> Result:
    """Compute the clock of every clocked call. gt: rank -> list of call
    objects as logged. Raises OracleError on inconsistent ground truth."""
    if n is None:
        n = max(gt) + 1 if gt else 0
    if n <= 0:
        raise OracleError("no ranks")
    res = _analyse(gt, n)
    res.flag_merges = flag_merges

    # Nodes are (call, part); ids index the flat arrays below.
    nodes: List[Tuple[Call, int]] = []
    ident: Dict[Tuple[int, int, int], int] = {}
    for rank in range(n):
        for c in res.clocked[rank]:
            for part in (TICK, CLOCK):
                ident[(c.rank, c.line, part)] = len(nodes)
                nodes.append((c, part))

    def nid(c: Call, part: int) -> int:
        return ident[(c.rank, c.line, part)]

    deps: List[List[int]] = []
    for c, part in nodes:
        if part == TICK:
            deps.append([nid(c.prev, CLOCK)] if c.prev is not None else [])
        else:
            deps.append([nid(c, TICK)] + [nid(s, p) for s, p in _sources(res, c)])

    users: List[List[int]] = [[] for _ in nodes]
    pending = [0] * len(nodes)
    for i, ds in enumerate(deps):
        pending[i] = len(ds)
        for d in ds:
            users[d].append(i)
    ready = deque(i for i, k in enumerate(pending) if k == 0)
    done = 0
    while ready:
        i = ready.popleft()
        c, part = nodes[i]
        if part == TICK:
            clk = list(c.prev.clock) if c.prev is not None else [0] * n
            clk[c.rank] += 1
            c.tick = clk
        else:
            clk = list(c.tick)
            for d in deps[i][1:]:
                s, p = nodes[d]
                v = s.tick if p == TICK else s.clock
                clk = [a if a >= b else b for a, b in zip(clk, v)]
            c.clock = clk
        done += 1
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)

    if done != len(nodes):
        raise OracleError("dependency cycle: " + _find_cycle(nodes, deps, pending))
    return res


def _find_cycle(nodes, deps, pending) -> str:
    """Follow unresolved dependencies from an unresolved node until one
    repeats; every unresolved node has an unresolved dependency."""
    start = next(i for i, k in enumerate(pending) if k > 0)
    seen = {}
    path = []
    i = start
    while i not in seen:
        seen[i] = len(path)
        path.append(i)
        i = next(d for d in deps[i] if pending[d] > 0)
    cycle = path[seen[i]:] + [i]
    # Printed in "needs" order: each node needs the next.
    return " needs ".join(_node_name(nodes[k]) for k in cycle)


# --------------------------------------------------------------------------
# Comparison with the tool's trace


def _explain(res: Result, c: Call) -> str:
    parts = []
    for w in c.waits:
        if w[0] == "msg":
            s = res.messages[w[1]].sender
            parts.append(f"msg {w[1]} from rank {s.rank} seq {s.seq} tick {s.tick}")
        elif w[0] == "ack":
            m = res.messages[w[1]]
            a = _answer(m)
            if m.posting is None:
                r = m.recv_call
                text = f"ack of {w[1]} from rank {r.rank} seq {r.seq} clock {r.clock}"
            elif a is None:
                text = f"ack of {w[1]}: rank {m.dest} posted before any clocked call"
            else:
                r, part = a
                text = (f"ack of {w[1]}: rank {r.rank} clock at the posting "
                        f"({m.posting.call.name}, gt line {m.posting.call.line + 1}) = "
                        f"{'tick of' if part == TICK else 'clock of'} seq {r.seq} "
                        f"{r.tick if part == TICK else r.clock}")
            if m.earlier:
                msgs = ", ".join(
                    f"msg {x} from rank {s.rank} seq {s.seq} tick {s.tick}"
                    for x, s in ((x, res.messages[x].sender) for x in m.earlier))
                text += f", plus the messages matched before it (non-overtaking): {msgs}"
            parts.append(text)
        elif w[0] in ("post", "wcomplete"):
            win, a, b, k = w[1]
            if w[0] == "post":
                s, what = res.rma.posts[(win, a, b)][k], f"post #{k} of rank {a} to rank {b}"
            else:
                s, what = (res.rma.completes[(win, a, b)][k],
                           f"complete #{k} of rank {a} towards rank {b}")
            parts.append(f"{what} on window {win!r}: seq {s.seq} tick {s.tick}")
        elif w[0] == "lock":
            ep = w[1]
            rels = ", ".join(f"release of the {m.label()}: rank {m.rel.rank} seq {m.rel.seq} "
                             f"tick {m.rel.tick}" for m in ep.merges)
            parts.append(f"{ep.label()}: {rels or 'first on its lock, nothing to merge'}")
        elif w[0] in ("asignal", "fetch"):
            srcs = ", ".join(f"rank {s.rank} seq {s.seq} tick {s.tick}"
                             for s in res.annot.sources(w))
            parts.append(f"annotation {w[0]} {w[1]}: {srcs or 'nothing to merge'}")
        elif w[0] == "slock":
            name, k = w[1]
            srcs = ", ".join(f"rank {s.rank} seq {s.seq} tick {s.tick}"
                             for s in res.shmem_locks.sources(w))
            parts.append(f"acquisition #{k} of lock {name!r}: "
                         f"{srcs or 'first on its lock, nothing to merge'}")
        elif w[0] == "sflag":
            name, _, value, order = w[1]
            srcs = ", ".join(
                f"{x.mode} {x.value} (order {x.order}) by rank {x.call.rank} at "
                f"{x.call.where()}: " + (f"clock of seq {x.prev.seq} {x.prev.clock}"
                                         if x.prev is not None else "zeros")
                for x in res.shmem_flags.sources(w))
            parts.append(f"flag {name!r} read as {value} (order {order}): "
                         f"{srcs or 'no write to merge'}")
        else:
            co = res.collectives[w[1]]
            srcs = ", ".join(f"rank {s} seq {co.sig_call[s].seq} tick {co.sig_call[s].tick}"
                             for s in co.sources[c.rank])
            parts.append(f"{co.label()}: {srcs or 'no sources'}")
    return "; ".join(parts) if parts else "no merges"


def compare(res: Result, trace: Dict[int, List[dict]], trace_problems: Iterable[str] = (),
            max_report: int = 10) -> List[str]:
    """Differences between the oracle's clocks and the trace, most causal
    first; empty when everything matches."""
    n = res.n
    general = list(trace_problems)
    diffs: List[Tuple[int, str]] = []  # (order key, text)
    for rank in sorted(trace):
        if not 0 <= rank < n:
            general.append(f"trace has {len(trace[rank])} event(s) for rank {rank}, "
                           f"outside 0..{n - 1}")
    for rank in range(n):
        exp = res.clocked[rank]
        got = trace.get(rank, [])
        seqs = [e["seq"] for e in got]
        if seqs != list(range(len(got))):
            general.append(f"rank {rank}: trace seq numbers are not 0..{len(got) - 1} "
                           f"(got {seqs[:8]}{'...' if len(seqs) > 8 else ''})")
        if len(got) != len(exp):
            general.append(f"rank {rank}: expected {len(exp)} clocked calls, trace has "
                           f"{len(got)}")
        for i in range(max(len(exp), len(got))):
            if i >= len(got):
                c = exp[i]
                diffs.append((sum(c.clock), f"rank {rank} seq {i}: {c.name} (gt line "
                              f"{c.line + 1}) missing from the trace; expected {c.clock}"))
                break
            if i >= len(exp):
                diffs.append((1 << 60, f"rank {rank} seq {i}: trace has an extra "
                              f"{got[i]['call']} {got[i]['clock']}"))
                break
            c, ev = exp[i], got[i]
            if ev["call"] != c.name:
                diffs.append((sum(c.clock), f"rank {rank} seq {i}: expected call {c.name} "
                              f"(gt line {c.line + 1}), trace has {ev['call']}; "
                              f"not comparing this rank further"))
                break
            if ev["clock"] != c.clock:
                if len(ev["clock"]) != n:
                    detail = f"clock has {len(ev['clock'])} entries, expected {n}"
                else:
                    entries = [k for k in range(n) if ev["clock"][k] != c.clock[k]]
                    detail = f"differs at entries {entries}"
                diffs.append((sum(c.clock), f"rank {rank} seq {i} {c.name} (gt line "
                              f"{c.line + 1}): expected {c.clock} got {ev['clock']} ({detail}; "
                              f"tick {c.tick}; merges: {_explain(res, c)})"))
    diffs.sort(key=lambda d: d[0])
    out = general[:]
    if diffs:
        shown = diffs[:max_report]
        out.append(f"{len(diffs)} clock/call mismatch(es); first {len(shown)} in causal order:")
        out.extend("  " + d[1] for d in shown)
    return out


# --------------------------------------------------------------------------
# CLI


def format_clocks(res: Result) -> List[str]:
    """The computed clocks as JSON Lines in the trace's own format."""
    out = []
    for rank in range(res.n):
        for c in res.clocked[rank]:
            out.append(json.dumps({"rank": rank, "seq": c.seq, "call": c.name,
                                   "clock": c.clock, "gt_line": c.line + 1},
                                  separators=(",", ":")))
    return out


def start_hazards(res: Result) -> List[str]:
    """Posts that may reach their origin while it is still inside an
    earlier MPI_Win_start on the same window. MPI allows them, but MPICH's
    MPI_Win_start counts the posts that reached the origin, from whichever
    target, and waits until the count equals its group's size: such a post
    makes the earlier start wait forever whenever it arrives first. A test
    program must order every post after the origin's previous start on that
    window (the origin's entry of the post's clock reaches that start's)."""
    found = []
    for o in sorted(res.calls):
        last: Dict[str, Call] = {}  # window -> the origin's previous start on it
        for c in res.calls[o]:
            pairs = [w[1] for w in c.waits if w[0] == "post"]
            if not pairs:
                continue
            win = pairs[0][0]
            prev = last.get(win)
            if prev is not None:
                for w, t, _, k in pairs:
                    p = res.rma.posts[(w, t, o)][k]
                    if p.clock[o] < prev.clock[o]:
                        found.append(f"{p.where()} may reach rank {o} inside "
                                     f"{prev.where()}, before the start it matches "
                                     f"({c.where()})")
            last[win] = c
    return found


def run(gt_dir: str, trace_path: Optional[str], n: Optional[int], self_check: bool = False,
        max_report: int = 10, out=None, err=None, flag_merges: bool = True) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        gt = load_ground_truth(gt_dir, n)
        res = evaluate(gt, len(gt), flag_merges)
    except OracleError as e:
        print(f"ORACLE ERROR: {e}", file=err)
        return EXIT_ORACLE_ERROR
    for w in res.warnings:
        print(f"oracle warning: {w}", file=err)
    total = sum(len(v) for v in res.clocked.values())
    if self_check:
        for line in format_clocks(res):
            print(line, file=out)
        if res.warnings:
            # A test program's log must be complete: every message received,
            # every request completed.
            print(f"ORACLE ERROR: self-check: {len(res.warnings)} warning(s)", file=err)
            return EXIT_ORACLE_ERROR
        hazards = start_hazards(res)
        if hazards:
            # ... and must not hang natively under some timing.
            for h in hazards[:max_report]:
                print(f"oracle: {h}", file=err)
            print(f"ORACLE ERROR: self-check: {len(hazards)} post(s) may reach their origin "
                  f"inside an earlier MPI_Win_start, where MPICH waits forever", file=err)
            return EXIT_ORACLE_ERROR
        print(f"oracle: self-check ok: {res.n} ranks, {total} clocked calls", file=err)
        return EXIT_OK
    try:
        trace, problems = load_trace(trace_path)
    except OSError as e:
        print(f"MISMATCH: cannot read trace {trace_path}: {e}", file=err)
        return EXIT_MISMATCH
    diffs = compare(res, trace, problems, max_report)
    if diffs:
        print(f"MISMATCH between trace {trace_path} and ground truth {gt_dir}:", file=out)
        for d in diffs:
            print(d, file=out)
        return EXIT_MISMATCH
    print(f"oracle: ok: {res.n} ranks, {total} clocked calls match", file=out)
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gt", required=True, help="directory with gt-<rank>.jsonl files")
    ap.add_argument("--trace", help="trace exported by `vcx-trace export` (JSON Lines)")
    ap.add_argument("-n", type=int, help="number of ranks (default: from the gt files)")
    ap.add_argument("--self-check", action="store_true",
                    help="only evaluate the ground truth and print the computed clocks")
    ap.add_argument("--max-diffs", type=int, default=10, help="mismatches to show")
    ap.add_argument("--no-flag-merges", action="store_true",
                    help="OpenSHMEM flag waits merge no writes (vcx-run --shmem-flags off)")
    args = ap.parse_args(argv)
    if not args.self_check and not args.trace:
        ap.error("--trace is required unless --self-check is given")
    return run(args.gt, args.trace, args.n, args.self_check, args.max_diffs,
               flag_merges=not args.no_flag_merges)


if __name__ == "__main__":
    sys.exit(main())
