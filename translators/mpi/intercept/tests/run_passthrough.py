#!/usr/bin/env python3
"""An MPI program with and without the interceptor preloaded, no vcx session.

  run_passthrough.py --mpiexec PATH --interceptor PATH -n N [--timeout S]
                     [--provider-check] [--fortran-calls MPI_Send,...] [--nm NM]
                     -- PROGRAM [ARGS...]

Runs `mpiexec -n N PROGRAM` twice: natively, and with LD_PRELOAD set to the
interceptor for the ranks only (-genv, as vcx-run does). Without a session
the interceptor must print one warning line and change nothing else, so:

  * both runs exit with status 0;
  * their stdout lines are the same (sorted: ranks print concurrently);
  * the preloaded run's stderr holds the warning exactly once, the native
    run's none.

--provider-check passes `--provider libmpich` to the native run and
`--provider <interceptor file name>` to the preloaded one (the program then
checks where its MPI functions resolve; see calls_everything.c).

--fortran-calls names C entry points that MPICH's Fortran library must
reference as undefined MPI_ symbols (not PMPI_): that is what routes
Fortran calls through a preloaded C interceptor. The library is the
libmpichfort the program loads (found with ldd).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import signal
import subprocess
import sys

WARNING = "vcx: the vcx interceptor is loaded but the program was not started by vcx-run"


def run(argv, env, timeout):
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, errors="replace", start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err
    return p.returncode, out, err


def describe(name, argv, code, err):
    status = "killed after the timeout" if code is None else f"exit {code}"
    tail = "".join(f"  | {line}\n" for line in err.splitlines()[-30:]) or "  (empty)\n"
    return f"{name}: {status}\n  command: {shlex.join(argv)}\n  stderr tail:\n{tail}"


def fortran_library_check(program, calls, nm) -> list[str]:
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    m = re.search(r"(\S*libmpichfort\.so\S*)\s*=>\s*(\S+)", ldd)
    if not m:
        return [f"{program} does not load libmpichfort (ldd says:\n{ldd})"]
    lib = m.group(2)
    out = subprocess.run([nm, "-D", "--undefined-only", lib], capture_output=True,
                         text=True, check=True).stdout
    undefined = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
    missing = [c for c in calls if c not in undefined]
    if missing:
        return [f"{lib} has no undefined reference to {', '.join(missing)}: its Fortran "
                f"bindings would not call the C MPI_ entry points the interceptor defines"]
    print(f"{lib} references {', '.join(calls)} as undefined MPI_ symbols: its Fortran "
          f"bindings call the C entry points, so a preloaded interceptor sees them")
    return []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--interceptor", required=True)
    ap.add_argument("-n", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--provider-check", action="store_true")
    ap.add_argument("--fortran-calls", default="")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if not program:
        ap.error("no program given")

    failures = []
    if args.fortran_calls:
        failures += fortran_library_check(program[0], args.fortran_calls.split(","), args.nm)

    env = dict(os.environ)
    # No session: the interceptor must fall back to forwarding only.
    for var in ("VCX_SESSION_DIR", "VCX_SESSION_TOKEN"):
        env.pop(var, None)
    preload = os.path.abspath(args.interceptor)
    if env.get("LD_PRELOAD"):
        preload += ":" + env["LD_PRELOAD"]

    native = [args.mpiexec, "-n", str(args.n)] + program
    preloaded = [args.mpiexec, "-genv", "LD_PRELOAD", preload, "-n", str(args.n)] + program
    if args.provider_check:
        native += ["--provider", "libmpich"]
        preloaded += ["--provider", os.path.basename(args.interceptor)]

    code_n, out_n, err_n = run(native, env, args.timeout)
    code_p, out_p, err_p = run(preloaded, env, args.timeout)

    if code_n != 0:
        failures.append(describe("native run", native, code_n, err_n))
    if code_p != 0:
        failures.append(describe("preloaded run", preloaded, code_p, err_p))
    lines_n = sorted(out_n.splitlines())
    lines_p = sorted(out_p.splitlines())
    if lines_n != lines_p:
        diff = "".join(difflib.unified_diff([x + "\n" for x in lines_n],
                                            [x + "\n" for x in lines_p],
                                            "native (sorted)", "preloaded (sorted)"))
        failures.append(f"stdout differs with the interceptor preloaded:\n{diff}")
    if not lines_n:
        failures.append("the program printed nothing")
    warnings = err_p.count(WARNING)
    if warnings != 1:
        failures.append(describe(f"preloaded run printed the interceptor's warning {warnings} "
                                 f"times, expected once", preloaded, code_p, err_p))
    if "vcx:" in err_n:
        failures.append(describe("native run mentions vcx", native, code_n, err_n))
    for err in (err_n, err_p):
        for line in err.splitlines():
            if line.startswith("calls_everything:"):
                print(line)

    if failures:
        print("FAIL\n" + "\n".join(failures))
        return 1
    print(f"OK: {len(lines_n)} output lines identical with and without the interceptor "
          f"({os.path.basename(program[0])}, {args.n} processes); one warning line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
