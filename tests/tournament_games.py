"""Real signed games for the tournament check and standings tests.

Each game is played by LocalGame with seeded random legal moves and written
by ReplayWriter, so every file is a replay verify accepts (or, cut short, an
unfinished one); the players are keys derived from a name, so a test knows
every seat's fingerprint and writes the players file and plan from them.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import result_tags
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules import Move, legal_moves, ruleset_from_dict, to_act
from allegra_lan.rules.rng import Stream

NAMES = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal")


def person(name: str) -> Player:
    """A player whose key is derived from their name (and the seat name they type)."""
    return Player(name, Identity.from_seed(derived("tournament-test-key", name)))


def fp(name: str) -> str:
    return person(name).identity.fingerprint


@dataclass
class Written:
    path: Path
    game: str
    names: tuple[str, ...]
    totals: tuple[int, ...]
    finished: bool


def write_game(path: Path, names: Sequence[str], *, variant: str = "grande", seed: int = 0,
               limit: int | None = None, mtime: float | None = None,
               people: Sequence[Player] | None = None, moves_seed: int | None = None) -> Written:
    """A one-round game of `names` (seat order) to `path`; cut after `limit` moves if given;
    its modification time set to `mtime` (the check's time order) if given. The same names
    and seed make the same game id; another `moves_seed` plays it differently (a dispute)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    players = list(people) if people is not None else [person(n) for n in names]
    rs = ruleset_from_dict({"variant": variant, "rounds": 1})
    gid = derived("tournament-game", variant, tuple(names), seed)[:16]
    tags = {"Event": "Club", "Site": "Hall", "Date": "2026.12.01", "Variant": variant, "Table": "t",
            "Players": str(len(players)), "Game": gid.hex(), **seat_tags(players)}
    writer = ReplayWriter(path, tags, fsync=False)
    g = LocalGame(rs, players, game_id=gid, nonces=[derived("tournament-nonce", seed, i) for i in range(len(players))],
                  table_name="t", writer=writer)
    rng = Stream(derived("tournament-moves", seed if moves_seed is None else moves_seed, tuple(names)), "moves")
    moves = 0
    while to_act(g.state) is not None and (limit is None or moves < limit):
        by_kind: dict[type, list[Move]] = {}
        for m in legal_moves(g.state):
            by_kind.setdefault(type(m), []).append(m)
        kinds = list(by_kind.values())
        pick = kinds[rng.below(len(kinds))]
        g.submit(pick[rng.below(len(pick))])
        moves += 1
    finished = to_act(g.state) is None
    if finished:
        writer.finish(result_tags(g.state))
    else:
        writer.close()
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return Written(path, gid.hex(), tuple(p.name for p in players), tuple(g.state.totals), finished)


def write_plan(path: Path, rounds: Sequence[Sequence[Sequence[str]]], *, variant: str = "grande",
               keys: bool = True, players: Sequence[str] | None = None) -> Path:
    """A plan file of these rounds (tables of names in seat order), the players' derived
    keys in it if `keys`, through the plan file's own writer."""
    from allegra_lan.tournament.plan import Plan, PlanPlayer, allowed_sizes
    from allegra_lan.tournament.planfile import plan_to_json

    who = list(players) if players is not None else sorted({n for r in rounds for t in r for n in t},
                                                           key=NAMES.index)
    plan = Plan(variant=variant, seed=5, allowed=allowed_sizes(variant), preferred=4,
                players=tuple(PlanPlayer(n, (fp(n),) if keys else ()) for n in who),
                rounds=tuple(tuple(tuple(t) for t in r) for r in rounds))
    path.write_text(plan_to_json(plan), encoding="utf-8")
    json.loads(path.read_text(encoding="utf-8"))
    return path


def write_players(path: Path, names: Sequence[str]) -> Path:
    path.write_text("name,fingerprint\n" + "".join(f"{n},{fp(n)}\n" for n in names), encoding="utf-8")
    return path


__all__ = ["NAMES", "person", "fp", "Written", "write_game", "write_plan", "write_players"]
