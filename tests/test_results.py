"""Signed round results and times in the log (issue 13): every seat signs each round's result
right after the round-ending move, the table takes only the result its own engine computed,
and an older log (no start time in its genesis) folds exactly as before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allegra_lan.local import LocalGame
from allegra_lan.log.bodies import RESULT_BODY, check_body
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.replay import read_replay
from allegra_lan.log.results import CLOCK_SKEW, MAX_TIME, MIN_TIME, Owed, duration, iso_time
from allegra_lan.log.schema import SchemaError
from allegra_lan.rules import ruleset_for, ruleset_from_dict
from allegra_lan.table import Disagreement, Refused, Stage, Table, fold

from helpers import derived, new_key, play_random, players, takeover

ROOT = Path(__file__).resolve().parents[1]
START = 1_800_000_000_000  # 2027-01-15: a fixed clock, so these logs are the same every run


class Clock:
    """A clock that moves 1.5 s on each reading (ms since the epoch)."""

    def __init__(self, start: int = START) -> None:
        self.now = start

    def __call__(self) -> int:
        self.now += 1500
        return self.now


def signed_game(variant: str = "grande", n: int = 3, *, rounds: int = 2,
                clock: Clock | None = None) -> LocalGame:
    """A local game of this version (a start time, so signed results), played to its end."""
    rs = ruleset_from_dict({**ruleset_for(variant).to_dict(), "rounds": rounds})
    g = LocalGame(rs, players(n), game_id=derived("signed", variant, n)[:16],
                  nonces=[derived("signed-nonce", i) for i in range(n)], clock=clock or Clock())
    play_random(g, 100_000)
    return g


def at_first_result(g: LocalGame) -> Table:
    """A table holding `g`'s log up to its first result (the first round just ended)."""
    first = next(i for i, e in enumerate(g.table.events) if e.kind == "result")
    t, fault = fold(e.signed for e in g.table.events[:first])
    assert fault is None
    return t


def result_of(g: LocalGame, t: Table, seat: int, **change: Any) -> bytes:
    """Seat `seat`'s result for `t`'s next seq, as the table says it is owed, changed."""
    owed = t.owed()
    assert owed is not None
    body = {**owed.body_at(START + 60_000), **change}
    return sign_event(g.players[seat].identity.key, game=g.game_id, seq=t.seq, prev=t.head,
                      kind="result", body=body).signed


def refused(t: Table, signed: bytes, fault: str) -> Refused:
    with pytest.raises(Refused) as info:
        t.append(signed)
    assert info.value.fault == fault, info.value
    return info.value


def test_every_round_ends_with_every_seats_result_in_seat_order_then_the_next_round() -> None:
    g = signed_game("allegra", 3, rounds=3)
    t = g.table
    assert t.over and t.signs_results and t.genesis is not None and t.genesis.started is not None
    assert t.state is not None and len(t.state.results) == 3 and len(t.results) == 3
    kinds = [e.kind for e in t.events]
    for r, signed in enumerate(t.results):
        assert [t.seat_of(e.author) for e in signed] == [0, 1, 2]
        first = kinds.index("result") if r == 0 else t.events.index(signed[0])
        assert kinds[first:first + 3] == ["result"] * 3
        assert kinds[first - 1] not in ("result", "genesis")  # right after the round's last move
        rr = t.state.results[r]
        for e in signed:
            assert e.body["round"] == r and e.body["scores"] == list(rr.scores)
            assert e.body["totals"] == list(rr.totals) and len(e.body["hash"]) == 16
    assert kinds[-3:] == ["result"] * 3  # the game is over once the last round's are all in
    started, ended = t.times()
    assert started == t.genesis.started and ended == max(e.body["at"] for e in t.results[-1])
    assert ended > started


def test_the_hash_signed_is_the_state_hash_after_the_round_ending_move() -> None:
    g = signed_game("grande", 2, rounds=2)
    first = next(i for i, e in enumerate(g.table.events) if e.kind == "result")
    t, _ = fold(e.signed for e in g.table.events[:first])
    assert t.stage() is Stage.RESULT and t.next_author() == 0
    assert g.table.events[first].body["hash"].hex() == t.state_hash()


def test_a_result_the_engine_does_not_compute_is_a_disagreement_naming_the_seat_and_both_hashes() -> None:
    g = signed_game("grande", 3)
    t = at_first_result(g)
    t.append(result_of(g, t, 0))
    ours = t.owed().body["hash"].hex()  # type: ignore[union-attr]
    bad = bytes(16)
    e = refused(t, result_of(g, t, 1, hash=bad), "result")
    assert isinstance(e, Disagreement) and e.seat == 1 and e.ours == ours and e.theirs == bad.hex()
    assert e.reason == (f"result: seat 1 (p1) signed round 1 with state hash {bad.hex()}, "
                        f"this engine's is {ours}")
    # Scores or totals that differ, with the right hash: a disagreement too, both hashes named.
    scores = list(t.owed().body["scores"])  # type: ignore[union-attr]
    scores[2] += 1
    e = refused(t, result_of(g, t, 1, scores=scores), "result")
    assert isinstance(e, Disagreement) and f"state hash {ours}, this engine's is {ours}" in e.reason
    assert "it signed scores " in e.reason
    e = refused(t, result_of(g, t, 1, round=1), "result")
    assert isinstance(e, Disagreement) and "it signed round 2 for 1" in e.reason
    # The table changed nothing: the right result is taken after all that.
    assert t.append(result_of(g, t, 1)) is not None and t.next_author() == 2


def test_a_result_by_another_seat_a_move_instead_or_a_clock_before_the_start_is_refused() -> None:
    g = signed_game("grande", 3)
    t = at_first_result(g)
    assert "result of round 1" in refused(t, result_of(g, t, 1), "author").reason
    move = sign_event(g.players[0].identity.key, game=g.game_id, seq=t.seq, prev=t.head,
                      kind="draw_deck", body={}).signed
    assert "seat 0's result of round 1 is due here, not a draw_deck" in refused(t, move, "result").reason
    assert t.genesis is not None and t.genesis.started is not None
    early = t.genesis.started - CLOCK_SKEW - 1
    assert "before the game's start" in refused(t, result_of(g, t, 0, at=early), "result").reason
    t.append(result_of(g, t, 0, at=t.genesis.started - CLOCK_SKEW))  # a clock a little behind
    assert "field at: must be" in refused(t, result_of(g, t, 1, at=MAX_TIME + 1), "result").reason
    assert "field hash" in refused(t, result_of(g, t, 1, hash=b"x"), "result").reason


def test_a_seat_taken_over_signs_its_result_with_its_new_key() -> None:
    """A seat that never signs stops the game as one that never moves: the others give it to
    a bot at its result's seq, and the bot's new key signs (Table.keys)."""
    g = signed_game("grande", 3)
    t = at_first_result(g)
    t.append(result_of(g, t, 0))
    bot = new_key("result-bot")
    assert t.append(takeover(g, t, [1], keys=[bot])) is not None
    assert t.keys[1] == bot.public and t.stage() is Stage.RESULT and t.next_author() == 1
    assert refused(t, result_of(g, t, 1), "author")  # the old key may no longer sign
    owed = t.owed()
    assert owed is not None
    t.append(sign_event(bot.key, game=g.game_id, seq=t.seq, prev=t.head, kind="result",
                        body=owed.body_at(START)).signed)
    t.append(result_of(g, t, 2))
    assert t.stage() is Stage.PLAY and len(t.results) == 1
    # A takeover of a seat that does not owe the next result is refused, as for moves.
    t2 = at_first_result(g)
    assert "seat 0, which must act now" in refused(t2, takeover(g, t2, [1]), "takeover").reason


def test_an_older_log_has_no_results_and_keeps_its_state_hashes() -> None:
    manifest = __import__("json").loads((ROOT / "replays" / "manifest.json").read_text())
    for entry in manifest["replays"]:
        t, fault = fold(read_replay(ROOT / "replays" / entry["file"]).events)
        assert fault is None and not t.signs_results and t.results == [] and t.owed() is None
        assert t.state_hash() == entry["state_hash"] and t.over == entry["finished"]
        assert t.times() == (None, None)


def test_a_genesis_start_time_out_of_range_is_a_setup_fault() -> None:
    g = signed_game("grande", 2, rounds=1)
    ev = g.table.events[0]
    for started in (MIN_TIME - 1, MAX_TIME + 1, True, "now"):
        body = {**ev.body, "started": started}
        bad = sign_event(g.players[0].identity.key, game=g.game_id, seq=0, prev=ev.prev,
                         kind="genesis", body=body).signed
        e = refused(Table(), bad, "setup")
        assert "started" in e.reason, e.reason


def test_owed_body_never_claims_a_time_before_the_start_or_out_of_range() -> None:
    o = Owed(1, "result", {"round": 0}, not_before=START)
    assert o.body_at(START - 10_000) == {"round": 0, "at": START}
    assert o.body_at(START + 5) == {"round": 0, "at": START + 5}
    assert o.body_at(10**15)["at"] == MAX_TIME
    assert iso_time(START) == "2027-01-15T08:00:00.000Z" and iso_time(None) == "-"
    assert duration(3_725_000) == "1 h 02 min 05 s" and duration(750_000) == "12 min 30 s"
    assert duration(45_999) == "45 s" and duration(None) == "-"


values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.binary(max_size=40)
    | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=20)

near_result = st.fixed_dictionaries({
    "round": st.integers(-2, 100) | values, "hash": st.binary(min_size=15, max_size=17) | values,
    "scores": st.lists(st.integers(-2**32, 2**32), max_size=17) | values,
    "totals": st.lists(st.integers(-2**32, 2**32), max_size=17) | values,
    "at": st.integers(MIN_TIME - 2, MAX_TIME + 2) | values,
}, optional={"extra": values})


@settings(max_examples=300, deadline=None)
@given(body=values | near_result)
def test_the_result_schema_takes_any_value_and_says_yes_or_one_line(body: Any) -> None:
    try:
        check_body("result", body)
    except SchemaError as e:
        assert "\n" not in str(e) and str(e)
    else:
        RESULT_BODY.check(body)  # the same one schema
        assert set(body) == {"round", "hash", "scores", "totals", "at"}


GAME = signed_game("grande", 3)
AT_RESULT = [e.signed for e in at_first_result(GAME).events]


@settings(max_examples=150, deadline=None)
@given(body=values | near_result)
def test_a_signed_result_of_any_body_is_taken_or_refused_never_an_error(body: Any) -> None:
    t, _ = fold(AT_RESULT)
    signed = sign_event(GAME.players[0].identity.key, game=GAME.game_id, seq=t.seq, prev=t.head,
                        kind="result", body=body if isinstance(body, dict) else {"x": body}).signed
    try:
        t.append(signed)
    except Refused as e:
        assert e.fault == "result" and "\n" not in e.reason
    else:
        assert t.next_author() == 1


def test_a_seat_whose_peer_is_away_when_its_result_is_due_may_be_taken_over() -> None:
    """net/takeover.py: the seats that stay propose a takeover where a missing seat must write,
    its result as well as its move (more than half of the table staying, as always)."""
    from allegra_lan.net.takeover import seats_to_take

    g = signed_game("grande", 3)
    t = at_first_result(g)
    t.append(result_of(g, t, 0))  # seat 1 owes the next result
    run = {0: b"a" * 32, 1: b"b" * 32, 2: b"c" * 32}
    assert seats_to_take(t, run, {b"a" * 32, b"c" * 32}) == [1]
    assert seats_to_take(t, run, {b"a" * 32, b"b" * 32}) == []  # seat 2 is away, but 1 owes
    assert seats_to_take(t, run, {b"a" * 32}) == []  # two of three away: no majority stays


def test_a_replica_keeps_a_disagreement_as_the_proof_and_blames_no_one_for_passing_it_on() -> None:
    """net/sync.py: a signed result this engine refuses is the game's stop, not the fault of the
    peer that brought it (an honest peer passes the proof on in a `disagree` message)."""
    from allegra_lan.net.sync import Replica

    g = signed_game("grande", 3)
    t = at_first_result(g)
    r = Replica(t)
    r.connected("relay")
    bad = result_of(g, t, 0, hash=bytes(16))
    out = r.received("relay", {"t": "events", "from": t.seq, "items": [bad]})
    assert r.disagreement is not None and r.disagreement.event.signed == bad
    assert r.faults == [] and t.seq == len(AT_RESULT)
    assert [m["t"] for _, m in out] == ["refused"]  # the sender hears why, as for any refusal
