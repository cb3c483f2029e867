"""The fair deal's events and their fold (allegra_lan/deal/events.py, ledger.py), proven with
real parts in one process: real signed events, one ledger per peer, engines that learn
only from their own peer's ledger, whole bot games, and the dishonest dealer of issue 12,
detected and attributed alike by every honest peer."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.bots.fair_driver import LedgerDeal, LedgerGame, identity, play_ledger_game
from allegra_lan.deal.cheats import CopyCard, SwapIn, WithholdSecret, WrongSealedShare, WrongShare
from allegra_lan.deal.events import (
    KINDS, MAX_PART_SHARES, MAX_PASS_CARDS, SCHEMAS, EventBodyError, KeysBody, SecretBody, SharesBody,
    ShuffleBody, EscrowBody, decode, encode,
)
from allegra_lan.deal.ledger import Ledger, LedgerError
from allegra_lan.deal.verdict import Fault
from allegra_lan.log.envelope import MAX_EVENT, NO_PREV, sign_event
from allegra_lan.rules import AllegraRuleset, GrandeRuleset
from allegra_lan.rules.engine import to_act
from allegra_lan.rules.cards import PileInfo, RevealRequest
from allegra_lan.rules.rng import seed_from_number
from allegra_lan.rules.state import state_hash

ONE_ALLEGRA = AllegraRuleset(rounds=1)
ONE_GRANDE = GrandeRuleset(rounds=1)


def secrets_for(players: int, tag: int) -> list[bytes]:
    return [bytes([tag, seat]) * 16 for seat in range(players)]


def game_id(tag: int) -> bytes:
    return bytes([0x5A, tag]) * 8


# ----------------------------------------------------------------- the bodies


def values() -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.binary(max_size=90),
                     st.text(max_size=8), st.sampled_from([b"\x00" * 32, b"\x01" * 64, b"\x02" * 80, 0, 2**32]))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["commitment", "box_key", "deal_key", "key_proof", "pieces", "round",
                                         "pile", "part", "cards", "batch", "shares", "secret", "x"]),
                        inner, max_size=5)), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(kind=st.one_of(st.sampled_from(KINDS), st.text(max_size=12), st.integers()), body=values())
def test_every_decoder_gives_a_body_or_one_line_error_for_any_value(kind: Any, body: Any) -> None:
    try:
        out = decode(kind, body)
    except EventBodyError as e:
        assert "\n" not in str(e) and str(e)
        return
    assert encode(out) == (kind, body)  # what decodes is exactly what encodes back


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(KINDS), body=values(), author=st.integers(-2, 5))
def test_a_ledger_refuses_any_hostile_event_in_one_line_and_stays_usable(kind: str, body: Any, author: int) -> None:
    ledger = Ledger(game_id(1), 3)
    try:
        ledger.take(author, kind, body)
    except LedgerError as e:
        assert "\n" not in str(e)
    assert ledger.owed() is not None and ledger.faults == [] or ledger.faults[0].seat == author


def snapshots() -> dict[str, tuple[Ledger, int, dict[str, Any]]]:
    """The author's ledger at the first moment each kind is owed in a real game, with the
    author and the honest body (made once, copied per example)."""
    out: dict[str, tuple[Ledger, int, dict[str, Any]]] = {}

    def watch(ledger: Ledger, owed: Any, body: Any) -> Any:
        kind, fields = encode(body)
        out.setdefault(kind, (copy.deepcopy(ledger), owed.seat, fields))
        return body

    cheat_game(watch, players=2, tag=6)
    assert sorted(out) == sorted(KINDS)
    return out


SNAPSHOTS: dict[str, tuple[Ledger, int, dict[str, Any]]] = {}


def mutated(fields: dict[str, Any]) -> st.SearchStrategy[Any]:
    """The honest body with some of its byte strings flipped, cut or replaced, fields
    dropped or renumbered: near misses that reach the checks past the schema."""
    def flip(b: bytes, i: int, bit: int) -> bytes:
        if not b:
            return b
        i %= len(b)
        return b[:i] + bytes([b[i] ^ (1 << bit)]) + b[i + 1:]

    def walk(v: Any, draw: Any) -> Any:
        if isinstance(v, bytes):
            return draw(st.one_of(st.just(v), st.builds(flip, st.just(v), st.integers(0, 99), st.integers(0, 7)),
                                  st.binary(min_size=len(v), max_size=len(v)), st.just(v[:-1])))
        if isinstance(v, int):
            return draw(st.one_of(st.just(v), st.integers(0, 3), st.just(v + 1)))
        if isinstance(v, list):
            items = [walk(x, draw) for x in v[:draw(st.integers(0, 3))] ] if draw(st.booleans()) else [walk(x, draw) for x in v]
            return items
        if isinstance(v, dict):
            return {k: walk(x, draw) for k, x in v.items() if draw(st.integers(0, 9))}
        return v

    return st.composite(lambda draw: walk(fields, draw))()


@settings(max_examples=120, deadline=None)
@given(data=st.data())
def test_a_ledger_judges_any_near_miss_of_a_real_event_as_a_fault_or_a_refusal(data: Any) -> None:
    """Past the schema: a shuffle, shares and a secret of a real game, mutated; the ledger
    refuses the event (LedgerError, one line) or takes it and names its author, never
    anything else."""
    if not SNAPSHOTS:
        SNAPSHOTS.update(snapshots())
    kind = data.draw(st.sampled_from(sorted(SNAPSHOTS)))
    ledger, author, fields = SNAPSHOTS[kind]
    ledger = copy.deepcopy(ledger)
    body = data.draw(mutated(fields))
    try:
        ledger.take(author, kind, body)
    except LedgerError as e:
        assert "\n" not in str(e)
        return
    assert all(f.seat == author for f in ledger.faults)
    if body == fields:
        assert ledger.faults == []


def test_bodies_round_trip_and_keep_within_the_wire_limits() -> None:
    """The largest bodies, signed: a 160-card pass (one seat's, any number of seats), a
    full part of a pass and of shares; every one fits one signed event (16 KiB)."""
    key = identity(game_id(2), 0)
    bodies = [
        KeysBody(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32, b"\x04" * 64),
        EscrowBody(tuple((b"\x05" * 32, b"\x06" * 80) for _ in range(15))),
        ShuffleBody(7, 3, 0, tuple(bytes([i % 256]) * 64 for i in range(160))),
        ShuffleBody(2**32 - 1, 2**32 - 1, 2**32 - 1, tuple(b"\x07" * 64 for _ in range(MAX_PASS_CARDS))),
        SharesBody(2**32 - 1, 2**32 - 1, tuple((2**32 - 1, b"\x08" * 32, b"\x09" * 64) for _ in range(MAX_PART_SHARES))),
        SecretBody(b"\x0a" * 32),
    ]
    sizes = []
    for b in bodies:
        kind, fields = encode(b)
        assert decode(kind, fields) == b
        ev = sign_event(key, game=game_id(2), seq=2**32 - 1, prev=NO_PREV, kind=kind, body=fields)
        sizes.append(len(ev.signed))
    assert max(sizes) <= MAX_EVENT
    assert 10_000 < sizes[2] < 11_000  # the 160-card pass, as the docs say
    assert set(SCHEMAS) == set(KINDS)


# ----------------------------------------------------------------- the order and the refusals


def test_owed_names_one_author_at_a_time_and_refuses_every_other() -> None:
    secrets = secrets_for(3, 3)
    deal = LedgerDeal(game_id(3), secrets)
    spectator = deal.ledgers[-1]
    assert str(spectator.owed()) == "seat 0's deal_keys"
    assert deal.ledgers[1].mine() is None  # not seat 1's turn: its ledger makes nothing
    kind, fields = encode(KeysBody(b"\x01" * 32, b"\x02" * 32, b"\x03" * 32, b"\x04" * 64))
    with pytest.raises(LedgerError, match="when seat 0's deal_keys is owed"):
        spectator.take(1, kind, fields)
    deal.run()  # keys and escrow of every seat, in seat order
    assert [e.kind for e in deal.log] == ["deal_keys"] * 3 + ["deal_escrow"] * 3
    assert [deal.seat_of[e.author] for e in deal.log] == [0, 1, 2, 0, 1, 2]
    assert spectator.owed() is None and not spectator.dealing
    with pytest.raises(LedgerError, match="no deal event is owed"):
        spectator.take(0, "deal_secret", {"secret": secrets[0]})
    with pytest.raises(ValueError, match="spectator's ledger holds no secret"):
        Ledger(game_id(3), 3, None, secrets[0])


@pytest.mark.parametrize("change,message", [
    (lambda b: dataclasses.replace(b, shares=((b.shares[0][0] + 1,) + b.shares[0][1:],) + b.shares[1:]),
     "not of the cards it owes"),
    (lambda b: dataclasses.replace(b, batch=b.batch + 1), "when seat 0's deal_shares of batch 0, part 0 is owed"),
    (lambda b: dataclasses.replace(b, shares=b.shares + b.shares), "not of the cards it owes"),
])
def test_shares_for_other_cards_or_another_batch_are_refused_not_taken(change: Any, message: str) -> None:
    """Not a fault of its author but an event that is not the one owed: the table must not
    take it (the seq stays open for the right one)."""
    def cheat(ledger: Ledger, owed: Any, body: Any) -> Any:
        return change(body) if isinstance(body, SharesBody) else body
    with pytest.raises(LedgerError, match=message):
        cheat_game(cheat, players=2, tag=5)


# ----------------------------------------------------------------- honest games


class Walk:
    """After every move: one public state on every engine, and no engine holding a value
    its seat was not shown (a peeked value only in the peeker's engine, none in the
    spectator's)."""

    def __init__(self) -> None:
        self.moves = 0
        self.private_seen = 0

    def __call__(self, engines: Any, move: Any) -> None:
        self.moves += 1
        assert len({state_hash(e.state) for e in engines}) == 1
        assert len({to_act(e.state) for e in engines}) == 1
        assert engines[-1].seat is None and engines[-1].source._private == {}
        for a in engines[:-1]:
            for key, value in a.source._private.items():
                self.private_seen += 1
                for b in engines:
                    if b is not a and key not in b.source._public:
                        assert b.source.known(*key) is None  # nobody else knows a peeked value


def check_honest(game: LedgerGame, players: int) -> None:
    engines = game.engines
    assert game.stopped is None and to_act(engines[-1].state) is None
    assert len({state_hash(e.state) for e in engines}) == 1  # equal public hashes everywhere
    spectator = engines[-1].source
    assert spectator._private == {}  # a spectator learns no private value
    for a in engines[:-1]:
        for (r, c) in a.source._private:  # a peeked value is known only to the peeker (or public)
            for b in engines:
                if b is not a and b.source._public.get((r, c)) is None:
                    assert b.source._private.get((r, c)) is None or b.seat != spectator.seat
    for ledger in game.deal.ledgers:
        assert ledger.faults == [] and ledger.private_faults == [] and ledger.private_broken == []
        assert ledger.broken is None
    # The game-end verification from the published secrets, on the spectator's and seat 0's.
    for ledger in (game.deal.ledgers[0], game.deal.ledgers[-1]):
        assert ledger.verdict() == () and ledger.verified
    kinds = [e.kind for e in game.deal.log]
    assert kinds[:2 * players] == ["deal_keys"] * players + ["deal_escrow"] * players
    assert kinds[-players:] == ["deal_secret"] * players


HONEST = [(ONE_ALLEGRA, n) for n in range(2, 7)] + [(ONE_GRANDE, n) for n in range(2, 6)]


@pytest.mark.parametrize("rs,players", HONEST, ids=[f"{r.variant.value}-{n}" for r, n in HONEST])
def test_an_honest_bot_game_through_the_ledgers_finishes_alike_everywhere(rs: Any, players: int) -> None:
    bots = ["greedy", "random"] * 3
    game = play_ledger_game(rs, players, seed_from_number(players), bots[:players], game_id(10 + players),
                            secrets_for(players, players))
    check_honest(game, players)


def test_a_whole_three_round_grande_game_with_reshuffles_and_a_pile_in_parts() -> None:
    """The default rounds, a reshuffle's pile dealt the moment the engine made it, and a
    deck of more than MAX_PASS_CARDS cards, whose passes go in two parts."""
    watch = Walk()
    rs = GrandeRuleset(card_counts=tuple((v, 3) for v in range(-2, 14)))
    game = play_ledger_game(rs, 2, seed_from_number(1), ["greedy", "greedy"], game_id(20), secrets_for(2, 20),
                            after_move=watch)
    check_honest(game, 2)
    assert any(e.source._private for e in game.engines[:-1])  # peeks opened by the peeker alone
    assert watch.moves == game.stats.moves and watch.private_seen > 0
    piles = game.deal.ledgers[-1].piles
    assert any(pile > 0 for _, pile in piles)  # a reshuffle was dealt
    big = AllegraRuleset(rounds=1, card_counts=tuple((v, 18) for v in range(-1, 12)))
    assert big.deck_size > MAX_PASS_CARDS
    game = play_ledger_game(big, 2, seed_from_number(5), ["greedy"] * 2, game_id(21), secrets_for(2, 21))
    check_honest(game, 2)
    assert sum(e.kind == "deal_shuffle" for e in game.deal.log) == 2 * 2


# ----------------------------------------------------------------- the dishonest dealer


def honest_ledgers(game: LedgerGame, cheater: int) -> list[Ledger]:
    return [l for l in game.deal.ledgers if l.seat != cheater]


def cheat_game(cheat: Any, players: int = 3, rs: Any = ONE_ALLEGRA, tag: int = 30) -> LedgerGame:
    return play_ledger_game(rs, players, seed_from_number(tag), ["greedy"] * players, game_id(tag),
                            secrets_for(players, tag), cheat=cheat)


def verdicts(game: LedgerGame, cheater: int) -> tuple[Fault, ...]:
    found = {l.verdict() for l in honest_ledgers(game, cheater)}
    assert len(found) == 1  # every honest peer's ledger says the same
    out = found.pop()
    assert out and {f.seat for f in out} == {cheater}, out
    assert all("\n" not in str(f) and str(f).startswith(f"seat {cheater}, ") for f in out)  # one line each
    return out


@pytest.mark.parametrize("cheater", [0, 2])
def test_a_copied_card_is_named_on_its_seat_by_every_honest_peer(cheater: int) -> None:
    game = cheat_game(CopyCard(cheater, into=3, of=4), tag=31 + cheater)
    out = verdicts(game, cheater)
    assert any(f.step == "shuffle" for f in out)


def test_a_copied_card_that_opens_twin_stops_the_deal_at_once() -> None:
    """A copy at the place of the first turn-up (the discard pile's first card, id 0 of a
    3-seat ALLEGRA deck is the first card dealt): where both opened, every ledger says the
    deal is broken the moment the second opens, and the game stops there."""
    hits = 0
    for into, of in ((0, 1), (0, 36), (36, 37)):
        game = cheat_game(CopyCard(2, into=into, of=of), tag=35)
        verdicts(game, 2)
        if game.stopped is not None:
            hits += 1
            assert all("copied card" in str(l.broken) for l in game.deal.ledgers)
    assert hits >= 1


def test_a_swapped_in_card_is_named_on_its_seat() -> None:
    game = cheat_game(SwapIn(1, into=5, place=6), tag=36)
    out = verdicts(game, 1)
    assert out[0].step == "shuffle"


def test_a_wrong_share_is_refused_on_arrival_and_named_at_once() -> None:
    game = cheat_game(WrongShare(1, batch=0), tag=37)
    assert game.stopped is not None  # the game stopped at the first batch
    for l in game.deal.ledgers:  # every peer, the cheater's own ledger too: it is public
        assert l.faults and l.faults[0].seat == 1 and l.faults[0].step == "share"
        assert "fails its proof" in l.faults[0].reason
    shares_events = [e for e in game.deal.log if e.kind == "deal_shares"]
    assert len(shares_events) == 2  # seat 0's, then seat 1's wrong one: nothing after it
    verdicts(game, 1)


def test_a_wrong_sealed_share_is_seen_by_its_holder_at_once_and_by_everyone_at_the_end() -> None:
    game = cheat_game(WrongSealedShare(0, holder=2), tag=38)
    assert game.stopped is None  # an escrow is checked by its holder alone while the game runs
    holder = game.deal.ledgers[2]
    assert [f.seat for f in holder.private_faults] == [0] and holder.private_faults[0].step == "escrow"
    assert all(not l.private_faults for l in game.deal.ledgers if l.seat != 2)
    out = verdicts(game, 0)
    assert [f.step for f in out] == ["escrow"]


def test_a_withheld_secret_is_named_and_the_game_unverified() -> None:
    game = cheat_game(WithholdSecret(1), tag=39)
    assert game.stopped is None and game.deal.withheld is not None
    out = verdicts(game, 1)
    assert out == (Fault(1, "secret", None, "withheld its secret: its deal is unverified"),)
    assert not any(l.verified for l in game.deal.ledgers)
    assert [e.kind for e in game.deal.log[-1:]] == ["deal_secret"]  # seat 0's; seat 1's never came
    assert 1 not in game.deal.ledgers[0].secrets and 2 not in game.deal.ledgers[0].secrets


def test_a_takeover_releases_the_seat_s_secret_from_every_holder_s_piece_and_names_a_bad_one() -> None:
    secrets = secrets_for(3, 40)
    deal = LedgerDeal(game_id(40), secrets)
    deal.run()  # keys and escrow
    spectator = deal.ledgers[-1]
    pieces = {h: deal.ledgers[h].held[1] for h in (0, 2)}  # what seats 0 and 2 hand in for seat 1
    assert spectator.release(1, pieces) == secrets[1]
    assert spectator.release(1, {0: pieces[0], 2: bytes(32)}) == Fault(
        2, "escrow", None, "the released share for seat 1 misses its commitment")
    assert spectator.release(1, {0: pieces[0]}) == Fault(2, "escrow", None, "handed in no escrow share for seat 1")
    assert spectator.release(1, {0: pieces[0], 2: "text"}).seat == 2  # type: ignore[union-attr]


def test_protocol_md_s_table_of_bodies_is_the_schemas() -> None:
    """Every field of every kind's schema, and no other, in its row of PROTOCOL.md, and the
    part sizes the code uses."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = text[text.index("## Fair deal: the events"):]
    for kind, spec in SCHEMAS.items():
        row = next(line for line in section.splitlines() if line.startswith(f"| `{kind}` |"))
        body = row.split("|")[2]
        while "[" in body:  # only the body's own fields: drop what lies inside its arrays
            body = re.sub(r"\[[^\[\]]*\]", "", body)
        named = re.findall(r"[{,] ?([a-z_]+):", body)
        assert named == list(spec.fields), (kind, named)  # type: ignore[attr-defined]
    assert f"(1..{MAX_PASS_CARDS})" in section and f"(1..{MAX_PART_SHARES})" in section


class OnePile:
    """The engine's answer to "which pile": one pile of 12 cards, round 0."""

    info = PileInfo(0, 0, 0, tuple(range(12)))

    def pile_of(self, round_no: int, card: int) -> PileInfo:
        return self.info


@pytest.mark.parametrize("first,then", [
    (RevealRequest(0, 3, to=0), RevealRequest(0, 4)),  # a peek, then its copy opens in public
    (RevealRequest(0, 4), RevealRequest(0, 3, to=0)),  # the public card, then the peek of its copy
])
def test_a_copy_that_only_the_peeker_can_see_stops_its_peer_alone(first: Any, then: Any) -> None:
    """Seat 1 copies place 4 into place 3; seat 0 peeks at 3. Only seat 0's ledger can tell
    that the two opened to one place: it gives no answer for the second and says why; every
    other ledger answers as usual (the public state stays the same everywhere), and the
    game-end verification names seat 1 for everyone."""
    deal = LedgerDeal(game_id(41), secrets_for(2, 41), cheat=CopyCard(1, into=3, of=4))
    deal.run()
    answers: dict[int | None, list[Any]] = {}
    for batch in ([first], [then]):
        for l in deal.ledgers:
            l.open_piles([OnePile.info])
            l.need(batch, OnePile())
        deal.run()
        for l in deal.ledgers:
            answers.setdefault(l.seat, []).extend(l.answers())
    peeker = deal.ledgers[0]
    assert len(peeker.private_broken) == 1 and "peeked" in peeker.private_broken[0]
    assert [r for r, _ in answers[0]] == [first]  # the second opening is not given to its engine
    for l in deal.ledgers[1:]:
        assert l.private_broken == [] and l.broken is None
        assert [r for r, _ in answers[l.seat]] == [first, then]
    for l in deal.ledgers:
        l.end()
    deal.run()
    assert {f.seat for f in deal.ledgers[-1].verdict()} == {1}
