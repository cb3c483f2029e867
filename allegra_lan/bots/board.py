"""A bot's scratch copy of the table as its seat sees it, for trying moves before choosing.

The engine cannot be asked "what if": it needs the full state, which a bot
never has. So a bot rebuilds, from its view, the places it plays on with
the values it knows (face-up cards, its own peeks) and None for the rest,
and redoes the clearing rules (R5-R7, R14, R25, R27) on that copy with the
engine's own `runs_in_line`, so that the bot and the engine agree on what
is a run.
"""

from __future__ import annotations

from typing import Sequence

from allegra_lan.rules import geometry
from allegra_lan.rules.clearing import runs_in_line
from allegra_lan.rules.moves import Slot
from allegra_lan.rules.ruleset import Variant
from allegra_lan.rules.view import CardView, SeatView

Cell = tuple[int | None, bool] | None
"""(value this seat knows or None, face up), or None for a hole.

A face-up cell with an unknown value appears only in a bot's hypotheses (a
card that will move face up, but whose value the bot cannot know yet); it
matches nothing and is scored at the unseen cards' mean.
"""

ALLEGRA_ROWS = geometry.ROWS
ALLEGRA_COLS = geometry.COLS
ALLEGRA_CELLS = geometry.CELLS


class Board:
    """Cells, the lines runs are looked for in, and which cells score for the bot's seat."""

    __slots__ = (
        "grande", "players", "rows", "cols", "cells", "lines", "lines_at", "mine", "own",
        "my_lines",
    )

    def __init__(
        self, grande: bool, players: int, rows: int, cols: int, cells: list[Cell],
        lines: list[tuple[int, ...]], mine: list[int], own: list[int], my_lines: list[int],
    ) -> None:
        self.grande = grande
        self.players = players
        self.rows = rows
        self.cols = cols
        self.cells = cells
        self.lines = lines
        self.lines_at: list[list[int]] = [[] for _ in cells]
        for i, line in enumerate(lines):
            for p in line:
                self.lines_at[p].append(i)
        self.mine = mine  # cells whose values the seat scores (R9, R17)
        self.own = own  # cells of the seat's own display (R9 counts their closed cards)
        self.my_lines = my_lines  # lines in which a run clears cards the seat scores

    # ------------------------------------------------------------ building

    @staticmethod
    def grid(rows: int, cols: int, cells: list[Cell]) -> "Board":
        """A Grande display: its rows and columns are the lines, all of it is the seat's."""
        lines = [tuple(r * cols + c for c in range(cols)) for r in range(rows)]
        lines += [tuple(r * cols + c for r in range(rows)) for c in range(cols)]
        every = list(range(rows * cols))
        return Board(True, 1, rows, cols, cells, lines, every, every, list(range(len(lines))))

    @staticmethod
    def table(players: int, seat: int, cells: list[Cell]) -> "Board":
        """All ALLEGRA displays: area rows of five and columns of three (R13, R14)."""
        n = players
        lines: list[tuple[int, ...]] = []
        my_lines: list[int] = []
        mine_slots = set(geometry.area(n, seat))
        for line in geometry.lines(n):
            # The seat's own lines: those wholly in its area (its area rows, its columns and
            # its left neighbour's shared column).
            if mine_slots.issuperset(line):
                my_lines.append(len(lines))
            lines.append(tuple(_cell_index(sl) for sl in line))
        mine = area_cells(n, seat)
        own = list(range(seat * ALLEGRA_CELLS, (seat + 1) * ALLEGRA_CELLS))
        return Board(False, n, ALLEGRA_ROWS, ALLEGRA_COLS, cells, lines, mine, own, my_lines)

    @staticmethod
    def from_view(view: SeatView, seat: int | None = None) -> "Board":
        """The board of `seat` (default: the viewer) with what the viewer knows of every card."""
        seat = view.seat if seat is None else seat
        if view.ruleset.variant is Variant.GRANDE:
            d = view.displays[seat]
            rows = len(d)
            cols = len(d[0]) if rows else 0
            return Board.grid(rows, cols, [None if cv is None else (cv.value, cv.up) for row in d for cv in row])
        cells: list[Cell] = []
        for d in view.displays:
            cells.extend(None if cv is None else (cv.value, cv.up) for row in d for cv in row)
        return Board.table(view.players, seat, cells)

    def pos(self, slot: Slot) -> int:
        """The cell index of a slot (in the layout the view showed)."""
        if self.grande:
            return slot[1] * self.cols + slot[2]
        return _cell_index(slot)

    def copy(self) -> "Board":
        b = Board.__new__(Board)
        b.grande = self.grande
        b.players = self.players
        b.rows = self.rows
        b.cols = self.cols
        b.cells = self.cells[:]
        b.lines = self.lines
        b.lines_at = self.lines_at
        b.mine = self.mine
        b.own = self.own
        b.my_lines = self.my_lines
        return b

    # ------------------------------------------------------------ questions

    def faces(self, line: Sequence[int]) -> list[int | None]:
        """Values that can match (R5): face-up known cards; None for closed cards and holes."""
        cells = self.cells
        out: list[int | None] = []
        for p in line:
            c = cells[p]
            out.append(c[0] if c is not None and c[1] else None)
        return out

    def has_run(self, line_ids: Sequence[int]) -> bool:
        """Whether any of these lines holds a run of three or more now."""
        for i in line_ids:
            f = self.faces(self.lines[i])
            if len(f) - f.count(None) >= 3 and runs_in_line(f):
                return True
        return False

    def closed_own(self) -> int:
        cells = self.cells
        return sum(1 for p in self.own if cells[p] is not None and not cells[p][1])  # type: ignore[index]

    def cards_mine(self) -> list[int]:
        """Cells of the seat's area that still hold a card (the places it may play on)."""
        cells = self.cells
        return [p for p in self.mine if cells[p] is not None]

    # ------------------------------------------------------------ clearing

    def resolve(self, changed: Sequence[int]) -> int:
        """Clear runs after cells in `changed` changed; Grande also collapses, in a chain (R27).

        Returns the cards cleared. A stable board holds no run, so only lines
        through the changed cells can hold one at first; after a collapse the
        whole display is looked at again, as the engine does.
        """
        if not self.grande:
            return self._clear({i for p in changed for i in self.lines_at[p]})
        total = 0
        line_ids: set[int] | range = {i for p in changed for i in self.lines_at[p]}
        while True:
            n = self._clear(line_ids)
            if not n:
                return total
            total += n
            self._collapse()
            line_ids = range(len(self.lines))

    def _clear(self, line_ids: set[int] | range) -> int:
        hit: set[int] = set()
        for i in line_ids:
            line = self.lines[i]
            f = self.faces(line)
            if len(f) - f.count(None) < 3:
                continue
            for a, b in runs_in_line(f):
                hit.update(line[a:b])
        for p in hit:
            self.cells[p] = None
        return len(hit)

    def _collapse(self) -> None:
        rows, cols, cells = self.rows, self.cols, self.cells
        keep_r = [r for r in range(rows) if any(cells[r * cols + c] is not None for c in range(cols))]
        keep_c = [c for c in range(cols) if any(cells[r * cols + c] is not None for r in range(rows))]
        if len(keep_r) == rows and len(keep_c) == cols:
            return
        if not keep_r or not keep_c:
            keep_r, keep_c = [], []
        new = Board.grid(len(keep_r), len(keep_c), [cells[r * cols + c] for r in keep_r for c in keep_c])
        self.rows, self.cols, self.cells = new.rows, new.cols, new.cells
        self.lines, self.lines_at = new.lines, new.lines_at
        self.mine, self.own, self.my_lines = new.mine, new.own, new.my_lines


def unseen_values(view: SeatView, recall: bool = False) -> list[int]:
    """The multiset of values the viewer has not seen on the table now.

    The full deck less every value visible to the viewer: face-up cards, its
    own peeks, the discard pile's top, the hand and a knock's cards; with
    `recall`, less the cards seen this round and out of sight now too (the
    discard pile under its top and the cleared cards, `SeatView.out_of_sight`),
    as a person who watched them go down knows. Greedy does not recall: its
    estimate is the one the brief asks for, unknown cards at the deck's mean.
    """
    counts: dict[int, int] = {}
    for v in view.ruleset.deck_values():
        counts[v] = counts.get(v, 0) + 1
    seen: list[int | None] = []
    for d in view.displays:
        for row in d:
            seen.extend(cv.value for cv in row if cv is not None)
    if view.discard_top is not None:
        seen.append(view.discard_top.value)
    seen.extend(h.value for h in view.hand)
    if view.knock is not None:
        seen.append(view.knock[1].value)
        if view.knock[2] is not None:
            seen.append(view.knock[2].value)
    if recall:
        seen.extend(v for _, v in view.out_of_sight)
    for v in seen:
        if v is not None and counts.get(v, 0) > 0:
            counts[v] -= 1
    out: list[int] = []
    for v in sorted(counts):
        out.extend([v] * counts[v])
    return out or view.ruleset.deck_values()


def closed_cards(display: Sequence[Sequence[CardView | None]]) -> int:
    """How many cards of a display are still face down: the clock of its round (R9: a display
    with none left triggers the round's end)."""
    return sum(1 for row in display for cv in row if cv is not None and not cv.up)


def _cell_index(slot: Slot) -> int:
    """A slot's cell in a `Board.table`: the displays one after another, 12 cells each."""
    return slot[0] * ALLEGRA_CELLS + geometry.flat(slot)


def area_cells(players: int, seat: int) -> list[int]:
    """The cells of an ALLEGRA seat's area (R13) in a `Board.table`: what it scores (R17)."""
    return [_cell_index(sl) for sl in geometry.area(players, seat)]


__all__ = ["Board", "Cell", "closed_cards", "unseen_values", "area_cells"]
