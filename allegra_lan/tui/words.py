"""A move's consequences in plain words, and its clears as frames to show one step at a time.

Both are read from the engine's effects (rules/effects.py) and from two seat
views, the one before the move and the one after, so they tell a seat only
what it saw: another seat's peek says how many cards, never which values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from allegra_lan.rules import CardView, SeatView, Slot
from allegra_lan.rules.effects import (
    Cleared, Closed, Collapsed, Discarded, Drawn, EndTriggered, Effect, GameEnded, Given,
    Peeked, Placed, Reshuffled, Revealed, RoundEnded, Swapped,
)
from allegra_lan.rules.state import HOLE

from .screen import name_of, value_text

Displays = tuple[tuple[tuple[CardView | None, ...], ...], ...]


def a_card(text: str) -> str:
    """`a 7`, `an 8`, `an 11`: the article as the number is spoken."""
    return f"an {text}" if text in ("8", "11", "18") or text.startswith("8") else f"a {text}"


def known_values(before: SeatView, after: SeatView, effects: Sequence[Effect]) -> dict[int, int]:
    """Every card value this seat could see around a move: hands, piles, open cards, reveals."""
    values: dict[int, int] = {}
    for v in (before, after):
        for h in v.hand:
            values[h.card] = h.value
        if v.discard_top is not None and v.discard_top.value is not None:
            values[v.discard_top.card] = v.discard_top.value
        if v.knock is not None:
            for h in v.knock[1:]:
                if h is not None:
                    values[h.card] = h.value
        for rows in v.displays:
            for row in rows:
                for c in row:
                    if c is not None and c.value is not None:
                        values[c.card] = c.value
    for e in effects:
        if isinstance(e, Revealed):
            values[e.card] = e.value
    return values


def _where(slot: Slot, names: Sequence[str], viewer: int, actor: int | None = None) -> str:
    place = f"row {slot.row + 1} col {slot.col + 1}"
    if slot.seat == actor:
        return place
    owner = "your" if slot.seat == viewer else f"{name_of(names, slot.seat)}'s"
    return f"{owner} {place}"


def describe_effects(before: SeatView, after: SeatView, effects: Sequence[Effect],
                     names: Sequence[str]) -> list[str]:
    """One line per thing that happened, as the seat of `after` saw it."""
    me = after.seat
    values = known_values(before, after, effects)

    def who(seat: int) -> str:
        return "you" if seat == me else name_of(names, seat)

    def val(card: int) -> str:
        return value_text(values.get(card))

    out: list[str] = []
    for e in effects:
        if isinstance(e, Revealed):
            if e.at is not None and not any(
                    isinstance(p, Placed) and p.at == e.at for p in effects):
                out.append(f"{_where(e.at, names, me)}: turned up {a_card(value_text(e.value))}")
        elif isinstance(e, Drawn):
            src = "from the deck" if e.from_deck else "from the discard pile"
            out.append(f"{who(e.seat)} took {a_card(val(e.card))} {src}")
        elif isinstance(e, Placed):
            text = f"{who(e.seat)} put the {val(e.card)} at {_where(e.at, names, me, e.seat)}"
            if e.replaced != HOLE:
                text += f", out goes {a_card(val(e.replaced))}"
            out.append(text)
        elif isinstance(e, Discarded):
            text = f"{who(e.seat)} discarded the {val(e.card)}"
            out.append(text + (": its action plays" if e.activated else ""))
        elif isinstance(e, Peeked):
            if e.values:
                seen = " ".join(value_text(x) for x in e.values)
                out.append(f"{who(e.seat)} secretly saw: {seen}")
            else:
                n = len(e.cards)
                out.append(f"{who(e.seat)} secretly looked at {n} card{'s' if n != 1 else ''}")
        elif isinstance(e, Swapped):
            out.append(f"{who(e.seat)} swapped row {e.a.row + 1} col {e.a.col + 1} "
                       f"with row {e.b.row + 1} col {e.b.col + 1}")
        elif isinstance(e, Closed):
            out.append(f"the deck's top card went face down at {_where(e.at, names, me)}")
        elif isinstance(e, Cleared):
            chain = f" (chain step {e.step})" if e.step > 1 else ""
            shown = " ".join(val(c) for c in e.cards)
            out.append(f"cleared {len(e.cards)} cards: {shown}{chain}")
        elif isinstance(e, Collapsed):
            parts = []
            if e.rows:
                parts.append(f"{len(e.rows)} row{'s' if len(e.rows) != 1 else ''}")
            if e.cols:
                parts.append(f"{len(e.cols)} column{'s' if len(e.cols) != 1 else ''}")
            owner = "your" if e.seat == me else f"{name_of(names, e.seat)}'s"
            out.append(f"{owner} display closed up: {' and '.join(parts)} gone")
        elif isinstance(e, Given):
            out.append(f"{who(e.seat)} gave the {val(e.card)} to {who(e.to)}, who knocked")
        elif isinstance(e, Reshuffled):
            out.append(f"the discard pile was shuffled into a new deck of {e.cards}")
        elif isinstance(e, EndTriggered):
            out.append(f"{who(e.seat)} has no closed card left: last turns for the others")
        elif isinstance(e, RoundEnded):
            out.append(f"round {e.round_no + 1} is over")
        elif isinstance(e, GameEnded):
            out.append("the game is over")
    return out


@dataclass(frozen=True)
class Frame:
    """The displays at one clearing step, with the cleared slots to highlight."""

    displays: Displays
    highlight: frozenset[Slot]
    message: str


def clear_frames(before: SeatView, after: SeatView, effects: Sequence[Effect]) -> list[Frame]:
    """The displays just before each clearing step of a move, so a chain reaction can be
    shown step by step (the view after the move shows only the end of it). Empty when the
    move cleared nothing."""
    if not any(isinstance(e, Cleared) for e in effects):
        return []
    values = known_values(before, after, effects)
    grids = [[list(row) for row in rows] for rows in before.displays]

    def put(slot: Slot, card: CardView | None) -> None:
        s, r, c = slot
        if 0 <= s < len(grids) and 0 <= r < len(grids[s]) and 0 <= c < len(grids[s][r]):
            grids[s][r][c] = card

    frames: list[Frame] = []
    for e in effects:
        if isinstance(e, Revealed) and e.at is not None:
            put(e.at, CardView(e.card, e.value, True, False))
        elif isinstance(e, Placed):
            put(e.at, CardView(e.card, values.get(e.card), True, False))
        elif isinstance(e, Closed):
            put(e.at, CardView(e.card, None, False, False))
        elif isinstance(e, Swapped):
            a = grids[e.a.seat][e.a.row][e.a.col]
            b = grids[e.b.seat][e.b.row][e.b.col]
            put(e.a, b)
            put(e.b, a)
        elif isinstance(e, Cleared):
            snapshot = tuple(tuple(tuple(row) for row in rows) for rows in grids)
            chain = f", chain step {e.step}" if e.step > 1 else ""
            frames.append(Frame(snapshot, frozenset(e.slots),
                                f"clear: {len(e.slots)} cards{chain}"))
            for slot in e.slots:
                put(slot, None)
        elif isinstance(e, Collapsed):
            g = grids[e.seat]
            g = [row for r, row in enumerate(g) if r not in e.rows]
            g = [[c for i, c in enumerate(row) if i not in e.cols] for row in g]
            grids[e.seat] = g
    return frames


__all__ = ["describe_effects", "clear_frames", "known_values", "Frame"]
