"""Properties of the engine over random legal games (hypothesis, derandomized).

Each example is a whole game of one variant and player count: hypothesis
draws the game seed and the seed of a move stream (`rules.rng.Stream`) that
picks one legal move after another, so every failure names a game that can
be replayed exactly. The properties are the ones the protocol leans on:
games end, no card appears or vanishes, the same log gives the same states,
a seat's view shows only what that seat may see, and apply agrees with
legal_moves on what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as HypothesisPhase
from hypothesis import strategies as st

from allegra_lan.rules import (
    CardSource, Discard, DrawFromDeck, Exchange, Give, IllegalMove, Move, PeekCard, PeekLine,
    Place, ReplaceOpen, Ruleset, Slot, State, Swap, TakeDiscard, TurnUp, apply, is_over,
    legal_moves, new_game, ruleset_for, state_hash, to_act, view, winners,
)
from allegra_lan.rules.effects import Peeked
from allegra_lan.rules.position import build
from allegra_lan.rules.state import HOLE, Phase
from allegra_lan.rules.rng import Stream

MAX_MOVES = 5000  # random games take 200 to 700 moves; far more means a game that never ends

VARIANTS_AND_PLAYERS = [("allegra", n) for n in range(2, 7)] + [("grande", n) for n in range(2, 6)]

# No shrinking: an example is two opaque seeds, and shrinking a whole game costs minutes.
PROPERTY_SETTINGS = settings(
    derandomize=True, database=None, max_examples=3, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[HypothesisPhase.explicit, HypothesisPhase.reuse, HypothesisPhase.generate],
)

seeds = st.binary(min_size=32, max_size=32)
move_seeds = st.binary(min_size=1, max_size=8)


@dataclass
class Played:
    """A random game: states[i + 1] = apply(states[i], moves[i])."""

    ruleset: Ruleset
    players: int
    seed: bytes
    states: list[State] = field(default_factory=list)
    moves: list[Move] = field(default_factory=list)


def pick(stream: Stream, moves: Sequence[Move]) -> Move:
    """A legal move: first its kind, then one of that kind, so that Grande's many Swaps
    do not crowd out draws, peeks and the 13, nor ALLEGRA's Gives the plain plays."""
    kinds = sorted({type(m).__name__ for m in moves})
    kind = kinds[stream.below(len(kinds))]
    same = [m for m in moves if type(m).__name__ == kind]
    return same[stream.below(len(same))]


def play_random(variant: str, players: int, seed: bytes, move_seed: bytes,
                each: Callable[[State], None] | None = None) -> Played:
    rs = ruleset_for(variant)
    stream = Stream(move_seed, "tests/properties/moves")
    state = new_game(rs, players, seed)
    played = Played(rs, players, seed, [state])
    while to_act(state) is not None and len(played.moves) < MAX_MOVES:
        if each is not None:
            each(state)
        move = pick(stream, legal_moves(state))
        state = apply(state, move)
        played.moves.append(move)
        played.states.append(state)
    return played


# ----------------------------------------------------------------- games end, cards are kept


@pytest.mark.parametrize("variant,players", VARIANTS_AND_PLAYERS)
@PROPERTY_SETTINGS
@given(seed=seeds, move_seed=move_seeds)
def test_random_games_finish_and_keep_every_card(
    variant: str, players: int, seed: bytes, move_seed: bytes
) -> None:
    played = play_random(variant, players, seed, move_seed)
    rs = played.ruleset
    assert len(played.moves) < MAX_MOVES, "the game did not end"
    for state in played.states:
        assert state.card_count() == rs.deck_size
        decision = to_act(state)
        if decision is None:
            assert state is played.states[-1], "to_act is None before the game's end"
            assert is_over(state) and legal_moves(state) == []
        else:
            assert not is_over(state)
            assert 0 <= decision.seat < players
            assert legal_moves(state), f"{decision} but no legal move"
    end = played.states[-1]
    assert len(end.results) == rs.rounds
    assert winners(end) and all(end.totals[w] == min(end.totals) for w in winners(end))
    assert sum(end.totals) == sum(sum(r.scores) for r in end.results)


@pytest.mark.parametrize("variant,players", VARIANTS_AND_PLAYERS)
@PROPERTY_SETTINGS
@given(seed=seeds, move_seed=move_seeds)
def test_same_seed_and_moves_give_same_states(
    variant: str, players: int, seed: bytes, move_seed: bytes
) -> None:
    played = play_random(variant, players, seed, move_seed)
    hashes = [state_hash(s) for s in played.states]
    state = new_game(ruleset_for(variant), players, seed)
    replayed = [state_hash(state)]
    for move in played.moves:
        state = apply(state, move)
        replayed.append(state_hash(state))
    assert replayed == hashes
    # Applying a move never changes the state it was applied to.
    assert [state_hash(s) for s in played.states] == hashes


# ----------------------------------------------------------------- views


@dataclass(frozen=True)
class HidingSource:
    """The real card source with other values for the cards one seat may not see.

    Values of `hidden` cards in round `round_no` are moved `shift` places along
    the ruleset's list of distinct values, so each of them really changes.
    """

    real: CardSource
    round_no: int
    hidden: frozenset[int]
    values: tuple[int, ...]
    shift: int

    def value(self, round_no: int, card: int) -> int:
        v = self.real.value(round_no, card)
        if round_no == self.round_no and card in self.hidden:
            return self.values[(self.values.index(v) + self.shift) % len(self.values)]
        return v

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        return self.real.reshuffle(round_no, count, cards)


def unseen_by(state: State, seat: int) -> frozenset[int]:
    """The cards whose values `seat` may not know: not face up, never revealed, not peeked."""
    return frozenset(
        c for c in range(len(state.known))
        if c not in state.up and state.known[c] is None and c not in state.peeked[seat]
    )


def check_view_secrets(state: State, seat: int) -> None:
    """A view holds no value of a closed card the seat did not peek, and no one else's peeks."""
    v = view(state, seat)
    for display in v.displays:
        for row in display:
            for cv in row:
                if cv is None:
                    continue
                if cv.up:
                    assert cv.value == state.known[cv.card]
                elif cv.card in state.peeked[seat]:
                    assert cv.peeked and cv.value == state.source.value(state.round_no, cv.card)
                else:
                    assert cv.value is None and not cv.peeked
    # The cards out of sight are the pile under its top and the cleared ones, each shown to
    # every seat when it went down (R5, R7): their true values.
    assert [c for c, _ in v.out_of_sight] == state.discard[:-1] + state.cleared
    for c, value in v.out_of_sight:
        assert value == state.known[c] == state.source.value(state.round_no, c)
    for e in v.effects:
        if isinstance(e, Peeked):
            if e.seat == seat:
                assert len(e.values) == len(e.cards)
                assert e.values == tuple(state.source.value(state.round_no, c) for c in e.cards)
            else:
                assert e.values == ()


@pytest.mark.parametrize("variant,players", VARIANTS_AND_PLAYERS)
@PROPERTY_SETTINGS
@given(seed=seeds, move_seed=move_seeds, shift=st.integers(1, 15))
def test_views_do_not_depend_on_unseen_cards(
    variant: str, players: int, seed: bytes, move_seed: bytes, shift: int
) -> None:
    """Replay a move from a copy whose source lies about every card a seat may not see
    after it: that seat's view before and after the move is the same as in the real game."""
    played = play_random(variant, players, seed, move_seed)
    rs = played.ruleset
    values = tuple(sorted(set(rs.deck_values())))
    shift = 1 + (shift - 1) % (len(values) - 1)
    chooser = Stream(move_seed, "tests/properties/view points")
    points = {chooser.below(len(played.moves)) for _ in range(10)}
    # And the moves whose hidden values matter most: peeks (R23), the 13 (R24), round ends.
    special = [i for i, (m, s) in enumerate(zip(played.moves, played.states[1:]))
               if isinstance(m, (PeekLine, PeekCard, ReplaceOpen))
               or s.round_no != played.states[i].round_no]
    points.update(special[:: max(1, len(special) // 8)])
    changed = 0
    for i in sorted(points):
        before, move, after = played.states[i], played.moves[i], played.states[i + 1]
        for seat in range(players):
            hidden = unseen_by(after, seat)
            liar = HidingSource(before.source, after.round_no, hidden, values, shift)
            changed += sum(liar.value(after.round_no, c) != before.source.value(after.round_no, c)
                           for c in hidden)
            copy = before.clone()
            copy.source = liar
            copy.effects = list(before.effects)
            assert view(copy, seat) == view(before, seat)
            assert view(apply(copy, move), seat) == view(after, seat)
    assert changed > 0
    for state in played.states:
        for seat in range(players):
            check_view_secrets(state, seat)


@pytest.mark.parametrize("action,choice,seen", [
    ("5", PeekCard(Slot(1, 2, 1)), (3,)),
    ("-2", PeekLine("col", 1), (7, 3)),
])
def test_peeked_values_reach_only_the_peeker(action: str, choice: Move, seen: tuple[int, ...]) -> None:
    """A peek made on purpose (random games need not meet one): its values are in the
    peeker's view, as effect and as card, and in no other seat's, whatever they are."""
    rows = ["1 2 3 4", "?6 ?7 ?8 ?9", "?9 ?3 ?1 ?0", "1 2 3 4"]
    other = ["0 1 2 3", "? ? ? ?", "? ? ? ?", "4 5 6 7"]
    state = build(ruleset_for("grande"), [other, rows, other], active=1, hand=[(action, True)])
    card = state.hand[0][0]
    state = apply(state, Discard(card))
    before = state
    state = apply(state, choice)
    peeks = [e for e in state.effects if isinstance(e, Peeked)]
    assert len(peeks) == 1 and peeks[0].seat == 1
    assert peeks[0].values == seen
    for seat in range(3):
        check_view_secrets(state, seat)
        v = view(state, seat)
        mine = [e for e in v.effects if isinstance(e, Peeked)]
        assert mine[0].values == (seen if seat == 1 else ())
        shown = [cv.value for cv in (v.card_at(Slot(1, r, 1)) for r in (1, 2))
                 if cv is not None and cv.peeked]
        assert shown == (list(seen) if seat == 1 else [])
        if seat != 1:
            hidden = unseen_by(state, seat)
            values = tuple(sorted(set(state.ruleset.deck_values())))
            copy = before.clone()
            copy.source = HidingSource(before.source, state.round_no, hidden, values, 2)
            assert view(apply(copy, choice), seat) == v


# ----------------------------------------------------------------- legal and illegal moves


MOVE_KINDS = ("turn_up", "draw", "take", "place", "discard", "swap", "peek_line", "peek_card",
              "replace_open", "give", "exchange")


def random_slot(stream: Stream, players: int) -> Slot:
    """A place that may lie anywhere, outside the table included."""
    return Slot(stream.below(players + 2) - 1, stream.below(7) - 1, stream.below(7) - 1)


def random_card(stream: Stream, state: State) -> int:
    """A card id: one in hand, one on the table, or any id (out of range included)."""
    choice = stream.below(3)
    if choice == 0 and state.hand:
        return state.hand[stream.below(len(state.hand))][0]
    if choice == 1:
        cells = [c for g in state.grids for c in g.cells if c != HOLE]
        if cells:
            return cells[stream.below(len(cells))]
    return stream.below(state.ruleset.deck_size + 4) - 2


def random_move(stream: Stream, state: State) -> Move:
    """Any move at all, of any kind, with random places, cards and seats."""
    kind = MOVE_KINDS[stream.below(len(MOVE_KINDS))]
    n = state.players
    if kind == "turn_up":
        return TurnUp(random_slot(stream, n))
    if kind == "draw":
        return DrawFromDeck()
    if kind == "take":
        return TakeDiscard()
    if kind == "place":
        return Place(random_card(stream, state), random_slot(stream, n))
    if kind == "discard":
        return Discard(random_card(stream, state))
    if kind == "swap":
        return Swap(random_slot(stream, n), random_slot(stream, n))
    if kind == "peek_line":
        return PeekLine(("row", "col", "diag")[stream.below(3)], stream.below(7) - 1)
    if kind == "peek_card":
        return PeekCard(random_slot(stream, n))
    if kind == "replace_open":
        return ReplaceOpen(random_slot(stream, n))
    if kind == "give":
        return Give(stream.below(n + 2) - 1)
    return Exchange(random_slot(stream, n), random_slot(stream, n))


def near_move(stream: Stream, move: Move, state: State) -> Move:
    """A legal move with one field changed: the refusals that matter most lie next to it."""
    n = state.players
    if isinstance(move, (TurnUp, PeekCard, ReplaceOpen)):
        return type(move)(random_slot(stream, n))
    if isinstance(move, Place):
        if stream.below(2):
            return Place(move.card, random_slot(stream, n))
        return Place(random_card(stream, state), move.at)
    if isinstance(move, Discard):
        return Discard(random_card(stream, state))
    if isinstance(move, Swap):
        return Swap(move.a, random_slot(stream, n)) if stream.below(2) else Swap(move.a, move.a)
    if isinstance(move, PeekLine):
        return PeekLine(move.axis, stream.below(7) - 1)
    if isinstance(move, Give):
        return Give(stream.below(n + 2) - 1)
    if isinstance(move, Exchange):
        return Exchange(move.take, random_slot(stream, n)) if stream.below(2) else Exchange(
            move.at, move.take)
    return random_move(stream, state)


def test_swap_orders_offered_as_accepted() -> None:
    """legal_moves offers Swap(a, b) with a before b in reading order only; apply must not
    take Swap(b, a) as well, or one decision would have two encodings in the log."""
    state = new_game(ruleset_for("grande"), 2, bytes(32))
    while state.phase is not Phase.DRAW:
        state = apply(state, legal_moves(state)[0])
    offered = set(legal_moves(state))
    swap = next(m for m in offered if isinstance(m, Swap))
    back = Swap(swap.b, swap.a)
    try:
        apply(state, back)
        accepted = True
    except IllegalMove:
        accepted = False
    assert accepted == (back in offered), f"{back} accepted={accepted}, offered={back in offered}"


@pytest.mark.parametrize("variant,players", VARIANTS_AND_PLAYERS)
@PROPERTY_SETTINGS
@given(seed=seeds, move_seed=move_seeds)
def test_apply_agrees_with_legal_moves(
    variant: str, players: int, seed: bytes, move_seed: bytes
) -> None:
    prober = Stream(move_seed, "tests/properties/probes")
    counts = {"offered": 0, "refused": 0}
    phases: set[Phase] = set()

    def probe(state: State) -> None:
        if prober.below(2):
            return  # half the states, to keep the file quick
        before = state_hash(state)
        offered = legal_moves(state)
        legal = set(offered)
        assert len(legal) == len(offered), "legal_moves lists a move twice"
        # Every offered move is accepted (a sample of 30 where Grande's Swaps make hundreds).
        tried = offered if len(offered) <= 30 or prober.below(8) == 0 else [
            offered[prober.below(len(offered))] for _ in range(30)]
        for m in tried:
            after = apply(state, m)
            assert after.card_count() == state.ruleset.deck_size
            counts["offered"] += 1
        # Moves not offered are refused with IllegalMove and change nothing.
        for k in range(12):
            m = random_move(prober, state) if k % 2 else near_move(
                prober, offered[prober.below(len(offered))], state)
            if m in legal:
                continue
            with pytest.raises(IllegalMove):
                apply(state, m)
            counts["refused"] += 1
        phases.add(state.phase)
        assert state_hash(state) == before

    played = play_random(variant, players, seed, move_seed, each=probe)
    end = played.states[-1]
    assert to_act(end) is None
    for m in (DrawFromDeck(), TakeDiscard(), TurnUp(Slot(0, 0, 0)), Give(1)):
        with pytest.raises(IllegalMove):
            apply(end, m)
    assert counts["offered"] > 100 and counts["refused"] > 100
    assert {Phase.REVEAL, Phase.DRAW, Phase.PLAY, Phase.TURN_UP} <= phases
