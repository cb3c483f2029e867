"""`allegra replay standings`: the organiser's table over many games.

Only games that verify and are finished count: a tampered, refused or
unfinished replay could otherwise decide a tournament. Players are told apart
by their key (its fingerprint), not their name, since anyone can type any
name; a key seen under several names shows them all. Shared wins count for
every winner (R11). Games left out are listed with the reason, so nothing
vanishes silently.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass, field
from typing import Iterable, TextIO

from allegra_lan.tool_args import STANDINGS_FORMATS, add_standings_arguments
from allegra_lan.tools import ToolError, files_and_jobs, prog_of, usage_error
from allegra_lan.tools.verify import (
    Verdict, unreadable, unreadable_line, verdict_line, verify_many,
)

PROG = "allegra replay standings"
FORMATS = STANDINGS_FORMATS


@dataclass
class PlayerRow:
    """One player's line: the key decides who it is; names are as the games seated them."""

    fingerprint: str
    names: list[str] = field(default_factory=list)  # in order of first appearance
    games: int = 0
    wins: int = 0
    total: int = 0

    @property
    def name(self) -> str:
        return "/".join(self.names)

    @property
    def mean(self) -> float:
        return self.total / self.games if self.games else 0.0


@dataclass
class Standings:
    players: list[PlayerRow]  # sorted: wins desc, mean asc, name, fingerprint
    counted: list[Verdict]
    left_out: list[Verdict]


def standings(verdicts: Iterable[Verdict]) -> Standings:
    """Sum the finished, verified games of `verdicts` per player key."""
    rows: dict[str, PlayerRow] = {}
    counted: list[Verdict] = []
    left_out: list[Verdict] = []
    for v in verdicts:
        if not (v.ok and v.finished):
            left_out.append(v)
            continue
        counted.append(v)
        for seat, (name, fp) in enumerate(v.seats):
            row = rows.setdefault(fp, PlayerRow(fp))
            if name not in row.names:
                row.names.append(name)
            row.games += 1
            row.total += v.totals[seat]
            if seat in v.winners:
                row.wins += 1
    ordered = sorted(rows.values(), key=lambda r: (-r.wins, r.mean, r.name, r.fingerprint))
    return Standings(ordered, counted, left_out)


def _ranks(players: list[PlayerRow]) -> list[int]:
    """Equal wins and equal mean share a rank (1, 2, 2, 4 ...)."""
    ranks: list[int] = []
    for i, r in enumerate(players):
        if i and (r.wins, r.mean) == (players[i - 1].wins, players[i - 1].mean):
            ranks.append(ranks[-1])
        else:
            ranks.append(i + 1)
    return ranks


def format_text(s: Standings) -> str:
    name_w = max([len("player")] + [len(r.name) for r in s.players])
    lines = [f"{'rank':>4}  {'player':<{name_w}}  {'fingerprint':<19}  {'games':>5}  {'wins':>4}  "
             f"{'total':>6}  {'mean':>7}"]
    for rank, r in zip(_ranks(s.players), s.players):
        lines.append(f"{rank:>4}  {r.name:<{name_w}}  {r.fingerprint:<19}  {r.games:>5}  {r.wins:>4}  "
                     f"{r.total:>6}  {r.mean:>7.2f}")
    games = len(s.counted)
    lines.append("")
    lines.append(f"{games} game{'s' if games != 1 else ''} counted, {len(s.left_out)} left out")
    lines.extend(left_out_lines(s))
    return "\n".join(lines) + "\n"


def left_out_lines(s: Standings) -> list[str]:
    if not s.left_out:
        return []
    return ["left out:"] + ["  " + verdict_line(v) for v in s.left_out]


def write_csv(s: Standings, out: TextIO) -> None:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["rank", "player", "fingerprint", "games", "wins", "total", "mean"])
    for rank, r in zip(_ranks(s.players), s.players):
        w.writerow([rank, r.name, r.fingerprint, r.games, r.wins, r.total, f"{r.mean:.2f}"])


def run_standings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 if every game counted, 1 if some were left out (read fine, but unfinished or
    failing verify), 2 for bad arguments or a file that is not a replay at all (one stderr
    line each; the other files are still ranked)."""
    prog = prog_of(args, PROG)
    fmt = getattr(args, "format", "text")
    if fmt not in FORMATS:
        return usage_error(err, prog, f"unknown format {fmt!r}: choose text or csv")
    try:
        paths, jobs = files_and_jobs(args)
    except ToolError as e:
        return usage_error(err, prog, str(e))
    verdicts = []
    unread = 0
    for v in verify_many(paths, jobs):
        if unreadable(v):
            err.write(unreadable_line(prog, v) + "\n")
            unread += 1
        else:
            verdicts.append(v)
    s = standings(verdicts)
    if fmt == "csv":
        write_csv(s, out)
        for line in left_out_lines(s):
            err.write(line + "\n")
    else:
        out.write(format_text(s))
    out.flush()
    err.flush()
    return 2 if unread else 1 if s.left_out else 0


__all__ = [
    "PlayerRow", "Standings", "standings", "format_text", "write_csv", "left_out_lines",
    "add_standings_arguments", "run_standings",
]
