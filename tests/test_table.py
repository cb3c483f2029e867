"""The Table: a game as the fold of its signed log; every refusal changes nothing."""

from __future__ import annotations

import pytest

from allegra_lan.log.ceremony import commitment
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.knock import sign_knock
from allegra_lan.rules import Give, legal_moves, ruleset_for, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Fork, Refused, Table, fold, move_body

from helpers import local, play_random, players


def test_a_whole_signed_game_folds_to_the_same_result() -> None:
    g = local("allegra", 4)
    play_random(g, 10_000)
    assert to_act(g.state) is None
    t, fault = fold([e.signed for e in g.table.events])
    assert fault is None
    assert t.state is not None and t.state.totals == g.state.totals
    assert t.state_hash() == g.table.state_hash()


def _refused_unchanged(t: Table, signed: bytes, fault: str) -> Refused:
    before = (t.seq, t.head, t.state_hash())
    with pytest.raises(Refused) as info:
        t.append(signed)
    assert info.value.fault == fault, info.value
    assert (t.seq, t.head, t.state_hash()) == before
    return info.value


def test_wrong_author_wrong_seq_wrong_prev_are_refused() -> None:
    g = local()
    play_random(g, 5)
    t = g.table
    d = to_act(g.state)
    assert d is not None
    move = legal_moves(g.state)[0]
    kind, body = move_body(move)
    other = g.players[(d.seat + 1) % 3].identity.key
    me = g.players[d.seat].identity.key
    r = _refused_unchanged(t, sign_event(other, game=g.game_id, seq=t.seq, prev=t.head, kind=kind,
                                         body=body).signed, "author")
    assert "wrong author" in r.reason
    _refused_unchanged(t, sign_event(me, game=g.game_id, seq=t.seq + 1, prev=t.head, kind=kind,
                                     body=body).signed, "seq")
    _refused_unchanged(t, sign_event(me, game=g.game_id, seq=t.seq, prev=bytes(32), kind=kind,
                                     body=body).signed, "prev")
    stranger = Identity.from_seed(b"stranger").key
    r = _refused_unchanged(t, sign_event(stranger, game=g.game_id, seq=t.seq, prev=t.head, kind=kind,
                                         body=body).signed, "author")
    assert "holds no seat" in r.reason
    _refused_unchanged(t, sign_event(me, game=bytes(16), seq=t.seq, prev=t.head, kind=kind,
                                     body=body).signed, "game")


def test_illegal_move_is_refused_with_the_engines_reason() -> None:
    g = local()
    play_random(g, 5)
    t = g.table
    d = to_act(g.state)
    assert d is not None
    me = g.players[d.seat].identity.key
    bad = sign_event(me, game=g.game_id, seq=t.seq, prev=t.head, kind="swap",
                     body={"a": [d.seat, 9, 9], "b": [d.seat, 0, 0]}).signed
    r = _refused_unchanged(t, bad, "illegal")
    assert r.reason.startswith("illegal move")
    garbage = sign_event(me, game=g.game_id, seq=t.seq, prev=t.head, kind="place",
                         body={"card": "x", "at": [0, 0, 0]}).signed
    _refused_unchanged(t, garbage, "illegal")


def test_fork_is_reported_with_both_events() -> None:
    g = local()
    play_random(g, 20)
    t, _ = fold([e.signed for e in g.table.events[:-1]])
    last = g.table.events[-1]
    t.append(last.signed)
    assert t.append(last.signed) is None  # the same event again is not news
    # The same author signs something else for that seq: a fork.
    seat = t.seat_of(last.author)
    assert seat is not None
    twin = sign_event(g.players[seat].identity.key, game=last.game, seq=last.seq, prev=last.prev,
                      kind=last.kind, body={**last.body, "zz": 1}).signed
    with pytest.raises(Fork) as info:
        t.append(twin)
    assert info.value.first.signed == last.signed and info.value.second.signed == twin
    assert info.value.seq == last.seq


def test_reveal_that_does_not_match_its_commitment_is_refused() -> None:
    ps = players(2)
    t = Table()
    game = bytes(range(16))

    def put(seat: int, kind: str, body: dict) -> None:
        t.append(sign_event(ps[seat].identity.key, game=game, seq=t.seq, prev=t.head, kind=kind,
                            body=body).signed)

    rs = ruleset_for("grande").to_dict()
    put(0, "genesis", {"table": "t", "ruleset": rs,
                       "seats": [{"name": p.name, "key": p.identity.public} for p in ps]})
    put(0, "accept", {})
    put(1, "accept", {})
    put(0, "commit", {"commit": commitment(b"a" * 32)})
    put(1, "commit", {"commit": commitment(b"b" * 32)})
    put(0, "reveal", {"nonce": b"a" * 32})
    with pytest.raises(Refused, match="does not match its commitment"):
        put(1, "reveal", {"nonce": b"c" * 32})
    put(1, "reveal", {"nonce": b"b" * 32})
    assert t.stage() == "play" and t.seed is not None


def test_give_needs_the_receivers_knock_for_that_draw() -> None:
    g = local("allegra", 3)
    rng = Stream(b"k" * 32, "knock")
    # Play until the active seat holds a deck card it could give.
    for _ in range(2000):
        lm = legal_moves(g.state)
        gives = [m for m in lm if isinstance(m, Give)]
        if gives:
            break
        g.submit(lm[rng.below(len(lm))])
    else:
        pytest.fail("no deck draw in 2000 moves")
    give = gives[0]
    t = g.table
    d = to_act(g.state)
    assert d is not None
    me = g.players[d.seat].identity.key
    wrong_knocker = g.players[(give.to + 1) % 3].identity.key
    forged = sign_knock(wrong_knocker, g.game_id, t.head)
    kind, body = move_body(give, forged)
    r = _refused_unchanged(t, sign_event(me, game=g.game_id, seq=t.seq, prev=t.head, kind=kind,
                                         body=body).signed, "illegal")
    assert "not signed by the seat that receives" in r.reason
    stale = sign_knock(g.players[give.to].identity.key, g.game_id, bytes(32))
    kind, body = move_body(give, stale)
    r = _refused_unchanged(t, sign_event(me, game=g.game_id, seq=t.seq, prev=t.head, kind=kind,
                                         body=body).signed, "illegal")
    assert "another draw" in r.reason
    g.submit(give, g.knock(give.to))
    assert to_act(g.state) is not None and to_act(g.state).seat == give.to  # type: ignore[union-attr]
