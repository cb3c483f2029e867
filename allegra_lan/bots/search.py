"""Search from one seat's view: whole states that agree with it, and playouts of them.

A search bot cannot ask the engine "what if" of the real state, which it
never has. So it *determinizes*: it builds full States that agree with its
view on every fact its seat can see or remember (every card face up, its
own peeks, the hand, the discard pile, the cleared cards, a knock's cards, the
size of the deck, totals, turn and decision), with the cards it cannot
see dealt at random from the values it has not seen. Plays of such a state
by the real engine are then plays the seat could meet.

What a seat knows of the cards out of sight is what a person who watched the
table would: the view itself lists the discard pile under its top and the
cards cleared this round (`SeatView.out_of_sight`), and `Memory` keeps each
card's value once it was shown, so the cards a reshuffle (R8) took back into
the deck are dealt as the values they were, not from the unseen ones.

Playouts (`play_round_by`) finish the round with bots at every seat, each
deciding from its own view of the made-up state (so a seat in a playout
knows no more than it would at the table), and move the state in place
(`engine.apply_in_place`): a playout applies dozens of moves to a throwaway
state, and copying it at each was most of the engine's share of the cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from allegra_lan.rules.cards import SeededCards
from allegra_lan.rules.effects import Closed
from allegra_lan.rules.engine import apply_in_place, to_act
from allegra_lan.rules.moves import Move
from allegra_lan.rules.rng import Stream
from allegra_lan.rules.ruleset import Ruleset, Variant
from allegra_lan.rules.state import DECISION_KIND, HOLE, Grid, Phase, State
from allegra_lan.rules.view import DecisionKind, SeatView, view

from .base import Bot
from .offer import offered_moves

Deal = State
"""A determinized state: a whole game the search made up from one seat's view (never the
real game's state, which no bot is given)."""

PHASE_OF: dict[DecisionKind, Phase] = {kind: phase for phase, kind in DECISION_KIND.items()}


# ----------------------------------------------------------------- what a seat remembers


@dataclass
class Memory:
    """The values a seat has seen, by card id, for the round it saw them in.

    Fed with every view the seat is given (`see`); a card's value once shown
    never changes within a round (reshuffled cards keep their ids and values),
    so the map only grows until the next round clears it."""

    round_no: int = -1
    values: dict[int, int] = field(default_factory=dict)

    def see(self, view: SeatView) -> None:
        if view.round_no != self.round_no:
            self.round_no = view.round_no
            self.values = {}
        for card, value in _visible(view).items():
            if value is not None:
                self.values[card] = value


# ----------------------------------------------------------------- determinizing a view


class DealtCards:
    """The card source of a determinized state: this round's values as dealt by the search,
    reshuffles (R8) and later rounds from the search's own stream, never the real game's."""

    __slots__ = ("round_no", "values", "seed", "later")
    fair = False

    def __init__(self, ruleset: Ruleset, round_no: int, values: dict[int, int], seed: bytes) -> None:
        self.round_no = round_no
        self.values = values
        self.seed = seed
        self.later = SeededCards(ruleset, seed)

    def value(self, round_no: int, card: int) -> int:
        if round_no == self.round_no:
            return self.values[card]
        return self.later.value(round_no, card)

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        order = list(cards)
        Stream(self.seed, f"allegra-lan/search/reshuffle/{round_no}/{count}").shuffle(order)
        return order


def _visible(view: SeatView) -> dict[int, int | None]:
    """Every card id the view shows, with its value where the seat knows it."""
    out: dict[int, int | None] = {}
    for d in view.displays:
        for row in d:
            for cv in row:
                if cv is not None:
                    out[cv.card] = cv.value
    if view.discard_top is not None:
        out[view.discard_top.card] = view.discard_top.value
    for h in view.hand:
        out[h.card] = h.value
    if view.knock is not None:
        out[view.knock[1].card] = view.knock[1].value
        if view.knock[2] is not None:
            out[view.knock[2].card] = view.knock[2].value
    out.update(view.out_of_sight)
    return out


def unseen_pool(view: SeatView, memory: Memory | None = None) -> tuple[list[int], dict[int, int]]:
    """The values the seat has not seen, and the remembered cards out of sight (id -> value).

    The deck's composition less every value the view shows (the table, and the cards seen
    and out of sight: the pile under its top, the cleared ones) and every remembered value
    of a card the view no longer holds (a reshuffle, R8, took it back into the deck)."""
    counts: dict[int, int] = {}
    for v in view.ruleset.deck_values():
        counts[v] = counts.get(v, 0) + 1
    shown = _visible(view)
    remembered: dict[int, int] = {}
    if memory is not None and memory.round_no == view.round_no:
        remembered = {c: v for c, v in memory.values.items() if shown.get(c) is None}
    for v in list(shown.values()) + list(remembered.values()):
        if v is not None and counts.get(v, 0) > 0:
            counts[v] -= 1
    pool = [v for v in sorted(counts) for _ in range(counts[v])]
    return pool, remembered


def determinize(view: SeatView, stream: Stream, memory: Memory | None = None) -> State:
    """A full State that `view(state, view.seat)` shows as `view` (but for the last move's
    effects), with every card the seat cannot see dealt from `stream`.

    The unseen places are the closed cards the seat did not peek at and the deck; the
    values dealt to them are the deck's composition less all the seat has seen
    (`unseen_pool`)."""
    rs = view.ruleset
    n = view.players
    shown = _visible(view)
    pool, remembered = unseen_pool(view, memory)
    # The pile under its top and the cleared cards are in the view (`out_of_sight`), ids and
    # values; only the deck is out of sight and unknown. Its ids are the ones shown nowhere:
    # the cards the seat remembers there (a reshuffle, R8, took them back from the pile)
    # first, then unknown ids. Which id lies where in it is invisible to the seat.
    buried_n = max(0, view.discard_size - 1)
    buried = [c for c, _ in view.out_of_sight[:buried_n]]
    gone = [c for c, _ in view.out_of_sight[buried_n:]]
    size = max([rs.deck_size, *(c + 1 for c in shown), *(c + 1 for c in remembered)])
    spare = [c for c in range(size) if c not in shown]
    known_ids = [c for c in spare if c in remembered]
    unknown_ids = [c for c in spare if c not in remembered]
    stream.shuffle(unknown_ids)
    deck = known_ids + unknown_ids
    while len(deck) < view.deck_size:  # ids a fair-deal reshuffle made fresh: name new ones
        deck.append(size)
        size += 1
    deck = deck[: view.deck_size]
    stream.shuffle(deck)

    values: dict[int, int] = {c: v for c, v in shown.items() if v is not None}
    values.update(remembered)
    hidden = [c for c, v in shown.items() if v is None and c not in values]
    hidden += [c for c in deck if c not in values]
    stream.shuffle(pool)
    # The pool runs short only where ids were renamed by a fair-deal reshuffle and the
    # seat's memory holds a card under two ids; the deck's values fill the gap then.
    spare_values = pool or rs.deck_values()
    for i, c in enumerate(hidden):
        values[c] = pool[i] if i < len(pool) else spare_values[i % len(spare_values)]

    seed = bytes(stream.word().to_bytes(8, "big") * 4)
    s = State.__new__(State)
    s.ruleset = rs
    s.players = n
    s.source = DealtCards(rs, view.round_no, values, seed)
    s.round_no = view.round_no
    s.dealer = view.dealer
    s.active = view.active
    s.grids = []
    up: set[int] = set()
    peeked: set[int] = set()
    for d in view.displays:
        cols = len(d[0]) if d else 0
        cells: list[int] = []
        for row in d:
            for cv in row:
                if cv is None:
                    cells.append(HOLE)
                    continue
                cells.append(cv.card)
                if cv.up:
                    up.add(cv.card)
                elif cv.peeked:
                    peeked.add(cv.card)
        s.grids.append(Grid(len(d), cols, cells))
    s.up = up
    known: list[int | None] = [None] * size
    for c in up:
        known[c] = values[c]
    for c in buried + gone:  # shown to all when they were discarded or cleared
        known[c] = values[c]
    for c in (view.discard_top, *view.hand):
        if c is not None:
            known[c.card] = c.value
    if view.knock is not None:
        known[view.knock[1].card] = view.knock[1].value
        if view.knock[2] is not None:
            known[view.knock[2].card] = view.knock[2].value
    s.known = known
    s.peeked = [frozenset()] * n
    if 0 <= view.seat < n:
        s.peeked[view.seat] = frozenset(peeked)
    s.deck = deck
    s.discard = buried + ([] if view.discard_top is None else [view.discard_top.card])
    s.cleared = gone
    s.hand = [(h.card, h.from_deck) for h in view.hand]
    decision = view.decision
    kind = decision.kind if decision is not None else None
    s.phase = Phase.OVER if kind is None else PHASE_OF[kind]
    s.draws = len(view.hand) if kind in (DecisionKind.DRAW, DecisionKind.DRAW_SECOND) else 2
    s.first_from_deck = bool(view.hand) and view.hand[0].from_deck
    s.draw_limit = _draw_limit(s) if kind in (DecisionKind.DRAW, DecisionKind.DRAW_SECOND) else 2
    s.reveal_queue = _reveal_queue(view) if kind is DecisionKind.REVEAL else []
    s.ender = view.ender
    s.final_lap = None if view.final_lap is None else list(view.final_lap)
    s.totals = list(view.totals)
    s.results = view.results
    s.knock = None
    if view.knock is not None:
        k, given, hold = view.knock
        s.knock = (k, given.card, HOLE if hold is None else hold.card)
    s.reshuffles = 0
    s.turn = view.turn
    s.round_cleared = view.cleared
    # R24: after a 13's exchange no card is turned up this turn; the exchange was the last
    # move when the turn's other card is still to play.
    s.sealed = (
        rs.variant is Variant.GRANDE and kind is DecisionKind.PLAY
        and not getattr(rs, "turn_up_after_13", True)
        and any(isinstance(e, Closed) for e in view.effects)
    )
    s.fair = False
    s.effects = []
    s.memo = {}
    return s


def _draw_limit(s: State) -> int:
    """R20: two draws in a Grande turn, one when exactly one closed card is left (at its start)."""
    if s.ruleset.variant is not Variant.GRANDE:
        return 1
    g = s.grids[s.active]
    closed = sum(1 for c in g.cells if c != HOLE and c not in s.up)
    if s.phase is Phase.DRAW_SECOND:
        return 2
    return 1 if closed == 1 else 2


def _reveal_queue(view: SeatView) -> list[int]:
    """R3: the seats still to turn up a card, clockwise from the starter, two each."""
    n = view.players
    seat = view.decision.seat  # type: ignore[union-attr]
    starter = (view.dealer + 1) % n
    order = [(starter + i) % n for i in range(n)]
    done = sum(1 for row in view.displays[seat] for cv in row if cv is not None and cv.up)
    after = order[order.index(seat) + 1:]
    return [seat] * max(1, 2 - done) + [q for q in after for _ in range(2)]


# ----------------------------------------------------------------- playouts


def play_round_by(s: State, bots: Sequence[Bot], limit: int = 3000) -> bool:
    """Play `s`'s round on to its end in place, every seat's move chosen by its bot from its
    own view of `s`, knocks asked as the driver asks them (R16); whether the round ended
    within `limit` moves (a game's end ends the round too).

    Bots, not a cheap policy, because a playout is only as good a judge as the play in it:
    a quick policy that ended rounds at once (as the search once had) made every move that
    ends the round look better than the play that waits, and lost points against the very
    judgement it checked (docs/bots.md)."""
    rounds = len(s.results)
    for _ in range(limit):
        if len(s.results) > rounds:
            return True
        decision = to_act(s)
        if decision is None:
            return True
        offered = offered_moves(s, bots)
        apply_in_place(s, bots[decision.seat].choose(view(s, decision.seat), offered))
    return len(s.results) > rounds or s.phase is Phase.OVER


def play_out(deal: Deal, move: Move, bots: Sequence[Bot]) -> Deal:
    """`move` made in a copy of `deal` and the round played on by `bots` (`play_round_by`):
    the copy as the round left it, its totals the game's after this round."""
    s = deal.clone()
    apply_in_place(s, move)
    play_round_by(s, bots)
    return s


__all__ = ["Deal", "Memory", "DealtCards", "determinize", "unseen_pool", "play_round_by", "play_out"]
