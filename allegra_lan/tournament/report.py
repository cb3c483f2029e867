"""`allegra tournament report`: the tournament's site, the replay report's pages with the plan.

The site is `allegra replay report`'s (report/), built from the games `tournament
check` found played at a planned table, so its per-variant standings, game list
and game pages hold the tournament's games and nothing else; the tournament adds
three tables on the index through the report's generic sections: the standings by
points (`tournament standings`, the same rows), every planned table with its status
and a link to its game's page, and what check found besides (files that fail
verify, games not in the plan, unfinished and disputed games). Nothing here ranks
or matches anew: the rows are `check_games` and `tournament_standings` as they are.
"""

from __future__ import annotations

import argparse
from typing import TextIO

from allegra_lan.report.build import ReportError, build_site, page_name
from allegra_lan.report.model import Cell, Link, Section, Site
from allegra_lan.tools.players import Players
from allegra_lan.tools.standings import figure
from allegra_lan.tournament.check import Check, Inputs
from allegra_lan.tournament.points import POINTS_NOTE, TournamentStandings, ranks

PROG = "allegra tournament report"


def _points_section(s: TournamentStandings) -> Section:
    rows: list[list[Cell]] = []
    for rank, r in zip(ranks(s.rows), s.rows):
        rows.append([rank, r.name, r.games, r.wins, f"{float(r.points):.2f}", f"{float(r.margin):+.2f}",
                     figure(r.mu), figure(r.sigma), figure(r.ordinal)])
    return Section(f"{s.title}: points", ["Rank", "Player", "Games", "Wins", "Points", "Margin",
                                          "Rating", "Sigma", "Ordinal"], rows,
                   notes=[f"{s.counted} of {s.planned} planned tables counted.", POINTS_NOTE + "."],
                   anchor="points")


def _tables_section(c: Check, pages: set[str]) -> Section:
    rows: list[list[Cell]] = []
    for t in c.tables:
        g = t.game
        game: Cell = "-"
        seated = "-"
        if g is not None:
            page = page_name(g.game)
            game = Link(g.game[:16], page) if page in pages else g.game[:16]
            seated = ", ".join(s.shown for s in g.seats)
        rows.append([t.round, t.table, t.status, ", ".join(t.planned), seated, game])
    return Section("Planned tables", ["Round", "Table", "Status", "Planned, in seat order", "Seated",
                                      "Game"], rows,
                   notes=["Only a table played by its planned players in one verified, finished "
                          "game counts."], anchor="tables")


def _findings_section(c: Check) -> Section:
    rows: list[list[Cell]] = [[f.kind, f.line] for f in c.findings]
    return Section("What the check found", ["Kind", "Finding"], rows,
                   notes=[] if rows else ["Nothing: every file verified and every game is planned."],
                   anchor="findings")


def tournament_site(inputs: Inputs, c: Check, s: TournamentStandings, *, title: str) -> Site:
    """The site of a checked tournament: the report's pages of the played tables' games
    (every copy of them, so the game list says which files agree), with the tournament's
    three tables on the index."""
    files: set[str] = set()
    for t in c.played:
        assert t.game is not None
        files.update(t.game.files)
        files.update(t.game.cut)
    verdicts = [v for v in inputs.verdicts if v.path in files]
    names = inputs.names.by_key
    players = Players(by_key=dict(names), names=[p.name for p in inputs.plan.players])
    pages = {page_name(t.game.game) for t in c.played if t.game is not None}
    sections = [_points_section(s), _tables_section(c, pages), _findings_section(c)]
    unread = [f"FAIL {v.path}  {v.reason}" for v in inputs.unreadable]
    return build_site(verdicts, players, title=title, players_label=inputs.players_label,
                      sections=sections, unreadable=unread)


def run_report(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """0 the site was written (whatever the check found: `tournament check` gives that
    status); 2 bad input, a SITE that is not a folder or a page that cannot be written (one
    line), and 2 too when a file is not a replay at all (a line each; the site is still
    written from the others)."""
    from allegra_lan.report.command import publish
    from allegra_lan.report.write import SiteError, check_site
    from allegra_lan.tools import prog_of, usage_error
    from allegra_lan.tournament.check import CheckError, check_games, read_inputs, unreadable_lines
    from allegra_lan.tournament.points import tournament_standings

    prog = prog_of(args, PROG)
    try:
        check_site(str(args.out))
        inputs = read_inputs(args)
    except (SiteError, CheckError) as e:
        return usage_error(err, prog, str(e))
    c = check_games(inputs.plan, inputs.verdicts, inputs.names)
    s = tournament_standings(c)
    for line in unreadable_lines(prog, inputs):
        err.write(line + "\n")
    try:
        site = tournament_site(inputs, c, s, title=args.title or s.title)
    except ReportError as e:
        return usage_error(err, prog, str(e))
    status = publish(site, str(args.out), prog, out, err)
    return status if status else 2 if inputs.unreadable else 0


__all__ = ["PROG", "run_report", "tournament_site"]
