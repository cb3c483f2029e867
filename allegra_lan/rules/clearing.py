"""Runs (R5, R6, R25), clearing (R7, R14) and collapsing with chain reactions (R27)."""

from __future__ import annotations

from typing import Sequence

from . import geometry
from .effects import Cleared, Collapsed
from .moves import Slot
from .ruleset import JOKER, Variant
from .state import HOLE, Grid, State


def runs_in_line(values: Sequence[int | None]) -> list[tuple[int, int]]:
    """The runs of length >= 3 in one line, as [start, end) index pairs.

    `values` holds the value of each face-up card and None for a closed card
    or a hole, which break adjacency (R5). A run is a maximal stretch whose
    non-Joker cards share one value (R6, R25); a block of Jokers between two
    values goes to the longer stretch, each counted with every Joker it could
    take, and to the left one on a tie; Jokers alone are a run too.
    """
    out: list[tuple[int, int]] = []
    n = len(values)
    i = 0
    while i < n:
        if values[i] is None:
            i += 1
            continue
        j = i
        while j < n and values[j] is not None:
            j += 1
        if j - i >= 3:
            if JOKER in values[i:j]:
                _segment_runs(values, i, j, out)
            else:
                # No Joker: runs are plain stretches of one value.
                a = i
                while a < j:
                    b = a + 1
                    while b < j and values[b] == values[a]:
                        b += 1
                    if b - a >= 3:
                        out.append((a, b))
                    a = b
        i = j
    return out


def _segment_runs(values: Sequence[int | None], lo: int, hi: int, out: list[tuple[int, int]]) -> None:
    # Cores: maximal stretches of non-Joker cards of one value, with the Jokers inside them.
    cores: list[list[int]] = []  # [first, last] positions of a core's non-Joker cards
    last_value: int | None = None
    for p in range(lo, hi):
        v = values[p]
        if v == JOKER:
            continue
        if cores and v == last_value:
            cores[-1][1] = p
        else:
            cores.append([p, p])
            last_value = v
    if not cores:
        if hi - lo >= 3:
            out.append((lo, hi))
        return
    k = len(cores)
    # Joker blocks: before core 0, between cores, after the last core.
    gaps = [cores[0][0] - lo]
    for a in range(k - 1):
        gaps.append(cores[a + 1][0] - cores[a][1] - 1)
    gaps.append(hi - 1 - cores[-1][1])
    potential = [cores[a][1] - cores[a][0] + 1 + gaps[a] + gaps[a + 1] for a in range(k)]
    starts = [cores[a][0] for a in range(k)]
    ends = [cores[a][1] + 1 for a in range(k)]
    starts[0] = lo
    ends[-1] = hi
    for a in range(k - 1):
        if gaps[a + 1] == 0:
            continue
        if potential[a] >= potential[a + 1]:
            ends[a] = cores[a + 1][0]
        else:
            starts[a + 1] = cores[a][1] + 1
    for a in range(k):
        if ends[a] - starts[a] >= 3:
            out.append((starts[a], ends[a]))


Line = tuple[tuple[int, int], ...]  # (seat of the grid, flat index) per place, in order

_GRID_LINES: dict[tuple[int, int, int], tuple[Line, ...]] = {}
_ALLEGRA_ALL: dict[int, tuple[Line, ...]] = {}
_ALLEGRA_AT: dict[tuple[int, int, int, int], tuple[Line, ...]] = {}


def _as_line(slots: Sequence[Slot]) -> Line:
    return tuple((sl[0], geometry.flat(sl)) for sl in slots)


def _lines_allegra(n: int, changed: Sequence[Slot] | None) -> list[Line]:
    """ALLEGRA's lines (R14, from `geometry`): each seat's area rows (neighbour column
    first) and every column.

    With `changed`, only the lines through those places: the position was free
    of runs before, so a new run must pass through a changed place.
    """
    if changed is None:
        every = _ALLEGRA_ALL.get(n)
        if every is None:
            every = tuple(_as_line(line) for line in geometry.lines(n))
            _ALLEGRA_ALL[n] = every
        return list(every)
    out: list[Line] = []
    for slot in changed:
        key = (n, slot[0], slot[1], slot[2])
        lines = _ALLEGRA_AT.get(key)
        if lines is None:
            lines = tuple(_as_line(line) for line in geometry.lines_through(n, Slot(*slot)))
            _ALLEGRA_AT[key] = lines
        for line in lines:
            if line not in out:
                out.append(line)
    return out


def _lines_grid(seat: int, g: Grid) -> tuple[Line, ...]:
    key = (seat, g.rows, g.cols)
    lines = _GRID_LINES.get(key)
    if lines is None:
        rows = tuple(tuple((seat, r * g.cols + c) for c in range(g.cols)) for r in range(g.rows))
        cols = tuple(tuple((seat, r * g.cols + c) for r in range(g.rows)) for c in range(g.cols))
        lines = rows + cols
        _GRID_LINES[key] = lines
    return lines


def _clear_step(state: State, lines: Sequence[Line], step: int) -> int:
    """Clear every run in `lines` at once (R6); a card in two runs is cleared once."""
    grids = state.grids
    up = state.up
    known = state.known
    hit: dict[tuple[int, int], None] = {}
    for line in lines:
        vals = []
        faces = 0
        for gs, i in line:
            c = grids[gs].cells[i]
            if c in up:
                vals.append(known[c])
                faces += 1
            else:
                vals.append(None)
        if faces < 3:
            continue
        for a, b in runs_in_line(vals):
            for p in range(a, b):
                hit[line[p]] = None
    if not hit:
        return 0
    places = sorted(hit)
    slots = []
    cards = []
    for gs, i in places:
        g = grids[gs]
        card = g.cells[i]
        g.cells[i] = HOLE
        up.discard(card)
        cards.append(card)
        slots.append(Slot(gs, i // g.cols, i % g.cols))
    if state.ruleset.cleared_to_discard:
        state.discard.extend(cards)
    else:
        state.cleared.extend(cards)
    state.round_cleared += len(cards)
    state.effects.append(Cleared(step, tuple(slots), tuple(cards)))
    return len(cards)


def _collapse(state: State, seat: int) -> bool:
    """R27: drop wholly empty rows and columns of a Grande display; True if any went."""
    g = state.grids[seat]
    rows = [r for r in range(g.rows) if all(g.cells[r * g.cols + c] == HOLE for c in range(g.cols))]
    cols = [c for c in range(g.cols) if all(g.cells[r * g.cols + c] == HOLE for r in range(g.rows))]
    if not rows and not cols:
        return False
    keep_r = [r for r in range(g.rows) if r not in rows]
    keep_c = [c for c in range(g.cols) if c not in cols]
    if not keep_r or not keep_c:
        keep_r, keep_c = [], []
    cells = [g.cells[r * g.cols + c] for r in keep_r for c in keep_c]
    state.grids[seat] = Grid(len(keep_r), len(keep_c), cells)
    state.effects.append(Collapsed(seat, tuple(rows), tuple(cols)))
    return True


def resolve(state: State, changed: Sequence[Slot] | None) -> int:
    """Clear all runs after an event that changed faces or places; returns the steps taken.

    In ALLEGRA holes stay, so one step suffices and only lines through the
    changed places can hold a new run. In Grande a collapse can bring cards
    together anywhere in the display, so each step rescans the whole display.
    """
    if state.ruleset.variant is Variant.ALLEGRA:
        return 1 if _clear_step(state, _lines_allegra(state.players, changed), 1) else 0
    seats = sorted({s[0] for s in changed}) if changed is not None else range(state.players)
    steps = 0
    for seat in seats:
        step = 0
        while True:
            g = state.grids[seat]
            every = _lines_grid(seat, g)  # rows first, then columns
            if step == 0 and changed is not None:
                # Before any collapse only the lines through the changed places can hold a run.
                picked: dict[int, None] = {}
                for sl in changed:
                    if sl[0] == seat:
                        picked[sl[1]] = None
                        picked[g.rows + sl[2]] = None
                lines: Sequence[Line] = [every[k] for k in picked]
            else:
                lines = every
            if not _clear_step(state, lines, step + 1):
                break
            step += 1
            if not _collapse(state, seat):
                break  # nothing moved, so no new run can have formed
        steps = max(steps, step)
    return steps
