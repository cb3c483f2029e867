"""The ALLEGRA table in a real terminal (issue 11, Found 1): a 3-player game at 80x24,
played by keys under tmux, read from the captured pane.

The person's display must show the left neighbour's shared column on the left, headed
with its owner's name, and a clear that happens in the person's area must show as holes
next to each other in one row or one column of that display. The game is played by the
keys a person would press (d, x, enter; n in a knock window) until a clear reaches the
person's area, then quit with q, y. Pane and helpers: tests/test_tui_tmux.py.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from tmux_pane import Pane, allegra, needs_tmux

pytestmark = needs_tmux
# The client's refusals of a turn-up at a card that cannot be turned up (tui/words.py refusal_words)
REFUSED = ("Not this card", "There is no card here")

Cell = tuple[int, int]


def big_display(screen: str) -> tuple[list[str], list[int]] | None:
    """The card lines of the person's display (cut before the right-hand pane) and the
    x of each column's head (the neighbour's `col 4`, then 1 2 3 4); None if not shown."""
    lines = screen.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if "(you)" in ln and "Deck " in ln)
    except StopIteration:
        return None
    pane = lines[start].find("Deck ")
    region = []
    for ln in lines[start + 1:]:
        if ln.startswith("first column") or ln.startswith("| col 4:"):
            break
        region.append(ln[:pane])
    heads = [ln for ln in region if ln.lstrip().startswith("col 4")]
    if not heads:
        return None
    head = heads[0]
    bar = head.index("|")
    xs = [head.index("col 4") + 2] + [bar + m.start() for m in re.finditer(r"(?<=\s)[1-4](?=\s|$)", head[bar:])]
    rows = [ln for ln in region[region.index(head) + 1:]
            if re.search(r"[0-9?.]", ln) and "+-" not in ln]
    return rows, xs


def grid(screen: str) -> dict[Cell, str]:
    """The person's area as read: (row, column) -> `?`, `.` (a hole), a value, or `[v]` under
    the cursor; column 0 is the neighbour's shared column."""
    found = big_display(screen)
    if found is None:
        return {}
    rows, xs = found
    out: dict[Cell, str] = {}
    for r, ln in enumerate(rows):
        for m in re.finditer(r"(?<![^\s|])(\[[^\]]*\]|-?\d+|\?|\.)(?![^\s|])", ln):
            centre = (m.start() + m.end() - 1) / 2
            col = min(range(len(xs)), key=lambda k: abs(xs[k] - centre))
            out[(r, col)] = m.group(1)
    return out


def holes(screen: str) -> set[Cell]:
    """(row, column) of every cleared place of the person's area."""
    return {cell for cell, text in grid(screen).items() if text == "."}


def target_for(cells: dict[Cell, str], value: str) -> Cell | None:
    """A place where a card of `value` completes three in a line: two of that value in an
    area row (5 places) or a column (3), the third place holding another card."""
    bare = {k: t.strip("[]") for k, t in cells.items()}
    lines = [[(r, c) for c in range(5)] for r in range(3)] + [[(r, c) for r in range(3)] for c in range(5)]
    for line in lines:
        for i in range(len(line) - 2):
            trio = line[i:i + 3]
            vals = [bare.get(p) for p in trio]
            if vals.count(value) == 2:
                other = trio[[v != value for v in vals].index(True)]
                if bare.get(other) not in (".", None):
                    return other
    return None


def cursor_at(cells: dict[Cell, str]) -> Cell | None:
    return next((k for k, t in cells.items() if t.startswith("[")), None)


def go_to(pane: Pane, cells: dict[Cell, str], target: Cell) -> None:
    """Arrow keys from the cursor to `target` (the cursor moves over the area as drawn)."""
    here = cursor_at(cells)
    if here is None:
        return
    dr, dc = target[0] - here[0], target[1] - here[1]
    keys = ["Down" if dr > 0 else "Up"] * abs(dr) + ["Right" if dc > 0 else "Left"] * abs(dc)
    if keys:
        pane.keys(*keys)


def in_one_line(cells: set[Cell]) -> bool:
    rows = {r for r, _ in cells}
    cols = {c for _, c in cells}
    if len(rows) == 1:
        return sorted(cols) == list(range(min(cols), min(cols) + len(cols)))
    if len(cols) == 1:
        return sorted(rows) == list(range(min(rows), min(rows) + len(rows)))
    return False


def test_three_player_allegra_at_80x24_shared_column_left_and_a_clear_drawn_together(
        pane_factory: Callable[[list[str]], Pane]) -> None:
    pane = pane_factory(allegra("play", "--variant", "allegra", "--players", "3", "--seed", "3",
                                "--pace", "0.05", "--name", "ann"))
    first = pane.wait_for(lambda s: "to act: you" in s, "the person's first decision")
    assert "ALLEGRA" in first.split("\n")[0]
    lines = first.rstrip("\n").split("\n")
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    # The shared column is on the left of the person's columns, under its owner's name.
    assert big_display(first) is not None, first
    head = next(ln for ln in lines if ln.lstrip().startswith("col 4"))
    assert re.search(r"col 4\s+\|\s+1\s+2\s+3\s+\|\s+4", head), head
    owner = lines[lines.index(head) - 1]
    assert owner.lstrip().startswith("greedy 1's"), first
    assert "first column: greedy 1's col 4, in your area" in first

    seen: set[Cell] = set()
    cleared: list[set[Cell]] = []
    deadline = time.monotonic() + 150
    tries = 0
    last = ""
    while not cleared and time.monotonic() < deadline:
        screen = pane.screen()
        now = holes(screen)
        new = now - seen
        if len(new) >= 3:
            cleared.append(new)
            last = screen
            break
        seen |= now
        footer = " ".join(screen.rstrip("\n").split("\n")[-2:])  # the footer takes 2 lines
        if "Round" in screen and "is over" in screen or "next round" in footer:
            pane.keys("Enter")
        elif " y  knock" in footer or "n  pass" in footer:
            pane.keys("n")
        elif "to act: you" not in screen.split("\n")[0]:
            pass  # a bot is playing
        elif "draw" in footer and " d " in footer:
            # Take the discard pile's top where it makes three in a line, else draw.
            top = re.search(r"Discard \[(-?\d+)\]", screen)
            cells = grid(screen)
            aim = target_for(cells, top.group(1)) if top else None
            if aim is not None and " t " in footer:
                pane.keys("t")
                time.sleep(0.3)
                go_to(pane, cells, aim)
                time.sleep(0.2)
                pane.keys("Enter")
            else:
                pane.keys("d")
        elif "x " in footer and "discard" in footer:
            drawn = re.search(r"In hand \(you\): \[(-?\d+)\]", screen)
            cells = grid(screen)
            aim = target_for(cells, drawn.group(1)) if drawn else None
            if aim is not None:
                go_to(pane, cells, aim)
                time.sleep(0.2)
                pane.keys("Enter")
            else:
                pane.keys("x")
        elif any(w in screen for w in REFUSED):  # not a closed card: move on, along the row, then down
            tries += 1
            pane.keys("l" if tries % 4 else "j")
            pane.keys("Enter")
        elif "enter" in footer:
            pane.keys("Enter")
        time.sleep(0.15)
    assert cleared, f"no clear reached the person's area in time; the screen:\n{pane.screen()}"
    # The cards cleared together lie next to each other in the person's display.
    assert in_one_line(cleared[0]), (sorted(cleared[0]), last)
    pane.keys("q")
    pane.wait_for(lambda s: "y quits" in s, "the quit question")
    pane.keys("y")
    assert pane.exit_status() == "status 0"
    assert "Traceback" not in pane.screen()
