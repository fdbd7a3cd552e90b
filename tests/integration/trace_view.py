#!/usr/bin/env python3
"""`vcx-trace view` pages in a real browser (headless Chromium, driven
through the DevTools protocol, cdp.py).

Each program runs under `vcx-run -n 3 --trace DIR`; `vcx-trace export
--corrected DIR` is the reference (the page draws corrected times). The page
written by `vcx-trace view DIR -o PAGE` is opened from disk (nothing else is
loaded: the page is self-contained) and must show:

* one lane per rank, and the trace's calls, messages (sends paired with
  their receives by position), messages to wildcard receives and
  collectives in its summary;
* an arrow per message when the whole run is in view, dashed for those to
  wildcard receives;
* after a real mouse click on the box of a call that learned of other
  ranks' calls (zoomed to it), that
  call's vector clock, source line and the calls it happened after (per other
  rank, the call its clock names) in the details panel;
* for the larger run, no more boxes drawn than the lanes have pixel columns
  once calls are narrower than a pixel: zoomed out, it aggregates;
* for a run with `--analysis matches --report FILE --view`, the page vcx-run
  wrote lists every receive the report says could have matched another
  send, and a click on the first selects its call and names the
  alternatives;
* for a run that deadlocks (`--deadlock`, with `--report FILE --view`), the
  page lists the deadlock with every stuck rank's line, draws one arrow
  per rank a stuck rank waits for, and a click on a rank in the list
  selects that rank's last call (its blocked call never returned).

The screenshot of the first program's page goes to --screenshot.

  trace_view.py --vcx-run PATH --vcx-trace PATH --program NAME=EXE [...]
                [--arg ARG ...] [--large NAME=EXE,ARG,...] [--screenshot PNG]
                [--deadlock NAME=EXE [--deadlock-screenshot PNG]]
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import trace_cases  # noqa: E402
from trace_cases import run  # noqa: E402


def reference(args, trace: str) -> tuple[dict, tuple[int, int], int]:
    """The calls of each rank in file order, the numbers of messages whose
    two ends the trace has (all, and those to receives for any source), and
    of collective instances of 2 or more."""
    records = [json.loads(x) for x in
               run([args.vcx_trace, "export", "--corrected", trace], args.timeout).splitlines()]
    by_rank = collections.defaultdict(list)
    for r in records:
        by_rank[r["rank"]].append(r)
    sent, received = set(), []
    for rank, calls in by_rank.items():
        for c in calls:
            for m in c.get("messages", []):
                if "to" in m:
                    sent.add((rank, m["to"], tuple(m["queue"]), m["position"]))
                else:
                    received.append(((m["from"], rank, tuple(m["queue"]), m["position"]),
                                     m.get("wildcard", False)))
    messages = sum(1 for k, _ in received if k in sent)
    wildcard = sum(1 for k, w in received if k in sent and w)
    epochs = sum(len(rma_epochs(calls)) for calls in by_rank.values())
    instances = collections.Counter()
    for rank, calls in by_rank.items():
        seen = collections.Counter()
        for c in calls:
            # MPI: every member initiates the collectives on a communicator
            # in the same order; a wait completing one is no new instance.
            if "group" in c and not c["call"].startswith(("MPI_Wait", "MPI_Test")):
                instances[(c["group"], seen[c["group"]])] += 1
                seen[c["group"]] += 1
    return by_rank, (messages, wildcard, epochs), sum(1 for v in instances.values() if v >= 2)


def rma_epochs(calls: list[dict]) -> list[tuple[int, int]]:
    """The RMA epochs of one rank, by the MPI standard's pairs: lock ..
    unlock, lock_all .. unlock_all, start .. complete, post .. wait (or a
    successful test), and fence .. fence on one window."""
    pairs = {"MPI_Win_unlock": "MPI_Win_lock", "MPI_Win_unlock_all": "MPI_Win_lock_all",
             "MPI_Win_complete": "MPI_Win_start", "MPI_Win_wait": "MPI_Win_post",
             "MPI_Win_test": "MPI_Win_post"}
    opened = collections.defaultdict(list)
    last_fence = {}
    out = []
    for i, c in enumerate(calls):
        name = c["call"]
        if name in pairs.values():
            opened[name].append(i)
        elif name in pairs and opened[pairs[name]]:
            out.append((opened[pairs[name]].pop(), i))
        elif name == "MPI_Win_fence":
            if c.get("group") in last_fence:
                out.append((last_fence[c.get("group")], i))
            last_fence[c.get("group")] = i
    return out


def open_page(args, exe: str, trace: str, extra: list[str]) -> str:
    run([args.vcx_run, "-n", "3", "--trace", trace, exe, *extra], args.timeout)
    page = trace + ".html"
    run([args.vcx_trace, "view", "-o", page, trace], args.timeout)
    return page


def check_page(browser, page: str, by_rank: dict, counts: tuple[int, int],
               collectives: int) -> list[str]:
    messages, wildcard, epochs = counts
    problems = []
    browser.open("file://" + os.path.abspath(page))
    lanes = browser.evaluate("document.querySelectorAll('.lane').length")
    if lanes != 3:
        problems.append(f"{lanes} lanes")
    summary = browser.evaluate("Object.assign({}, document.getElementById('summary').dataset)")
    summary.pop("alternatives", None)
    summary.pop("races", None)
    calls = sum(len(v) for v in by_rank.values())
    want = {"lanes": "3", "calls": str(calls), "messages": str(messages),
            "wildcard": str(wildcard), "collectives": str(collectives),
            "epochs": str(epochs), "deadlocks": "0"}
    if summary != want:
        problems.append(f"summary {summary}, trace {want}")
    arrows = browser.evaluate("vcxView.arrows")
    if messages <= 4000 and arrows != messages:
        problems.append(f"{arrows} arrows drawn for {messages} messages")
    dashed = browser.evaluate("vcxView.wildcardArrows")
    if messages <= 4000 and dashed != wildcard:
        problems.append(f"{dashed} wildcard arrows drawn for {wildcard} wildcard receives")
    return problems


def check_click(browser, by_rank: dict) -> list[str]:
    """Clicks the box of a call of rank 1 that learned of another rank's
    calls (a receive, a wait, a collective), and reads the details panel."""
    origin = min(c["enter_ns"] for calls in by_rank.values() for c in calls)
    calls = by_rank[1]
    candidates = [(i, c) for i, c in enumerate(calls)
                  if i > 0 and any(v > calls[i - 1]["clock"][k]
                                   for k, v in enumerate(c["clock"]) if k != 1)]
    if not candidates:
        return ["no call of rank 1 happened after another rank's"]
    index, call = candidates[len(candidates) // 2]
    enter, leave = call["enter_ns"] - origin, call["leave_ns"] - origin
    margin = max(1000, (leave - enter) * 2)
    browser.evaluate(f"vcxView.setRange({enter - margin}, {leave + margin})")
    box = browser.evaluate(f"vcxView.boxCenter(1, {index})")
    browser.click(box["x"], box["y"])
    shown = browser.evaluate(
        "(() => { const d = document.getElementById('details'); return {"
        "rank: d.dataset.rank, index: d.dataset.index, clock: d.dataset.clock,"
        "site: (d.querySelector('.site') || {}).textContent,"
        "after: [...d.querySelectorAll('ul.after a')].map(a => [+a.dataset.rank,"
        " +a.dataset.index])}; })()")
    problems = []
    if (shown["rank"], shown["index"]) != ("1", str(index)):
        return [f"the click at {box} selected {shown['rank']}/{shown['index']}, not 1/{index}"]
    if json.loads(shown["clock"]) != call["clock"]:
        problems.append(f"clock shown {shown['clock']}, trace {call['clock']}")
    if shown["site"] != call.get("site", "unknown"):
        problems.append(f"source shown {shown['site']}, trace {call.get('site')}")
    after = [[k, v - 1] for k, v in enumerate(call["clock"]) if k != 1 and v > 0]
    if shown["after"] != after:
        problems.append(f"happened after {shown['after']}, clock says {after}")
    return problems


def check(name: str, exe: str, args, work: str) -> list[str]:
    trace = os.path.join(work, name)
    page = open_page(args, exe, trace, args.arg)
    by_rank, counts, collectives = reference(args, trace)
    messages = counts[0]
    with cdp.Browser(args.chromium, timeout=args.timeout) as browser:
        problems = check_page(browser, page, by_rank, counts, collectives)
        problems += check_click(browser, by_rank)
        if args.screenshot and name == args.program[0].split("=")[0]:
            browser.evaluate("vcxView.fit()")
            browser.screenshot(args.screenshot)
            if os.path.getsize(args.screenshot) < 10000:
                problems.append(f"the screenshot {args.screenshot} is nearly empty")
        if name == args.program[0].split("=")[0]:
            if args.large:
                problems += check_large(browser, args, work)
            if args.matches:
                problems += check_matches(browser, args, work)
            if args.deadlock:
                problems += check_deadlock(browser, args, work)
    print(f"[trace_view] {name}: 3 lanes, {sum(len(v) for v in by_rank.values())} calls, "
          f"{messages} arrows, click shows the clock", flush=True)
    return [f"{name}: {p}" for p in problems]


def check_large(browser, args, work: str) -> list[str]:
    name, spec = args.large.split("=", 1)
    exe, *extra = spec.split(",")
    trace = os.path.join(work, name + "-large")
    page = open_page(args, exe, trace, extra)
    by_rank, counts, collectives = reference(args, trace)
    problems = check_page(browser, page, by_rank, counts, collectives)
    calls = sum(len(v) for v in by_rank.values())
    columns = browser.evaluate("document.getElementById('canvas').clientWidth")
    boxes = browser.evaluate("vcxView.boxes")
    if boxes > 3 * columns:
        problems.append(f"{boxes} boxes drawn for {calls} calls on {columns} columns")
    print(f"[trace_view] {name}: {calls} calls drawn as {boxes} boxes on {columns} columns",
          flush=True)
    if calls < args.large_calls:
        problems.append(f"only {calls} calls; the large run must have {args.large_calls}")
    return problems


def check_matches(browser, args, work: str) -> list[str]:
    """A run with the matches analysis and --view: vcx-run writes the page
    with the report's findings; each receive that could have matched another
    send is listed, and a click on its entry selects its call, which names
    the alternatives."""
    name, exe = args.matches.split("=", 1)
    trace = os.path.join(work, name + "-matches")
    report = os.path.join(work, name + "-report.json")
    out = run([args.vcx_run, "-n", "3", "--trace", trace, "--view", "--analysis", "matches",
               "--report", report, exe], args.timeout)
    del out
    with open(report, encoding="utf-8") as f:
        findings = [x for x in json.load(f)["findings"]
                    if x["kind"] == "wildcard-receive" and x["alternative_sources"]]
    if not findings:
        return [f"{name}: the matches analysis found no alternatives to show"]
    browser.open("file://" + os.path.abspath(os.path.join(trace, "view.html")))
    problems = []
    shown = browser.evaluate("document.getElementById('summary').dataset.alternatives")
    if shown != str(len(findings)):
        problems.append(f"{shown} receives with alternatives shown, the report has "
                        f"{len(findings)}")
    items = browser.evaluate(
        "[...document.querySelectorAll('ul.findings a')].map(a => { const b = "
        "a.getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2,"
        " text: a.parentElement.textContent}; })")
    if len(items) != len(findings):
        return problems + [f"{len(items)} findings listed, the report has {len(findings)}"]
    browser.click(items[0]["x"], items[0]["y"])
    got = browser.evaluate(
        "(() => { const d = document.getElementById('details'); return {rank: +d.dataset.rank,"
        " index: +d.dataset.index,"
        " text: (d.querySelector('.alternatives') || {}).textContent || ''}; })()")
    # The report names the receive by its rank and clocked-call number.
    by_rank, _, _ = reference(args, trace)
    seq = by_rank[got["rank"]][got["index"]]["seq"]
    want = [x for x in findings
            if (x["receive"]["rank"], x["receive"]["seq"]) == (got["rank"], seq)]
    alternatives = ", ".join(str(r) for r in want[0]["alternative_sources"]) if want else None
    if not want or alternatives not in got["text"]:
        problems.append(f"clicking the first finding shows {got}; the report has {want}")
    print(f"[trace_view] {name}: {len(findings)} receives with alternative matches shown",
          flush=True)
    return [f"{name}: {p}" for p in problems]


def check_deadlock(browser, args, work: str) -> list[str]:
    """A run that deadlocks, with --trace --report --view: vcx-run ends it
    (status 65) and writes the page with the deadlock drawn."""
    name, exe = args.deadlock.split("=", 1)
    trace = os.path.join(work, name + "-deadlock")
    report = os.path.join(work, name + "-deadlock.json")
    cmd = [args.vcx_run, "-n", "3", "--trace", trace, "--view", "--report", report, exe]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=args.timeout)
    if p.returncode != 65:
        return [f"{name}: {' '.join(cmd)} exited {p.returncode}, expected 65 (a deadlock): "
                f"{p.stderr[-2000:]}"]
    with open(report, encoding="utf-8") as f:
        found = [x for x in json.load(f)["findings"] if x.get("kind") == "deadlock"]
    if len(found) != 1:
        return [f"{name}: {len(found)} deadlocks in the report, expected 1"]
    calls = found[0]["calls"]
    browser.open("file://" + os.path.abspath(os.path.join(trace, "view.html")))
    problems = []
    shown = browser.evaluate("document.getElementById('summary').dataset.deadlocks")
    if shown != "1":
        problems.append(f"{shown} deadlocks shown, the report has 1")
    arrows = browser.evaluate("+document.getElementById('canvas').dataset.deadlockArrows")
    want_arrows = sum(len(c["waits_for"]) for c in calls)
    if arrows != want_arrows:
        problems.append(f"{arrows} wait-for arrows drawn, the report has {want_arrows}")
    text = browser.evaluate("(document.querySelector('ul.deadlocks') || {}).textContent || ''")
    for c in calls:
        if c.get("at") and c["at"] not in text:
            problems.append(f"the list does not name rank {c['rank']}'s line {c['at']}: {text}")
    links = browser.evaluate(
        "[...document.querySelectorAll('ul.deadlocks a')].map(a => { const b = "
        "a.getBoundingClientRect(); return {x: b.left + b.width / 2, y: b.top + b.height / 2,"
        " rank: +a.dataset.rank}; })")
    if len(links) != len(calls):
        return [f"{name}: {p}" for p in problems] + [
            f"{name}: {len(links)} ranks linked in the list, the report has {len(calls)}"]
    if args.deadlock_screenshot:
        browser.evaluate("vcxView.fit()")
        browser.screenshot(args.deadlock_screenshot)
    browser.click(links[-1]["x"], links[-1]["y"])
    got = browser.evaluate("(() => { const d = document.getElementById('details');"
                           " return {rank: +d.dataset.rank, index: +d.dataset.index}; })()")
    by_rank, _, _ = reference(args, trace)
    last = len(by_rank[links[-1]["rank"]]) - 1
    if got != {"rank": links[-1]["rank"], "index": last}:
        problems.append(f"clicking rank {links[-1]['rank']} selects {got}, expected its last "
                        f"call {last}")
    print(f"[trace_view] {name}: a deadlock of {len(calls)} ranks drawn with {arrows} arrows",
          flush=True)
    return [f"{name}: {p}" for p in problems]


def arguments(ap) -> None:
    ap.add_argument("--chromium", default=cdp.find_chromium())
    ap.add_argument("--screenshot")
    ap.add_argument("--large", help="NAME=EXE,ARG,...: a run with many calls")
    ap.add_argument("--large-calls", type=int, default=100000)
    ap.add_argument("--matches", help="NAME=EXE: a program with wildcard receives that could "
                                      "match other sends")
    ap.add_argument("--deadlock", help="NAME=EXE: a program that deadlocks at 3 ranks")
    ap.add_argument("--deadlock-screenshot", help="PNG: the deadlock's page")


if __name__ == "__main__":
    sys.exit(trace_cases.main("trace_view", check, arguments))
