#!/usr/bin/env python3
"""Plugin options come from the plugins' own declarations.

  plugin_options.py --vcx-run P --toolproc P --plugin-dir DIR --program P

With the real vcx-run, vcx-toolproc and plugins:
  1. vcx-run --help-plugins lists every installed plugin with the options
     it declares and their defaults;
  2. vcx-toolproc --help prints the same tables;
  3. a key no plugin declares, and a value of the wrong kind, are usage
     errors (64) that name the option, before anything starts;
  4. a declared option is passed on and the run succeeds;
  5. a key that an installed plugin declares but no plugin of this run
     loads is refused by the tools themselves, naming what they take.
"""
import argparse
import os
import subprocess
import sys


def run(cmd, timeout=90):
    env = dict(os.environ, VCX_NO_PROGRESS="1")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--toolproc", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--program", required=True)
    args = ap.parse_args()
    problems = []

    def expect(ok, what, r=None):
        if not ok:
            problems.append(what + (f"\n  status {r.returncode}\n  stdout: {r.stdout}\n"
                                    f"  stderr: {r.stderr}" if r is not None else ""))

    listed = run([args.vcx_run, "--help-plugins"])
    expect(listed.returncode == 0, "--help-plugins fails", listed)
    for want in ("engine vclock: ", "  vclock.diff-bytes=N (default: 67108864)\n",
                 "  vclock.ahead=0|1 (default: 1)\n", "translator mpi: ",
                 "module trace: ", "  trace.dir=TEXT\n", "module race: ", "  race.dir=TEXT\n",
                 "module matches: ", "  matches.record=TEXT\n"):
        expect(want in listed.stdout, f"--help-plugins does not show {want!r}", listed)

    helped = run([args.toolproc, "--help", "--plugin-dir", args.plugin_dir])
    expect(helped.returncode == 0, "vcx-toolproc --help fails", helped)
    expect("  vclock.diff-bytes=N (default: 67108864)\n" in helped.stdout,
           "vcx-toolproc --help does not show the engine's options", helped)

    base = [args.vcx_run, "-n", "2"]
    for option, message in (
            ("vclock.ahaed=0", "vcx: --option: unknown option 'vclock.ahaed' (the plugins take: "),
            ("vclock.ahead=2", "vcx: --option: option vclock.ahead takes 0 or 1, not '2'"),
            ("vclock.diff-bytes=lots",
             "vcx: --option: option vclock.diff-bytes takes an unsigned number, not 'lots'")):
        r = run(base + ["--option", option, "--", args.program])
        lines = r.stderr.splitlines()
        expect(r.returncode == 64 and len(lines) == 1 and lines[0].startswith(message),
               f"--option {option}: want exit 64 and one line starting {message!r}", r)
        if option == "vclock.ahaed=0":
            expect("vclock.ahead" in r.stderr and "trace.dir" in r.stderr,
                   "the refusal does not list the valid keys", r)

    ok = run(base + ["--option", "vclock.ahead=0", "--option", "vclock.diff-bytes=0", "--",
                     args.program])
    expect(ok.returncode == 0, "a run with declared options fails", ok)

    # race.dir is declared by an installed module this run does not load
    # (it loads the engine and the deadlock analysis, on by default).
    r = run(base + ["--option", "race.dir=/nonexistent", "--", args.program])
    expect(r.returncode != 0 and "unknown option 'race.dir' (the plugins take: "
           "vclock.diff-bytes, vclock.ahead, vclock.probe-ms, deadlock.dir, "
           "deadlock.potential-records)" in r.stderr,
           "the tools do not refuse an option of a plugin they did not load", r)

    for p in problems:
        print("FAILED:", p)
    if not problems:
        print("plugin options: listed, checked by vcx-run and by the tools, passed on")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
