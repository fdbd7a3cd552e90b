#!/usr/bin/env python3
"""vcx-run --leave-stopped on a deadlocking program: the deadlock is
reported, but nothing is ended. The line that says so names a pid per
deadlocked rank; each is a live process of the program a second later,
and vcx-run is still running. Ctrl-C (SIGINT to vcx-run) then ends the
run with the deadlock's exit status (65), and those processes are gone.

  deadlock_leave_stopped.py --vcx-run PATH --program PATH -n N [--timeout S]
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("-n", type=int, required=True)
    ap.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args()
    failures = []
    p = subprocess.Popen([args.vcx_run, "--leave-stopped", "-n", str(args.n), args.program],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    os.set_blocking(p.stderr.fileno(), False)
    err = b""
    deadline = time.time() + args.timeout
    while time.time() < deadline and b"left as it is" not in err and p.poll() is None:
        err += p.stderr.read() or b""
        time.sleep(0.1)
    text = err.decode(errors="replace")
    line = next((l for l in text.splitlines() if "left as it is" in l), "")
    pids = {int(r): int(q) for r, q in re.findall(r"rank (\d+) is pid (\d+)", line)}
    if sorted(pids) != list(range(args.n)):
        failures.append(f"want a pid for each of ranks 0..{args.n - 1}, got {pids} in {line!r}")
    time.sleep(1)
    if p.poll() is not None:
        failures.append(f"vcx-run ended by itself (exit {p.returncode})")
    program = os.path.basename(args.program)
    for rank, pid in pids.items():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")[0].decode(errors="replace")
            if os.path.basename(cmd) != program:
                failures.append(f"rank {rank}'s pid {pid} runs {cmd!r}, not {program}")
        except OSError:
            failures.append(f"rank {rank}'s pid {pid} is not running")
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        failures.append("vcx-run did not end on SIGINT")
    if p.returncode != 65:
        failures.append(f"exit {p.returncode} after SIGINT, want 65 (a deadlock)")
    time.sleep(0.5)
    for rank, pid in pids.items():
        if os.path.exists(f"/proc/{pid}"):
            failures.append(f"rank {rank}'s pid {pid} still runs after the run ended")
    text += (p.stderr.read() or b"").decode(errors="replace")
    if "vcx: deadlock:" not in text:
        failures.append("no deadlock report")
    for f in failures:
        print("FAIL: " + f)
    if failures:
        print("stderr was:\n" + text)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
