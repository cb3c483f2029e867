"""What a published site says, as plain data: built from standings and games, then rendered.

Nothing here knows HTML: every field is text or numbers as a person reads
them, and the templates decide how they look (and escape them: a player's or
table's name is anyone's text). A later report adds to the index through
`Site.sections` (title, column headers, rows, notes) without a template of
its own, e.g. a tournament's points table, its plan's rounds and tables, and
the games the plan misses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True)
class Link:
    """A cell that links to another page of the site (a file name inside it)."""

    text: str
    href: str


Cell = Union[str, int, float, Link]


@dataclass
class Section:
    """A generic table on the index: rows of cells under column headers, notes below."""

    title: str
    headers: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)
    anchor: str = ""  # the section's id on the page (made from the title when empty)


@dataclass
class StandingRow:
    rank: int
    player: str
    fingerprint: str
    games: int
    wins: int
    total: int
    mean: str  # already worded: "59.00"
    rating: str  # "-" when not rated
    sigma: str
    ordinal: str


@dataclass
class StandingTable:
    """One variant at one table size, as `replay standings` ranks it."""

    title: str
    games: int
    rows: list[StandingRow]


@dataclass
class Seat:
    name: str  # as seated (the genesis), or the players file's name for this key
    fingerprint: str


@dataclass
class RoundRow:
    """One round's scores per seat, and the totals after it."""

    number: int  # from 1
    scores: list[int]
    totals: list[int]
    ender: int | None  # the seat that ended it
    doubled: bool  # the ender's score was doubled (R10)


@dataclass
class Point:
    x: float
    y: float
    value: int
    round: int  # 0: the start, before any round
    marker: str  # an SVG path ("M .. Z") of the series' marker shape around (x, y)


@dataclass
class Series:
    """One seat's line: its marker shape and dash tell it apart without colour."""

    name: str
    label: str  # the name as printed at the line's end (cut to fit; `name` is the line's title)
    legend: str  # the name as printed in the legend (cut to fit its column)
    colour: str
    dash: str  # an SVG stroke-dasharray ("" for solid)
    shape: str  # the marker's name (said in the line's title)
    points: list[Point]
    label_y: float  # where the end label sits (moved apart from the others' labels)
    filled: bool  # a closed shape is filled; a plus, cross or bar is strokes only
    legend_x: float  # where its legend entry starts
    legend_y: float
    legend_text_x: float  # where its name in the legend starts
    legend_marker: str  # the marker's path at its place in the legend
    leader: str  # an SVG path from the line's end to its label (which may have been moved apart)


@dataclass
class Tick:
    at: float
    label: str


@dataclass
class Chart:
    """The totals round by round as SVG geometry (user units); the template only draws it."""

    width: int
    height: int
    left: float
    top: float
    right: float
    bottom: float
    x_ticks: list[Tick]
    y_ticks: list[Tick]
    series: list[Series]
    title: str
    legend_top: float
    label_x: float  # where the end labels start


@dataclass
class GameEntry:
    """A counted game: its row in the list and its own page."""

    game_id: str
    page: str  # the page's file name inside the site
    title: str  # "ALLEGRA Grande, 3 players"
    table: str  # the table's name from the genesis (anyone's text)
    date: str  # the header's Date tag ("" if none): not signed
    start: str  # when it started, as signed by the log ("" when the log does not say)
    duration: str  # "" when the log does not say
    seats: list[Seat]
    rounds: list[RoundRow]
    totals: list[int]
    winners: list[int]  # seats
    verified: str  # "yes", and how many copies agree (a counted game always verified)
    files: list[str]  # every file holding it whole (the first is the one read)
    cut: list[str]  # files holding a part of it (cut short)
    chart: Chart | None = None

    @property
    def winner_names(self) -> str:
        return ", ".join(self.seats[w].name for w in self.winners)

    @property
    def copies(self) -> list[str]:
        return self.files[1:]


@dataclass
class Site:
    title: str
    summary: str  # "5 games counted (and 4 more copies of them), 2 left out"
    standings: list[StandingTable]
    games: list[GameEntry]
    left_out: list[str]  # one line each: a file that failed, a game unfinished or disputed
    missing: list[str]  # keys the players file lacks
    missing_label: str  # "the players file" or its path
    notes: list[str] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)  # a later report's extra tables


__all__ = [
    "Link", "Cell", "Section", "StandingRow", "StandingTable", "Seat", "RoundRow", "Point", "Series",
    "Tick", "Chart", "GameEntry", "Site",
]
