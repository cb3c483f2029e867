"""Positions built by hand, for tests, worked examples and documentation.

A display is written as rows of cells, as in RULINGS.md's worked examples:
`5` a face-up 5, `J` a face-up Joker, `?` a closed card (its hidden value
is a filler unless written as `?7` or `?J`), `.` a hole.
"""

from __future__ import annotations

from typing import Sequence

from .cards import FixedCards, SeededCards
from .engine import _begin_turn
from .moves import Slot
from .ruleset import JOKER, Ruleset
from .state import HOLE, Grid, Phase, State

FILLER = 100_000  # a hidden value that matches nothing; never revealed by a test that cares


def _value(text: str) -> int:
    return JOKER if text == "J" else int(text)


def build(
    ruleset: Ruleset,
    displays: Sequence[Sequence[str]],
    *,
    active: int = 0,
    deck: Sequence[str] = (),
    discard: Sequence[str] = (),
    hand: Sequence[tuple[str, bool]] = (),
    round_no: int = 0,
    filler: int = 4,
    seed: bytes = b"position",
) -> State:
    """A state at the start of `active`'s turn (or holding `hand`, in its play phase).

    `displays[seat]` is that seat's rows; `deck` is listed top first and
    `discard` bottom first, each cell as above (deck cards are closed anyway).
    `hand` holds (cell, came from the deck) pairs. Closed cards written `?` get
    the value `filler`. Card ids are numbered in the order cells are read.
    """
    players = len(displays)
    ruleset.check_players(players)
    values: list[int] = []
    up: set[int] = set()

    def new_card(cell: str, face_up: bool | None = None) -> int:
        cid = len(values)
        if cell.startswith("?"):
            values.append(_value(cell[1:]) if len(cell) > 1 else filler)
            is_up = False
        else:
            values.append(_value(cell))
            is_up = True
        if face_up is not None:
            is_up = face_up
        if is_up:
            up.add(cid)
        return cid

    grids = []
    for rows in displays:
        table = [r.split() for r in rows]
        width = len(table[0]) if table else 0
        cells = []
        for r in table:
            if len(r) != width:
                raise ValueError("every row of a display must have the same number of cells")
            cells.extend(HOLE if cell == "." else new_card(cell) for cell in r)
        grids.append(Grid(len(table), width, cells))
    deck_ids = [new_card(c, False) for c in deck]
    discard_ids = [new_card(c, True) for c in discard]
    hand_ids = [(new_card(c, False), d) for c, d in hand]
    s = State.__new__(State)
    s.ruleset = ruleset
    s.players = players
    s.source = FixedCards(values, round_no, SeededCards(ruleset, seed))
    s.round_no = round_no
    s.dealer = (active - 1) % players
    s.active = active
    s.grids = grids
    s.up = up
    s.known = [None] * len(values)
    for cid in up:
        s.known[cid] = values[cid]
    for cid, _ in hand_ids:
        s.known[cid] = values[cid]
    s.peeked = [frozenset()] * players
    s.deck = list(reversed(deck_ids))
    s.discard = discard_ids
    s.cleared = []
    s.hand = []
    s.reveal_queue = []
    s.ender = None
    s.final_lap = None
    s.totals = [0] * players
    s.results = ()
    s.knock = None
    s.reshuffles = 0
    s.turn = 0
    s.round_cleared = 0
    s.sealed = False
    s.fair = False
    s.effects = []
    s.memo = {}
    _begin_turn(s)
    if hand_ids:
        s.hand = hand_ids
        s.draws = len(hand_ids)
        s.first_from_deck = hand_ids[0][1]
        s.phase = Phase.PLAY
    return s


def layout(state: State, seat: int, *, secrets: bool = False) -> list[str]:
    """A display written back as rows of cells (closed cards as `?`, or `?v` with secrets)."""
    g = state.grids[seat]
    out = []
    for r in range(g.rows):
        cells = []
        for c in g.cells[r * g.cols:(r + 1) * g.cols]:
            if c == HOLE:
                cells.append(".")
            elif c in state.up:
                v = state.known[c]
                cells.append("J" if v == JOKER else str(v))
            elif secrets:
                v = state.source.value(state.round_no, c)
                cells.append("?" + ("J" if v == JOKER else str(v)))
            else:
                cells.append("?")
        out.append(" ".join(cells))
    return out


def area_layout(state: State, seat: int) -> list[str]:
    """An ALLEGRA area as rows of 5 (the left neighbour's rightmost column first)."""
    left = (seat + 1) % state.players
    mine = layout(state, seat)
    theirs = layout(state, left)
    return [theirs[r].split()[3] + " " + mine[r] for r in range(3)]


def slot(seat: int, row: int, col: int) -> Slot:
    return Slot(seat, row, col)
