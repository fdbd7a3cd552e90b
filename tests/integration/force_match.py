#!/usr/bin/env python3
"""Replaying a run with another match (vcx-run --force-match), on
examples/wildcard.c: rank 1's first wildcard receive, posted before a
barrier, takes rank 0's message in practice, and the program checks that.

  1. The matches analysis reports that receive (rank 1, index 0) with the
     alternative source 2.
  2. Replayed with --force-match 1:0=2 it takes rank 2's message: the
     program prints "unexpected order" and exits 1; the analysis, run again,
     still counts it among the two wildcard receives, but it has no
     alternative now (MPI was told to take rank 2's message only), and
     neither has the other.
  3. A forced match that cannot happen (rank 1's second receive from rank 0,
     which has sent its only message to the first) is a deadlock the
     deadlock analysis reports (exit status 65); without that analysis, it
     ends with a message naming the forced receive within
     VCX_FORCE_MATCH_TIMEOUT, not a hang.
  4. Malformed lines and ranks outside the run are refused at once.
  5. A forced list longer than an environment string may be (read from
     --force-match-file) is applied all the same.

  force_match.py --vcx-run PATH --program PATH [--timeout S]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(cmd, timeout, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def finding(report, rank, index):
    with open(report, encoding="utf-8") as f:
        doc = json.load(f)
    for x in doc["findings"]:
        if x.get("analysis") == "matches" and x["receive"]["rank"] == rank \
                and x["receive"]["index"] == index:
            return x
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="vcx-force-match-") as tmp:
        report = os.path.join(tmp, "report.json")
        base = [args.vcx_run, "-n", "3", "--analysis", "matches", "--report", report]

        code, out, err = run(base + [args.program], args.timeout)
        f = finding(report, 1, 0) if code == 0 else None
        if code != 0 or "rank 1: ok" not in out:
            failures.append(f"the plain run failed (exit {code}):\n{out}{err}")
        elif not f or f["matched_source"] != 0 or f["alternative_sources"] != [2]:
            failures.append(f"the plain run's finding for receive 1:0 is {f}, expected matched "
                            f"0 and alternatives [2]:\n{err}")

        code, out, err = run(base + ["--force-match", "1:0=2", args.program], args.timeout)
        f = finding(report, 1, 0)
        if code != 1 or "rank 1: unexpected order (got 2, then 0)" not in out:
            failures.append(f"the replay with 1:0=2 should take rank 2's message first and exit "
                            f"1; exit {code}:\n{out}{err}")
        elif f is not None or "0 of 2 wildcard receives could have matched" not in err:
            failures.append(f"the replay's finding for receive 1:0 is {f}; expected none, and "
                            f"two wildcard receives counted:\n{err}")

        # A list too long for the environment (a replay pinning many
        # receives; here receives rank 0 never posts) goes through a file.
        pins = os.path.join(tmp, "pins.txt")
        with open(pins, "w", encoding="utf-8") as out_file:
            out_file.write(",".join(f"0:{i}=1" for i in range(100, 2100)) + ",1:0=2\n")
        code, out, err = run([args.vcx_run, "-n", "3", "--force-match-file", pins,
                              args.program], args.timeout)
        if code != 1 or "rank 1: unexpected order (got 2, then 0)" not in out:
            failures.append(f"a long --force-match-file with 1:0=2 should replay it; exit "
                            f"{code}:\n{out}{err}")

        code, out, err = run([args.vcx_run, "-n", "3", "--force-match", "1:1=0", args.program],
                             args.timeout, {"VCX_FORCE_MATCH_TIMEOUT": "30"})
        if code != 65 or "vcx: deadlock: rank 1 waits" not in err or \
                "for rank 0, which has finished" not in err:
            failures.append(f"an impossible forced match should be reported as a deadlock "
                            f"(exit 65); exit {code}:\n{out}{err}")
        code, out, err = run([args.vcx_run, "-n", "3", "--no-analysis", "deadlock",
                              "--force-match", "1:1=0", args.program],
                             args.timeout, {"VCX_FORCE_MATCH_TIMEOUT": "3"})
        if code == 0 or "made no MPI call for 3 s" not in err or "1:1=0" not in err:
            failures.append(f"an impossible forced match should end with the watchdog's "
                            f"message naming 1:1=0; exit {code}:\n{out}{err}")

        for bad, says in ((["--force-match", "1:0"], "is not R:I=S"),
                          (["--force-match", "7:0=1"], "names a rank outside the 3"),
                          (["--force-match", "1:0=2,1:0=0"], "forced to two sources")):
            code, out, err = run([args.vcx_run, "-n", "3"] + bad + [args.program], args.timeout)
            if code == 0 or says not in err:
                failures.append(f"{' '.join(bad)} should be refused saying {says!r}; exit "
                                f"{code}:\n{err}")
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("force_match: plain run, replay, impossible match and bad input all as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
