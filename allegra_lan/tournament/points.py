"""`allegra tournament standings`: rank the planned games by tournament points per table.

The point scheme (argued in docs/tournaments.md, "Standings"):

- **Points** at a table are the share of one's opponents one beat: an
  opponent with a higher total is beaten (lowest total is best), an equal
  total is half. First place earns 1 and last 0 at any table size, and the
  points of a table always average 1/2 a player, so a round that seats some
  at a table of 3 and others at a table of 4 gives neither table's players
  more to win. Equal totals share the places' points, exactly.
- **Margin**, the tie-break: the mean of one's opponents' totals minus one's
  own total, summed over the games (higher is better). Against the table's
  opponents, not the table's whole mean (which holds the player's own total
  and shrinks a margin at a small table by (n-1)/n): an average player's
  margin is 0 at every size. A hard deal that raises everyone's scores
  raises the opponents' mean too, so margins of different tables compare.
- Then the openskill rating's ordinal, then the name, so the order is total.

Points and margins are exact fractions (a table of 3 gives halves and thirds
of a point; one of 4, sixths), so equal is equal, never a float's rounding.
Only the games `tournament check` matches to a planned table count: games
played by the wrong players, unfinished, disputed or failing verify are named
and left out, because a tournament's points must come from the tables the
plan set.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence, TextIO

from allegra_lan.tools.standings import figure, shared_ranks
from allegra_lan.tournament.check import Check, CheckError, TIME_NOTE, check_games
from allegra_lan.tournament.plan import variant_title

PROG = "allegra tournament standings"


def table_points(totals: Sequence[int]) -> list[Fraction]:
    """Each seat's points at one table: (opponents with a higher total + half the opponents
    with an equal one) / opponents."""
    n = len(totals)
    if n < 2:
        return [Fraction(0)] * n
    return [Fraction(2 * sum(1 for o in totals if o > t) + sum(1 for o in totals if o == t) - 1, 2 * (n - 1))
            for t in totals]


def table_margins(totals: Sequence[int]) -> list[Fraction]:
    """Each seat's margin at one table: the mean of the other seats' totals minus its own."""
    n = len(totals)
    if n < 2:
        return [Fraction(0)] * n
    whole = sum(totals)
    return [Fraction(whole - t, n - 1) - t for t in totals]


@dataclass
class Row:
    """One player's line of the tournament's standings."""

    name: str
    games: int = 0
    points: Fraction = Fraction(0)
    margin: Fraction = Fraction(0)
    wins: int = 0  # tables won outright or shared (lowest total)
    mu: float | None = None
    sigma: float | None = None
    ordinal: float | None = None


@dataclass
class TournamentStandings:
    title: str
    rows: list[Row]  # in rank order
    counted: int  # planned tables counted
    planned: int
    left_out: list[str]  # lines, as check words them
    unknown: list[str]


def rank_key(r: Row) -> tuple[Fraction, Fraction, float, str]:
    return (-r.points, -r.margin, -(r.ordinal if r.ordinal is not None else float("-inf")), r.name)


def ranks(rows: Sequence[Row]) -> list[int]:
    """Equal points and margin share a rank (1, 2, 2, 4)."""
    return shared_ranks(rows, lambda r: (r.points, r.margin))


def tournament_standings(c: Check, *, rating: bool = True) -> TournamentStandings:
    """Points, margins and ratings over the tables `c` found played, in time order; every
    plan player has a row, games or none."""
    rows = {p.name: Row(p.name) for p in c.plan.players}
    rated = []
    for t in c.played:
        g = t.game
        assert g is not None and g.counted is not None
        names = [s.name or "" for s in g.seats]
        totals = list(g.totals)
        best = min(totals)
        for name, pts, margin, total in zip(names, table_points(totals), table_margins(totals), totals):
            row = rows[name]
            row.games += 1
            row.points += pts
            row.margin += margin
            row.wins += total == best
        rated.append((names, totals))
    if rating and rated:
        from allegra_lan.tools.ratings import RatedGame, rate

        for name, r in rate([RatedGame(n, tot) for n, tot in rated]).items():
            row = rows[str(name)]
            row.mu, row.sigma, row.ordinal = r.mu, r.sigma, r.ordinal
    p = c.plan
    title = (f"{variant_title(p.variant)} tournament, plan seed {p.seed}: {len(p.players)} players, "
             f"{len(p.rounds)} round{'s' if len(p.rounds) != 1 else ''}")
    return TournamentStandings(title, sorted(rows.values(), key=rank_key), len(c.played), len(c.tables),
                               c.left_out(), c.unknown)


def _signed(x: Fraction, digits: int) -> str:
    return f"{float(x):+.{digits}f}"


POINTS_NOTE = ("points: at each table the share of opponents beaten (lower total), a tie half; "
               "margin: the opponents' mean total minus one's own, summed (the tie-break)")


def format_text(s: TournamentStandings, players_label: str) -> str:
    name_w = max([len("player")] + [len(r.name) for r in s.rows])
    lines = [s.title, f"{s.counted} of {s.planned} planned tables counted", "",
             f"{'rank':>4}  {'player':<{name_w}} {'games':>5} {'wins':>4} {'points':>6} {'margin':>8} "
             f"{'rating':>6} {'sigma':>5} {'ordinal':>7}"]
    for rank, r in zip(ranks(s.rows), s.rows):
        lines.append(f"{rank:>4}  {r.name:<{name_w}} {r.games:>5} {r.wins:>4} {float(r.points):>6.2f} "
                     f"{_signed(r.margin, 2):>8} {figure(r.mu, 2):>6} {figure(r.sigma, 2):>5} "
                     f"{figure(r.ordinal, 2):>7}")
    lines += ["", POINTS_NOTE]
    if s.left_out:
        lines += ["", f"left out ({len(s.left_out)}):"] + ["  " + x for x in s.left_out]
    if s.unknown:
        lines += ["", f"keys not in {players_label}:"] + ["  " + x for x in s.unknown]
    lines += ["", f"note: {TIME_NOTE}; ratings are updated in that order"]
    return "\n".join(lines) + "\n"


CSV_HEADER = ("rank", "player", "games", "wins", "points", "margin", "rating", "sigma", "ordinal")


def write_csv(s: TournamentStandings, out: TextIO) -> None:
    """A row per player in rank order; points and margin to 4 decimals (exact fractions
    inside), rating, sigma and ordinal to 4 ("-" for a player with no game counted)."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for rank, r in zip(ranks(s.rows), s.rows):
        w.writerow((rank, r.name, r.games, r.wins, f"{float(r.points):.4f}", f"{float(r.margin):.4f}",
                    figure(r.mu, 4), figure(r.sigma, 4), figure(r.ordinal, 4)))


def run_standings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """0 the standings were made; 1 with --strict when anything was left out; 2 bad input
    (a file that is not a replay: a line each on stderr, and the others are still ranked)."""
    from allegra_lan.tools import prog_of, usage_error
    from allegra_lan.tournament.check import read_inputs, unreadable_lines

    prog = prog_of(args, PROG)
    try:
        inputs = read_inputs(args)
    except CheckError as e:
        return usage_error(err, prog, str(e))
    s = tournament_standings(check_games(inputs.plan, inputs.verdicts, inputs.names))
    for line in unreadable_lines(prog, inputs):
        err.write(line + "\n")
    if getattr(args, "format", "text") == "csv":
        write_csv(s, out)
        for line in s.left_out:
            err.write(f"left out: {line}\n")
    else:
        out.write(format_text(s, inputs.players_label))
    out.flush()
    err.flush()
    if inputs.unreadable:
        return 2
    return 1 if getattr(args, "strict", False) and s.left_out else 0


__all__ = [
    "table_points", "table_margins", "Row", "TournamentStandings", "tournament_standings", "ranks",
    "format_text", "write_csv", "run_standings", "CSV_HEADER", "PROG",
]
