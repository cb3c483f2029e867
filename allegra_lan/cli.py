"""The `allegra` command.

Every mistake in the arguments is reported as one line on stderr,
`allegra <command>: error: <what is wrong>`, with exit status 2 (argparse's
own convention), and never as a traceback: a user who mistyped a number
should read what to fix, not a stack.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, NoReturn, Sequence

from allegra_lan import __version__


class UsageError(Exception):
    """A command line that cannot be run; printed as one line, exit status 2."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is raised (and printed by `main`) instead of usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from allegra_lan.simulate import SimulateArgs, SimulateError, format_summary, parse_bots, simulate

    sim = SimulateArgs(
        variant=args.variant, players=args.players, games=args.games, seed=args.seed,
        bots=parse_bots(args.bots),
    )
    try:
        summary = simulate(sim)
    except SimulateError as e:
        raise UsageError(args.prog, str(e)) from None
    sys.stdout.write(format_summary(summary))
    sys.stdout.flush()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (new commands add a subparser and a handler here)."""
    parser = _Parser(
        prog="allegra",
        description="ALLEGRA and ALLEGRA Grande (Golf-family card games) on a home network.",
    )
    parser.add_argument("--version", action="version", version=f"allegra {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")

    sim = sub.add_parser(
        "simulate",
        help="play bot games from a seed and print statistics",
        description=(
            "Play bot games and print, per seat, wins and the mean and spread of game totals, "
            "and overall figures (turns and cleared cards per round, chain reactions, action "
            "cards, knocks). Game g is dealt from the seed and g: the same arguments print the "
            "same output."
        ),
    )
    sim.add_argument("--variant", choices=["allegra", "grande"], default="grande",
                     help="the game (default: grande)")
    sim.add_argument("--players", type=int, default=4, metavar="N", help="seats (default: 4)")
    sim.add_argument("--games", type=int, default=10, metavar="G", help="games to play (default: 10)")
    sim.add_argument("--seed", type=int, default=1, metavar="S", help="the seed number (default: 1)")
    sim.add_argument("--bots", default="greedy", metavar="NAMES",
                     help="a bot name per seat, comma separated, or one name for all seats "
                          "(greedy, random; default: greedy)")
    sim.set_defaults(handler=_cmd_simulate, prog="allegra simulate")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: sys.argv[1:]) and return the exit status."""
    parser = build_parser()
    try:
        try:
            args, extra = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
        except SystemExit as e:  # --help and --version print and exit 0
            return e.code if isinstance(e.code, int) else 0
        if extra:  # named by the command they were given to, not by `allegra`
            raise UsageError(getattr(args, "prog", "allegra"), f"unrecognized arguments: {' '.join(extra)}")
        handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
        if handler is None:
            raise UsageError("allegra", "choose a command: simulate (see allegra --help)")
        return handler(args)
    except UsageError as e:
        print(f"{e.prog}: error: {e.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`allegra simulate | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


__all__ = ["main", "build_parser", "UsageError"]
