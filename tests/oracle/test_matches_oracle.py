#!/usr/bin/env python3
"""Hand-worked cases for the wildcard-receive matches oracle (matches_oracle.py)."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

# Keep the source tree free of __pycache__.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matches_oracle as mo  # noqa: E402
import oracle  # noqa: E402
from test_oracle import (cancel, coll, complete, free, imrecv, line, mprobe,  # noqa: E402
                         mrecv, post, recv, send)

W = "world"


def snd(msg, dest, tag=0, comm=W, req=None, mode="std"):
    """A send op with its matching fields."""
    return send(msg, dest, mode=mode, req=req, match=(comm, tag))


def rcv(msg, src="any", tag=0, comm=W):
    """A blocking receive op with its matching fields."""
    return recv(msg, match=(comm, src, tag))


def irecv(req, src="any", tag=0, comm=W):
    return post(req, match=(comm, src, tag))


def alts(expected):
    """(rank, index) -> (matched source, alternative sources)."""
    return {k: (v["matched_source"], v["alternative_sources"]) for k, v in expected.items()}


def finding(rank, index, matched, alternatives, **receive):
    return {"analysis": "matches", "kind": "wildcard-receive",
            "receive": dict(receive, rank=rank, index=index),
            "matched_source": matched, "alternative_sources": alternatives}


# DAMPI's paper, Fig. 2: rank 0 receives twice from MPI_ANY_SOURCE; rank 1 sends
# to 0, then to 2; rank 2 receives from 1, then sends to 0.
FIG2 = {
    0: [line("MPI_Recv", rcv("1.0")),
        line("MPI_Recv", rcv("2.0"))],
    1: [line("MPI_Send", snd("1.0", 0)),
        line("MPI_Send", snd("1.1", 2))],
    2: [line("MPI_Recv", rcv("1.1", src=1)),
        line("MPI_Send", snd("2.0", 0))],
}

BARRIER3 = coll("all_to_all", W, [0, 1, 2])

# DAMPI's paper, Fig. 1, the crooked barrier: rank 1's Irecv(ANY) is posted
# before the barrier and waited for after it; rank 2 sends after the barrier.
CROOKED = {
    0: [line("MPI_Isend", snd("0.0", 1, req="s")),
        line("MPI_Barrier", BARRIER3),
        line("MPI_Wait", complete("s"))],
    1: [line("MPI_Irecv", irecv("r")),
        line("MPI_Barrier", BARRIER3),
        line("MPI_Wait", complete("r", "0.0")),
        line("MPI_Recv", rcv("2.0", src=2))],
    2: [line("MPI_Barrier", BARRIER3),
        line("MPI_Isend", snd("2.0", 1, req="s")),
        line("MPI_Wait", complete("s"))],
}


class PaperFigures(unittest.TestCase):
    def test_fig2(self):
        # Rank 0's clocks: first Recv [1,1,0], so k = 1 for index 0. Rank
        # 2's send [0,2,2] knows nothing of rank 0 (entry 0 < 1): rank 2 is
        # an alternative for index 0. Index 1 (matched rank 2): rank 1's
        # only message to 0 went to index 0, which completed before index 1
        # was posted (Before), so rank 1 has no message left.
        got = mo.compute(FIG2)
        self.assertEqual(alts(got), {(0, 0): (1, [2]), (0, 1): (2, [])})
        self.assertEqual(got[(0, 0)]["call"], "MPI_Recv")
        self.assertEqual(got[(0, 0)]["completed_by"], (0, 0))
        self.assertEqual(got[(0, 1)]["completed_by"], (0, 1))

    def test_crooked_barrier(self):
        # The Irecv's match is known only to precede its Wait, rank 1's
        # second clocked call (k = 2: the Barrier is the first). Rank 2's
        # Isend comes after the barrier, tick [2,1,2]: entry 1 is 1 < 2, it
        # does not know the Wait, so it is an alternative, although the
        # barrier orders the Irecv's posting before the Isend.
        res = oracle.evaluate(CROOKED)
        self.assertEqual(res.calls[2][1].tick, [2, 1, 2])
        self.assertEqual(res.calls[1][2].clock[1], 2)
        got = mo.expected_matches(res)
        self.assertEqual(alts(got), {(1, 0): (0, [2])})
        self.assertEqual(got[(1, 0)]["call"], "MPI_Irecv")
        self.assertEqual(got[(1, 0)]["completed_by"], (1, 2))


class Causality(unittest.TestCase):
    def test_only_other_candidate_is_causally_after(self):
        # Rank 1: Recv(ANY) gets 0.0 (clock [1,1,0], k = 1), Send to 2, then
        # Recv(ANY) gets 2.0. Rank 2's send follows its receive of rank 1's
        # send (tick [1,2,2]): entry 1 is 2 >= 1, it knows the first Recv's
        # match, so it is no alternative for index 0. Index 1 (matched rank
        # 2): rank 0's only message was taken by index 0, in Before.
        gt = {0: [line("MPI_Send", snd("0.0", 1))],
              1: [line("MPI_Recv", rcv("0.0")),
                  line("MPI_Send", snd("1.0", 2)),
                  line("MPI_Recv", rcv("2.0"))],
              2: [line("MPI_Recv", rcv("1.0", src=1)),
                  line("MPI_Send", snd("2.0", 1))]}
        res = oracle.evaluate(gt)
        self.assertEqual(res.calls[2][1].tick, [1, 2, 2])
        self.assertEqual(alts(mo.expected_matches(res)), {(1, 0): (0, []), (1, 1): (2, [])})

    def test_sendrecv_own_send_does_not_know_its_receive(self):
        # Rank 0's Sendrecv sends 0.0 to rank 1 and receives 2.0 from ANY
        # (clock [1,0,1], k = 1 + 1: it also sends). Rank 1 receives 0.0 and
        # then sends 1.0 (tick [1,2,0]): entry 0 is 1, it knows the
        # Sendrecv's send, not its receive's match, so rank 1 is an
        # alternative of index 0. Index 1 then takes 1.0.
        gt = {0: [line("MPI_Sendrecv", snd("0.0", 1, tag=1), rcv("2.0")),
                  line("MPI_Recv", rcv("1.0"))],
              1: [line("MPI_Recv", rcv("0.0", src=0, tag=1)),
                  line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0))]}
        res = oracle.evaluate(gt)
        self.assertEqual(res.calls[1][1].tick, [1, 2, 0])
        self.assertEqual(alts(mo.expected_matches(res)), {(0, 0): (2, [1]), (0, 1): (1, [])})


class Matching(unittest.TestCase):
    def tags(self, wanted):
        """Rank 0: Recv(ANY, tag `wanted`) gets 1.0 (tag 5), then Recv(src 2,
        tag 7) gets rank 2's 2.0 (tag 7), sent concurrently."""
        return {0: [line("MPI_Recv", rcv("1.0", tag=wanted)),
                    line("MPI_Recv", rcv("2.0", src=2, tag=7))],
                1: [line("MPI_Send", snd("1.0", 0, tag=5))],
                2: [line("MPI_Send", snd("2.0", 0, tag=7))]}

    def test_tags(self):
        # Tag 5 wanted: 2.0 (tag 7) could never match, no candidate.
        self.assertEqual(alts(mo.compute(self.tags(5))), {(0, 0): (1, [])})
        # MPI_ANY_TAG: 2.0 is a candidate; its send (tick [0,0,1]) knows
        # nothing of rank 0 (k = 1), so rank 2 is an alternative.
        self.assertEqual(alts(mo.compute(self.tags("any"))), {(0, 0): (1, [2])})

    def test_other_communicator(self):
        # Rank 2 sends on "sub" (same tag): not a candidate for a receive on
        # "world"; rank 3's concurrent send on "world" is.
        gt = {0: [line("MPI_Recv", rcv("1.0")),
                  line("MPI_Recv", rcv("2.0", src=2, comm="sub")),
                  line("MPI_Recv", rcv("3.0", src=3))],
              1: [line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0, comm="sub"))],
              3: [line("MPI_Send", snd("3.0", 0))]}
        self.assertEqual(alts(mo.compute(gt)), {(0, 0): (1, [3])})

    def test_first_message_not_received_before(self):
        # Rank 2 sends 2.0 then 2.1 to rank 0. 2.0 went to rank 0's first
        # Recv (src 2, not a wildcard: index 0 is the second Recv), completed
        # before R was posted: m_2 is 2.1, concurrent (tick [0,0,2], k = 2),
        # so rank 2 is an alternative.
        gt = {0: [line("MPI_Recv", rcv("2.0", src=2)),
                  line("MPI_Recv", rcv("1.0")),
                  line("MPI_Recv", rcv("2.1", src=2))],
              1: [line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0)),
                  line("MPI_Send", snd("2.1", 0))]}
        got = mo.compute(gt)
        self.assertEqual(alts(got), {(0, 0): (1, [2])})
        self.assertEqual(got[(0, 0)]["completed_by"], (0, 1))
        # With 2.1 sent with a tag R cannot match, rank 2 has no candidate:
        # 2.0 is taken, 2.1 does not match.
        gt[2][1] = line("MPI_Send", snd("2.1", 0, tag=3))
        gt[0][2] = line("MPI_Recv", rcv("2.1", src=2, tag=3))
        self.assertEqual(alts(mo.compute(gt)), {(0, 0): (1, [])})

    def test_first_matching_message(self):
        # The first message of s that R could match: rank 2's 2.0 has tag 3,
        # which R (tag 0) cannot match, so m_2 is 2.1 (tag 0), concurrent
        # with R (tick [0,0,2], k = 1): an alternative.
        gt = {0: [line("MPI_Recv", rcv("1.0")),
                  line("MPI_Recv", rcv("2.0", src=2, tag=3)),
                  line("MPI_Recv", rcv("2.1", src=2))],
              1: [line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0, tag=3)),
                  line("MPI_Send", snd("2.1", 0))]}
        self.assertEqual(alts(mo.compute(gt)), {(0, 0): (1, [2])})


class Requests(unittest.TestCase):
    def test_irecv_fan_in_completed_by_waitall(self):
        # Rank 1 posts a and b (both ANY) and completes them in one Waitall
        # (clock [1,1,1]): a got 0.0, b got 2.0.
        # Index 0 (a): Before(a) is empty; 2.0 went to b, not in it, so m_2
        # = 2.0. a is pending at b's posting and could take 2.0: a in E(b),
        # b's completing call is the same Waitall, k = 1. Rank 2's send
        # [0,0,1] has entry 1 = 0 < 1: an alternative.
        # Index 1 (b): Before(b) = E(b) = {a}, which took 0.0: rank 0 has no
        # message left, no alternative.
        gt = {0: [line("MPI_Send", snd("0.0", 1))],
              1: [line("MPI_Irecv", irecv("a")),
                  line("MPI_Irecv", irecv("b")),
                  line("MPI_Waitall", complete("a", "0.0"), complete("b", "2.0"))],
              2: [line("MPI_Send", snd("2.0", 1))]}
        got = mo.compute(gt)
        self.assertEqual(alts(got), {(1, 0): (0, [2]), (1, 1): (2, [])})
        self.assertEqual(got[(1, 0)]["completed_by"], (1, 2))
        self.assertEqual(got[(1, 1)]["completed_by"], (1, 2))

    def test_non_overtaking_chain(self):
        # Rank 0: a = Irecv(ANY, tag 9) (index 0); Recv(ANY, any tag) = R
        # (index 1) gets 1.0 (tag 9) while a is pending, so a in E(R): a
        # matched first (it got 2.0). Then rank 0 sends 0.0 to rank 3 (tick
        # [2,..]), waits for a (clock [3,..]) and receives 3.0, 2.1.
        # Index 0 (a): k(a) = min(Wait [3], R's Recv [1]) = 1, since a in
        # E(R). 1.0 (taken by R, not in Before(a)) is concurrent: alternative.
        # 3.0 follows rank 3's receive of 0.0, entry 0 = 2 >= 1: none
        # (the Wait alone would give k = 3 and wrongly admit it).
        # Index 1 (R): Before(R) = {a}, which took 2.0, so m_2 = 2.1, entry 0
        # = 0 < k(R) = 1: alternative. 3.0: entry 2 >= 1: none.
        gt = {0: [line("MPI_Irecv", irecv("a", tag=9)),
                  line("MPI_Recv", rcv("1.0", tag="any")),
                  line("MPI_Send", snd("0.0", 3)),
                  line("MPI_Wait", complete("a", "2.0")),
                  line("MPI_Recv", rcv("3.0", src=3, tag=9)),
                  line("MPI_Recv", rcv("2.1", src=2, tag=9))],
              1: [line("MPI_Send", snd("1.0", 0, tag=9))],
              2: [line("MPI_Send", snd("2.0", 0, tag=9)),
                  line("MPI_Send", snd("2.1", 0, tag=9))],
              3: [line("MPI_Recv", rcv("0.0", src=0)),
                  line("MPI_Send", snd("3.0", 0, tag=9))]}
        res = oracle.evaluate(gt)
        self.assertEqual(res.calls[3][1].tick[0], 2)
        self.assertEqual(res.calls[0][3].clock[0], 3)
        got = mo.expected_matches(res)
        self.assertEqual(alts(got), {(0, 0): (2, [1]), (0, 1): (1, [2])})
        self.assertEqual(got[(0, 0)]["completed_by"], (0, 3))

    def test_cancelled_and_never_completed_keep_their_index(self):
        # Rank 0: Irecv(ANY) a cancelled (index 0), Irecv(ANY) b freed
        # (index 1), then Recv(ANY) gets 1.0 (index 2, k = 1; rank 2's 2.0
        # is concurrent). Only index 2 has a result.
        gt = {0: [line("MPI_Irecv", irecv("a")),
                  line("MPI_Cancel", cancel("a")),
                  line("MPI_Wait", complete("a", cancelled=True)),
                  line("MPI_Irecv", irecv("b", tag=4)),
                  line("MPI_Request_free", free("b")),
                  line("MPI_Recv", rcv("1.0")),
                  line("MPI_Recv", rcv("2.0", src=2))],
              1: [line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0))]}
        self.assertEqual(alts(mo.compute(gt)), {(0, 2): (1, [2])})

    def test_matched_probe_and_imrecv(self):
        # Rank 1: Mprobe(ANY) h (index 0) gets 0.0 via Mrecv; Improbe(ANY) g
        # (index 1) gets 2.0 via Imrecv + Wait. Index 0: k = Mrecv [1],
        # 2.0 concurrent: alternative 2. Index 1: 0.0 was taken before g's
        # posting: no alternative.
        gt = {0: [line("MPI_Send", snd("0.0", 1))],
              1: [line("MPI_Mprobe", mprobe("h", match=(W, "any", 0))),
                  line("MPI_Mrecv", mrecv("h", "0.0")),
                  line("MPI_Improbe", mprobe("g", match=(W, "any", 0))),
                  line("MPI_Imrecv", imrecv("g", "q")),
                  line("MPI_Wait", complete("q", "2.0"))],
              2: [line("MPI_Send", snd("2.0", 1))]}
        got = mo.compute(gt)
        self.assertEqual(alts(got), {(1, 0): (0, [2]), (1, 1): (2, [])})
        self.assertEqual(got[(1, 0)]["call"], "MPI_Mprobe")
        self.assertEqual(got[(1, 1)]["completed_by"], (1, 4))

    def test_message_to_self(self):
        # Rank 0 sends to itself, then Recv(ANY) gets 1.0 and Recv(src 0)
        # its own 0.0. The self-send's tick [1,0] has entry 0 = 1 and k =
        # the Recv's [2,1] entry 0 = 2: 1 < 2, rank 0 itself is an alternative.
        gt = {0: [line("MPI_Send", snd("0.0", 0)),
                  line("MPI_Recv", rcv("1.0")),
                  line("MPI_Recv", rcv("0.0", src=0))],
              1: [line("MPI_Send", snd("1.0", 0))]}
        self.assertEqual(alts(mo.compute(gt)), {(0, 0): (1, [0])})


class SyncSends(unittest.TestCase):
    """A synchronous send completes only once a receive matched its message:
    later events of its sender follow that match (step 4, K(R))."""

    @staticmethod
    def four_ranks(a_msg, b_msg, send1=None):
        """Rank 0: Irecv(ANY) a [0], Irecv(ANY) b [1], Waitall, Recv(ANY)
        [2] gets c. Rank 1: sends m to 0 (by default MPI_Issend + MPI_Wait),
        then u to rank 2 (tag 1). Rank 2: Recv(1, tag 1) u, Send c to 0.
        Rank 3: Send e to 0. a and b get a_msg and b_msg (m and e)."""
        return {0: [line("MPI_Irecv", irecv("a")),
                    line("MPI_Irecv", irecv("b")),
                    line("MPI_Waitall", complete("a", a_msg), complete("b", b_msg)),
                    line("MPI_Recv", rcv("c"))],
                1: [send1 or line("MPI_Issend", snd("m", 0, req="s", mode="sync")),
                    line("MPI_Wait", complete("s")),
                    line("MPI_Send", snd("u", 2, tag=1))],
                2: [line("MPI_Recv", rcv("u", src=1, tag=1)),
                    line("MPI_Send", snd("c", 0))],
                3: [line("MPI_Send", snd("e", 0))]}

    def test_issend_taken_by_the_later_receive(self):
        # a got e, b got m. Rank 0's Waitall [1,1,0,1] gives k = 1 for a and
        # b. m's answer (b posted before any clocked call: zeros, plus e's
        # sender for a in E(b)) makes rank 1's Wait [0,2,0,1]: K(b) = {(0, 1),
        # (1, 2)}, and K(a) too, since a in E(b). c follows the Wait (tick
        # [0,3,2,1], entry 1 = 3 >= 2): an alternative of neither, although
        # it knows nothing of rank 0 (entry 0 = 0 < 1). m itself (tick
        # [0,1,0,0]) stays an alternative of a.
        res = oracle.evaluate(self.four_ranks("e", "m"))
        self.assertEqual(res.calls[0][2].clock, [1, 1, 0, 1])
        self.assertEqual(res.calls[1][1].clock, [0, 2, 0, 1])
        self.assertEqual(res.calls[2][1].tick, [0, 3, 2, 1])
        self.assertEqual(alts(mo.expected_matches(res)),
                         {(0, 0): (3, [1]), (0, 1): (1, []), (0, 2): (2, [])})

    def test_issend_taken_by_the_earlier_receive(self):
        # a got m, b got e. K(a) = {(0, 1), (1, 2)} (rank 1's Wait [0,2,0,0]):
        # c (tick [0,3,2,0]) is no alternative of a, e (tick [0,0,0,1]) is.
        # b's message is not synchronous and a is not after b: K(b) = {(0,
        # 1)}, c only knows that a matched, so it is an alternative of b.
        res = oracle.evaluate(self.four_ranks("m", "e"))
        self.assertEqual(res.calls[1][1].clock, [0, 2, 0, 0])
        self.assertEqual(res.calls[2][1].tick, [0, 3, 2, 0])
        self.assertEqual(alts(mo.expected_matches(res)),
                         {(0, 0): (1, [3]), (0, 1): (3, [2]), (0, 2): (2, [])})

    def test_blocking_ssend(self):
        # The MPI_Ssend completes in its own call [0,1,0,1]: its message m
        # carries entry 1 = 1 but is sent before b matched it, so t = 1 + 1 =
        # 2. m stays an alternative of a; c (tick [0,2,2,1]) is none.
        gt = self.four_ranks("e", "m")
        gt[1] = [line("MPI_Ssend", snd("m", 0, mode="sync")),
                 line("MPI_Send", snd("u", 2, tag=1))]
        res = oracle.evaluate(gt)
        self.assertEqual(res.calls[1][0].clock, [0, 1, 0, 1])
        self.assertEqual(res.calls[1][0].tick[1], 1)
        self.assertEqual(res.calls[2][1].tick, [0, 2, 2, 1])
        self.assertEqual(alts(mo.expected_matches(res)),
                         {(0, 0): (3, [1]), (0, 1): (1, []), (0, 2): (2, [])})

    def test_standard_send_tells_nothing(self):
        # MPI_Isend in standard mode: its Wait returns whether or not b
        # matched m, so only rank 0's entry decides (k = 1) and c (entry 0 =
        # 0) is an alternative of a and b.
        gt = self.four_ranks("e", "m", send1=line("MPI_Isend", snd("m", 0, req="s")))
        self.assertEqual(alts(mo.compute(gt)),
                         {(0, 0): (3, [1, 2]), (0, 1): (1, [2]), (0, 2): (2, [])})


class MissingFields(unittest.TestCase):
    def test_send_without_fields(self):
        gt = {k: list(v) for k, v in FIG2.items()}
        gt[2] = [gt[2][0], line("MPI_Send", send("2.0", 0))]
        with self.assertRaisesRegex(mo.MatchesOracleError,
                                    r"rank 2 gt line 2 MPI_Send \(seq 1\) \(send of message "
                                    r"2.0\) logs none"):
            mo.compute(gt)
        # Also an oracle.OracleError.
        with self.assertRaises(oracle.OracleError):
            mo.compute(gt)

    def test_candidate_receive_without_fields(self):
        # R is posted while a (no matching fields) is pending: whether a is
        # in E(R) is unknown.
        gt = {0: [line("MPI_Irecv", post("a")),
                  line("MPI_Recv", rcv("1.0")),
                  line("MPI_Wait", complete("a", "2.0"))],
              1: [line("MPI_Send", snd("1.0", 0))],
              2: [line("MPI_Send", snd("2.0", 0))]}
        with self.assertRaisesRegex(mo.MatchesOracleError,
                                    r"receive request a posted at rank 0 gt line 1 MPI_Irecv "
                                    r"logs no comm/src/tag"):
            mo.compute(gt)

    def test_wildcard_without_comm_and_tag(self):
        gt = {0: [line("MPI_Recv", {"op": "recv", "msg": "1.0", "src": "any"})],
              1: [line("MPI_Send", snd("1.0", 0))]}
        with self.assertRaises(oracle.OracleError):
            mo.compute(gt)


class Compare(unittest.TestCase):
    def setUp(self):
        self.expected = mo.compute(FIG2)  # (0,0): 1 -> [2]; (0,1): 2 -> []

    def test_agreement(self):
        findings = [finding(0, 0, 1, [2], call="MPI_Recv"),
                    {"analysis": "race", "kind": "wildcard-receive",
                     "receive": {"rank": 0, "index": 1}}]
        self.assertEqual(mo.compare(self.expected, findings), [])

    def test_missing_finding(self):
        diffs = mo.compare(self.expected, [])
        self.assertEqual(len(diffs), 1)
        self.assertIn("missing finding: wildcard receive #0 of rank 0", diffs[0])
        self.assertIn("[2]", diffs[0])

    def test_extra_findings(self):
        # Index 1 has no alternative; rank 0 has no index 2; rank 1 none.
        diffs = mo.compare(self.expected, [finding(0, 0, 1, [2]), finding(0, 1, 2, [1]),
                                           finding(0, 2, 1, [2]), finding(1, 0, 0, [2])])
        self.assertEqual(len(diffs), 3, diffs)
        self.assertIn("extra finding: wildcard receive #1 of rank 0", diffs[0])
        self.assertIn("no alternative source", diffs[0])
        self.assertIn("no completed wildcard receive #2", diffs[1])
        self.assertIn("rank 1 has no completed wildcard receive #0", diffs[2])

    def test_wrong_alternatives_and_source(self):
        diffs = mo.compare(self.expected, [finding(0, 0, 1, [1, 2])])
        self.assertEqual(len(diffs), 1)
        self.assertIn("expected alternative sources [2]", diffs[0])
        self.assertIn("extra [1]", diffs[0])
        diffs = mo.compare(self.expected, [finding(0, 0, 1, [])])
        self.assertIn("missing [2]", diffs[0])
        diffs = mo.compare(self.expected, [finding(0, 0, 2, [2])])
        self.assertEqual(len(diffs), 1)
        self.assertIn("matched source 2", diffs[0])
        # Order of the tool's list does not matter.
        exp = mo.compute({
            0: [line("MPI_Recv", rcv("1.0")), line("MPI_Recv", rcv("2.0", src=2)),
                line("MPI_Recv", rcv("3.0", src=3))],
            1: [line("MPI_Send", snd("1.0", 0))], 2: [line("MPI_Send", snd("2.0", 0))],
            3: [line("MPI_Send", snd("3.0", 0))]})
        self.assertEqual(alts(exp), {(0, 0): (1, [2, 3])})
        self.assertEqual(mo.compare(exp, [finding(0, 0, 1, [3, 2])]), [])

    def test_duplicate_and_malformed(self):
        diffs = mo.compare(self.expected, [finding(0, 0, 1, [2]), finding(0, 0, 1, [2]),
                                           {"analysis": "matches", "kind": "wildcard-receive",
                                            "receive": {"rank": "0"}}])
        self.assertEqual(len(diffs), 2, diffs)
        self.assertIn("duplicate finding", diffs[0])
        self.assertIn("malformed finding", diffs[1])

    def test_other_analysis_ignored(self):
        race = {"analysis": "race", "kind": "message-race",
                "receive": {"rank": 0, "index": 1}, "alternative_sources": [1]}
        self.assertEqual(mo.compare(self.expected, [finding(0, 0, 1, [2]), race]), [])


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.gt = os.path.join(self.tmp.name, "gt")
        os.mkdir(self.gt)
        for rank, lines in FIG2.items():
            with open(os.path.join(self.gt, f"gt-{rank}.jsonl"), "w") as f:
                for obj in lines:
                    f.write(json.dumps(obj) + "\n")

    def tearDown(self):
        self.tmp.cleanup()

    def report(self, doc):
        path = os.path.join(self.tmp.name, "report.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def run_mo(self, *args, **kw):
        out, err = io.StringIO(), io.StringIO()
        code = mo.run(*args, out=out, err=err, **kw)
        return code, out.getvalue(), err.getvalue()

    def test_print_expected(self):
        code, out, _ = self.run_mo(self.gt, None)
        self.assertEqual(code, mo.EXIT_OK)
        rows = [json.loads(x) for x in out.splitlines()]
        self.assertEqual([(r["rank"], r["index"], r["matched_source"],
                           r["alternative_sources"]) for r in rows],
                         [(0, 0, 1, [2]), (0, 1, 2, [])])
        self.assertEqual(rows[1]["completed_by"], {"rank": 0, "line": 1, "gt_line": 2})

    def test_report(self):
        ok = {"findings": [finding(0, 0, 1, [2]),
                           {"analysis": "race", "kind": "x"}]}
        self.assertEqual(self.run_mo(self.gt, self.report(ok))[0], mo.EXIT_OK)
        code, out, _ = self.run_mo(self.gt, self.report({"findings": []}), 3)
        self.assertEqual(code, mo.EXIT_MISMATCH)
        self.assertIn("missing finding", out)
        code, _, err = self.run_mo(self.gt, self.report({"no": 1}))
        self.assertEqual(code, mo.EXIT_MISMATCH)
        self.assertIn("findings", err)
        code, _, err = self.run_mo(self.gt, self.report(ok), 4)  # no gt-3.jsonl
        self.assertEqual(code, mo.EXIT_ORACLE_ERROR)
        self.assertIn("ORACLE ERROR", err)

    def test_main(self):
        path = self.report({"findings": [finding(0, 0, 1, [2])]})
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = mo.main(["--gt", self.gt, "-n", "3", "--report", path])
        self.assertEqual(code, mo.EXIT_OK)
        self.assertIn("1 with alternatives", out.getvalue())


if __name__ == "__main__":
    unittest.main()
