#!/usr/bin/env python3
"""Writes wrappers_collectives.cpp: one wrapper per collective of the
installed MPICH headers that vcx clocks (blocking, non-blocking "I",
persistent "_init", neighbourhood, large-count "_c").

The wrappers are committed source; this script only saves typing their
signatures. A blocking collective's wrapper also names its non-blocking
form, for ranks that yield their core while they wait. The MPI 4.0 forms (persistent "_init", large-count "_c") are
compiled only against MPI 4 headers (#if MPI_VERSION >= 4): the
interceptor of MPI+OpenSHMEM programs is built against Open MPI 4.1's
MPI 3.1 headers. Which calls are collectives, and of which kind, comes from the
X-macro table in ../common/mpi_events.h. Re-run after changing that table:

  emit_collective_wrappers.py /usr/include/x86_64-linux-gnu/mpich > wrappers_collectives.cpp
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def families():
    text = open(os.path.join(HERE, "..", "common", "mpi_events.h")).read()
    out = []
    for name, fam, kind in re.findall(r"X\((\w+), (\w+), (\w+)\)", text):
        if fam in ("Collective", "Icollective", "Pcollective"):
            out.append((name, fam))
    return out


def prototypes(include_dir):
    text = open(os.path.join(include_dir, "mpi_proto.h")).read()
    protos = {}
    for m in re.finditer(r"^int (MPI_\w+)\((.*?)\)\s*(?:MPICH_\w+(?:\([^)]*\))?\s*)*;", text,
                         re.S | re.M):
        params = " ".join(m.group(2).split())
        protos[m.group(1)] = params
    return protos


def param_names(params):
    names = []
    for p in params.split(","):
        p = p.strip()
        m = re.search(r"(\w+)\s*(\[\])?$", p)
        names.append(m.group(1))
    return names


def mpi4_only(name):
    return name.endswith("_c") or name.endswith("_init")


def main():
    include_dir = sys.argv[1]
    protos = prototypes(include_dir)
    print("// Collective wrappers: blocking, non-blocking, persistent and neighbourhood")
    print("// forms, each with its large-count variant. The signatures come from the")
    print("// installed MPICH headers (emit_collective_wrappers.py); the behaviour from")
    print("// collective_support.h.")
    print('#include "collective_support.h"')
    print()
    print("using namespace vcx::mpi_intercept;")
    print("using vcx::mpi::Call;")
    print()
    print('extern "C" {')
    guarded = False
    for name, fam in families():
        full = "MPI_" + name
        if full not in protos:
            sys.exit(f"emit: {full} is not declared in {include_dir}/mpi_proto.h")
        params = protos[full]
        names = param_names(params)
        root = "root" if "root" in names else "0"
        args = ", ".join(names)
        print()
        if mpi4_only(name) != guarded:
            print("#if MPI_VERSION >= 4" if not guarded else "#endif  // MPI_VERSION >= 4")
            print()
            guarded = not guarded
        head = f"int {full}({params}) {{"
        if len(head) > 100:
            parts = [q.strip() for q in params.split(",")]
            head = f"int {full}(" + (",\n" + " " * (len(full) + 5)).join(parts) + ") {"
        print(head)
        if fam == "Collective":
            # Its non-blocking form, which a rank whose tool shares its core
            # tests while yielding the core (collective_support.h).
            nb = "MPI_I" + name[0].lower() + name[1:]
            if nb not in protos:
                sys.exit(f"emit: {full} has no non-blocking form {nb} in {include_dir}/mpi_proto.h")
            nb_call = f"    return P{nb}({args}, r);"
            if len(nb_call) > 100:
                nb_call = f"    return P{nb}(" + (",\n" + " " * (len(nb) + 13)).join(names + ["r"]) + ");"
            print(f"  return blocking_collective(Call::{name}, comm, {root}, [&](MPI_Request* r) {{")
            print(nb_call)
            print("  }, [&] {")
        elif fam == "Icollective":
            print(f"  return nonblocking_collective(Call::{name}, comm, {root}, request, false, [&] {{")
        else:
            print(f"  return nonblocking_collective(Call::{name}, comm, {root}, request, true, [&] {{")
        call = f"    return P{full}({args});"
        if len(call) > 100:
            call = f"    return P{full}(" + (",\n" + " " * (len(full) + 13)).join(names) + ");"
        print(call)
        print("  });")
        print("}")
    if guarded:
        print()
        print("#endif  // MPI_VERSION >= 4")
    print()
    print('}  // extern "C"')


main()
