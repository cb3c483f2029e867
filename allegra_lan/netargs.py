"""The command-line arguments of the network commands (games, host, join, watch, resume).

Apart from `netcli` (which runs them, on trio) so that building the parser of any
command imports neither trio nor zeroconf nor the bots: `allegra --help` and
`allegra id` answer in the time of the key library's import. The handlers are
looked up in `netcli` only when a network command runs.
"""

from __future__ import annotations

import argparse
import ipaddress
import re
import shlex
from pathlib import Path
from typing import Callable

# The bots a network command may seat: the registry's names (bots.registry.bot_names(),
# which imports every bot), kept here as text; a test checks the two agree.
BOT_NAMES = ("easy", "greedy", "hard", "normal", "random", "strong")

PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


def profile_arg(text: str) -> str:
    """A profile's name names a directory: letters, digits, - and _, at most 32."""
    if not PROFILE_NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"not a profile name: {text!r} (1 to 32 letters, digits, - or _, starting with a letter or digit)")
    return text


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", type=profile_arg, default=None, metavar="NAME",
                        help="play as another identity of this machine: its own key, kept in the "
                             "data directory's profiles/NAME/ (made on first use; see allegra id)")


def resume_command(replay: Path, interface: str, profile: str | None = None) -> str:
    """The exact command that goes on with a game this peer left: printed on leaving."""
    words = ["allegra", "resume", str(replay), "--interface", interface]
    if profile:
        words += ["--profile", profile]
    return shlex.join(words)


def _net(command: str) -> Callable[[argparse.Namespace], int]:
    """A handler that imports netcli (trio, the bots, the network) only when it runs."""

    def handler(args: argparse.Namespace) -> int:
        from allegra_lan import netcli

        return int(getattr(netcli, f"_cmd_{command}")(args))

    return handler


def interface_arg(text: str) -> str:
    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an IPv4 address: {text!r}") from None
    if addr.version != 4 or addr.is_unspecified:
        raise argparse.ArgumentTypeError(f"give the IPv4 address of one interface, not {text}")
    return text


def _seconds(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _positive(text: str) -> float:
    v = _seconds(text)
    if not 0 < v <= 600:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 600 seconds")
    return v


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    try:
        interface_arg(host)
        number = int(port)
    except (argparse.ArgumentTypeError, ValueError):
        raise argparse.ArgumentTypeError(f"not HOST:PORT with an IPv4 host: {text!r}") from None
    if not 0 < number < 65536:
        raise argparse.ArgumentTypeError(f"not a TCP port: {port}")
    return host, number


def _whole(unit: str, lo: int, hi: int) -> Callable[[str], int]:
    """An argparse type: a whole number of `unit` from `lo` to `hi`, or one line saying why not."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number of {unit}: {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be {lo} to {hi} {unit}")
        return v
    return parse


_takeover = _whole("seconds", 0, 3600)
rounds_arg = _whole("rounds", 1, 20)  # `host --rounds` and `play --rounds`


def _pace(text: str) -> float:
    v = _seconds(text)
    if not 0 <= v <= 60:
        raise argparse.ArgumentTypeError("must be 0 to 60 seconds")
    return v


def _pin(text: str) -> str:
    """An empty PIN would be no secret at all (and CPace needs one)."""
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def add_network_arguments(sub: argparse._SubParsersAction) -> None:
    """The subcommands games, host, join, watch and resume (handlers in netcli, imported when run)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--interface", type=interface_arg, required=True, metavar="ADDR",
                        help="the IPv4 address to bind and announce on (e.g. 127.0.0.1)")
    player = argparse.ArgumentParser(add_help=False)
    player.add_argument("--bot", choices=BOT_NAMES, metavar="NAME",
                        help=f"play headless with this bot ({', '.join(BOT_NAMES)}); "
                             "without it you play in the full-screen client")
    player.add_argument("--name", default=None, help="your player name (default: the bot's name)")
    player.add_argument("--pin", type=_pin, default=None, help="the table's PIN (never sent, and no "
                        "recorded or live handshake allows an offline guess)")
    add_profile_argument(player)
    player.add_argument("--quiet", action="store_true", help="print only the result")
    player.add_argument("--pace", type=_pace, default=0.0, metavar="S",
                        help="seconds each of this process's bots waits before it moves (default: 0)")

    g = sub.add_parser("games", parents=[common], help="list the tables open on the network",
                       description="List the tables advertised on the network: name, variant, "
                                   "seats, PIN, host fingerprint.")
    g.add_argument("--wait", type=_positive, default=2.0, metavar="S",
                   help="seconds to listen (default: 2)")
    g.set_defaults(handler=_net("games"), prog="allegra games")

    h = sub.add_parser("host", parents=[common, player], help="open a table and play at it",
                       description="Open a table, advertise it, and play once every seat is taken.")
    h.add_argument("--variant", choices=["allegra", "grande"], default="grande")
    h.add_argument("--players", type=int, default=4, metavar="N")
    h.add_argument("--table", default=None, help="the table's name (default: your name's table)")
    h.add_argument("--bots", default="", metavar="NAMES",
                   help="more seats this process plays, one bot name each, comma separated")
    h.add_argument("--spectators", action="store_true",
                   help="let anyone watch the game read-only (allegra watch)")
    h.add_argument("--takeover-after", type=_takeover, default=120, metavar="S",
                   help="seconds a player may be away before the other seats may agree to let a "
                        "bot play their seat (0: never; default: 120)")
    h.add_argument("--rounds", type=rounds_arg, default=None, metavar="N",
                   help="rounds the game lasts (1 to 20; default: the variant's, 3)")
    h.add_argument("--deal", choices=["fair", "seeded"], default="fair",
                   help="how the cards are dealt: fair (default: no peer can read a card the "
                        "rules keep closed, docs/fairdeal.md) or seeded (faster, but every "
                        "peer's replay tells every closed card); joiners follow the host")
    h.set_defaults(handler=_net("host"), prog="allegra host")

    j = sub.add_parser("join", parents=[common, player], help="join a table and play at it",
                       description="Join a table found on the network (by name or id) and play.")
    j.add_argument("table", nargs="?", default=None,
                   help="the table's name or id (default: the only open table)")
    j.add_argument("--seat", type=int, default=None, help="the seat to take (default: the first free)")
    j.add_argument("--wait", type=_positive, default=5.0, metavar="S",
                   help="seconds to look for the table (default: 5)")
    j.set_defaults(handler=_net("join"), prog="allegra join")

    w = sub.add_parser("watch", parents=[common], help="watch a table read-only",
                       description="Follow a game whose host allows spectators, checking every event, "
                                   "and keep its replay. Find the table by name before it starts, or "
                                   "give its --address and --table-id (shown by the host) at any time.")
    w.add_argument("table", nargs="?", default=None, help="the table's name or id")
    w.add_argument("--address", type=_address, default=None, metavar="HOST:PORT",
                   help="where the host listens (skips discovery; needs --table-id)")
    w.add_argument("--table-id", default=None, metavar="HEX", help="the table's id (32 hex digits)")
    w.add_argument("--pin", type=_pin, default=None, help="the table's PIN")
    w.add_argument("--wait", type=_positive, default=5.0, metavar="S",
                   help="seconds to look for the table (default: 5)")
    w.add_argument("--quiet", action="store_true", help="print only the result")
    w.set_defaults(handler=_net("watch"), prog="allegra watch")

    r = sub.add_parser("resume", parents=[common], help="go on with a game this peer played",
                       description="Go on with a networked game after this process stopped or was "
                                   "killed: reads the replay (and its .seats file beside it), "
                                   "reconnects to the other peers, catches up and plays to the end.")
    r.add_argument("file", help="the game's replay file (in the data directory's games/)")
    add_profile_argument(r)
    r.add_argument("--quiet", action="store_true", help="print only the result")
    r.add_argument("--bot", choices=BOT_NAMES, metavar="NAME",
                   help="a bot that plays the seat a person played here, from now on")
    r.add_argument("--pace", type=_pace, default=0.0, metavar="S",
                   help="seconds each of this process's bots waits before it moves (default: 0)")
    r.set_defaults(handler=_net("resume"), prog="allegra resume")


__all__ = ["BOT_NAMES", "resume_command", "interface_arg", "profile_arg", "add_profile_argument",
           "add_network_arguments", "rounds_arg"]
