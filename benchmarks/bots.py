"""Bot strength: one bot against a field of another, in issue 14's three set-ups.

    python benchmarks/bots.py [--games N] [--level hard] [--against greedy] [--jobs J]
                              [--setups grande4,grande2,allegra4] [--seed S]

Game g of a set-up seats the tested bot (`--level`: a bot or level name) at
seat g mod players and `--against` bots at every other seat, dealt from
`seed_from_number(S, g)`, so the same arguments play the same games. For
each set-up it prints the tested bot's wins (a shared win counts, R11) with
a 95% Wilson confidence interval, the issue's target and whether the whole
interval, or only the point, is above it; then the tested bot's decision
time (every `choose` and `knocks` call: mean and p99) and the peak memory
(largest resident set of a process). `--jobs` plays games in that many
processes; the games and their figures are the same for any number of
jobs (the times are not).

Issue 14's Done-when run is `--games 400 --level hard` (about 400 x 3 games).
`--level greedy --against random` measures greedy against random.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass
from multiprocessing import Pool
from typing import Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from allegra_lan.bots import Bot, bot_names, make_bot, play_game, seat_seed  # noqa: E402
from allegra_lan.rules import Move, SeatView, ruleset_for  # noqa: E402
from allegra_lan.rules.rng import seed_from_number  # noqa: E402
from allegra_lan.simulate import wilson_interval  # noqa: E402

SETUPS = {  # name: (variant, players, target win rate of the tested bot)
    "grande4": ("grande", 4, 0.50),
    "grande2": ("grande", 2, 0.70),
    "allegra4": ("allegra", 4, 0.45),
}
TARGET_MEAN_S = 1.0
TARGET_P99_S = 2.0
TARGET_MEMORY_MB = 200.0


class Timed(Bot):
    """A bot whose every decision is timed (the clock never reaches its choices)."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = inner.name
        self.times: list[float] = []

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        t = time.perf_counter()
        move = self.inner.choose(view, legal)
        self.times.append(time.perf_counter() - t)
        return move

    def knocks(self, view: SeatView) -> bool:
        t = time.perf_counter()
        answer = self.inner.knocks(view)
        self.times.append(time.perf_counter() - t)
        return answer


@dataclass(frozen=True)
class Task:
    setup: str
    game: int
    seed: int
    level: str
    against: str


def play_one(task: Task) -> tuple[str, bool, list[float], float]:
    """One game: whether the tested seat won, its decision times, this process's peak MB."""
    variant, players, _ = SETUPS[task.setup]
    seed = seed_from_number(task.seed, task.game)
    seat = task.game % players
    bots: list[Bot | str] = [task.against] * players
    tested = Timed(make_bot(task.level, seat_seed(seed, seat)))
    bots[seat] = tested
    _, stats = play_game(ruleset_for(variant), players, seed, bots)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux
    return task.setup, seat in stats.winners, tested.times, peak


def percentile(sorted_values: Sequence[float], share: float) -> float:
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, int(share * len(sorted_values)))]


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr and exit status 2, never the usage block."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        sys.exit(2)


def main(argv: Sequence[str] | None = None) -> int:
    p = OneLineParser(prog="benchmarks/bots.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=20, metavar="N", help="games per set-up (default: 20)")
    p.add_argument("--level", default="hard", help="the bot or level tested (default: hard)")
    p.add_argument("--against", default="greedy", help="the bot at every other seat (default: greedy)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="processes (default: 1)")
    p.add_argument("--setups", default=",".join(SETUPS), help=f"comma separated, of {', '.join(SETUPS)}")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="the seed number (default: 1)")
    a = p.parse_args(argv)
    setups = [s.strip() for s in a.setups.split(",") if s.strip()]
    for name in (a.level, a.against):
        if name not in bot_names():
            p.error(f"unknown bot {name!r}: choose from {', '.join(bot_names())}")
    for s in setups:
        if s not in SETUPS:
            p.error(f"unknown set-up {s!r}: choose from {', '.join(SETUPS)}")
    if a.games < 1 or a.jobs < 1:
        p.error("--games and --jobs must be 1 or more")
    tasks = [Task(s, g, a.seed, a.level, a.against) for s in setups for g in range(a.games)]
    wins = {s: 0 for s in setups}
    times: list[float] = []
    peak = 0.0
    start = time.monotonic()
    if a.jobs == 1:
        results = map(play_one, tasks)
    else:
        pool = Pool(a.jobs)
        results = pool.imap(play_one, tasks)
    for setup, won, t, mb in results:
        wins[setup] += won
        times.extend(t)
        peak = max(peak, mb)
    if a.jobs != 1:
        pool.close()
        pool.join()
    print(f"{a.level} against {a.against}, {a.games} games per set-up, seed {a.seed}, "
          f"{a.jobs} job{'s' if a.jobs != 1 else ''}, {time.monotonic() - start:.0f} s")
    for s in setups:
        variant, players, target = SETUPS[s]
        lo, hi = wilson_interval(wins[s], a.games)
        verdict = "met" if lo >= target else ("point above, interval not" if wins[s] / a.games >= target
                                              else "NOT met")
        print(f"  {variant} {players}p: {wins[s]}/{a.games} wins = {wins[s] / a.games:.1%}  "
              f"95% CI {lo:.1%}-{hi:.1%}  target {target:.0%}: {verdict}")
    times.sort()
    mean = sum(times) / len(times) if times else 0.0
    p99 = percentile(times, 0.99)
    print(f"  decisions: {len(times)}, mean {mean:.3f} s (target {TARGET_MEAN_S:.0f} s), "
          f"p99 {p99:.3f} s (target {TARGET_P99_S:.0f} s), max {times[-1] if times else 0.0:.3f} s")
    print(f"  peak memory: {peak:.0f} MB per process (target {TARGET_MEMORY_MB:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
