"""`allegra tournament check`: match a folder of collected replays to the plan.

The organiser collects every peer's file of every game (and copies of
copies); `tools.standings.group_games` (which runs verify's verdicts) makes
each game one game, however many copies arrived, and says what it left out
(files that fail verify, unfinished games, copies that disagree). This module
puts those games next to the plan: which planned table each game was, which
tables have no game, and which games were played by other people than the
plan seated.

Seats are keys, not names: a log's seat names are whatever each peer typed,
so a seat is resolved to a plan name by its key fingerprint, through the
plan's own keys (a plan made from a players file keeps them) and the
`--players` file. A key neither knows is listed, and its seat is shown by its
fingerprint.

Matching, in this order (pure: `check_games` takes verdicts and returns data):

1. A finished, verified game is *played* at a planned table of the same
   variant and seat count whose players are exactly the game's (seat order
   aside: it is noted, not refused, since who sits where is decided by the
   order peers join). Where one set of players meets at more than one planned
   table, their games take those tables in time order (`game_time`), earlier
   rounds first.
2. An unfinished or disputed game with exactly a remaining table's players
   marks that table *unfinished* or *disputed* (not missing: the organiser
   knows which game to resume or resolve).
3. A finished game left over whose players are mostly (more than half the
   seats) those of a remaining table of its variant and size is that table
   played by *wrong players*: both lists are named, and who sat for whom.
   A table's best match is the one with the most planned players, then the
   earliest round.
4. Any other finished game is *not in the plan*.

The check passes (exit 0) only when every planned table is played by its
planned players in one verified, finished game and no file failed verify, no
game is unfinished and no copies disagree. Games not in the plan, keys the
players file lacks and cut-short copies of counted games are listed but do
not fail the check: an organiser's folder may hold friendlies.
"""

from __future__ import annotations

import argparse
import csv
import os
from dataclasses import dataclass, field
from typing import Iterable, Sequence, TextIO

from allegra_lan.tools.standings import Game, LeftOut, group_games
from allegra_lan.tools.verify import Verdict
from allegra_lan.tournament.plan import Plan, variant_title

PROG = "allegra tournament check"
FORMATS = ("text", "csv")

# Table statuses; only PLAYED passes.
PLAYED, MISSING, WRONG, UNFINISHED, DISPUTED = "played", "missing", "wrong players", "unfinished", "disputed"
# Finding kinds. The first four fail the check; the others are only listed.
UNVERIFIED, NOT_PLANNED, UNKNOWN_KEY, CUT = "unverified", "not in the plan", "unknown key", "cut short"
FAILING = frozenset({WRONG, UNVERIFIED, UNFINISHED, DISPUTED})

TIME_NOTE = ("games that meet at more than one planned table are matched in the order of their "
             "signed start times (a log of an older version, which signs none: its file's Date "
             "tag, then the files' modification times)")


class CheckError(ValueError):
    """Input the check cannot run with (a plan and a players file that disagree, no keys to
    tell seats apart by): one line, exit status 2."""


def game_time(game: Game) -> tuple[str, float, str]:
    """When a game was played, for matching and rating in time order, as `replay standings`
    orders games (`Game.when`): the signed start time; for a log of an older version, the
    Date tag (a day, unsigned), then the earliest modification time of the game's files;
    then the game id."""
    return game.when


@dataclass(frozen=True)
class Seat:
    """One seat of a game: the plan's name for its key (None: the key is unknown), its key
    and the name its peer typed."""

    name: str | None
    fingerprint: str
    typed: str

    @property
    def shown(self) -> str:
        return self.name if self.name is not None else f"{self.fingerprint} (as {self.typed})"


@dataclass
class Seen:
    """A game as check sees it: its id, variant, seats, files, and whether it counts."""

    game: str
    variant: str
    seats: tuple[Seat, ...]
    files: list[str]  # whole copies (or every copy of a game that did not count)
    cut: list[str] = field(default_factory=list)  # copies cut short of a counted game
    counted: Game | None = None  # the standings' game, when it is finished and undisputed
    status: str = PLAYED  # PLAYED (finished), UNFINISHED or DISPUTED
    when: tuple[str, float, str] = ("", 0.0, "")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(s.name for s in self.seats if s.name is not None)

    @property
    def totals(self) -> tuple[int, ...]:
        return self.counted.verdict.totals if self.counted is not None else ()


@dataclass
class PlannedTable:
    """One table of the plan and what the folder holds for it."""

    round: int
    table: int
    planned: tuple[str, ...]  # seat order
    status: str = MISSING
    game: Seen | None = None

    @property
    def where(self) -> str:
        return f"round {self.round} table {self.table}"

    @property
    def ok(self) -> bool:
        return self.status == PLAYED

    def line(self, full: bool = False) -> str:
        """The table's line: where, the status, the game and its files (a table played by
        wrong players says who only when `full`: its finding's line)."""
        if self.game is None:
            return f"{self.where}: missing (no game of {', '.join(self.planned)})"
        g = self.game
        seated = ", ".join(s.shown for s in g.seats)
        if self.status == WRONG and not full:
            return f"{self.where}: wrong players (below): game {g.game[:16]} ({_files(g)})"
        if self.status == WRONG:
            return f"{self.where}: wrong players: planned {', '.join(self.planned)}; sat {seated} " \
                   f"({_swaps(self.planned, g)}): game {g.game[:16]} ({_files(g)})"
        if self.status in (UNFINISHED, DISPUTED):
            return f"{self.where}: {self.status}: game {g.game[:16]} of {seated} ({_files(g)})"
        order = "" if tuple(s.name for s in g.seats) == self.planned else f"; seated in another order: {seated}"
        return f"{self.where}: played: game {g.game[:16]} ({_files(g)}){order}"


@dataclass
class Finding:
    """Something the check found besides the tables: one line, and its kind."""

    kind: str
    line: str
    game: str = ""

    @property
    def failed(self) -> bool:
        return self.kind in FAILING


@dataclass
class Check:
    """The plan's tables with what was found for each, and the other findings."""

    plan: Plan
    tables: list[PlannedTable]
    findings: list[Finding]
    unknown: list[str]  # lines: keys neither the plan nor the players file names

    @property
    def ok(self) -> bool:
        return all(t.ok for t in self.tables) and not any(f.failed for f in self.findings)

    @property
    def played(self) -> list[PlannedTable]:
        """The tables that count, in the time order of their games."""
        done = [t for t in self.tables if t.ok and t.game is not None]
        return sorted(done, key=lambda t: t.game.when if t.game else ("", 0.0, ""))

    def left_out(self) -> list[str]:
        """Every line of what does not count: the tables that are not played, then the
        findings that are not mere notes, in the words of the check's report."""
        lines = [t.line() for t in self.tables if t.status == MISSING]
        lines += [f.line for f in self.findings if f.kind in (WRONG, NOT_PLANNED, UNVERIFIED, UNFINISHED, DISPUTED)]
        return lines


def _files(g: Seen) -> str:
    files = ", ".join(g.files)
    if g.cut:
        files += f"; cut short: {', '.join(g.cut)}"
    return files


def _swaps(planned: Sequence[str], g: Seen) -> str:
    """`Eve for Ann`: who sat instead of whom (in seat order, and the plan's)."""
    absent = [n for n in planned if n not in g.names]
    extra = [s.shown for s in g.seats if s.name is None or s.name not in planned]
    return "; ".join(f"{e} for {a}" for e, a in zip(extra, absent)) or "seated twice"


class Names:
    """Key fingerprint -> plan name: the plan's own keys and the players file's, which must
    agree where both name a key."""

    def __init__(self, plan: Plan, players: dict[str, str] | None = None,
                 players_label: str = "the players file") -> None:
        self.by_key: dict[str, str] = {}
        for p in plan.players:
            for k in p.keys:
                self.by_key[k] = p.name
        for k, name in (players or {}).items():
            held = self.by_key.get(k)
            if held is not None and held != name:
                raise CheckError(f"the key {k} is {held}'s in the plan but {name}'s in {players_label}")
            self.by_key[k] = name
        if not self.by_key:
            raise CheckError("the plan names no keys (it was made from a list of names): give "
                             "--players FILE (name,fingerprint lines) so that seats can be told "
                             "apart by key")

    def seats(self, v: Verdict) -> tuple[Seat, ...]:
        return tuple(Seat(self.by_key.get(fp), fp, name) for name, fp in v.seats)


def _seen(games: list[Game], left: list[LeftOut], verdicts: list[Verdict], names: Names) -> list[Seen]:
    """Every game check can place: the counted ones, then the unfinished and disputed ones
    (their seats from their first copy: the genesis is what copies share)."""
    out = [Seen(g.verdict.game, g.verdict.variant, names.seats(g.verdict), list(g.copies), list(g.cut),
                counted=g, when=game_time(g)) for g in games]
    by_game: dict[str, list[Verdict]] = {}
    for v in verdicts:
        if v.ok and v.game:
            by_game.setdefault(v.game, []).append(v)
    for x in left:
        if x.kind in (UNFINISHED, DISPUTED) and x.game in by_game:
            copies = by_game[x.game]
            first = max(copies, key=lambda v: v.events)
            stalled = Game(first, [v.path for v in copies], [], _earliest_mtime(v.path for v in copies))
            out.append(Seen(x.game, first.variant, names.seats(first), [v.path for v in copies],
                            status=x.kind, when=game_time(stalled)))
    return out


def _earliest_mtime(paths: Iterable[str]) -> float:
    """The earliest modification time of a game's files (0 for a file gone since), as
    group_games gives a counted game."""
    times = []
    for p in paths:
        try:
            times.append(os.stat(p).st_mtime)
        except OSError:
            times.append(0.0)
    return min(times, default=0.0)


def _fits(t: PlannedTable, g: Seen, variant: str) -> bool:
    return g.variant == variant and len(g.seats) == len(t.planned)


def match(plan: Plan, seen: list[Seen]) -> tuple[list[PlannedTable], list[Seen]]:
    """The plan's tables with the games matched to them (see the module's docstring), and
    the finished games that match no table."""
    tables = [PlannedTable(r, t, seats) for r, row in enumerate(plan.rounds, 1)
              for t, seats in enumerate(row, 1)]
    finished = sorted((g for g in seen if g.status == PLAYED), key=lambda g: g.when)
    stalled = sorted((g for g in seen if g.status != PLAYED), key=lambda g: g.when)

    def exact(games: list[Seen]) -> list[Seen]:
        rest = []
        for g in games:
            free = [t for t in tables if t.game is None and _fits(t, g, plan.variant)
                    and frozenset(t.planned) == g.names and len(g.names) == len(g.seats)]
            if free:
                free[0].game, free[0].status = g, g.status
            else:
                rest.append(g)
        return rest

    rest = exact(finished)
    exact(stalled)
    outside = []
    for g in rest:
        scored = [(len(g.names & frozenset(t.planned)), t) for t in tables
                  if t.game is None and _fits(t, g, plan.variant)]
        best = max((s for s, _ in scored), default=0)
        if 2 * best > len(g.seats):
            t = next(t for s, t in scored if s == best)
            t.game, t.status = g, WRONG
        else:
            outside.append(g)
    return tables, outside


def check_games(plan: Plan, verdicts: Iterable[Verdict], names: Names) -> Check:
    """The check of `verdicts` (every file's, in input order) against `plan`."""
    vs = list(verdicts)
    games, left = group_games(vs)
    seen = _seen(games, left, vs, names)
    tables, outside = match(plan, seen)
    findings: list[Finding] = []
    for g in outside:
        seated = ", ".join(s.shown for s in g.seats)
        variant = _title(g.variant)
        findings.append(Finding(NOT_PLANNED, f"game {g.game[:16]} ({variant}, {len(g.seats)} seats) of "
                                             f"{seated}: not in the plan ({_files(g)})", g.game))
    for t in tables:
        if t.status == WRONG:
            findings.append(Finding(WRONG, t.line(full=True), t.game.game if t.game else ""))
    placed = {t.game.game: t for t in tables if t.game is not None}
    for x in left:
        if x.kind == UNVERIFIED:
            line = x.line
            t = placed.get(x.game)
            if t is not None and t.ok:
                line += f" (a copy of {t.where}'s game, counted from its other copies)"
            findings.append(Finding(UNVERIFIED, line, x.game))
        else:  # unfinished or disputed: its table (if it has one) first, as its table's line
            t = placed.get(x.game)
            where = f"{t.where}: " if t is not None and t.status == x.kind else ""
            findings.append(Finding(x.kind, where + x.line, x.game))
    for t in tables:
        if t.game is not None and t.game.cut:
            findings.append(Finding(CUT, f"{t.where}: cut short, a prefix of its whole copy: "
                                         f"{', '.join(t.game.cut)}", t.game.game))
    return Check(plan, tables, findings, _unknown(seen))


def _title(variant: str) -> str:
    """A verified game's variant as people name it (its ruleset passed, so it is a Variant)."""
    from allegra_lan.rules import Variant

    try:
        return Variant(variant).title
    except ValueError:
        return variant


def _unknown(seen: list[Seen]) -> list[str]:
    keys: dict[str, tuple[list[str], int]] = {}
    for g in seen:
        for s in g.seats:
            if s.name is None:
                typed, n = keys.get(s.fingerprint, ([], 0))
                if s.typed not in typed:
                    typed.append(s.typed)
                keys[s.fingerprint] = (typed, n + 1)
    return [f"{fp} (seated as {', '.join(typed)}; {n} game{'s' if n != 1 else ''})"
            for fp, (typed, n) in sorted(keys.items())]


# ------------------------------------------------------------------ output

SECTIONS = ((NOT_PLANNED, "games not in the plan"), (WRONG, "wrong players"),
            (UNVERIFIED, "unverified files"), (UNFINISHED, "unfinished games"),
            (DISPUTED, "copies that disagree"), (CUT, "copies cut short (not counted twice)"))


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def summary(c: Check) -> str:
    counts: dict[str, int] = {}
    for t in c.tables:
        counts[t.status] = counts.get(t.status, 0) + 1
    parts = [f"{counts[s]} {s}" for s in (PLAYED, MISSING, WRONG, UNFINISHED, DISPUTED) if counts.get(s)]
    failing = sum(1 for f in c.findings if f.failed)
    verdict = "the check passes" if c.ok else "the check fails"
    return (f"{_count(len(c.tables), 'planned table')}: {', '.join(parts)}; {failing} finding"
            f"{'s' if failing != 1 else ''} that fail: {verdict}")


def format_text(c: Check, players_label: str) -> str:
    p = c.plan
    lines = [f"{variant_title(p.variant)} plan, seed {p.seed}: {len(p.players)} players, "
             f"{_count(len(p.rounds), 'round')}, {_count(len(c.tables), 'table')}", ""]
    lines += [t.line() for t in c.tables]
    for kind, title in SECTIONS:
        found = [f.line for f in c.findings if f.kind == kind]
        if found:
            lines += ["", f"{title}:"] + ["  " + x for x in found]
    if c.unknown:
        lines += ["", f"keys not in {players_label}:"] + ["  " + x for x in c.unknown]
    lines += ["", summary(c), f"note: {TIME_NOTE}"]
    return "\n".join(lines) + "\n"


CSV_HEADER = ("round", "table", "status", "game", "planned", "seated", "files", "detail")


def write_csv(c: Check, out: TextIO) -> None:
    """A row per planned table (round, table, its status), then a row per finding (round and
    table empty, status the finding's kind). Names and files are joined by "; "."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_HEADER)
    for t in c.tables:
        g = t.game
        w.writerow((t.round, t.table, t.status, g.game if g else "", "; ".join(t.planned),
                    "; ".join(s.shown for s in g.seats) if g else "",
                    "; ".join((g.files + g.cut) if g else []), t.line(full=True)))
    for f in c.findings:
        if f.kind != WRONG:  # its table's row says it
            w.writerow(("", "", f.kind, f.game, "", "", "", f.line))
    for line in c.unknown:
        w.writerow(("", "", UNKNOWN_KEY, "", "", "", "", line))


# ------------------------------------------------------------------ the command


@dataclass
class Inputs:
    plan: Plan
    names: Names
    verdicts: list[Verdict]  # the files read as replays (that verify or fail a check)
    players_label: str
    unreadable: list[Verdict] = field(default_factory=list)  # files that are not replays at all


def read_inputs(args: argparse.Namespace) -> Inputs:
    """The plan, the players file and every file's verdict; CheckError (one line) for bad
    input. A file in the folder that cannot be read as a replay at all (not a replay, a
    line too long) is bad input by the one exit rule of every command (`cli.EXIT_RULE`):
    it is kept apart, for a stderr line and status 2, and the other files are checked."""
    from allegra_lan.tools import ToolError, files_and_jobs
    from allegra_lan.tools.players import PlayersError, players_option
    from allegra_lan.tools.verify import unreadable, verify_many
    from allegra_lan.tournament.planfile import PlanFileError, read_plan

    if getattr(args, "format", "text") not in FORMATS:
        raise CheckError(f"unknown format {args.format!r}: choose text or csv")
    try:
        plan = read_plan(args.plan)
    except PlanFileError as e:
        raise CheckError(str(e)) from None
    try:
        players, label = players_option(args, unnamed="the plan")
    except PlayersError as e:
        raise CheckError(str(e)) from None
    names = Names(plan, players.by_key if players is not None else None, label)
    try:
        paths, jobs = files_and_jobs(args)
    except ToolError as e:
        raise CheckError(str(e)) from None
    verdicts = list(verify_many(paths, jobs))
    return Inputs(plan, names, [v for v in verdicts if not unreadable(v)], label,
                  [v for v in verdicts if unreadable(v)])


def unreadable_lines(prog: str, inputs: Inputs) -> list[str]:
    """`PROG: error: PATH: what is wrong`, a line per file that is not a replay."""
    from allegra_lan.tools.verify import unreadable_line

    return [unreadable_line(prog, v) for v in inputs.unreadable]


def run_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """0 every planned table played and nothing wrong; 1 the check found something; 2 bad
    input (one line on stderr; a file that is not a replay: a line each, and the others are
    still checked)."""
    from allegra_lan.tools import prog_of, usage_error

    prog = prog_of(args, PROG)
    try:
        inputs = read_inputs(args)
    except CheckError as e:
        return usage_error(err, prog, str(e))
    c = check_games(inputs.plan, inputs.verdicts, inputs.names)
    for line in unreadable_lines(prog, inputs):
        err.write(line + "\n")
    if getattr(args, "format", "text") == "csv":
        write_csv(c, out)
        err.write(summary(c) + "\n")
    else:
        out.write(format_text(c, inputs.players_label))
    out.flush()
    err.flush()
    if inputs.unreadable:
        return 2
    return 0 if c.ok else 1


__all__ = [
    "Check", "CheckError", "Finding", "Names", "PlannedTable", "Seat", "Seen", "check_games", "match",
    "game_time", "format_text", "write_csv", "summary", "read_inputs", "run_check", "CSV_HEADER",
    "PLAYED", "MISSING", "WRONG", "UNFINISHED", "DISPUTED", "UNVERIFIED", "NOT_PLANNED", "UNKNOWN_KEY",
    "CUT",
]
