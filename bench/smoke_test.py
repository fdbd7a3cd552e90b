#!/usr/bin/env python3
"""bench.smoke: bench/run completes on a tiny configuration (2 ranks, 1 repeat,
the ping-pong and the stencil) and writes well-formed CSV files and an SVG
plot. Timing is never checked: the numbers only have to be there.

    smoke_test.py <path of bench/run> <build directory>
"""

import csv
import math
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

RAW_FIELDS = ["benchmark", "param", "metric", "unit", "ranks", "mode", "repeat", "value", "wall_s",
              "drain_s", "tool_cpu_s", "backlog"]


def check(cond, what):
    if not cond:
        print(f"bench.smoke: {what}", file=sys.stderr)
        sys.exit(1)


def main():
    run, build = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="vcx-bench-smoke-") as out:
        plot = os.path.join(out, "plot.svg")
        cmd = [sys.executable, run, "--quick", "--build", build, "--ranks", "2", "--repeats", "1",
               "--only", "pingpong,stencil", "--out", out, "--plot", plot, "--timeout", "100",
               "--no-waits"]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=110)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        check(p.returncode == 0, f"bench/run exited with status {p.returncode}")
        check("slowdown" in p.stdout, "bench/run printed no table")

        with open(os.path.join(out, "raw.csv"), newline="") as f:
            reader = csv.DictReader(f)
            check(reader.fieldnames == RAW_FIELDS, f"raw.csv has columns {reader.fieldnames}")
            rows = list(reader)
        seen = set()
        for r in rows:
            value = float(r["value"])
            check(math.isfinite(value) and value > 0, f"raw.csv has a bad value: {r}")
            check(r["ranks"] == "2", f"raw.csv has a run with {r['ranks']} ranks")
            # vcx-run -v says how long its tools ran on and their backlog.
            if r["mode"].startswith("vcx-"):
                check(r["backlog"] != "" and float(r["drain_s"]) >= 0,
                      f"raw.csv has no tool statistics for a vcx run: {r}")
            seen.add((r["benchmark"], r["mode"]))
        for bench in ("pingpong", "stencil"):
            for mode in ("native-shared", "vcx-shared"):
                check((bench, mode) in seen, f"raw.csv has no {mode} result of {bench}")
        for mode in ("native-split", "vcx-split"):
            check(("pingpong", mode) in seen, f"raw.csv has no {mode} ping-pong")
        sizes = {r["param"] for r in rows
                 if r["benchmark"] == "pingpong" and r["mode"] == "native-shared"}
        check(sizes == {"8", "64", "512", "4096", "32768", "262144", "1048576"},
              f"the ping-pong reported the sizes {sorted(sizes)}")

        with open(os.path.join(out, "summary.csv"), newline="") as f:
            summary = list(csv.DictReader(f))
        ratios = [r for r in summary if r["slowdown"]]
        check(ratios, "summary.csv has no ratios")
        for r in ratios:
            check(float(r["slowdown"]) > 0, f"summary.csv has a bad ratio: {r}")

        root = ET.parse(plot).getroot()
        check(root.tag == "{http://www.w3.org/2000/svg}svg", f"the plot's root is {root.tag}")
        bars = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.find(
            "{http://www.w3.org/2000/svg}title") is not None]
        check(len(bars) == len(ratios), f"the plot has {len(bars)} bars for {len(ratios)} ratios")
    print("bench.smoke: ok")


if __name__ == "__main__":
    main()
