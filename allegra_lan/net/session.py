"""Hosting and joining a table: the lobby's life, the mesh, and the game to its end.

`run_host` opens a table (listens, advertises it, keeps the lobby) and
`run_guest` joins one (by discovery or an address); both then play the game
as equal peers over a full mesh, and return the node with its finished
table. The seats a process plays are bots for now (headless `--bot`); the
terminal client will plug in as another kind of seat player.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import trio

from ..log.identity import Identity, fingerprint
from ..rules import ruleset_for, to_act
from .discovery import Advertiser, TableAd
from .handshake import PIN_CODE, PROTOCOL_VERSION, HandshakeError
from .lobby import Claim, Lobby
from .node import REDIAL_EVERY, Node, bot_for, finish

LINGER = 10.0  # at most this long a finished node waits for its peers to hold the whole log
DIAL_TIMEOUT = 5.0  # seconds one connection attempt (TCP and handshake) may take
HOST_TIMEOUT = 30.0  # seconds a joining peer waits for the host's lobby


class JoinError(Exception):
    """Joining failed; the message is one line for the player."""


@dataclass(frozen=True)
class SeatSpec:
    """A seat a process will play: the player's name, and a bot's name (its key is made
    here) or None for the person at this process's terminal (who plays with its own key,
    and says when they are ready)."""

    name: str
    bot: str | None


def _ad(node: Node, lobby: Lobby, variant: str) -> TableAd:
    return TableAd(name=lobby.name, variant=variant, seats_taken=lobby.taken,
                   seats_total=lobby.seats, game_id=lobby.table_id, pin=lobby.pin,
                   host=fingerprint(lobby.host), address=node.interface, port=node.port,
                   proto=PROTOCOL_VERSION, spectators=lobby.spectators)


async def _dialer(node: Node) -> None:
    """Keep a link to every other seated peer: the smaller key dials; guests always dial the host.
    Only the address of a key that holds a seat is ever dialled (the lobby admits no other,
    and the host records a guest's address from its connection, not from its word)."""
    while not node.done.is_set():
        lobby = node.lobby
        if lobby is not None:
            seated = lobby.owners()
            for owner, (host, port) in list(lobby.addresses.items()):
                if owner == node.me or owner in node.links or owner not in seated:
                    continue
                if node.spectator and owner != lobby.host:
                    continue  # a spectator follows the game through the host
                if owner != lobby.host and node.me > owner and not node.dial_everyone:
                    continue  # the other side dials us
                try:
                    with trio.move_on_after(DIAL_TIMEOUT):  # a dead link must not hold up the others
                        await node.dial(host, port, expect=owner)
                except HandshakeError as e:
                    node.say(f"could not connect to {fingerprint(owner)} at {host}:{port}: {e}")
        with trio.move_on_after(REDIAL_EVERY):
            await node.done.wait()


async def _play_out(node: Node, nursery: trio.Nursery) -> None:
    """At the end, stay until every seated peer has said it holds the whole log (or LINGER)."""
    await node.done.wait()
    finish(node)
    node.broadcast(node.replica.have())
    final = node.table.seq
    others = (node.lobby.owners() if node.lobby and not node.spectator else set()) - {node.me}
    # A stopped game (a fork, an aborted start) has a peer that will never confirm.
    with trio.move_on_after(LINGER if node.stopped is None else 1.0):
        while not all(node.replica.confirmed.get(k, -1) >= final for k in others):
            changed = node.changed
            await changed.wait()
        await trio.sleep(0.1)  # our own last `have` on its way out
    nursery.cancel_scope.cancel()


async def _reach_host(node: Node, nursery: trio.Nursery, address: tuple[str, int]) -> Lobby:
    """Listen, connect to the host and wait for its lobby; JoinError says what failed."""
    node._nursery = nursery
    await nursery.start(node.serve)
    where = f"{address[0]}:{address[1]}"
    try:
        await node.dial(*address)
    except HandshakeError as e:  # about the PIN, the host's reason is the line (it names the table)
        raise JoinError(e.reason if e.code == PIN_CODE else str(e)) from None
    if not node.links:
        raise JoinError(f"no table answers at {where}")
    with trio.move_on_after(HOST_TIMEOUT):
        while node.lobby is None:
            changed = node.changed
            await changed.wait()
    if node.lobby is None:
        raise JoinError(f"the host at {where} sent no lobby within {HOST_TIMEOUT:g} s")
    return node.lobby


async def run_host(identity: Identity, interface: str, *, variant: str, players: int,
                   table_name: str, seats: list[SeatSpec], pin: str | None, games_dir: Path,
                   say: Callable[[str], None], advertise: bool = True,
                   on_listening: Callable[[Node], None] | None = None, pace: float = 0.0,
                   spectators: bool = False, takeover: int = 0) -> Node:
    """Open a table; this process plays `seats` (seat 0 first); others join until it is full.
    `takeover`: seconds a seat's peer may be away before the others may let a bot play it
    (0: never)."""
    ruleset = ruleset_for(variant)
    ruleset.check_players(players)
    table_id = os.urandom(16)
    node = Node(identity, interface, table_id=table_id, pin=pin, games_dir=games_dir, say=say)
    node.pace = pace
    lobby = Lobby(table_id, table_name, ruleset.to_dict(), players, host=identity.public,
                  pin=pin is not None, spectators=spectators, takeover=takeover)
    node.lobby = lobby
    for seat, spec in enumerate(seats):
        ident = identity if seat == 0 else Identity.generate()
        node.local[ident.public] = (ident, bot_for(spec.bot) if spec.bot else None)
        lobby.sit(seat, Claim(spec.name, ident.public, identity.public, spec.bot, spec.bot is not None))
    async with trio.open_nursery() as n:
        node._nursery = n
        await n.start(node.serve)
        lobby.addresses[identity.public] = (interface, node.port)
        if on_listening is not None:
            on_listening(node)
        n.start_soon(node.actor)
        n.start_soon(_dialer, node)
        n.start_soon(_play_out, node, n)
        if advertise:
            async with Advertiser(interface) as adv:
                await adv.start(_ad(node, lobby, variant))
                say(f"table {table_name!r} open on {interface}:{node.port}, "
                    f"{lobby.taken} of {players} seats taken (table id {table_id.hex()})")
                shown = lobby.taken
                while node.table.genesis is None:
                    changed = node.changed
                    # A full, ready table starts at once: it is withdrawn, not updated.
                    if lobby.taken != shown and not lobby.all_ready():
                        shown = lobby.taken
                        await adv.update(_ad(node, lobby, variant))
                        say(f"{lobby.taken} of {players} seats taken")
                    await changed.wait()
                await adv.withdraw()
                say("all seats ready: the game starts")
    return node


async def run_guest(identity: Identity, interface: str, *, address: tuple[str, int], table_id: bytes,
                    seats: list[SeatSpec], pin: str | None, games_dir: Path,
                    say: Callable[[str], None], want_seat: int | None = None,
                    pace: float = 0.0, on_node: Callable[[Node], None] | None = None) -> Node:
    """Join the table listening at `address` and play `seats` there."""
    node = Node(identity, interface, table_id=table_id, pin=pin, games_dir=games_dir, say=say)
    node.pace = pace
    if on_node is not None:
        on_node(node)
    claims = []
    for i, spec in enumerate(seats):
        ident = identity if i == 0 else Identity.generate()
        claims.append((spec, ident))
    async with trio.open_nursery() as n:
        lobby = await _reach_host(node, n, address)
        free = lobby.free_seats()
        if want_seat is not None and want_seat not in free:
            raise JoinError(f"seat {want_seat} is not free (free: {', '.join(map(str, free)) or 'none'})")
        if len(free) < len(claims):
            raise JoinError(f"the table has {len(free)} free seats, not {len(claims)}")
        request = []
        for i, (spec, ident) in enumerate(claims):
            node.local[ident.public] = (ident, bot_for(spec.bot) if spec.bot else None)
            # The host gives the first free seat to a claim without a seat number.
            seat = want_seat if i == 0 else None
            request.append([seat, Claim(spec.name, ident.public, identity.public, spec.bot,
                                        spec.bot is not None).to_msg()])
        host_link = node.links[lobby.host]
        host_link.send({"t": "sit", "claims": request, "address": [interface, node.port]})
        if all(spec.bot for spec in seats):
            host_link.send({"t": "ready", "ready": True})  # a person says so in the client
        say(f"joining {lobby.name!r} ({lobby.taken} of {lobby.seats} seats taken)")
        n.start_soon(node.actor)
        n.start_soon(_dialer, node)
        n.start_soon(_play_out, node, n)
    return node


def result_line(node: Node) -> str:
    state = node.table.state
    if state is None or to_act(state) is not None:
        return f"game not finished ({node.table.seq} events)"
    names = [s.name for s in node.table.genesis.seats] if node.table.genesis else []
    parts = [f"{names[i] if i < len(names) else i}: {t}" for i, t in enumerate(state.totals)]
    return "game over: " + ", ".join(parts)


async def run_watch(interface: str, *, address: tuple[str, int], table_id: bytes, pin: str | None,
                    games_dir: Path, say: Callable[[str], None]) -> Node:
    """Watch a table whose host allows spectators: follow its log (read-only) to the end,
    checking every event like a player, and keep the replay."""
    node = Node(Identity.generate(), interface, table_id=table_id, pin=pin, games_dir=games_dir, say=say)
    node.spectator = True
    async with trio.open_nursery() as n:
        lobby = await _reach_host(node, n, address)
        if not lobby.spectators:
            raise JoinError("this table's host does not allow spectators")
        say("watching; every event is checked as it arrives")
        n.start_soon(node.actor)
        n.start_soon(_dialer, node)
        n.start_soon(_play_out, node, n)
    return node


class ResumeError(Exception):
    """A game that cannot be resumed from this file; the message says why."""


def has_person_seat(replay_path: Path) -> bool:
    """Whether a person (not a bot) played one of this peer's seats of that game, so
    `allegra resume` goes on in the full-screen client; False if unreadable (run_resume
    then says what is wrong)."""
    from .node import SEATS_SUFFIX
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
    from ..table import Refused
    from .node import SEATS_SUFFIX, SeatPlayer
    from .seats_file import SeatsFileError, read_seats
    from nacl.signing import SigningKey

    try:
        replay = read_replay(replay_path)
    except ReplayError as e:
        raise ResumeError(str(e)) from None
    seats_file = replay_path.with_suffix(SEATS_SUFFIX)
    try:
        stored_file = read_seats(seats_file)  # every field checked against one schema
    except SeatsFileError as e:
        raise ResumeError(str(e)) from None
    lobby, port, pin = stored_file.lobby, stored_file.port, stored_file.pin
    identity = Identity(SigningKey(stored_file.node))
    stored = [(s.seat, s.seed, s.bot, s.nonce) for s in stored_file.seats]
    if identity.public not in lobby.owners():
        raise ResumeError(f"{seats_file}: this peer's key holds no seat in the game")
    node = Node(identity, interface, table_id=lobby.table_id, pin=pin,
                games_dir=replay_path.parent, say=say)
    node.lobby = lobby
    node.pace = pace
    for event in replay.events:
        try:
            node.table.append(event)
        except Refused as e:
            raise ResumeError(f"{replay_path}: {e}") from None
    for seat, seed, bot, nonce in stored:
        ident = Identity(SigningKey(seed))
        if not bot and person_bot is None and not person:
            raise ResumeError(f"seat {seat} was played by a person here: resume in a terminal, "
                              "or with --bot NAME to let a bot play it from now on")
        name = bot or person_bot
        node.local[ident.public] = (ident, bot_for(name) if name else None)
        node.players[seat] = SeatPlayer(seat, ident, node.local[ident.public][1], nonce)
    node._sync_seats()  # a seat the others gave to a bot before we stopped is no longer ours
    node.replica.resumed({sp.identity.public for sp in node.players.values()})
    node.writer = ReplayWriter(replay_path, replay.tags)
    for event in replay.events:
        node.writer.append(event)
    say(f"resuming game {lobby.table_id.hex()[:8]} at seq {node.table.seq}")
    if on_node is not None:
        on_node(node)
    async with trio.open_nursery() as n:
        node._nursery = n
        try:
            await n.start(node.serve, port)
        except OSError:
            await n.start(node.serve, 0)  # our old port is taken: we dial everyone instead
        lobby.addresses[identity.public] = (interface, node.port)
        node.dial_everyone = True
        n.start_soon(node.actor)
        n.start_soon(_dialer, node)
        n.start_soon(_play_out, node, n)
    return node
