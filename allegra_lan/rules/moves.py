"""Moves: the players' decisions, in the game's own words, as small frozen values.

A move says only what the player chose; whose decision it is comes from
`to_act(state)`, and every consequence (clears, collapses, the round's end)
is derived by the engine, never carried in the move. Each move converts to
and from a plain dict so that a log can carry it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple, Union


class Slot(NamedTuple):
    """A place in a display: the owning seat, row and column (0-based, current layout)."""

    seat: int
    row: int
    col: int

    def __str__(self) -> str:
        return f"seat {self.seat} row {self.row + 1} col {self.col + 1}"


class MoveError(ValueError):
    """A move dict that cannot be read."""


@dataclass(frozen=True, slots=True)
class TurnUp:
    """Turn one closed card face up (round start R3, after a discard R15/R21, after a Swap R26)."""

    at: Slot


@dataclass(frozen=True, slots=True)
class DrawFromDeck:
    """Draw the top card of the deck; it is shown to everyone (R4)."""


@dataclass(frozen=True, slots=True)
class TakeDiscard:
    """Take the top card of the discard pile; it must be placed (R15, R21)."""


@dataclass(frozen=True, slots=True)
class Place:
    """Put a card from hand in place of the card at `at`, which is discarded face up."""

    card: int
    at: Slot


@dataclass(frozen=True, slots=True)
class Discard:
    """Discard a card drawn from the deck (Grande: an action card activates, R22)."""

    card: int


@dataclass(frozen=True, slots=True)
class Swap:
    """Grande R26: exchange two cards of one's own display instead of drawing."""

    a: Slot
    b: Slot


@dataclass(frozen=True, slots=True)
class PeekLine:
    """Grande -2 (R23): look secretly at the closed cards of one row or column."""

    axis: str  # "row" or "col"
    index: int


@dataclass(frozen=True, slots=True)
class PeekCard:
    """Grande 5 (R23): look secretly at one closed card."""

    at: Slot


@dataclass(frozen=True, slots=True)
class ReplaceOpen:
    """Grande 13 (R24): discard the face-up card at `at`; the deck's top goes there, closed."""

    at: Slot


@dataclass(frozen=True, slots=True)
class Give:
    """ALLEGRA R16: give the drawn deck card to a seat that knocked."""

    to: int


@dataclass(frozen=True, slots=True)
class Exchange:
    """ALLEGRA R16: take card `take` from the knocker's area and put it in place of `at`."""

    take: Slot
    at: Slot


Move = Union[
    TurnUp, DrawFromDeck, TakeDiscard, Place, Discard, Swap,
    PeekLine, PeekCard, ReplaceOpen, Give, Exchange,
]

MOVE_NAMES: dict[type, str] = {
    TurnUp: "turn_up", DrawFromDeck: "draw_deck", TakeDiscard: "take_discard",
    Place: "place", Discard: "discard", Swap: "swap", PeekLine: "peek_line",
    PeekCard: "peek_card", ReplaceOpen: "replace_open", Give: "give", Exchange: "exchange",
}
_BY_NAME = {v: k for k, v in MOVE_NAMES.items()}


def move_name(move: Move) -> str:
    return MOVE_NAMES[type(move)]


def move_to_dict(move: Move) -> dict[str, Any]:
    """{"move": name, field: value...}; slots become [seat, row, col] lists."""
    d: dict[str, Any] = {"move": MOVE_NAMES[type(move)]}
    for name in type(move).__slots__:  # type: ignore[attr-defined]
        v = getattr(move, name)
        d[name] = list(v) if isinstance(v, Slot) else v
    return d


def _int(d: dict[str, Any], key: str) -> int:
    v = d.get(key)
    if not isinstance(v, int) or isinstance(v, bool):
        raise MoveError(f"move field {key!r} must be an integer")
    return v


def _slot(d: dict[str, Any], key: str) -> Slot:
    v = d.get(key)
    if (
        not isinstance(v, (list, tuple)) or len(v) != 3
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    ):
        raise MoveError(f"move field {key!r} must be [seat, row, col]")
    return Slot(*v)


def move_from_dict(d: Any) -> Move:
    """Read a move dict; a precise MoveError names what is wrong."""
    if not isinstance(d, dict):
        raise MoveError("a move is a map")
    name = d.get("move")
    cls = _BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise MoveError(f"unknown move {name!r}")
    names = cls.__slots__  # type: ignore[attr-defined]
    extra = set(d) - set(names) - {"move"}
    if extra:
        raise MoveError(f"unexpected field {sorted(extra)[0]!r} in a {name} move")
    kwargs: dict[str, Any] = {}
    for f in names:
        if f in ("at", "a", "b", "take"):
            kwargs[f] = _slot(d, f)
        elif f == "axis":
            v = d.get(f)
            if v not in ("row", "col"):
                raise MoveError("move field 'axis' must be 'row' or 'col'")
            kwargs[f] = v
        else:
            kwargs[f] = _int(d, f)
    return cls(**kwargs)


def describe_move(move: Move) -> str:
    """The move in plain words (for logs, errors and the client)."""
    if isinstance(move, TurnUp):
        return f"turn up the card at {move.at}"
    if isinstance(move, DrawFromDeck):
        return "draw from the deck"
    if isinstance(move, TakeDiscard):
        return "take the top of the discard pile"
    if isinstance(move, Place):
        return f"place card #{move.card} at {move.at}"
    if isinstance(move, Discard):
        return f"discard card #{move.card}"
    if isinstance(move, Swap):
        return f"swap {move.a} with {move.b}"
    if isinstance(move, PeekLine):
        return f"peek at {move.axis} {move.index + 1}"
    if isinstance(move, PeekCard):
        return f"peek at {move.at}"
    if isinstance(move, ReplaceOpen):
        return f"replace the open card at {move.at} with a closed one"
    if isinstance(move, Give):
        return f"give the card to seat {move.to}"
    return f"take {move.take} and put it at {move.at}"
