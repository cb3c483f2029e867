"""Engine speed: apply() calls per second and whole bot games per second, against targets.

    /tmp/venv/bin/python benchmarks/engine.py [--games N] [--profile]

Plays full 4-player games (3 rounds) with `random` bots that decide from
their views, exactly as `allegra simulate` does, on one thread. Two figures
per variant:

- apply() calls per second, timing apply() alone (the bots, views and
  legal-move lists around it are not counted), and beside it the same
  moves of the same games through `apply_in_place` (the search's playout
  path: no copy of the state, issue 14), with the ratio of the two;
- whole games per second, everything included (deal, views, legal moves,
  the knock window, bot decisions, apply, statistics), through the same
  driver `allegra simulate` uses.

`--profile` runs the games once more under cProfile and prints where the
time goes, functions of the engine (allegra_lan/rules) first.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from allegra_lan.bots import make_bots, offered_moves, play_game  # noqa: E402
from allegra_lan.rules import Move, apply, ruleset_for, to_act, view  # noqa: E402
from allegra_lan.rules.rng import seed_from_number  # noqa: E402
from allegra_lan.rules.engine import apply_in_place, new_game  # noqa: E402

PLAYERS = 4
SEED = 2024
TARGET_APPLY = 30_000.0  # apply() calls per second
TARGET_GAMES = {"grande": 25.0}  # whole games per second (ALLEGRA has no target)


def apply_rate(variant: str, games: int) -> tuple[float, float, int]:
    """apply() calls per second over `games` games, timing apply() alone; the same moves of
    the same games through apply_in_place, timed alike; and the calls made."""
    ruleset = ruleset_for(variant)
    spent = 0.0
    calls = 0
    clock = time.perf_counter
    played: list[tuple[bytes, list[Move]]] = []
    for g in range(games):
        seed = seed_from_number(SEED, g)
        bots = make_bots(["random"] * PLAYERS, seed)
        state = new_game(ruleset, PLAYERS, seed)
        moves: list[Move] = []
        while True:
            d = to_act(state)
            if d is None:
                break
            move = bots[d.seat].choose(view(state, d.seat), offered_moves(state, bots))
            moves.append(move)
            t0 = clock()
            state = apply(state, move)
            spent += clock() - t0
            calls += 1
        played.append((seed, moves))
    in_place = 0.0
    for seed, moves in played:
        state = new_game(ruleset, PLAYERS, seed)
        for move in moves:
            t0 = clock()
            apply_in_place(state, move)
            in_place += clock() - t0
    return calls / spent, calls / in_place, calls


def game_rate(variant: str, games: int) -> float:
    """Whole games per second through the simulate driver, everything included."""
    ruleset = ruleset_for(variant)
    t0 = time.perf_counter()
    for g in range(games):
        play_game(ruleset, PLAYERS, seed_from_number(SEED, g), ["random"] * PLAYERS)
    return games / (time.perf_counter() - t0)


def profile(variant: str, games: int) -> str:
    """The top of a cProfile of whole games, engine functions and all functions."""
    ruleset = ruleset_for(variant)
    prof = cProfile.Profile()
    prof.enable()
    for g in range(games):
        play_game(ruleset, PLAYERS, seed_from_number(SEED, g), ["random"] * PLAYERS)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).sort_stats("tottime")
    out.write(f"--- {variant}: engine functions (allegra_lan/rules), by own time\n")
    stats.print_stats(r"allegra_lan[/\\]rules", 15)
    out.write(f"--- {variant}: all functions, by own time\n")
    stats.print_stats(12)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per variant and figure (default 20)")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of the games")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be 1 or more")
    print(f"engine benchmark: {PLAYERS} players, 3 rounds, random bots through views, "
          f"{args.games} games per figure, one thread, Python {sys.version.split()[0]}")
    for variant in ("grande", "allegra"):
        rate, in_place, calls = apply_rate(variant, args.games)
        games = game_rate(variant, args.games)
        title = ruleset_for(variant).title
        print(f"{title}:")
        print(f"  apply() calls/s: {rate:10.0f}   target {TARGET_APPLY:8.0f}   "
              f"ratio {rate / TARGET_APPLY:5.2f}   ({calls / args.games:.0f} calls a game)")
        print(f"  apply_in_place:  {in_place:10.0f}   the same moves, no copy: "
              f"{in_place / rate:5.2f}x apply()")
        target = TARGET_GAMES.get(variant)
        if target is None:
            print(f"  whole games/s:   {games:10.2f}   (no target)")
        else:
            print(f"  whole games/s:   {games:10.2f}   target {target:8.2f}   ratio {games / target:5.2f}")
    if args.profile:
        for variant in ("grande", "allegra"):
            print(profile(variant, max(1, args.games // 2)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
