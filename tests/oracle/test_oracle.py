#!/usr/bin/env python3
"""Hand-computed cases for the vector-clock oracle (oracle.py)."""

import io
import json
import os
import sys
import tempfile
import unittest

# Keep the source tree free of __pycache__.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle  # noqa: E402


# Builders for ground-truth lines, in the format of tests/programs/gt.h.
def line(call, *ops):
    return {"call": call, "ops": list(ops)}


def send(msg, dest, mode="std", req=None):
    op = {"op": "send", "mode": mode, "msg": msg, "dest": dest}
    if req is not None:
        op["req"] = req
    return op


def recv(msg):
    return {"op": "recv", "msg": msg}


def post(req):
    return {"op": "post", "req": req}


def complete(req, msg=None):
    op = {"op": "complete", "req": req}
    if msg is not None:
        op["msg"] = msg
    return op


def coll(kind, comm, members, root=None):
    return {"op": "coll", "kind": kind, "comm": comm, "members": members, "root": root}


def clocks(res):
    """rank -> [(call, clock)] of the clocked calls."""
    return {r: [(c.name, c.clock) for c in res.clocked[r]] for r in range(res.n)}


def as_trace(expected):
    """Trace events (rank -> list) from rank -> [(call, clock)]."""
    return {r: [{"rank": r, "seq": i, "call": name, "clock": list(clk)}
                for i, (name, clk) in enumerate(evs)] for r, evs in expected.items()}


BARRIER3 = coll("all_to_all", "world", [0, 1, 2])

# DESIGN.md section 3.1, worked example.
DESIGN_EXAMPLE = {
    0: [line("MPI_Send", send("0.0", 1)),
        line("MPI_Barrier", BARRIER3)],
    1: [line("MPI_Recv", recv("0.0")),
        line("MPI_Ssend", send("1.0", 2, mode="sync")),
        line("MPI_Barrier", BARRIER3)],
    2: [line("MPI_Recv", recv("1.0")),
        line("MPI_Barrier", BARRIER3)],
}
DESIGN_EXPECTED = {
    0: [("MPI_Send", [1, 0, 0]), ("MPI_Barrier", [2, 3, 2])],
    1: [("MPI_Recv", [1, 1, 0]), ("MPI_Ssend", [1, 2, 1]), ("MPI_Barrier", [2, 3, 2])],
    2: [("MPI_Recv", [1, 2, 1]), ("MPI_Barrier", [2, 3, 2])],
}


class DesignExample(unittest.TestCase):
    def test_clocks(self):
        self.assertEqual(clocks(oracle.evaluate(DESIGN_EXAMPLE)), DESIGN_EXPECTED)

    def test_deposits_are_post_tick(self):
        res = oracle.evaluate(DESIGN_EXAMPLE)
        ssend = res.clocked[1][1]
        self.assertEqual(ssend.tick, [1, 2, 0])  # what rank 2's Recv merges

    def test_matching_trace(self):
        res = oracle.evaluate(DESIGN_EXAMPLE)
        self.assertEqual(oracle.compare(res, as_trace(DESIGN_EXPECTED)), [])


class NonBlockingSyncAck(unittest.TestCase):
    # Rank 1 posts its receive after learning of rank 2, then does another
    # clocked call before completing it. The Issend's completion at rank 0
    # merges rank 1's clock at the post, [0,1,1], not a later one.
    GT = {
        0: [line("MPI_Issend", send("0.0", 1, mode="sync", req="s")),
            line("MPI_Wait", complete("s"))],
        1: [line("MPI_Recv", recv("2.0")),
            line("MPI_Irecv", post("r")),
            line("MPI_Send", send("1.0", 2)),
            line("MPI_Wait", complete("r", "0.0"))],
        2: [line("MPI_Send", send("2.0", 1)),
            line("MPI_Isend", send("2.1", 0, req="x")),
            line("MPI_Wait", complete("x")),  # std send only: not clocked
            line("MPI_Recv", recv("1.0"))],
    }

    def test_clocks(self):
        gt = {r: list(v) for r, v in self.GT.items()}
        gt[0] = gt[0] + [line("MPI_Recv", recv("2.1"))]
        got = clocks(oracle.evaluate(gt))
        self.assertEqual(got[0], [("MPI_Issend", [1, 0, 0]),
                                  ("MPI_Wait", [2, 1, 1]),
                                  ("MPI_Recv", [3, 1, 2])])
        self.assertEqual(got[1], [("MPI_Recv", [0, 1, 1]),
                                  ("MPI_Send", [0, 2, 1]),
                                  ("MPI_Wait", [1, 3, 1])])
        self.assertEqual(got[2], [("MPI_Send", [0, 0, 1]),
                                  ("MPI_Isend", [0, 0, 2]),
                                  ("MPI_Recv", [0, 2, 3])])

    def test_receiver_posts_before_any_clocked_call(self):
        gt = {0: [line("MPI_Issend", send("0.0", 1, mode="sync", req="s")),
                  line("MPI_Wait", complete("s"))],
              1: [line("MPI_Irecv", post("r")),
                  line("MPI_Barrier", coll("all_to_all", "self1", [1])),
                  line("MPI_Wait", complete("r", "0.0"))]}
        got = clocks(oracle.evaluate(gt))
        self.assertEqual(got[0], [("MPI_Issend", [1, 0]), ("MPI_Wait", [2, 0])])
        self.assertEqual(got[1], [("MPI_Barrier", [0, 1]), ("MPI_Wait", [1, 2])])

    def test_blocking_receive_answers_with_its_clock(self):
        # Issend completed by Test; the blocking Recv's clock comes back.
        gt = {0: [line("MPI_Issend", send("0.0", 1, mode="sync", req="s")),
                  line("MPI_Test"),
                  line("MPI_Test", complete("s"))],
              1: [line("MPI_Send", send("1.0", 1)),
                  line("MPI_Recv", recv("1.0")),
                  line("MPI_Recv", recv("0.0"))]}
        got = clocks(oracle.evaluate(gt))
        self.assertEqual(got[1], [("MPI_Send", [0, 1]), ("MPI_Recv", [0, 2]),
                                  ("MPI_Recv", [1, 3])])
        self.assertEqual(got[0], [("MPI_Issend", [1, 0]), ("MPI_Test", [2, 3])])

    def test_sendrecv_to_self_is_not_a_cycle(self):
        gt = {0: [line("MPI_Sendrecv", send("0.0", 0), recv("0.0"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {0: [("MPI_Sendrecv", [1])]})


class SubgroupCollectives(unittest.TestCase):
    # Communicator "split.c0" = world ranks [2, 0] (comm rank order reversed);
    # ranks 1 and 3 only exchange point-to-point and must stay unaffected.
    SUB = ["split.c0", [2, 0]]
    GT = {
        0: [line("MPI_Recv", recv("1.0")),
            line("MPI_Allreduce", coll("all_to_all", *SUB)),
            line("MPI_Bcast", coll("one_to_all", *SUB, root=2)),
            line("MPI_Reduce", coll("all_to_one", *SUB, root=0))],
        1: [line("MPI_Send", send("1.0", 0))],
        2: [line("MPI_Send", send("2.0", 3)),
            line("MPI_Allreduce", coll("all_to_all", *SUB)),
            line("MPI_Bcast", coll("one_to_all", *SUB, root=2)),
            line("MPI_Reduce", coll("all_to_one", *SUB, root=0))],
        3: [line("MPI_Recv", recv("2.0"))],
    }

    def test_clocks(self):
        got = clocks(oracle.evaluate(self.GT))
        self.assertEqual(got[0], [("MPI_Recv", [1, 1, 0, 0]),
                                  ("MPI_Allreduce", [2, 1, 2, 0]),
                                  ("MPI_Bcast", [3, 1, 3, 0]),
                                  ("MPI_Reduce", [4, 1, 4, 0])])
        self.assertEqual(got[2], [("MPI_Send", [0, 0, 1, 0]),
                                  ("MPI_Allreduce", [2, 1, 2, 0]),
                                  ("MPI_Bcast", [2, 1, 3, 0]),
                                  ("MPI_Reduce", [2, 1, 4, 0])])
        self.assertEqual(got[1], [("MPI_Send", [0, 1, 0, 0])])
        self.assertEqual(got[3], [("MPI_Recv", [0, 0, 1, 1])])

    def test_inconsistent_members_is_an_oracle_error(self):
        gt = dict(self.GT)
        gt[2] = [gt[2][0], line("MPI_Allreduce", coll("all_to_all", "split.c0", [0, 2]))] \
            + gt[2][2:]
        with self.assertRaisesRegex(oracle.OracleError, "split.c0"):
            oracle.evaluate(gt)


class Mismatches(unittest.TestCase):
    def setUp(self):
        self.res = oracle.evaluate(DESIGN_EXAMPLE)

    def trace(self):
        return as_trace(DESIGN_EXPECTED)

    def test_missing_ack_edge(self):
        # The Ssend without rank 2's answer: [1,2,0] instead of [1,2,1].
        t = self.trace()
        t[1][1]["clock"] = [1, 2, 0]
        text = "\n".join(oracle.compare(self.res, t))
        self.assertIn("rank 1 seq 1 MPI_Ssend", text)
        self.assertIn("expected [1, 2, 1] got [1, 2, 0]", text)
        self.assertIn("1 clock/call mismatch", text)

    def test_invented_edge_wrong_name_and_missing_event(self):
        t = self.trace()
        t[0][1]["clock"] = [2, 3, 3]  # too large
        t[2][0]["call"] = "MPI_Irecv"  # wrong call
        del t[1][2]  # missing barrier
        text = "\n".join(oracle.compare(self.res, t))
        self.assertIn("rank 0 seq 1 MPI_Barrier", text)
        self.assertIn("expected call MPI_Recv", text)
        self.assertIn("MPI_Barrier (gt line 3) missing from the trace", text)
        self.assertIn("rank 1: expected 3 clocked calls, trace has 2", text)

    def test_extra_event_and_bad_seq(self):
        t = self.trace()
        t[2].append({"rank": 2, "seq": 5, "call": "MPI_Finalize", "clock": [2, 3, 3]})
        text = "\n".join(oracle.compare(self.res, t))
        self.assertIn("extra MPI_Finalize", text)
        self.assertIn("rank 2: trace seq numbers", text)


class OracleErrors(unittest.TestCase):
    def test_cycle(self):
        # Both ranks receive before they send: impossible in a real run.
        gt = {0: [line("MPI_Recv", recv("1.0")), line("MPI_Send", send("0.0", 1))],
              1: [line("MPI_Recv", recv("0.0")), line("MPI_Send", send("1.0", 0))]}
        with self.assertRaisesRegex(oracle.OracleError, "cycle"):
            oracle.evaluate(gt)

    def test_missing_send(self):
        gt = {0: [line("MPI_Recv", recv("1.5"))], 1: []}
        with self.assertRaisesRegex(oracle.OracleError, "missing match.*1.5"):
            oracle.evaluate(gt)

    def test_sync_send_never_received(self):
        gt = {0: [line("MPI_Issend", send("0.0", 1, mode="sync", req="s")),
                  line("MPI_Wait", complete("s"))], 1: []}
        with self.assertRaisesRegex(oracle.OracleError, "missing match"):
            oracle.evaluate(gt)

    def test_collective_member_missing(self):
        gt = {0: [line("MPI_Barrier", coll("all_to_all", "world", [0, 1]))], 1: []}
        with self.assertRaisesRegex(oracle.OracleError, r"missing match.*\[1\]"):
            oracle.evaluate(gt)

    def test_received_twice_and_wrong_destination(self):
        gt = {0: [line("MPI_Send", send("0.0", 1))],
              1: [line("MPI_Recv", recv("0.0")), line("MPI_Recv", recv("0.0"))]}
        with self.assertRaisesRegex(oracle.OracleError, "received twice"):
            oracle.evaluate(gt)
        gt = {0: [line("MPI_Send", send("0.0", 1))], 1: [], 2: [line("MPI_Recv", recv("0.0"))]}
        with self.assertRaisesRegex(oracle.OracleError, "received by rank 2"):
            oracle.evaluate(gt)

    def test_unknown_request(self):
        gt = {0: [line("MPI_Wait", complete("nope"))]}
        with self.assertRaisesRegex(oracle.OracleError, "unknown or inactive request"):
            oracle.evaluate(gt)


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.gt = os.path.join(self.tmp.name, "gt")
        os.mkdir(self.gt)

    def tearDown(self):
        self.tmp.cleanup()

    def write_gt(self, gt):
        for rank, lines in gt.items():
            with open(os.path.join(self.gt, f"gt-{rank}.jsonl"), "w") as f:
                for obj in lines:
                    f.write(json.dumps(obj) + "\n")

    def write_trace(self, trace):
        path = os.path.join(self.tmp.name, "trace.jsonl")
        with open(path, "w") as f:
            for rank in sorted(trace):
                for ev in trace[rank]:
                    f.write(json.dumps(dict(ev, extra="ignored")) + "\n")
        return path

    def run_oracle(self, *args):
        out, err = io.StringIO(), io.StringIO()
        code = oracle.run(*args, out=out, err=err)
        return code, out.getvalue(), err.getvalue()

    def test_match_mismatch_error(self):
        self.write_gt(DESIGN_EXAMPLE)
        path = self.write_trace(as_trace(DESIGN_EXPECTED))
        self.assertEqual(self.run_oracle(self.gt, path, 3)[0], oracle.EXIT_OK)

        bad = as_trace(DESIGN_EXPECTED)
        bad[2][0]["clock"] = [1, 2, 0]
        code, out, _ = self.run_oracle(self.gt, self.write_trace(bad), None)
        self.assertEqual(code, oracle.EXIT_MISMATCH)
        self.assertIn("rank 2 seq 0 MPI_Recv", out)

        code, _, err = self.run_oracle(self.gt, path, 4)  # no gt-3.jsonl
        self.assertEqual(code, oracle.EXIT_ORACLE_ERROR)
        self.assertIn("ORACLE ERROR", err)

    def test_self_check_prints_trace_format(self):
        self.write_gt(DESIGN_EXAMPLE)
        code, out, _ = self.run_oracle(self.gt, None, None, True)
        self.assertEqual(code, oracle.EXIT_OK)
        evs = [json.loads(x) for x in out.splitlines()]
        self.assertEqual([(e["rank"], e["seq"], e["call"], e["clock"]) for e in evs][:2],
                         [(0, 0, "MPI_Send", [1, 0, 0]), (0, 1, "MPI_Barrier", [2, 3, 2])])

    def test_self_check_rejects_incomplete_logs(self):
        self.write_gt({0: [line("MPI_Send", send("0.0", 1))], 1: []})
        code, _, err = self.run_oracle(self.gt, None, None, True)
        self.assertEqual(code, oracle.EXIT_ORACLE_ERROR)
        self.assertIn("never received", err)


if __name__ == "__main__":
    unittest.main()
