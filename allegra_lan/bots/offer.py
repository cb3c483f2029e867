"""The moves a seat is offered: every legal move, and ALLEGRA's Gives only to seats that knocked.

Its own module because both the driver (whole games) and the search (playouts of
made-up states, bots/search.py) ask the seats the same way, and the driver
imports the registry of bots, which imports the search.
"""

from __future__ import annotations

from typing import Callable, Protocol, Sequence

from allegra_lan.rules.engine import legal_moves
from allegra_lan.rules.moves import Give, Move
from allegra_lan.rules.ruleset import Variant
from allegra_lan.rules.state import Phase, State
from allegra_lan.rules.view import SeatView, view

from .base import Bot


class KnockTally(Protocol):
    """Where the knock windows and the knocks are counted (the driver's GameStats)."""

    knock_windows: int
    knocks: int


def offered_moves(
    state: State, bots: Sequence[Bot], stats: KnockTally | None = None,
    views: Callable[[int], SeatView] | None = None,
) -> list[Move]:
    """The moves the active seat is offered now: every legal move, Gives only to knockers.

    ALLEGRA R16: right after a deck draw (the decision is "play", the card came
    from the deck and Give moves are legal) every other seat is asked whether
    it knocks; a Give is offered only to those that did. Each seat decides from
    `views(seat)` (default: its view of `state`); under the fair deal that is the
    view of its own engine, which alone holds its seat's knowledge.
    """
    legal = legal_moves(state)
    # Only an ALLEGRA "play" decision can hold a Give; skip scanning Grande's many Swaps.
    if state.ruleset.variant is not Variant.ALLEGRA or state.phase is not Phase.PLAY:
        return legal
    if not any(isinstance(m, Give) for m in legal):
        return legal
    active = state.active
    seat_view = views if views is not None else (lambda seat: view(state, seat))
    knockers = {
        seat for seat in range(state.players)
        if seat != active and bots[seat].knocks(seat_view(seat))
    }
    if stats is not None:
        stats.knock_windows += 1
        stats.knocks += len(knockers)
    return [m for m in legal if not isinstance(m, Give) or m.to in knockers]


__all__ = ["offered_moves"]
