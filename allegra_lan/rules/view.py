"""Per-seat views: exactly what one seat may see (DESIGN.md property 6).

A view is built from the public state and that seat's own peeks only, so two
states that differ in cards the seat may not see give equal views. Bots and
the client decide and draw from views, never from the full state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from .effects import Effect, Peeked
from .engine import area_slots, peeked_value, to_act
from .moves import Slot
from .ruleset import Ruleset, Variant
from .state import HOLE, Decision, DecisionKind, RoundResult, State


class CardView(NamedTuple):
    """One card as a seat sees it; `value` is None when that seat does not know it."""

    card: int
    value: int | None
    up: bool
    peeked: bool  # closed, and this seat looked at it (R23)


class HandCard(NamedTuple):
    card: int
    value: int
    from_deck: bool


Row = tuple[CardView | None, ...]  # None is a hole

# The seat of nobody at the table: `view(state, SPECTATOR)` shows what every seat saw (open
# cards, drawn cards, where a peek looked) and no seat's secrets. The replay viewer's move
# list and `allegra replay show`'s spectator table are told from it.
SPECTATOR = -1


@dataclass(frozen=True)
class SeatView:
    seat: int
    ruleset: Ruleset
    players: int
    round_no: int
    dealer: int
    active: int
    decision: Decision | None
    displays: tuple[tuple[Row, ...], ...]
    deck_size: int
    discard_size: int
    discard_top: CardView | None
    hand: tuple[HandCard, ...]  # the active seat's drawn cards, shown to all (R4)
    knock: tuple[int, HandCard, HandCard | None] | None  # knocker, given card, card it holds
    totals: tuple[int, ...]
    results: tuple[RoundResult, ...]
    ender: int | None
    final_lap: tuple[int, ...] | None
    cleared: int
    turn: int
    effects: tuple[Effect, ...]
    # (card, value) of every card shown to all this round and out of sight now: the discard
    # pile under its top, oldest first, then the cards cleared (R5, R7). Every seat watched
    # them go down, so a seat knows them as a person at the table does; a reshuffle (R8)
    # takes the pile's cards back into the deck, out of this list.
    out_of_sight: tuple[tuple[int, int], ...]

    @property
    def variant(self) -> Variant:
        return self.ruleset.variant

    @property
    def my_turn(self) -> bool:
        return self.decision is not None and self.decision.seat == self.seat

    def card_at(self, slot: Slot) -> CardView | None:
        return self.displays[slot[0]][slot[1]][slot[2]]

    def area(self, seat: int | None = None) -> list[Slot]:
        """The places `seat` plays on (its display; in ALLEGRA its area, R13)."""
        seat = self.seat if seat is None else seat
        if self.ruleset.variant is Variant.GRANDE:
            d = self.displays[seat]
            return [Slot(seat, r, c) for r in range(len(d)) for c in range(len(d[0]) if d else 0)]
        left = (seat + 1) % self.players
        out: list[Slot] = []
        for r in range(3):
            out.append(Slot(left, r, 3))
            out.extend(Slot(seat, r, c) for c in range(4))
        return out


def view(state: State, seat: int) -> SeatView:
    """What `seat` may see now (SPECTATOR: what all of them may see, no peeked value)."""
    up = state.up
    known = state.known
    mine = state.peeked[seat] if 0 <= seat < state.players else frozenset()
    # A card's view is fixed for the round once it is face up, closed or peeked, so each
    # is made once per round and shared (views are rebuilt for every decision).
    memo = state.memo
    opened: dict[int, CardView] = memo.setdefault("open", {})
    closed: dict[int, CardView] = memo.setdefault("closed", {})
    displays = []
    for g in state.grids:
        rows = []
        cols = g.cols
        cells = g.cells
        for r in range(g.rows):
            row: list[CardView | None] = []
            for c in cells[r * cols:(r + 1) * cols]:
                if c == HOLE:
                    row.append(None)
                elif c in up:
                    cv = opened.get(c)
                    if cv is None:
                        cv = opened[c] = CardView(c, known[c], True, False)
                    row.append(cv)
                elif c in mine:
                    row.append(CardView(c, peeked_value(state, seat, c), False, True))
                else:
                    cv = closed.get(c)
                    if cv is None:
                        cv = closed[c] = CardView(c, None, False, False)
                    row.append(cv)
            rows.append(tuple(row))
        displays.append(tuple(rows))
    top = state.discard[-1] if state.discard else None
    knock = None
    if state.knock is not None:
        k, given, held = state.knock
        knock = (
            k,
            HandCard(given, state.known[given], True),  # type: ignore[arg-type]
            None if held == HOLE else HandCard(held, state.known[held], False),  # type: ignore[arg-type]
        )
    effects = tuple(
        e if not isinstance(e, Peeked) or e.seat == seat else Peeked(e.seat, e.cards, ())
        for e in state.effects
    )
    return SeatView(
        seat=seat,
        ruleset=state.ruleset,
        players=state.players,
        round_no=state.round_no,
        dealer=state.dealer,
        active=state.active,
        decision=to_act(state),
        displays=tuple(displays),
        deck_size=len(state.deck),
        discard_size=len(state.discard),
        discard_top=None if top is None else CardView(top, state.known[top], True, False),
        hand=tuple(HandCard(c, state.known[c], d) for c, d in state.hand),  # type: ignore[misc]
        knock=knock,
        totals=tuple(state.totals),
        results=state.results,
        ender=state.ender,
        final_lap=None if state.final_lap is None else tuple(state.final_lap),
        cleared=state.round_cleared,
        turn=state.turn,
        effects=effects,
        out_of_sight=_out_of_sight(state),
    )


def _out_of_sight(state: State) -> tuple[tuple[int, int], ...]:
    """The view's `out_of_sight`: made for every view of every playout, so built at C speed."""
    gone = state.discard[:-1] + state.cleared
    return tuple(zip(gone, map(state.known.__getitem__, gone)))


def full_view(state: State) -> SeatView:
    """Every card shown (organisers' `--all`): a view from nobody's seat with all values.

    Of a fair-deal state it shows what that engine's source knows (public values and its
    own seat's peeks), None for the rest: no engine of a fair deal knows more."""
    v = view(state, 0)
    if state.fair:
        source = state.source

        def value(c: int) -> int | None:
            return state.known[c] if state.known[c] is not None else source.known(state.round_no, c)  # type: ignore[union-attr]
    else:
        def value(c: int) -> int | None:
            return state.source.value(state.round_no, c)  # type: ignore[union-attr]
    displays = tuple(
        tuple(
            tuple(
                None if c == HOLE else CardView(c, value(c), c in state.up, False)
                for c in g.cells[r * g.cols:(r + 1) * g.cols]
            )
            for r in range(g.rows)
        )
        for g in state.grids
    )
    return replace(v, seat=-1, displays=displays, effects=tuple(state.effects))


# DecisionKind is part of a view (`SeatView.decision.kind`): a bot, which reads views and
# never the state module, takes it from here.
__all__ = ["CardView", "HandCard", "SeatView", "DecisionKind", "SPECTATOR", "view", "full_view",
           "area_slots"]
