"""A Site from verified replays: the standings as `replay standings` makes them, and each game.

The standings, the grouping of copies (one game, one result) and what is left
out are `tools.standings`' own, not recomputed here. A counted game's rounds
are read the way `replay show` and `export` read them: the one fold of its
log (fold_log) and the engine's round results, from the copy standings chose.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from allegra_lan.fold import Folded, fold_log
from allegra_lan.log.replay import ReplayError, read_replay
from allegra_lan.log.results import duration, iso_time
from allegra_lan.report.chart import totals_chart
from allegra_lan.report.model import GameEntry, RoundRow, Seat, Section, Site, StandingRow, StandingTable
from allegra_lan.tools.players import Players
from allegra_lan.tools.standings import (
    TIME_NOTE, Game, Standings, Table, figure, key_cell, player_ranks, standings,
)
from allegra_lan.tools.verify import Verdict

_HEX = re.compile(r"[0-9a-f]{1,64}")


class ReportError(Exception):
    """A counted game that can no longer be read (changed since it was verified): one line."""


def page_name(game_id: str) -> str:
    """The page of a game: `game-ID.html`. A game id is the hex its log signs; anything else
    (never from a verified log) is written as the hex of its bytes, marked `x`, so a page
    name is always a safe file name and two ids never share one (up to 64 bytes)."""
    gid = game_id if _HEX.fullmatch(game_id) else "x" + game_id.encode("utf-8", "replace")[:64].hex()
    return f"game-{gid}.html"


def standing_table(t: Table) -> StandingTable:
    rows = [StandingRow(rank, r.name, key_cell(r), r.games, r.wins, r.total, f"{r.mean:.2f}",
                        figure(r.mu), figure(r.sigma), figure(r.ordinal))
            for rank, r in zip(player_ranks(t.players), t.players)]
    return StandingTable(t.title, len(t.games), rows)


def _read_fold(path: str) -> Folded:
    try:
        events = read_replay(path).events
    except (ReplayError, OSError) as e:
        raise ReportError(f"{path}: could not be read again after verifying it ({e})") from None
    return fold_log(events)


def game_entry(g: Game, players: Players | None = None,
               fold_of: Callable[[str], Folded] = _read_fold) -> GameEntry:
    """A counted game's row and page, from its chosen copy's fold."""
    v: Verdict = g.verdict
    folded = fold_of(v.path)
    t = folded.table
    same = t.seq == v.events and bool(t.events) and t.events[-1].id.hex() == v.head
    if folded.fault is not None or t.state is None or t.genesis is None or not same:
        raise ReportError(f"{v.path}: no longer folds as it did when verified (the file changed)")
    seats = []
    for name, fp in v.seats:
        known = players.name_of(fp) if players is not None else None
        seats.append(Seat(known if known is not None else name, fp))
    rounds = [RoundRow(r.round_no + 1, list(r.scores), list(r.totals), r.ender, r.doubled)
              for r in t.state.results]
    title = _title(v)
    copies = len(g.copies)
    verified = "yes" + (f", {copies} copies agree" if copies > 1 else "")
    entry = GameEntry(
        game_id=v.game, page=page_name(v.game), title=title, table=t.genesis.table, date=v.date,
        start=_time(v.started), duration=_took(v.started, v.ended), seats=seats, rounds=rounds, totals=list(v.totals),
        winners=list(v.winners), verified=verified, files=list(g.copies), cut=list(g.cut),
    )
    entry.chart = totals_chart([s.name for s in seats], [r.totals for r in rounds],
                               f"Totals round by round: {title}")
    return entry


def _time(ms: int | None) -> str:
    """A signed time as the site shows it: `2026-12-02 06:30 UTC` ("" when the log signs
    none, a log of an older version)."""
    return "" if ms is None else iso_time(ms)[:16].replace("T", " ") + " UTC"


def _took(started: int | None, ended: int | None) -> str:
    return "" if started is None or ended is None else duration(ended - started)


def _title(v: Verdict) -> str:
    from allegra_lan.rules import Variant  # a counted game's variant is a known one

    return f"{Variant(v.variant).title}, {len(v.seats)} players"


def summary_line(s: Standings, unreadable: int = 0) -> str:
    """The same summary `replay standings` prints under its tables (`unreadable`: files that
    are not replays at all, which standings names on stderr only, are counted as left out)."""
    games = len(s.counted)
    copies = sum(len(g.copies) - 1 + len(g.cut) for g in s.counted)
    text = f"{games} game{'s' if games != 1 else ''} counted"
    if copies:
        text += f" (and {copies} more cop{'ies' if copies != 1 else 'y'} of them)"
    return text + f", {len(s.left_out) + unreadable} left out"


def build_site(verdicts: Iterable[Verdict], players: Players | None = None, *, title: str,
               players_label: str = "the players file", sections: Sequence[Section] = (),
               unreadable: Sequence[str] = (),
               fold_of: Callable[[str], Folded] = _read_fold) -> Site:
    """The site of `verdicts`: standings, every counted game in time order, what was left out.

    `sections` are a later report's own tables, shown on the index after the standings;
    `unreadable` the lines of files that are not replays at all, listed first as left out."""
    s = standings(verdicts, players)
    notes = [TIME_NOTE] if s.counted else []
    return Site(
        title=title, summary=summary_line(s, len(unreadable)),
        standings=[standing_table(t) for t in s.tables],
        games=[game_entry(g, players, fold_of) for g in s.counted],
        left_out=list(unreadable) + [x.line for x in s.left_out], missing=list(s.missing), missing_label=players_label,
        notes=notes, sections=list(sections),
    )


__all__ = ["ReportError", "page_name", "standing_table", "game_entry", "summary_line", "build_site"]
