"""A navigator over a replay: the table after each move, stepped by move, turn or round.

The replay viewer needs to go back as easily as forward, and a log can only
be folded forward. So the log is folded once and the state after every move
is kept: the engine's `apply` returns a fresh clone each time and never
changes a state it was given, so holding all of them is safe, and a whole
6-player game is a few hundred small states. Stepping is then only moving an
index over that list.

Position 0 is the deal (the table after the seed ceremony, before any move);
every later position is the table after one event of the game: a move, or a
takeover (the same table, a seat handed to a bot; no move). Each position knows
the seq of its event, the round and turn its move was made in, who made it
and what it was, in the plain words a player would use: the play client's
own words for a move (tui/words.describe_effects), told from a spectator's
view, so they name only what everybody at the table saw (a peek says where,
never what). Each position also keeps the table's notes so far
(tui/seat_notes.py, as the client keeps them): what each seat did on its
last turn, marked on its display, and whose move is ending the round.

Nothing here reads a file or a clock: `Stepper.from_events` takes the
signed events (as `log.replay.read_replay` gives them), `load_replay` is the
one convenience that reads a path. The fold is `fold.fold_log`, the one
every replay tool shares, so the viewer refuses a log where `allegra replay
verify` does and names the fault the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Sequence

from allegra_lan.log.envelope import Event
from allegra_lan.log.replay import Replay, ReplayError, read_replay
from allegra_lan.log.results import RESULT
from allegra_lan.log.takeover import read_seats
from allegra_lan.rules import Move, SeatView, State, move_from_dict, to_act, view
from allegra_lan.rules.effects import GameEnded, RoundEnded
from allegra_lan.rules.view import SPECTATOR
from allegra_lan.table import SETUP_KINDS, TAKEOVER, Table
from allegra_lan.fold import fold_log

from .seat_notes import Notes, note_move
from .words import describe_effects, takeover_words


class StepperError(ValueError):
    """A log the viewer cannot show: unreadable, refused somewhere, or never dealt. One line."""


@dataclass(frozen=True)
class Position:
    """The table after one move (or, at index 0, after the deal)."""

    index: int
    seq: int  # the event this table follows
    round_no: int  # 0-based round the move was made in (a round-ending move: the round it ended)
    turn: int  # the turn of that round the move belongs to (0: the round's opening turn-ups)
    seat: int | None  # who moved; None at the deal
    move: Move | None
    words: str  # the move and what it caused, in plain words
    state: State
    turn_end: bool  # the last move of a player's turn (or the deal)
    round_end: bool  # the move that ended a round (or the game)
    notes: Notes  # each seat's last turn up to here, and whose move ends the round

    @property
    def game_over(self) -> bool:
        return to_act(self.state) is None


# ------------------------------------------------------------------ the navigator


def _takeover_words(ev: Event, names: Sequence[str]) -> str:
    """The seats a takeover hands to bots (the Table has checked every consent already)."""
    return takeover_words([seat for seat, _key in read_seats(ev.body["seats"], len(names))], names)


def _move_of(kind: str, body: dict[str, object]) -> Move:
    body = {k: v for k, v in body.items() if k != "knock"}
    return move_from_dict({"move": kind, **body})


class Stepper:
    """The positions of one replay and a cursor over them."""

    def __init__(self, positions: Sequence[Position], names: Sequence[str], *,
                 last_seq: int, cut_short: str | None = None) -> None:
        if not positions:
            raise StepperError("a replay with no deal has nothing to show")
        self.positions: tuple[Position, ...] = tuple(positions)
        self.names: tuple[str, ...] = tuple(names)
        self.last_seq = last_seq  # the seq of the log's last event
        self.cut_short = cut_short  # why the log stops before the game's end, if it does
        self.index = 0

    # -------------------------------------------------------------- building

    @classmethod
    def from_events(cls, events: Sequence[bytes], *, cut_short: str | None = None) -> "Stepper":
        """Fold `events` once, keeping the table after every move; raise StepperError naming
        the first refused event, or for a log that never reached the deal."""
        positions: list[Position] = []
        keys: list[tuple[int, int, int]] = []  # the turn each position's move belongs to
        names: list[str] = []
        before: list[State | None] = [None]
        seen: list[tuple[State, SeatView]] = []  # the spectator's view of the last table

        def public(state: State) -> SeatView:
            """The spectator's view of `state`: the table after one move is the one before
            the next, so each view is made once."""
            if not seen or seen[0][0] is not state:
                seen[:] = [(state, view(state, SPECTATOR))]
            return seen[0][1]

        def each(ev: Event, t: Table) -> None:
            prev, after = before[0], t.state
            before[0] = after
            if after is None:
                return
            if prev is None:  # the last reveal of the seed ceremony: the deal
                assert t.genesis is not None
                names.extend(s.name for s in t.genesis.seats)
                positions.append(Position(0, ev.seq, 0, 0, None, None, "the cards are dealt",
                                          after, True, False, Notes.empty(after.players)))
                keys.append((-1, -1, -1))
                return
            if ev.kind == RESULT:  # a seat's signed result of the round: no move, the same table
                return
            d = to_act(prev)
            assert d is not None and ev.kind not in SETUP_KINDS
            notes = positions[-1].notes
            # A turn is the active seat's, knocks included; the opening turn-ups are each seat's own.
            keys.append((prev.round_no, prev.turn, d.seat if prev.turn == 0 else prev.active))
            if ev.kind == TAKEOVER:  # no move: the same table, new keys for the taken seats,
                # in the turn of the decision it stands before
                positions.append(Position(len(positions), ev.seq, prev.round_no, prev.turn, None, None,
                                          _takeover_words(ev, names), after, False, False, notes))
                return
            move = _move_of(ev.kind, dict(ev.body))
            ended = any(isinstance(e, (RoundEnded, GameEnded)) for e in after.effects)
            seen_before, seen_after = public(prev), public(after)
            told = describe_effects(seen_before, seen_after, seen_after.effects, names)
            notes = note_move(notes, seen_before, seen_after, names, told)
            words = "; ".join(told)
            positions.append(Position(len(positions), ev.seq, prev.round_no, prev.turn, d.seat,
                                      move, words, after, False, ended, notes))

        folded = fold_log(events, each=each)
        if folded.fault is not None:
            raise StepperError(f"the log is refused at seq {folded.fault_seq}: {folded.fault.reason}")
        t = folded.table
        if t.state is None:
            missing = "the genesis" if t.genesis is None else f"seat {t.next_author()}'s {t.stage()}"
            raise StepperError(f"the log ends before the deal ({missing} is missing at seq {t.seq})")
        # A position ends a turn when the next move belongs to another turn (or there is none).
        for i, p in enumerate(positions):
            if i > 0 and (i + 1 == len(positions) or keys[i + 1] != keys[i]):
                positions[i] = replace(p, turn_end=True)
        if not cut_short and not t.over:  # (a log with signed results ends with the last ones)
            cut_short = f"the log stops at seq {t.seq - 1}, before the game's end"
        return cls(positions, names, last_seq=t.seq - 1, cut_short=cut_short)

    @classmethod
    def from_replay(cls, replay: Replay) -> "Stepper":
        """A replay as read: a line that is no event is refused like a tampered event;
        a file cut short mid-line, or a game left unfinished, is shown with the reason."""
        if replay.fault is not None:
            seq, reason = replay.fault
            raise StepperError(f"{replay.path}: seq {seq}: {reason}")
        note = "; ".join(replay.notes) if replay.cut_short else None
        if note:
            note = f"the file is cut short ({note})"
        try:
            return cls.from_events(replay.events, cut_short=note)
        except StepperError as e:
            raise StepperError(f"{replay.path}: {e}") from None

    # -------------------------------------------------------------- where we are

    @property
    def current(self) -> Position:
        return self.positions[self.index]

    @property
    def last(self) -> int:
        return len(self.positions) - 1

    @property
    def first_seq(self) -> int:
        """The seq of the deal: jumps to any earlier seq land there."""
        return self.positions[0].seq

    def _go(self, index: int) -> Position:
        self.index = max(0, min(self.last, index))
        return self.current

    # -------------------------------------------------------------- by move

    def forward(self, moves: int = 1) -> Position:
        return self._go(self.index + moves)

    def back(self, moves: int = 1) -> Position:
        return self._go(self.index - moves)

    def home(self) -> Position:
        return self._go(0)

    def end(self) -> Position:
        return self._go(self.last)

    # -------------------------------------------------------------- by turn and round

    def next_turn(self) -> Position:
        """To the end of the turn under way, or of the next one when a turn just ended."""
        return self._go(next((i for i in range(self.index + 1, self.last + 1)
                              if self.positions[i].turn_end), self.last))

    def prev_turn(self) -> Position:
        """To the end of the turn before (the deal before the first)."""
        return self._go(next((i for i in range(self.index - 1, 0, -1)
                              if self.positions[i].turn_end), 0))

    def next_round(self) -> Position:
        """To the move that ends the round under way: the round's scores."""
        return self._go(next((i for i in range(self.index + 1, self.last + 1)
                              if self.positions[i].round_end), self.last))

    def prev_round(self) -> Position:
        """To the end of the round before (the deal before the first round ended)."""
        return self._go(next((i for i in range(self.index - 1, 0, -1)
                              if self.positions[i].round_end), 0))

    # -------------------------------------------------------------- by seq

    def index_of_seq(self, seq: int) -> int:
        """The position showing the table after event `seq`: the last move at or before it."""
        if not 0 <= seq <= self.last_seq:
            raise StepperError(f"seq {seq} is not in the log (seqs 0 to {self.last_seq})")
        lo, hi = 0, self.last
        while lo < hi:  # positions are in seq order: the last one with seq <= `seq`
            mid = (lo + hi + 1) // 2
            if self.positions[mid].seq <= seq:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def goto_seq(self, seq: int) -> Position:
        return self._go(self.index_of_seq(seq))


def load_replay(path: str | os.PathLike[str]) -> Stepper:
    """Read and fold a replay file; StepperError (one line) for anything that cannot be shown."""
    try:
        replay = read_replay(path)
    except ReplayError as e:
        raise StepperError(str(e)) from None
    return Stepper.from_replay(replay)


__all__ = ["Position", "Stepper", "StepperError", "load_replay"]
