"""ALLEGRA's table geometry (R13, R14, R17) in one place.

Which places make a seat's area, which lines a run may lie in, and which
seat a shared column is shared with: the engine (legal places, scores), the
clearing rules, the bots' scratch boards and the screen all ask this module,
so that what is drawn next to each other is what the engine clears together.
(Before it existed the layout was coded four times and the screen drew the
neighbour's column on the wrong side.)

A display is 3 rows x 4 columns. A seat's *left neighbour* is the next seat
in play order, `(seat + 1) % players`; its rightmost column (the *shared
column*) lies between the two displays and belongs to both areas. So seat
s's area row r reads, left to right: the left neighbour's column 4, then
s's own columns 1-4 (R13). Runs are looked for in every area row (5 places)
and in every display column (3 places) (R14). With two players each seat is
the other's left neighbour; nothing changes.

Slots are `Slot(seat of the display, row, col)`, 0-based; a *flat index* is
`row * COLS + col` within one display.
"""

from __future__ import annotations

from functools import lru_cache

from .moves import Slot

ROWS = 3
COLS = 4
CELLS = ROWS * COLS
SHARED_COL = COLS - 1
"""The column of a display that is also in the area of the seat to its right (0-based)."""

AreaRow = tuple[Slot, ...]


def left_neighbour(players: int, seat: int) -> int:
    """The seat whose shared column is the first column of `seat`'s area (R13)."""
    return (seat + 1) % players


def right_neighbour(players: int, seat: int) -> int:
    """The seat whose area takes in `seat`'s own shared column (column 4)."""
    return (seat - 1) % players


def flat(slot: Slot) -> int:
    """The flat index of a slot within its display."""
    return slot[1] * COLS + slot[2]


@lru_cache(maxsize=None)
def area_row(players: int, seat: int, row: int) -> AreaRow:
    """One row of `seat`'s area as drawn and as runs are read: neighbour's column 4, then own 1-4."""
    left = left_neighbour(players, seat)
    return (Slot(left, row, SHARED_COL),) + tuple(Slot(seat, row, c) for c in range(COLS))


@lru_cache(maxsize=None)
def area_rows(players: int, seat: int) -> tuple[AreaRow, ...]:
    """`seat`'s area, row by row (3 rows of 5 places)."""
    return tuple(area_row(players, seat, r) for r in range(ROWS))


@lru_cache(maxsize=None)
def area(players: int, seat: int) -> tuple[Slot, ...]:
    """Every place of `seat`'s area in reading order: what it plays on and what it scores (R17)."""
    return tuple(sl for row in area_rows(players, seat) for sl in row)


@lru_cache(maxsize=None)
def column(seat: int, col: int) -> tuple[Slot, ...]:
    """One display column, top to bottom: a line of 3 places (R14)."""
    return tuple(Slot(seat, r, col) for r in range(ROWS))


@lru_cache(maxsize=None)
def lines(players: int) -> tuple[tuple[Slot, ...], ...]:
    """Every line a run may lie in: all area rows (seat by seat), then all columns."""
    rows = tuple(area_row(players, s, r) for s in range(players) for r in range(ROWS))
    cols = tuple(column(s, c) for s in range(players) for c in range(COLS))
    return rows + cols


@lru_cache(maxsize=None)
def lines_through(players: int, slot: Slot) -> tuple[tuple[Slot, ...], ...]:
    """The lines that pass through one place: its column, its seat's area row and, for a
    shared column, the area row of the seat to its right too."""
    s, r, c = slot
    found = [column(s, c), area_row(players, s, r)]
    if c == SHARED_COL:
        found.append(area_row(players, right_neighbour(players, s), r))
    return tuple(dict.fromkeys(found))


def owners(players: int, slot: Slot) -> tuple[int, ...]:
    """The seats whose area holds `slot`: its display's seat, and for a shared column also
    the seat to its right (one seat when that is the same, as with two players)."""
    s = slot[0]
    if slot[2] == SHARED_COL:
        return tuple(dict.fromkeys((s, right_neighbour(players, s))))
    return (s,)


__all__ = [
    "ROWS", "COLS", "CELLS", "SHARED_COL", "AreaRow", "left_neighbour", "right_neighbour",
    "flat", "area_row", "area_rows", "area", "column", "lines", "lines_through", "owners",
]
