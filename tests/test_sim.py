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
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nacl.signing import SigningKey

from allegra_lan.bots.registry import make_bot
from allegra_lan.local import LocalGame, Player, simulated_setup
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.takeover import sign_consent
from allegra_lan.net.framing import MAX_FRAME, encode_frame
from allegra_lan.rules import legal_moves, ruleset_from_dict, ruleset_for, to_act, view
from allegra_lan.sim.disk import Disk
from allegra_lan.sim.invariants import (
    Outcome, check_disagreements, check_finished, check_logs, check_prefix, check_takeovers,
    promised_to_an_adversary,
    check_verify,
)
from allegra_lan.sim.net import Clock, LinkSpec, Network
from allegra_lan.sim.scenario import FAULT_KINDS, Options, scenario
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
    assert check_prefix("z", a + [a[3]], a) == []  # its last events never left its machine
    assert check_prefix("z", a[:30] + [a[40]], a) == ["z's log parts from the final one at seq 30"]
    # ...unless what it holds there is a twin of the fork the others proved (seed 211497)
    assert check_prefix("z", a[:30] + [a[40]], a, frozenset({a[40], a[30]})) == []
    t = _with_takeover()  # game 3's log up to seq n, then a takeover at n
    own = [e.signed for e in _game(3, n=3).table.events][:len(t)]  # its own move at n instead
    assert check_prefix("z", t, own) == []  # a takeover in its log
    assert check_prefix("z", own, t) == []  # or in the final one
    assert check_prefix("z", own, own[:-1] + [t[3]]) != []


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


def test_check_verify_passes_a_real_log_whole_and_cut_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where its file goes, and must go from
    g = _game(4)
    assert check_verify(g.table) == []
    t = Table()
    for e in g.table.events[:25]:
        t.append(e.signed)
    assert check_verify(t) == []
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


# ---------------------------------------------------------------- seeded games of real Peers

from allegra_lan.sim import cli  # noqa: E402
from allegra_lan.sim.run import Result, judge, replay_command, run_seed  # noqa: E402
from allegra_lan.sim.world import World  # noqa: E402

# Every finding of the simulator so far (A to G) was fixed on main; the seeds that showed
# them are kept below as plain tests, each docstring saying what it was.


def test_a_seed_replays_exactly() -> None:
    a = run_seed(77)
    b = run_seed(77)
    assert (a.events, a.steps, a.frames, a.virtual, a.failures, a.faults) == \
           (b.events, b.steps, b.frames, b.virtual, b.failures, b.faults)



# The rules the pinned seeds below were found under. Issue 11 revised R16 (ALLEGRA's knock is
# open at two players too) and R24 (Grande: no turn-up after a 13), which changed every game a
# seed plays; under today's defaults these seeds no longer meet the conditions they pin.
FOUND_UNDER = {"allegra": {"knock_min_players": 3}, "grande": {"turn_up_after_13": True}}


def pinned(seed: int, options: Options = Options(), **kw: Any) -> Any:
    """A pinned seed, replayed under the rules it was found with."""
    return run_seed(seed, options, rules=FOUND_UNDER[scenario(seed, options).variant], **kw)


def test_250_seeded_games_hold_every_invariant() -> None:
    """250 seeds, 2 to 4 peers, every fault kind drawn across them, on 2 worker processes:
    every invariant holds in each run (a failure names the command that replays it)."""
    seeds = list(range(250))
    options = Options(peers=(2, 4))
    rs = list(cli.results(seeds, options, 2))
    assert sorted(r.seed for r in rs) == seeds
    injected = {k for r in rs for k in r.faults}
    assert injected == set(FAULT_KINDS)
    checked = {k for r in rs for k in r.checks}
    assert checked >= {"no_raise", "logs", "bounded", "finished", "verify", "run", "notes",
                       "takeover"}
    failed = [f"{replay_command(r.seed, options)}: {r.failures[0].splitlines()[0]}"
              for r in rs if not r.ok]
    assert failed == []


def test_the_pending_state_checker_sees_a_flood() -> None:
    """A flood of 4200 messages at once is cut by the Peer's rate limit: the run holds every
    invariant, and the flooded peer's state stayed under its caps."""
    seed = next(s for s in range(100) if scenario(s, Options(peers=(2, 2), faults=("flooding",))).kinds)
    r = run_seed(seed, Options(peers=(2, 2), faults=("flooding",)))
    assert r.faults["flooding"] == 1 and r.checks["bounded"] == 1


@pytest.mark.parametrize("seed,options", [
    (18, Options(peers=(2, 2), faults=("partition",))),
    (2, Options(peers=(2, 3))),
])
def test_finding_a_a_partition_gives_no_two_takeovers(seed: int, options: Options) -> None:
    """Finding A (fixed on main, ae95c31): two peers (or two groups) cut off from each other
    longer than the takeover time each saw the other side's seats away, and since "every
    remaining seat" was each side's own, both wrote a valid takeover and finished two
    different games (seed 18: 2 peers, a 19 s partition; seed 2: 2 seats against 1, a 22 s
    stall). Now the seats that stay must be more than half of the table."""
    r = pinned(seed, options)
    assert r.ok, r.failures


@pytest.mark.parametrize("seed,options", [
    (24, Options(peers=(3, 3), faults=())),
    (9, Options(peers=(2, 3))),
])
def test_finding_b_the_genesis_before_the_last_lobby(seed: int, options: Options) -> None:
    """Finding B (fixed on main, 0387388), with no fault at all (seed 24, 3 peers): guest 1
    relayed the genesis to guest 2 faster than the host's last lobby reached it; guest 2
    took the genesis with its old lobby (where it held no seat), refused the host's lobby
    ("a lobby that changes the seats after the start"), never claimed its seat, and the
    start was aborted after 30 s ("p2 did not send its accept"); elsewhere the stale lobby
    made a guest refuse a seated peer's connections and events."""
    r = pinned(seed, options)
    assert r.ok, r.failures
    assert r.outcome == "finished"


@pytest.mark.parametrize("seed,options", [
    (3, Options(peers=(2, 2), faults=("withholding",))),
    (1, Options(peers=(2, 2), faults=("stall",))),
])
def test_finding_c_no_timer_in_the_past(seed: int, options: Options) -> None:
    """Finding C (fixed on main, 0387388): a peer whose link closed for silence came back on
    a new link but said nothing yet; `_consider_takeover` asked for a tick at heard[key] +
    SILENCE, already past, so every tick returned a Timer before now and the shell ticked
    again at once (the trio shell burnt a core; the simulator's clock could not move on:
    "node 0 spins")."""
    r = pinned(seed, options)
    assert r.ok, r.failures


def test_finding_f_a_peer_back_gets_the_takeover_of_its_seat() -> None:
    """Finding F (fixed on main, e7b2443). Seed 217, 3 seats on 2 peers (node 0 runs seats 0
    and 1), an 11.6 s partition: node 1 must act at seq 12 and writes its move alone; node
    0, a majority, takes seat 2 over at seq 12 just after the heal, before the link is back.
    Linked again, node 1 sent its event at 12, refused ("seq 12 is already taken by another
    author"), and nobody sent it the takeover that supersedes its move: both asked, neither
    sent. Node 0 played to the end and left; node 1 waited for ever at seq 14."""
    r = pinned(217, Options(peers=(2, 4)))
    assert r.ok, r.failures
    assert r.facts["takeover"] >= 1


@pytest.mark.parametrize("seed,options", [
    (54, Options(peers=(2, 4))),
    (4, Options(faults=("forking",))),
])
def test_finding_g_a_split_fork_is_found(seed: int, options: Options) -> None:
    """Findings D and G (fixed on main, 8ab891f and e7b2443). Seed 54, 2 honest peers and a
    forking adversary: node 0 gets the adversary's event at seq 36, node 1 its twin. Each is
    linked to the author, so neither relayed it to the other (relay over missing links);
    their `have`s showed the logs part at 36, events at 37 were refused ("prev is not the id
    of the event before"), no peer held both twins and the game stalled with no proof (G).
    Seed 4 (3 honest peers): before the relay change, the one honest peer that met both twins
    stopped with the proof while the two others played the game to its end (D)."""
    r = pinned(seed, options)
    assert r.ok, r.failures
    assert r.facts["fork proof"] >= 2 and r.outcome == "stopped"


def test_finding_h_a_peer_that_gives_the_start_up_leaves_and_the_others_may_play_on() -> None:
    """Finding H. Seed 3096, 5 seats, a 29.3 s partition in the ceremony ([0, 1, 3]
    against [2, 4]). At the heal each side gets the reveals it lacked just before or just
    after its own SETUP_TIMEOUT (30 s): node 2 (a person) and node 3 give the start up ("the
    game cannot start: p1 (seat 4) did not send its reveal") and leave, while nodes 0, 1 and
    4, which got them in time, play on, take the two seats of the peers that left over (3 of
    5 seats stay) and finish. A peer that gives up is a peer that leaves: its log must be a
    prefix of the game the others finished, and is (an abort every peer agrees on would need
    an event in the log; docs/simulation.md)."""
    r = pinned(3096)
    assert r.ok, r.failures
    assert r.facts["takeover"] >= 1


def test_a_broken_log_fails_the_run_and_the_summary_prints_one_replay_command() -> None:
    """The failing-seed path on a real run: one honest peer's log is cut short after the
    run (the checker is fed two different logs); `judge` names it, and the summary prints
    the failure and the one command that replays the seed."""
    seed = next(s for s in range(200) if run_seed(s, Options(peers=(2, 2), faults=())).outcome == "finished")
    w = World(scenario(seed, Options(peers=(2, 2), faults=())))
    w.run()
    assert judge(w).failures == []
    peer = w.nodes[1].peer
    assert peer is not None
    cut = Table()
    for e in peer.table.events[:-1]:
        cut.append(e.signed)
    peer.replica.table = cut
    v = judge(w)
    assert any(f.startswith("logs: node 0 and node 1 differ at seq") for f in v.failures)
    bad = Result(seed=seed, ok=False, failures=v.failures, checks=v.checks)
    import io
    out = io.StringIO()
    cli.summary([bad], 1.0, Options(peers=(2, 2), faults=()), out)
    text = out.getvalue()
    assert "failures: 1\n" in text and f"FAIL seed {seed}: logs: node 0 and node 1 differ" in text
    replays = [line for line in text.splitlines() if "replay:" in line]
    assert replays == [f"  replay: python -m allegra_lan.sim --seed {seed} --peers 2 --faults none -v"]
    assert replay_command(seed, Options(peers=(2, 2), faults=())) in replays[0]


def _sim(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan.sim", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def test_the_command_runs_seeds_on_two_processes_and_summarises() -> None:
    """The command's own parts: its worker processes, progress and summary (the seeds'
    invariants are the 250-seed test's; six seeds still draw faults of several kinds)."""
    p = _sim("--seeds", "6", "--jobs", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("games: 6 (")
    assert any(line.startswith("faults injected: ") for line in lines)
    assert any(line.startswith("invariants checked: no_raise 6, logs ") for line in lines)
    assert "failures: 0" in lines
    assert p.stderr.strip().splitlines()[-1].startswith("6/6 games")  # not a tty: lines


def test_every_option_that_shapes_a_run_is_in_its_replay_command() -> None:
    o = Options(peers=(3, 3), faults=("kill", "forking"), cpu=True, latency=0.0002)
    assert replay_command(7, o) == ("python -m allegra_lan.sim --seed 7 --peers 3 --faults "
                                    "kill,forking --cpu --latency 0.2")
    assert replay_command(7, Options()) == "python -m allegra_lan.sim --seed 7"
    sc = scenario(7, Options(latency=0.0002))
    assert {(s.base, s.jitter) for s in sc.links.values()} == {(0.0002, 0.00002)}


def test_the_deal_is_in_the_replay_command_and_draws_the_same_scenario() -> None:
    """`--deal fair` is an option of the run, not of the draw: a seed names the same
    faults and peers under either deal (but that a fair run's seated adversary may be drawn,
    aside, as a dishonest dealer), and a seeded run's replay command is what it was."""
    fair = Options(deal="fair")
    assert replay_command(7, fair) == "python -m allegra_lan.sim --seed 7 --deal fair"
    dealers = 0
    for s in range(20):
        a, b = scenario(s), scenario(s, fair)
        assert (a.faults, a.links, a.rounds) == (b.faults, b.links, b.rounds)
        for x, y in zip(a.nodes, b.nodes, strict=True):
            if y.adversary == "dealer":
                dealers += 1
                assert x.adversary is not None and x.seats == y.seats
            else:
                assert x == y
    assert dealers > 0


@pytest.mark.parametrize("seed", [7, 11])
def test_fair_deal_seeds_hold_every_invariant_and_their_logs_hold_the_deal(seed: int) -> None:
    r = run_seed(seed, Options(deal="fair", faults=("kill", "powercut", "duplicate")))
    assert r.ok, r.failures
    plain = run_seed(seed, Options(faults=("kill", "powercut", "duplicate")))
    assert plain.ok and r.events > plain.events  # the deal's events come on top of the game's


def test_one_seed_with_its_trace() -> None:
    p = _sim("--seed", "5", "--peers", "2", "--faults", "none", "-v")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "seed 5: " in p.stdout and " -> " in p.stdout and "all invariants hold" in p.stdout


@pytest.mark.parametrize("args,says", [
    (["--seeds", "x"], "--seeds needs a whole number, not 'x'"),
    (["--peers", "1-7"], "--peers must be within 2-6"),
    (["--faults", "cut,meteor"], "unknown fault kind 'meteor'"),
    (["--latency", "0"], "--latency must be 0.001 to 1000 ms, not 0"),
    (["-v"], "-v prints one run's trace: give it with --seed S"),
    (["--bogus"], "unrecognized arguments: --bogus"),
])
def test_a_bad_argument_is_one_line_and_exit_2(args: list[str], says: str) -> None:
    p = _sim(*args, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1 and says in p.stderr
    assert p.stderr.startswith("python -m allegra_lan.sim: error: ")


def test_a_peer_gone_with_a_seat_it_took_over_counts_both_seats_as_absent() -> None:
    """Seed 5163 (4 seats, a partition, then node 0 gone for good): node 0 had taken seat 3
    over while its peer was cut off, so it wrote for two seats when it went, and 2 of 4 is
    not a majority: the game must wait, and does. The checker counted only the seat node 0
    sat in, expected a takeover and a finished game, and failed the run."""
    r = pinned(5163)
    assert r.ok, r.failures
    assert r.facts["takeover"] >= 1


@pytest.mark.parametrize("seed", [100673, 101671])
def test_findings_of_the_long_run_stay_fixed(seed: int) -> None:
    """Two of the 8 failures of seeds 100000-101999 on an earlier main (the others were the
    checker's). 100673: a forking seat's twins at seq 28, each honest side's next moves at
    29 and 30 on top of its twin; a peer whose log differed was shown only the event at the
    `have`'s seq, so no peer ever met both twins, and the game stalled with no fork proof.
    101671: a 12.9 s stall; the side with 2 of 3 seats took the third over at 84 and went on
    alone only from 85, so when the link came back it asked from 85 and never sent the
    takeover; the other side waited for ever at 86."""
    r = pinned(seed)
    assert r.ok, r.failures


def test_a_consent_to_a_proposer_gone_for_good_is_released() -> None:
    """Found with seed 106420 (3 seats): node 0 gathered node 2's consent, wrote the takeover
    of seat 2 and lost power for good before the frame left. Node 2's promise barred seat 2's
    own moves at that seq, and nothing ever released it: when seat 2's peer came back, its
    moves were refused for ever. A consent now lapses once its proposer has been away
    RELEASE_AFTER. Since the logs carry signed results (issue 13) every event id differs, so
    bots choose otherwise and 106420 no longer meets the case; seed 126692 does, under today's
    rules (5 seats: node 2 is killed, node 0 asks to give its seat 1 to a bot, gathers node 3's
    and node 4's consents and goes for good; both release them 30 s later and the game ends)."""
    r = run_seed(126692, verbose=True)
    assert r.ok, r.failures
    assert r.outcome == "finished"
    released = [line for line in r.trace if "released the consent to let bots play p2 (seat 1)" in line]
    assert {line.split()[2] for line in released} == {"3", "4"}, released


def test_an_end_no_majority_confirmed_is_not_reported_as_the_end() -> None:
    """Seed 102136 (3 seats, node 0 runs two): a partition cut node 1 off just as its seat's
    moves ended the game. It lingered, heard nothing, and said "finished", while node 0 (2 of
    3 seats) took its seat over at that seq and finished another ending: two replays, both
    "finished", different results. Node 1 now stops with the end in doubt (exit 1 in the
    CLI), and is judged by its log's prefix. With signed results (issue 13) 102136 plays
    another game; seed 158867 meets the case under today's rules (Grande, 3 seats, node 0 runs
    two): the partition comes as node 1 signs the last result, seat 2's, which ends the game
    for node 1 alone; node 0 gives seat 2 to a bot, whose result ends its own copy."""
    r = run_seed(158867, verbose=True)
    assert r.ok, r.failures
    assert r.facts["takeover"] >= 1
    assert any("node 1 done (stopped: the end was never confirmed by" in line
               and "who runs 2 of 3 seats" in line for line in r.trace)


def test_a_peer_the_adversary_leaves_alone_is_judged_by_its_prefix() -> None:
    """Found with seed 103094 (a checker finding): the honest peer's only other peer was the
    adversary, which left while the honest one was down; the checker marked peers left alone
    only when an honest peer left, and failed the run for a game nobody could finish. With
    signed results (issue 13) 103094 plays another game; seed 115740 meets the case under
    today's rules (2 seats: the honest host loses power at seq 49 for 21 s, the adversary,
    node 1, gives up on it and leaves; the host comes back to nobody)."""
    r = run_seed(115740, verbose=True)
    assert r.ok, r.failures
    assert r.facts["stranded"] == 1 and r.outcome == "stalled"
    assert any(line.split()[1:] == ["node", "1", "done"] for line in r.trace)
    assert any("node 0 restarts at seq 49" in line for line in r.trace)


@pytest.mark.parametrize("seed", [210150, 211497])
def test_a_peer_back_while_the_others_stop_for_a_fork(seed: int) -> None:
    """Two of the long run's seeds (5 and 4 seats, a forking seat, one honest peer down while
    the others found the fork). 210150: it came back while they lingered, caught up, and was
    never told of the fork: the proof now goes to every peer that links while we stop.
    211497: it came back just after they had left, holding the other twin; the checker judged
    its log as parting from the final one, where a left-alone peer's twin is no fault."""
    r = pinned(seed)
    assert r.ok, r.failures
    assert r.facts["fork proof"] >= 2


def test_a_peer_gone_on_a_forkers_other_branch_is_no_fault_of_the_checked() -> None:
    """Seed 510335 of the 500000 run (a checker finding; 3 seats, node 2 forking): the forker
    showed node 0 one twin of its seq 46 and node 1 the other, and node 1 then wrote seq 48 on
    its branch and went for good. Node 0 never held both twins (the forker kept it on its own
    branch), so nobody could prove the fork, and the checker failed the run because the gone
    peer's log parted from the final one. Two events of one seq signed by one adversary's key
    are where an honest gone peer may part. (Node 0 held 46A and the forker's 47 chained on
    46B: a proof from a broken chain is not taken today; docs/simulation.md.)"""
    r = run_seed(510335)
    assert r.ok, r.failures
    assert r.faults["forking"] == 1 and r.faults["gone"] == 1


def test_a_guest_whose_link_drops_with_its_last_move_brings_the_end_to_the_host() -> None:
    """Seed 206692 of the long run (2 seats, one link reset just as the guest wrote the
    game's last events): the guest lingered without dialling (a finished peer dialled
    nobody), the host does not dial a guest, and the host waited for ever for a move it
    never got. Here the same reset is put at every seq around the end of a 2-peer game: a
    finished peer now dials the peers that have not said they hold its end."""
    import dataclasses

    from allegra_lan.sim.run import judge
    from allegra_lan.sim.scenario import FaultPlan
    from allegra_lan.sim.world import World

    base = scenario(206692, Options(peers=(2, 2), faults=("cut",)))
    calm = dataclasses.replace(base, faults=())
    w = World(calm)
    w.run()
    final = max(n.peer.table.seq for n in w.honest_nodes())
    failed = []
    for at in range(final - 6, final + 1):
        sc = dataclasses.replace(base, faults=(FaultPlan("cut", at, node=0, other=1),))
        w = World(sc)
        w.run()
        v = judge(w)
        failed += [f"cut at seq {at}: {f}" for f in v.failures]
    assert failed == []


def test_the_seats_of_a_peer_that_gave_the_start_up_are_absent_from_the_play() -> None:
    """Seed 516150 of the long run (a checker finding; 6 seats, no takeovers, a 30 s partition
    in the ceremony, [1, 3, 5] against [0, 2, 4]). Side [1, 3, 5] got every reveal and
    played on to seat 3's turn (seq 23); on the other side the setup timers of node 2 and of
    node 4 (the seat of seat 3) ran out 12 ms after the heal, before the links were back:
    both gave the start up ("p1 did not send its reveal") and left, as finding H allows.
    Node 0 got the reveals in time and played on with 1, 3 and 5, who then waited for seat 3
    for ever, as a table without takeovers must. The checker counted only peers gone for good
    as absent, so it wanted this game finished. The seats of a peer that gave the start up
    while others played on now count as absent (as they stand at the end: the others may
    have taken them over); with takeovers on, the same run must still finish, and does."""
    import dataclasses

    from allegra_lan.sim.run import judge
    from allegra_lan.sim.world import World

    r = run_seed(516150, verbose=True)
    assert r.ok, r.failures
    assert r.outcome == "stalled"
    assert sum("did not send its reveal within 30 s" in line for line in r.trace) == 2
    base = scenario(516150, Options())
    assert base.takeover == 0
    w = World(dataclasses.replace(base, takeover=5))
    w.run()
    assert judge(w).failures == []
    played = [n for n in w.honest_nodes() if n.stopped is None]
    assert played and all(n.done and n.peer is not None and to_act(n.peer.table.state) is None
                          and sum(e.kind == TAKEOVER for e in n.peer.table.events) >= 1
                          for n in played)


def test_a_bot_only_peer_s_power_cut_takes_at_most_what_the_shell_had_not_fsynced() -> None:
    """Seed 515785 (Grande, 2 seats, bots only): node 1 went for good at seq 44, and 5 s later
    node 0 lost power. The simulated disk made durable only a `Persist(sync=True)` (a person's
    move, a genesis), while the trio shell fsyncs everything else at most SYNC_EVERY (1 s)
    after writing it (net/node.py `_sync_now_and_then`): the cut took 42 events the real host
    holds on disk, node 0 came back in the ceremony and gave the start up ("p1 did not send
    its accept"), and the run failed. The world now fsyncs as the shell does: node 0 comes
    back with the whole log it had and waits for its player, as a 2-seat table must."""
    from allegra_lan.net import node
    from allegra_lan.sim import world

    r = run_seed(515785, verbose=True)
    assert r.ok, r.failures
    assert r.facts["lost to a power cut"] == 0
    assert any("node 0 restarts at seq 43" in line for line in r.trace)
    assert world.SYNC_EVERY == node.SYNC_EVERY  # the world's copy of the shell's constant


def test_a_power_cut_that_takes_the_play_back_to_the_ceremony_disturbs_its_start() -> None:
    """Seed 515785's table with node 1 gone for good early in the play and node 0's power cut
    right after it, on 8 streams of the world's draws: a cut within SYNC_EVERY of the start
    can still take the whole play (the product's rule: nothing a person played is lost, and
    here no peer is left to give the rest back), so node 0 comes back in the ceremony and,
    after SETUP_TIMEOUT, gives the start up (stream 3, gone at seq 10: back at seq 3). That is
    a start a fault disturbed, as one that struck in the ceremony; the checker took only
    those, and failed such a run ("node 0 stopped early: p1 did not send its commit")."""
    import dataclasses

    from allegra_lan.sim.run import judge
    from allegra_lan.sim.scenario import FaultPlan
    from allegra_lan.sim.world import World

    base = scenario(515785)
    failed, gave_up = [], 0
    for stream in range(8):
        for at in (10, 20, 30, 40):
            sc = dataclasses.replace(base, seed=515785 + 1000 * stream, faults=(
                FaultPlan("gone", at, node=1), FaultPlan("powercut", at + 1, node=0, duration=1.7)))
            w = World(sc, verbose=True)
            w.run()
            gave_up += any("node 0 note: the game cannot start" in line for line in w.rec.trace)
            failed += [f"stream {stream}, gone at seq {at}: {f}" for f in judge(w).failures]
    assert failed == []
    assert gave_up >= 1


def test_a_proposer_that_calls_its_takeover_off_asks_again_for_the_moves_it_held_back() -> None:
    """Seed 574353 of the long run (Grande, 3 seats; a 30 s partition puts node 0 alone at
    seq 23, the other side takes over its seat and plays on to seq 48, node 2 then goes for
    good). Right after the heal node 0, which still held 23 events, proposed to take over
    the seat of seq 23's author, and so refused that seat's events at seq 23 as promised
    (sync.Replica._check_barred): the 25 events node 1 sent were dropped without a word.
    Node 1 said no, node 0 called the proposal off, and nobody sent them again: node 0
    stayed at 23 events and node 1 at 48 for the rest of the game. A released consent
    already asked again with a `have`; calling one's own proposal off now does too."""
    r = run_seed(574353, verbose=True)
    assert r.ok, r.failures
    assert r.faults["partition"] == 1 and r.faults["gone"] == 1
    off = next(i for i, line in enumerate(r.trace) if "node 0 note: no takeover of" in line)
    assert any(" 0 -> 1 have " in line for line in r.trace[off - 2:off + 1])


def test_seed_631998_a_peer_linked_again_at_the_end_of_linger_gets_the_end() -> None:
    """Seed 631998 of the long run (ALLEGRA, 3 seats, node 0 cut off from [1, 2] for 18.9 s
    at seq 121). Nodes 1 and 2, a majority, took seat 0 over and finished at 126 events;
    LINGER (10 s) then ran out 0.16 s after the heal: both linked to node 0 again and left
    1.4 ms later, before answering node 0's `have 120`, and node 0 kept 120 events for good.
    A finished peer now lingers LINGER_GRACE more when a seated peer that lacks its end links
    again (net/peer/core.py `_linger_for`)."""
    r = run_seed(631998, verbose=True)
    assert r.ok, r.failures
    assert r.outcome == "finished" and r.faults["partition"] == 1
    assert any(" -> 0 events from 12" in line for line in r.trace)


def test_seed_655064_a_resumed_peer_admits_every_seated_peer_of_the_genesis() -> None:
    """Seed 655064 of the long run (ALLEGRA, 6 seats, found on eee1d8c): node 0, the host,
    went for good while node 4 was killed and resumed from its .seats file, whose lobby was
    saved before the host's last lobby reached it and lacked node 2's claim. So the resumed
    node 4 turned node 2's every dial away ("this table admits only its seated peers now"),
    node 2 counted seat 4 missing too and said no to every takeover of seat 0, and the game
    waited for ever. A peer now admits the genesis's seat keys as well as its lobby's owners
    (`Peer.expected_keys`)."""
    r = run_seed(655064, verbose=True)
    assert r.ok, r.failures
    assert r.faults["gone"] == 1 and r.faults["kill"] == 1 and r.facts["takeover"] >= 1
    assert not any("admits only its seated peers" in line for line in r.trace)


def test_seed_661167_twins_before_a_resumed_peers_own_run_are_compared() -> None:
    """Seed 661167 of the long run (Grande, 4 seats, found on eee1d8c): node 2 forked at
    seq 31 while node 1 was down; node 1 came back with its bots' events 33-34 unconfirmed
    and node 0 one twin short of them. Node 1 answered node 0's `have 32` by asking from 33
    (where it went on alone), node 0 answered with `have 32` again, and the game waited for
    ever with the two logs parted at 31. The rewind now applies only where the logs may part
    at or after the run alone (`Replica._rewind`), so node 1 shows its twin and every
    honest peer stops with one fork proof."""
    r = run_seed(661167, verbose=True)
    assert r.ok, r.failures
    assert r.outcome == "stopped" and r.faults["forking"] == 1 and r.faults["kill"] >= 1
    assert any("node 0 keeps a fork proof" in line for line in r.trace)


# ---------------------------------------------------------------- the fair deal (issue 12)


def test_the_deal_checker_names_only_the_cheater_and_every_table_alike() -> None:
    """`check_deal` on the tables of fair-deal games (each seat's own table, as each honest
    peer holds it): an honest deal passes; a wrong share and a copied card are named on
    every table, and blaming any other seat for them fails."""
    from allegra_lan.deal.cheats import CopyCard, WrongShare
    from allegra_lan.sim.invariants import check_deal

    from helpers import fair_game

    honest = fair_game("allegra", 3, tag="sim-deal")
    tables = {f"node {s}": t for s, t in enumerate(honest.seat_tables)}
    assert check_deal(tables, None) == []
    assert check_deal(tables, 1) == [f"node {s} ended the deal without naming seat 1, which cheated"
                                     for s in range(3)]
    for cheat in (WrongShare(seat=2, batch=1), CopyCard(seat=2, into=0, of=1)):
        g = fair_game("grande", 3, cheat=cheat, tag=f"sim-deal-{type(cheat).__name__}")
        honest_tables = {f"node {s}": g.seat_tables[s] for s in (0, 1)}
        assert check_deal(honest_tables, 2) == []
        assert check_deal(honest_tables, None) != []
        assert any("blames seat(s) [2]" in p for p in check_deal(honest_tables, 0))


# ---------------------------------------------------------------- signed results (issue 13)


def test_the_results_checker_wants_one_proof_everywhere_naming_the_forger() -> None:
    KEY, GAME = SigningKey(bytes(range(32))), bytes(16)
    proof = sign_event(KEY, game=GAME, seq=9, prev=bytes(32), kind="result",
                       body={"round": 0, "hash": bytes(16), "scores": [1], "totals": [1],
                             "at": 1_800_000_000_000}).signed
    other = sign_event(KEY, game=GAME, seq=9, prev=bytes(32), kind="result",
                       body={"round": 0, "hash": b"x" * 16, "scores": [1], "totals": [1],
                             "at": 1_800_000_000_000}).signed
    why = f"result: seat 1 (b) signed round 1 with state hash {'0' * 32}, this engine's is {'ab' * 16}"
    assert check_disagreements({"a": proof, "b": proof}, {"a": why, "b": why}, forger_seat=1) == []
    assert check_disagreements({"a": None, "b": None}, {}, forger_seat=None) == []
    assert check_disagreements({"a": proof}, {"a": why}, forger_seat=None) == \
        ["a holds a disagreement proof with no forged result"]
    assert check_disagreements({"a": proof, "b": None}, {"a": why}, forger_seat=1) == \
        ["b hold no disagreement proof while a seat forged a result"]
    assert check_disagreements({"a": proof, "b": other}, {"a": why, "b": why}, forger_seat=1) == \
        ["different disagreement proofs: 2 distinct events"]
    assert check_disagreements({"a": proof}, {"a": why}, forger_seat=2) == \
        [f"a stopped with {why!r}, not naming seat 2 and both hashes"]


def test_a_forged_result_stops_every_honest_peer_with_the_same_proof_naming_the_seat() -> None:
    """Seed 82 (5 seats): node 0 loses power and the others hand its seat 0 to a bot that
    the forged-result adversary (node 3) runs; that bot signs round 1's result of seat 0 with
    a wrong state hash, with seat 0's new key. Every honest peer refuses it, stops naming
    seat 0 and both hashes, and holds the same signed result as its proof (the `results`
    invariant); the adversary's own peer holds a fork of its own making."""
    r = run_seed(82, verbose=True)
    assert r.ok, r.failures
    assert r.facts["takeover"] >= 1 and r.checks["results"] == 1
    assert any("adversary 3 signs a forged result for seat 0" in line for line in r.trace)
    stops = {line.split(" done (stopped: ", 1)[1] for line in r.trace if " done (stopped: result: " in line}
    assert len(stops) == 1 and next(iter(stops)).startswith("result: seat 0 (p0) signed round 1 with state hash ")
    assert sum(" done (stopped: result: seat 0 " in line for line in r.trace) == 3


def test_a_peer_held_by_its_consent_to_a_lying_adversary_is_judged_by_its_prefix() -> None:
    """Seeds 605120 and 607606 of the long run (found on 462d3e8, before signed results
    changed every event id, so they no longer replay here): the `withholding/moves`
    adversary proposed taking an absent seat over, got every consent, wrote the takeover and
    showed it to nobody, while staying linked. A peer that consented keeps its promise while
    the proposer stays (net/takeover.py `Promise`: a release could split the log if the
    takeover was written), so it refused the seat's own move at that seq when the seat's
    player came back, and the checker failed the run: node 0 held 34 events, node 2 33, a
    prefix. Against a present, lying proposer the takeover keeps safety and gives up
    liveness, as every withholding adversary's table does: such a peer is now judged by its
    log's prefix. (On 462d3e8 with this checker both seeds pass; the long run's summary counts
    the fact "held by a promise to an adversary" to find one on today's code.)"""
    from allegra_lan.net.takeover import Promise

    liar, honest = b"L" * 32, b"H" * 32
    promise = Promise(proposer=liar, seq=33, prev=bytes(32), seats=((0, b"K" * 32),))
    assert promised_to_an_adversary(33, {33: promise}, frozenset({liar}))
    assert not promised_to_an_adversary(34, {33: promise}, frozenset({liar}))  # past it
    assert not promised_to_an_adversary(33, {33: promise}, frozenset({honest}))  # an honest proposer
    assert not promised_to_an_adversary(33, {}, frozenset({liar}))

