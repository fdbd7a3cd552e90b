#!/usr/bin/env python3
"""`vcx-trace otf2` writes archives that OTF2's own tools and reader read,
holding what the trace holds.

Each program runs under `vcx-run -n 3 --trace DIR`; `vcx-trace export DIR`
(JSON Lines) is the reference. The archive written by `vcx-trace otf2 DIR
OUT` must print with `otf2-print` without a warning, and read through the
OTF2 reader library (Debian's python3-otf2, its Python binding) it must give:

* one location per rank, and on each, per clocked call in program order an
  Enter and a Leave of the region named like the call, at the call's times,
  the Enter with the call's seq and source line, the Leave with its vector
  clock (the non-zero entries);
* per application message end of the export (not those of annotations or of
  window synchronisation) exactly one MpiSend (at the enter) or MpiRecv
  (at the return), whose peer, mapped through its communicator's group to a
  world rank, communicator, tag, length and position attribute are the
  export's; every send paired with exactly one receive by (sender,
  receiver, communicator, tag, position), with the same length: the sender's
  count times its type's size, the bytes the receiver's status reports;
* a collective begin and end around every call on a group (RMA ones for
  window calls), on the call's communicator.

With --corrected the times are those of `vcx-trace export --corrected`.

  trace_otf2.py --vcx-run PATH --vcx-trace PATH --otf2-print PATH
                --program NAME=EXE [...] [--arg ARG ...]

Run with a Python that has the otf2 module (Debian's python3).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

import otf2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_cases  # noqa: E402
from trace_cases import run  # noqa: E402


def rank_of(location) -> int:
    return int(location.name.split()[-1])


def read_archive(anchor: str) -> dict[int, list]:
    events: dict[int, list] = collections.defaultdict(list)
    with otf2.reader.open(anchor) as trace:
        for location, event in trace.events:
            events[rank_of(location)].append(event)
    return events


def attrs(event) -> dict:
    return {a.name: v for a, v in event.attributes.items()} if event.attributes else {}


def comm_group(comm) -> tuple[str, list[int]]:
    return comm.name.split()[-1], [rank_of(m) for m in comm.group.members]


def check_archive(records: list[dict], events: dict[int, list], n: int) -> list[str]:
    problems = []
    by_rank = collections.defaultdict(list)
    for r in records:
        by_rank[r["rank"]].append(r)
    if sorted(events) != sorted(by_rank):
        return [f"locations {sorted(events)}, ranks traced {sorted(by_rank)}"]
    sends, recvs = collections.Counter(), collections.Counter()
    sent_length, received_length = {}, {}
    for rank, calls in by_rank.items():
        evs = events[rank]
        i = 0
        for c in calls:
            where = f"rank {rank} call {c['seq']} ({c['call']})"
            if i >= len(evs) or not isinstance(evs[i], otf2.events.Enter):
                problems.append(f"{where}: no Enter")
                break
            enter = evs[i]
            a = attrs(enter)
            if enter.region.name != c["call"] or enter.time != c["enter_ns"]:
                problems.append(f"{where}: Enter of {enter.region.name} at {enter.time}")
            if a.get("vcx::seq") != c["seq"] or a.get("vcx::site") != c.get("site"):
                problems.append(f"{where}: Enter attributes {a}")
            i += 1
            body = []
            while i < len(evs) and not isinstance(evs[i], otf2.events.Leave):
                body.append(evs[i])
                i += 1
            if i >= len(evs):
                problems.append(f"{where}: no Leave")
                break
            leave = evs[i]
            i += 1
            if leave.region.name != c["call"] or leave.time != c.get("leave_ns", c["enter_ns"]):
                problems.append(f"{where}: Leave of {leave.region.name} at {leave.time}")
            clock = {f"vcx::clock[{k}]": v for k, v in enumerate(c["clock"]) if v}
            if attrs(leave) != clock:
                problems.append(f"{where}: Leave clock {attrs(leave)}, trace {clock}")
            # Messages, in the order of the export, each with its peer
            # named through its communicator.
            got = []
            for e in body:
                if isinstance(e, (otf2.events.MpiSend, otf2.events.MpiRecv)):
                    group, members = comm_group(e.communicator)
                    sent = isinstance(e, otf2.events.MpiSend)
                    peer = members[e.receiver if sent else e.sender]
                    t = c["enter_ns"] if sent else c.get("leave_ns", c["enter_ns"])
                    if e.time != t:
                        problems.append(f"{where}: message record at {e.time}, not {t}")
                    got.append(("to" if sent else "from", peer, group, e.msg_tag,
                                attrs(e).get("vcx::message_position"), e.msg_length))
                    key = ((rank, peer) if sent else (peer, rank)) + (group, e.msg_tag,
                                                                      attrs(e).get(
                                                                          "vcx::message_position"))
                    (sends if sent else recvs)[key] += 1
                    (sent_length if sent else received_length)[key] = e.msg_length
            # Application messages only: annotations' and the window
            # synchronisation's (tags beyond 32 bits) have no record.
            want = [("to" if "to" in m else "from", m.get("to", m.get("from")),
                     hex(int(m["queue"][0], 16)), int(m["queue"][1], 16), m["position"],
                     m["bytes"])
                    for m in c.get("messages", [])
                    if not c["call"].startswith("vcx_annotate")
                    and int(m["queue"][1], 16) < 2**32]
            want = sorted(want, key=lambda x: x[0] != "to")  # sends at the enter come first
            if got != want:
                problems.append(f"{where}: messages {got}, trace {want}")
            kinds = [type(e).__name__ for e in body
                     if not isinstance(e, (otf2.events.MpiSend, otf2.events.MpiRecv))]
            # Collectives as their initiations (a wait completing one is none).
            if "group" in c and not c["call"].startswith(("MPI_Wait", "MPI_Test")):
                rma = c["call"].startswith("MPI_Win_")
                prefix = "Rma" if rma else "Mpi"
                if kinds != [prefix + "CollectiveBegin", prefix + "CollectiveEnd"]:
                    problems.append(f"{where}: collective records {kinds}")
                end = body[-1]
                comm = end.win.comm if rma else end.communicator
                if comm_group(comm)[0] != hex(int(c["group"], 16)):
                    problems.append(f"{where}: collective on {comm.name}, trace {c['group']}")
            elif kinds:
                problems.append(f"{where}: unexpected records {kinds}")
        if i != len(evs):
            problems.append(f"rank {rank}: {len(evs) - i} records after the last call")
    if sends != recvs:
        problems.append(f"sends and receives do not pair: {sorted((sends - recvs).items())[:3]} "
                        f"{sorted((recvs - sends).items())[:3]}")
    if sent_length != received_length:
        diff = [(k, sent_length.get(k), received_length.get(k))
                for k in set(sent_length) | set(received_length)
                if sent_length.get(k) != received_length.get(k)]
        problems.append(f"{len(diff)} messages sent and received with other lengths, "
                        f"e.g. {diff[:3]}")
    if any(v != 1 for v in sends.values()):
        problems.append("two sends with the same ranks, communicator, tag and position")
    return problems


def check(name: str, exe: str, args, work: str) -> list[str]:
    trace = os.path.join(work, name)
    run([args.vcx_run, "-n", "3", "--trace", trace, exe, *args.arg], args.timeout)
    problems = []
    for corrected in (False, True):
        extra = ["--corrected"] if corrected else []
        out = os.path.join(work, name + ("-otf2-corrected" if corrected else "-otf2"))
        run([args.vcx_trace, "otf2", *extra, trace, out], args.timeout)
        anchor = os.path.join(out, "traces.otf2")
        p = subprocess.run([args.otf2_print, anchor], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, timeout=args.timeout)
        if p.returncode != 0 or p.stderr.strip():
            problems.append(f"otf2-print {anchor}: exit {p.returncode}: {p.stderr[:500]}")
        records = [json.loads(x) for x in
                   run([args.vcx_trace, "export", *extra, trace], args.timeout).splitlines()]
        found = check_archive(records, read_archive(anchor), 3)
        problems += [("corrected: " if corrected else "") + x for x in found]
        messages = sum(len(r.get("messages", [])) for r in records)
        print(f"[trace_otf2] {name}{' (corrected)' if corrected else ''}: {len(records)} calls, "
              f"{messages} message records checked", flush=True)
    return [f"{name}: {p}" for p in problems]


if __name__ == "__main__":
    sys.exit(trace_cases.main(
        "trace_otf2", check,
        lambda ap: ap.add_argument("--otf2-print", default="otf2-print")))
