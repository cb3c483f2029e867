"""A move's consequences in plain words, and its clears as frames to show one step at a time.

Both are read from the engine's effects (rules/effects.py) and from two seat
views, the one before the move and the one after, so they tell a seat only
what it saw: another seat's peek says how many cards, never which values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from allegra_lan.rules import CardView, SeatView, Slot, to_act
from allegra_lan.rules.effects import (
    Cleared, Closed, Collapsed, Discarded, Drawn, EndTriggered, Effect, GameEnded, Given,
    Peeked, Placed, Reshuffled, Revealed, RoundEnded, Swapped,
)
from allegra_lan.rules.state import DECISION_WORDS, HOLE
from allegra_lan.rules.ruleset import Variant

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


def narrate_effect(e: Effect, names: Sequence[str], viewer: int | None, actor: int | None,
                   value: Callable[[int], str]) -> str | None:
    """The words for an effect that follows from a move (a clear, a collapse, a reshuffle, a
    round's end and the game's): the one narrator of the play client's "Last moves"
    (describe_effects) and the replay viewer's move list (stepper.describe). `viewer` is the
    seat the words are for (None: a replay seen by nobody in particular), `actor` the seat
    whose move it was, `value` a card's face as that viewer saw it. None for effects that a
    move's own words already tell (draws, places, peeks...)."""
    def who(seat: int) -> str:
        return "you" if seat == viewer else name_of(names, seat)

    def whose(seat: int) -> str:
        return "your" if seat == viewer else f"{name_of(names, seat)}'s"

    if isinstance(e, Cleared):
        chain = f" (chain step {e.step})" if e.step > 1 else ""
        shown = " ".join(value(c) for c in e.cards)
        return f"cleared {len(e.cards)} card{'s' if len(e.cards) != 1 else ''}: {shown}{chain}"
    if isinstance(e, Collapsed):
        lines = [f"row {r + 1}" for r in e.rows] + [f"column {c + 1}" for c in e.cols]
        return f"{whose(e.seat)} display closed up ({', '.join(lines)} gone)"
    if isinstance(e, Reshuffled):
        return f"the discard pile was shuffled into a new deck of {e.cards} cards"
    if isinstance(e, EndTriggered):
        if actor is not None and actor != e.seat:  # ALLEGRA: a move in a shared column
            return (f"{whose(actor)} move left {who(e.seat)} with no closed card: {who(e.seat)} "
                    "ended the round; last turns for the others")
        has = "you have" if e.seat == viewer else f"{name_of(names, e.seat)} has"
        return f"{has} no closed card left: last turns for the others"
    if isinstance(e, RoundEnded):
        return f"round {e.round_no + 1} is over"
    if isinstance(e, GameEnded):
        if tuple(e.winners) == (viewer,):
            return "game over: you win"
        ws = " and ".join(who(w) for w in e.winners)
        return f"game over, {'winner' if len(e.winners) == 1 else 'winners'} {ws}"
    return None


def describe_effects(before: SeatView, after: SeatView, effects: Sequence[Effect],
                     names: Sequence[str]) -> list[str]:
    """One line per thing that happened, as the seat of `after` saw it."""
    me = after.seat
    values = known_values(before, after, effects)

    def who(seat: int) -> str:
        return "you" if seat == me else name_of(names, seat)

    def came_from(card: int) -> Slot | None:
        """Where a card lay before the move, if in a display (a knock exchange takes one)."""
        for s, rows in enumerate(before.displays):
            for r, row in enumerate(rows):
                for c, cv in enumerate(row):
                    if cv is not None and cv.card == card:
                        return Slot(s, r, c)
        return None

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
            origin = came_from(e.card)
            if origin is not None and origin != e.at:  # a card moved from a display: say whose
                text = (f"{who(e.seat)} took the {val(e.card)} from {_where(origin, names, me)} "
                        f"and put it at {_where(e.at, names, me, e.seat)}")
            else:
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
        elif isinstance(e, Given):
            out.append(f"{who(e.seat)} gave the {val(e.card)} to {who(e.to)}, who knocked")
        else:
            words = narrate_effect(e, names, me, before.active, val)
            if words is not None:
                out.append(words)
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


# ------------------------------------------------------------------ refusals and tips

_SLOT = re.compile(r"seat (\d+) row (\d+) col (\d+)")  # str(Slot): rows and columns from 1


def refusal_words(reason: str, state: Any, seat: int, names: Sequence[str]) -> str:
    """An engine's or a table's refusal said as a player would say it (issue 11, found 5:
    "discarding is not possible now: seat 0: turn up a card to start the round is expected"
    becomes "First turn up a card to start the round."). One sentence, no seat numbers."""
    reason = re.sub(r"\s*\((?:R|E)\d+(?:, (?:R|E)\d+)*\)", "", reason).strip()
    if " is not possible now: " in reason:
        d = to_act(state)
        if d is None:
            return "The game is over."
        if d.seat != seat:
            return f"Wait: it is {name_of(names, d.seat)}'s turn."
        words = DECISION_WORDS.get(d.kind, str(d.kind))
        return f"First {words}."
    m = re.fullmatch(r"seat \d+ row \d+ col \d+ is a hole: there is no card there", reason)
    if m:
        return "There is no card here: it was cleared."
    m = re.fullmatch(r"seat \d+ row \d+ col \d+ is not (.*)", reason)
    if m:
        where = re.sub(r"seat (\d+)'s", lambda g: f"{name_of(names, int(g.group(1)))}'s", m.group(1))
        return f"Not this card: choose {where}."
    if reason.startswith("there is no place "):
        return "There is no card here."
    if re.fullmatch(r"card #\d+ is not in hand", reason):
        return "That card is not in your hand."
    reason = _SLOT.sub(lambda g: f"{name_of(names, int(g.group(1)))}'s row {g.group(2)} col {g.group(3)}",
                       reason)
    reason = re.sub(r"\bseat (\d+)\b", lambda g: name_of(names, int(g.group(1))), reason)
    return reason[:1].upper() + reason[1:] + ("" if reason.endswith((".", "!", "?")) else ".")


KNOCK_HINT = "Knock (y) for this card: you'd place it and the giver takes one of yours."
ACTION_HINTS = {
    -2: "A -2 drawn: discard it (x) to peek at a row or column, or place it.",
    5: "A 5 drawn: discard it (x) to peek at one closed card, or place it.",
    13: "A 13 drawn: discard it (x) to swap an open card for a closed one.",
}


def first_time_hints(before: SeatView, after: SeatView, effects: Sequence[Effect],
                     names: Sequence[str], ended_by: int | None = None) -> list[tuple[str, str]]:
    """(kind, tip) for things a newcomer meets for the first time in a move: a clear, an
    action card drawn from the deck (Grande), a round's ender doubled, and why. The client
    shows each kind once per game. `ended_by`: the seat whose move left the round's ender
    with no closed card, when that was another seat (ALLEGRA's shared columns)."""
    me = after.seat
    out: list[tuple[str, str]] = []
    for e in effects:
        if isinstance(e, Cleared):
            out.append(("clear", f"{len(e.cards)} equal face-up cards in a line were cleared: "
                                 "they count nothing."))
        elif isinstance(e, Drawn) and e.from_deck and e.seat == me and after.variant is Variant.GRANDE:
            value = known_values(before, after, effects).get(e.card)
            if value in ACTION_HINTS:
                out.append(("action", ACTION_HINTS[value]))
    if any(isinstance(e, RoundEnded) for e in effects) and after.results:
        r = after.results[-1]
        if r.ender is not None and r.doubled:
            who = "You" if r.ender == me else name_of(names, r.ender)
            why = "not the lowest"
            if ended_by is not None and ended_by != r.ender:
                whose = "your" if r.ender == me else "their"
                by = "you" if ended_by == me else name_of(names, ended_by)
                out.append(("doubled", f"{by} turned up {whose} last closed card: {who.lower()} "
                                       f"ended the round, {r.raw[r.ender]} doubled to "
                                       f"{r.scores[r.ender]}."))
            else:
                out.append(("doubled", f"{who} ended the round on {r.raw[r.ender]}, {why} "
                                       f"({min(r.raw)}): doubled to {r.scores[r.ender]}."))
    return [(k, "Y" + t[1:] if t.startswith("you ") else t) for k, t in out]  # names as named


__all__ = ["describe_effects", "narrate_effect", "clear_frames", "known_values", "Frame", "refusal_words",
           "first_time_hints", "KNOCK_HINT"]
