#!/usr/bin/env python3
"""`vcx-trace view` pages in a real browser (headless Chromium, driven
through the DevTools protocol, cdp.py).

Each program runs under `vcx-run -n 3 --trace DIR`; `vcx-trace export
--corrected DIR` is the reference (the page draws corrected times). The page
written by `vcx-trace view DIR -o PAGE` is opened from disk (nothing else is
loaded: the page is self-contained) and must show:

* one lane per rank, and the trace's calls, messages (sends paired with
  their receives by position) and collectives in its summary;
* an arrow per message when the whole run is in view;
* after a real mouse click on the box of a call that learned of other
  ranks' calls (zoomed to it), that
  call's vector clock, source line and the calls it happened after (per other
  rank, the call its clock names) in the details panel;
* for the larger run, no more boxes drawn than the lanes have pixel columns
  once calls are narrower than a pixel: zoomed out, it aggregates.

The screenshot of the first program's page goes to --screenshot.

  trace_view.py --vcx-run PATH --vcx-trace PATH --program NAME=EXE [...]
                [--arg ARG ...] [--large NAME=EXE,ARG,...] [--screenshot PNG]
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


def reference(args, trace: str) -> tuple[dict, int, int]:
    """The calls of each rank in file order, the number of messages whose
    two ends the trace has, and of collective instances of 2 or more."""
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
                    received.append((m["from"], rank, tuple(m["queue"]), m["position"]))
    messages = sum(1 for k in received if k in sent)
    instances = collections.Counter()
    for rank, calls in by_rank.items():
        seen = collections.Counter()
        for c in calls:
            if "group" in c:
                instances[(c["group"], seen[c["group"]])] += 1
                seen[c["group"]] += 1
    return by_rank, messages, sum(1 for v in instances.values() if v >= 2)


def open_page(args, exe: str, trace: str, extra: list[str]) -> str:
    run([args.vcx_run, "-n", "3", "--trace", trace, exe, *extra], args.timeout)
    page = trace + ".html"
    run([args.vcx_trace, "view", "-o", page, trace], args.timeout)
    return page


def check_page(browser, page: str, by_rank: dict, messages: int,
               collectives: int) -> list[str]:
    problems = []
    browser.open("file://" + os.path.abspath(page))
    lanes = browser.evaluate("document.querySelectorAll('.lane').length")
    if lanes != 3:
        problems.append(f"{lanes} lanes")
    summary = browser.evaluate("Object.assign({}, document.getElementById('summary').dataset)")
    calls = sum(len(v) for v in by_rank.values())
    want = {"lanes": "3", "calls": str(calls), "messages": str(messages),
            "collectives": str(collectives)}
    if summary != want:
        problems.append(f"summary {summary}, trace {want}")
    arrows = browser.evaluate("vcxView.arrows")
    if messages <= 4000 and arrows != messages:
        problems.append(f"{arrows} arrows drawn for {messages} messages")
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
    by_rank, messages, collectives = reference(args, trace)
    with cdp.Browser(args.chromium, timeout=args.timeout) as browser:
        problems = check_page(browser, page, by_rank, messages, collectives)
        problems += check_click(browser, by_rank)
        if args.screenshot and name == args.program[0].split("=")[0]:
            browser.evaluate("vcxView.fit()")
            browser.screenshot(args.screenshot)
            if os.path.getsize(args.screenshot) < 10000:
                problems.append(f"the screenshot {args.screenshot} is nearly empty")
        if args.large and name == args.program[0].split("=")[0]:
            problems += check_large(browser, args, work)
    print(f"[trace_view] {name}: 3 lanes, {sum(len(v) for v in by_rank.values())} calls, "
          f"{messages} arrows, click shows the clock", flush=True)
    return [f"{name}: {p}" for p in problems]


def check_large(browser, args, work: str) -> list[str]:
    name, spec = args.large.split("=", 1)
    exe, *extra = spec.split(",")
    trace = os.path.join(work, name + "-large")
    page = open_page(args, exe, trace, extra)
    by_rank, messages, collectives = reference(args, trace)
    problems = check_page(browser, page, by_rank, messages, collectives)
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


def arguments(ap) -> None:
    ap.add_argument("--chromium", default=cdp.find_chromium())
    ap.add_argument("--screenshot")
    ap.add_argument("--large", help="NAME=EXE,ARG,...: a run with many calls")
    ap.add_argument("--large-calls", type=int, default=100000)


if __name__ == "__main__":
    sys.exit(trace_cases.main("trace_view", check, arguments))
