#!/usr/bin/env python3
"""The stall mode follows what the loaded modules need.

  stall_mode.py --vcx-run P --plugin-dir DIR --probe MODULE.so --program P

Runs the program under vcx-run -v with a plugin directory holding vcx's
plugins and the test module `stallprobe` (which declares that it needs the
application to wait at every wait), and reads the mode the tools ran in
from the summary ("tools (--stall MODE)"):
  1. without the module: never (the default);
  2. with --modules stallprobe: waits;
  3. with --modules stallprobe --stall never: refused, naming the module;
  4. with --modules stallprobe --no-stall: refused the same way.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def run(vcx_run, plugin_dir, extra, program, timeout=90):
    env = dict(os.environ, VCX_PLUGIN_DIR=plugin_dir, VCX_NO_PROGRESS="1")
    return subprocess.run([vcx_run, "-v", "-n", "2"] + extra + ["--", program],
                          capture_output=True, text=True, timeout=timeout, env=env)


def mode_of(stderr):
    m = re.findall(r"^vcx: tools \(--stall (\w+)\)", stderr, re.M)
    return m[-1] if m else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vcx-run", required=True)
    ap.add_argument("--plugin-dir", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--program", required=True)
    args = ap.parse_args()
    problems = []
    with tempfile.TemporaryDirectory(prefix="vcx-stall-mode-") as plugins:
        for name in os.listdir(args.plugin_dir):
            os.symlink(os.path.join(args.plugin_dir, name), os.path.join(plugins, name))
        os.symlink(os.path.abspath(args.probe), os.path.join(plugins, "vcx-module-stallprobe.so"))

        r = run(args.vcx_run, plugins, [], args.program)
        if r.returncode != 0 or mode_of(r.stderr) != "never":
            problems.append(f"without the module: status {r.returncode}, mode "
                            f"{mode_of(r.stderr)} (want never)\n{r.stderr}")
        r = run(args.vcx_run, plugins, ["--modules", "stallprobe"], args.program)
        if r.returncode != 0 or mode_of(r.stderr) != "waits":
            problems.append(f"with the module: status {r.returncode}, mode "
                            f"{mode_of(r.stderr)} (want waits)\n{r.stderr}")
        for refused in (["--stall", "never"], ["--no-stall"]):
            r = run(args.vcx_run, plugins, ["--modules", "stallprobe"] + refused, args.program)
            if r.returncode == 0 or "stallprobe needs the application to wait" not in r.stderr:
                problems.append(f"with the module and {' '.join(refused)}: status "
                                f"{r.returncode}, no refusal naming the module\n{r.stderr}")
    for p in problems:
        print(p)
    if problems:
        return 1
    print("never by default, waits with a module that needs it, --stall never refused then")
    return 0


if __name__ == "__main__":
    sys.exit(main())
