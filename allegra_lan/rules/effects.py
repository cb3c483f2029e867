"""Effects: what a move caused, in order, for the client's move list and statistics.

Effects are derived by the engine and never written into a log. Every effect
is public except `Peeked`, whose values only the peeker may see; `view()`
strips them for everyone else.
"""

from __future__ import annotations

from dataclasses import dataclass

from .moves import Slot


@dataclass(frozen=True, slots=True)
class Revealed:
    card: int
    value: int
    at: Slot | None  # None: revealed off the displays (drawn, discarded, held)


@dataclass(frozen=True, slots=True)
class Drawn:
    seat: int
    card: int
    from_deck: bool


@dataclass(frozen=True, slots=True)
class Placed:
    seat: int
    card: int
    at: Slot
    replaced: int  # the card id that left `at` for the discard pile (or the knocker's hand)


@dataclass(frozen=True, slots=True)
class Discarded:
    seat: int
    card: int
    activated: bool  # Grande R22: an action card discarded straight from the deck


@dataclass(frozen=True, slots=True)
class Peeked:
    seat: int
    cards: tuple[int, ...]
    values: tuple[int, ...]  # empty in every view but the peeker's


@dataclass(frozen=True, slots=True)
class Swapped:
    seat: int
    a: Slot
    b: Slot


@dataclass(frozen=True, slots=True)
class Closed:
    """Grande R24: the 13 put the deck's top card, unseen, at `at`."""

    seat: int
    card: int
    at: Slot


@dataclass(frozen=True, slots=True)
class Cleared:
    step: int  # 1 for the first clearing after a move, 2.. in a chain reaction
    slots: tuple[Slot, ...]
    cards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Collapsed:
    seat: int
    rows: tuple[int, ...]  # removed rows, as numbered before the collapse
    cols: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Given:
    seat: int
    to: int
    card: int


@dataclass(frozen=True, slots=True)
class Reshuffled:
    cards: int


@dataclass(frozen=True, slots=True)
class EndTriggered:
    seat: int


@dataclass(frozen=True, slots=True)
class RoundEnded:
    round_no: int


@dataclass(frozen=True, slots=True)
class GameEnded:
    winners: tuple[int, ...]


Effect = (
    Revealed | Drawn | Placed | Discarded | Peeked | Swapped | Closed | Cleared
    | Collapsed | Given | Reshuffled | EndTriggered | RoundEnded | GameEnded
)
