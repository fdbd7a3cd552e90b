#!/usr/bin/env python3
"""vcx-run --explore on explore_paths.c (two crooked barriers in a row).

The first run takes rank 0's message first in both phases. Its two wildcard
receives with an alternative are rank 2's #0 (phase 1, could take rank 1)
and rank 1's #0 (phase 2, could take rank 2). Exploring must run exactly:
  - 1:0=2 with rank 2's two earlier receives pinned to their first-run
    sources (they happened before rank 1's receive was posted): it
    deadlocks, and the deadlock analysis (on by default) says so, with rank
    1 in MPI_Recv at the program's line of the receive nobody answers;
  - 2:0=1: the output differs;
  - on top of it (depth 2), 1:0=2 with rank 2's receives pinned to that
    replay's sources: it deadlocks.
Each reproducing line is then run: the one whose output differs shows it;
a deadlocking one ends with the deadlock's exit status and the same
report; and with --no-analysis deadlock it hangs, and, sent SIGUSR1 as a
user would, says where the ranks are.

  explore_paths.py --vcx-run PATH --program PATH --source explore_paths.c
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import time

WHERE_END = "end of where the ranks are"


def line_of(source: str, text: str) -> int:
    with open(source) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise SystemExit(f"{text!r} not in {source}")


def stacks_allowed() -> bool:
    try:
        with open("/proc/sys/kernel/yama/ptrace_scope") as f:
            return int(f.read().strip() or "0") == 0
    except OSError:
        return True


def check_where(text: str, hang_line: int, failures: list[str], what: str) -> None:
    """Rank 1 waits in MPI_Recv called from main at the hanging line."""
    m = re.search(r"rank 1: the last call its tool read was (\S+)", text)
    if not m:
        failures.append(f"{what}: no 'rank 1: the last call its tool read' line")
    for r in (0, 2):
        if f"rank {r}: the last call its tool read was MPI_Finalize" not in text:
            failures.append(f"{what}: rank {r} should be reported after MPI_Finalize")
    want = f"MPI_Recv <- main (explore_paths.c:{hang_line})"
    if stacks_allowed():
        if want not in text:
            failures.append(f"{what}: no stack '{want}'")
    elif want not in text and "no stacks:" not in text:
        failures.append(f"{what}: neither a stack nor why there is none")


def check_deadlock(text: str, hang_line: int, failures: list[str], what: str) -> None:
    """Rank 1 waits in MPI_Recv at the hanging line for rank 0, which has finished."""
    want = (f"rank 1 waits in MPI_Recv(source 0, tag 4, MPI_COMM_WORLD) at "
            f"explore_paths.c:{hang_line} for rank 0, which has finished")
    if not re.search(r"rank 1 waits in MPI_Recv\(source 0, tag 4, MPI_COMM_WORLD\) at \S*"
                     rf"explore_paths\.c:{hang_line} for rank 0, which has finished", text):
        failures.append(f"{what}: no '{want}'")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    hang_line = line_of(args.source, "MPI_Recv(&never")
    failures: list[str] = []
    env = dict(os.environ, VCX_EXPLORE_TIMEOUT="6")

    p = subprocess.run([args.vcx_run, "--explore", "8", "-n", "3", args.program],
                       capture_output=True, text=True, timeout=args.timeout * 4, env=env)
    first = ("phase 1: rank 2 got rank 0 first" in p.stdout and
             "phase 2: rank 1 got rank 0 first" in p.stdout)
    if not first:
        failures.append("the first run did not take rank 0's messages first:\n" + p.stdout)
    if p.returncode != 1:
        failures.append(f"--explore should exit 1, got {p.returncode}")
    if "3 replay(s) run, 3 with another outcome" not in p.stderr:
        failures.append("the summary should count three replays, all with another outcome")
    if "every alternative found was replayed" not in p.stderr:
        failures.append("every alternative should have been replayed")
    found = re.findall(r"vcx explore: (.*) when (\S+); reproduce with:\n  vcx-run "
                       r"(--force-match \S+) (.*)\n", p.stderr)
    got = [(d, alt, line) for d, alt, line, _ in found]
    want = [("deadlocked", "1:0=2", "--force-match 2:0=0,2:1=1,1:0=2"),
            ("output differs", "2:0=1", "--force-match 2:0=1"),
            ("deadlocked", "1:0=2", "--force-match 2:0=1,2:1=0,1:0=2")]
    if got != want:
        failures.append(f"replays reported: {got}, expected {want}")
    if any("--explore" in rest for *_, rest in found):
        failures.append("a reproducing line keeps --explore")
    deadlocks = p.stderr.split("  the deadlock:")[1:]
    if len(deadlocks) != 2:
        failures.append(f"{len(deadlocks)} deadlocked replays show their deadlock, not 2")
    for i, text in enumerate(deadlocks):
        check_deadlock(text.split("vcx explore:")[0], hang_line, failures,
                       f"deadlocked replay {i + 1}")

    if found and got == want:
        rest = found[1][3].split()
        q = subprocess.run([args.vcx_run, "--force-match", "2:0=1"] + rest, capture_output=True,
                           text=True, timeout=args.timeout)
        if q.returncode != 0 or "phase 1: rank 2 got rank 1 first" not in q.stdout:
            failures.append(f"2:0=1 does not reproduce: exit {q.returncode}, {q.stdout!r}")
        d = subprocess.run([args.vcx_run] + found[0][2].split() + found[0][3].split(),
                           capture_output=True, text=True, timeout=args.timeout)
        if d.returncode != 65:
            failures.append(f"the deadlocking line should exit 65, got {d.returncode}")
        check_deadlock(d.stderr, hang_line, failures, "the deadlocking line")
        # Without the deadlock analysis it hangs: asked where the ranks are
        # with SIGUSR1, then stopped.
        h = subprocess.Popen([args.vcx_run, "--no-analysis", "deadlock"] + found[0][2].split() +
                             found[0][3].split(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(5)
        h.send_signal(signal.SIGUSR1)
        time.sleep(0.5)
        deadline = time.time() + 20
        text = ""
        os.set_blocking(h.stderr.fileno(), False)
        while time.time() < deadline and WHERE_END not in text:
            chunk = h.stderr.read()
            text += chunk or ""
            time.sleep(0.2)
        if h.poll() is not None:
            failures.append(f"the hanging reproduction ended by itself ({h.returncode})")
        h.send_signal(signal.SIGINT)
        try:
            h.wait(timeout=60)
        except subprocess.TimeoutExpired:
            h.kill()
            failures.append("the hanging reproduction did not stop on SIGINT")
        if WHERE_END not in text:
            failures.append("SIGUSR1 got no 'where the ranks are' answer:\n" + text)
        else:
            check_where(text, hang_line, failures, "SIGUSR1")

    if failures:
        failures.append("stderr was:\n" + p.stderr)
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("explore_paths: pinned replays, deadlocks, a hang with where the ranks were, "
              "depth 2")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
