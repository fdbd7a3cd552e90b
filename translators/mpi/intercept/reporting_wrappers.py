"""The interceptor's reporting wrappers, generated from one table: every row
of wrappers.tsv (and its large-count form), and every collective of the call
table in ../common/mpi_events.h. Used by gen_wrappers.py; the table's header
says what its columns mean.

A wrapper keeps the header's prototype (types and, but for a few names
normalised to the standard's, parameter names) and returns through its
shape:

  int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest,
               int tag, MPI_Comm comm) {
    return blocking_send(Call::Send, SendMode::Standard, comm, dest, tag,
        count, datatype,
        [&](MPI_Request* r) { return PMPI_Isend(buf, ..., comm, r); },
        [&] { return PMPI_Send(buf, count, datatype, dest, tag, comm); });
  }
"""

from __future__ import annotations

import os
import re

from mpi_headers import GenError

COLLECTIVE_FAMILIES = ("Collective", "Icollective", "Pcollective")
NO_YIELD = ("—", "-", "")
# Parameter names some headers spell differently from the MPI standard
# (Open MPI 4.1: "type" in MPI_Mrecv and MPI_Imrecv, "target_cout" in
# MPI_Rput), renamed in the wrapper so that the table can use the standard's.
STANDARD_NAMES = {"type": "datatype", "target_cout": "target_count"}
# Identifiers in the table's arguments that are no parameter.
NOT_PARAMETERS = {"nullptr", "true", "false", "VCX_CALLER", "message_bytes"}
# An identifier standing alone: not a scope, member or call.
WORD = re.compile(r"(?<![\w:.])([a-z_]\w*)\b(?!\s*(?:\(|::))")


def read_events(path: str) -> dict[str, str]:
    """The call table: MPI call name (without MPI_) -> family."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    calls = dict(re.findall(r"X\((\w+), (\w+), \w+\)", text))
    if not calls:
        raise GenError(f"{path}: no X(name, family, kind) entries")
    return calls


def read_table(path: str) -> list[dict]:
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = [(n, line.rstrip("\n")) for n, line in enumerate(f, 1)]
    body = [(n, line) for n, line in lines if line and not line.startswith("#")]
    if not body or body[0][1].split("\t") != ["call", "shape", "arguments", "yields_via"]:
        raise GenError(f"{path}: the first line that is no comment must be the header "
                       "call<TAB>shape<TAB>arguments<TAB>yields_via")
    seen = set()
    for n, line in body[1:]:
        cells = line.split("\t")
        if len(cells) != 4:
            raise GenError(f"{path}:{n}: expected 4 tab-separated cells, found {len(cells)}")
        call, shape, arguments, yields_via = (c.strip() for c in cells)
        if call in seen:
            raise GenError(f"{path}:{n}: MPI_{call} has a row already")
        seen.add(call)
        rows.append({"call": call, "shape": shape, "arguments": arguments,
                     "yields_via": [] if yields_via in NO_YIELD else
                     [y.strip() for y in yields_via.split(";")],
                     "where": f"{os.path.basename(path)}:{n}"})
    return rows


def status_parameter(f: dict) -> str | None:
    for p in f["parameters"]:
        if p["type"].replace(" ", "") == "MPI_Status*":
            return p["name"]
    return None


def standard_parameters(f: dict, wanted: set[str]) -> list[dict]:
    """The parameters, renamed to the standard's names the table uses."""
    names = {p["name"] for p in f["parameters"]}
    out = []
    for p in f["parameters"]:
        std = STANDARD_NAMES.get(p["name"])
        if std and std in wanted and std not in names:
            decl = re.sub(rf"\b{p['name']}\b(?=(\s*\[[^\]]*\])*$)", std, p["decl"])
            p = {**p, "name": std, "decl": decl}
        out.append(p)
    return out


def used_names(*texts: str) -> set[str]:
    found = set()
    for t in texts:
        found |= {m.group(1) for m in WORD.finditer(t)}
    return found - NOT_PARAMETERS


def pmpi_call(name: str, args: list[str]) -> str:
    return f"P{name}({', '.join(args)})"


def start_lambda(via: str, large: bool, params: list[dict], status: str | None,
                 pmpi_declared: set[str], where: str) -> str:
    m = re.fullmatch(r"(\w+)(?:\((.*)\))?", via)
    if not m:
        raise GenError(f"{where}: cannot read the yielding call '{via}'")
    name = "MPI_" + m.group(1) + ("_c" if large else "")
    if name not in pmpi_declared:
        raise GenError(f"{where}: the headers declare no P{name}")
    if m.group(2) is not None:
        args = [a.strip() for a in m.group(2).split(",")]
    else:
        args = [p["name"] for p in params if p["name"] != status]
    return f"[&](MPI_Request* r) {{ return {pmpi_call(name, args + ['r'])}; }}"


def wrapper_text(f: dict, params: list[dict], shape: str, call: str, arguments: str,
                 starts: list[str]) -> str:
    status = status_parameter({"parameters": params})
    names = [p["name"] for p in params]
    if status:
        call_mpi = f"[&](MPI_Status* st) {{ return " \
                   f"{pmpi_call(f['name'], ['st' if n == status else n for n in names])}; }}"
    else:
        call_mpi = f"[&] {{ return {pmpi_call(f['name'], names)}; }}"
    head = ", ".join([f"Call::{call}"] + ([arguments] if arguments else []))
    lines = [f"{f['return_type']} {f['name']}({', '.join(p['decl'] for p in params)}) {{",
             f"  return {shape}({head},"]
    lines += [f"      {s}," for s in starts]
    lines += [f"      {call_mpi});", "}", ""]
    return "\n".join(lines)


def collective_row(name: str, family: str, f: dict) -> dict:
    names = {p["name"] for p in f["parameters"]}
    root = "root" if "root" in names else "0"
    if family == "Collective":
        nonblocking = "I" + name[0].lower() + name[1:]
        return {"shape": "blocking_collective", "arguments": f"comm, {root}",
                "yields_via": [nonblocking], "large": False}
    persistent = "true" if family == "Pcollective" else "false"
    return {"shape": "nonblocking_collective",
            "arguments": f"comm, {root}, request, {persistent}", "yields_via": [],
            "large": False}


def reporting_source(functions: dict, pmpi_declared: set[str], table: list[dict],
                     events: dict[str, str], mpi_version: int, headers: str,
                     table_name: str, events_name: str) -> tuple[str, dict[str, str]]:
    """The C++ source of every reporting wrapper the headers allow, and for
    each wrapped function the table it comes from."""
    work = []  # (call, row, where)
    for row in table:
        for large in (False, True):
            call = row["call"] + ("_c" if large else "")
            if "MPI_" + call not in functions:
                # Headers older than MPI 4.0 lack its functions (and every
                # large-count form).
                if not large and mpi_version >= 4:
                    raise GenError(f"{row['where']}: the headers declare no MPI_{call}")
                continue
            if call not in events:
                raise GenError(f"{row['where']}: MPI_{call} is not in the call table "
                               f"({events_name}): add it there")
            work.append((call, {**row, "large": large, "file": table_name}, row["where"]))
    listed = {row["call"] for row in table}
    for call, family in events.items():
        if family not in COLLECTIVE_FAMILIES:
            continue
        if call in listed:
            raise GenError(f"{table_name}: MPI_{call} is a collective of {events_name}; its "
                           "wrapper comes from there")
        if "MPI_" + call not in functions:
            if mpi_version >= 4:
                raise GenError(f"{events_name}: the headers declare no MPI_{call}")
            continue
        row = collective_row(call, family, functions["MPI_" + call])
        row["large"] = call.endswith("_c")
        row["file"] = events_name
        # The "I" form of a large-count call is already named with its _c.
        row["yields_via"] = [v[:-2] if row["large"] else v for v in row["yields_via"]]
        work.append((call, row, f"{events_name} (collective)"))

    out = [f"// Generated by gen_wrappers.py from {table_name}, {events_name} and {headers};",
           "// do not edit. Every wrapper reports its call through its shape",
           "// (collective_support.h, p2p_support.h, rma_support.h).",
           '#include "collective_support.h"',
           '#include "p2p_support.h"',
           '#include "rma_support.h"',
           "",
           "using namespace vcx::mpi_intercept;",
           "using vcx::mpi::Call;",
           "using vcx::mpi::RmaKind;",
           "using vcx::mpi::SendMode;",
           "",
           'extern "C" {',
           ""]
    where_of = {}
    for call, row, where in sorted(work):
        f = functions["MPI_" + call]
        yields = row["yields_via"]
        wanted = used_names(row["arguments"], *yields)
        params = standard_parameters(f, wanted)
        missing = wanted - {p["name"] for p in params}
        if missing:
            raise GenError(f"{where}: MPI_{call} has no parameter named "
                           f"{', '.join(sorted(missing))} in {headers}")
        status = status_parameter({"parameters": params})
        starts = [start_lambda(v, row["large"], params, status, pmpi_declared, where)
                  for v in yields]
        if "MPI_" + call not in pmpi_declared:
            raise GenError(f"{where}: the headers declare no PMPI_{call}")
        out.append(wrapper_text(f, params, row["shape"], call, row["arguments"], starts))
        where_of["MPI_" + call] = row["file"]
    out.append('}  // extern "C"')
    return "\n".join(out) + "\n", where_of
