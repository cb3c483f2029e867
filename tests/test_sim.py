"""The deterministic network simulator (allegra_lan/sim/, issue 10): its parts, and seeded
runs of real `Peer` objects checked against the invariants.

The network model, the disk model, the seed -> scenario draw, the frame codec and the
invariant checkers are tested on their own first (the checkers on logs of real local
games); then hundreds of seeded games with every fault kind, pinned seeds, and the
command line as a subprocess.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allegra_lan.bots.registry import make_bot
from allegra_lan.local import LocalGame, Player, simulated_setup
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.takeover import sign_consent
from allegra_lan.net.framing import MAX_FRAME, encode_frame
from allegra_lan.rules import legal_moves, ruleset_from_dict, ruleset_for, to_act, view
from allegra_lan.sim.disk import Disk
from allegra_lan.sim.invariants import (
    Outcome, check_finished, check_logs, check_prefix, check_takeovers, check_verify,
)
from allegra_lan.sim.net import Clock, LinkSpec, Network
from allegra_lan.sim.scenario import ADVERSARIES, FAULT_KINDS, NETWORK_FAULTS, Options, scenario
from allegra_lan.sim.wire import FrameError, decode_frame, oversize_header, raw_frame
from allegra_lan.table import TAKEOVER, Table

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the network model

class Wire:
    """A network of `n` nodes whose deliveries and ends are recorded."""

    def __init__(self, n: int = 3, seed: int = 1, jitter: float = 0.005) -> None:
        self.clock = Clock(100.0)
        links = {(a, b): LinkSpec(0.001, jitter) for a in range(n) for b in range(a + 1, n)}
        self.got: list[tuple[int, int, bytes]] = []  # (conn id, receiver, frame)
        self.ends: list[tuple[int, int, str]] = []
        self.net = Network(self.clock, random.Random(seed), links,
                           lambda c, to, f: self.got.append((c.id, to, f)),
                           lambda c, end, why: self.ends.append((c.id, end, why)))

    def run(self, until: float = 1e9) -> None:
        while (t := self.clock.next_time()) is not None and t <= until:
            self.clock.step()


def test_frames_inside_a_connection_arrive_in_order_despite_jitter() -> None:
    w = Wire(jitter=0.01)
    c = w.net.open(0, 1, 0)
    for i in range(300):
        w.net.send(c, 0, i.to_bytes(2, "big"))
        w.clock.at(w.clock.now + 0.0001, lambda: None)
        w.clock.step()
    w.run()
    assert [int.from_bytes(f, "big") for _, to, f in w.got if to == 1] == list(range(300))


def test_frames_on_different_links_overtake_each_other() -> None:
    w = Wire(jitter=0.01)
    c1, c2 = w.net.open(0, 1, 0), w.net.open(0, 2, 0)
    for i in range(100):
        w.net.send(c1 if i % 2 else c2, 0, i.to_bytes(2, "big"))
    w.run()
    order = [int.from_bytes(f, "big") for _, _, f in w.got]
    assert sorted(order) == list(range(100)) and order != list(range(100))


def test_a_partition_stalls_frames_and_the_heal_delivers_them_in_order() -> None:
    w = Wire()
    c = w.net.open(0, 1, 0)
    w.net.partition([frozenset({0}), frozenset({1, 2})])
    for i in range(20):
        w.net.send(c, 0, bytes([i]))
    w.run(until=200.0)
    assert w.got == []
    w.net.heal()
    w.run()
    assert [f[0] for _, _, f in w.got] == list(range(20))


def test_a_reset_drops_what_is_in_flight_and_both_ends_hear_of_it() -> None:
    w = Wire()
    c = w.net.open(0, 1, 0)
    for i in range(5):
        w.net.send(c, 0, bytes([i]))
    w.net.reset(c, "reset")
    w.run()
    assert w.got == [] and sorted(end for _, end, _ in w.ends) == [0, 1]


def test_a_closing_end_s_frames_arrive_before_its_fin_and_nothing_goes_back() -> None:
    w = Wire()
    c = w.net.open(0, 1, 0)
    w.net.send(c, 0, b"a")
    w.net.send(c, 1, b"b")
    w.net.send(c, 0, b"c")
    w.net.finish(c, 0, "closed")
    w.run()
    assert [(to, f) for _, to, f in w.got] == [(1, b"a"), (1, b"c")]
    assert w.ends == [(c.id, 1, "closed")]


def test_a_node_that_loses_power_vanishes_without_a_word() -> None:
    w = Wire()
    c = w.net.open(0, 1, 0)
    w.net.send(c, 0, b"a")
    w.net.send(c, 1, b"b")
    w.net.vanish(1)
    w.net.down.add(1)
    w.net.send(c, 0, b"c")
    w.run()
    assert w.got == [] and w.ends == []


def test_a_blocked_link_stalls_only_itself() -> None:
    w = Wire()
    c1, c2 = w.net.open(0, 1, 0), w.net.open(0, 2, 0)
    w.net.block(0, 1)
    w.net.send(c1, 0, b"x")
    w.net.send(c2, 0, b"y")
    w.run(until=150.0)
    assert [f for _, _, f in w.got] == [b"y"]
    w.net.unblock(0, 1)
    w.run()
    assert [f for _, _, f in w.got] == [b"y", b"x"]


# ---------------------------------------------------------------- the disk model

def _events(n: int) -> list:
    s = simulated_setup(5, 1, 2)
    g = LocalGame(ruleset_for("allegra"), [Player(f"p{i}", s.identities[i]) for i in range(2)],
                  game_id=s.game_id, nonces=s.nonces)
    return g.table.events[:n]


def test_a_power_cut_loses_at_most_the_unsynced_tail() -> None:
    evs = _events(7)
    for seed in range(40):
        d = Disk()
        for i, ev in enumerate(evs):
            d.persist(ev, sync=i == 3)
        lost = d.power_cut(random.Random(seed))
        assert d.events == [e.signed for e in evs][: 7 - lost] and len(d.events) >= 4


# ---------------------------------------------------------------- seeds -> scenarios

def test_a_seed_names_one_scenario_and_options_narrow_it() -> None:
    assert scenario(42) == scenario(42)
    assert any(scenario(s) != scenario(42) for s in range(5))
    for s in range(200):
        sc = scenario(s, Options(peers=(3, 4), faults=("kill", "forking")))
        assert 3 <= len(sc.nodes) <= 4
        assert set(sc.kinds) <= {"kill", "forking"}
        quiet = scenario(s, Options(faults=()))
        assert quiet.faults == () and quiet.stranger is None
        assert all(n.adversary is None for n in quiet.nodes)
    drawn = {k for s in range(400) for k in scenario(s).kinds}
    assert drawn == set(FAULT_KINDS)


# ---------------------------------------------------------------- frames as bytes

def test_frames_decode_as_the_trio_shell_decodes_them() -> None:
    msg = {"t": "have", "seq": 3, "head": bytes(32)}
    assert decode_frame(encode_frame(msg)) == msg
    with pytest.raises(FrameError, match="over the 65536 limit"):
        decode_frame(oversize_header(MAX_FRAME + 1))
    with pytest.raises(FrameError, match="must be a map"):
        decode_frame(raw_frame([1, 2]))
    with pytest.raises(FrameError, match="malformed frame"):
        decode_frame(b"\x00\x00\x00\x01\xc1")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=80))
def test_any_bytes_are_a_message_or_a_frame_error(data: bytes) -> None:
    try:
        msg = decode_frame(data)
    except FrameError:
        return
    assert type(msg) is dict and type(msg["t"]) is str and msg["t"]


# ---------------------------------------------------------------- the checkers, on real logs

def _game(seed: int, n: int = 3, rounds: int = 1) -> LocalGame:
    d = ruleset_for("allegra").to_dict()
    d["rounds"] = rounds
    s = simulated_setup(seed, 1, n)
    g = LocalGame(ruleset_from_dict(d), [Player(f"p{i}", s.identities[i]) for i in range(n)],
                  game_id=s.game_id, nonces=s.nonces)
    bots = [make_bot("random", bytes([i]) * 32) for i in range(n)]
    while to_act(g.state) is not None:
        dd = to_act(g.state)
        g.submit(bots[dd.seat].choose(view(g.state, dd.seat), legal_moves(g.state)))
    return g


def test_check_logs_takes_identical_logs_and_names_where_two_differ() -> None:
    a = [e.signed for e in _game(1).table.events]
    b = [e.signed for e in _game(2).table.events]
    none = {"x": None, "y": None}
    assert check_logs({"x": a, "y": list(a)}, none, fork_allowed=False) == []
    assert check_logs({"x": a, "y": a[:-1]}, none, fork_allowed=False) == [
        f"x and y differ at seq {len(a) - 1} ({len(a)} and {len(a) - 1} events)"]
    assert "differ at seq 0" in check_logs({"x": a, "y": b}, none, fork_allowed=False)[0]


def test_check_logs_wants_the_same_fork_proof_everywhere_and_only_with_a_forker() -> None:
    a = [e.signed for e in _game(1).table.events]
    p, q = (a[20], a[21]), (a[21], a[20])
    assert check_logs({"x": a, "y": a}, {"x": p, "y": q}, fork_allowed=True) == []
    assert check_logs({"x": a, "y": a}, {"x": p, "y": None}, fork_allowed=True) == [
        "y hold no fork proof while x do"]
    assert check_logs({"x": a, "y": a}, {"x": p, "y": (a[1], a[2])}, fork_allowed=True) == [
        "different fork proofs: 2 distinct pairs"]
    assert "no forking adversary" in check_logs({"x": a}, {"x": p}, fork_allowed=False)[0]


def test_check_prefix_of_a_peer_that_left_for_good() -> None:
    a = [e.signed for e in _game(1).table.events]
    assert check_prefix("z", a[:30], a) == []
    assert check_prefix("z", a[:30] + [a[40]], a) == ["z's log parts from the final one at seq 30"]


def _with_takeover(bad_consent: bool = False) -> list[bytes]:
    """A real game of 3 bots in which, at some seat-1 decision, seats 0 and 2 let a new key
    play seat 1; the log is built by hand (the checker reads it without a Table)."""
    g = _game(3, n=3)
    log = g.table.events
    at = next(e.seq for e in log if e.seq > 12 and _acts(log, e.seq) == 1)
    t = Table()
    for e in log[:at]:
        t.append(e.signed)
    new = Identity.generate()
    seats = [(1, new.public)]
    keys = [p.identity for p in g.players]
    game = t.game
    assert game is not None
    signs = [[s, sign_consent(keys[s].key, game, at + (1 if bad_consent and s == 2 else 0),
                              t.head, seats)] for s in (0, 2)]
    ev = sign_event(keys[0].key, game=game, seq=at, prev=t.head, kind=TAKEOVER,
                    body={"seats": [[1, new.public]], "signs": signs})
    return [e.signed for e in log[:at]] + [ev.signed]


def _acts(log: list, seq: int) -> int | None:
    t = Table()
    for e in log[:seq]:
        t.append(e.signed)
    return t.next_author()


def test_check_takeovers_checks_every_consent_on_its_own() -> None:
    good = _with_takeover()
    t = Table()
    for raw in good:
        t.append(raw)  # the table takes it: the checker agrees with it
    assert check_takeovers(good) == (1, [])
    seen, problems = check_takeovers(_with_takeover(bad_consent=True))
    assert seen == 1 and problems == [
        f"takeover at seq {len(good) - 1}: seat 2: the consent is not that seat's signature of "
        "this takeover"]


def test_check_verify_passes_a_real_log_whole_and_cut_short(tmp_path: Path) -> None:
    g = _game(4)
    assert check_verify(g.table, str(tmp_path)) == []
    t = Table()
    for e in g.table.events[:25]:
        t.append(e.signed)
    assert check_verify(t, str(tmp_path)) == []
    assert list(tmp_path.iterdir()) == []


def test_check_finished_names_who_did_not_finish_and_who_stopped_without_cause() -> None:
    done = Outcome("a", True, None, True, 100)
    stuck = Outcome("b", False, None, False, 40)
    forked = Outcome("c", True, "fork", False, 40)
    assert check_finished([done, stuck], must_finish=False, fork=False, setup_disturbed=False,
                          ended="quiet") == []
    assert check_finished([done, stuck], must_finish=True, fork=False, setup_disturbed=False,
                          ended="quiet") == ["b did not finish (seq 40; the run ended: quiet)"]
    assert check_finished([forked], must_finish=False, fork=True, setup_disturbed=False,
                          ended="done") == []
    assert check_finished([forked], must_finish=False, fork=False, setup_disturbed=False,
                          ended="done") == ["c stopped early: fork"]
