#!/usr/bin/env python3
"""Independent oracle for the alternative matches of wildcard receives.

From the ground truth the test programs log (tests/programs/gt.h, with the
matching fields "comm", "src", "tag" of gt_match) and the clocks oracle.py
computes from it (oracle.evaluate), this module derives, for every wildcard
receive, the sources it could have matched in another execution. It knows
nothing of the tool's implementation.

Definitions (all receives and positions are per rank r):

  * A receive of rank r is each `recv` op (posted and completed there), each
    `post` op (completed by the later `complete` op of its req that names a
    msg; cancelled if that complete says "cancelled"; never completed if
    freed or never waited) and each `mprobe` op (posted there; completed by
    the `mrecv` op of its handle or, after `imrecv`, by the `complete` op of
    the imrecv's req). Program order, also posting order: gt line, then op
    order within the line.
  * A wildcard receive is a receive whose "src" field is "any" (a receive
    logging no matching fields is none), or one a replay forced (vcx-run
    --force-match): apply_forced() rewrites such a receive's "src" to the
    forced world rank and marks it "forced": it then wants that source only
    (for E and for the clocks) and has no alternative source. Its index is the 0-based ordinal
    of rank r's wildcard receive postings in posting order, counting every
    one, also those later cancelled or never completed. Cancelled and
    never-completed wildcard receives get no result (but keep their index).

For a completed wildcard receive R of rank r that matched message m0, sent
by world rank s0, on communicator c (R's "comm") with wanted tag t (a
number or "any"):

  1. E(X), for any receive X of rank r with matched message m_X: the
     receives A of rank r posted before X, still pending when X was posted
     (A's completion comes after X's posting in program order, or never),
     on m_X's communicator, with src "any" or m_X's sender, tag "any" or
     m_X's tag, and not cancelled (oracle.py's E). A receive without a
     matched message (never completed) has an empty E.
  2. Before(R): the smallest set of receives of rank r containing every
     receive whose completion precedes R's posting in program order, and
     E(R), and closed under X in Before(R) => E(X) subset of Before(R).
     These matched before R in every execution that agrees with this run up
     to R.
  3. For each world rank s != s0 (r itself included): the messages sent by
     s to r on communicator c whose tag matches t (t "any", or equal), in
     s's sending order (gt line, then op order), without those whose send
     was cancelled. m_s is the first of them not received by a receive in
     Before(R) u {R} (a message never received counts as not received). If
     there is none, s is no alternative.
  4. k(R): the minimum, over R's completing call and the completing calls of
     every receive B of rank r with R in E*(B) (E* the transitive closure of
     E: R in E(B), or R in E(X) and X in E*(B)), of that call's recorded
     clock entry for rank r, plus one when that call also sends (an
     MPI_Sendrecv: its send carries the call's own entry, yet MPI may match
     it before the call's receive matched, so it does not follow R's match).
     The completing call of a blocking `recv` is that call itself. Every
     event of rank r with entry k(R) or higher happened after R's match.
     K(R), the knowers of R's match: pairs (world rank q, threshold t) such
     that every event of rank q with entry [q] >= t happened after R's
     match. K(R) holds (r, k(R)) and, for each receive X in {R} u {B of
     rank r : R in E*(B)} whose matched message m_X was sent in mode "sync"
     by rank q, (q, t) with t the recorded clock entry [q] of the call of q
     that completed m_X's send (the one waiting for its answer: the
     MPI_Ssend itself, or where the MPI_Issend's request completes), plus
     one when that call also sends (a blocking MPI_Ssend: its own message
     carries the call's entry, yet is sent before X matched it). That call
     returns only after X matched, and X matched no earlier than R (X is R,
     or R in E*(X)). An X whose sync send never completed adds no pair.
  5. s is an alternative source of R iff m_s exists and its sending call's
     post-tick clock (what the send deposits) has entry [q] < t for every
     (q, t) in K(R) (also when s is such a q): the send knows no event that
     follows R's match, so R could have matched it.

Result (expected_matches): a dict keyed by (rank, index) for every
completed, non-cancelled wildcard receive, each value
  {"matched_source": s0, "alternative_sources": sorted world ranks,
   "call": gt call name of the posting line,
   "completed_by": (rank, line) of the completing call, line 0-based as
                   oracle.Call.line}.
Missing matching fields where the definition needs them (a send's
comm/tag, a candidate receive's comm/src/tag) are a MatchesOracleError
(an oracle.OracleError) naming the calls.

The tool reports one finding per wildcard receive with at least one
alternative, as a JSON object {"analysis": "matches", "kind":
"wildcard-receive", "receive": {"rank": R, "index": I, ...},
"matched_source": S, "alternative_sources": [...]}; compare() checks a
list of findings against the expected results (findings of other analyses
are ignored; a receive without alternatives must have none).

CLI:
  matches_oracle.py --gt GT_DIR [-n N]                    print the expected
                                                          results (JSON Lines)
  matches_oracle.py --gt GT_DIR [-n N] --report REPORT.json
      compare with the "findings" array of the tool's report
Exit status: 0 match, 1 mismatch, 2 oracle error (ground truth unusable).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402

EXIT_OK = oracle.EXIT_OK
EXIT_MISMATCH = oracle.EXIT_MISMATCH
EXIT_ORACLE_ERROR = oracle.EXIT_ORACLE_ERROR

ANALYSIS = "matches"
KIND = "wildcard-receive"

Pos = Tuple[int, int]  # (gt line, op index within the line): program order


class MatchesOracleError(oracle.OracleError):
    """The ground truth lacks what the alternative matches need."""


@dataclass(eq=False)
class Receive:
    """One receive of a rank, as this module reads it from the gt ops."""
    call: oracle.Call  # the posting call
    post: Pos
    what: str  # e.g. "receive request r3"
    want: Optional[tuple]  # (comm, src, tag) as logged; None: not logged
    done: Optional[Pos] = None  # completion (or cancellation); None: never
    completer: Optional[oracle.Call] = None
    msg: Optional[str] = None  # the message it got
    cancelled: bool = False
    forced: bool = False  # posted with "any", forced to one source by a replay

    @property
    def wildcard(self) -> bool:
        return self.want is not None and (self.want[1] == "any" or self.forced)

    def pending_at(self, pos: Pos) -> bool:
        """Posted before pos and not completed before it."""
        return self.post < pos and (self.done is None or self.done > pos)

    def where(self) -> str:
        return f"{self.what} posted at {self.call.where()}"


def rank_receives(calls: List[oracle.Call]) -> List[Receive]:
    """The receives of one rank in posting order, from its logged calls
    (already validated by oracle.evaluate)."""
    out: List[Receive] = []
    reqs: Dict[str, Receive] = {}  # active receive request -> its receive
    handles: Dict[str, Receive] = {}  # matched-probe handle -> its receive
    for c in calls:
        for i, op in enumerate(c.ops):
            kind, pos = op.get("op"), (c.line, i)
            if kind in ("recv", "post", "mprobe"):
                fields = [k for k in ("comm", "src", "tag") if k in op]
                want = (op.get("comm"), op.get("src"), op.get("tag")) if fields else None
                if kind == "recv":
                    what = "blocking receive"
                elif kind == "post":
                    what = f"receive request {op['req']}"
                else:
                    what = f"matched probe {op['handle']}"
                rx = Receive(call=c, post=pos, what=what, want=want,
                             forced=bool(op.get("forced")))
                out.append(rx)
                if kind == "recv":
                    rx.done, rx.completer, rx.msg = pos, c, op["msg"]
                elif kind == "post":
                    reqs[op["req"]] = rx
                else:
                    handles[op["handle"]] = rx
            elif kind == "complete":
                rx = reqs.pop(op.get("req"), None)
                if rx is None:
                    continue  # a send or collective request
                rx.done, rx.completer = pos, c
                if op.get("cancelled"):
                    rx.cancelled = True
                else:
                    rx.msg = op["msg"]
            elif kind == "free":
                reqs.pop(op.get("req"), None)  # never completed
            elif kind == "mrecv":
                rx = handles.pop(op["handle"])
                rx.done, rx.completer, rx.msg = pos, c, op["msg"]
            elif kind == "imrecv":
                reqs[op["req"]] = handles.pop(op["handle"])
    return out


class _Rank:
    """The receives of rank r and the E relation between them."""

    def __init__(self, res: oracle.Result, r: int):
        self.res = res
        self.r = r
        self.rx = rank_receives(res.calls[r])

    def in_e(self, a: Receive, x: Receive) -> bool:
        """a in E(x)."""
        if x.msg is None or a.cancelled or not a.pending_at(x.post):
            return False
        m = self.res.messages[x.msg]
        missing = []
        if m.match is None:
            missing.append(f"{m.sender.where()} (send of message {m.msg}) logs no comm/tag")
        if a.want is None:
            missing.append(f"{a.where()} logs no comm/src/tag")
        if missing:
            raise MatchesOracleError(
                f"MPI's non-overtaking rule: whether {a.where()}, pending when "
                f"{x.where()} was posted, matched before it (it took message {m.msg}) is "
                f"unknown: {'; '.join(missing)}. The program must log the matching "
                f"fields (gt_match)")
        comm, src, tag = a.want
        return (comm == m.match[0] and src in ("any", m.sender.rank)
                and tag in ("any", m.match[1]))

    def before(self, rx: Receive) -> List[Receive]:
        """Before(rx), in posting order."""
        base = [a for a in self.rx if a.done is not None and a.done < rx.post]
        inside = {id(a) for a in base}
        work = [rx] + base
        while work:
            x = work.pop()
            for a in self.rx:
                # Members of the base set are in anyway: no need to decide
                # (nor to have the fields to decide) whether they are in E(x).
                if id(a) not in inside and self.in_e(a, x):
                    inside.add(id(a))
                    work.append(a)
        return [a for a in self.rx if id(a) in inside]

    def later(self, rx: Receive) -> List[Receive]:
        """Every receive B with rx in E*(B)."""
        found: Dict[int, Receive] = {}
        work = [rx]
        while work:
            x = work.pop()
            for b in self.rx:
                if id(b) not in found and b.msg is not None and self.in_e(x, b):
                    found[id(b)] = b
                    work.append(b)
        return [b for b in self.rx if id(b) in found]


def _send_positions(res: oracle.Result) -> Dict[str, Pos]:
    """msg -> position of its send op at the sender."""
    pos = {}
    for calls in res.calls.values():
        for c in calls:
            for i, op in enumerate(c.ops):
                if op.get("op") == "send":
                    pos[op["msg"]] = (c.line, i)
    return pos


def _follows_from(c: oracle.Call, r: int) -> int:
    """The smallest entry [r] of an event after the completion in call c
    (step 4): c's own, unless c also sends."""
    if c.clock is None:
        raise MatchesOracleError(f"{c.where()} completes a receive or a synchronous send "
                                 f"but has no clock")
    return c.clock[r] + (1 if any(op.get("op") == "send" for op in c.ops) else 0)


def _sync_completers(res: oracle.Result) -> Dict[str, oracle.Call]:
    """msg -> the call that completed its synchronous send (waited for its
    answer); sync sends never completed are absent."""
    return {w[1]: c for calls in res.calls.values() for c in calls for w in c.waits
            if w[0] == "ack"}


def expected_matches(res: oracle.Result) -> Dict[Tuple[int, int], dict]:
    """The alternative sources of every completed wildcard receive (module
    docstring), from an evaluated oracle.Result."""
    n = res.n
    sent_at = _send_positions(res)
    acked = _sync_completers(res)
    # (dest, sender) -> messages in the sender's order, cancelled sends left out
    outgoing: Dict[Tuple[int, int], List[oracle.Message]] = {}
    for m in sorted(res.messages.values(), key=lambda m: sent_at[m.msg]):
        if not m.cancelled:
            outgoing.setdefault((m.dest, m.sender.rank), []).append(m)

    out: Dict[Tuple[int, int], dict] = {}
    for r in range(n):
        rank = _Rank(res, r)
        index = -1
        for rx in rank.rx:
            if not rx.wildcard:
                continue
            index += 1
            if rx.msg is None:
                continue  # cancelled or never completed
            comm, src, tag = rx.want
            if not isinstance(comm, str) or tag is None:
                raise MatchesOracleError(f"{rx.where()} logs src 'any' without comm/tag")
            m0 = res.messages[rx.msg]
            s0 = m0.sender.rank
            taken = {a.msg for a in rank.before(rx) if a.msg is not None}
            taken.add(rx.msg)
            later = rank.later(rx)
            # K(R) as rank -> threshold: per rank, the smallest t is the one
            # that decides.
            knowers = {r: min(_follows_from(b.completer, r) for b in [rx] + later)}
            for x in [rx] + later:
                mx = res.messages[x.msg]
                if mx.mode == "sync" and mx.msg in acked:
                    q = mx.sender.rank
                    t = _follows_from(acked[mx.msg], q)
                    knowers[q] = min(t, knowers.get(q, t))
            alts, missing = [], []
            for s in range(n):
                if s == s0 or src not in ("any", s):
                    continue
                m_s = None
                for m in outgoing.get((r, s), ()):
                    if m.msg in taken:
                        continue
                    if m.match is None:
                        missing.append(f"{m.sender.where()} (send of message {m.msg})")
                        break
                    if m.match[0] == comm and tag in ("any", m.match[1]):
                        m_s = m
                        break
                if m_s is not None and all(m_s.sender.tick[q] < t
                                           for q, t in knowers.items()):
                    alts.append(s)
            if missing:
                raise MatchesOracleError(
                    f"the alternatives of wildcard receive #{index} of rank {r} "
                    f"({rx.where()}) need the comm/tag of messages to rank {r}, but "
                    f"{'; '.join(missing)} logs none: the program must log the matching "
                    f"fields (gt_match)")
            out[(r, index)] = {"matched_source": s0, "alternative_sources": alts,
                               "call": rx.call.name,
                               "completed_by": (rx.completer.rank, rx.completer.line)}
    return out


def compute(gt: Dict[int, List[dict]], n: Optional[int] = None,
            flag_merges: bool = True) -> Dict[Tuple[int, int], dict]:
    """expected_matches of ground truth gt (rank -> list of call objects)."""
    return expected_matches(oracle.evaluate(gt, n, flag_merges))


# --------------------------------------------------------------------------
# Comparison with the tool's findings


def _describe(key: Tuple[int, int], exp: Optional[dict]) -> str:
    r, i = key
    if exp is None:
        return f"wildcard receive #{i} of rank {r}"
    cr, cl = exp["completed_by"]
    return (f"wildcard receive #{i} of rank {r} ({exp['call']}, completed at rank {cr} "
            f"gt line {cl + 1}, matched rank {exp['matched_source']})")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def compare(expected: Dict[Tuple[int, int], dict], findings: list) -> List[str]:
    """Differences between the expected results and the tool's findings
    (JSON objects); findings of other analyses or other kinds are ignored.
    Empty when they agree."""
    diffs: List[str] = []
    got: Dict[Tuple[int, int], dict] = {}
    for f in findings:
        if not isinstance(f, dict) or f.get("analysis") != ANALYSIS or f.get("kind") != KIND:
            continue
        rx = f.get("receive")
        if not (isinstance(rx, dict) and _is_int(rx.get("rank")) and _is_int(rx.get("index"))):
            diffs.append(f"malformed finding (receive needs integer rank and index): "
                         f"{json.dumps(f, sort_keys=True)}")
            continue
        key = (rx["rank"], rx["index"])
        if key in got:
            diffs.append(f"duplicate finding for {_describe(key, expected.get(key))}")
            continue
        got[key] = f
    for key in sorted(set(expected) | set(got)):
        exp, f = expected.get(key), got.get(key)
        want = exp["alternative_sources"] if exp is not None else []
        what = _describe(key, exp)
        if f is None:
            if want:
                diffs.append(f"missing finding: {what} has alternative source(s) {want}")
            continue
        alts = f.get("alternative_sources")
        if exp is None:
            diffs.append(f"extra finding: rank {key[0]} has no completed wildcard receive "
                         f"#{key[1]}; the tool reports matched source "
                         f"{f.get('matched_source')!r}, alternatives {alts!r}")
            continue
        if not want:
            diffs.append(f"extra finding: {what} has no alternative source; the tool "
                         f"reports {alts!r}")
            continue
        if f.get("matched_source") != exp["matched_source"]:
            diffs.append(f"{what}: the tool reports matched source "
                         f"{f.get('matched_source')!r}")
        if not (isinstance(alts, list) and all(_is_int(s) for s in alts)):
            diffs.append(f"{what}: alternative_sources {alts!r} is not a list of ranks")
        elif sorted(alts) != want:
            extra = sorted(set(alts) - set(want))
            lost = sorted(set(want) - set(alts))
            detail = []
            if lost:
                detail.append(f"missing {lost}")
            if extra:
                detail.append(f"extra {extra}")
            if len(set(alts)) != len(alts):
                detail.append("repeated ranks")
            diffs.append(f"{what}: expected alternative sources {want}, the tool reports "
                         f"{alts} ({', '.join(detail)})")
    return diffs


# --------------------------------------------------------------------------
# CLI


def format_expected(expected: Dict[Tuple[int, int], dict]) -> List[str]:
    """The expected results as JSON Lines, by rank and index."""
    out = []
    for (r, i), e in sorted(expected.items()):
        cr, cl = e["completed_by"]
        out.append(json.dumps({"rank": r, "index": i, "call": e["call"],
                               "matched_source": e["matched_source"],
                               "alternative_sources": e["alternative_sources"],
                               "completed_by": {"rank": cr, "line": cl, "gt_line": cl + 1}},
                              separators=(",", ":")))
    return out


def load_findings(path: str) -> list:
    """The "findings" array of a report; ValueError/OSError if unusable."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise ValueError('the report is not a JSON object with a "findings" array')
    return doc["findings"]


def apply_forced(gt_dir: str, out_dir: str, forced: Dict[Tuple[int, int], int]) -> None:
    """Writes gt_dir's files to out_dir as a replay forcing rank r's
    wildcard receive #i to world rank forced[(r, i)] ran them: that receive
    op's "src" becomes the forced rank, marked "forced". Wildcard receives
    are counted as above: recv, post and mprobe ops with src "any", in
    program order."""
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(gt_dir)):
        if not (name.startswith("gt-") and name.endswith(".jsonl")):
            continue
        rank = int(name[3:-6])
        index = 0
        lines = []
        with open(os.path.join(gt_dir, name), encoding="utf-8") as f:
            for text in f:
                obj = json.loads(text) if text.strip() else None
                for op in (obj or {}).get("ops", []):
                    if op.get("op") in ("recv", "post", "mprobe") and op.get("src") == "any":
                        if (rank, index) in forced:
                            op["src"] = forced[(rank, index)]
                            op["forced"] = True
                        index += 1
                lines.append(json.dumps(obj) if obj is not None else text.rstrip("\n"))
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))


def parse_forced(spec: str) -> Dict[Tuple[int, int], int]:
    """'R:I=S,...' as vcx-run --force-match takes it."""
    out: Dict[Tuple[int, int], int] = {}
    for item in spec.replace(" ", ",").split(","):
        if item:
            ri, s = item.split("=")
            r, i = ri.split(":")
            out[(int(r), int(i))] = int(s)
    return out


def run(gt_dir: str, report: Optional[str], n: Optional[int] = None, out=None, err=None,
        flag_merges: bool = True) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        gt = oracle.load_ground_truth(gt_dir, n)
        res = oracle.evaluate(gt, len(gt), flag_merges)
        expected = expected_matches(res)
    except oracle.OracleError as e:
        print(f"ORACLE ERROR: {e}", file=err)
        return EXIT_ORACLE_ERROR
    for w in res.warnings:
        print(f"oracle warning: {w}", file=err)
    if report is None:
        for text in format_expected(expected):
            print(text, file=out)
        return EXIT_OK
    try:
        findings = load_findings(report)
    except (OSError, ValueError) as e:
        print(f"MISMATCH: cannot read report {report}: {e}", file=err)
        return EXIT_MISMATCH
    diffs = compare(expected, findings)
    if diffs:
        print(f"MISMATCH between report {report} and ground truth {gt_dir}:", file=out)
        for d in diffs:
            print(d, file=out)
        return EXIT_MISMATCH
    with_alts = sum(1 for e in expected.values() if e["alternative_sources"])
    print(f"matches oracle: ok: {len(expected)} completed wildcard receive(s), {with_alts} "
          f"with alternatives", file=out)
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gt", required=True, help="directory with gt-<rank>.jsonl files")
    ap.add_argument("-n", type=int, help="number of ranks (default: from the gt files)")
    ap.add_argument("--report", help="the tool's JSON report (its \"findings\" array)")
    ap.add_argument("--no-flag-merges", action="store_true",
                    help="OpenSHMEM flag waits merge no writes (vcx-run --shmem-flags off)")
    args = ap.parse_args(argv)
    return run(args.gt, args.report, args.n, flag_merges=not args.no_flag_merges)


if __name__ == "__main__":
    sys.exit(main())
