#!/usr/bin/env python3
"""Every MPI function libmpich exports is exported by the interceptor too.

  check_exports.py --libmpich PATH --interceptor PATH --include-dir DIR
                   [--functions mpi_functions.json] [--nm NM]

"Declared" is decided here independently of gen_wrappers.py: any MPI_ name
followed by "(" outside comments in mpi_proto.h or mpio.h. The functions
(not data symbols such as MPI_F_STATUS_IGNORE) that libmpich defines and
the headers declare must all be defined by the interceptor, or a call to
them would bypass it when it is preloaded. With --functions, the generator's
own list is checked against the interceptor as well (everything it says is
wrapped is exported, and the interceptor exports nothing it does not know).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HEADERS = ("mpi_proto.h", "mpio.h")
FUNCTION_TYPES = set("TWi")  # text, weak, indirect: callable definitions


def defined_functions(nm: str, lib: str) -> set[str]:
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] in FUNCTION_TYPES and parts[2].startswith("MPI_"):
            names.add(parts[2].split("@")[0])
    return names


def declared(include_dir: str) -> set[str]:
    names = set()
    for h in HEADERS:
        with open(os.path.join(include_dir, h), encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        # Only declarations: drop macro definitions (casts, aliases).
        text = re.sub(r"^\s*#.*$", " ", text, flags=re.M)
        names |= set(re.findall(r"(?<![\w])(MPI_\w+)\s*\(", text))
    return names


def listing(names) -> str:
    names = sorted(names)
    return "\n".join(f"  {n}" for n in names)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--libmpich", required=True)
    ap.add_argument("--interceptor", required=True)
    ap.add_argument("--include-dir", required=True)
    ap.add_argument("--functions")
    ap.add_argument("--nm", default="nm")
    args = ap.parse_args()

    lib = defined_functions(args.nm, args.libmpich)
    icpt = defined_functions(args.nm, args.interceptor)
    decl = declared(args.include_dir)
    must = lib & decl
    print(f"libmpich ({os.path.realpath(args.libmpich)}) defines {len(lib)} MPI_ functions, "
          f"{len(must)} of them declared in {' and '.join(HEADERS)}")
    print(f"the interceptor ({args.interceptor}) defines {len(icpt)} MPI_ functions")

    failed = False
    if len(must) < 400:
        print(f"FAIL: only {len(must)} functions to check; is {args.libmpich} MPICH's libmpich?")
        failed = True
    missing = must - icpt
    if missing:
        print(f"FAIL: {len(missing)} MPI functions bypass the interceptor (defined by libmpich, "
              f"not by the interceptor):\n{listing(missing)}")
        failed = True

    if args.functions:
        with open(args.functions, encoding="utf-8") as f:
            doc = json.load(f)
        wrapped = {x["name"] for x in doc["functions"] if x["wrapper"] != "none"}
        known = {x["name"] for x in doc["functions"]}
        unexported = wrapped - icpt
        if unexported:
            print(f"FAIL: {args.functions} lists wrappers the interceptor does not export:\n"
                  f"{listing(unexported)}")
            failed = True
        unknown = icpt - known
        if unknown:
            print(f"FAIL: the interceptor exports MPI_ functions the headers do not declare:\n"
                  f"{listing(unknown)}")
            failed = True
        counts = {w: sum(x["wrapper"] == w for x in doc["functions"])
                  for w in ("hand-written", "reporting", "pass-through")}
        print(f"{args.functions}: {len(known)} declared, {counts['hand-written']} hand-written, "
              f"{counts['reporting']} reporting wrappers generated, {counts['pass-through']} "
              f"pass-throughs, {len(known) - len(wrapped)} not wrapped")

    if not failed:
        print(f"OK: all {len(must)} MPI functions of libmpich are exported by the interceptor")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
