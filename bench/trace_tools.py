#!/usr/bin/env python3
"""What traces cost after the run: the size of a trace per call, and the time
`vcx-trace` takes per million calls to export it (JSON Lines), check and
correct the clock condition, write it as OTF2 and as the HTML view.

Makes one trace of the message-rate benchmark (2 ranks, mostly MPI_Isend and
MPI_Waitall calls with their messages) and times each command on it, once
with the skew of two unsynchronised nodes (VCX_TEST_CLOCK_SKEW) so that the
correction has work to do. Prints a Markdown table (docs/performance.md).

  bench/trace_tools.py [--build DIR] [--scale S]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def timed(cmd: list[str], **kw) -> float:
    start = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("VCX_BUILD_DIR", "build"))
    ap.add_argument("--scale", type=float, default=80,
                    help="msgrate's iteration factor (80: about 1.2 million calls)")
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    vcx_run, vcx_trace = os.path.join(bin_dir, "vcx-run"), os.path.join(bin_dir, "vcx-trace")
    msgrate = os.path.join(args.build, "bench", "msgrate")
    work = tempfile.mkdtemp(prefix="vcx-trace-tools-")
    try:
        trace = os.path.join(work, "trace")
        env = dict(os.environ, VCX_TEST_CLOCK_SKEW="1:-2000000:100")
        subprocess.run([vcx_run, "-n", "2", "--trace", trace, msgrate, "--scale",
                        str(args.scale)], check=True, stdout=subprocess.DEVNULL, env=env)
        summary = subprocess.run([vcx_trace, "summary", trace], check=True, text=True,
                                 stdout=subprocess.PIPE).stdout
        calls = sum(int(n) for n in re.findall(r"rank \d+: (\d+) clocked call", summary))
        size = sum(os.path.getsize(os.path.join(trace, f)) for f in os.listdir(trace)
                   if f.endswith(".vcxt"))
        rows = [
            ("export (JSON Lines)", [vcx_trace, "export", trace]),
            ("correct", [vcx_trace, "correct", trace]),
            ("export --corrected", [vcx_trace, "export", "--corrected", trace]),
            ("otf2", [vcx_trace, "otf2", trace, os.path.join(work, "otf2")]),
            ("view", [vcx_trace, "view", "-o", os.path.join(work, "view.html"), trace]),
        ]
        print(f"trace of msgrate (2 ranks, --scale {args.scale}): {calls} calls, "
              f"{size / calls:.1f} bytes per call\n")
        print("| command | seconds | seconds per million calls |")
        print("|---|---:|---:|")
        for label, cmd in rows:
            s = timed(cmd)
            print(f"| `vcx-trace {label}` | {s:.2f} | {s / calls * 1e6:.2f} |", flush=True)
        page = os.path.getsize(os.path.join(work, "view.html"))
        print(f"\nview page: {page / 1e6:.1f} MB ({page / calls:.0f} bytes per call)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
