"""`allegra simulate`: many bot games from one seed, summed up per seat and overall.

Game g is a seed ceremony made from `seed_from_number(S, g)` (bot keys, nonces
and game id: `local.simulated_setup`), and every figure is printed with a
fixed number of decimals, so the same arguments print the same text byte for
byte on every machine (no timing, no Python `random`). With `--out DIR` each
game is also played through its signed log and written as a replay file.
"""

from __future__ import annotations

import math
import time
from multiprocessing import Pool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from allegra_lan.bots.driver import ACTION_VALUES, GameStats, play_game
from allegra_lan.bots.registry import bot_names
from allegra_lan.local import LocalGame, Player, SimulatedSetup, simulated_setup, wall_ms
from allegra_lan.tags import log_tags
from allegra_lan.files import WriteFailed
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules.ruleset import Ruleset, RulesetError, Variant, ruleset_for


class SimulateError(ValueError):
    """Arguments that cannot make a simulation; the message is one line for the user."""


@dataclass(frozen=True)
class SimulateArgs:
    variant: Variant = Variant.GRANDE
    players: int = 4
    games: int = 10
    seed: int = 1
    bots: tuple[str, ...] = ("greedy",)  # one name per seat, or one name for every seat
    out: str | None = None  # a directory for one signed replay per game
    deal: str = "seeded"  # or "fair": the network games' deal, one table per seat (local.py)
    jobs: int = 1  # processes playing games; the summary is the same for any number


@dataclass
class SeatSummary:
    seat: int
    bot: str
    wins: int = 0  # a shared win counts for every winner (R11)
    totals: list[int] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return sum(self.totals) / len(self.totals) if self.totals else 0.0

    @property
    def spread(self) -> float:
        """The population standard deviation of the game totals."""
        if not self.totals:
            return 0.0
        m = self.mean
        return math.sqrt(math.fsum((t - m) ** 2 for t in self.totals) / len(self.totals))


@dataclass
class Summary:
    ruleset: Ruleset
    args: SimulateArgs
    seats: list[SeatSummary]
    rounds: int = 0
    turns: int = 0
    cleared: int = 0
    longest_chain: int = 0
    activated: dict[int, int] = field(default_factory=lambda: {v: 0 for v in ACTION_VALUES})
    knock_windows: int = 0
    knocks: int = 0
    gives: int = 0

    def add(self, stats: GameStats) -> None:
        for seat, total in enumerate(stats.totals):
            self.seats[seat].totals.append(total)
        for w in stats.winners:
            self.seats[w].wins += 1
        self.rounds += len(stats.turns)
        self.turns += sum(stats.turns)
        self.cleared += sum(stats.cleared)
        self.longest_chain = max(self.longest_chain, stats.longest_chain)
        for value, count in stats.activated.items():
            self.activated[value] = self.activated.get(value, 0) + count
        self.knock_windows += stats.knock_windows
        self.knocks += stats.knocks
        self.gives += stats.gives


def check(args: SimulateArgs) -> tuple[Ruleset, list[str]]:
    """The ruleset and one bot name per seat, or a SimulateError saying what is wrong."""
    try:
        ruleset = ruleset_for(args.variant)
        ruleset.check_players(args.players)
    except RulesetError as e:
        raise SimulateError(str(e)) from None
    if args.games < 1:
        raise SimulateError(f"--games must be 1 or more, not {args.games}")
    if args.jobs < 1:
        raise SimulateError(f"--jobs must be 1 or more, not {args.jobs}")
    names = list(args.bots)
    if not names or any(not n for n in names):
        raise SimulateError("--bots needs a bot name for every seat (or one name for all)")
    for n in names:
        if n not in bot_names():
            raise SimulateError(f"unknown bot {n!r}: choose from {', '.join(bot_names())}")
    if len(names) == 1:
        names = names * args.players
    if len(names) != args.players:
        raise SimulateError(
            f"--bots names {len(names)} bots for {args.players} players: "
            "give one name per seat, or one name for all"
        )
    return ruleset, names


def simulate(args: SimulateArgs) -> Summary:
    """Play `args.games` games and sum them up."""
    ruleset, names = check(args)
    summary = Summary(ruleset, args, [SeatSummary(i, n) for i, n in enumerate(names)])
    tasks = [(ruleset, args, g, tuple(names)) for g in range(args.games)]
    if args.jobs == 1 or args.games == 1:
        for task in tasks:
            summary.add(_game(task))
        return summary
    # Games are independent (game g is dealt from the seed and g alone) and their results
    # are summed in game order, so any number of processes gives the same summary.
    with Pool(min(args.jobs, args.games)) as pool:
        for stats in pool.imap(_game, tasks):
            summary.add(stats)
    return summary


def _game(task: tuple[Ruleset, SimulateArgs, int, tuple[str, ...]]) -> GameStats:
    """Game g of a simulation (a top-level function, so that worker processes can run it)."""
    ruleset, args, g, names = task
    setup = simulated_setup(args.seed, g, args.players)
    if args.out is None and args.deal == "seeded":
        _, stats = play_game(ruleset, args.players, setup.seed, names)
        return stats
    return _recorded_game(ruleset, args, g, names, setup)


def wilson_interval(wins: int, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate: unlike the normal approximation it
    stays inside [0, 1] and is honest for few games or a rate near 0 or 1."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    denom = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denom
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def replay_path(args: SimulateArgs, g: int) -> Path:
    assert args.out is not None
    return Path(args.out) / f"{args.variant}-{args.players}p-seed{args.seed}-game{g + 1:03d}.allegra"


def _recorded_game(ruleset: Ruleset, args: SimulateArgs, g: int, names: Sequence[str],
                   setup: SimulatedSetup) -> GameStats:
    """Play game g through its signed log, written (and flushed) as it goes."""
    players = [Player(f"{name}-{seat}", setup.identities[seat]) for seat, name in enumerate(names)]
    game = LocalGame(ruleset, players, game_id=setup.game_id, nonces=setup.nonces,
                     table_name=f"simulate {args.seed}", clock=wall_ms, deal=args.deal)
    if args.out is None:  # the fair deal without files: the game through its tables only
        _, stats = play_game(ruleset, args.players, setup.seed, names, record=game)
        return stats
    path = replay_path(args, g)
    # The header carries every tag the genesis fixes from its first byte on, so a file
    # cut short by a crash still verifies as an unfinished game.
    tags = {"Event": f"allegra simulate --seed {args.seed}, game {g + 1}", "Site": "allegra-lan",
            "Date": time.strftime("%Y.%m.%d", time.gmtime()), "Round": str(g + 1),
            **log_tags(game.table)}
    try:
        writer = ReplayWriter(path, tags, fsync=False)  # makes the directory too
        for ev in game.table.events:
            writer.append(ev.signed)
        game.writer = writer
        _, stats = play_game(ruleset, args.players, setup.seed, names, record=game)
        writer.finish(log_tags(game.table))
    except WriteFailed as e:  # a full disk: one line; the file keeps its valid prefix
        raise SimulateError(str(e)) from None
    return stats


def _per(count: int, of: int) -> str:
    return f"{count / of:.2f}" if of else "0.00"


def format_summary(summary: Summary) -> str:
    """The report, in fixed decimals: the same summary always gives the same text."""
    a = summary.args
    games = len(summary.seats[0].totals)
    lines = [
        f"{summary.ruleset.title}: {a.players} players, {games} game{'s' if games != 1 else ''}, seed {a.seed}",
        "",
        f"{'seat':>4}  {'bot':<10} {'wins':>5}  {'win rate (95% CI)':>17}  {'mean total':>10}  {'spread':>8}",
    ]
    for s in summary.seats:
        lo, hi = wilson_interval(s.wins, games)
        rate = f"{_per(s.wins, games)} ({lo:.2f}-{hi:.2f})"
        lines.append(f"{s.seat:>4}  {s.bot:<10} {s.wins:>5}  {rate:>17}  {s.mean:>10.2f}  {s.spread:>8.2f}")
    lines += [
        "",
        f"rounds played:           {summary.rounds}",
        f"turns per round:         {_per(summary.turns, summary.rounds)}",
        f"cards cleared per round: {_per(summary.cleared, summary.rounds)}",
        f"longest chain reaction:  {summary.longest_chain} clearing step{'s' if summary.longest_chain != 1 else ''} after one move",
    ]
    if summary.ruleset.variant is Variant.GRANDE:
        parts = ", ".join(f"{v}: {summary.activated.get(v, 0)}" for v in ACTION_VALUES)
        total = sum(summary.activated.get(v, 0) for v in ACTION_VALUES)
        lines.append(f"action cards activated:  {parts} ({_per(total, summary.rounds)} per round)")
    else:
        lines.append(
            f"knocks:                  {summary.knocks} in {summary.knock_windows} deck draws "
            f"({_per(summary.knocks, summary.rounds)} per round)"
        )
        lines.append(
            f"cards given:             {summary.gives} ({_per(summary.gives, summary.rounds)} per round)"
        )
    return "\n".join(lines) + "\n"


def parse_bots(text: str) -> tuple[str, ...]:
    """`greedy,random,...` -> one name per seat (spaces around names are ignored)."""
    return tuple(n.strip() for n in text.split(","))


__all__ = [
    "SimulateArgs", "SimulateError", "SeatSummary", "Summary", "check", "simulate",
    "format_summary", "parse_bots", "wilson_interval",
]
