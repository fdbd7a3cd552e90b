#!/usr/bin/env python3
"""mpi_intercept.generator: gen_wrappers.py on the installed MPI headers.

  test_gen_wrappers.py --mpich-include DIR --libmpich LIB
                       [--ompi-include DIR --libmpi LIB]

What the generated reporting wrappers must be is worked out here from the
inputs themselves (the table's rows, the collectives of the call table and
the prototypes of mpi_proto.h, read with plain regular expressions), not
from the generator's own reading; then each way the inputs can be wrong must
stop the generator with a message naming the cause.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
INTERCEPT = os.path.dirname(HERE)
GENERATOR = os.path.join(INTERCEPT, "gen_wrappers.py")
TABLE = os.path.join(INTERCEPT, "wrappers.tsv")
CALLS = os.path.join(INTERCEPT, "..", "common", "mpi_events.h")
ARGS = argparse.Namespace()
SCRATCH = tempfile.TemporaryDirectory(prefix="vcx-gen-")  # removed at exit


def run_generator(include_dir, library, table=TABLE, hand_written=None, defines=()):
    out = tempfile.mkdtemp(dir=SCRATCH.name)
    hand = hand_written if hand_written is not None else sorted(
        os.path.join(INTERCEPT, f) for f in os.listdir(INTERCEPT)
        if f.startswith("wrappers_") and f.endswith(".cpp"))
    cmd = [sys.executable, "-B", GENERATOR, "--include-dir", include_dir, "--library", library,
           "--table", table, "--calls", CALLS,
           "--out-reporting", os.path.join(out, "reporting.cpp"),
           "--out-cpp", os.path.join(out, "passthrough.cpp"),
           "--out-json", os.path.join(out, "functions.json"), "--hand-written", *hand]
    for d in defines:
        cmd[3:3] = ["--define", d]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p, out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def table_rows(path=TABLE):
    rows = [line.rstrip("\n").split("\t") for line in open(path, encoding="utf-8")
            if line.strip() and not line.startswith("#")]
    assert rows[0] == ["call", "shape", "arguments", "yields_via"], rows[0]
    return rows[1:]


def collectives():
    text = read(CALLS)
    return {n for n, fam in re.findall(r"X\((\w+), (\w+), \w+\)", text)
            if fam in ("Collective", "Icollective", "Pcollective")}


def mpich_prototypes():
    text = read(os.path.join(ARGS.mpich_include, "mpi_proto.h"))
    return {m.group(1): " ".join(m.group(2).split())
            for m in re.finditer(r"^int (MPI_\w+)\((.*?)\)", text, re.S | re.M)}


def definitions(cpp):
    """name -> (parameters, body) of every function the source defines."""
    out = {}
    for m in re.finditer(r"^int (MPI_\w+)\((.*?)\) \{\n(.*?)\n\}", cpp, re.S | re.M):
        out[m.group(1)] = (" ".join(m.group(2).split()), m.group(3))
    return out


def write_table(extra_rows, drop=()):
    fd, path = tempfile.mkstemp(suffix=".tsv", dir=SCRATCH.name)
    with os.fdopen(fd, "w") as f:
        f.write("call\tshape\targuments\tyields_via\n")
        for row in table_rows():
            if row[0] not in drop:
                f.write("\t".join(row) + "\n")
        for row in extra_rows:
            f.write("\t".join(row) + "\n")
    return path


class MpichHeaders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p, out = run_generator(ARGS.mpich_include, ARGS.libmpich)
        if p.returncode != 0:
            raise AssertionError(f"generator failed:\n{p.stderr}")
        cls.cpp = read(os.path.join(out, "reporting.cpp"))
        cls.functions = json.loads(read(os.path.join(out, "functions.json")))["functions"]
        cls.defs = definitions(cls.cpp)
        cls.protos = mpich_prototypes()

    def test_every_row_and_large_count_form_and_collective_is_generated(self):
        expected = set()
        for call, *_ in table_rows():
            expected.add("MPI_" + call)
            if "MPI_" + call + "_c" in self.protos:
                expected.add("MPI_" + call + "_c")
        expected |= {"MPI_" + c for c in collectives()}
        self.assertEqual(set(self.defs), expected)
        reporting = {f["name"] for f in self.functions if f["wrapper"] == "reporting"}
        self.assertEqual(reporting, expected)

    def test_signatures_are_the_headers(self):
        for name, (params, _) in self.defs.items():
            want = self.protos[name].replace("* ", "*").replace(" *", " *")
            self.assertEqual(params.replace("* ", "*"), want.replace("* ", "*"), name)

    def test_blocking_calls_yield_through_their_nonblocking_form(self):
        _, body = self.defs["MPI_Ssend_c"]
        self.assertIn("[&](MPI_Request* r) { return PMPI_Issend_c(buf, count, datatype, dest, "
                      "tag, comm, r); }", body)
        _, body = self.defs["MPI_Recv"]
        self.assertIn("PMPI_Irecv(buf, count, datatype, source, tag, comm, r)", body)
        self.assertIn("[&](MPI_Status* st) { return PMPI_Recv(buf, count, datatype, source, tag, "
                      "comm, st); }", body)
        _, body = self.defs["MPI_Bsend"]
        self.assertNotIn("MPI_Request* r", body)  # the table says: no yielding form
        _, body = self.defs["MPI_Reduce_c"]
        self.assertIn("blocking_collective(Call::Reduce_c, comm, root,", body)
        self.assertIn("PMPI_Ireduce_c(", body)
        _, body = self.defs["MPI_Barrier_init"]
        self.assertIn("nonblocking_collective(Call::Barrier_init, comm, 0, request, true,", body)

    def test_sendrecv_starts_the_receive_then_the_send(self):
        _, body = self.defs["MPI_Sendrecv_c"]
        recv = body.index("PMPI_Irecv_c(recvbuf, recvcount, recvtype, source, recvtag, comm, r)")
        send = body.index("PMPI_Isend_c(sendbuf, sendcount, sendtype, dest, sendtag, comm, r)")
        self.assertLess(recv, send)

    def test_hand_written_and_generated_at_once_is_refused(self):
        fd, hand = tempfile.mkstemp(suffix=".cpp", dir=SCRATCH.name)
        with os.fdopen(fd, "w") as f:
            f.write('extern "C" {\nint MPI_Irsend(const void* b, int c, MPI_Datatype t, int d,\n'
                    '               int g, MPI_Comm m, MPI_Request* r) { return 0; }\n}\n')
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, hand_written=[hand])
        self.assertEqual(p.returncode, 1)
        self.assertIn("written by hand and generated from the table: MPI_Irsend", p.stderr)

    def test_row_for_an_undeclared_function_is_refused(self):
        table = write_table([["Sendfile", "blocking_send", "comm", "—"]])
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, table=table)
        self.assertEqual(p.returncode, 1)
        self.assertIn("the headers declare no MPI_Sendfile", p.stderr)

    def test_row_naming_a_missing_parameter_is_refused(self):
        table = write_table([["Send", "blocking_send", "SendMode::Standard, comm, destination",
                              "—"]], drop=("Send",))
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, table=table)
        self.assertEqual(p.returncode, 1)
        self.assertRegex(p.stderr, r"\.tsv:\d+: MPI_Send has no parameter named destination")

    def test_collective_in_the_table_is_refused(self):
        table = write_table([["Bcast", "blocking_send", "comm", "—"]])
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, table=table)
        self.assertEqual(p.returncode, 1)
        self.assertIn("MPI_Bcast is a collective", p.stderr)

    def test_call_missing_from_the_call_table_is_refused(self):
        table = write_table([["Comm_rank", "blocking_send", "comm", "—"]])
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, table=table)
        self.assertEqual(p.returncode, 1)
        self.assertIn("MPI_Comm_rank is not in the call table", p.stderr)

    def test_unknown_yielding_call_is_refused(self):
        table = write_table([["Rsend", "blocking_send", "SendMode::Ready, comm", "Irsendx"]],
                            drop=("Rsend",))
        p, _ = run_generator(ARGS.mpich_include, ARGS.libmpich, table=table)
        self.assertEqual(p.returncode, 1)
        self.assertIn("the headers declare no PMPI_Irsendx", p.stderr)


class OpenMpiHeaders(unittest.TestCase):
    """MPI 3.1 headers: the MPI 4.0 rows drop out, and the standard's
    parameter names replace the headers' where the table uses them."""

    def setUp(self):
        if not ARGS.ompi_include:
            self.skipTest("no Open MPI headers")

    def test_mpi4_rows_drop_out_and_names_are_the_standards(self):
        p, out = run_generator(ARGS.ompi_include, ARGS.libmpi,
                               defines=("OMPI_SKIP_MPICXX=1", "OMPI_OMIT_MPI1_COMPAT_DECLS=1"))
        self.assertEqual(p.returncode, 0, p.stderr)
        defs = definitions(read(os.path.join(out, "reporting.cpp")))
        self.assertNotIn("MPI_Isendrecv", defs)
        # No large-count form, no persistent collective (both MPI 4.0).
        self.assertFalse([n for n in defs if n.endswith("_c") or
                          (n[4:] in collectives() and n.endswith("_init"))])
        self.assertIn("MPI_Send", defs)
        self.assertIn("MPI_Ineighbor_alltoallw", defs)
        params, body = defs["MPI_Rput"]
        self.assertIn("int target_count", params)  # Open MPI 4.1 spells it target_cout
        self.assertIn("target_count, target_datatype}", body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpich-include", required=True)
    ap.add_argument("--libmpich", required=True)
    ap.add_argument("--ompi-include", default="")
    ap.add_argument("--libmpi", default="")
    global ARGS
    ARGS, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
