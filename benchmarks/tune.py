"""Weights against greedy: the strong bot's tuning, each candidate paired with a baseline.

    python benchmarks/tune.py SETUP [--games N] [--seed S] [--jobs J]
                              [--baseline JSON] NAME=JSON [NAME=JSON ...]

Each NAME=JSON is greedy's rating with the `Weights` fields the JSON object
sets (`{"end_margin": 25, "one_card": 9, "recall": true}`: numbers, and
true or false for a switch), or a bot or level name in JSON
quotes (`'"hard"'`), or the strong bot's judgement with a search of the
`Budget` fields under "search", one budget at every table
(`{"search": {"samples": 6, "closed_at": 6}}`: six deals a decision,
searching from 6 closed cards on; level hard deals twelve in Grande with
3-5 players, `HARD_BUDGETS`). Like benchmarks/bots.py, game g of the SETUP
(grande4, grande2, allegra4) seats the tested bot at seat g mod players
among greedy bots, dealt from `seed_from_number(S, g)`, so every candidate
meets the same games. For each it prints the tested seat's wins and its
margin (the others' mean game total less its own; positive is better) with
its standard error, and, beside the baseline's (`--baseline`, greedy's
default weights unless given), the mean paired differences, game by game,
with their standard errors: of the margin (the figure docs/bots.md "Tuning"
quotes), of the wins (in points of percentage) and of the lead (the best
other total less its own, which decides a four-player game). Pairing cancels
most of the deal's luck: two candidates that play alike win and lose the
same games, so even the paired wins of 800 games tell a point apart.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from dataclasses import dataclass, fields
from multiprocessing import Pool
from typing import Any, NamedTuple, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from allegra_lan.bots import Bot, GreedyBot, Weights, bot_names, make_bot, play_game, seat_seed  # noqa: E402
from allegra_lan.bots.strong import STRONG_WEIGHTS, Budget, StrongBot  # noqa: E402
from allegra_lan.rules import ruleset_for  # noqa: E402
from allegra_lan.rules.rng import seed_from_number  # noqa: E402
from bots import SETUPS, OneLineParser  # noqa: E402  (benchmarks/bots.py: the same set-ups and errors)

WEIGHT_FIELDS = {f.name for f in fields(Weights)}
BUDGET_FIELDS = {f.name for f in fields(Budget)}
SWITCHES = {f.name for f in fields(Weights) if isinstance(f.default, bool)}  # true or false, not a number


@dataclass(frozen=True)
class Task:
    setup: str
    game: int
    seed: int
    spec: Any  # a dict of Weights fields, or a bot name


def tested_bot(spec: Any, seed: bytes) -> Bot:
    if isinstance(spec, str):
        return make_bot(spec, seed)
    if "search" in spec:
        return StrongBot(seed, Budget(**spec["search"]), STRONG_WEIGHTS)
    return GreedyBot(seed, Weights(**spec))


class Outcome(NamedTuple):
    """One game, for the tested seat."""

    won: bool  # a shared win counts (R11)
    margin: float  # the others' mean total less its own
    lead: float  # the best other total less its own


def play_one(task: Task) -> Outcome:
    """One game, as the tested seat ends it."""
    variant, players, _ = SETUPS[task.setup]
    seed = seed_from_number(task.seed, task.game)
    seat = task.game % players
    bots: list[Bot | str] = ["greedy"] * players
    bots[seat] = tested_bot(task.spec, seat_seed(seed, seat))
    _, stats = play_game(ruleset_for(variant), players, seed, bots)
    others = [t for s, t in enumerate(stats.totals) if s != seat]
    mine = stats.totals[seat]
    return Outcome(seat in stats.winners, sum(others) / len(others) - mine, min(others) - mine)


def mean_se(xs: Sequence[float]) -> tuple[float, float]:
    m = math.fsum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1) / len(xs))


def parse_spec(p: OneLineParser, text: str, what: str) -> Any:
    try:
        spec = json.loads(text)
    except ValueError:
        p.error(f"{what}: {text!r} is not JSON")
    if isinstance(spec, str):
        if spec not in bot_names():
            p.error(f"{what}: unknown bot {spec!r}: choose from {', '.join(bot_names())}")
        return spec
    if not isinstance(spec, dict):
        p.error(f"{what}: give a JSON object of Weights fields or a bot name in quotes")
    checked, fields_of, kind = spec, WEIGHT_FIELDS, "Weights"
    if "search" in spec:
        checked, fields_of, kind = spec["search"], BUDGET_FIELDS, "Budget"
        if set(spec) != {"search"} or not isinstance(checked, dict):
            p.error(f"{what}: give \"search\" alone, as an object of Budget fields")
    unknown = sorted(set(checked) - fields_of)
    if unknown:
        p.error(f"{what}: {', '.join(unknown)} not a field of {kind}")
    for k, v in checked.items():
        if kind == "Weights" and k in SWITCHES:
            if not isinstance(v, bool):
                p.error(f"{what}: {k} must be true or false")
        elif not isinstance(v, (int, float)) or isinstance(v, bool):
            p.error(f"{what}: {k} must be a number")
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    p = OneLineParser(prog="benchmarks/tune.py", description=__doc__.split("\n\n")[0])
    p.add_argument("setup", help=f"one of {', '.join(SETUPS)}")
    p.add_argument("candidates", nargs="+", metavar="NAME=JSON", help="the weights or bot tested")
    p.add_argument("--games", type=int, default=200, metavar="N", help="games per candidate (default: 200)")
    p.add_argument("--seed", type=int, default=7, metavar="S", help="the seed number (default: 7)")
    p.add_argument("--jobs", type=int, default=2, metavar="J", help="processes (default: 2)")
    p.add_argument("--baseline", default="{}", metavar="JSON", help="the baseline (default: greedy, {})")
    a = p.parse_args(argv)
    if a.setup not in SETUPS:
        p.error(f"unknown set-up {a.setup!r}: choose from {', '.join(SETUPS)}")
    if a.games < 2 or a.jobs < 1:
        p.error("--games must be 2 or more and --jobs 1 or more")
    specs: list[tuple[str, Any]] = [("baseline", parse_spec(p, a.baseline, "--baseline"))]
    for item in a.candidates:
        name, eq, text = item.partition("=")
        if not eq or not name:
            p.error(f"{item!r}: write NAME=JSON")
        specs.append((name, parse_spec(p, text, name)))
    print(f"{a.setup}, {a.games} games per candidate, seed {a.seed}, {a.jobs} job{'s' if a.jobs != 1 else ''}")
    base: list[Outcome] = []
    with Pool(a.jobs) as pool:
        for name, spec in specs:
            start = time.monotonic()
            results = pool.map(play_one, [Task(a.setup, g, a.seed, spec) for g in range(a.games)], chunksize=4)
            wins = sum(r.won for r in results)
            m, se = mean_se([r.margin for r in results])
            line = f"  {name:14s} wins {wins / a.games:6.1%}  margin {m:+6.2f} ± {se:.2f}"
            if not base:
                base = results
            else:
                d, dse = mean_se([x.margin - y.margin for x, y in zip(results, base)])
                w, wse = mean_se([100.0 * (x.won - y.won) for x, y in zip(results, base)])
                lead, lse = mean_se([x.lead - y.lead for x, y in zip(results, base)])
                line += f"  paired: margin {d:+6.2f} ± {dse:.2f}, wins {w:+5.1f} ± {wse:.1f} points, lead {lead:+6.2f} ± {lse:.2f}"
            print(f"{line}  ({time.monotonic() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
