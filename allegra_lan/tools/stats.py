"""`allegra stats`: your own games, from the replays in the data directory.

"Your" games are those where your key (the profile's, see `allegra id`) holds a
seat in the genesis: `allegra play` and the network client keep your key there,
while headless `--bot` processes play with keys of their own and are not you.
Every file is folded through the same Table as `replay verify` (signatures, chain,
every move), so a figure comes only from a game that checks out; a file that does
not is counted and named in one line, never a traceback.

Per variant and player count: games finished, wins (a shared win counts), mean
game total, best (lowest) round score, your cards cleared, and the longest chain
reaction (clearing steps after one of your moves).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, TextIO

from allegra_lan.fold import fold_log
from allegra_lan.log.envelope import Event
from allegra_lan.log.identity import KEY_FILE, IdentityError, data_dir, fingerprint, key_dir, load_or_create
from allegra_lan.log.replay import SUFFIX, ReplayError, read_replay
from allegra_lan.rules import Variant, ruleset_for, to_act
from allegra_lan.rules.effects import Cleared
from allegra_lan.table import Table
from allegra_lan.tools import prog_of, usage_error

PROG = "allegra stats"
NAMED_AT_MOST = 5  # unreadable files named in the one line about them; the rest counted


@dataclass(frozen=True)
class GameStats:
    """One finished game of yours, as its log tells it."""

    variant: Variant
    players: int
    won: bool
    total: int
    best_round: int
    clears: int  # cards cleared from your display
    longest_chain: int  # most clearing steps after one of your moves


@dataclass
class Group:
    """Your games of one variant and player count, summed."""

    variant: Variant
    players: int
    games: int = 0
    wins: int = 0
    totals: int = 0
    best_round: int | None = None
    clears: int = 0
    longest_chain: int = 0

    def add(self, g: GameStats) -> None:
        self.games += 1
        self.wins += g.won
        self.totals += g.total
        self.best_round = g.best_round if self.best_round is None else min(self.best_round, g.best_round)
        self.clears += g.clears
        self.longest_chain = max(self.longest_chain, g.longest_chain)

    @property
    def mean(self) -> float:
        return self.totals / self.games if self.games else 0.0

    @property
    def title(self) -> str:
        return ruleset_for(self.variant).title


@dataclass
class Stats:
    """Everything `allegra stats` found in one directory."""

    groups: dict[tuple[Variant, int], Group] = field(default_factory=dict)
    unfinished: int = 0
    others: int = 0  # games in which your key holds no seat (headless bots, other profiles)
    unreadable: list[tuple[Path, str]] = field(default_factory=list)

    def group(self, variant: Variant, players: int) -> Group | None:
        return self.groups.get((variant, players))


class NotYours(Exception):
    """The game's genesis seats no key of yours."""


class Unfinished(Exception):
    """The game has not ended (left, or cut short)."""


def game_stats(path: Path, me: bytes) -> GameStats:
    """The figures of one finished game of `me`; ReplayError (or a fold's fault as
    ReplayError), NotYours or Unfinished otherwise."""
    replay = read_replay(path)
    if replay.fault is not None:
        raise ReplayError(f"seq {replay.fault[0]}: {replay.fault[1]}")
    seat: list[int] = []
    clears = [0]
    chain = [0]

    def each(ev: Event, table: Table) -> None:
        if not seat:
            if table.genesis is None:
                return
            mine = [i for i, s in enumerate(table.genesis.seats) if s.key == me]
            if not mine:
                raise NotYours()
            seat.append(mine[0])
        state = table.state
        if state is None:
            return
        steps = {e.step for e in state.effects if isinstance(e, Cleared)}
        clears[0] += sum(1 for e in state.effects if isinstance(e, Cleared)
                         for slot in e.slots if slot.seat == seat[0])
        if steps and table.seat_of(ev.author) == seat[0]:
            chain[0] = max(chain[0], max(steps))

    folded = fold_log(replay.events, each=each)  # NotYours passes through: each runs outside its try
    if folded.fault is not None:
        raise ReplayError(f"seq {folded.fault_seq}: {folded.fault}")
    table = folded.table
    if table.genesis is None or not seat:
        raise NotYours() if table.genesis is not None else Unfinished()
    state = table.state
    if state is None or to_act(state) is not None or not state.results:
        raise Unfinished()
    you = seat[0]
    low = min(state.totals)
    return GameStats(
        variant=state.ruleset.variant, players=len(state.totals), won=state.totals[you] == low,
        total=state.totals[you], best_round=min(r.scores[you] for r in state.results),
        clears=clears[0], longest_chain=chain[0])


def collect(paths: Sequence[Path], me: bytes) -> Stats:
    """Fold every file; sort each into its group, or count it as unfinished, another's,
    or unreadable (with the reason)."""
    out = Stats()
    for path in paths:
        try:
            g = game_stats(path, me)
        except NotYours:
            out.others += 1
            continue
        except Unfinished:
            out.unfinished += 1
            continue
        except (ReplayError, OSError, ValueError) as e:
            why = (str(e) or type(e).__name__).removeprefix(f"{path}: ")  # the line names the file
            out.unreadable.append((path, why))
            continue
        group = out.groups.setdefault((g.variant, g.players), Group(g.variant, g.players))
        group.add(g)
    return out


def games_in(directory: Path) -> list[Path]:
    """The replay files of a games directory, oldest name first (none if it is not there)."""
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.glob(f"*{SUFFIX}"))


def unreadable_line(stats: Stats) -> str | None:
    """One line naming the files that could not be read (the first few, with why)."""
    if not stats.unreadable:
        return None
    named = "; ".join(f"{p.name} ({why})" for p, why in stats.unreadable[:NAMED_AT_MOST])
    more = len(stats.unreadable) - NAMED_AT_MOST
    tail = f"; and {more} more" if more > 0 else ""
    n = len(stats.unreadable)
    return f"{n} file{'s' if n != 1 else ''} could not be read, left out: {named}{tail}"


def format_table(stats: Stats) -> list[str]:
    head = f"{'game':<15} {'players':>7} {'games':>5} {'wins':>5} {'mean score':>10} " \
           f"{'best round':>10} {'clears':>6} {'longest chain':>13}"
    rows = [head]
    for key in sorted(stats.groups):
        g = stats.groups[key]
        rows.append(f"{g.title:<15} {g.players:>7} {g.games:>5} {g.wins:>5} {g.mean:>10.1f} "
                    f"{g.best_round if g.best_round is not None else '-':>10} {g.clears:>6} "
                    f"{g.longest_chain:>13}")
    return rows


def brief(stats: Stats, variant: Variant, players: int) -> str:
    """One line after a game: your record at this variant and player count."""
    g = stats.group(variant, players)
    title = ruleset_for(variant).title
    if g is None:
        return f"your {title} games with {players} players: none finished yet"
    return (f"your {title} games with {players} players: {g.games} played, {g.wins} won, "
            f"mean score {g.mean:.1f}, best round {g.best_round}, longest chain {g.longest_chain} "
            "(allegra stats for all)")


def my_key() -> bytes | None:
    """This profile's public key, or None if it has none yet (stats never makes one)."""
    where = key_dir()
    if not (where / KEY_FILE).exists():
        return None
    return load_or_create(where)[0].public


def after_game_lines(variant: Variant, players: int, games_dir: Path | None = None) -> list[str]:
    """What `allegra play` prints when it ends: one line of your record, and one about
    unreadable files if any. Never raises: a figure is not worth a traceback."""
    try:
        me = my_key()
        if me is None:
            return []
        stats = collect(games_in(games_dir or data_dir() / "games"), me)
    except (IdentityError, OSError) as e:
        return [f"no stats: {e}"]
    out = [brief(stats, variant, players)]
    bad = unreadable_line(stats)
    return out + ([bad] if bad else [])


def run_stats(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """`allegra stats [--dir DIR]`: 0 (also with no games yet); 2 if the key cannot be read."""
    prog = prog_of(args, PROG)
    directory = Path(args.dir) if getattr(args, "dir", None) else data_dir() / "games"
    if getattr(args, "dir", None) and not directory.is_dir():
        return usage_error(err, prog, f"not a directory: {args.dir}")
    try:
        me = my_key()
    except IdentityError as e:
        return usage_error(err, prog, str(e))
    if me is None:
        out.write(f"no games of yours yet (no key in {key_dir()}: allegra play makes one)\n")
        return 0
    stats = collect(games_in(directory), me)
    out.write(f"your games ({fingerprint(me)}) in {directory}:\n")
    if stats.groups:
        out.write("\n".join(format_table(stats)) + "\n")
    else:
        out.write("no finished games of yours there yet\n")
    extra = []
    if stats.unfinished:
        extra.append(f"{stats.unfinished} unfinished")
    if stats.others:
        extra.append(f"{stats.others} of other keys (headless bots, other profiles)")
    if extra:
        out.write(f"left out: {', '.join(extra)}\n")
    bad = unreadable_line(stats)
    if bad:
        err.write(bad + "\n")
    out.flush()
    return 0


__all__ = [
    "GameStats", "Group", "Stats", "game_stats", "collect", "games_in", "unreadable_line",
    "format_table", "brief", "after_game_lines", "run_stats",
]
