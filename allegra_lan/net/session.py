"""Hosting, joining, watching and resuming a table: build the Peer, run its shell.

`run_host` opens a table (listens, advertises it while seats are free),
`run_guest` joins one at an address, `run_watch` follows one read-only and
`run_resume` goes on with a game this process played before it stopped. Each
builds the pure `Peer` for its role (net/peer/), runs it in a trio `Node`
(net/node.py) until the game is over, and returns the node with its table.
The seats a process plays are bots or the person at its terminal client.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

import trio

from ..log.identity import Identity, fingerprint
from ..names import name_of
from ..rules import Variant
from .discovery import Advertiser, TableAd
from .handshake import PROTOCOL_VERSION
from .lobby import Lobby
from .node import SEATS_SUFFIX, Node
from .peer import JoinError, Peer, ResumeError, SeatSpec


def _ad(node: Node, lobby: Lobby, variant: Variant) -> TableAd:
    return TableAd(name=lobby.name, variant=variant, seats_taken=lobby.taken,
                   seats_total=lobby.seats, game_id=lobby.table_id, pin=lobby.pin,
                   host=fingerprint(lobby.host), address=node.interface, port=node.port,
                   proto=PROTOCOL_VERSION, spectators=lobby.spectators)


async def _advertise(node: Node, lobby: Lobby, variant: Variant, say: Callable[[str], None]) -> None:
    """Advertise the table while it fills; a full, ready table starts at once: it is
    withdrawn, not updated."""
    async with Advertiser(node.interface) as adv:
        await adv.start(_ad(node, lobby, variant))
        say(f"table {lobby.name!r} open on {node.interface}:{node.port}, "
            f"{lobby.taken} of {lobby.seats} seats taken (table id {lobby.table_id.hex()})")
        shown = lobby.taken
        while node.table.genesis is None and not node.done.is_set():
            changed = node.changed
            if lobby.taken != shown and not lobby.all_ready():
                shown = lobby.taken
                await adv.update(_ad(node, lobby, variant))
                say(f"{lobby.taken} of {lobby.seats} seats taken")
            await changed.wait()
        await adv.withdraw()
        if node.table.genesis is not None:
            say("all seats ready: the game starts")


async def run_host(identity: Identity, interface: str, *, variant: Variant, players: int,
                   table_name: str, seats: list[SeatSpec], pin: str | None, games_dir: Path,
                   say: Callable[[str], None], advertise: bool = True,
                   on_listening: Callable[[Node], None] | None = None, pace: float = 0.0,
                   spectators: bool = False, takeover: int = 0,
                   options: dict[str, Any] | None = None, deal: str = "seeded") -> Node:
    """Open a table; this process plays `seats` (seat 0 first); others join until it is full.
    `takeover`: seconds a seat's peer may be away before the others may let a bot play it
    (0: never); `options`: ruleset fields beyond the variant's defaults (e.g. rounds);
    `deal`: the deal the genesis names (the commands pass fair unless told; guests follow
    the genesis)."""
    peer = Peer.host(identity, variant=variant, players=players, table_name=table_name,
                     seats=seats, table_id=os.urandom(16), entropy=os.urandom, pin=pin,
                     spectators=spectators, takeover=takeover, pace=pace, options=options,
                     deal=deal)
    node = Node(peer, interface, pin=pin, games_dir=games_dir, say=say)
    lobby = peer.lobby
    assert lobby is not None
    async with trio.open_nursery() as n:
        listening = trio.Event()

        def started(node: Node) -> None:
            listening.set()
            if on_listening is not None:
                on_listening(node)

        n.start_soon(lambda: node.run(on_listening=started))
        await listening.wait()
        if advertise:
            await _advertise(node, lobby, variant, say)
    return node


async def run_guest(identity: Identity, interface: str, *, address: tuple[str, int], table_id: bytes,
                    seats: list[SeatSpec], pin: str | None, games_dir: Path,
                    say: Callable[[str], None], want_seat: int | None = None,
                    pace: float = 0.0, on_node: Callable[[Node], None] | None = None) -> Node:
    """Join the table listening at `address` and play `seats` there; JoinError says why not
    (with the handshake refusal's `code` when the table refused our handshake)."""
    peer = Peer.guest(identity, host=address, table_id=table_id, seats=seats,
                      entropy=os.urandom, want_seat=want_seat, pin=pin, pace=pace)
    node = Node(peer, interface, pin=pin, games_dir=games_dir, say=say)
    if on_node is not None:
        on_node(node)
    await node.run()
    if peer.join_error is not None:
        refusal = node.join_refusal  # the handshake said no: its code tells a client more
        raise JoinError(peer.join_error, code=refusal.code if refusal is not None else None)
    return node


def result_line(node: Node) -> str:
    state = node.table.state
    if state is None or not node.table.over:  # (the last round's results included)
        return f"game not finished ({node.table.seq} events)"
    names = [s.name for s in node.table.genesis.seats] if node.table.genesis else []
    parts = [f"{name_of(names, i)}: {t}" for i, t in enumerate(state.totals)]
    return "game over: " + ", ".join(parts)


async def run_watch(interface: str, *, address: tuple[str, int], table_id: bytes, pin: str | None,
                    games_dir: Path, say: Callable[[str], None]) -> Node:
    """Watch a table whose host allows spectators: follow its log (read-only) to the end,
    checking every event like a player, and keep the replay."""
    peer = Peer.watcher(Identity.generate(), host=address, table_id=table_id,
                        entropy=os.urandom, pin=pin)
    node = Node(peer, interface, pin=pin, games_dir=games_dir, say=say)
    await node.run()
    if peer.join_error is not None:
        raise JoinError(peer.join_error)
    return node


def has_person_seat(replay_path: Path) -> bool:
    """Whether a person (not a bot) played one of this peer's seats of that game, so
    `allegra resume` goes on in the full-screen client; False if unreadable (run_resume
    then says what is wrong)."""
    from .seats_file import SeatsFileError, read_seats

    try:
        return any(s.bot == "" for s in read_seats(replay_path.with_suffix(SEATS_SUFFIX)).seats)
    except SeatsFileError:
        return False


async def run_resume(interface: str, replay_path: Path, say: Callable[[str], None],
                     pace: float = 0.0, person_bot: str | None = None, person: bool = False,
                     on_node: Callable[[Node], None] | None = None) -> Node:
    """Go on with a game this process played before it stopped: read its replay and
    seats file, listen where it listened, reconnect, catch up, and play to the end.
    A seat a person played is played by `person_bot` from now on, or (`person`) by the
    person again, in the terminal client."""
    from ..log.replay import ReplayError, ReplayWriter, read_replay
    from .seats_file import SeatsFileError, read_seats

    try:
        replay = read_replay(replay_path)
    except ReplayError as e:
        raise ResumeError(str(e)) from None
    seats_file = replay_path.with_suffix(SEATS_SUFFIX)
    try:
        stored = read_seats(seats_file)  # every field checked against one schema
    except SeatsFileError as e:
        raise ResumeError(str(e)) from None
    peer = Peer.resume(stored, list(replay.events), entropy=os.urandom, pace=pace,
                       person_bot=person_bot, person=person, seats_name=str(seats_file),
                       replay_name=str(replay_path))
    node = Node(peer, interface, pin=stored.pin, games_dir=replay_path.parent, say=say)
    node.writer = ReplayWriter(replay_path, replay.tags)
    for event in replay.events:
        node.writer.append(event, sync=False)
    node.writer.sync()  # once for the whole log, not once an event
    say(f"resuming game {stored.lobby.table_id.hex()[:8]} at seq {node.table.seq}")
    if on_node is not None:
        on_node(node)
    # Where we listened before, so the others find us; if it is taken, anywhere: we dial all.
    await node.run(stored.port, any_port=True)
    return node
