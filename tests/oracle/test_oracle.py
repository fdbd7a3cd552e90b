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


def matched(op, keys, match):
    """op with the optional matching fields (gt_match): match is (comm, tag)
    for a send, (comm, src, tag) for a receive; None logs none."""
    if match is not None:
        op.update(zip(keys, match))
    return op


def send(msg, dest, mode="std", req=None, match=None):
    op = {"op": "send", "mode": mode, "msg": msg, "dest": dest}
    if req is not None:
        op["req"] = req
    return matched(op, ("comm", "tag"), match)


def recv(msg, match=None):
    return matched({"op": "recv", "msg": msg}, ("comm", "src", "tag"), match)


def post(req, match=None):
    return matched({"op": "post", "req": req}, ("comm", "src", "tag"), match)


def complete(req, msg=None, cancelled=False):
    op = {"op": "complete", "req": req}
    if msg is not None:
        op["msg"] = msg
    if cancelled:
        op["cancelled"] = True
    return op


def cancel(req):
    return {"op": "cancel", "req": req}


def win_create(win, members):
    return {"op": "win_create", "win": win, "members": members}


def fence(win):
    return {"op": "win_fence", "win": win}


def win_free(win):
    return {"op": "win_free", "win": win}


def wpost(win, group):
    return {"op": "win_post", "win": win, "group": group}


def wstart(win, group):
    return {"op": "win_start", "win": win, "group": group}


def wcomplete(win, group):
    return {"op": "win_complete", "win": win, "group": group}


def wwait(win, group):
    return {"op": "win_wait", "win": win, "group": group}


def lock(win, target, typ, count):
    return {"op": "win_lock", "win": win, "target": target, "type": typ, "count": count}


def unlock(win, target):
    return {"op": "win_unlock", "win": win, "target": target}


def lock_all(win, counts):
    return {"op": "win_lock_all", "win": win, "counts": counts}


def unlock_all(win):
    return {"op": "win_unlock_all", "win": win}


def coll(kind, comm, members, root=None, req=None):
    op = {"op": "coll", "kind": kind, "comm": comm, "members": members, "root": root}
    if req is not None:
        op["req"] = req
    return op


def inter(kind, comm, local, remote, root=None, req=None):
    """Collective on an intercommunicator, as one member of `local` logs it."""
    op = {"op": "coll", "kind": kind, "comm": comm, "local": local, "remote": remote,
          "root": root}
    if req is not None:
        op["req"] = req
    return op


def nbr(comm, members, inn, out, req=None):
    op = {"op": "coll", "kind": "neighbor", "comm": comm, "members": members, "in": inn,
          "out": out, "root": None}
    if req is not None:
        op["req"] = req
    return op


def init(req, rtype, comm=None):
    op = {"op": "init", "req": req, "type": rtype}
    if comm is not None:
        op["comm"] = comm
    return op


def free(req):
    return {"op": "free", "req": req}


def status(req):
    return {"op": "status", "req": req}


def mprobe(handle, match=None):
    return matched({"op": "mprobe", "handle": handle}, ("comm", "src", "tag"), match)


def mrecv(handle, msg):
    return {"op": "mrecv", "handle": handle, "msg": msg}


def imrecv(handle, req):
    return {"op": "imrecv", "handle": handle, "req": req}


def clocks(res):
    """rank -> [(call, clock)] of the clocked calls."""
    return {r: [(c.name, c.clock) for c in res.clocked[r]] for r in range(res.n)}


def as_trace(expected):
    """Trace events (rank -> list) from rank -> [(call, clock)]."""
    return {r: [{"rank": r, "seq": i, "call": name, "clock": list(clk)}
                for i, (name, clk) in enumerate(evs)] for r, evs in expected.items()}


BARRIER3 = coll("all_to_all", "world", [0, 1, 2])

# A worked example of the rules (docs/clock-rules.md), by hand.
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


W3 = [0, 1, 2]


class Prefix(unittest.TestCase):
    def test_iscan_three_ranks(self):
        # Member 0 only signals (clocked at initiation), member 2 only waits
        # (clocked at completion), member 1 both. Member 2 merges the clocks
        # of 0 and 1 at their initiations, not rank 0's later Recv.
        scan = coll("prefix", "world", W3, req="a")
        gt = {0: [line("MPI_Iscan", scan), line("MPI_Recv", recv("2.0")),
                  line("MPI_Wait", complete("a"))],
              1: [line("MPI_Iscan", scan), line("MPI_Wait", complete("a"))],
              2: [line("MPI_Send", send("2.0", 0)), line("MPI_Iscan", scan),
                  line("MPI_Wait", complete("a"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Iscan", [1, 0, 0]), ("MPI_Recv", [2, 0, 1])],
            1: [("MPI_Iscan", [0, 1, 0]), ("MPI_Wait", [1, 2, 0])],
            2: [("MPI_Send", [0, 0, 1]), ("MPI_Wait", [1, 1, 2])]})

    def test_blocking_scan_and_exscan_in_comm_rank_order(self):
        # Communicator ranks reversed: world rank 2 is member 0.
        m = [2, 1, 0]
        gt = {r: [line("MPI_Scan", coll("prefix", "rev", m)),
                  line("MPI_Exscan", coll("prefix", "rev", m))] for r in W3}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            2: [("MPI_Scan", [0, 0, 1]), ("MPI_Exscan", [0, 0, 2])],
            1: [("MPI_Scan", [0, 1, 1]), ("MPI_Exscan", [0, 2, 2])],
            0: [("MPI_Scan", [1, 1, 1]), ("MPI_Exscan", [2, 2, 2])]})

    def test_lone_member_has_both_parts(self):
        gt = {0: [line("MPI_Iscan", coll("prefix", "self", [0], req="a")),
                  line("MPI_Wait", complete("a"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)),
                         {0: [("MPI_Iscan", [1]), ("MPI_Wait", [2])]})


class NonBlockingCollectives(unittest.TestCase):
    def test_ibcast_clocked_at_root_init_and_others_completion(self):
        bc = coll("one_to_all", "world", W3, root=1, req="b")
        gt = {0: [line("MPI_Send", send("0.0", 2)), line("MPI_Ibcast", bc),
                  line("MPI_Wait", complete("b"))],
              1: [line("MPI_Ibcast", bc), line("MPI_Wait", complete("b"))],
              2: [line("MPI_Ibcast", bc), line("MPI_Recv", recv("0.0")),
                  line("MPI_Wait", complete("b"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Send", [1, 0, 0]), ("MPI_Wait", [2, 1, 0])],
            1: [("MPI_Ibcast", [0, 1, 0])],
            2: [("MPI_Recv", [1, 0, 1]), ("MPI_Wait", [1, 1, 2])]})

    def test_ireduce_and_ibarrier_completed_out_of_order(self):
        red = coll("all_to_one", "world", [0, 1], root=0, req="a")
        bar = coll("all_to_all", "world", [0, 1], req="b")
        gt = {0: [line("MPI_Ireduce", red), line("MPI_Ibarrier", bar),
                  line("MPI_Waitall", complete("a"), complete("b"))],
              1: [line("MPI_Ireduce", red), line("MPI_Ibarrier", bar),
                  line("MPI_Waitany", complete("b")), line("MPI_Waitany", complete("a"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ibarrier", [1, 0]), ("MPI_Waitall", [2, 2])],
            1: [("MPI_Ireduce", [0, 1]), ("MPI_Ibarrier", [0, 2]), ("MPI_Waitany", [1, 3])]})

    def test_persistent_bcast_started_twice_counts_instances(self):
        # Bcast_init is no instance; each Start is one, the Barrier between
        # them another.
        bc = coll("one_to_all", "world", [0, 1], root=0, req="p")
        bar = coll("all_to_all", "world", [0, 1])
        gt = {r: [line("MPI_Bcast_init", init("p", "coll", "world")),
                  line("MPI_Start", bc), line("MPI_Wait", complete("p")),
                  line("MPI_Barrier", bar),
                  line("MPI_Start", bc), line("MPI_Wait", complete("p")),
                  line("MPI_Request_free", free("p"))] for r in (0, 1)}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Start", [1, 0]), ("MPI_Barrier", [2, 2]), ("MPI_Start", [3, 2])],
            1: [("MPI_Wait", [1, 1]), ("MPI_Barrier", [2, 2]), ("MPI_Wait", [3, 3])]})

    def test_startall_instances_in_array_order(self):
        # One Startall starts a barrier then a bcast rooted at rank 1; rank 1
        # starts them with two Starts. Instance 0 is the barrier at both.
        bar = coll("all_to_all", "world", [0, 1], req="p")
        bc = coll("one_to_all", "world", [0, 1], root=1, req="q")
        gt = {0: [line("MPI_Barrier_init", init("p", "coll", "world")),
                  line("MPI_Bcast_init", init("q", "coll", "world")),
                  line("MPI_Startall", bar, bc),
                  line("MPI_Waitall", complete("p"), complete("q"))],
              1: [line("MPI_Barrier_init", init("p", "coll", "world")),
                  line("MPI_Bcast_init", init("q", "coll", "world")),
                  line("MPI_Start", bar), line("MPI_Start", bc),
                  line("MPI_Wait", complete("q")), line("MPI_Wait", complete("p"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Startall", [1, 0]), ("MPI_Waitall", [2, 2])],
            1: [("MPI_Start", [0, 1]), ("MPI_Start", [0, 2]), ("MPI_Wait", [1, 3])]})

    def test_persistent_starts_match_by_init_not_by_start_order(self):
        # Rank 0 starts the bcast first, rank 1 the barrier (legal: MPI
        # orders the _init calls only). The bcast's start at rank 0 and its
        # completion at rank 1 pair up, and so do the two barrier starts,
        # whatever the order of starts.
        bc = coll("one_to_all", "world", [0, 1], root=0, req="p")
        bar = coll("all_to_all", "world", [0, 1], req="q")
        inits = [line("MPI_Bcast_init", init("p", "coll", "world")),
                 line("MPI_Barrier_init", init("q", "coll", "world"))]
        gt = {0: inits + [line("MPI_Start", bc), line("MPI_Start", bar),
                          line("MPI_Waitall", complete("p"), complete("q"))],
              1: inits + [line("MPI_Start", bar), line("MPI_Start", bc),
                          line("MPI_Waitall", complete("q"), complete("p"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Start", [1, 0]), ("MPI_Start", [2, 0]), ("MPI_Waitall", [3, 1])],
            1: [("MPI_Start", [0, 1]), ("MPI_Waitall", [2, 2])]})

    def test_persistent_collective_init_needs_its_comm(self):
        gt = {0: [line("MPI_Barrier_init", init("p", "coll"))]}
        with self.assertRaisesRegex(oracle.OracleError, "without its comm"):
            oracle.evaluate(gt)

    def test_lone_member_parts_follow_its_role(self):
        # Roles, not the number of peers, decide the parts: the only member
        # of a communicator, as root of Ireduce, has the wait part (clocked
        # at completion, merging nothing); as root of Ibcast only the signal
        # part; Ibarrier has both.
        gt = {0: [line("MPI_Ireduce", coll("all_to_one", "self", [0], root=0, req="a")),
                  line("MPI_Ibcast", coll("one_to_all", "self", [0], root=0, req="b")),
                  line("MPI_Ibarrier", coll("all_to_all", "self", [0], req="c")),
                  line("MPI_Waitany", complete("a")), line("MPI_Waitany", complete("b")),
                  line("MPI_Waitany", complete("c"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {0: [
            ("MPI_Ibcast", [1]), ("MPI_Ibarrier", [2]), ("MPI_Waitany", [3]),
            ("MPI_Waitany", [4])]})

    def test_start_of_wrong_type_is_an_oracle_error(self):
        gt = {0: [line("MPI_Send_init", init("p", "send")), line("MPI_Start", post("p"))]}
        with self.assertRaisesRegex(oracle.OracleError, "type send started as recv"):
            oracle.evaluate(gt)


class Persistent(unittest.TestCase):
    def test_persistent_send_started_twice(self):
        gt = {0: [line("MPI_Send_init", init("p", "send")),
                  line("MPI_Start", send("0.0", 1, req="p")),
                  line("MPI_Request_get_status", status("p")),
                  line("MPI_Wait", complete("p")),
                  line("MPI_Start", send("0.1", 1, req="p")),
                  line("MPI_Wait", complete("p")),
                  line("MPI_Request_free", free("p"))],
              1: [line("MPI_Recv_init", init("q", "recv")),
                  line("MPI_Start", post("q")), line("MPI_Wait", complete("q", "0.0")),
                  line("MPI_Start", post("q")), line("MPI_Wait", complete("q", "0.1")),
                  line("MPI_Request_free", free("q"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Start", [1, 0]), ("MPI_Start", [2, 0])],
            1: [("MPI_Wait", [1, 1]), ("MPI_Wait", [2, 2])]})

    def test_persistent_sync_answered_from_each_start(self):
        # Rank 1's answer to each round is its clock at that round's Start:
        # [0,1] (its first Send) and [1,3] (its first Wait), not the clocks
        # of the Waits that complete the receives.
        gt = {0: [line("MPI_Ssend_init", init("p", "send")),
                  line("MPI_Start", send("0.0", 1, mode="sync", req="p")),
                  line("MPI_Wait", complete("p")),
                  line("MPI_Recv", recv("1.0")), line("MPI_Recv", recv("1.1")),
                  line("MPI_Start", send("0.1", 1, mode="sync", req="p")),
                  line("MPI_Wait", complete("p")),
                  line("MPI_Request_free", free("p"))],
              1: [line("MPI_Recv_init", init("q", "recv")),
                  line("MPI_Send", send("1.0", 0)),
                  line("MPI_Start", post("q")),
                  line("MPI_Send", send("1.1", 0)),
                  line("MPI_Wait", complete("q", "0.0")),
                  line("MPI_Start", post("q")),
                  line("MPI_Wait", complete("q", "0.1")),
                  line("MPI_Request_free", free("q"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Start", [1, 0]), ("MPI_Wait", [2, 1]), ("MPI_Recv", [3, 1]),
                ("MPI_Recv", [4, 2]), ("MPI_Start", [5, 2]), ("MPI_Wait", [6, 3])],
            1: [("MPI_Send", [0, 1]), ("MPI_Send", [0, 2]), ("MPI_Wait", [1, 3]),
                ("MPI_Wait", [5, 4])]})

    def test_clocked_startall_answers_with_its_own_tick(self):
        # The Startall that posts the receive also starts a send, so it is
        # clocked and the Ssend merges its tick [0,1].
        gt = {0: [line("MPI_Ssend", send("0.0", 1, mode="sync")),
                  line("MPI_Recv", recv("1.0"))],
              1: [line("MPI_Send_init", init("s", "send")),
                  line("MPI_Recv_init", init("q", "recv")),
                  line("MPI_Startall", post("q"), send("1.0", 0, req="s")),
                  line("MPI_Waitall", complete("q", "0.0"), complete("s")),
                  line("MPI_Request_free", free("s")), line("MPI_Request_free", free("q"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ssend", [1, 1]), ("MPI_Recv", [2, 1])],
            1: [("MPI_Startall", [0, 1]), ("MPI_Waitall", [1, 2])]})

    def test_free_while_active_is_reported(self):
        gt = {0: [line("MPI_Send_init", init("p", "send")),
                  line("MPI_Start", send("0.0", 0, req="p")),
                  line("MPI_Request_free", free("p")),
                  line("MPI_Recv", recv("0.0"))]}
        res = oracle.evaluate(gt)
        self.assertTrue(any("freed while active" in w for w in res.warnings))


class MatchedProbes(unittest.TestCase):
    def test_mprobe_mrecv_answer_a_synchronous_send(self):
        # The answer is rank 1's clock at the Mprobe, [0,1]; the Mrecv's
        # clock [1,3] would be too late (and would make the clocks circular).
        gt = {0: [line("MPI_Ssend", send("0.0", 1, mode="sync")),
                  line("MPI_Recv", recv("1.0")), line("MPI_Recv", recv("1.1"))],
              1: [line("MPI_Send", send("1.0", 0)),
                  line("MPI_Mprobe", mprobe("m0")),
                  line("MPI_Send", send("1.1", 0)),
                  line("MPI_Mrecv", mrecv("m0", "0.0"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ssend", [1, 1]), ("MPI_Recv", [2, 1]), ("MPI_Recv", [3, 2])],
            1: [("MPI_Send", [0, 1]), ("MPI_Send", [0, 2]), ("MPI_Mrecv", [1, 3])]})

    def test_improbe_imrecv_answer_an_issend(self):
        gt = {0: [line("MPI_Issend", send("0.0", 1, mode="sync", req="s")),
                  line("MPI_Wait", complete("s")),
                  line("MPI_Recv", recv("1.0")), line("MPI_Recv", recv("1.1"))],
              1: [line("MPI_Send", send("1.0", 0)),
                  line("MPI_Improbe"),
                  line("MPI_Improbe", mprobe("m0")),
                  line("MPI_Imrecv", imrecv("m0", "r")),
                  line("MPI_Send", send("1.1", 0)),
                  line("MPI_Wait", complete("r", "0.0"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Issend", [1, 0]), ("MPI_Wait", [2, 1]), ("MPI_Recv", [3, 1]),
                ("MPI_Recv", [4, 2])],
            1: [("MPI_Send", [0, 1]), ("MPI_Send", [0, 2]), ("MPI_Wait", [1, 3])]})

    def test_handle_never_received_is_reported(self):
        gt = {0: [line("MPI_Send", send("0.0", 0)), line("MPI_Mprobe", mprobe("m0"))]}
        res = oracle.evaluate(gt)
        self.assertTrue(any("m0" in w and "never received" in w for w in res.warnings))


# Matching fields as the gt library logs them.
ANY5 = ("world", "any", 5)


def ssend(msg, dest, tag=5):
    return line("MPI_Ssend", send(msg, dest, mode="sync", match=("world", tag)))


class NonOvertaking(unittest.TestCase):
    # MPI's non-overtaking rule for receives: when a receive B of a rank
    # took a synchronous message while an earlier receive A of that rank,
    # able to match the same message, was still pending, A had matched its
    # own message before; the answer to B's sender also merges the tick of
    # that message's send (and, transitively, of what A's match came after).

    def two_irecvs(self, first=ANY5, tag1=5):
        """Rank 1 posts a (match `first`) then b (any/5), completing both in
        one Waitall; rank 0 Ssends 0.0 (tag1) into a, rank 2 Ssends 2.0
        (tag 5) into b."""
        return {0: [ssend("0.0", 1, tag1)],
                1: [line("MPI_Irecv", post("a", match=first)),
                    line("MPI_Irecv", post("b", match=ANY5)),
                    line("MPI_Waitall", complete("a", "0.0"), complete("b", "2.0"))],
                2: [ssend("2.0", 1)]}

    def test_pending_wildcard_receive_orders_the_second_match(self):
        # No clocked call of rank 1 before its postings: both answers are
        # zeros. b took 2.0 while a (any/5) was pending, so a had taken 0.0
        # before: rank 2's Ssend merges rank 0's Ssend tick [1,0,0], while
        # rank 0's learns nothing of rank 2.
        res = oracle.evaluate(self.two_irecvs())
        self.assertEqual(clocks(res), {
            0: [("MPI_Ssend", [1, 0, 0])],
            1: [("MPI_Waitall", [1, 1, 1])],
            2: [("MPI_Ssend", [1, 0, 1])]})
        self.assertEqual(res.messages["2.0"].earlier, ["0.0"])
        self.assertEqual(res.messages["0.0"].earlier, [])
        # A mismatch report names the message of T(b).
        wrong = as_trace({0: [("MPI_Ssend", [1, 0, 0])], 1: [("MPI_Waitall", [1, 1, 1])],
                          2: [("MPI_Ssend", [0, 0, 1])]})
        diffs = "\n".join(oracle.compare(res, wrong))
        self.assertIn("non-overtaking): msg 0.0 from rank 0 seq 0 tick [1, 0, 0]", diffs)

    def test_first_receive_cannot_match_the_second_message(self):
        # a wants tag 6 (and got 0.0, sent with tag 6): it could not have
        # taken 2.0 (tag 5), so b's match says nothing about a's.
        got = clocks(oracle.evaluate(self.two_irecvs(first=("world", "any", 6), tag1=6)))
        self.assertEqual(got[2], [("MPI_Ssend", [0, 0, 1])])
        # Other communicator or other wanted source: no edge either.
        got = clocks(oracle.evaluate(self.two_irecvs(first=("world", 0, 5))))
        self.assertEqual(got[2], [("MPI_Ssend", [0, 0, 1])])

    def test_first_receive_completed_before_the_second_posting(self):
        # a is no longer pending at b's posting: no edge. Its Wait [1,1,0]
        # is rank 1's clock at b's posting, which already covers 0.0.
        gt = self.two_irecvs()
        gt[1] = [line("MPI_Irecv", post("a", match=ANY5)),
                 line("MPI_Wait", complete("a", "0.0")),
                 line("MPI_Irecv", post("b", match=ANY5)),
                 line("MPI_Wait", complete("b", "2.0"))]
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {
            0: [("MPI_Ssend", [1, 0, 0])],
            1: [("MPI_Wait", [1, 1, 0]), ("MPI_Wait", [1, 2, 1])],
            2: [("MPI_Ssend", [1, 1, 1])]})
        self.assertEqual(res.messages["2.0"].earlier, [])

    def test_chain_is_transitive(self):
        # a1 wants any/5, a2 and a3 any/any; 0.0 (tag 5) -> a1, 2.0 (tag 5)
        # -> a2, 3.0 (tag 7) -> a3. a1 could not take 3.0 (tag 7), so it is
        # not in E(a3) = {a2}; but a1 is in E(a2) (it could take 2.0), so
        # T(a3) = {2.0} + T(a2) = {2.0, 0.0}: rank 3's Ssend merges both
        # ticks ([0,0,1,1] without the transitive part).
        anyany = ("world", "any", "any")
        gt = {0: [ssend("0.0", 1)],
              1: [line("MPI_Irecv", post("a1", match=ANY5)),
                  line("MPI_Irecv", post("a2", match=anyany)),
                  line("MPI_Irecv", post("a3", match=anyany)),
                  line("MPI_Waitall", complete("a1", "0.0"), complete("a2", "2.0"),
                       complete("a3", "3.0"))],
              2: [ssend("2.0", 1)],
              3: [ssend("3.0", 1, tag=7)]}
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {
            0: [("MPI_Ssend", [1, 0, 0, 0])],
            1: [("MPI_Waitall", [1, 1, 1, 1])],
            2: [("MPI_Ssend", [1, 0, 1, 0])],
            3: [("MPI_Ssend", [1, 0, 1, 1])]})
        self.assertEqual(res.messages["3.0"].earlier, ["0.0", "2.0"])

    def test_cancelled_first_receive(self):
        # a was cancelled: it matched nothing, so no edge (and it needs no
        # matching fields).
        gt = {0: [],
              1: [line("MPI_Irecv", post("a")),
                  line("MPI_Irecv", post("b", match=ANY5)),
                  line("MPI_Cancel", cancel("a")),
                  line("MPI_Waitall", complete("a", cancelled=True), complete("b", "2.0"))],
              2: [ssend("2.0", 1)]}
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {0: [], 1: [("MPI_Waitall", [0, 1, 1])],
                                       2: [("MPI_Ssend", [0, 0, 1])]})
        self.assertEqual(res.warnings, [])

    def test_blocking_receive_after_a_pending_irecv(self):
        # b is a blocking Recv: its answer, its own clock [0,1,1], does not
        # hold 0.0 (a completes later), but a was pending and could take 2.0.
        gt = {0: [ssend("0.0", 1)],
              1: [line("MPI_Irecv", post("a", match=ANY5)),
                  line("MPI_Recv", recv("2.0", match=ANY5)),
                  line("MPI_Wait", complete("a", "0.0"))],
              2: [ssend("2.0", 1)]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ssend", [1, 0, 0])],
            1: [("MPI_Recv", [0, 1, 1]), ("MPI_Wait", [1, 2, 1])],
            2: [("MPI_Ssend", [1, 1, 1])]})

    def test_pending_mprobe(self):
        # The Mprobe matched 0.0 before the Irecv was posted and is pending
        # until its Mrecv, after that posting: it is in E(b).
        gt = {0: [ssend("0.0", 1)],
              1: [line("MPI_Mprobe", mprobe("h", match=ANY5)),
                  line("MPI_Irecv", post("b", match=ANY5)),
                  line("MPI_Mrecv", mrecv("h", "0.0")),
                  line("MPI_Wait", complete("b", "2.0"))],
              2: [ssend("2.0", 1)]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ssend", [1, 0, 0])],
            1: [("MPI_Mrecv", [1, 1, 0]), ("MPI_Wait", [1, 2, 1])],
            2: [("MPI_Ssend", [1, 0, 1])]})
        # Through MPI_Imrecv it is pending until its request completes.
        gt[1] = [line("MPI_Improbe", mprobe("h", match=ANY5)),
                 line("MPI_Imrecv", imrecv("h", "r")),
                 line("MPI_Irecv", post("b", match=ANY5)),
                 line("MPI_Waitall", complete("r", "0.0"), complete("b", "2.0"))]
        self.assertEqual(clocks(oracle.evaluate(gt))[2], [("MPI_Ssend", [1, 0, 1])])
        # Received before the posting: the Mrecv's clock [1,1,0] is the
        # answer, no edge needed.
        gt[1] = [line("MPI_Mprobe", mprobe("h", match=ANY5)),
                 line("MPI_Mrecv", mrecv("h", "0.0")),
                 line("MPI_Irecv", post("b", match=ANY5)),
                 line("MPI_Wait", complete("b", "2.0"))]
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res)[2], [("MPI_Ssend", [1, 1, 1])])
        self.assertEqual(res.messages["2.0"].earlier, [])

    def test_postings_in_one_call_in_op_order(self):
        # MPI_Startall posting a then b: a comes first.
        gt = {0: [ssend("0.0", 1)],
              1: [line("MPI_Recv_init", init("a", "recv")),
                  line("MPI_Recv_init", init("b", "recv")),
                  line("MPI_Startall", post("a", match=ANY5), post("b", match=ANY5)),
                  line("MPI_Waitall", complete("a", "0.0"), complete("b", "2.0"))],
              2: [ssend("2.0", 1)]}
        res = oracle.evaluate(gt)
        self.assertEqual(res.messages["2.0"].earlier, ["0.0"])
        self.assertEqual(res.messages["0.0"].earlier, [])

    def test_missing_fields_where_needed(self):
        gt = self.two_irecvs()
        gt[1][0] = line("MPI_Irecv", post("a"))
        with self.assertRaisesRegex(oracle.OracleError,
                                    r"receive request a posted at rank 1 gt line 1 MPI_Irecv "
                                    r"logs no comm/src/tag.*must log the matching fields "
                                    r"\(gt_match\)"):
            oracle.evaluate(gt)
        gt = self.two_irecvs()
        gt[2] = [line("MPI_Ssend", send("2.0", 1, mode="sync"))]
        with self.assertRaisesRegex(oracle.OracleError, r"rank 2 gt line 1 MPI_Ssend \(send "
                                                        r"of message 2.0\) logs no comm/tag"):
            oracle.evaluate(gt)

    def test_missing_fields_where_not_needed(self):
        def bare(gt):
            """gt without any matching field."""
            return {r: [line(c["call"], *[{k: v for k, v in op.items()
                                           if k not in ("comm", "src", "tag")}
                                          for op in c["ops"]]) for c in v]
                    for r, v in gt.items()}

        # Nothing pending at b's posting.
        gt = self.two_irecvs()
        gt[1] = [line("MPI_Irecv", post("a")), line("MPI_Wait", complete("a", "0.0")),
                 line("MPI_Irecv", post("b")), line("MPI_Wait", complete("b", "2.0"))]
        self.assertEqual(clocks(oracle.evaluate(bare(gt)))[2], [("MPI_Ssend", [1, 1, 1])])
        # b's message not synchronous (and a's answer has nothing pending).
        gt = bare(self.two_irecvs())
        gt[2] = [line("MPI_Send", send("2.0", 1))]
        self.assertEqual(clocks(oracle.evaluate(gt))[2], [("MPI_Send", [0, 0, 1])])

    def test_pending_receive_that_never_completed(self):
        # a could have taken 2.0 but was freed: what it matched is unknown.
        gt = {1: [line("MPI_Irecv", post("a", match=ANY5)),
                  line("MPI_Irecv", post("b", match=ANY5)),
                  line("MPI_Request_free", free("a")),
                  line("MPI_Wait", complete("b", "2.0"))],
              0: [], 2: [ssend("2.0", 1)]}
        with self.assertRaisesRegex(oracle.OracleError, "never completed.*not modelled"):
            oracle.evaluate(gt)
        # Unable to match it: fine.
        gt[1][0] = line("MPI_Irecv", post("a", match=("world", 0, 5)))
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res)[2], [("MPI_Ssend", [0, 0, 1])])

    def test_field_validation(self):
        def one(op):
            return {0: [line("MPI_Send", send("0.0", 0)), line("MPI_Recv", op)]}
        for bad, what in ((recv("0.0", match=("world", 3, 5)), "src 3"),
                          (recv("0.0", match=("world", "any", -1)), "tag -1"),
                          (recv("0.0", match=("", "any", 5)), "comm ''"),
                          ({"op": "recv", "msg": "0.0", "comm": "world", "tag": 5},
                           "go together")):
            with self.assertRaisesRegex(oracle.OracleError, what):
                oracle.evaluate(one(bad))
        with self.assertRaisesRegex(oracle.OracleError, "send tag 'any'"):
            oracle.evaluate({0: [line("MPI_Send", send("0.0", 0, match=("world", "any")))]})
        # A receive must want what it got.
        gt = {0: [line("MPI_Send", send("0.0", 0, match=("world", 5))),
                  line("MPI_Recv", recv("0.0", match=("world", 0, 6)))]}
        with self.assertRaisesRegex(oracle.OracleError, "wants comm 'world' src 0 tag 6"):
            oracle.evaluate(gt)
        gt[0][1] = line("MPI_Recv", recv("0.0", match=("world", "any", "any")))
        self.assertEqual(clocks(oracle.evaluate(gt)), {0: [("MPI_Send", [1]),
                                                           ("MPI_Recv", [2])]})


class Neighbourhood(unittest.TestCase):
    def test_periodic_ring_of_three(self):
        # 1-D periodic Cartesian: per dimension the negative neighbour, then
        # the positive one; everybody hears from both sides.
        ring = {0: ([2, 1], [2, 1]), 1: ([0, 2], [0, 2]), 2: ([1, 0], [1, 0])}
        na = {r: nbr("ring", W3, *ring[r]) for r in W3}
        gt = {0: [line("MPI_Send", send("0.0", 1)), line("MPI_Neighbor_allgather", na[0])],
              1: [line("MPI_Recv", recv("0.0")), line("MPI_Neighbor_allgather", na[1])],
              2: [line("MPI_Neighbor_allgather", na[2])]}
        got = clocks(oracle.evaluate(gt))
        self.assertEqual(got[0][1], ("MPI_Neighbor_allgather", [2, 2, 1]))
        self.assertEqual(got[1][1], ("MPI_Neighbor_allgather", [2, 2, 1]))
        self.assertEqual(got[2][0], ("MPI_Neighbor_allgather", [2, 2, 1]))

        # Then a non-periodic line 0-1-2 (MPI_PROC_NULL ends skipped): the
        # ends hear only from the middle.
        line3 = {0: ([1], [1]), 1: ([0, 2], [0, 2]), 2: ([1], [1])}
        for r in W3:
            gt[r] += [line("MPI_Ineighbor_alltoall", nbr("line", W3, *line3[r], req="a")),
                      line("MPI_Wait", complete("a"))]
        got = clocks(oracle.evaluate(gt))
        self.assertEqual(got[0][2:], [("MPI_Ineighbor_alltoall", [3, 2, 1]),
                                      ("MPI_Wait", [4, 3, 1])])
        self.assertEqual(got[1][2:], [("MPI_Ineighbor_alltoall", [2, 3, 1]),
                                      ("MPI_Wait", [3, 4, 2])])
        self.assertEqual(got[2][1:], [("MPI_Ineighbor_alltoall", [2, 2, 2]),
                                      ("MPI_Wait", [2, 3, 3])])

    def test_dist_graph_chain_roles(self):
        # Edges 0->1->2: rank 0 only signals (clocked at initiation), rank 2
        # only waits (clocked at completion) and does not see rank 0.
        e = {0: ([], [1]), 1: ([0], [2]), 2: ([1], [])}
        gt = {r: [line("MPI_Ineighbor_allgather", nbr("chain", W3, *e[r], req="a")),
                  line("MPI_Wait", complete("a"))] for r in W3}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Ineighbor_allgather", [1, 0, 0])],
            1: [("MPI_Ineighbor_allgather", [0, 1, 0]), ("MPI_Wait", [1, 2, 0])],
            2: [("MPI_Wait", [0, 1, 1])]})

    def test_repeated_edges_must_pair_up(self):
        # Periodic ring of 2: the other rank is both neighbours.
        ok = {0: [line("MPI_Neighbor_alltoall", nbr("r2", [0, 1], [1, 1], [1, 1]))],
              1: [line("MPI_Neighbor_alltoall", nbr("r2", [0, 1], [0, 0], [0, 0]))]}
        self.assertEqual(clocks(oracle.evaluate(ok)), {
            0: [("MPI_Neighbor_alltoall", [1, 1])], 1: [("MPI_Neighbor_alltoall", [1, 1])]})
        bad = {0: ok[0], 1: [line("MPI_Neighbor_alltoall", nbr("r2", [0, 1], [0, 0], [0]))]}
        with self.assertRaisesRegex(oracle.OracleError, "disagree on edges"):
            oracle.evaluate(bad)


class Intercommunicators(unittest.TestCase):
    A, B = [0], [1, 2]

    def side(self, r):
        return (self.A, self.B) if r in self.A else (self.B, self.A)

    def test_bipartite_barrier_then_rooted(self):
        # Barrier between {0} and {1,2}: rank 1 merges rank 0 but not rank 2.
        # Bcast from root 1 (MPI_ROOT) to group {0}; rank 2 passes
        # MPI_PROC_NULL and is not clocked. Reduce to root 0 from {1,2}.
        def ops(r, kind, root=None):
            return inter(kind, "ic", *self.side(r), root=root)
        gt = {0: [], 1: [line("MPI_Send", send("1.0", 2))], 2: [line("MPI_Recv", recv("1.0"))]}
        for r in W3:
            gt[r] += [line("MPI_Barrier", ops(r, "all_to_all")),
                      line("MPI_Bcast", ops(r, "one_to_all", 1)),
                      line("MPI_Reduce", ops(r, "all_to_one", 0))]
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Barrier", [1, 2, 2]), ("MPI_Bcast", [2, 3, 2]), ("MPI_Reduce", [3, 4, 3])],
            1: [("MPI_Send", [0, 1, 0]), ("MPI_Barrier", [1, 2, 0]), ("MPI_Bcast", [1, 3, 0]),
                ("MPI_Reduce", [1, 4, 0])],
            2: [("MPI_Recv", [0, 1, 1]), ("MPI_Barrier", [1, 1, 2]), ("MPI_Reduce", [1, 1, 3])]})

    def test_nonblocking_rooted_with_proc_null_member(self):
        # Ibcast from rank 2 to {0}: rank 1 takes no part at either end.
        gt = {r: [line("MPI_Ibcast", inter("one_to_all", "ic", *self.side(r), root=2,
                                           req="a")),
                  line("MPI_Wait", complete("a"))] for r in W3}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Wait", [1, 0, 1])], 1: [], 2: [("MPI_Ibcast", [0, 0, 1])]})

    def test_groups_must_agree(self):
        gt = {0: [line("MPI_Barrier", inter("all_to_all", "ic", [0], [1, 2]))],
              1: [line("MPI_Barrier", inter("all_to_all", "ic", [1], [0, 2]))],
              2: [line("MPI_Barrier", inter("all_to_all", "ic", [2, 1], [0]))]}
        with self.assertRaisesRegex(oracle.OracleError, "collective #0 on comm 'ic'"):
            oracle.evaluate(gt)


class Cancellation(unittest.TestCase):
    # Rank 1 cancels a receive that nothing could match yet, then receives
    # the message sent after the barrier: the cancelled request merges
    # nothing and its completion is not clocked. Later a Waitall completes a
    # cancelled receive together with one that took an Issend: clocked for
    # the latter only, and the Issend is answered at that receive's posting
    # (rank 1's clock at its Recv), unaffected by the cancelled one.
    GT = {0: [line("MPI_Barrier", coll("all_to_all", "world", [0, 1])),
              line("MPI_Send", send("0.0", 1)),
              line("MPI_Issend", send("0.1", 1, mode="sync", req="s")),
              line("MPI_Wait", complete("s"))],
          1: [line("MPI_Irecv", post("a")),
              line("MPI_Cancel", cancel("a")),
              line("MPI_Wait", complete("a", cancelled=True)),
              line("MPI_Barrier", coll("all_to_all", "world", [0, 1])),
              line("MPI_Recv", recv("0.0")),
              line("MPI_Irecv", post("b")),
              line("MPI_Irecv", post("c")),
              line("MPI_Cancel", cancel("b")),
              line("MPI_Waitall", complete("b", cancelled=True), complete("c", "0.1"))]}

    def test_cancelled_irecv_then_receives_that_take_the_messages(self):
        res = oracle.evaluate(self.GT)
        self.assertEqual(clocks(res), {
            0: [("MPI_Barrier", [1, 1]), ("MPI_Send", [2, 1]), ("MPI_Issend", [3, 1]),
                ("MPI_Wait", [4, 2])],
            1: [("MPI_Barrier", [1, 1]), ("MPI_Recv", [2, 2]), ("MPI_Waitall", [3, 3])]})
        self.assertEqual(res.warnings, [])

    def test_failed_cancel_completes_with_the_message(self):
        gt = {0: [line("MPI_Send", send("0.0", 1))],
              1: [line("MPI_Irecv", post("a")), line("MPI_Cancel", cancel("a")),
                  line("MPI_Wait", complete("a", "0.0"))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Send", [1, 0])], 1: [("MPI_Wait", [1, 1])]})

    def test_cancelled_without_cancel_is_an_oracle_error(self):
        gt = {0: [line("MPI_Irecv", post("a")), line("MPI_Wait", complete("a", cancelled=True))]}
        with self.assertRaisesRegex(oracle.OracleError, "never cancelled"):
            oracle.evaluate(gt)

    def test_cancelled_send_must_not_be_received(self):
        # Not produced by MPICH 4.0.2, which never cancels a send; the model
        # still says such a message matched nothing.
        sent = [line("MPI_Isend", send("0.0", 1, req="s")), line("MPI_Cancel", cancel("s")),
                line("MPI_Wait", complete("s", cancelled=True))]
        res = oracle.evaluate({0: sent, 1: []})
        self.assertEqual(res.warnings, [])
        with self.assertRaisesRegex(oracle.OracleError, "cancelled but received"):
            oracle.evaluate({0: sent, 1: [line("MPI_Recv", recv("0.0"))]})


class Fence(unittest.TestCase):
    # Window "w" on world, window "s" on a sub-communicator [2, 0]; rank 1
    # learns of rank 0 by a message first. Fences and frees of one window
    # count together; the two windows' instances are independent.
    def gt(self):
        w, s = win_create("w", W3), win_create("s", [2, 0])
        return {0: [line("MPI_Win_allocate", w), line("MPI_Win_create", s),
                    line("MPI_Send", send("0.0", 1)),
                    line("MPI_Win_fence", fence("w")), line("MPI_Win_fence", fence("s")),
                    line("MPI_Win_free", win_free("s")), line("MPI_Win_free", win_free("w"))],
                1: [line("MPI_Win_allocate", w), line("MPI_Recv", recv("0.0")),
                    line("MPI_Win_fence", fence("w")), line("MPI_Win_free", win_free("w"))],
                2: [line("MPI_Win_allocate", w), line("MPI_Win_create", s),
                    line("MPI_Win_fence", fence("w")), line("MPI_Win_fence", fence("s")),
                    line("MPI_Win_free", win_free("s")), line("MPI_Win_free", win_free("w"))]}

    def test_fence_and_free_are_all_to_all_on_the_window_group(self):
        self.assertEqual(clocks(oracle.evaluate(self.gt())), {
            0: [("MPI_Send", [1, 0, 0]), ("MPI_Win_fence", [2, 2, 1]),
                ("MPI_Win_fence", [3, 2, 2]), ("MPI_Win_free", [4, 2, 3]),
                ("MPI_Win_free", [5, 3, 4])],
            1: [("MPI_Recv", [1, 1, 0]), ("MPI_Win_fence", [2, 2, 1]),
                ("MPI_Win_free", [5, 3, 4])],
            2: [("MPI_Win_fence", [2, 2, 1]), ("MPI_Win_fence", [3, 2, 2]),
                ("MPI_Win_free", [4, 2, 3]), ("MPI_Win_free", [5, 3, 4])]})

    def test_fence_matched_with_free_is_an_oracle_error(self):
        gt = self.gt()
        gt[1][2] = line("MPI_Win_free", win_free("w"))
        with self.assertRaisesRegex(oracle.OracleError, "fence/free #0 on window 'w'"):
            oracle.evaluate(gt)

    def test_member_that_never_created_the_window(self):
        gt = self.gt()
        gt[2] = [gt[2][i] for i in (0, 2, 5)]  # rank 2 never heard of window s
        with self.assertRaisesRegex(oracle.OracleError, r"window s .*\[2\] never created"):
            oracle.evaluate(gt)

    def test_use_after_free(self):
        gt = {0: [line("MPI_Win_allocate", win_create("w", [0])),
                  line("MPI_Win_free", win_free("w")), line("MPI_Win_fence", fence("w"))]}
        with self.assertRaisesRegex(oracle.OracleError, "after freeing"):
            oracle.evaluate(gt)


class PostStartCompleteWait(unittest.TestCase):
    def test_target_with_two_origins(self):
        # Rank 0 exposes to {1, 2} and ends with an unsuccessful then a
        # successful MPI_Win_test; each origin's start merges the post, the
        # wait merges both completes.
        w = win_create("w", W3)
        gt = {0: [line("MPI_Win_allocate", w), line("MPI_Win_post", wpost("w", [1, 2])),
                  line("MPI_Win_test"), line("MPI_Win_test", wwait("w", [1, 2]))],
              1: [line("MPI_Win_allocate", w), line("MPI_Send", send("1.0", 2)),
                  line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0]))],
              2: [line("MPI_Win_allocate", w), line("MPI_Recv", recv("1.0")),
                  line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0]))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Win_post", [1, 0, 0]), ("MPI_Win_test", [2, 3, 3])],
            1: [("MPI_Send", [0, 1, 0]), ("MPI_Win_start", [1, 2, 0]),
                ("MPI_Win_complete", [1, 3, 0])],
            2: [("MPI_Recv", [0, 1, 1]), ("MPI_Win_start", [1, 1, 2]),
                ("MPI_Win_complete", [1, 1, 3])]})

    def test_kth_per_pair_self_and_empty_groups(self):
        # Rank 0 is origin and target at once, including of itself; its
        # second post to rank 1 ({1}) matches rank 1's second non-empty
        # start towards 0, although an epoch with empty groups (not
        # clocked) lies between.
        w = win_create("w", [0, 1])
        gt = {0: [line("MPI_Win_allocate", w),
                  line("MPI_Win_post", wpost("w", [0, 1])),
                  line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0])),
                  line("MPI_Win_wait", wwait("w", [0, 1])),
                  line("MPI_Win_post", wpost("w", [])),
                  line("MPI_Win_wait", wwait("w", [])),
                  line("MPI_Win_post", wpost("w", [1])),
                  line("MPI_Win_wait", wwait("w", [1]))],
              1: [line("MPI_Win_allocate", w),
                  line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0])),
                  line("MPI_Win_start", wstart("w", [])),
                  line("MPI_Win_complete", wcomplete("w", [])),
                  line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0]))]}
        self.assertEqual(clocks(oracle.evaluate(gt)), {
            0: [("MPI_Win_post", [1, 0]), ("MPI_Win_start", [2, 0]),
                ("MPI_Win_complete", [3, 0]), ("MPI_Win_wait", [4, 2]),
                ("MPI_Win_post", [5, 2]), ("MPI_Win_wait", [6, 4])],
            1: [("MPI_Win_start", [1, 1]), ("MPI_Win_complete", [1, 2]),
                ("MPI_Win_start", [5, 3]), ("MPI_Win_complete", [5, 4])]})

    # Rank 2 accesses rank 0, then rank 1. In POST_AHEAD rank 1 posts
    # without waiting for anything, so its post may reach rank 2 inside
    # the first MPI_Win_start, where MPICH hangs; in ORDERED it posts only
    # after a message rank 2 sends once its first start returned.
    POST_AHEAD = {
        0: [line("MPI_Win_allocate", win_create("w", W3)), line("MPI_Win_post", wpost("w", [2])),
            line("MPI_Win_wait", wwait("w", [2]))],
        1: [line("MPI_Win_allocate", win_create("w", W3)), line("MPI_Win_post", wpost("w", [2])),
            line("MPI_Win_wait", wwait("w", [2]))],
        2: [line("MPI_Win_allocate", win_create("w", W3)),
            line("MPI_Win_start", wstart("w", [0])),
            line("MPI_Win_complete", wcomplete("w", [0])),
            line("MPI_Win_start", wstart("w", [1])),
            line("MPI_Win_complete", wcomplete("w", [1]))]}

    def test_post_that_may_overtake_an_earlier_start(self):
        hazards = oracle.start_hazards(oracle.evaluate(self.POST_AHEAD))
        self.assertEqual(len(hazards), 1)
        self.assertIn("rank 1 gt line 2 MPI_Win_post (seq 0) may reach rank 2 inside "
                      "rank 2 gt line 2 MPI_Win_start", hazards[0])

    def test_post_ordered_after_the_earlier_start(self):
        gt = dict(self.POST_AHEAD)
        gt[1] = [gt[1][0], line("MPI_Recv", recv("2.0"))] + gt[1][1:]
        gt[2] = gt[2][:2] + [line("MPI_Send", send("2.0", 1))] + gt[2][2:]
        self.assertEqual(oracle.start_hazards(oracle.evaluate(gt)), [])

    def test_unmatched_start_is_an_oracle_error(self):
        w = win_create("w", [0, 1])
        gt = {0: [line("MPI_Win_allocate", w)],
              1: [line("MPI_Win_allocate", w), line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [0]))]}
        with self.assertRaisesRegex(oracle.OracleError, "missing match: window w: rank 0 "
                                                        "posted to rank 1 0 time"):
            oracle.evaluate(gt)

    def test_complete_group_must_repeat_the_start_group(self):
        w = win_create("w", [0, 1])
        gt = {0: [line("MPI_Win_allocate", w), line("MPI_Win_start", wstart("w", [0])),
                  line("MPI_Win_complete", wcomplete("w", [1]))], 1: []}
        with self.assertRaisesRegex(oracle.OracleError, "differs from the start group"):
            oracle.evaluate(gt)


class Locks(unittest.TestCase):
    # The lock of rank 0, as held: shared by 1 (count 0), exclusive by 2
    # (count 0), shared by 0 and by 1 side by side (count 1), exclusive by
    # 2 (count 1), shared by 0 (count 2). Program order at each rank agrees.
    W = win_create("w", W3)

    def gt(self):
        def epoch(typ, count):
            return [line("MPI_Win_lock", lock("w", 0, typ, count)),
                    line("MPI_Win_unlock", unlock("w", 0))]
        return {0: [line("MPI_Win_allocate", self.W)] + epoch("shared", 1) + epoch("shared", 2),
                1: [line("MPI_Win_allocate", self.W)] + epoch("shared", 0) + epoch("shared", 1),
                2: [line("MPI_Win_allocate", self.W)] + epoch("exclusive", 0)
                + epoch("exclusive", 1)}

    def test_shared_epochs_interleaving_exclusive_ones(self):
        # 2's first exclusive lock merges 1's first release; the shared
        # ones of count 1 merge that exclusive release only; 2's second
        # exclusive lock merges its own release and both shared count-1
        # releases, not 1's count-0 one directly (it comes transitively).
        self.assertEqual(clocks(oracle.evaluate(self.gt())), {
            0: [("MPI_Win_lock", [1, 2, 2]), ("MPI_Win_unlock", [2, 2, 2]),
                ("MPI_Win_lock", [3, 4, 4]), ("MPI_Win_unlock", [4, 4, 4])],
            1: [("MPI_Win_lock", [0, 1, 0]), ("MPI_Win_unlock", [0, 2, 0]),
                ("MPI_Win_lock", [0, 3, 2]), ("MPI_Win_unlock", [0, 4, 2])],
            2: [("MPI_Win_lock", [0, 2, 1]), ("MPI_Win_unlock", [0, 2, 2]),
                ("MPI_Win_lock", [2, 4, 3]), ("MPI_Win_unlock", [2, 4, 4])]})

    def test_merges_are_the_previous_exclusive_and_shared_since(self):
        res = oracle.evaluate(self.gt())
        x1 = next(e for e in res.rma.locks[("w", 0)] if e.exclusive and e.count == 1)
        self.assertEqual(sorted((m.origin, m.exclusive, m.count) for m in x1.merges),
                         [(0, False, 1), (1, False, 1), (2, True, 0)])

    def test_exclusive_counts_must_be_a_permutation(self):
        gt = self.gt()
        gt[2][3] = line("MPI_Win_lock", lock("w", 0, "exclusive", 0))
        with self.assertRaisesRegex(oracle.OracleError, r"read counts \[0, 0\]"):
            oracle.evaluate(gt)
        gt = self.gt()
        gt[0][3] = line("MPI_Win_lock", lock("w", 0, "shared", 3))
        with self.assertRaisesRegex(oracle.OracleError, "only 2 exclusive"):
            oracle.evaluate(gt)

    def test_counts_against_program_order_are_a_cycle(self):
        gt = self.gt()
        gt[2][1] = line("MPI_Win_lock", lock("w", 0, "exclusive", 1))
        gt[2][3] = line("MPI_Win_lock", lock("w", 0, "exclusive", 0))
        with self.assertRaisesRegex(oracle.OracleError, "cycle"):
            oracle.evaluate(gt)

    def test_lock_all(self):
        # Lock of 1: rank 1's lock_all (shared, count 0), rank 0's
        # exclusive (count 0), rank 0's lock_all (shared, count 1). Lock of
        # 0: both lock_alls (shared, count 0), then rank 1's exclusive.
        w = win_create("w", [0, 1])
        gt = {0: [line("MPI_Win_allocate", w),
                  line("MPI_Win_lock", lock("w", 1, "exclusive", 0)),
                  line("MPI_Win_unlock", unlock("w", 1)),
                  line("MPI_Win_lock_all", lock_all("w", [0, 1])),
                  line("MPI_Win_unlock_all", unlock_all("w"))],
              1: [line("MPI_Win_allocate", w),
                  line("MPI_Win_lock_all", lock_all("w", [0, 0])),
                  line("MPI_Win_unlock_all", unlock_all("w")),
                  line("MPI_Win_lock", lock("w", 0, "exclusive", 0)),
                  line("MPI_Win_unlock", unlock("w", 0))]}
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {
            0: [("MPI_Win_lock", [1, 2]), ("MPI_Win_unlock", [2, 2]),
                ("MPI_Win_lock_all", [3, 2]), ("MPI_Win_unlock_all", [4, 2])],
            1: [("MPI_Win_lock_all", [0, 1]), ("MPI_Win_unlock_all", [0, 2]),
                ("MPI_Win_lock", [4, 3]), ("MPI_Win_unlock", [4, 4])]})
        self.assertEqual(res.warnings, [])

    def test_epoch_never_released_is_reported(self):
        gt = {0: [line("MPI_Win_allocate", win_create("w", [0])),
                  line("MPI_Win_lock", lock("w", 0, "shared", 0))]}
        res = oracle.evaluate(gt)
        self.assertTrue(any("never released" in w for w in res.warnings))


class Annotations(unittest.TestCase):
    """User annotations (vcx/annotate.h)."""

    TICK = {"op": "annot_tick"}

    @staticmethod
    def sig(dest, queue):
        return {"op": "annot_signal", "dest": dest, "queue": queue}

    @staticmethod
    def wait(origin, queue):
        return {"op": "annot_wait", "origin": origin, "queue": queue}

    @staticmethod
    def deposit(res, dep, ordinal):
        return {"op": "annot_deposit", "resource": res, "deposition": dep, "ordinal": ordinal}

    @staticmethod
    def fetch(res, dep, seen):
        return {"op": "annot_fetch", "resource": res, "deposition": dep, "seen": seen}

    def test_tick_and_fifo_queue(self):
        # Rank 0 signals twice on "q" with a tick between; rank 1's waits
        # take them in order. A signal on another queue stays apart.
        gt = {0: [line("t", self.TICK),
                  line("s", self.sig(1, "q")),
                  line("t", self.TICK),
                  line("s", self.sig(1, "q")),
                  line("s", self.sig(1, "other"))],
              1: [line("w", self.wait(0, "other")),
                  line("w", self.wait(0, "q")),
                  line("w", self.wait(0, "q"))]}
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {
            0: [("t", [1, 0]), ("s", [2, 0]), ("t", [3, 0]), ("s", [4, 0]), ("s", [5, 0])],
            1: [("w", [5, 1]), ("w", [5, 2]), ("w", [5, 3])]})
        self.assertEqual(res.warnings, [])

    def test_resource_fetch_merges_deposits_below_seen(self):
        # Ranks 0 and 1 deposit on "r" at rank 2; rank 2 fetches after the
        # first only, then after both; a deposit merges nothing.
        gt = {0: [line("t", self.TICK), line("d", self.deposit("r", 2, 0))],
              1: [line("d", self.deposit("r", 2, 1))],
              2: [line("f", self.fetch("r", 2, 1)), line("f", self.fetch("r", 2, 2)),
                  line("f", self.fetch("none", 2, 0))]}
        res = oracle.evaluate(gt)
        self.assertEqual(clocks(res), {
            0: [("t", [1, 0, 0]), ("d", [2, 0, 0])],
            1: [("d", [0, 1, 0])],
            2: [("f", [2, 0, 1]), ("f", [2, 1, 2]), ("f", [2, 1, 3])]})

    def test_wait_without_signal_is_a_missing_match(self):
        gt = {0: [line("w", self.wait(1, "q"))], 1: []}
        with self.assertRaisesRegex(oracle.OracleError, "missing match"):
            oracle.evaluate(gt)

    def test_fetch_of_more_deposits_than_exist(self):
        gt = {0: [line("d", self.deposit("r", 0, 0)), line("f", self.fetch("r", 0, 2))]}
        with self.assertRaisesRegex(oracle.OracleError, "only 1 exist"):
            oracle.evaluate(gt)

    def test_deposit_ordinals_must_be_dense(self):
        gt = {0: [line("d", self.deposit("r", 0, 1))]}
        with self.assertRaisesRegex(oracle.OracleError, "ordinals"):
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

    def test_self_check_rejects_posts_that_may_overtake_a_start(self):
        self.write_gt(PostStartCompleteWait.POST_AHEAD)
        code, _, err = self.run_oracle(self.gt, None, None, True)
        self.assertEqual(code, oracle.EXIT_ORACLE_ERROR)
        self.assertIn("where MPICH waits forever", err)

    def test_self_check_rejects_incomplete_logs(self):
        self.write_gt({0: [line("MPI_Send", send("0.0", 1))], 1: []})
        code, _, err = self.run_oracle(self.gt, None, None, True)
        self.assertEqual(code, oracle.EXIT_ORACLE_ERROR)
        self.assertIn("never received", err)



def slock(name, count):
    return {"op": "shmem_lock", "lock": name, "count": count}


def sunlock(name):
    return {"op": "shmem_unlock", "lock": name}


class ShmemLocks(unittest.TestCase):
    # PE 2 acquires first (count 0), then PE 0 (1), then PE 1 (2) with a
    # shmem_test_lock; lock "b" is taken by PE 1 alone, and a failed test
    # (no ops) is not clocked.
    GT = {
        0: [line("shmem_set_lock", slock("a", 1)),
            line("shmem_clear_lock", sunlock("a"))],
        1: [line("shmem_test_lock"),
            line("shmem_set_lock", slock("b", 0)),
            line("shmem_clear_lock", sunlock("b")),
            line("shmem_test_lock", slock("a", 2)),
            line("shmem_clear_lock", sunlock("a"))],
        2: [line("shmem_set_lock", slock("a", 0)),
            line("shmem_clear_lock", sunlock("a"))],
    }
    EXPECTED = {
        # PE 0's acquisition merges PE 2's release [0,0,2].
        0: [("shmem_set_lock", [1, 0, 2]), ("shmem_clear_lock", [2, 0, 2])],
        1: [("shmem_set_lock", [0, 1, 0]), ("shmem_clear_lock", [0, 2, 0]),
            ("shmem_test_lock", [2, 3, 2]), ("shmem_clear_lock", [2, 4, 2])],
        2: [("shmem_set_lock", [0, 0, 1]), ("shmem_clear_lock", [0, 0, 2])],
    }

    def test_clocks(self):
        self.assertEqual(clocks(oracle.evaluate(self.GT)), self.EXPECTED)

    def test_counts_must_be_consecutive(self):
        gt = {0: [line("shmem_set_lock", slock("a", 1)), line("shmem_clear_lock", sunlock("a"))],
              1: []}
        with self.assertRaisesRegex(oracle.OracleError, "acquisition counts"):
            oracle.evaluate(gt)

    def test_release_without_acquisition(self):
        with self.assertRaisesRegex(oracle.OracleError, "does not hold"):
            oracle.evaluate({0: [line("shmem_clear_lock", sunlock("a"))]})

    def test_acquisition_after_an_unreleased_one(self):
        gt = {0: [line("shmem_set_lock", slock("a", 0))],
              1: [line("shmem_set_lock", slock("a", 1)), line("shmem_clear_lock", sunlock("a"))]}
        with self.assertRaisesRegex(oracle.OracleError, "never released"):
            oracle.evaluate(gt)


def fwrite(flag, pe, mode, value, order):
    return {"op": "flag_write", "flag": flag, "pe": pe, "mode": mode, "value": value,
            "order": order}


def fwait(flag, value, order):
    return {"op": "flag_wait", "flag": flag, "value": value, "order": order}


class ShmemFlags(unittest.TestCase):
    # PE 1 stores 1 and then 2 into flag "f" at PE 0, each after a clocked
    # call; PE 0 waits for 2, then a test fails (no ops), then a test reads 1
    # again (order 3: PE 2 stored it after PE 0's first wait). Counter "c"
    # at PE 0: PE 1 and PE 2 step it up to 1 and 2; a failed
    # compare-and-swap wrote nothing.
    GT = {
        0: [line("shmem_int_wait_until", fwait("f", 2, 2)),
            line("shmem_int_test"),
            line("shmem_int_test", fwait("f", 1, 3)),
            line("shmem_long_wait_until", fwait("c", 1, 1)),
            line("shmem_long_wait_until", fwait("c", 2, 2))],
        1: [line("vcx_annotate_shmem_tick", {"op": "annot_tick"}),
            line("shmem_int_p", fwrite("f", 0, "store", 1, 1)),
            line("vcx_annotate_shmem_tick", {"op": "annot_tick"}),
            line("shmem_int_p", fwrite("f", 0, "store", 2, 2)),
            line("shmem_long_atomic_fetch_inc", fwrite("c", 0, "up", 2, 2)),
            line("shmem_long_atomic_compare_swap", fwrite("c", 0, "none", 9, 0))],
        2: [line("vcx_annotate_shmem_tick", {"op": "annot_tick"}),
            line("shmem_long_atomic_fetch_inc", fwrite("c", 0, "up", 1, 1)),
            line("shmem_int_p", fwrite("f", 0, "store", 1, 3))],
    }

    def test_clocks(self):
        got = clocks(oracle.evaluate(self.GT))
        self.assertEqual(got[0], [
            # The store of 2 only (PE 1 after its second tick).
            ("shmem_int_wait_until", [1, 2, 0]),
            # PE 1's store of 1 (order 1) and PE 2's (order 3): both before.
            ("shmem_int_test", [2, 2, 1]),
            # Counter steps up to 1: PE 2's only; then both.
            ("shmem_long_wait_until", [3, 2, 1]),
            ("shmem_long_wait_until", [4, 2, 1])])
        self.assertEqual(got[1], [("vcx_annotate_shmem_tick", [0, 1, 0]),
                                  ("vcx_annotate_shmem_tick", [0, 2, 0])])

    def test_write_before_any_clocked_call_deposits_zeros(self):
        gt = {0: [line("shmem_int_wait_until", fwait("f", 1, 1))],
              1: [line("shmem_int_p", fwrite("f", 0, "store", 1, 1))]}
        self.assertEqual(clocks(oracle.evaluate(gt))[0], [("shmem_int_wait_until", [1, 0])])

    def test_orders_must_be_unique(self):
        gt = {0: [line("shmem_int_wait_until", fwait("f", 1, 1))],
              1: [line("shmem_int_p", fwrite("f", 0, "store", 1, 1)),
                  line("shmem_int_p", fwrite("f", 0, "store", 1, 1))]}
        with self.assertRaisesRegex(oracle.OracleError, "order 1 logged twice"):
            oracle.evaluate(gt)

    def test_bad_fields(self):
        with self.assertRaisesRegex(oracle.OracleError, "mode"):
            oracle.evaluate({0: [line("shmem_int_p", fwrite("f", 0, "add", 1, 1))]})
        with self.assertRaisesRegex(oracle.OracleError, "pe"):
            oracle.evaluate({0: [line("shmem_int_p", fwrite("f", 3, "store", 1, 1))]})


if __name__ == "__main__":
    unittest.main()
