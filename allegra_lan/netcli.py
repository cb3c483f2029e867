"""`allegra games`, `host`, `join`, `watch` and `resume`: the network commands.

Their arguments are defined in netargs.py (no trio there); this module runs them.

Each runs headless with `--bot NAME` for the seats it plays (the terminal
client, which lets a person play, comes with its own issue). Every command
binds and announces only on `--interface ADDR`.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

import trio

from .bots.registry import bot_names
from .files import FileRefused, open_regular
from .log.identity import Identity, IdentityError, data_dir, load_or_create, profile_name
from .netargs import resume_command
from .rules import RulesetError, ruleset_for
from .usage import CommandError


def _say(quiet: bool) -> Callable[[str], None]:
    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr, flush=True)
    return say


def _leaf(group: BaseExceptionGroup) -> BaseException:
    """The one real error inside trio's exception groups (nurseries wrap what they pass on)."""
    first: BaseException = group
    while isinstance(first, BaseExceptionGroup):
        first = first.exceptions[0]
    return first


def _run(make: Callable[[], Awaitable[Any]], seen: list[Any] | None = None, interface: str = "") -> Any:
    """trio.run with SIGTERM and Ctrl-C cancelling the game cleanly (ads withdrawn, files closed).
    `seen` gets the node as soon as it exists (on_node), so a stop names its replay."""

    async def main() -> Any:
        out: list[Any] = [None]
        async with trio.open_nursery() as n:
            async def stop_on_signal() -> None:
                with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for _ in signals:
                        n.cancel_scope.cancel()
                        return

            async def work() -> None:
                out[0] = await make()
                n.cancel_scope.cancel()

            n.start_soon(stop_on_signal)
            n.start_soon(work)
        return out[0]

    try:
        result = trio.run(main)
    except BaseExceptionGroup as group:
        raise _leaf(group) from None
    if result is None:
        writer = seen[-1].writer if seen else None
        if writer is not None:
            raise CommandError(f"stopped before the game ended; to go on with it: "
                               f"{resume_command(writer.path, interface, profile_name())}")
        raise CommandError("stopped before the game ended (the replay keeps what was played; "
                           "`allegra resume FILE --interface ADDR` goes on)")
    return result


def _identity(args: argparse.Namespace) -> Identity:
    """The key this process shows its peers. A headless process that only seats bots makes a
    key of its own for the game (kept in the game's .seats file for `resume`), so several can
    share one machine and one config directory; a person plays with their own key, and so
    does a bot given `--profile NAME`: the profile's key, the same in every game, which is
    how a tournament's players file and plan know a bot entrant (issue 13)."""
    if getattr(args, "bot", None) is not None and profile_name() is None:
        return Identity.generate()
    try:
        return load_or_create()[0]
    except IdentityError as e:
        raise CommandError(str(e)) from None


def _client(args: argparse.Namespace, **want: Any) -> int:
    """No --bot: the person plays in the full-screen client (tui/net_client.py); a host's
    table is named after the person unless --table names it."""
    from .tui.app import Pace
    from .tui.net_client import Want, run_net_client
    from .tui.play import person_name

    if not sys.stdin.isatty() or not sys.stdout.isatty():
        raise CommandError("needs a terminal to play (or give --bot NAME to play headless)")
    name = (args.name or person_name()).strip()
    host = want.get("host")
    if host is not None and host["table"] is None:
        host["table"] = f"{name}'s table"
    w = Want(interface=args.interface, name=name, games_dir=data_dir() / "games", pin=args.pin, **want)
    return run_net_client(_identity(args), w, Pace(bot=args.pace or 0.4))


def _cmd_games(args: argparse.Namespace) -> int:
    from .net.discovery import DiscoveryError, list_tables

    try:
        ads = trio.run(list_tables, args.interface, args.wait)
    except (DiscoveryError, OSError) as e:
        raise CommandError(f"cannot listen on {args.interface}: {e}") from None
    if not ads:
        print(f"no open tables seen on {args.interface} in {args.wait:g} s")
        return 0
    print(f"{'table':<24} {'variant':<15} {'seats':>5}  {'pin':<3}  host")
    for ad in ads:
        title = ruleset_for(ad.variant).title
        print(f"{ad.name:<24.24} {title:<15} {ad.seats_taken:>2}/{ad.seats_total:<2}  "
              f"{'yes' if ad.pin else 'no':<3}  {ad.host}  {ad.address}:{ad.port}")
    return 0


def _report(node, interface: str | None = None) -> int:  # type: ignore[no-untyped-def]
    """The result, the replay, and (a player's game that did not end) how to go on with it."""
    from .net.session import result_line

    print(result_line(node))
    state = node.table.state
    ended = state is not None and node.done.is_set() and node.stopped is None
    if node.writer is not None:
        print(f"replay: {node.writer.path}")
        if interface is not None and node.replica.fork is None and not node.table.over:
            print(f"to go on with this game: {resume_command(node.writer.path, interface, profile_name())}")
    if node.faults:
        print(f"{len(node.faults)} refused message(s) from peers (see above)")
    return 0 if ended and node.replica.fork is None else 1


def _cmd_host(args: argparse.Namespace) -> int:
    from .net.session import SeatSpec, run_host

    bot = args.bot
    try:
        ruleset_for(args.variant).check_players(args.players)
    except RulesetError as e:
        raise CommandError(str(e)) from None
    extra = [b.strip() for b in args.bots.split(",") if b.strip()] if args.bots else []
    for b in extra:
        if b not in bot_names():
            raise CommandError(f"unknown bot {b!r}: choose from {', '.join(bot_names())}")
    if 1 + len(extra) > args.players:
        raise CommandError(f"{1 + len(extra)} seats for this process, but the table has {args.players}")
    if bot is None:
        return _client(args, host={"variant": args.variant, "players": args.players, "bots": extra,
                                   "table": args.table,
                                   "takeover": args.takeover_after, "spectators": args.spectators,
                                   "options": _options(args), "deal": args.deal})
    name = args.name or bot
    seats = [SeatSpec(name, bot)] + [SeatSpec(f"{b}-{i + 1}", b) for i, b in enumerate(extra)]
    ident = _identity(args)
    seen: list[Any] = []
    node = _run(lambda: run_host(
        ident, args.interface, variant=args.variant, players=args.players,
        table_name=args.table or f"{name}'s table", seats=seats, pin=args.pin,
        games_dir=data_dir() / "games", say=_say(args.quiet), pace=args.pace,
        spectators=args.spectators, takeover=args.takeover_after, options=_options(args),
        deal=args.deal, on_listening=seen.append), seen, args.interface)
    return _report(node, args.interface)


def _options(args: argparse.Namespace) -> dict[str, int] | None:
    """The ruleset fields a host sets beyond its variant's defaults."""
    return {"rounds": args.rounds} if args.rounds is not None else None


def _cmd_join(args: argparse.Namespace) -> int:
    from .net.session import JoinError, SeatSpec, run_guest

    if args.bot is None:
        return _client(args, table=args.table, seat=args.seat)
    bot = args.bot
    ident = _identity(args)
    ad = _find_table(args, need_free_seat=True)
    seen: list[Any] = []
    try:
        node = _run(lambda: run_guest(
            ident, args.interface, address=(ad.address, ad.port), table_id=ad.game_id,
            seats=[SeatSpec(args.name or bot, bot)], pin=args.pin,
            games_dir=data_dir() / "games", say=_say(args.quiet), want_seat=args.seat,
            pace=args.pace, on_node=seen.append), seen, args.interface)
    except JoinError as e:
        raise CommandError(str(e)) from None
    return _report(node, args.interface)


def _find_table(args: argparse.Namespace, *, need_free_seat: bool):  # type: ignore[no-untyped-def]
    from .net.discovery import DiscoveryError, list_tables

    wanted = args.table

    def matches(ad) -> bool:  # type: ignore[no-untyped-def]
        return wanted is None or ad.name == wanted or ad.game_id.hex().startswith(wanted.lower())

    try:
        ads = trio.run(lambda: list_tables(args.interface, args.wait, until=matches if wanted else None))
    except (DiscoveryError, OSError) as e:
        raise CommandError(f"cannot listen on {args.interface}: {e}") from None
    found = [ad for ad in ads if matches(ad) and (ad.seats_taken < ad.seats_total or not need_free_seat)]
    if not found:
        what = f"table {wanted!r}" if wanted else "an open table"
        free = " with a free seat" if need_free_seat else ""
        raise CommandError(f"no {what}{free} seen on {args.interface} in {args.wait:g} s")
    if len(found) > 1:
        raise CommandError("several open tables: name one (" + ", ".join(a.name for a in found) + ")")
    ad = found[0]
    if ad.pin and args.pin is None:
        raise CommandError(f"table {ad.name!r} needs a PIN: give --pin")
    return ad


def _cmd_watch(args: argparse.Namespace) -> int:
    from .net.session import JoinError, run_watch

    if (args.address is None) != (args.table_id is None):
        raise CommandError("give both --address and --table-id, or neither (to find the table by name)")
    if args.address is not None:
        try:
            table_id = bytes.fromhex(args.table_id)
        except ValueError:
            table_id = b""
        if len(table_id) != 16:
            raise CommandError(f"--table-id must be 32 hex digits, not {args.table_id!r}")
        address = args.address
    else:
        ad = _find_table(args, need_free_seat=False)
        if not ad.spectators:
            raise CommandError(f"table {ad.name!r} does not allow spectators")
        address, table_id = (ad.address, ad.port), ad.game_id
    try:
        node = _run(lambda: run_watch(args.interface, address=address, table_id=table_id,
                                      pin=args.pin, games_dir=data_dir() / "games",
                                      say=_say(args.quiet)))
    except JoinError as e:
        raise CommandError(str(e)) from None
    return _report(node)


def _cmd_resume(args: argparse.Namespace) -> int:
    from .net.session import ResumeError, has_person_seat, run_resume

    path = Path(args.file)
    try:
        open_regular(path).close()  # a FIFO or a device is named as such, never read
    except FileRefused as e:
        raise CommandError(str(e)) from None
    if args.bot is None and has_person_seat(path):
        args.name, args.pin = None, None
        return _client(args, resume=path)
    try:
        seen: list[Any] = []
        node = _run(lambda: run_resume(args.interface, path, _say(args.quiet), args.pace,
                                       person_bot=args.bot, on_node=seen.append), seen, args.interface)
    except ResumeError as e:
        raise CommandError(str(e)) from None
    return _report(node, args.interface)
