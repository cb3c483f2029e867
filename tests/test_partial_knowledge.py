"""The engine on partial knowledge (issue 12, second slice; docs/fairdeal.md, "The engine's
partial knowledge").

Under the fair deal each seat's engine has a PartialCards source that knows only what was
revealed to its seat. These tests play whole games with one engine per seat (and a
spectator's), fed through the real cryptography of allegra_lan/deal/, between bots that
see only their own seat's engine, and check after every move that the public state (its
hash, whose turn, the legal moves, the scores) is the same on every engine and that a
peeked value is in no engine but the peeker's. The hand-built cases pin the engine's
waiting (NeedValues), the fresh ids of a reshuffle, and the source's refusals.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from typing import Any, Iterator, Sequence

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.bots import make_bots, offered_moves
from allegra_lan.bots.fair_driver import (
    Engine, FairError, OneProcessDeal, fair_engines, play_fair_game, step,
)
from allegra_lan.deal.group import add, mul, mul_base
from allegra_lan.rules import (
    HIDDEN, AllegraRuleset, Discard, DrawFromDeck, GrandeRuleset, IllegalMove, Move, NeedValues,
    PartialCards, PeekCard, PeekLine, Place, ReplaceOpen, RevealRequest, State, TurnUp, ValueConflict,
    apply, legal_moves, needed, new_game, ruleset_for, state_hash, to_act, view,
)
from allegra_lan.rules.effects import Closed, Drawn, Peeked, Reshuffled, Revealed, RoundEnded
from allegra_lan.rules.rng import Stream, seed_from_number
from allegra_lan.rules.view import SPECTATOR, full_view

GRANDE = ruleset_for("grande")
ALLEGRA = ruleset_for("allegra")
# Small decks, so that rounds draw the deck dry and reshuffle (R8) many times.
SMALL_GRANDE = GrandeRuleset(card_counts=tuple((v, 3) for v in range(-2, 14)))
SMALL_ALLEGRA = AllegraRuleset(card_counts=tuple((v, 3) for v in range(-1, 12)))


def secrets_for(players: int, tag: int) -> list[bytes]:
    return [bytes([tag, seat]) * 16 for seat in range(players)]


# ----------------------------------------------------------------- what an engine holds


def effect_rounds(state: State) -> Iterator[tuple[int, Any]]:
    """The last move's effects with the round each belongs to (a move that ends a round
    shows the old round's cards, then the state is in the next round)."""
    ends = [i for i, x in enumerate(state.effects) if isinstance(x, RoundEnded)]
    for i, eff in enumerate(state.effects):
        yield (state.effects[ends[0]].round_no if ends and i <= ends[0] else state.round_no), eff  # type: ignore[union-attr]


def holdings(e: Engine) -> dict[tuple[int, int], int]:
    """Every (round, card) -> value that engine `e` holds anywhere: its source's stores,
    its state's public values, the values in its last move's effects and in its view memo
    (walked by type, so a new store of values would be found too)."""
    found: dict[tuple[int, int], int] = {}
    state = e.state

    def walk(obj: Any, depth: int = 0) -> None:
        if depth > 6:
            return
        if isinstance(obj, dict):
            for k, v in obj.items():
                if (isinstance(k, tuple) and len(k) == 2 and all(isinstance(x, int) for x in k)
                        and isinstance(v, int) and not isinstance(v, bool)):
                    found[k] = v
                else:
                    walk(v, depth + 1)
        elif hasattr(obj, "card") and hasattr(obj, "value"):
            if isinstance(obj.value, int):
                found[(state.round_no, obj.card)] = obj.value  # a CardView or HandCard in the memo
        elif isinstance(obj, (list, tuple, set, frozenset)):
            for x in obj:
                if type(x) is not int:  # plain numbers alone name no card's value
                    walk(x, depth + 1)
        elif hasattr(obj, "__dict__") or hasattr(obj, "__slots__"):
            for name in getattr(obj, "__slots__", ()) or vars(obj):
                if name not in ("ruleset", "_deck", "_piles"):
                    walk(getattr(obj, name, None), depth + 1)

    walk(e.source)
    walk(state.memo)
    for card, v in enumerate(state.known):
        if v is not None:
            found[(state.round_no, card)] = v
    for round_no, eff in effect_rounds(state):
        if isinstance(eff, Peeked) and eff.values:
            for card, v in zip(eff.cards, eff.values):
                found[(round_no, card)] = v
    return found


class Watch:
    """The checks after every move of a game with engines for every seat and a spectator."""

    def __init__(self) -> None:
        self.peeks: dict[int, set[tuple[int, int]]] = {}  # seat -> cards it peeked
        self.private_seen = 0  # peeked values found in their peeker's engine
        self.moves = 0
        self.reshuffles = 0
        self.fresh_closed = 0  # cards a 13 closed after a reshuffle
        self.shown: set[tuple[int, int]] = set()  # (round, card) ever revealed to all

    def __call__(self, engines: Sequence[Engine], move: Move) -> None:
        self.moves += 1
        first = engines[0].state
        spectator = engines[-1]
        assert spectator.seat is None
        # The public state: one hash, one decision, one set of legal moves, one score.
        assert len({state_hash(e.state) for e in engines}) == 1
        assert len({to_act(e.state) for e in engines}) == 1
        legal = legal_moves(first)
        for e in engines[1:]:
            assert legal_moves(e.state) == legal
            assert e.state.totals == first.totals and e.state.results == first.results
        for e in engines:
            if e.seat is None:
                continue
            for round_no, eff in effect_rounds(e.state):
                if isinstance(eff, Peeked):
                    if eff.seat == e.seat:
                        assert len(eff.values) == len(eff.cards)  # the peeker sees them
                        self.peeks.setdefault(e.seat, set()).update((round_no, c) for c in eff.cards)
                    else:
                        assert eff.values == ()
        # Walk every engine: a value it holds is public, or its own seat's peek.
        public = holdings(spectator)
        for e in engines:
            held = holdings(e)
            mine = self.peeks.get(e.seat, set()) if e.seat is not None else set()
            for key, v in held.items():
                if key in public:
                    assert public[key] == v
                else:
                    assert key in mine, f"seat {e.seat}'s engine holds {key} = {v}, not shown to it"
                    self.private_seen += 1
        # R8 under the fair deal: a reshuffled pile's cards have ids never used in the round.
        s = spectator.state
        round_over = any(isinstance(x, RoundEnded) for x in s.effects)  # the deck is the next round's
        for i, eff in enumerate(s.effects):
            if isinstance(eff, Reshuffled) and not round_over:
                self.reshuffles += 1
                new = [c for c in s.deck]
                taken = next(x for x in s.effects[i + 1:] if isinstance(x, (Drawn, Closed)))
                new.append(taken.card)
                first_new = min(new)
                assert sorted(new) == list(range(first_new, first_new + len(new)))
                assert first_new + len(new) == len(s.known)
                assert all((s.round_no, c) not in self.shown for c in new)
                assert all(s.known[c] is None for c in s.deck)
            if isinstance(eff, Closed) and s.reshuffles and not round_over:
                self.fresh_closed += 1
                assert s.known[eff.card] is None  # the card the 13 closed tells nothing
        for round_no, eff in effect_rounds(s):
            if isinstance(eff, Revealed):
                self.shown.add((round_no, eff.card))


GAMES = [
    # variant ruleset, players, bots, tag
    (GRANDE, 4, ["greedy", "random", "greedy", "random"], 1),
    (SMALL_GRANDE, 2, ["greedy", "random"], 2),
    (SMALL_GRANDE, 3, ["random", "greedy", "greedy"], 4),
    (ALLEGRA, 3, ["greedy", "random", "greedy"], 4),
    (SMALL_ALLEGRA, 2, ["greedy", "greedy"], 5),
]


@pytest.mark.parametrize("rs,players,bots,tag", GAMES)
def test_a_fair_game_between_bots_keeps_every_engine_public_and_every_peek_private(
    rs: Any, players: int, bots: list[str], tag: int
) -> None:
    """A whole game, real shares for every reveal: after every move the engines agree on all
    that is public, and no engine holds a value the rules did not show to its seat."""
    watch = Watch()
    game = play_fair_game(rs, players, seed_from_number(tag), bots, bytes([tag]) * 16,
                          secrets_for(players, tag), after_move=watch)
    final = game.engines[-1].state
    assert to_act(final) is None and len(final.results) == rs.rounds
    assert watch.moves == game.stats.moves > 100
    assert max(game.waits) <= 2  # a move waits for at most two batches of values
    if rs.variant == "grande":
        assert watch.peeks and watch.private_seen > 0  # the walk found the peeked values
    if rs in (SMALL_GRANDE, SMALL_ALLEGRA):
        assert watch.reshuffles > 0
    # Every value shown in a round is a card of the deck: a permutation opened place by place.
    for r in final.results:
        shown = Counter(v for rows in r.displays for row in rows for v in row if v is not None)
        deck = Counter(rs.deck_values())
        assert not shown - deck


def test_the_card_a_13_closes_after_a_reshuffle_has_a_fresh_id_and_no_value() -> None:
    """The finding "a card's id tells its value where it was seen before": under the fair
    deal a reshuffled pile gets fresh ids, so the 13's closed card names nothing seen."""
    watch = Watch()
    play_fair_game(SMALL_GRANDE, 2, seed_from_number(1), ["greedy", "greedy"], b"\x07" * 16,
                   secrets_for(2, 7), after_move=watch)
    assert watch.reshuffles > 0 and watch.fresh_closed > 0


def test_in_a_seeded_game_a_reshuffle_keeps_its_ids_and_values() -> None:
    """The seeded deal keeps today's behaviour (its hashes are pinned by the vectors): a
    reshuffle permutes the pile's ids, which keep their values."""
    state = new_game(SMALL_GRANDE, 2, seed_from_number(4))
    chooser = Stream(seed_from_number(4), "tests/partial/seeded")
    while not any(isinstance(e, Reshuffled) for e in state.effects):
        before = state
        moves = legal_moves(state)
        draws = [m for m in moves if isinstance(m, (DrawFromDeck, Discard))]  # dry the deck
        state = apply(state, (draws or moves)[chooser.below(len(draws or moves))])
    assert not state.fair and len(state.known) == SMALL_GRANDE.deck_size
    assert set(state.deck) < set(before.discard)
    assert all(state.known[c] is not None for c in state.deck)


# ----------------------------------------------------------------- bots see their seat only


class SeededOracle:
    """Serves partial engines the values of a seeded game played alongside (for tests):
    card ids of pile 0 are the seeded ids; a reshuffled pile's places are the seeded new
    deck's cards, top first."""

    def __init__(self, seeded: State) -> None:
        self.seeded = seeded
        self.orders: dict[tuple[int, int], list[int]] = {}
        self.used: set[tuple[int, int, int]] = set()
        self.places: dict[tuple[int, int], int] = {}

    def moved(self, before: State, move: Move, after: State) -> None:
        """Record the seeded new deck of a reshuffle `move` made (R8: the pile but its
        top; the 13 discards its card onto the pile before it takes the deck's, R24)."""
        if any(isinstance(e, Reshuffled) for e in after.effects):
            pile = before.discard if isinstance(move, ReplaceOpen) else before.discard[:-1]
            count = before.reshuffles + 1
            self.orders[(before.round_no, count)] = before.source.reshuffle(  # type: ignore[union-attr]
                before.round_no, count, pile)
        self.seeded = after

    def seeded_id(self, source: PartialCards, round_no: int, card: int) -> int:
        info = source.pile_of(round_no, card)
        return card if info.pile == 0 else self.orders[(round_no, info.pile)][card - info.first]

    def serve(self, engines: Sequence[Engine], requests: Sequence[RevealRequest]) -> None:
        for req in requests:
            source = engines[0].source
            info = source.pile_of(req.round_no, req.card)
            v = self.seeded.source.value(req.round_no, self.seeded_id(source, req.round_no, req.card))
            # The place of the pile's list that has this value and is not yet opened.
            j = self.places.get((req.round_no, req.card))  # opened before (a peek)?
            if j is None:
                j = next(j for j, x in enumerate(info.values)
                         if x == v and (req.round_no, info.pile, j) not in self.used)
                self.used.add((req.round_no, info.pile, j))
                self.places[(req.round_no, req.card)] = j
            for e in engines:
                e.source.learn(req, j if req.to in (None, e.seat) else None)


def translate(move: Move, to_seeded: Any) -> Move:
    if dataclasses.is_dataclass(move) and any(f.name == "card" for f in dataclasses.fields(move)):
        return dataclasses.replace(move, card=to_seeded(move.card))  # type: ignore[arg-type]
    return move


@pytest.mark.parametrize("rs,players,names", [
    (GRANDE, 4, ["greedy", "greedy", "random", "greedy"]),
    (SMALL_GRANDE, 2, ["greedy", "greedy"]),
    (ALLEGRA, 4, ["greedy", "random", "greedy", "greedy"]),
    (SMALL_ALLEGRA, 3, ["greedy", "greedy", "random"]),
])
def test_bots_on_their_seat_s_partial_engine_make_the_seeded_game_s_choices(
    rs: Any, players: int, names: list[str]
) -> None:
    """The same game twice: once on one seeded state, once with one partial engine per seat
    that holds only its seat's knowledge (values served from the seeded deal). Each bot
    plays from its own engine and must make every choice it makes in the seeded game, so
    no choice of a bot reads a value its seat cannot know."""
    seed = seed_from_number(players * 7)
    seeded = new_game(rs, players, seed)
    engines = fair_engines(rs, players)
    oracle = SeededOracle(seeded)
    bots_a, bots_b = make_bots(names, seed), make_bots(names, seed)
    moves = 0
    while (d := to_act(seeded)) is not None:
        mine = engines[d.seat].state
        offered_a = offered_moves(seeded, bots_a)
        move_a = bots_a[d.seat].choose(view(seeded, d.seat), offered_a)
        offered_b = offered_moves(mine, bots_b, views=lambda s: view(engines[s].state, s))
        move_b = bots_b[d.seat].choose(view(mine, d.seat), offered_b)
        round_no = seeded.round_no
        assert translate(move_b, lambda c: oracle.seeded_id(engines[0].source, round_no, c)) == move_a
        before, seeded = seeded, apply(seeded, move_a)
        oracle.moved(before, move_a, seeded)
        step(engines, move_b, oracle)
        moves += 1
        assert engines[0].state.totals == seeded.totals
        assert to_act(engines[0].state) == to_act(seeded)
    assert moves > 100
    assert [r.totals for r in engines[-1].state.results] == [r.totals for r in seeded.results]
    assert [r.displays for r in engines[-1].state.results] == [r.displays for r in seeded.results]


@settings(max_examples=10, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), grande=st.booleans(), players=st.integers(2, 3))
def test_partial_engines_fed_the_seeded_values_play_the_seeded_game(
    seed: bytes, grande: bool, players: int
) -> None:
    """Random moves (small decks: many reshuffles): partial engines told the seeded deal's
    values, reshuffled piles under fresh ids, offer the same moves (ids renamed), clear the
    same cards and score the same as the seeded engine, move after move."""
    rs = SMALL_GRANDE if grande else SMALL_ALLEGRA
    seeded = new_game(rs, players, seed)
    engines = fair_engines(rs, players)
    oracle = SeededOracle(seeded)
    chooser = Stream(seed, "tests/partial/seeded-moves")
    for _ in range(300):
        legal_a = legal_moves(seeded)
        if not legal_a:
            break
        round_no = seeded.round_no
        rename = lambda c: oracle.seeded_id(engines[0].source, round_no, c)  # noqa: E731
        legal_b = legal_moves(engines[0].state)
        assert [translate(m, rename) for m in legal_b] == legal_a
        i = chooser.below(len(legal_a))
        if DrawFromDeck() in legal_a and chooser.below(2):  # Grande's many Swaps would
            i = legal_a.index(DrawFromDeck())  # keep the deck from ever running dry
        before, seeded = seeded, apply(seeded, legal_a[i])
        oracle.moved(before, legal_a[i], seeded)
        step(engines, legal_b[i], oracle)
        after = engines[0].state
        assert after.totals == seeded.totals and after.round_cleared == seeded.round_cleared
        assert to_act(after) == to_act(seeded) and len(after.up) == len(seeded.up)


# ----------------------------------------------------------------- the engine waits


def fresh(rs: Any = GRANDE, players: int = 2) -> list[Engine]:
    return fair_engines(rs, players)


def test_a_reveal_waits_for_its_public_value_and_the_state_does_not_change() -> None:
    engines = fresh()
    e = engines[0]
    move = legal_moves(e.state)[0]
    assert isinstance(move, TurnUp)
    card = e.state.grids[move.at.seat].at(move.at.row, move.at.col)
    before = state_hash(e.state)
    with pytest.raises(NeedValues) as caught:
        apply(e.state, move)
    assert caught.value.requests == (RevealRequest(0, card, None),)
    assert "card" in str(caught.value) and "\n" not in str(caught.value)
    assert needed(e.state, move) == caught.value.requests
    assert state_hash(e.state) == before and e.state.known[card] is None
    assert caught.value.requests[0].owed_by(2) == (0, 1)
    e.source.learn(caught.value.requests[0], 17)  # place 17 of Grande's list: a 1
    after = apply(e.state, move)
    assert after.known[card] == GRANDE.deck_values()[17]
    assert needed(after, legal_moves(after)[0]) != ()  # the next turn-up waits again


def test_a_seeded_engine_never_waits() -> None:
    state = new_game(GRANDE, 2, seed_from_number(3))
    for m in legal_moves(state)[:5]:
        assert needed(state, m) == ()


def test_the_last_turn_up_of_the_round_start_asks_for_the_discard_pile_s_first_card_too() -> None:
    """R3: the last turn-up also shows the deck's top card; one batch asks for both."""
    engines = fresh()
    dealer = OneProcessDeal(b"\x09" * 16, secrets_for(2, 9))
    for _ in range(3):
        step(engines, legal_moves(engines[0].state)[0], dealer)
    last = legal_moves(engines[0].state)[0]
    reqs = needed(engines[0].state, last)
    assert len(reqs) == 2 and reqs[1].card == engines[0].state.deck[-1]
    assert step(engines, last, dealer) == 1


def peek_position(players: int = 2) -> tuple[list[Engine], OneProcessDeal, Move]:
    """A fair Grande game played by the deal until a seat can peek (a 5 discarded from
    the deck): returns the engines, the deal and the peek move."""
    dealer = OneProcessDeal(b"\x0b" * 16, secrets_for(players, 11))
    engines = fair_engines(GRANDE, players)
    chooser = Stream(b"\x0b" * 32, "tests/partial/peek")
    for _ in range(3000):
        state = engines[0].state
        moves = legal_moves(state)
        peeks = [m for m in moves if isinstance(m, (PeekCard, PeekLine))]
        if peeks:
            return engines, dealer, peeks[0]
        wanted = [m for m in moves if isinstance(m, DrawFromDeck)
                  or isinstance(m, Discard) and state.known[m.card] in (5, -2)]
        step(engines, wanted[-1] if wanted else moves[chooser.below(len(moves))], dealer)
    raise AssertionError("no peek in 3000 moves")


def test_a_peek_waits_on_every_engine_and_only_the_peeker_learns_the_value() -> None:
    engines, dealer, peek = peek_position(3)
    seat = to_act(engines[0].state).seat  # type: ignore[union-attr]
    asked = {needed(e.state, peek) for e in engines}
    assert len(asked) == 1
    reqs = asked.pop()
    assert reqs and all(r.to == seat for r in reqs)
    assert reqs[0].owed_by(3) == tuple(s for s in range(3) if s != seat)
    assert step(engines, peek, dealer) == 1
    for e in engines:
        for r in reqs:
            if e.seat == seat:
                assert isinstance(e.source.reveal(r), int)
                assert e.source.known(r.round_no, r.card) is not None
            else:
                assert e.source.reveal(r) is HIDDEN and e.source.known(r.round_no, r.card) is None
            assert e.state.known[r.card] is None
        v = view(e.state, SPECTATOR if e.seat is None else e.seat)
        peeked = [cv for d in v.displays for row in d for cv in row if cv is not None and cv.peeked]
        assert bool(peeked) == (e.seat == seat)
        assert all(cv.value is not None for cv in peeked)
        shown = full_view(e.state)
        closed_values = [cv.value for d in shown.displays for row in d for cv in row
                         if cv is not None and not cv.up and cv.value is not None]
        assert len(closed_values) == (len(reqs) if e.seat == seat else 0)


def test_the_walk_finds_a_peeked_value_wherever_another_engine_would_keep_it() -> None:
    """The check of the whole-game tests can fail: a peeked value put into another seat's
    engine (its source's store, or a card view in its state's memo) is found and refused."""
    engines, dealer, peek = peek_position(3)
    seat = to_act(engines[0].state).seat  # type: ignore[union-attr]
    step(engines, peek, dealer)
    watch = Watch()
    watch(engines, peek)  # the honest engines pass
    mine = view(engines[seat].state, seat)
    peeked = next(cv for d in mine.displays for row in d for cv in row if cv is not None and cv.peeked)
    other = engines[(seat + 1) % 3]
    for plant in ("store", "memo"):
        planted = copy.deepcopy(other)
        if plant == "store":
            planted.source._private[(planted.state.round_no, peeked.card)] = peeked.value  # type: ignore[index]
        else:
            planted.state.memo.setdefault("closed", {})[peeked.card] = peeked
        crowd = [planted if e is other else e for e in engines]
        with pytest.raises(AssertionError, match="not shown to it"):
            Watch()(crowd, peek)


class Liar:
    """A seat's source that tells its own seat other values for its peeks (and only those):
    an engine that differs from the honest one in private knowledge alone."""

    def __init__(self, inner: PartialCards) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _lie(self, v: Any) -> Any:
        values = sorted(set(self.inner.ruleset.deck_values()))
        return values[(values.index(v) + 1) % len(values)] if isinstance(v, int) else v

    def reveal(self, request: RevealRequest) -> Any:
        v = self.inner.reveal(request)
        return self._lie(v) if request.to is not None else v

    def seen(self, round_no: int, card: int, seat: int) -> int | None:
        return self._lie(self.inner.seen(round_no, card, seat))  # type: ignore[no-any-return]


def liar_engine(rs: Any, players: int, seat: int) -> Engine:
    source = Liar(PartialCards(rs, seat))
    return Engine(seat, source, new_game(rs, players, source=source))  # type: ignore[arg-type]


def test_two_engines_that_differ_only_in_a_peeked_value_hash_alike() -> None:
    """The peeker's engine told the values its shares opened, a twin told others: the
    public hash, the next decision and the legal moves are the same."""
    engines, dealer, peek = peek_position(2)
    seat = to_act(engines[0].state).seat  # type: ignore[union-attr]
    liar = Liar(copy.deepcopy(engines[seat].source))
    twin = Engine(seat, liar, engines[seat].state.clone())  # type: ignore[arg-type]
    twin.state.source = liar
    step(engines + [twin], peek, dealer)
    honest = engines[seat].state
    assert state_hash(twin.state) == state_hash(honest)
    assert legal_moves(twin.state) == legal_moves(honest) and to_act(twin.state) == to_act(honest)
    mine = [e for e in honest.effects if isinstance(e, Peeked)]
    lied = [e for e in twin.state.effects if isinstance(e, Peeked)]
    assert mine[0].cards == lied[0].cards and mine[0].values != lied[0].values
    assert view(twin.state, seat) != view(honest, seat)


# ----------------------------------------------------------------- the source refuses


def test_the_source_refuses_what_its_seat_cannot_have_opened() -> None:
    source = PartialCards(GRANDE, 1)
    peek = RevealRequest(0, 5, 0)
    with pytest.raises(ValueError, match="cannot open a card shown to seat 0"):
        source.learn(peek, 3)
    with pytest.raises(ValueError, match="needs the place"):
        source.learn(RevealRequest(0, 5), None)
    with pytest.raises(ValueConflict, match="outside its pile"):
        source.learn(RevealRequest(0, 5), GRANDE.deck_size)
    source.learn(RevealRequest(0, 5), 0)
    with pytest.raises(ValueConflict, match="copied card"):
        source.learn(RevealRequest(0, 6), 0)
    with pytest.raises(ValueConflict, match="had opened to"):
        source.learn(RevealRequest(0, 5), GRANDE.deck_size - 1)
    with pytest.raises(LookupError, match="in no pile"):
        source.learn(RevealRequest(0, GRANDE.deck_size + 3), 0)
    with pytest.raises(LookupError, match="not known to this seat"):
        source.value(0, 7)
    with pytest.raises(TypeError, match="fresh card ids"):
        source.reshuffle(0, 1, [1, 2])
    source.learn(peek, None)
    assert source.reveal(peek) is HIDDEN and source.reveal(RevealRequest(0, 5, 1)) is None
    assert source.value(0, 5) == GRANDE.deck_values()[0]


ANY = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**33), st.text(max_size=3), st.binary(max_size=3))


@settings(max_examples=400, deadline=None)
@given(round_no=st.one_of(st.integers(0, 5), ANY), card=st.one_of(st.integers(0, 200), ANY),
       to=st.one_of(st.none(), st.integers(0, 3), ANY), place=st.one_of(st.integers(0, 200), ANY),
       seat=st.one_of(st.none(), st.integers(0, 4)))
def test_learning_anything_is_stored_or_refused_in_one_line(
    round_no: Any, card: Any, to: Any, place: Any, seat: int | None
) -> None:
    """The later slice feeds `learn` from log events: whatever it is given, it stores a
    value of the ruleset's deck or refuses with one ValueError/LookupError line."""
    source = PartialCards(GRANDE, seat)
    req = RevealRequest(round_no, card, to)
    try:
        source.learn(req, place)
    except (ValueError, LookupError) as e:
        assert str(e) and "\n" not in str(e)
        return
    got = source.reveal(req)
    assert got is HIDDEN or got in GRANDE.deck_values()


def test_a_copied_card_is_refused_on_arrival_and_a_re_encrypted_copy_when_it_opens() -> None:
    def copy(seat: int, cards: tuple[bytes, ...]) -> list[bytes]:
        out = list(cards)
        if seat == 1:
            out[1] = out[0]
        return out

    with pytest.raises(FairError, match="seat 1's shuffle .* repeats card 0"):
        play_fair_game(GRANDE, 2, seed_from_number(1), ["greedy"] * 2, b"\x0c" * 16,
                       secrets_for(2, 12), tamper=copy)
    dealer = OneProcessDeal(b"\x0c" * 16, secrets_for(2, 12))
    joint = dealer.pile(fair_engines(GRANDE, 2)[0].source.piles(0)[0]).joint

    def twin(seat: int, cards: tuple[bytes, ...]) -> list[bytes]:
        out = list(cards)
        if seat == 1:  # the last seat re-encrypts card 0 into place 1 (card 1 is lost)
            r = 5
            out[1] = add(out[0][:32], mul_base(r)) + add(out[0][32:], mul(r, joint))
        return out

    with pytest.raises(ValueConflict, match="copied card"):
        play_fair_game(GRANDE, 2, seed_from_number(1), ["greedy"] * 2, b"\x0c" * 16,
                       secrets_for(2, 12), tamper=twin)


# ----------------------------------------------------------------- a property


class Plain:
    """A plaintext deal for many cheap games (the crypto is proven above): each pile's
    places open in an order drawn from `seed`."""

    def __init__(self, seed: bytes) -> None:
        self.seed = seed
        self.perms: dict[tuple[int, int], list[int]] = {}

    def serve(self, engines: Sequence[Engine], requests: Sequence[RevealRequest]) -> None:
        for r in requests:
            info = engines[0].source.pile_of(r.round_no, r.card)
            perm = self.perms.get((r.round_no, info.pile))
            if perm is None:
                perm = list(range(len(info.values)))
                Stream(self.seed, f"tests/partial/pile/{r.round_no}/{info.pile}").shuffle(perm)
                self.perms[(r.round_no, info.pile)] = perm
            for e in engines:
                e.source.learn(r, perm[r.card - info.first] if r.to in (None, e.seat) else None)


@settings(max_examples=12, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), grande=st.booleans(), players=st.integers(2, 3))
def test_engines_that_differ_only_in_private_knowledge_have_one_public_hash(
    seed: bytes, grande: bool, players: int
) -> None:
    """Random games (small decks: reshuffles) on every seat's engine, a spectator's and a
    liar's (seat 0's knowledge with other values for its peeks): after every move all of
    them have one public hash, one decision and the same legal moves."""
    rs = SMALL_GRANDE if grande else SMALL_ALLEGRA
    engines = fair_engines(rs, players)
    engines.insert(players, liar_engine(rs, players, 0))
    chooser = Stream(seed, "tests/partial/moves")
    dealer = Plain(seed)
    for _ in range(400):
        moves = legal_moves(engines[0].state)
        if not moves:
            break
        step(engines, moves[chooser.below(len(moves))], dealer)
        assert len({state_hash(e.state) for e in engines}) == 1
        assert len({to_act(e.state) for e in engines}) == 1
        assert all(legal_moves(e.state) == legal_moves(engines[0].state) for e in engines[1:])


def test_an_illegal_move_is_refused_before_any_value_is_asked() -> None:
    e = fresh()[0]
    with pytest.raises(IllegalMove):
        needed(e.state, Place(0, legal_moves(e.state)[0].at))  # type: ignore[attr-defined]
