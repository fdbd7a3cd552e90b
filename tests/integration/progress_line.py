#!/usr/bin/env python3
"""vcx-run shows a progress line when its stderr is a terminal, and only then.

  progress_line.py --vcx-run PATH --program PATH (timed_loop)

Runs a 6-second program under vcx-run twice: once inside a pseudo-terminal
(script(1)), where the progress line must appear ("events", "of 2 ranks
finished", rewritten in place with carriage returns) and be erased at the
end; once with stderr a file, where it must not appear.
"""
import argparse
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--timeout", type=float, default=120)
    args = ap.parse_args()
    cmd = f"{args.vcx_run} -n 2 {args.program} 6"
    tty = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True,
                         timeout=args.timeout)
    out = tty.stdout.decode(errors="replace")
    problems = []
    if tty.returncode != 0:
        problems.append(f"the run in a terminal failed ({tty.returncode})")
    if "\r\x1b[Kvcx: " not in out or "of 2 ranks finished" not in out or "events" not in out:
        problems.append("no progress line in a terminal")
    if not out.rstrip("\r\n").endswith("\r\x1b[K") and "\r\x1b[K" not in out.split("done")[-1]:
        problems.append("the progress line was not erased at the end")
    plain = subprocess.run([args.vcx_run, "-n", "2", args.program, "6"], capture_output=True,
                           text=True, timeout=args.timeout)
    if plain.returncode != 0 or plain.stdout != "done\n":
        problems.append(f"the plain run failed ({plain.returncode}): {plain.stdout!r}")
    if plain.stderr:
        problems.append(f"a progress line (or other output) without a terminal: {plain.stderr!r}")
    for p in problems:
        print(p)
    if problems:
        print(repr(out[-2000:]))
        return 1
    print("progress line in a terminal, none otherwise")
    return 0


if __name__ == "__main__":
    sys.exit(main())
