#!/usr/bin/env python3
"""Generates the OpenSHMEM interceptor's wrappers and its call table.

Reads every function declared by the installed shmem.h (and shmem-compat.h,
which it includes) and by Open MPI's extension header shmemx.h, and
classifies it by the first row of translators/shmem/calls.tsv whose name
matches. Writes:

* the call table (shmem_calls.h): one event type per intercepted function
  (then one per annotation of vcx/annotate_shmem.h), with its name and
  family, shared by the interceptor and the translator;
* the generated wrappers (generated_wrappers.cpp): for each function of a
  data, collective or completion family not defined by hand in
  wrappers_*.cpp, a wrapper that calls the pshmem_ (pshmemx_) entry point
  with the caller's arguments and reports the call;
* a JSON description of every function (read by scripts/gen-shmem-coverage
  and the tests).

Every function must match a row; a function of a family that needs a
wrapper must have a profiling entry point (p<name>) in liboshmem, and the
families with hand-written wrappers (init, finalize, global_exit, locks)
must be defined in wrappers_*.cpp. Anything else stops the build with a
line saying what to change.
"""
import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys

# The headers whose functions are intercepted: OpenSHMEM 1.4 (shmem.h
# includes shmem-compat.h, the legacy names) and Open MPI's extensions.
HEADERS = ("shmem.h", "shmem-compat.h", "shmemx.h")
HAND_FAMILIES = {"init", "finalize", "global_exit", "lock_set", "lock_clear", "lock_test"}
GENERATED_FAMILIES = {"coll_world", "coll_set", "bcast_set", "completion", "flag_wait"}
# Heap calls that do nothing at all when given a null pointer.
FREE_CALLS = {"shmem_free", "shfree"}
HEAP_ALLOC_CALLS = {"shmem_malloc", "shmem_calloc", "shmem_align", "shmem_realloc", "shmalloc",
                    "shmemalign", "shrealloc"}
DATA_KINDS = {"put": "Put", "get": "Get", "put_nbi": "PutNbi", "get_nbi": "GetNbi",
              "iput": "Iput", "iget": "Iget", "p": "P", "g": "G", "amo_read": "AmoRead",
              "amo_write": "AmoWrite", "amo_rmw": "AmoRmw"}
FAMILY_ENUM = {"init": "Init", "finalize": "Finalize", "global_exit": "GlobalExit",
               "coll_world": "CollWorld", "coll_set": "CollSet", "bcast_set": "BcastSet",
               "lock_set": "LockSet", "lock_clear": "LockClear", "lock_test": "LockTest",
               "completion": "Completion", "flag_wait": "FlagWait"}
# Events that are no function of shmem.h, at the end of the call table: the
# annotations of annotations/include/vcx/annotate_shmem.h, reported by
# intercept/annotate.cpp.
EXTRA_CALLS = [("vcx_annotate_shmem_tick", "Annotate"),
               ("vcx_annotate_shmem_process_signal", "Annotate"),
               ("vcx_annotate_shmem_process_wait", "Annotate"),
               ("vcx_annotate_shmem_resource_signal", "Annotate"),
               ("vcx_annotate_shmem_resource_wait", "Annotate"),
               ("vcx_flag_write", "FlagWrite"),
               ("vcx_flag_result", "FlagResult"),
               # The program's loads and stores (the event is "load"; "store"
               # names stores in reports).
               ("load", "LocalAccess"),
               ("store", "LocalAccess")]
# Atomics that may write a flag (docs/clock-rules.md, "Flags"), by the end
# of their name: what they store, and whether that follows from what they
# fetch. The others (atomic_inc, atomic_add, ... without a result) are not
# flag writes: what they store is never known.
FLAG_ATOMICS = [(r"_(atomic_set|set)$", "Store", "value", False),
                (r"_(atomic_swap|swap)$", "Store", "value", False),
                (r"_(atomic_compare_swap|cswap)$", "CompareSwap", "value", True),
                (r"_(atomic_fetch_add|fadd)$", "Add", "value", True),
                (r"_(atomic_fetch_inc|finc)$", "Add", "1", True),
                (r"_atomic_fetch_and$", "And", "value", True),
                (r"_atomic_fetch_or$", "Or", "value", True),
                (r"_atomic_fetch_xor$", "Xor", "value", True)]
WRITES = {"put", "put_nbi", "iput", "p"}
READS = {"get", "get_nbi", "iget", "g"}


def fail(msg):
    sys.exit("vcx: gen_wrappers.py: " + msg)


def split_params(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    if out == ["void"]:
        return []
    return out


def param_name(p):
    m = re.search(r"(\w+)\s*$", p)
    if not m:
        fail(f"cannot name the parameter {p!r}")
    return m.group(1)


def read_declarations(paths):
    decls = {}
    for path in paths:
        text = open(path).read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        for ret, params in re.findall(r"OSHMEM_DECLSPEC\s+([^;{}#]*?)\s*\(([^;{}#]*?)\)\s*;", text,
                                      flags=re.S):
            ret = " ".join(ret.split())
            m = re.match(r"(.*?)\b(\w+)$", ret)
            if not m:
                fail(f"cannot read the declaration {ret!r}")
            rtype, name = m.group(1).strip(), m.group(2)
            params = [" ".join(p.split()) for p in split_params(" ".join(params.split()))]
            decls.setdefault(name, dict(name=name, ret=rtype, params=params,
                                        header=os.path.basename(path)))
    return decls


def read_table(path):
    rows = []
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f if l.strip() and not l.startswith("#")]
    head = lines[0].split("\t")
    if head != ["function", "family", "mapping", "test"]:
        fail(f"{path}: the header must be function, family, mapping, test (tab-separated)")
    for n, line in enumerate(lines[1:], 2):
        cols = line.split("\t")
        if len(cols) != 4:
            fail(f"{path}: row {n} has {len(cols)} columns, not 4: {line!r}")
        fam = cols[1]
        if not (fam in HAND_FAMILIES or fam in GENERATED_FAMILIES or fam == "none"
                or (fam.startswith("data:") and fam[5:] in DATA_KINDS)):
            fail(f"{path}: row {n}: unknown family {fam!r}")
        rows.append(dict(patterns=cols[0].split("|"), family=fam, mapping=cols[2],
                         test=cols[3]))
    return rows


def classify(name, rows):
    for row in rows:
        if any(fnmatch.fnmatchcase(name, p) for p in row["patterns"]):
            return row
    return None


def library_symbols(lib, nm):
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True,
                         text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "W", "i"):
            syms.add(parts[2])
    return syms


def hand_written(files):
    names = {}
    for path in files:
        text = open(path).read()
        for m in re.finditer(r"^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;{]*\)\s*\{", text, flags=re.M):
            names[m.group(1)] = os.path.basename(path)
    return names


def profiling_name(name):
    return "p" + name


def call_args(decl):
    return ", ".join(param_name(p) for p in decl["params"])


def param(decl, *candidates):
    names = [param_name(p) for p in decl["params"]]
    for c in candidates:
        if c in names:
            return c, decl["params"][names.index(c)]
    return None, None


def element_size(decl, remote, rtext):
    """The size of one element of a data call, as a C++ expression."""
    name = decl["name"]
    if re.match(r"(const\s+)?(volatile\s+)?void\b", rtext):
        m = re.search(r"(mem|8|16|32|64|128)(_nbi)?$", name)
        if not m:
            fail(f"{name}: an untyped address, but the name gives no element size")
        return "1" if m.group(1) == "mem" else str(int(m.group(1)) // 8)
    return f"sizeof(*{remote})"


def flag_write(decl, kind):
    """What a data call does before and after Open MPI's call when it may
    write a flag: (announcement expression, statement after the call) or
    (None, None). Puts of 1, 2, 4 or 8 bytes, p, set, swap and the
    fetching atomics are announced; a fetching atomic then reports what it
    fetched."""
    name = decl["name"]
    remote, rtext = param(decl, "target", "dest", "addr")
    pe = param(decl, "pe")[0]
    if kind == "p":
        value = param(decl, "value")[0] or fail(f"{name}: no value parameter")
        return f"announce_flag_store(Call::{name}, {remote}, {value}, {pe})", None
    if kind in ("put", "put_nbi"):
        source = param(decl, "source", "src")[0] or fail(f"{name}: no source parameter")
        count = param(decl, "len", "nelems")[0] or fail(f"{name}: no len parameter")
        elem = element_size(decl, remote, rtext)
        return (f"announce_flag_put(Call::{name}, {remote}, {source}, ({elem}) * {count}, {pe})",
                None)
    if kind not in ("amo_write", "amo_rmw"):
        return None, None
    for pattern, op, operand, fetches in FLAG_ATOMICS:
        if not re.search(pattern, name):
            continue
        if operand != "1":
            operand = param(decl, operand)[0] or fail(f"{name}: no {operand} parameter")
        if op == "Store":
            return f"announce_flag_store(Call::{name}, {remote}, {operand}, {pe})", None
        cond = param(decl, "cond")[0] if op == "CompareSwap" else "0"
        if not cond:
            fail(f"{name}: no cond parameter")
        return (f"announce_flag_rmw(Call::{name}, {remote}, vcx::shmem::FlagOp::{op}, {operand}, "
                f"{cond}, {pe})", "report_flag_result(flag_write, result);")
    return None, None


def flag_wait_report(decl):
    """wait_until, wait (waits until the value differs) and test."""
    name = decl["name"]
    addr = param(decl, "addr", "ivar")[0] or fail(f"{name}: no addr parameter")
    cmp = param(decl, "cmp")[0] or "SHMEM_CMP_NE"
    value = param(decl, "value", "cmp_value")[0] or fail(f"{name}: no value parameter")
    return f"report_flag_wait(Call::{name}, {addr}, {cmp}, {value});"


def data_wrapper(decl, kind):
    name = decl["name"]
    if kind in READS and kind != "g":
        remote, rtext = param(decl, "source", "src")
    else:
        remote, rtext = param(decl, "target", "dest", "addr")
    if not remote:
        fail(f"{name}: no parameter names the remote address")
    local = "0"
    if kind in ("put", "put_nbi", "iput"):
        local_name, _ = param(decl, "source", "src")
        local = f"reinterpret_cast<std::uint64_t>({local_name})"
    elif kind in ("get", "get_nbi", "iget"):
        local_name, _ = param(decl, "target", "dest")
        local = f"reinterpret_cast<std::uint64_t>({local_name})"
    elem = element_size(decl, remote, rtext)
    count_name, _ = param(decl, "len", "nelems")
    count = count_name or "1"
    stride = "1"
    if kind == "iput":
        stride = param(decl, "tst")[0] or fail(f"{name}: no tst parameter")
    elif kind == "iget":
        stride = param(decl, "sst")[0] or fail(f"{name}: no sst parameter")
    pe = param(decl, "pe")[0] or fail(f"{name}: no pe parameter")
    ctx = param(decl, "ctx")[0]
    ctx_expr = f"context_id({ctx})" if ctx else "0"
    report = (f"record_data(Call::{name}, DataKind::{DATA_KINDS[kind]}, {remote}, {local}, "
              f"{elem}, {count}, {stride}, {ctx_expr}, {pe}, __builtin_return_address(0));")
    return report


def collective_report(decl, family):
    name = decl["name"]
    if family == "coll_world":
        report = f"report_world_collective(Call::{name});"
        if name in FREE_CALLS:
            # Freeing a null pointer does nothing, not even synchronise.
            ptr = param(decl, "ptr")[0] or fail(f"{name}: no ptr parameter")
            report = f"{{ if ({ptr} != nullptr) {{ {report} end_heap_block({ptr}); }} }}"
        elif name in HEAP_ALLOC_CALLS:
            # The block is symmetric memory the program may load and store.
            size = param(decl, "size")[0] or fail(f"{name}: no size parameter")
            if name == "shmem_calloc":
                size = f"{param(decl, 'count')[0] or fail(f'{name}: no count parameter')} * {size}"
            ends = ""
            if "realloc" in name:
                ends = f" end_heap_block({param(decl, 'ptr')[0] or fail(f'{name}: no ptr')});"
            report = f"{{ {report}{ends} note_heap_block(result, {size}); }}"
        return report
    start = param(decl, "PE_start")[0]
    log = param(decl, "logPE_stride")[0]
    size = param(decl, "PE_size")[0]
    if not (start and log and size):
        fail(f"{name}: a collective over an active set without PE_start, logPE_stride, PE_size")
    root = "-1"
    if family == "bcast_set":
        root = param(decl, "PE_root")[0] or fail(f"{name}: a broadcast without PE_root")
    return f"report_collective(Call::{name}, {start}, {log}, {size}, {root});"


def blocked_entry(decl, family):
    """The expression that marks the blocked-call slot as the call is
    entered (report.h), for calls that may wait for other PEs: the
    collectives and wait_until/wait (test returns at once). None for the
    others."""
    name = decl["name"]
    pc = "__builtin_return_address(0)"
    if family == "flag_wait":
        if decl["ret"] != "void":
            return None
        addr = param(decl, "addr", "ivar")[0]
        cmp = param(decl, "cmp")[0] or "SHMEM_CMP_NE"
        value = param(decl, "value", "cmp_value")[0]
        return f"enter_blocked_flag_wait(nesting, Call::{name}, {addr}, {cmp}, {value}, {pc})"
    if family == "coll_world":
        entry = f"enter_blocked_world_collective(nesting, Call::{name}, {pc})"
        if name in FREE_CALLS:
            entry = f"{param(decl, 'ptr')[0]} != nullptr && {entry}"
        return entry
    if family in ("coll_set", "bcast_set"):
        start = param(decl, "PE_start")[0]
        log = param(decl, "logPE_stride")[0]
        size = param(decl, "PE_size")[0]
        root = param(decl, "PE_root")[0] if family == "bcast_set" else "-1"
        return (f"enter_blocked_collective(nesting, Call::{name}, {start}, {log}, {size}, {root}, "
                f"{pc})")
    return None


def wrapper(decl, family):
    name = decl["name"]
    announce, after = None, None
    if family.startswith("data:"):
        report = data_wrapper(decl, family[5:])
        announce, after = flag_write(decl, family[5:])
    elif family == "flag_wait":
        report = flag_wait_report(decl)
        if decl["ret"] != "void":  # test: only when it returns 1
            report = f"{{ if (result) {report} }}"
    elif family == "completion":
        ctx = param(decl, "ctx")[0]
        report = (f"record_completion(Call::{name}, {'context_id(' + ctx + ')' if ctx else '0'}, "
                  f"__builtin_return_address(0));")
    else:
        report = collective_report(decl, family)
    params = ", ".join(decl["params"]) or "void"
    call = f"{profiling_name(name)}({call_args(decl)})"
    lines = [f"{decl['ret']} {name}({params}) {{", "  const Nesting nesting;"]
    if announce:
        lines.append(f"  const std::uint64_t flag_write = nesting.outermost() ? {announce} : 0;")
        if not after:
            lines.append("  (void)flag_write;")
    if after:
        report = f"{{ {report} {after} }}"
    blocked = blocked_entry(decl, family)
    if blocked:
        lines.append(f"  const bool blocked = {blocked};")
        call_line = f"  {call};" if decl["ret"] == "void" else f"  auto result = {call};"
        lines += [call_line, "  leave_blocked(blocked);"]
        if decl["ret"] == "void":
            lines += [f"  if (nesting.outermost()) {report}", "}"]
        else:
            lines += [f"  if (nesting.outermost()) {report}", "  return result;", "}"]
        return "\n".join(lines)
    if decl["ret"] == "void":
        lines += [f"  {call};", f"  if (nesting.outermost()) {report}", "}"]
    else:
        lines += [f"  auto result = {call};", f"  if (nesting.outermost()) {report}",
                  "  return result;", "}"]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--include-dir", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--hand-written", nargs="*", default=[])
    ap.add_argument("--out-header", required=True)
    ap.add_argument("--out-cpp", required=True)
    ap.add_argument("--out-json", required=True)
    a = ap.parse_args()

    headers = [os.path.join(a.include_dir, h) for h in HEADERS]
    decls = read_declarations(headers)
    rows = read_table(a.table)
    syms = library_symbols(a.library, a.nm)
    hand = hand_written(a.hand_written)

    # pshmem.h (which includes pshmemx.h) leaves out the legacy names' entry
    # points (pstart_pes, ...): the generated file declares those itself.
    declared_p = set(read_declarations([os.path.join(a.include_dir, h)
                                        for h in ("pshmem.h", "pshmemx.h")]))
    calls, wrappers, functions, p_decls = [], [], [], []
    for name in sorted(decls):
        d = decls[name]
        row = classify(name, rows)
        if row is None:
            fail(f"{name} ({d['header']}) matches no row of {a.table}; add it there")
        fam = row["family"]
        entry = dict(name=name, header=d["header"], family=fam, mapping=row["mapping"],
                     test=row["test"], defined=name in syms,
                     profiling=profiling_name(name) in syms)
        if fam == "none":
            entry["wrapper"] = "none"
            if name in hand:
                fail(f"{name} is defined in {hand[name]} but its row in {a.table} says none")
        else:
            if not entry["profiling"]:
                fail(f"{name}: liboshmem defines no {profiling_name(name)} to forward to; "
                     f"give it the family none in {a.table}")
            if fam in HAND_FAMILIES and name not in hand:
                fail(f"{name} (family {fam}) needs a hand-written wrapper in wrappers_*.cpp")
            if name in hand:
                entry["wrapper"] = "hand-written"
                entry["file"] = hand[name]
            else:
                entry["wrapper"] = "generated"
                wrappers.append(wrapper(d, fam))
            if profiling_name(name) not in declared_p:
                p_decls.append(f"{d['ret']} {profiling_name(name)}({', '.join(d['params']) or 'void'});")
            kind = DATA_KINDS[fam[5:]] if fam.startswith("data:") else "Put"
            family_enum = "Data" if fam.startswith("data:") else FAMILY_ENUM[fam]
            calls.append((name, family_enum, kind))
        functions.append(entry)
    calls += [(name, family_enum, "Put") for name, family_enum in EXTRA_CALLS]
    for name, where in sorted(hand.items()):
        if name not in decls and (name.startswith(("shmem_", "shmemx_")) or name == "start_pes"):
            fail(f"{where} defines {name}, which neither shmem.h nor shmemx.h declares")

    with open(a.out_header, "w") as f:
        f.write("// Generated by translators/shmem/intercept/gen_wrappers.py from shmem.h,\n"
                "// shmemx.h and translators/shmem/calls.tsv. Do not edit.\n#pragma once\n\n"
                "#include <cstdint>\n\n#include \"shmem_events.h\"\n\n"
                "namespace vcx::shmem {\n\n")
        f.write("enum class Call : std::uint16_t {\n")
        for name, _, _ in calls:
            f.write(f"  {name},\n")
        f.write("  Count\n};\n\ninline constexpr const char* kCallNames[] = {\n")
        for name, _, _ in calls:
            f.write(f"    \"{name}\",\n")
        f.write("};\n\ninline constexpr Family kCallFamily[] = {\n")
        for _, fam, _ in calls:
            f.write(f"    Family::{fam},\n")
        f.write("};\n\n// The data kind of Family::Data calls (Put for the others).\n"
                "inline constexpr DataKind kCallDataKind[] = {\n")
        for _, _, kind in calls:
            f.write(f"    DataKind::{kind},\n")
        f.write("};\n\n}  // namespace vcx::shmem\n")
    with open(a.out_cpp, "w") as f:
        f.write("// Generated by translators/shmem/intercept/gen_wrappers.py. Do not edit.\n"
                "#include <shmemx.h>\n\n#include \"report.h\"\n\n"
                "using namespace vcx::shmem_intercept;\n"
                "using vcx::shmem::Call;\nusing vcx::shmem::DataKind;\n\n"
                "extern \"C\" {\n\n")
        if p_decls:
            f.write("// Entry points pshmem.h does not declare.\n" + "\n".join(p_decls) + "\n\n")
        f.write("\n\n".join(wrappers))
        f.write("\n\n}  // extern \"C\"\n")
    with open(a.out_json, "w") as f:
        json.dump(dict(functions=functions), f, indent=1)


if __name__ == "__main__":
    main()
