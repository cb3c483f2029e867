"""A move's consequences in plain words, and its clears as frames to show one step at a time.

Both are read from the engine's effects (rules/effects.py) and from two seat
views, the one before the move and the one after, so they tell a seat only
what it saw: another seat's peek says where it looked, never which values.

`describe_effects` is the one narrator of moves: the play client's "Last
moves" and per-seat last turns (tui/seat_notes.py) are told from the
person's seat, the replay viewer's move list from a spectator's view
(rules/view.SPECTATOR), so a move reads the same at the table and in the
replay, and a replay never shows a peeked value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from allegra_lan.names import name_of, who, whose
from allegra_lan.rules import CardView, SeatView, Slot, to_act
from allegra_lan.rules.effects import (
    Cleared, Closed, Collapsed, Discarded, Drawn, EndTriggered, Effect, GameEnded, Given,
    Peeked, Placed, Reshuffled, Revealed, RoundEnded, Swapped,
)
from allegra_lan.rules.state import DECISION_WORDS, HOLE
from allegra_lan.rules.ruleset import Variant

from .screen import value_text

Displays = tuple[tuple[tuple[CardView | None, ...], ...], ...]


def a_card(text: str) -> str:
    """`a 7`, `an 8`, `an 11`: the article as the number is spoken."""
    return f"an {text}" if text in ("8", "11", "18") or text.startswith("8") else f"a {text}"


def known_values(before: SeatView, after: SeatView, effects: Sequence[Effect]) -> dict[int, int]:
    """Every card value this seat could see around a move: hands, piles, open cards, reveals."""
    values: dict[int, int] = {}
    # Card ids are per round: a move that ends a round leaves a view of the next deal, whose
    # ids name other cards, so only a view of the move's own round is read.
    for v in (before, after) if after.round_no == before.round_no else (before,):
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
    owner = whose(names, slot.seat, viewer)
    return f"{owner} {place}"


def narrate_effect(e: Effect, names: Sequence[str], viewer: int | None, actor: int | None,
                   value: Callable[[int], str]) -> str | None:
    """The words for an effect that follows from a move (a clear, a collapse, a reshuffle, a
    round's end and the game's), for describe_effects. `viewer` is the seat the words are
    for (None or SPECTATOR: nobody at the table is "you"), `actor` the seat
    whose move it was, `value` a card's face as that viewer saw it. None for effects that a
    move's own words already tell (draws, places, peeks...)."""
    def subject(seat: int) -> str:
        return who(names, seat, viewer)

    def owner(seat: int) -> str:
        return whose(names, seat, viewer)

    if isinstance(e, Cleared):
        chain = f" (chain step {e.step})" if e.step > 1 else ""
        shown = " ".join(value(c) for c in e.cards)
        return f"cleared {len(e.cards)} card{'s' if len(e.cards) != 1 else ''}: {shown}{chain}"
    if isinstance(e, Collapsed):
        lines = [f"row {r + 1}" for r in e.rows] + [f"column {c + 1}" for c in e.cols]
        return f"{owner(e.seat)} display closed up ({', '.join(lines)} gone)"
    if isinstance(e, Reshuffled):
        return f"the discard pile was shuffled into a new deck of {e.cards} cards"
    if isinstance(e, EndTriggered):
        if actor is not None and actor != e.seat:  # ALLEGRA: a move in a shared column
            return (f"{owner(actor)} move left {subject(e.seat)} with no closed card: {subject(e.seat)} "
                    "ended the round; last turns for the others")
        has = "you have" if e.seat == viewer else f"{name_of(names, e.seat)} has"
        return f"{has} no closed card left: last turns for the others"
    if isinstance(e, RoundEnded):
        return f"round {e.round_no + 1} is over"
    if isinstance(e, GameEnded):
        if tuple(e.winners) == (viewer,):
            return "game over: you win"
        ws = " and ".join(subject(w) for w in e.winners)
        return f"game over, {'winner' if len(e.winners) == 1 else 'winners'} {ws}"
    return None


def _slot_of(card: int, v: SeatView) -> Slot | None:
    """Where `card` lies in `v`'s displays (None: not in any)."""
    for s, rows in enumerate(v.displays):
        for r, row in enumerate(rows):
            for c, cv in enumerate(row):
                if cv is not None and cv.card == card:
                    return Slot(s, r, c)
    return None


def _peeked_where(slots: Sequence[Slot], names: Sequence[str], viewer: int, actor: int) -> str:
    """Where a peek looked, as everybody at the table saw it: `row 3 col 2`, `row 2` for
    the closed cards of a line, with the owner's name when not the peeker's own display."""
    if len(slots) == 1:
        return _where(slots[0], names, viewer, actor)
    seat = slots[0].seat
    owner = "" if seat == actor else ("your " if seat == viewer else f"{name_of(names, seat)}'s ")
    if all(sl.seat == seat and sl.row == slots[0].row for sl in slots):
        return f"{owner}row {slots[0].row + 1}"
    if all(sl.seat == seat and sl.col == slots[0].col for sl in slots):
        return f"{owner}column {slots[0].col + 1}"
    return ", ".join(_where(sl, names, viewer, actor) for sl in slots)  # pragma: no cover - R23


def _end_reveals(effects: Sequence[Effect]) -> dict[int, int]:
    """The reveals that turn up every closed card when a round ends (R9), told as one line:
    {index of each: its run's length, 0 for all but the run's first}. They are the run of
    display reveals right before RoundEnded; the first effect is always the move's own (a
    last turn-up), never the round end's."""
    out: dict[int, int] = {}
    for i, e in enumerate(effects):
        if not isinstance(e, RoundEnded):
            continue
        j = i
        while j - 1 >= 1:
            r = effects[j - 1]
            if not (isinstance(r, Revealed) and r.at is not None):
                break
            j -= 1
        out.update({k: (i - j if k == j else 0) for k in range(j, i)})
    return out


def describe_effects(before: SeatView, after: SeatView, effects: Sequence[Effect],
                     names: Sequence[str]) -> list[str]:
    """One line per thing that happened, as the seat of `after` saw it (a spectator's views:
    as the whole table saw it)."""
    me = after.seat
    values = known_values(before, after, effects)

    def subject(seat: int) -> str:
        return who(names, seat, me)

    def val(card: int) -> str:
        return value_text(values.get(card))

    placed_at = {e.at for e in effects if isinstance(e, Placed)}
    at_end = _end_reveals(effects)
    opened: Slot | None = None  # where an open card was discarded from, in this move
    out: list[str] = []
    for i, e in enumerate(effects):
        if i in at_end:
            n = at_end[i]  # the first of the run tells them all
            if n:
                out.append(f"the {n} cards still closed are turned up" if n != 1
                           else "the one card still closed is turned up")
        elif isinstance(e, Revealed):
            if e.at is not None and e.at not in placed_at:
                out.append(f"{_where(e.at, names, me)}: turned up {a_card(value_text(e.value))}")
        elif isinstance(e, Drawn):
            src = "from the deck" if e.from_deck else "from the discard pile"
            out.append(f"{subject(e.seat)} took {a_card(val(e.card))} {src}")
        elif isinstance(e, Placed):
            origin = _slot_of(e.card, before)
            if origin is not None and origin != e.at:  # a card moved from a display: say whose
                text = (f"{subject(e.seat)} took the {val(e.card)} from {_where(origin, names, me)} "
                        f"and put it at {_where(e.at, names, me, e.seat)}")
            else:
                text = f"{subject(e.seat)} put the {val(e.card)} at {_where(e.at, names, me, e.seat)}"
            if e.replaced != HOLE:
                text += f", out goes {a_card(val(e.replaced))}"
            out.append(text)
        elif isinstance(e, Discarded):
            origin = _slot_of(e.card, before)  # a 13's action discards an open card (R24)
            if origin is not None:
                opened = origin
                out.append(f"{subject(e.seat)} discarded the open {val(e.card)} from "
                           f"{_where(origin, names, me, e.seat)}")
            else:
                text = f"{subject(e.seat)} discarded the {val(e.card)}"
                out.append(text + (": its action plays" if e.activated else ""))
        elif isinstance(e, Peeked):
            slots = [sl for c in e.cards if (sl := _slot_of(c, before)) is not None]
            where = _peeked_where(slots, names, me, e.seat) if len(slots) == len(e.cards) and slots else ""
            n = len(e.cards)
            if e.values:
                seen = " ".join(value_text(x) for x in e.values)
                out.append(f"{subject(e.seat)} secretly saw: {seen}" + (f" {'at' if n == 1 else 'in'} {where}"
                                                                  if where else ""))
            elif where:
                many = "" if n == 1 else f"{n} cards in "
                out.append(f"{subject(e.seat)} secretly looked at {many}{where}")
            else:
                out.append(f"{subject(e.seat)} secretly looked at {n} card{'s' if n != 1 else ''}")
        elif isinstance(e, Swapped):
            out.append(f"{subject(e.seat)} swapped row {e.a.row + 1} col {e.a.col + 1} "
                       f"with row {e.b.row + 1} col {e.b.col + 1}")
        elif isinstance(e, Closed):
            where = "in its place" if e.at == opened else f"at {_where(e.at, names, me, e.seat)}"
            out.append(f"the deck's top card went face down {where}")
        elif isinstance(e, Given):
            out.append(f"{subject(e.seat)} gave the {val(e.card)} to {subject(e.to)}, who knocked")
        else:
            words = narrate_effect(e, names, me, before.active, val)
            if words is not None:
                out.append(words)
    return out


def takeover_words(seats: Sequence[int], names: Sequence[str]) -> str:
    """A takeover (no move, new keys for seats whose players were away), said the same in
    the client's "Last moves" and the replay's move list."""
    who = " and ".join(name_of(names, s) for s in seats)
    return (f"{who} {'is' if len(seats) == 1 else 'are'} played by a bot from here: "
            "away too long, every other seat agreed")


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
            ender = who(names, r.ender, me)  # a name as written: only "you" is capitalised
            why = "not the lowest"
            if ended_by is not None and ended_by != r.ender:
                theirs = "your" if r.ender == me else "their"
                by = who(names, ended_by, me)
                out.append(("doubled", f"{by} turned up {theirs} last closed card: {ender} "
                                       f"ended the round, {r.raw[r.ender]} doubled to "
                                       f"{r.scores[r.ender]}."))
            else:
                out.append(("doubled", f"{ender} ended the round on {r.raw[r.ender]}, {why} "
                                       f"({min(r.raw)}): doubled to {r.scores[r.ender]}."))
    return [(k, "Y" + t[1:] if t.startswith("you ") else t) for k, t in out]  # names as named


__all__ = ["describe_effects", "narrate_effect", "takeover_words", "clear_frames", "known_values", "Frame", "refusal_words",
           "first_time_hints", "KNOCK_HINT"]
