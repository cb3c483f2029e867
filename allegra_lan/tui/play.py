"""Setting up `allegra play`: seats, keys, the seed ceremony and the replay file.

The person sits at seat 0 with their own key (`allegra id`'s); each bot gets
a key of its own. With --seed the ceremony's game id, nonces and bot keys come
from the number exactly as in `allegra simulate` (local.simulated_setup), so
the same seed deals the same cards; without it they are fresh random bytes.
The replay goes where networked games keep theirs, named the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from allegra_lan.bots.base import Bot, UnknownBot, seat_seed
from allegra_lan.bots.registry import bot_names, make_bot
from allegra_lan.local import LocalGame, Player, simulated_setup, wall_ms
from allegra_lan.tags import log_tags
from allegra_lan.log.identity import Identity, IdentityError, data_dir, load_or_create
from allegra_lan.files import WriteFailed
from allegra_lan.log.replay import ReplayWriter, game_stem
from allegra_lan.rules import RulesetError, Variant, ruleset_for, ruleset_with

from .app import Pace, PlayClient, make_application

PROG = "allegra play"


class PlayError(ValueError):
    """Arguments that cannot start a game; one line for the player."""


@dataclass(frozen=True)
class PlayArgs:
    variant: Variant = Variant.GRANDE
    players: int = 4
    bots: tuple[str, ...] = ("greedy",)
    seed: int | None = None
    name: str = ""
    rounds: int | None = None  # None: the variant's default


def parse_bots(text: str, players: int) -> tuple[str, ...]:
    """One bot name per opponent (players - 1), or one name for all of them."""
    names = tuple(n.strip() for n in text.split(","))
    if len(names) == 1:
        names = names * (players - 1)
    if len(names) != players - 1:
        raise PlayError(f"--bots names {len(names)} bots for {players - 1} opponents "
                        f"(give one name, or one per opponent)")
    for n in names:
        if n not in bot_names():
            raise PlayError(f"unknown bot {n!r}: choose from {', '.join(bot_names())}")
    return names


def check(args: PlayArgs) -> None:
    try:
        ruleset_for(args.variant).check_players(args.players)
    except RulesetError as e:
        raise PlayError(str(e)) from None
    if args.seed is not None and args.seed < 0:
        raise PlayError("--seed must be 0 or more")


def person_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return name or "you"


def replay_file(games_dir: Path, game: LocalGame, me: Identity) -> Path:
    """Where the replay goes: named as a networked peer names its files (log.replay.game_stem:
    the game id and this player's key), made unique when a seeded game is played again."""
    base = game_stem(games_dir, game.game_id, me.public)
    path = base.with_suffix(".allegra")
    n = 2
    while path.exists():
        path = base.with_name(f"{base.name}-{n}.allegra")
        n += 1
    return path


class ScreenWriter(ReplayWriter):
    """The replay writer of the full-screen game: a write that fails (a full disk) must not
    tear down the screen mid-move. The first failure is kept in `failed` (the file keeps
    its valid prefix, see ReplayWriter) and the game goes on unrecorded; `run_play` names
    the file in one line when the screen closes."""

    def append(self, signed: bytes) -> None:
        if self.failed is None:
            try:
                super().append(signed)
            except WriteFailed:
                pass

    def finish(self, tags: dict[str, str]) -> None:
        if self.failed is None:
            try:
                super().finish(tags)
            except WriteFailed:
                pass


def start_game(args: PlayArgs, me: Identity, games_dir: Path) -> tuple[LocalGame, dict[int, Bot], ReplayWriter, Path]:
    """The signed game (ceremony done), its bots and its replay writer (already holding
    the setup events, fsynced as every later event is)."""
    check(args)
    bots = parse_bots(",".join(args.bots), args.players)
    ruleset = ruleset_with(args.variant, None if args.rounds is None else {"rounds": args.rounds})
    n = args.players
    if args.seed is not None:
        setup = simulated_setup(args.seed, 1, n)
        game_id, nonces = setup.game_id, list(setup.nonces)
        bot_ids = list(setup.identities)
    else:
        game_id, nonces = os.urandom(16), [os.urandom(32) for _ in range(n)]
        bot_ids = [Identity.generate() for _ in range(n)]
    players = [Player(args.name or person_name(), me)]
    players += [Player(f"{bots[s - 1]} {s}", bot_ids[s]) for s in range(1, n)]
    table_name = f"allegra play --seed {args.seed}" if args.seed is not None else "allegra play"
    game = LocalGame(ruleset, players, game_id=game_id, nonces=nonces, table_name=table_name,
                     clock=wall_ms)
    seed = game.table.seed
    assert seed is not None
    seat_bots = {s: make_bot(bots[s - 1], seat_seed(seed, s)) for s in range(1, n)}
    path = replay_file(games_dir, game, me)
    tags = {"Event": table_name, "Site": "allegra-lan",
            "Date": time.strftime("%Y.%m.%d", time.gmtime()), **log_tags(game.table)}
    writer = ScreenWriter(path, tags)
    for ev in game.table.events:
        writer.append(ev.signed)
    game.writer = writer
    return game, seat_bots, writer, path


def run_play(args: argparse.Namespace) -> int:
    """The `allegra play` command: exit 0 after the game (or a quit), 2 for bad arguments or
    a replay that could not be written (a full disk)."""
    from allegra_lan.usage import UsageError

    prog = getattr(args, "prog", PROG)
    if args.pace < 0 or args.pace > 60:
        raise UsageError(prog, "--pace must be 0 to 60 seconds")
    pargs = PlayArgs(variant=args.variant, players=args.players,
                     bots=tuple(args.bots.split(",")), seed=args.seed, name=args.name.strip(),
                     rounds=args.rounds)
    try:
        check(pargs)
        parse_bots(args.bots, args.players)
    except PlayError as e:
        raise UsageError(prog, str(e)) from None
    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise UsageError(prog, "needs a terminal (stdin and stdout must be a tty)")
    try:
        me, made = load_or_create()
    except IdentityError as e:
        raise UsageError(prog, str(e)) from None
    try:
        game, bots, writer, path = start_game(pargs, me, data_dir() / "games")
    except (PlayError, UnknownBot) as e:
        raise UsageError(prog, str(e)) from None
    except WriteFailed as e:  # a full disk: one line naming the file
        raise UsageError(prog, str(e)) from None
    client = PlayClient(game, bots, 0, writer=writer, pace=Pace(bot=args.pace), replay_path=path)
    app = make_application(client)
    try:
        asyncio.run(app.run_async())
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
    if made:
        print("made a new key pair for you (see allegra id)", file=sys.stderr)
    if writer.failed is not None:
        raise UsageError(prog, f"{writer.failed}; the replay keeps the game up to there")
    state = "finished" if client.finished else "unfinished"
    print(f"{state} game; replay: {path}")
    return 0


__all__ = ["PlayArgs", "PlayError", "ScreenWriter", "parse_bots", "check", "start_game", "replay_file",
           "run_play", "person_name"]
