#!/usr/bin/env python3
"""Every MPI wrapper of the interceptor that is not written by hand.

  gen_wrappers.py --include-dir DIR --library LIBMPI [--nm NM] [--define NAME[=VALUE]]...
                  --table wrappers.tsv --calls mpi_events.h --hand-written FILE...
                  --out-reporting FILE --out-cpp FILE --out-json FILE

Reads the MPI headers the interceptor is compiled against (mpi_headers.py:
MPICH's, or Open MPI's for the interceptor of MPI+OpenSHMEM programs;
--define sets a macro before they are read, as the compiler's -D does),
finds the MPI_ functions the hand-written wrapper files define, and writes

  * --out-reporting: the wrappers that report their call, one per row of
    the table and per collective of the call table (reporting_wrappers.py);
  * --out-cpp: a pass-through `extern "C" R MPI_X(params) { return
    PMPI_X(names); }` for every other function, with the header's exact
    parameter types, so that LD_PRELOAD puts the interceptor in front of the
    whole MPI API;
  * --out-json: every function (name, return type, parameters, who wraps
    it), the input of scripts/gen-mpi-coverage and the export test.

A function is wrapped only if the library defines its PMPI_ entry point:
the interceptor links against that library alone, and a few declared
functions live in MPICH's Fortran binding library (the Fortran 2008 status
conversions) or are callbacks without a PMPI_ twin (MPI_DUP_FN). Those are
listed in the JSON as not wrapped, with the reason.

Fails (exit status 1, message on stderr) if the headers yield fewer than
MIN_FUNCTIONS functions, if a hand-written wrapper names a function the
headers do not declare (headers of an MPI version below 4 may leave out the
MPI 4.0 functions, which the wrapper files define under
`#if MPI_VERSION >= 4`), if a function is both written by hand and
generated, if a row of the table cannot be generated, or if a prototype
cannot be understood.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

from mpi_headers import ENTRY_HEADER, GenError, HeaderReader, parse_prototypes, strip_comments
from reporting_wrappers import read_events, read_table, reporting_source

# MPICH 4.0 declares about 600 MPI_ functions, Open MPI 4.1 (MPI 3.1) about
# 450; far fewer means the parse went wrong, and silently wrapping a
# fraction of the API would break the "every call passes through" promise.
MIN_FUNCTIONS = 400


# --------------------------------------------------------------------------
# Hand-written wrappers


HAND_DEF = re.compile(r"^[A-Za-z_][\w\s\*]*?\b(MPI_\w+)\s*\(")
EXTERN_C = "extern_C"


def hand_written(paths: list[str]) -> dict[str, str]:
    """MPI_ functions defined by hand: a definition starting at the beginning
    of a line directly inside an extern "C" { } block, or a line starting
    with extern "C" itself. Returns name -> file name."""
    found: dict[str, str] = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = strip_comments(f.read())
        # Braces inside literals must not count; keep the marker of extern "C".
        text = re.sub(r'extern\s+"C"', EXTERN_C, text)
        text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
        text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
        depth = 0
        blocks: list[int] = []  # brace depth inside each open extern "C" block
        pending = False  # extern "C" seen, its "{" (if a block) not yet
        for line in text.split("\n"):
            m = None
            if line.startswith(EXTERN_C):
                m = HAND_DEF.match(line[len(EXTERN_C):].lstrip())
            elif blocks and depth == blocks[-1] and not line.startswith("static"):
                m = HAND_DEF.match(line)
            if m:
                found.setdefault(m.group(1), os.path.basename(path))
            for tok in re.finditer(EXTERN_C + r"|[{}]|[^\s{}]", line):
                t = tok.group(0)
                if t == EXTERN_C:
                    pending = True
                    continue
                if t == "{":
                    depth += 1
                    if pending:
                        blocks.append(depth)
                elif t == "}":
                    if blocks and depth == blocks[-1]:
                        blocks.pop()
                    depth -= 1
                pending = False
    return found


# --------------------------------------------------------------------------
# The MPI library


def library_pmpi(library: str, nm: str) -> set[str]:
    try:
        out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise GenError(f"cannot list the symbols of {library} with {nm}: {e}")
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].startswith("PMPI_"):
            names.add(parts[2].split("@")[0])
    if not names:
        raise GenError(f"{library} defines no PMPI_ symbol: is it an MPI library?")
    return names


# --------------------------------------------------------------------------
# Output


CPP_HEAD = """\
// Generated by gen_wrappers.py from {headers}; do not edit.
//
// One pass-through per MPI function that no wrapper reports (by hand in
// translators/mpi/intercept, or generated from wrappers.tsv): with the
// interceptor preloaded every MPI call of the application enters this
// library, and these forward to the PMPI_ entry point with the caller's
// arguments, unchanged.
//
// Names are parenthesised so that a function-like macro of the same name
// cannot expand here (mpi.h implements some calls as macros, e.g. the
// handle conversions MPI_Comm_c2f; which ones varies between versions).
#include <mpi.h>

#define VCX_MPI_EXPORT __attribute__((visibility("default")))

extern "C" {{

"""


def wrapper(f: dict) -> str:
    params = ", ".join(p["decl"] for p in f["parameters"]) or "void"
    # MPI_Pcontrol(level, ...): MPICH ignores everything after level, and C
    # cannot forward a va_list to a variadic function, so only level goes on.
    names = ", ".join(p["name"] for p in f["parameters"] if p["decl"] != "...")
    pname = "P" + f["name"]
    return (f"VCX_MPI_EXPORT {f['return_type']} ({f['name']})({params}) {{\n"
            f"  return ({pname})({names});\n}}\n")


def write_file(path: str, text: str):
    # Always rewritten (not only when changed): with Makefile generators an
    # output older than its inputs would make the rule run on every build.
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--include-dir", required=True, action="append",
                    help="MPI include directory (the first holding mpi.h is used)")
    ap.add_argument("--library", required=True, help="the MPI library the interceptor links")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--define", action="append", default=[],
                    help="NAME[=VALUE]: a macro defined before the headers are read")
    ap.add_argument("--hand-written", nargs="*", default=[])
    ap.add_argument("--table", required=True, help="wrappers.tsv")
    ap.add_argument("--calls", required=True, help="the call table (mpi_events.h)")
    ap.add_argument("--out-reporting", required=True)
    ap.add_argument("--out-cpp", required=True)
    ap.add_argument("--out-json", required=True)
    args = ap.parse_args(argv)

    try:
        dirs = [d for d in args.include_dir if os.path.isfile(os.path.join(d, ENTRY_HEADER))]
        if not dirs:
            raise GenError(f"no {ENTRY_HEADER} in {', '.join(args.include_dir)}")
        defines: dict[str, int | None] = {}
        for d in args.define:
            name, _, value = d.partition("=")
            defines[name] = int(value) if value.strip().isdigit() else None
        reader = HeaderReader(dirs[0], defines)
        reader.read()
        prototype_headers = reader.prototype_headers
        functions, pmpi_declared = parse_prototypes(reader)
        if len(functions) < MIN_FUNCTIONS:
            raise GenError(
                f"found only {len(functions)} MPI_ functions in {', '.join(prototype_headers)} "
                f"under {dirs[0]} (expected at least {MIN_FUNCTIONS}); the header format has "
                f"changed or these are not MPICH's or Open MPI's headers")
        by_hand = hand_written(args.hand_written)
        unknown = set(by_hand) - set(functions)
        # MPI 4.0 functions are compiled only against MPI 4 headers.
        mpi_version = reader.macros.get("MPI_VERSION") or 0
        not_declared = sorted(unknown) if mpi_version < 4 else []
        unknown = sorted(unknown - set(not_declared))
        if unknown:
            raise GenError(
                "hand-written wrappers for functions the MPI headers do not declare: " +
                ", ".join(f"{n} ({by_hand[n]})" for n in unknown))
        pmpi_lib = library_pmpi(args.library, args.nm)
        headers = " and ".join(prototype_headers)
        reporting, from_table = reporting_source(
            functions, pmpi_declared, read_table(args.table), read_events(args.calls),
            mpi_version, headers, os.path.basename(args.table), os.path.basename(args.calls))
        both = sorted(set(from_table) & set(by_hand))
        if both:
            raise GenError("written by hand and generated from the table: " +
                           ", ".join(f"{n} ({by_hand[n]}, {from_table[n]})" for n in both))
        unlinkable = sorted(n for n in from_table if "P" + n not in pmpi_lib)
        if unlinkable:
            raise GenError(f"{args.library} does not define the PMPI_ entry points of the "
                           f"generated wrappers of {', '.join(unlinkable)}")
    except GenError as e:
        print(f"gen_wrappers.py: error: {e}", file=sys.stderr)
        return 1

    library_name = os.path.basename(args.library).split(".so")[0]  # libmpich, libmpi
    generated = []
    for name in sorted(functions):
        f = functions[name]
        if name in by_hand:
            f["wrapper"] = "hand-written"
            f["file"] = by_hand[name]
        elif name in from_table:
            f["wrapper"] = "reporting"
            f["file"] = from_table[name]
        elif name not in pmpi_declared:
            f["wrapper"] = "none"
            f["reason"] = f"the headers declare no P{name}"
        elif "P" + name not in pmpi_lib:
            f["wrapper"] = "none"
            f["reason"] = f"{library_name} does not define P{name}"
        else:
            f["wrapper"] = "pass-through"
            generated.append(f)

    cpp = CPP_HEAD.format(headers=headers) + "\n".join(wrapper(f) for f in generated) + \
        "\n}  // extern \"C\"\n"
    counts = {
        "functions": len(functions),
        "hand_written": sum(f["wrapper"] == "hand-written" for f in functions.values()),
        "reporting": len(from_table),
        "pass_through": len(generated),
        "not_wrapped": sum(f["wrapper"] == "none" for f in functions.values()),
    }
    doc = {
        "headers": [os.path.join(dirs[0], h) for h in prototype_headers],
        "library": args.library,
        "counts": counts,
        "functions": [
            {
                "name": f["name"],
                "return_type": f["return_type"],
                "parameters": [{"type": p["type"], "name": p["name"], "declaration": p["decl"]}
                               for p in f["parameters"]],
                "varargs": f["varargs"],
                "header": f["header"],
                "wrapper": f["wrapper"],
                **({"file": f["file"]} if "file" in f else {}),
                **({"reason": f["reason"]} if "reason" in f else {}),
            }
            for f in (functions[n] for n in sorted(functions))
        ],
    }
    write_file(args.out_reporting, reporting)
    write_file(args.out_cpp, cpp)
    write_file(args.out_json, json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
