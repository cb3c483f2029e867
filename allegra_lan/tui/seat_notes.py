"""What each seat did on its last turn, and whose move ended a round, for the table screen.

With three bots, an opponent's moves scroll out of "Last moves" before the
person's turn comes; so the client keeps, per seat, the words and the
places of that seat's last turn (the screen draws one line per seat and
marks those places with `*`), and, when a move leaves a seat with no closed
card, who made that move and how (a knock exchange, another seat's card in
a shared column), so the round-end screen can say "greedy 2's move turned
up your last closed card" instead of "you ended the round".

Pure functions of two seat views and the engine's effects: the play
client (tui/app.py) calls `note_move` after every move it sees. The words
come from `tui.words.describe_effects`, as in "Last moves".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from allegra_lan.names import who, whose
from allegra_lan.rules import SeatView, Slot
from allegra_lan.rules.effects import (
    Closed, Collapsed, EndTriggered, Placed, Revealed, RoundEnded, Swapped,
)
from allegra_lan.rules.state import DecisionKind

from .words import describe_effects


@dataclass(frozen=True)
class SeatTurn:
    """One seat's last turn: the round and turn it was, its words, the places it changed."""

    round_no: int
    turn: int
    words: tuple[str, ...]
    slots: frozenset[Slot]


@dataclass(frozen=True)
class Notes:
    """Per seat its last turn (None before its first), and the round-end note so far."""

    turns: tuple[SeatTurn | None, ...]
    end_note: str = ""
    end_round: int = -1  # the round `end_note` is about

    @staticmethod
    def empty(players: int) -> "Notes":
        return Notes((None,) * players)

    def last_turns(self) -> tuple[str, ...]:
        """One line per seat, "" for a seat that has not moved yet."""
        return tuple("; ".join(t.words) if t is not None else "" for t in self.turns)

    def last_slots(self, viewer: int) -> frozenset[Slot]:
        """The places the other seats' last turns changed (the viewer knows its own)."""
        out: set[Slot] = set()
        for seat, t in enumerate(self.turns):
            if t is not None and seat != viewer:
                out |= t.slots
        return frozenset(out)


def _strip_name(line: str, name: str) -> str:
    """`greedy 1 took a 6` -> `took a 6`, `greedy 1's row 3 col 4: ...` -> `row 3 col 4: ...`
    (the line is already under the seat's name)."""
    for lead in (name + " ", name + "'s "):
        if line.startswith(lead):
            return line[len(lead):]
    return line


def _actor(before: SeatView) -> int | None:
    return before.decision.seat if before.decision is not None else None


def _closed_up(slots: frozenset[Slot] | set[Slot], e: Collapsed) -> frozenset[Slot]:
    """`slots` after `e` took rows and columns out of one display: a place in a removed line
    is gone, the places after it move up or left, other displays' places stay."""
    out: set[Slot] = set()
    for sl in slots:
        if sl.seat != e.seat:
            out.add(sl)
        elif sl.row not in e.rows and sl.col not in e.cols:
            out.add(Slot(sl.seat, sl.row - sum(1 for r in e.rows if r < sl.row),
                         sl.col - sum(1 for c in e.cols if c < sl.col)))
    return frozenset(out)


def note_move(notes: Notes, before: SeatView, after: SeatView, names: Sequence[str],
              told: Sequence[str] | None = None) -> Notes:
    """`notes` after one more move: the mover's turn grows (or starts), and a round-end
    note is kept from the move that left a seat without a closed card until the round ends
    (a new round starts with none). `told`: the move's lines if the caller has them already
    (describe_effects of the same views), so a replay is not told twice."""
    actor = _actor(before)
    if actor is None or not 0 <= actor < len(notes.turns):
        return notes
    effects = after.effects
    end_note, end_round = notes.end_note, notes.end_round
    if before.round_no != end_round:
        end_note = ""  # a later round: the note was about one whose end screen has gone
    name = who(names, actor, after.seat)
    if told is None:
        told = describe_effects(before, after, effects, names)
    lines = [_strip_name(x, name) for x in told]
    turns = list(notes.turns)
    slots: set[Slot] = set()
    for e in effects:
        if isinstance(e, (Placed, Closed)):
            slots.add(e.at)
        elif isinstance(e, Revealed) and e.at is not None:
            slots.add(e.at)
        elif isinstance(e, Swapped):
            slots.update((e.a, e.b))
        elif isinstance(e, Collapsed):  # the display closed up: its marks move with its cards
            slots = set(_closed_up(slots, e))
            turns = [t if t is None else replace(t, slots=_closed_up(t.slots, e)) for t in turns]
    key = (before.round_no, before.turn)
    old = turns[actor]
    if old is not None and (old.round_no, old.turn) == key:
        turn = replace(old, words=old.words + tuple(lines), slots=old.slots | slots)
    else:
        turn = SeatTurn(key[0], key[1], tuple(lines), frozenset(slots))
    turns[actor] = turn
    if any(isinstance(e, RoundEnded) for e in effects):
        # The round is over: its places are shown as results, and no place of a new deal
        # has been played yet. The words stay, the marks go.
        turns = [t if t is None else replace(t, slots=frozenset()) for t in turns]
    ended = next((e.seat for e in effects if isinstance(e, EndTriggered)), None)
    if ended is not None:
        end_note, end_round = end_words(before, actor, ended, names, after.seat), before.round_no
    return Notes(tuple(turns), end_note, end_round)


def end_words(before: SeatView, actor: int, ender: int, names: Sequence[str], viewer: int) -> str:
    """Whose move left `ender` without a closed card, when it was not simply the ender's
    own turn ("" then): a knock exchange, or another seat's card in a shared column."""
    kind = before.decision.kind if before.decision is not None else ""
    knock = kind in (DecisionKind.PLACE_GIVEN, DecisionKind.EXCHANGE)
    if actor == ender and not knock:
        return ""
    how = "knock exchange" if knock else "move"
    return (f"{whose(names, actor, viewer)} {how} turned up {whose(names, ender, viewer)} last "
            f"closed card, so {who(names, ender, viewer)} ended the round")


__all__ = ["Notes", "SeatTurn", "note_move", "end_words"]
