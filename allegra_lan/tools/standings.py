"""`allegra replay standings`: the organiser's tables over many games.

One game, one result: every peer writes its own copy of each game, and an
organiser collects all of them (and copies of copies), so files are grouped
by the game id their logs sign. Copies whose logs are the same count once; a
copy cut short (a crash) that is a prefix of a whole copy is only noted; two
copies whose logs part are two signed histories of one game, so that game is
left out, with the first seq where they part (as `allegra diff` finds it),
until the organiser resolves it. Only games that verify and are finished
count: a tampered, refused or unfinished replay could otherwise decide a
tournament.

Players are told apart by their key (its fingerprint), not their name, since
anyone can type any name; a players file (tools/players.py) gives keys the
organiser's names, and a key missing from it is listed. A bot makes a new key
every game, so a seat named as a bot (`greedy`, `greedy-1`) whose key the
players file does not name is entered under its bot kind. Games of different
variants or table sizes are never summed together: each (variant, seats) pair
has its own table, with ratings (tools/ratings.py) over its games in time
order. Shared wins count for every winner (R11). Everything left out is listed
with the reason, so nothing vanishes silently.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence, TextIO, TypeVar

from allegra_lan.log.replay import ReplayError, read_replay
from allegra_lan.tool_args import STANDINGS_FORMATS, add_standings_arguments
from allegra_lan.tools import ToolError, files_and_jobs, prog_of, usage_error
from allegra_lan.tools.diff import first_difference
from allegra_lan.tools.players import Players, PlayersError, players_option
from allegra_lan.tools.verify import Verdict, verdict_line, verify_readable

R = TypeVar("R")

PROG = "allegra replay standings"
FORMATS = STANDINGS_FORMATS
BOT_KEY = "bot"  # the fingerprint column of a bot kind's row
TIME_NOTE = ("games are rated in the order of their signed start times; a log of an older "
             "version, which signs none, by its file's Date tag (the day only, not signed), "
             "then by the files' modification times")


@dataclass
class PlayerRow:
    """One entrant's line: a key, a players-file name (its keys), or a bot kind."""

    fingerprint: str  # the key's fingerprint, a named player's first key, or BOT_KEY
    names: list[str] = field(default_factory=list)  # in order of first appearance
    keys: list[str] = field(default_factory=list)  # every key seen for this entrant
    games: int = 0
    wins: int = 0
    total: int = 0
    mu: float | None = None
    sigma: float | None = None
    ordinal: float | None = None

    @property
    def name(self) -> str:
        return "/".join(self.names)

    @property
    def mean(self) -> float:
        return self.total / self.games if self.games else 0.0


@dataclass
class Game:
    """A game counted once: its chosen whole copy and every file that holds it."""

    verdict: Verdict  # the first whole copy (its path is the one shown)
    copies: list[str]  # every file with this log whole, in input order
    cut: list[str]  # files holding a prefix of it (cut short by a crash)
    mtime: float = 0.0  # the earliest modification time of its files

    @property
    def when(self) -> tuple[str, float, str]:
        """The key games are put in time order by: the signed start time (its day, then
        the second), or for a log of an older version, which signs none, the Date tag's day
        and the files' earliest modification time; then the game id."""
        started = self.verdict.started
        if started is not None:
            return (time.strftime("%Y.%m.%d", time.gmtime(started // 1000)), started / 1000,
                    self.verdict.game)
        return (_day(self.verdict.date), self.mtime, self.verdict.game)


@dataclass
class LeftOut:
    """Something not counted, as one line: a file that failed, a game unfinished or disputed."""

    line: str
    failed: bool  # a file failed a check or copies disagree (what --strict refuses)
    kind: str = ""  # "unverified" (a file), "unfinished" or "disputed" (a game): for tools that sort them
    game: str = ""  # the game id the line is about ("" for a file with no genesis)


@dataclass
class Table:
    """The standings of one variant at one table size."""

    variant: str
    seats: int
    players: list[PlayerRow]  # sorted: wins desc, mean asc, name, fingerprint
    games: list[Game]  # in time order

    @property
    def title(self) -> str:
        from allegra_lan.rules import Variant  # a counted game's variant is a known one

        return f"{Variant(self.variant).title}, {self.seats} players"


@dataclass
class Standings:
    tables: list[Table]  # sorted by variant, then seats
    counted: list[Game]
    left_out: list[LeftOut]
    missing: list[str] = field(default_factory=list)  # lines: keys the players file lacks

    @property
    def players(self) -> list[PlayerRow]:
        """Every row of every table (one table's rows when there is one table)."""
        return [r for t in self.tables for r in t.players]


_DAY = re.compile(r"(\d{4})[.-](\d{2})[.-](\d{2})")


def _day(date: str) -> str:
    """A Date tag as YYYY.MM.DD for sorting; "" (first) if it is not a date."""
    m = _DAY.fullmatch(date.strip())
    return ".".join(m.groups()) if m else ""


def _bot_pattern() -> re.Pattern[str]:
    from allegra_lan.netargs import BOT_NAMES  # the registry's names as text (no bot imported)

    return re.compile("(" + "|".join(map(re.escape, BOT_NAMES)) + r")(?:-\d+)?")


def _events(path: str) -> list[bytes] | None:
    try:
        return read_replay(path).events
    except (ReplayError, OSError):
        return None


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def group_games(verdicts: Iterable[Verdict], *,
                events_of: Callable[[str], list[bytes] | None] = _events,
                mtime_of: Callable[[str], float] = _mtime,
                signed: bool = False) -> tuple[list[Game], list[LeftOut]]:
    """The games of `verdicts`, each once, and the lines of what is left out; with `signed`,
    a finished game whose results are not signed by every seat (an older log) is left out too.

    Copies with the same head event and length are the same log (the chain
    links every event to the one before). Only when heads differ are the
    files read again (`events_of`) to find where they part."""
    by_game: dict[str, list[Verdict]] = {}
    left: list[LeftOut] = []
    for v in verdicts:
        if not v.ok:
            left.append(LeftOut(verdict_line(v), True, "unverified", v.game))
        elif not v.game:
            left.append(LeftOut(verdict_line(v), False, "unfinished"))
        else:
            by_game.setdefault(v.game, []).append(v)
    games: list[Game] = []
    for gid, copies in by_game.items():
        heads = {(v.events, v.head) for v in copies}
        whole = [v for v in copies if v.finished]
        if len(heads) > 1:
            logs = {v.path: events_of(v.path) for v in copies}
            ref = max(copies, key=lambda v: (v.finished, v.events))
            ref_events = logs[ref.path]
            parted: tuple[Verdict, int] | None = None
            for v in copies:
                other = logs[v.path]
                if ref_events is None or other is None:
                    parted = (v, 0)
                    break
                d = first_difference(ref_events, other)
                if d is not None and d < len(other):  # not a prefix of the reference
                    parted = (v, d)
                    break
            if parted is not None:
                v, d = parted
                left.append(LeftOut(
                    f"game {gid}: copies disagree from seq {d}: {ref.path} and {v.path} "
                    f"(`allegra diff` shows both); left out until resolved", True, "disputed", gid))
                continue
        if not whole:
            longest = max(copies, key=lambda v: v.events)
            files = ", ".join(v.path for v in copies)
            left.append(LeftOut(f"game {gid}: unfinished (the longest copy ends after seq "
                                f"{longest.events - 1}): {files}", False, "unfinished", gid))
            continue
        chosen = whole[0]
        if signed and not chosen.signed_by_all:
            left.append(LeftOut(f"game {gid}: its results are not signed by every seat (a log of "
                                f"an older version): {', '.join(v.path for v in copies)}", False))
            continue
        games.append(Game(chosen, [v.path for v in whole], [v.path for v in copies if not v.finished],
                          min(mtime_of(v.path) for v in copies)))
    return games, left


def _entrant(name: str, fp: str, players: Players | None, bot: re.Pattern[str]) -> tuple[str, str]:
    """(row key, shown name) of a seat: the players file decides, then bot names, then the key."""
    if players is not None:
        known = players.name_of(fp)
        if known is not None:
            return "name:" + known, known
    m = bot.fullmatch(name)
    if m:
        return "bot:" + m.group(1), m.group(1)
    return "key:" + fp, name


def _sort_rows(rows: Iterable[PlayerRow]) -> list[PlayerRow]:
    return sorted(rows, key=lambda r: (-r.wins, r.mean, r.name, r.fingerprint))


def standings(verdicts: Iterable[Verdict], players: Players | None = None, *,
              rating: bool = True,
              events_of: Callable[[str], list[bytes] | None] = _events,
              mtime_of: Callable[[str], float] = _mtime,
              signed: bool = False) -> Standings:
    """Each game once, summed per entrant in one table per (variant, seats), rated in time order
    (`signed`: only games whose every round every seat signed, issue 13)."""
    games, left = group_games(verdicts, events_of=events_of, mtime_of=mtime_of, signed=signed)
    games.sort(key=lambda g: g.when)
    bot = _bot_pattern()
    groups: dict[tuple[str, int], tuple[dict[str, PlayerRow], list[Game], list]] = {}
    missing: dict[str, tuple[list[str], int]] = {}  # fingerprint: (names seated as, games)
    for g in games:
        v = g.verdict
        rows, tgames, rated = groups.setdefault((v.variant, len(v.seats)), ({}, [], []))
        tgames.append(g)
        keys: list[str] = []
        for seat, (name, fp) in enumerate(v.seats):
            key, shown = _entrant(name, fp, players, bot)
            keys.append(key)
            row = rows.setdefault(key, PlayerRow(BOT_KEY if key.startswith("bot:") else fp))
            if shown not in row.names:
                row.names.append(shown)
            if not key.startswith("bot:") and fp not in row.keys:
                row.keys.append(fp)
            row.games += 1
            row.total += v.totals[seat]
            if seat in v.winners:
                row.wins += 1
            if players is not None and key.startswith("key:"):
                seen, n = missing.get(fp, ([], 0))
                if name not in seen:
                    seen.append(name)
                missing[fp] = (seen, n + 1)
        rated.append((keys, v.totals))
    tables: list[Table] = []
    for (variant, seats), (rows, tgames, rated) in sorted(groups.items()):
        if rating:
            from allegra_lan.tools.ratings import RatedGame, rate

            ratings = rate([RatedGame(keys, totals) for keys, totals in rated])
            for key, r in ratings.items():
                row = rows[str(key)]
                row.mu, row.sigma, row.ordinal = r.mu, r.sigma, r.ordinal
        tables.append(Table(variant, seats, _sort_rows(rows.values()), tgames))
    lines = [f"{fp} (seated as {', '.join(names)}; {n} game{'s' if n != 1 else ''})"
             for fp, (names, n) in sorted(missing.items())]
    return Standings(tables, games, left, lines)


def shared_ranks(rows: Sequence[R], key: Callable[[R], object]) -> list[int]:
    """The ranks of rows already in rank order, where a row whose key equals the row
    before it shares its rank (1, 2, 2, 4 ...): the standings' and the tournament's."""
    ranks: list[int] = []
    for i, r in enumerate(rows):
        if i and key(r) == key(rows[i - 1]):
            ranks.append(ranks[-1])
        else:
            ranks.append(i + 1)
    return ranks


def player_ranks(players: Sequence[PlayerRow]) -> list[int]:
    """Equal wins and equal mean share a rank."""
    return shared_ranks(players, lambda r: (r.wins, r.mean))


def key_cell(r: PlayerRow) -> str:
    """The fingerprint column: the key, or the first of a player's keys and how many more."""
    if r.fingerprint == BOT_KEY or len(r.keys) <= 1:
        return r.fingerprint
    return f"{r.keys[0]} +{len(r.keys) - 1}"


def figure(x: float | None, digits: int = 2) -> str:
    """A rating's figure as the tables show it; `-` where there is none."""
    return "-" if x is None else f"{x:.{digits}f}"


def format_table(t: Table) -> list[str]:
    """A titled table; with names of up to 8 characters a row fits 80 columns."""
    name_w = max([len("player")] + [len(r.name) for r in t.players])
    key_w = max([19] + [len(key_cell(r)) for r in t.players])
    n = len(t.games)
    lines = [f"{t.title}: {n} game{'s' if n != 1 else ''}",
             f"{'rank':>4}  {'player':<{name_w}}  {'fingerprint':<{key_w}} {'games':>5} {'wins':>4} "
             f"{'total':>6} {'mean':>7} {'rating':>6} {'sigma':>5} {'ordinal':>7}"]
    for rank, r in zip(player_ranks(t.players), t.players):
        lines.append(f"{rank:>4}  {r.name:<{name_w}}  {key_cell(r):<{key_w}} {r.games:>5} {r.wins:>4} "
                     f"{r.total:>6} {r.mean:>7.2f} {figure(r.mu):>6} {figure(r.sigma):>5} {figure(r.ordinal):>7}")
    return lines


def format_text(s: Standings, players_label: str = "the players file") -> str:
    lines: list[str] = []
    for t in s.tables:
        lines.extend(format_table(t))
        lines.append("")
    if not s.tables:
        lines.extend(["no finished game verified: no standings", ""])
    games = len(s.counted)
    copies = sum(len(g.copies) - 1 + len(g.cut) for g in s.counted)
    summary = f"{games} game{'s' if games != 1 else ''} counted"
    if copies:
        summary += f" (and {copies} more cop{'ies' if copies != 1 else 'y'} of them)"
    lines.append(summary + f", {len(s.left_out)} left out")
    lines.extend(left_out_lines(s))
    lines.extend(missing_lines(s, players_label))
    if s.counted:
        lines.append(f"note: {TIME_NOTE}")
    return "\n".join(lines) + "\n"


def left_out_lines(s: Standings) -> list[str]:
    if not s.left_out:
        return []
    return ["left out:"] + ["  " + x.line for x in s.left_out]


def missing_lines(s: Standings, players_label: str = "the players file") -> list[str]:
    if not s.missing:
        return []
    return [f"keys not in {players_label}:"] + ["  " + x for x in s.missing]


CSV_HEADER = ["variant", "seats", "rank", "player", "fingerprint", "games", "wins", "total", "mean",
              "rating", "sigma", "ordinal"]


def write_csv(s: Standings, out: TextIO) -> None:
    """One CSV of every table: `variant` and `seats` say which table a row is in. A named
    player's keys are in `fingerprint`, separated by spaces."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for t in s.tables:
        for rank, r in zip(player_ranks(t.players), t.players):
            keys = " ".join(r.keys) if r.fingerprint != BOT_KEY else BOT_KEY
            w.writerow([t.variant, t.seats, rank, r.name, keys, r.games, r.wins, r.total,
                        f"{r.mean:.2f}", figure(r.mu, 4), figure(r.sigma, 4), figure(r.ordinal, 4)])


def run_standings(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 when the standings were made, whatever was left out (listed); 1 with --strict if
    a file failed a check or copies of a game disagree; 2 for bad input: bad arguments, a
    players file that cannot be used, or a file that is not a replay at all (one stderr line
    each; the other files are still ranked)."""
    prog = prog_of(args, PROG)
    fmt = getattr(args, "format", "text")
    if fmt not in FORMATS:
        return usage_error(err, prog, f"unknown format {fmt!r}: choose text or csv")
    try:
        paths, jobs = files_and_jobs(args)
    except ToolError as e:
        return usage_error(err, prog, str(e))
    try:
        players, label = players_option(args)
    except PlayersError as e:
        return usage_error(err, prog, str(e))
    verdicts, unread = verify_readable(paths, jobs, prog, err)
    s = standings(verdicts, players, signed=bool(getattr(args, "signed", False)))
    if fmt == "csv":
        write_csv(s, out)
        for line in left_out_lines(s) + missing_lines(s, label):
            err.write(line + "\n")
    else:
        out.write(format_text(s, label))
    out.flush()
    err.flush()
    if unread:
        return 2
    if getattr(args, "strict", False) and any(x.failed for x in s.left_out):
        return 1
    return 0


__all__ = [
    "PlayerRow", "Game", "LeftOut", "Table", "Standings", "group_games", "standings", "format_table",
    "format_text", "write_csv", "left_out_lines", "missing_lines", "add_standings_arguments",
    "run_standings", "CSV_HEADER", "TIME_NOTE", "shared_ranks", "player_ranks", "key_cell", "figure",
]
