"""The `allegra` command.

Every mistake in the arguments is reported as one line on stderr,
`allegra <command>: error: <what is wrong>`, with exit status 2 (argparse's
own convention), and never as a traceback: a user who mistyped a number
should read what to fix, not a stack. One exit-status rule holds for every
command (EXIT_RULE below, also in `allegra --help`): a file that cannot be
read (or written) is treated like a bad argument, status 2; a file that was
read but failed a check is status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Callable, Iterator, NoReturn, Sequence

from allegra_lan import __version__
from allegra_lan.files import FileRefused, WriteFailed
from allegra_lan.netargs import add_network_arguments, add_profile_argument, rounds_arg
from allegra_lan.tool_args import (
    add_diff_arguments, add_export_arguments, add_show_arguments, add_standings_arguments,
    add_verify_arguments,
)
from allegra_lan.report.args import add_report_arguments
from allegra_lan.tournament import args as tournament_args
from allegra_lan.tournament.args import add_plan_arguments
from allegra_lan.usage import CommandError, UsageError

# argparse words its headings through gettext, once per parser, and gettext searches the
# locale directories anew on every call where no catalogue exists (CPython ships none for
# argparse): about 60 searches and 290 stat calls, 6 ms of every command's start. Our words
# are English anyway, and argparse's then read as they would without a catalogue.
argparse._ = lambda message: message  # type: ignore[attr-defined]


EXIT_RULE = (
    "exit status: 0 done (every file OK; standings, report: the standings or site were made); 1 a file was "
    "read but failed a check (verify, show, export; standings only with --strict), the logs "
    "differ (diff), the tournament check found something (tournament check; tournament "
    "standings only with --strict); "
    "2 a bad argument, or a file that cannot be read as a replay (missing, unreadable, not a "
    "regular file, not a replay, a line too long) or cannot be written (a full disk), "
    "named in one line on stderr."
)


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is raised (and printed by `main`) instead of usage + exit."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(self.prog, message)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from allegra_lan.simulate import SimulateArgs, SimulateError, format_summary, parse_bots, simulate

    sim = SimulateArgs(
        variant=args.variant, players=args.players, games=args.games, seed=args.seed,
        bots=parse_bots(args.bots), out=args.out, deal=args.deal, jobs=args.jobs,
    )
    try:
        summary = simulate(sim)
    except SimulateError as e:
        raise UsageError(args.prog, str(e)) from None
    sys.stdout.write(format_summary(summary))
    if args.out is not None:
        sys.stdout.write(f"\nwrote {args.games} signed replay{'s' if args.games != 1 else ''} to {args.out}\n")
    sys.stdout.flush()
    return 0


def _cmd_play(args: argparse.Namespace) -> int:
    from allegra_lan.tui.play import run_play  # prompt_toolkit only when it runs

    status = run_play(args)
    from allegra_lan.tools.stats import after_game_lines  # your record, in a line or two

    for line in after_game_lines(args.variant, args.players):
        print(line)
    return status


def _cmd_rules(args: argparse.Namespace) -> int:
    """The rules in plain words, from rules_text (written with the client's rules page)."""
    import shutil

    try:
        from allegra_lan.rules_text import rules_text
    except ImportError:
        raise UsageError(args.prog, "this installation has no rules text (allegra_lan.rules_text "
                                    "is missing); docs/rules.md has the rules") from None
    width = args.width if args.width is not None else \
        (min(78, shutil.get_terminal_size((80, 24)).columns - 2) if sys.stdout.isatty() else 78)
    text = rules_text(args.variant, width=max(40, width))
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    return 0


def _width(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of columns: {text!r}") from None
    if not 40 <= v <= 200:
        raise argparse.ArgumentTypeError("must be 40 to 200 columns")
    return v


def _cmd_id(args: argparse.Namespace) -> int:
    from allegra_lan.log.identity import KEY_FILE, IdentityError, key_dir, load_or_create

    try:
        where = key_dir()
        ident, made = load_or_create(where)
    except IdentityError as e:
        raise UsageError(args.prog, str(e)) from None
    if made:
        print(f"made a new key pair in {where}", file=sys.stderr)
    print(ident.fingerprint)
    if args.verbose:
        print(f"public key: {ident.public.hex()}")
        print(f"key file:   {where / KEY_FILE}")
    return 0


def _tool(module: str, run: str, package: str = "allegra_lan.tools") -> Callable[[argparse.Namespace], int]:
    """A handler that imports its tool only when it runs (start-up stays quick)."""

    def handler(args: argparse.Namespace) -> int:
        import importlib

        tool = importlib.import_module(f"{package}.{module}")
        return int(getattr(tool, run)(args, sys.stdout, sys.stderr))

    return handler


def _replay_view(args: argparse.Namespace) -> int:
    from allegra_lan.tui.replay_view import run_view  # prompt_toolkit only when it runs

    return run_view(args, sys.stdout, sys.stderr)


def _add_tools(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser(
        "replay", help="verify, show, export and rank replay files",
        description="Tools for finished (or cut-short) games kept as .allegra replay files.",
    )
    replay.set_defaults(prog="allegra replay")
    rsub = replay.add_subparsers(dest="tool", metavar="tool")
    for name, module, add, run, text in (
        ("verify", "verify", add_verify_arguments, "run_verify",
         "check signatures, chain, seed ceremony, every move and the header's result"),
        ("show", "render", add_show_arguments, "run_show",
         "the table as text at any point, as one seat saw it or with every card"),
        ("export", "export", add_export_arguments, "run_export",
         "one JSON object per event (decoded, with the state hash after it)"),
        ("standings", "standings", add_standings_arguments, "run_standings",
         "players ranked over many games (games that do not verify are left out)"),
    ):
        p = rsub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        add(p)
        p.set_defaults(handler=_tool(module, run), prog=f"allegra replay {name}")
    text = "a static HTML site of the standings and every game, to publish (no JavaScript)"
    report = rsub.add_parser("report", help=text)
    add_report_arguments(report)
    report.set_defaults(handler=_tool("command", "run_report", "allegra_lan.report"), prog="allegra replay report")
    view = rsub.add_parser("view", help="step through a replay on the table screen, forward and back",
                           description="The client's table screen over a replay: step by move, turn "
                                       "or round, forward and back, or jump to a seq (? for the keys).")
    view.add_argument("file", metavar="FILE", help="a replay file")
    eyes = view.add_mutually_exclusive_group()
    eyes.add_argument("--seat", type=int, default=None, metavar="N",
                      help="see the game as seat N saw it (default: seat 0)")
    eyes.add_argument("--all", action="store_true", dest="show_all", help="see every card, closed ones too")
    view.add_argument("--review", action="store_true",
                      help="at every move of the seat (--seat, default 0), show the bot's choice "
                           "from the same view and why, and how often it agreed")
    view.add_argument("--bot", default=None, metavar="NAME",
                      help="the bot that reviews (with --review; default: the hint's bot)")
    view.set_defaults(handler=_replay_view, prog="allegra replay view")
    d = sub.add_parser("diff", help="where two event logs of one game part",
                       description="The first seq where two logs part, both events side by side, "
                                   "what differs in the state there, and what follows. "
                                   "Exit 0 same, 1 different, 2 unreadable.")
    add_diff_arguments(d)
    d.set_defaults(handler=_tool("diff", "run_diff"), prog="allegra diff")


def _add_tournament(sub: argparse._SubParsersAction) -> None:
    tour = sub.add_parser("tournament", help="plan a tournament's tables, check the collected games, rank them, publish a site",
                          description="Tools for a tournament's organiser.")
    tour.set_defaults(prog="allegra tournament")
    tsub = tour.add_subparsers(dest="tool", metavar="tool")
    text = "seat players over N rounds so that every two meet as evenly as possible"
    plan = tsub.add_parser("plan", help=text)
    add_plan_arguments(plan)
    plan.set_defaults(handler=_tool("command", "run_plan", "allegra_lan.tournament"),
                      prog="allegra tournament plan")
    for name, module, add, text in (
            ("check", "check", tournament_args.add_check_arguments,
             "match the collected replays to the plan: missing, wrong or bad games"),
            ("standings", "points", tournament_args.add_standings_arguments,
             "rank the planned games by points per table, with ratings"),
            ("report", "report", tournament_args.add_report_arguments,
             "write the tournament's HTML site: points, planned tables, games, charts")):
        p = tsub.add_parser(name, help=text)
        add(p)
        p.set_defaults(handler=_tool(module, f"run_{name}", "allegra_lan.tournament"),
                       prog=f"allegra tournament {name}")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (new commands add a subparser and a handler here)."""
    parser = _Parser(
        prog="allegra",
        description="ALLEGRA and ALLEGRA Grande (Golf-family card games) on a home network.",
        epilog=EXIT_RULE,
    )
    parser.add_argument("--version", action="version", version=f"allegra {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command")

    play = sub.add_parser(
        "play", help="play a game against bots in this terminal",
        description="A full-screen game against bots on this machine, signed and logged like any "
                    "game; its replay goes to $XDG_DATA_HOME/allegra-lan/games/. Press ? for the keys.",
    )
    play.add_argument("--variant", choices=["allegra", "grande"], default="grande",
                      help="the game (default: grande)")
    play.add_argument("--players", type=int, default=4, metavar="N", help="seats, you included (default: 4)")
    play.add_argument("--bots", default="greedy", metavar="NAMES",
                      help="a bot per opponent, comma separated, or one name for all "
                           "(greedy, random, strong, or a level: easy, normal, hard; default: greedy)")
    play.add_argument("--seed", type=int, default=None, metavar="S",
                      help="deal from this number: the same number, the same deal (default: random)")
    play.add_argument("--pace", type=float, default=0.7, metavar="SECONDS",
                      help="how long each bot move and each clearing step is shown (default: 0.7)")
    play.add_argument("--rounds", type=rounds_arg, default=None, metavar="N",
                      help="rounds the game lasts (1 to 20; default: the variant's, 3)")
    play.add_argument("--name", default="", help="your name at the table (default: your login name)")
    add_profile_argument(play)
    play.set_defaults(handler=_cmd_play, prog="allegra play")

    sim = sub.add_parser(
        "simulate",
        help="play bot games from a seed and print statistics",
        description=(
            "Play bot games and print, per seat, wins and the mean and spread of game totals, "
            "and overall figures (turns and cleared cards per round, chain reactions, action "
            "cards, knocks); a win rate comes with its 95% Wilson confidence interval. Game g is "
            "dealt from the seed and g: the same arguments print the same output."
        ),
    )
    sim.add_argument("--variant", choices=["allegra", "grande"], default="grande",
                     help="the game (default: grande)")
    sim.add_argument("--players", type=int, default=4, metavar="N", help="seats (default: 4)")
    sim.add_argument("--games", type=int, default=10, metavar="G", help="games to play (default: 10)")
    sim.add_argument("--seed", type=int, default=1, metavar="S", help="the seed number (default: 1)")
    sim.add_argument("--bots", default="greedy", metavar="NAMES",
                     help="a bot name per seat, comma separated, or one name for all seats "
                          "(greedy, random, strong, or a level: easy, normal, hard; default: greedy)")
    sim.add_argument("--out", metavar="DIR",
                     help="also write each game's signed log as a replay file in DIR")
    sim.add_argument("--deal", choices=["seeded", "fair"], default="seeded",
                     help="seeded (default: the cards come from the seed) or fair: the network "
                          "games' deal, every card locked by every seat's key and opened by their "
                          "shares, as events in the log (slower: for tests and benchmarks)")
    sim.add_argument("--jobs", type=int, default=1, metavar="N",
                     help="play games in N processes; the output is the same for any N (default: 1)")
    sim.set_defaults(handler=_cmd_simulate, prog="allegra simulate")

    ident = sub.add_parser(
        "id", help="show this player's key fingerprint (made on first use)",
        description="Print the fingerprint of this player's Ed25519 key, kept in "
                    "$XDG_CONFIG_HOME/allegra-lan/identity.key (mode 0600; made on first use).",
    )
    ident.add_argument("-v", "--verbose", action="store_true", help="also the public key and the key file")
    add_profile_argument(ident)
    ident.set_defaults(handler=_cmd_id, prog="allegra id")
    rules = sub.add_parser(
        "rules", help="the rules of ALLEGRA or ALLEGRA Grande, in plain words",
        description="Print the rules of a variant in plain words, with small drawn examples.")
    rules.add_argument("--variant", choices=["allegra", "grande"], default="grande",
                       help="the game (default: grande)")
    rules.add_argument("--width", type=_width, default=None, metavar="COLUMNS",
                       help="wrap at this width (default: the terminal's, at most 78)")
    rules.set_defaults(handler=_cmd_rules, prog="allegra rules")
    stats = sub.add_parser(
        "stats", help="your games: wins, scores, clears and chains per variant and player count",
        description="Your finished games from the data directory's games/ (those where your key, "
                    "or --profile's, holds a seat), per variant and player count: games, wins, mean "
                    "score, best round, cards cleared, longest chain reaction. Every file is checked "
                    "like replay verify; files that are not are named on stderr and left out "
                    "(exit 0 still).")
    stats.add_argument("--dir", default=None, metavar="DIR",
                       help="read the replays in DIR instead of the data directory's games/")
    add_profile_argument(stats)
    stats.set_defaults(handler=_tool("stats", "run_stats"), prog="allegra stats")
    _add_tools(sub)
    _add_tournament(sub)
    add_network_arguments(sub)
    return parser


@contextlib.contextmanager
def _profile(name: str | None) -> Iterator[None]:
    """Run a command as profile `name`: every module that loads the player's key
    (log.identity.key_dir) reads ALLEGRA_PROFILE, so `--profile` reaches the table client
    too; set for the command only, as a test calling main() twice would expect."""
    if name is None:
        yield
        return
    from allegra_lan.log.identity import PROFILE_ENV

    before = os.environ.get(PROFILE_ENV)
    os.environ[PROFILE_ENV] = name
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(PROFILE_ENV, None)
        else:
            os.environ[PROFILE_ENV] = before


def _read_variant(args: argparse.Namespace) -> None:
    """The border for `--variant`: argparse has checked the text against its choices (and
    worded a bad one), so it becomes a Variant once, here, for every command that has it.
    Imported only then, so that `--help` and `id` do not load the rules."""
    text = getattr(args, "variant", None)
    if isinstance(text, str):
        from allegra_lan.rules.ruleset import Variant

        args.variant = Variant(text)


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
        _read_variant(args)
        handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
        if handler is None:
            prog = getattr(args, "prog", "allegra")
            if prog == "allegra replay":
                raise UsageError(prog, "choose a tool: verify, show, view, export, standings or report")
            if prog == "allegra tournament":
                raise UsageError(prog, "choose a tool: plan, check, standings or report")
            raise UsageError("allegra", "choose a command: play, rules, stats, simulate, id, replay, "
                                        "diff, tournament, games, host, join, watch or resume "
                                        "(see allegra --help)")
        try:
            with _profile(getattr(args, "profile", None)):
                return handler(args)
        except CommandError as e:
            raise UsageError(args.prog, str(e)) from None
        except (WriteFailed, FileRefused) as e:  # a full disk, a FIFO given as a file: one line
            raise UsageError(args.prog, str(e)) from None
    except UsageError as e:
        print(f"{e.prog}: error: {e.message}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`allegra simulate | head`): stop quietly, as Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


__all__ = ["main", "build_parser", "UsageError"]
