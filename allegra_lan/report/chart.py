"""The chart of a game's totals round by round, as SVG geometry (the template draws it).

Plain SVG made here rather than by a chart library (docs/report.md says why):
every line must be told apart without colour, so each seat has its own
marker shape at every point and its own dash pattern, and its name printed at
the end of its line (moved apart where totals are equal), besides a legend.
Colours are the Okabe-Ito palette, which the common colour blindnesses still
tell apart. Everything here is numbers and names; the template escapes names.
"""

from __future__ import annotations

import math
import unicodedata
from typing import Sequence

from allegra_lan.report.model import Chart, Point, Series, Tick

WIDTH = 760
LEFT, TOP = 56.0, 20.0
PLOT_W, PLOT_H = 480.0, 260.0
FONT = 13.0  # the chart's font size (user units)
LABEL_GAP = 15.0  # the least room between two end labels
LABEL_AT = 19.0  # from the plot's right edge to an end label (a leader line between)
MARK = 5.0  # a marker's half size
LEGEND_COLS = 3
LEGEND_ROW = 22.0
LEGEND_TEXT = 38.0  # from a legend entry's start to its name

# Okabe & Ito's colour-blind-safe palette (black last: it is the axes' colour too).
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8a7a00", "#000000")
SHAPES = ("circle", "square", "triangle", "diamond", "triangle-down", "plus", "cross", "bar")
OPEN_SHAPES = frozenset({"plus", "cross", "bar"})  # drawn as strokes, not filled
DASHES = ("", "7 4", "2 3", "9 3 2 3")


def marker_path(shape: str, x: float, y: float, r: float = MARK) -> str:
    """An SVG path of `shape` centred on (x, y), within a box of 2r."""
    def f(v: float) -> str:
        return f"{v:.1f}"

    if shape == "circle":
        return f"M {f(x - r)} {f(y)} A {f(r)} {f(r)} 0 1 0 {f(x + r)} {f(y)} A {f(r)} {f(r)} 0 1 0 {f(x - r)} {f(y)} Z"
    if shape == "square":
        q = r * 0.85
        return f"M {f(x - q)} {f(y - q)} H {f(x + q)} V {f(y + q)} H {f(x - q)} Z"
    if shape == "triangle":
        return f"M {f(x)} {f(y - r)} L {f(x + r)} {f(y + r * 0.8)} L {f(x - r)} {f(y + r * 0.8)} Z"
    if shape == "triangle-down":
        return f"M {f(x)} {f(y + r)} L {f(x + r)} {f(y - r * 0.8)} L {f(x - r)} {f(y - r * 0.8)} Z"
    if shape == "diamond":
        return f"M {f(x)} {f(y - r)} L {f(x + r)} {f(y)} L {f(x)} {f(y + r)} L {f(x - r)} {f(y)} Z"
    if shape == "plus":
        return f"M {f(x - r)} {f(y)} H {f(x + r)} M {f(x)} {f(y - r)} V {f(y + r)}"
    if shape == "cross":
        q = r * 0.8
        return f"M {f(x - q)} {f(y - q)} L {f(x + q)} {f(y + q)} M {f(x - q)} {f(y + q)} L {f(x + q)} {f(y - q)}"
    if shape == "bar":
        return f"M {f(x - r)} {f(y - r)} V {f(y + r)} M {f(x + r)} {f(y - r)} V {f(y + r)}"
    raise ValueError(f"no marker shape {shape!r}")


def style_of(seat: int) -> tuple[str, str, str]:
    """(colour, dash, shape) of a seat: 8 shapes, 4 dashes, so up to 16 seats differ in shape or dash."""
    return PALETTE[seat % len(PALETTE)], DASHES[(seat + seat // len(SHAPES)) % len(DASHES)], \
        SHAPES[seat % len(SHAPES)]


def nice_step(span: float, ticks: int = 5) -> float:
    """A step of 1, 2 or 5 times a power of ten giving about `ticks` steps over `span`."""
    raw = max(span, 1.0) / ticks
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return m * power
    return 10 * power


def spread_labels(ys: Sequence[float], lo: float, hi: float, gap: float = LABEL_GAP) -> list[float]:
    """Label positions near `ys`, at least `gap` apart, kept within [lo, hi] where there is room,
    in the same order as `ys` (equal totals would print their names on top of each other)."""
    order = sorted(range(len(ys)), key=lambda i: (ys[i], i))
    placed = [ys[i] for i in order]
    for k in range(1, len(placed)):
        placed[k] = max(placed[k], placed[k - 1] + gap)
    if placed and placed[-1] > hi:
        placed[-1] = hi
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
    if placed and placed[0] < lo:  # more labels than room: keep the order, below the plot if need be
        placed[0] = lo
        for k in range(1, len(placed)):
            placed[k] = max(placed[k], placed[k - 1] + gap)
    out = [0.0] * len(ys)
    for k, i in enumerate(order):
        out[i] = placed[k]
    return out


def char_width(ch: str) -> float:
    """A character's width in ems, on the wide side of common sans-serif fonts (the browser's
    font is not known here, so a label is cut to what fits even in a wide one)."""
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 1.0
    if ch in "ilI.,:;|!'`()[]{} ":
        return 0.35
    if ch in "mwMW@%":
        return 0.95
    if ch.isupper() or ch.isdigit():
        return 0.72
    return 0.6


def text_width(text: str, size: float = FONT) -> float:
    return sum(char_width(c) for c in text) * size


def cut(name: str, room: float, size: float = FONT) -> str:
    """`name`, or as much of it as fits in `room` user units with an ellipsis after it."""
    if text_width(name, size) <= room:
        return name
    room -= text_width("\u2026", size)
    out, used = [], 0.0
    for c in name:
        used += char_width(c) * size
        if used > room:
            break
        out.append(c)
    return "".join(out).rstrip() + "\u2026"


def totals_chart(names: Sequence[str], totals_by_round: Sequence[Sequence[int]], title: str) -> Chart:
    """The chart of each seat's total after each round (`totals_by_round[r][seat]`), from 0 at the start."""
    rounds = len(totals_by_round)
    seats = len(names)
    rows = [[0] * seats] + [list(t) for t in totals_by_round]
    values = [v for row in rows for v in row]
    step = nice_step(max(values) - min(values) if values else 1)
    lo = math.floor(min(values + [0]) / step) * step
    hi = math.ceil(max(values + [1]) / step) * step
    if hi <= lo:
        hi = lo + step
    right, bottom = LEFT + PLOT_W, TOP + PLOT_H

    def x_of(r: int) -> float:
        return LEFT + r * PLOT_W / max(rounds, 1)

    def y_of(v: float) -> float:
        return bottom - (v - lo) / (hi - lo) * PLOT_H

    every = max(1, math.ceil(rounds / 20))
    x_ticks = [Tick(x_of(r), "start" if r == 0 else str(r)) for r in range(0, rounds + 1, every)]
    y_ticks = []
    v = lo
    while v <= hi + step / 2:
        y_ticks.append(Tick(y_of(v), f"{v:g}"))
        v += step
    ends = spread_labels([y_of(rows[-1][s]) for s in range(seats)], TOP, bottom)
    legend_top = bottom + 48
    series = []
    legend_room = (WIDTH - 20) / LEGEND_COLS - LEGEND_TEXT - 8
    for s, name in enumerate(names):
        colour, dash, shape = style_of(s)
        total = f" ({rows[-1][s]})"
        label_room = WIDTH - (right + LABEL_AT) - 4 - text_width(total)
        points = [Point(x_of(r), y_of(row[s]), row[s], r, marker_path(shape, x_of(r), y_of(row[s])))
                  for r, row in enumerate(rows)]
        lx = 10 + (s % LEGEND_COLS) * (WIDTH - 20) / LEGEND_COLS
        ly = legend_top + (s // LEGEND_COLS) * LEGEND_ROW
        series.append(Series(
            name=name, label=cut(name, label_room), legend=cut(name, legend_room), colour=colour, dash=dash,
            shape=shape, points=points, label_y=ends[s], filled=shape not in OPEN_SHAPES,
            legend_x=lx, legend_y=ly, legend_text_x=lx + LEGEND_TEXT, legend_marker=marker_path(shape, lx + 15, ly),
            leader=f"M {right + 7:.1f} {y_of(rows[-1][s]):.1f} L {right + 16:.1f} {ends[s]:.1f}"))
    legend_rows = math.ceil(seats / LEGEND_COLS)
    height = int(legend_top + legend_rows * LEGEND_ROW + 4)
    return Chart(WIDTH, height, LEFT, TOP, right, bottom, x_ticks, y_ticks, series, title, legend_top,
                 right + LABEL_AT)


__all__ = ["PALETTE", "SHAPES", "OPEN_SHAPES", "DASHES", "marker_path", "style_of", "nice_step",
           "spread_labels", "char_width", "text_width", "cut", "totals_chart"]
