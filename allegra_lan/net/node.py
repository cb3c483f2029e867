"""One peer of a networked game: listen, connect, authenticate, lobby, then gossip the log.

The trio edge of the network layer. Every decision about the log is made by
`Table` (through `sync.Replica`) and every decision about seats by `Lobby`;
this module moves frames between them and sockets, runs the seats this peer
plays (bots, for now), and writes the log to disk as it grows.

Tasks of a node (all in one nursery, so none outlives the game):
  listener      accepts connections, runs the handshake, starts a link
  link (each)   a sender (queued frames) and a receiver (dispatch)
  dialer        keeps a connection open to every other seated peer
  actor         writes the events of the seats this peer plays when it is their turn,
                and proposes a takeover when a seat's peer stays away (net/takeover.py)
"""

from __future__ import annotations

import base64
import os
import time
from functools import partial
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import trio

from ..bots.base import Bot
from ..bots.registry import make_bot
from ..files import WriteFailed, append_whole, write_atomic, write_failed
from ..local import log_tags
from ..log.ceremony import commitment
from ..log.codec import encode
from ..log.envelope import Event, sign_event
from ..log.identity import Identity, fingerprint
from ..log.knock import KnockError, check_answer, sign_knock
from ..log.replay import ReplayWriter, game_stem
from ..log.takeover import ConsentError, check_consent, sign_consent
from ..rules import Decision, Give, Move, State, legal_moves, to_act, view
from ..table import TAKEOVER, Refused, Table, move_body
from ..text import one_line
from .framing import MAX_FRAME, ConnectionClosed, FramedStream, FrameError
from .gate import HANDSHAKE_MAX_FRAME, MAX_WATCHERS, AcceptBackoff, Gate, Throttle
from .handshake import HandshakeError, handshake
from .lobby import Claim, Lobby, LobbyError
from .messages import MessageError, MessageType, Sender, message_type
from .pin_guard import PinGuard
from .sync import Replica
from .takeover import (
    ASK_AGAIN, GIVE_UP, Promise, Proposal, parse_ask, proposer, runners, seats_to_take, why_not,
)

SEND_QUEUE = 256  # frames waiting for one peer; a peer that falls further behind is dropped
KNOCK_WINDOW = 3.0  # seconds the active seat waits for knocks (ALLEGRA R16)
SETUP_TIMEOUT = 30.0  # seconds the ceremony waits for a seat before the start is aborted
PAUSE_NOTE_EVERY = 5.0  # seconds between "waiting for ..." notes while the game is paused
SEATS_SUFFIX = ".seats"
REDIAL_EVERY = 0.5
PING_EVERY = 2.0  # seconds between pings on a quiet link
SILENCE = 10.0  # seconds without a frame after which a link is taken for dead (a pulled cable
# or a machine switched off sends no FIN: without this its seat would never count as away)
MAX_LINK_FAULTS = 20  # refused messages after which a connection is closed (a peer that only
# sends garbage would otherwise fill every screen with lines; an honest peer sends none)
TAKEOVER_BOT = "greedy"
RATE = 2000.0  # messages a second a peer may send on average (a busy bot table sends ~500)
BURST = 4000.0  # and at once; more, and the link is dropped and the peer named  # plays a taken seat that was a person's (a bot's seat keeps its bot)


@dataclass
class SeatPlayer:
    """A seat this node plays: its key, its bot (None: a person at this peer's terminal
    client decides), and its seed nonce while the ceremony runs."""

    seat: int
    identity: Identity
    bot: Bot | None
    nonce: bytes = field(default_factory=lambda: os.urandom(32))


class Link:
    """One authenticated connection to a peer, with its own send queue."""

    def __init__(self, key: bytes, stream: FramedStream, dialled_by: bytes,
                 remote: tuple[str, int] | None = None) -> None:
        self.key = key
        self.stream = stream
        self.dialled_by = dialled_by  # the key of the side that opened the connection
        # Where the connection comes from (the socket's peer address): the host seats a
        # guest at this IP, never at one the guest names (a stranger could name any).
        self.remote = remote
        self.why = ""  # why the link closed
        self.heard = trio.current_time()  # when the peer's last frame arrived (or the link opened)
        self.spoke = False  # whether any frame came yet
        self.faults = 0  # messages of this connection we refused
        self.send_q, self.recv_q = trio.open_memory_channel[dict[str, Any]](SEND_QUEUE)
        self.closed = False

    def send(self, msg: dict[str, Any]) -> bool:
        """Queue a frame; False (and the link is dropped) if the peer is too far behind."""
        if self.closed:
            return False
        try:
            self.send_q.send_nowait(msg)
            return True
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.closed = True
            self.why = "the peer fell too far behind (send queue full)"
            return False


MAX_FAULTS = 1000  # refusals kept for the players to read (the oldest go first)


class Recent(list[str]):
    """A list that keeps only its last `cap` items: what peers can make us note (refusals)
    must not grow without end, while the players still read the latest."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def append(self, item: str) -> None:
        super().append(item)
        if len(self) > self.cap:
            del self[: len(self) - self.cap]


# Message type -> the Node method that handles it (its schema: net/messages.py).
HANDLERS: dict[str, str] = {
    "have": "_on_gossip", "events": "_on_gossip", "refused": "_on_gossip",
    "lobby": "_on_lobby", "sit": "_on_request", "ready": "_on_request",
    "lobby_error": "_on_lobby_error", "knock": "_on_knock", "ping": "_on_ping",
    "takeover_ask": "_on_takeover", "takeover_yes": "_on_takeover",
    "takeover_no": "_on_takeover", "takeover_off": "_on_takeover",
}


class Node:
    """A peer. Build it, then `await node.run(...)` inside a nursery."""

    def __init__(self, identity: Identity, interface: str, *, table_id: bytes, pin: str | None,
                 games_dir: Path, say: Callable[[str], None]) -> None:
        self.identity = identity
        self.me = identity.public
        self.interface = interface
        self.table_id = table_id
        self.pin = pin
        self.games_dir = games_dir
        # Every note passes through one_line: a note may quote what a peer sent.
        self.say: Callable[[str], None] = lambda text: say(one_line(text))
        self.replica = Replica(Table())
        self.lobby: Lobby | None = None
        self.links: dict[bytes, Link] = {}
        self.players: dict[int, SeatPlayer] = {}
        self.port = 0
        self.writer: ReplayWriter | None = None
        self.changed = trio.Event()
        self.knocks: dict[bytes, dict[int, bytes | None]] = {}  # draw id -> seat -> knock or None
        # Answers to a draw we do not hold yet (it may be on its way), unchecked, so at most
        # one per sender and seat, judged when that draw becomes the head (`_on_knock`).
        self.early_knocks: dict[tuple[bytes, int], dict[str, Any]] = {}
        self.done = trio.Event()
        self.stopped: str | None = None  # why the game stopped before its end
        self.faults: list[str] = Recent(MAX_FAULTS)  # the latest refusals, for the players
        self.fault_count = 0  # every refusal ever
        self.pace = 0.0  # seconds each of our bots waits before it moves
        self.spectator = False  # watches only: holds no seat, dials only the host
        self.dial_everyone = False  # a resumed peer may listen on a new port: it dials all
        self.local: dict[bytes, tuple[Identity, Bot | None]] = {}  # seat keys played here, by public key
        self.watchers: list[Callable[[], None]] = []  # told of every change (the terminal client)
        self.heard: dict[bytes, float] = {}  # peer -> when its last frame arrived (any link)
        self.proposal: Proposal | None = None  # our takeover ask, while it gathers consents
        self.promises: dict[int, Promise] = {}  # seq -> the takeover we consented to there
        self.retry_at = 0.0  # no new takeover ask before this (trio time)
        self.gate = Gate()  # strangers in their handshake (net/gate.py)
        self.backoff = AcceptBackoff()
        # At most PIN_LIMIT wrong PINs a minute at this table (net/pin_guard.py); and as many
        # PIN confirmations of ours that a stranger at an address we dial could check.
        self.pin_guard = PinGuard()
        self.dial_pin_guard = PinGuard(what="PIN handshakes got no valid confirmation from",
                                       paused="this peer dials with the PIN again in {wait} s")
        self.refusals = Throttle()  # lines about refused handshakes: a flood is not a flood of lines
        self._handshakes: dict[int, trio.CancelScope] = {}  # gate ticket -> its handshake
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------ plumbing

    @property
    def table(self) -> Table:
        return self.replica.table

    def wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()
        for watch in self.watchers:
            watch()

    def broadcast(self, msg: dict[str, Any], *, but: bytes | None = None) -> None:
        for key, link in list(self.links.items()):
            if key != but:
                link.send(msg)

    def deliver(self, sends: list[tuple[Any, dict[str, Any]]]) -> None:
        for peer, msg in sends:
            link = self.links.get(peer)
            if link is not None:
                link.send(msg)
        self._take_accepted()

    def _take_accepted(self) -> None:
        for f in self.replica.faults:
            who = fingerprint(f.peer) if isinstance(f.peer, bytes) else str(f.peer)
            self._blame(f"refused from {who}: " + (f"seq {f.seq}: " if f.seq is not None else "")
                        + f.reason)
        if self.replica.faults or self.replica.fork is not None:
            self.wake()
        self.replica.faults.clear()
        new = self.replica.accepted[:]
        self.replica.accepted.clear()
        if self.replica.superseded:
            self._superseded()
        else:
            for ev in new:
                self._persist(ev)
        if new:
            if any(ev.kind == TAKEOVER for ev in new):
                self._sync_seats()
            self._forget_promises()
            self.wake()

    def _persist(self, ev: Event) -> None:
        """Append to this game's replay in the data directory (made at the genesis, with
        every tag the genesis fixes, so a file cut short by a crash still verifies).

        A write that fails (a full disk) stops the game for this peer: a peer that
        cannot keep the log cannot vouch for it. The file keeps its valid prefix, and
        WriteFailed (one line naming the file) goes up to the command."""
        try:
            if self.writer is None:
                path = game_path(self).with_suffix(".allegra")
                tags = {"Event": "allegra-lan game", "Site": "allegra-lan",
                        "Date": time.strftime("%Y.%m.%d", time.gmtime()), **log_tags(self.table)}
                self.writer = ReplayWriter(path, tags)  # makes the games directory too
            self.writer.append(ev.signed)
        except WriteFailed as e:
            self.stopped = str(e)
            self.done.set()
            raise

    def _superseded(self) -> None:
        """A takeover replaced moves our seats wrote while we were cut off: keep them as
        evidence beside the replay, and rewrite the replay as the table's log now is."""
        dropped = self.replica.superseded[:]
        self.replica.superseded.clear()
        path = game_path(self).with_suffix(".superseded")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:  # whole lines or nothing (a full disk)
                append_whole(fd, "".join(base64.b64encode(e.signed).decode() + "\n"
                                         for e in dropped).encode("ascii"), os.fstat(fd).st_size)
            finally:
                os.close(fd)
            where = f" (kept in {path})"
        except OSError as e:
            where = f" ({write_failed(path, e)})"
        if self.writer is not None:
            self.writer.replace([e.signed for e in self.table.events])
        else:
            for ev in self.table.events:
                self._persist(ev)
        self.say(f"while this peer was away the others let a bot take over at seq {dropped[0].seq}; "
                 f"the {len(dropped)} event(s) it wrote alone from there are replaced{where}")

    def _sync_seats(self) -> None:
        """After a takeover: drop the seats we no longer write for (a bot elsewhere does)."""
        for seat in [s for s, sp in self.players.items() if self.table.keys[s] != sp.identity.public]:
            del self.players[seat]
            runner = self.runners().get(seat)
            by = "this peer" if runner == self.me else fingerprint(runner) if runner else "?"
            self.say(f"seat {seat} is played by a bot on {by} from now on: the other seats "
                     "agreed while its player was away")

    def _forget_promises(self) -> None:
        """The log moved on: what was kept for an earlier seq goes (takeover promises, and
        knocks for any draw but the head), so no table a peer can fill outlives its seq."""
        head = self.table.head
        for draw in [d for d in self.knocks if d != head]:
            del self.knocks[draw]
        early, self.early_knocks = self.early_knocks, {}
        for (sender, _), msg in early.items():
            if msg["draw"] == head:
                self._on_knock(sender, msg)
            elif not self.table.holds(msg["draw"]):
                self.early_knocks[(sender, msg["seat"])] = msg  # still ahead of us
        seq = self.table.seq
        for n in [n for n in self.promises if n < seq]:
            del self.promises[n]
        for n in [n for n in self.replica.barred if n < seq]:
            del self.replica.barred[n]
        if self.proposal is not None and self.proposal.seq < seq:
            self.proposal = None

    def runners(self) -> dict[int, bytes]:
        """seat -> the peer that writes for it."""
        return {} if self.lobby is None else runners(self.lobby, self.table)

    # ------------------------------------------------------------ connections

    async def serve(self, port: int = 0, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(port, host=self.interface)
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        async with trio.open_nursery() as n:
            for listener in listeners:
                n.start_soon(self._accept_loop, listener, n)

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        """Accept connections for as long as the node runs: never more strangers half-way
        in than the gate allows, and no spin (nor a traceback) when out of descriptors."""
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except OSError as e:
                    delay, note = self.backoff.failed(e)
                    if note:
                        self.say(note)
                    await trio.sleep(delay)
                    continue
                note = self.backoff.succeeded()
                if note:
                    self.say(note)
                try:
                    source = str(stream.socket.getpeername()[0])
                except OSError:  # already reset by the peer
                    await stream.aclose()
                    continue
                admission = self.gate.enter(source)
                if admission.evict is not None and admission.evict in self._handshakes:
                    self._handshakes.pop(admission.evict).cancel()
                if admission.why is not None:
                    note = self.gate.note(trio.current_time(), admission.why)
                    if note:
                        self.say(note)
                if admission.ticket is None:
                    stream.socket.close()  # no handshake, no task, no buffer
                    continue
                scope = self._handshakes[admission.ticket] = trio.CancelScope()
                nursery.start_soon(self._accept, stream, source, admission.ticket, scope)

    def _seated_keys(self) -> set[bytes] | None:
        """Who may connect: anyone while the lobby is open; once it started, the seated
        peers, and anyone at a table whose host allowed (read-only) spectators."""
        if self.table.genesis is None or self.lobby is None or self.lobby.spectators:
            return None
        return self.lobby.owners()

    async def _accept(self, stream: trio.SocketStream, source: str, ticket: int,
                      scope: trio.CancelScope) -> None:
        fs = FramedStream(stream, max_frame=HANDSHAKE_MAX_FRAME)  # a stranger's frames are small
        peer = None
        try:
            label = f"table {self.lobby.name!r}" if self.lobby is not None else "this table"
            with scope:  # cancelled when the gate gives this place to a newer connection
                peer = await handshake(fs, self.identity, initiator=False, table_id=self.table_id,
                                       pin=self.pin, expect_keys=self._seated_keys(),
                                       guard=self.pin_guard, clock=trio.current_time,
                                       source=source, label=label)
        except HandshakeError as e:
            note = self.refusals.note(trio.current_time(), f"refused a connection: {e} (from {source})")
            if note:
                self.say(note)
            notice = self.pin_guard.take_notice()
            if notice is not None:
                self.say(notice)
        finally:
            self.gate.leave(source, ticket)
            self._handshakes.pop(ticket, None)
        if peer is None:
            await fs.aclose()
            return
        await self._run_link(peer.key, fs, dialled_by=peer.key)

    async def dial(self, host: str, port: int, expect: bytes | None = None) -> bool:
        # The guesses a stranger at an address we dial could check against our PIN
        # confirmations (net/handshake.py, "why this order") are limited like a host's.
        guard = self.dial_pin_guard
        if self.pin is not None and guard.wait(trio.current_time()):
            return False
        try:
            # From the address we were told to use: the host seats us at the address our
            # connection comes from, and no socket of ours leaves another interface.
            stream = await trio.open_tcp_stream(host, port, local_address=self.interface)
        except (OSError, OverflowError, ValueError, TypeError):  # unreachable, or no address at all
            return False
        fs = FramedStream(stream, max_frame=HANDSHAKE_MAX_FRAME)
        try:
            peer = await handshake(fs, self.identity, initiator=True, table_id=self.table_id,
                                   pin=self.pin, expect_keys=None if expect is None else [expect],
                                   guard=guard, clock=trio.current_time, source=f"{host}:{port}")
        except HandshakeError:
            await fs.aclose()
            notice = guard.take_notice()
            if notice is not None:
                self.say(notice)
            raise
        assert self._nursery is not None
        await self._nursery.start(partial(self._run_link, peer.key, fs, dialled_by=self.me))
        return True

    async def _run_link(self, key: bytes, fs: FramedStream, *, dialled_by: bytes,
                        task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        old = self.links.get(key)
        if old is not None and not old.closed:
            # Two connections to one peer (both dialled at once): both sides keep the one
            # the smaller key opened, so they agree without talking about it.
            keeper = min(key, self.me)
            if old.dialled_by == keeper or dialled_by != keeper:
                task_status.started()
                await fs.aclose()
                return
            old.closed = True
            await old.stream.aclose()
        fs.max_frame = MAX_FRAME  # authenticated: events may travel now
        if not self._may_link(key):
            task_status.started()
            with trio.move_on_after(1.0):
                await fs.send({"t": "lobby_error", "reason": "too many peers without a seat are "
                               "connected to this table: try again later"})
            await fs.aclose()
            return
        link = Link(key, fs, dialled_by, remote_address(fs))
        self.links[key] = link
        task_status.started()
        self.say(f"connected to {fingerprint(key)}")
        try:
            async with trio.open_nursery() as n:
                n.start_soon(self._sender, link)
                n.start_soon(self._keepalive, link, n.cancel_scope)
                self.deliver(self.replica.connected(key))
                if self.lobby is not None and self.lobby.host == self.me:
                    link.send(self.lobby.to_msg())
                await self._receiver(link)
                n.cancel_scope.cancel()
        finally:
            link.closed = True
            if self.links.get(key) is link:  # not when a newer connection replaced this one
                del self.links[key]
                self.replica.disconnected(key)
                if self.lobby is None or key not in self.lobby.owners():
                    self.heard.pop(key, None)  # nothing of a stranger is kept for good
                    self.replica.confirmed.pop(key, None)
                self.say(f"lost {fingerprint(key)}: {link.why or 'closed'}")
                self._peer_left(key)
                self.wake()
            await fs.aclose()

    def _may_link(self, key: bytes) -> bool:
        """Whether a link with `key` may open: always for a key that holds a seat; for any
        other (lobby browsers, spectators) only while fewer than MAX_WATCHERS are linked."""
        seated = self.lobby.owners() | {self.lobby.host} if self.lobby is not None else set()
        if key in seated or key in self.links:
            return True
        return sum(1 for k in self.links if k not in seated) < MAX_WATCHERS

    async def _sender(self, link: Link) -> None:
        async with link.recv_q:
            async for msg in link.recv_q:
                try:
                    await link.stream.send(msg)
                except (ConnectionClosed, FrameError, trio.BrokenResourceError,
                        trio.ClosedResourceError) as e:
                    link.closed = True
                    link.why = link.why or f"sending failed: {e or type(e).__name__}"
                    return

    async def _keepalive(self, link: Link, scope: trio.CancelScope) -> None:
        """Ping a quiet link, and close one that has said nothing for SILENCE seconds."""
        while not link.closed:
            await trio.sleep(PING_EVERY)
            if trio.current_time() - link.heard > SILENCE:
                link.why = f"no word from the peer for {SILENCE:g} s"
                link.closed = True
                scope.cancel()
                return
            link.send({"t": "ping"})

    async def _receiver(self, link: Link) -> None:
        allowance, last = BURST, trio.current_time()  # a token bucket: no peer floods us
        while True:
            try:
                msg = await link.stream.receive()
            except ConnectionClosed:
                link.why = link.why or "the connection closed"
                return
            except FrameError as e:
                link.why = link.why or str(e)
                if e.fault:
                    self._blame(f"refused from {fingerprint(link.key)}: {e}")
                return
            now = link.heard = self.heard[link.key] = trio.current_time()
            if not link.spoke:
                link.spoke = True
                self._peer_back(link.key)  # its first word on this link: it is back
            allowance = min(BURST, allowance + (now - last) * RATE) - 1
            last = now
            if allowance < 0:
                link.why = f"more than {BURST:g} messages at once ({RATE:g} a second allowed)"
                self._blame(f"refused from {fingerprint(link.key)}: {link.why}")
                return
            blamed = self.fault_count
            self.dispatch(link.key, msg)
            link.faults += self.fault_count - blamed
            if link.faults >= MAX_LINK_FAULTS:
                link.why = f"{link.faults} refused messages on one connection"
                self._blame(f"refused from {fingerprint(link.key)}: {link.why}: link closed "
                            "(it may connect again)")
                return
            if link.closed:
                return

    # ------------------------------------------------------------ messages

    def dispatch(self, key: bytes, msg: dict[str, Any]) -> None:
        """Hand a peer's message to its handler: first the type (net/messages.py), then
        whether this peer may send it at all (before anything inside it is read), then
        its schema. Each refusal names the peer and what was wrong; the handlers behind
        this are total on messages of their schema (tests/test_hostile_messages.py)."""
        who = fingerprint(key)
        try:
            mt = message_type(msg)
        except MessageError as e:
            self._blame(f"refused from {who}: {e}")
            return
        why = self._may_not_send(key, mt)
        if why is not None:
            self._blame(f"refused from {who}: a {mt.name} message {why}")
            return
        try:
            mt.check(msg)
        except MessageError as e:
            self._blame(f"refused from {who}: {e}")
            return
        getattr(self, HANDLERS[mt.name])(key, msg)

    def _may_not_send(self, key: bytes, mt: MessageType) -> str | None:
        """Why `key` may not send a message of this type to us (None: it may)."""
        lobby = self.lobby
        if mt.sender is Sender.ANYONE:
            return None
        if mt.sender is Sender.SEATED:
            if lobby is None or key not in lobby.owners():
                return "from a peer that holds no seat"
            return None
        if mt.sender is Sender.GUEST:
            return None if lobby is not None and lobby.host == self.me else "is for the host"
        # Sender.HOST: the lobby's host; before we hold a lobby, the peer we dialled for it.
        if lobby is not None:
            return None if key == lobby.host and key != self.me else "from a peer that is not the host"
        link = self.links.get(key)
        if link is None or link.dialled_by != self.me:
            return "from a peer that is not the host"
        return None

    def _on_gossip(self, key: bytes, msg: dict[str, Any]) -> None:
        self.deliver(self.replica.received(key, msg))
        if msg["t"] == "have":
            self.wake()

    def _on_lobby_error(self, key: bytes, msg: dict[str, Any]) -> None:
        self.say(f"the host refused our request: {msg['reason'][:200]}")

    def _on_ping(self, key: bytes, msg: dict[str, Any]) -> None:
        pass  # its arrival is all it says (the receiver notes when a peer was heard)

    def _on_lobby(self, key: bytes, msg: dict[str, Any]) -> None:
        """The host's lobby (a guest's only source of seats and addresses). Once the game
        started, its seats are the log's: a lobby that changes them is refused."""
        who = fingerprint(key)
        try:
            lobby = Lobby.from_msg(msg)
        except LobbyError as e:
            self._blame(f"refused from {who}: {e}")
            return
        if lobby.table_id != self.table_id:
            self._blame(f"refused from {who}: a lobby of another table")
            return
        if lobby.host != key:
            self._blame(f"refused from {who}: a lobby whose host is another peer")
            return
        if self.table.genesis is not None and self.lobby is not None and \
                _seating(lobby) != _seating(self.lobby):
            self._blame(f"refused from {who}: a lobby that changes the seats after the start")
            return
        self.lobby = lobby
        seat0 = lobby.claims.get(0)
        self.replica.genesis_by = seat0.key if seat0 is not None else None
        self.wake()

    def _on_request(self, key: bytes, msg: dict[str, Any]) -> None:
        """A guest's `sit` or `ready` (to us, the host). A sit is taken whole or not at
        all, and the guest is seated at the IP address its connection comes from."""
        lobby = self.lobby
        assert lobby is not None  # Sender.GUEST: we are the host
        link = self.links.get(key)
        if self.table.genesis is not None:
            if msg["t"] == "sit" and link is not None:
                link.send({"t": "lobby_error", "reason": "the game has started: you may only watch"})
            return
        try:
            if msg["t"] == "sit":
                self._sit(lobby, key, link, msg)
            else:
                lobby.set_ready(key, msg["ready"])
        except LobbyError as e:
            if link is not None:
                link.send({"t": "lobby_error", "reason": str(e)[:200]})
            self.say(f"lobby request from {fingerprint(key)} refused: {e}")
            return
        self.broadcast(lobby.to_msg())
        self.wake()

    @staticmethod
    def _sit(lobby: Lobby, key: bytes, link: Link | None, msg: dict[str, Any]) -> None:
        if link is None or link.remote is None:
            raise LobbyError("the host cannot tell which address this peer connects from")
        before = dict(lobby.claims)
        try:
            for seat, c in msg["claims"]:
                claim = Claim.from_msg(c)
                if claim.owner != key:
                    raise LobbyError("a peer may only claim seats for itself")
                if seat is None:
                    free = lobby.free_seats()
                    if not free:
                        raise LobbyError("the table is full")
                    seat = free[0]
                lobby.sit(seat, claim)
        except LobbyError:
            lobby.claims = before
            raise
        lobby.addresses[key] = (link.remote[0], msg["address"][1])

    def set_ready(self, ready: bool) -> None:
        """This peer's person is (not) ready to start: the host marks its own seats, a
        guest asks the host to."""
        lobby = self.lobby
        if lobby is None or self.table.genesis is not None:
            return
        if lobby.host == self.me:
            lobby.set_ready(self.me, ready)
            self.broadcast(lobby.to_msg())
        else:
            link = self.links.get(lobby.host)
            if link is not None:
                link.send({"t": "ready", "ready": ready})
        self.wake()

    def add_bot(self, name: str) -> int | None:
        """The host seats one of its own bots in the first free seat (the client's `b`);
        the seat it took, or None when the table is full or has started."""
        lobby = self.lobby
        if lobby is None or lobby.host != self.me or self.table.genesis is not None:
            return None
        free = lobby.free_seats()
        if not free:
            return None
        ident = Identity.generate()
        self.local[ident.public] = (ident, bot_for(name))
        lobby.sit(free[0], Claim(f"{name} {free[0]}", ident.public, self.me, name, True))
        self.broadcast(lobby.to_msg())
        self.wake()
        return free[0]

    def _peer_left(self, key: bytes) -> None:
        lobby = self.lobby
        if lobby is not None and lobby.host == self.me and self.table.genesis is None:
            if lobby.leave(key):
                self.broadcast(lobby.to_msg())

    def _on_knock(self, key: bytes, msg: dict[str, Any]) -> None:
        """A seat's signed knock or pass for a draw. The signature proves the seat, so any
        seated peer may relay it: each new answer goes on to every other link (a missing
        link must not cost a knocker its chance); the first answer of a seat counts.

        Only an answer to the draw that is the log's head is checked and kept: one for an
        older draw came too late and is dropped; one for a draw we do not hold yet waits
        in `early_knocks`, one per sender and seat (a peer could send thousands), until
        that draw is the head. Nothing else is stored before the answer proved itself, so
        the knock table holds at most one answer per seat, for one draw."""
        seat, draw, k = msg["seat"], msg["draw"], msg["k"]
        t = self.table
        if draw != t.head:
            if not t.holds(draw):
                self.early_knocks[(key, seat)] = msg
            return
        if t.state is None:
            return
        who = fingerprint(key)
        d = knock_window(t.state)
        if d is None:
            self._blame(f"refused from {who}: a knock for seat {seat}: no card is open for knocks")
            return
        if not seat < t.players or seat == d.seat:
            self._blame(f"refused from {who}: a knock for seat {seat}: that seat cannot knock "
                        "for this card")
            return
        answers = self.knocks.get(draw, {})
        if seat in answers:
            return
        try:
            knocked = check_answer(k, key=t.keys[seat], game=t.game or self.table_id, draw_id=draw)
        except KnockError as e:
            self._blame(f"refused from {who}: a knock for seat {seat}: {e}")
            return
        self.knocks.setdefault(draw, {})[seat] = k if knocked else None
        self.broadcast(msg, but=key)
        self.wake()

    def _blame(self, text: str) -> None:
        """A refusal the players should know of. `faults` keeps the latest MAX_FAULTS (a
        peer that keeps sending garbage must not grow our memory); `fault_count` counts all."""
        self.fault_count += 1
        text = one_line(text)
        self.faults.append(text)
        self.say(text)

    # ------------------------------------------------------------ playing

    def _sign(self, seat: int, kind: str, body: dict[str, Any]) -> bytes:
        t = self.table
        game = self.table_id if t.game is None else t.game
        return sign_event(self.players[seat].identity.key, game=game, seq=t.seq, prev=t.head,
                          kind=kind, body=body).signed

    def publish(self, signed: bytes) -> None:
        self.deliver(self.replica.publish(signed))

    async def actor(self) -> None:
        """Write this node's events whenever it is one of its seats' turn, until the game ends."""
        idle_since = trio.current_time()  # when the log last grew
        last_seq = self.table.seq
        noted = 0.0
        while not self.done.is_set():
            changed = self.changed
            if self.replica.fork is not None:
                self._stop_for_fork()
                return
            await self._act()
            if self.table.state is not None and to_act(self.table.state) is None:
                self.done.set()
                return
            if self.table.seq != last_seq:
                last_seq, idle_since, noted = self.table.seq, trio.current_time(), 0.0
            look = self._consider_takeover()
            if changed.is_set():
                continue  # something happened while we acted: look again at once
            note_at = idle_since + noted + PAUSE_NOTE_EVERY
            with trio.move_on_at(note_at if look is None else min(note_at, look)):
                await changed.wait()
            if self.table.seq == last_seq and not changed.is_set() and trio.current_time() >= note_at:
                noted = trio.current_time() - idle_since
                self._note_pause(noted)

    def _stop_for_fork(self) -> None:
        """DESIGN.md: keep both events as the proof, show it, stop the game."""
        fork = self.replica.fork
        assert fork is not None
        path = game_path(self).with_suffix(".fork")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, "".join(base64.b64encode(e).decode() + "\n"
                                       for e in (fork.first.signed, fork.second.signed)).encode(),
                         mode=0o644)
            where = f"; both events are kept in {path}"
        except (OSError, WriteFailed) as e:
            where = f"; {e}" if isinstance(e, WriteFailed) else ""
        self.say(f"the game stopped: a fork: {fingerprint(fork.first.author)} signed two different "
                 f"events for seq {fork.seq}{where}")
        self.stopped = "fork"
        self.done.set()

    def _note_pause(self, waited: float) -> None:
        """Nothing happened for a while: say who the game waits for, and abort a stuck start."""
        if self.lobby is None:
            return
        if self.table.genesis is None:
            lobby = self.lobby
            self.say(f"waiting for players: {lobby.taken} of {lobby.seats} seats taken, "
                     f"{sum(c.ready for c in lobby.claims.values())} ready")
            return
        seat = self.table.next_author()
        if seat is None or seat in self.players:
            return
        claim = self.lobby.claims.get(seat)
        if claim is not None and claim.owner == self.me:
            return  # one of ours, still being set up
        name = claim.name if claim else f"seat {seat}"
        stage = self.table.stage()
        if self.table.genesis is not None and stage in ("accept", "commit", "reveal") \
                and waited >= SETUP_TIMEOUT:
            self.say(f"the game cannot start: {name} (seat {seat}) did not send its {stage} "
                     f"within {SETUP_TIMEOUT:g} s")
            self.stopped = f"{name} did not send its {stage}"
            self.done.set()
            return
        connected = self.runners().get(seat) in self.links
        later = ""
        if not connected and self.lobby.takeover and stage == "play":
            later = f"; the others may let a bot take the seat after {self.lobby.takeover} s away"
        self.say(f"waiting for {name} (seat {seat}): "
                 + ("thinking" if connected else "disconnected")
                 + f" for {waited:.0f} s{later}")

    async def _act(self) -> None:
        t = self.table
        if t.genesis is None:
            lobby = self.lobby
            if lobby is not None and lobby.host == self.me and lobby.all_ready():
                self._claim_seats()
                self.publish(self._sign(0, "genesis", lobby.genesis().body()))
            return
        if not self.players:
            self._claim_seats()
        self._answer_knocks()
        seat = t.next_author()
        if seat is None or seat not in self.players:
            return
        stage = t.stage()
        if stage == "play" and self.players[seat].bot is None:
            return  # a person's move: the terminal client calls `play_move`
        sp = self.players[seat]
        if stage == "accept":
            self.publish(self._sign(seat, "accept", {}))
        elif stage == "commit":
            self.publish(self._sign(seat, "commit", {"commit": commitment(sp.nonce)}))
        elif stage == "reveal":
            self.publish(self._sign(seat, "reveal", {"nonce": sp.nonce}))
        elif stage == "play":
            await self._play(seat)

    # ------------------------------------------------------------ takeovers

    def _present(self) -> set[bytes]:
        """The peers at the table: linked and heard from within SILENCE (a peer that
        connects and then says nothing is as good as away)."""
        now = trio.current_time()
        return {self.me} | {k for k in self.links if now - self.heard.get(k, -SILENCE) <= SILENCE}

    def _consider_takeover(self) -> float | None:
        """Propose, ask again or give up a takeover as its time comes; returns when to
        look again (None: nothing to wait for)."""
        lobby, table = self.lobby, self.table
        if lobby is None or not lobby.takeover or self.spectator or table.stage() != "play":
            return None
        now = trio.current_time()
        p = self.proposal
        if p is not None:
            if now >= p.started + GIVE_UP:
                self._call_off(f"not every seat answered within {GIVE_UP:g} s")
                return self.retry_at
            if now >= p.asked + ASK_AGAIN:
                p.asked = now
                self.broadcast(p.ask())
            return min(p.asked + ASK_AGAIN, p.started + GIVE_UP)
        run = self.runners()
        taken = seats_to_take(table, run, self._present())
        if not taken or proposer(table.players, taken, run) != self.me:
            return None
        since = max(self.heard.setdefault(run[s], now) for s in taken)  # their last word
        due = max(since + lobby.takeover, self.retry_at)
        if now < due:
            return due
        self._propose(taken, now)
        return now + ASK_AGAIN

    def _propose(self, taken: list[int], now: float) -> None:
        table = self.table
        assert table.game is not None and self.lobby is not None
        idents = {s: Identity.generate() for s in taken}
        seats = [(s, idents[s].public) for s in taken]
        stay = [s for s in range(table.players) if s not in taken]
        p = Proposal(table.seq, table.head, seats, idents, stay, started=now, asked=now)
        for s in stay:
            sp = self.players.get(s)
            if sp is not None and table.keys[s] == sp.identity.public:
                p.signs[s] = sign_consent(sp.identity.key, table.game, p.seq, p.prev, seats)
        self.proposal = p
        self.replica.barred[p.seq] = frozenset(table.keys[s] for s in taken)
        self.say(f"{self._seat_names(taken)} away for {self.lobby.takeover} s or more: asking the "
                 "other seats to let bots play for them")
        self.broadcast(p.ask())
        self._complete_takeover()

    def _seat_names(self, seats: list[int]) -> str:
        g = self.table.genesis
        return ", ".join(f"{g.seats[s].name} (seat {s})" if g else f"seat {s}" for s in seats)

    def _complete_takeover(self) -> None:
        """Every seat that stays consented: run the new bots here, keep their keys on disk,
        then write the takeover event."""
        p, table, lobby = self.proposal, self.table, self.lobby
        if p is None or not p.complete() or lobby is None or table.game is None:
            return
        self.proposal = None
        self.replica.barred.pop(p.seq, None)
        if p.seq != table.seq or p.prev != table.head:
            self._call_off("the log moved on meanwhile", p)
            return
        ours = [s for s in p.stay if s in self.players]
        if not ours:  # our own seats were given away meanwhile: we may not write it
            self._call_off("this peer no longer runs a seat that stays", p)
            return
        author = ours[0]
        for seat, ident in p.idents.items():
            claim = lobby.claims.get(seat)
            bot: Bot | None = bot_for(claim.bot if claim is not None and claim.bot else TAKEOVER_BOT)
            self.local[ident.public] = (ident, bot)
            self.players[seat] = SeatPlayer(seat, ident, bot)
        save_seats(self)  # the new keys are on disk before the event that names them
        signed = sign_event(self.players[author].identity.key, game=table.game, seq=p.seq,
                            prev=p.prev, kind=TAKEOVER, body=p.body()).signed
        self.publish(signed)

    def _call_off(self, why: str, p: Proposal | None = None) -> None:
        p = p or self.proposal
        if p is None:
            return
        self.proposal = None
        self.replica.barred.pop(p.seq, None)
        self.broadcast({"t": "takeover_off", "seq": p.seq})
        self.retry_at = trio.current_time() + (self.lobby.takeover if self.lobby else 0)
        self.say(f"no takeover of {self._seat_names([s for s, _ in p.seats])}: {why}")

    def _peer_back(self, key: bytes) -> None:
        """A peer spoke on a new link: it is no longer away; a takeover of its seats is off;
        a proposer that restarted hears our consent again."""
        p = self.proposal
        if p is not None:
            if any(self.runners().get(s) == key for s, _ in p.seats):
                self._call_off(f"{fingerprint(key)} is back")
            else:
                self.links[key].send(p.ask())
        for promise in self.promises.values():
            if promise.proposer == key:
                self._send_consent(key, promise)

    def _send_consent(self, key: bytes, promise: Promise) -> None:
        table = self.table
        taken = {s for s, _ in promise.seats}
        assert table.game is not None
        signs = [[s, sign_consent(sp.identity.key, table.game, promise.seq, promise.prev,
                                  list(promise.seats))]
                 for s, sp in sorted(self.players.items())
                 if s not in taken and table.keys[s] == sp.identity.public]
        link = self.links.get(key)
        if link is not None:
            link.send({"t": "takeover_yes", "seq": promise.seq, "signs": signs})

    def _on_takeover(self, key: bytes, msg: dict[str, Any]) -> None:
        t, seq, table = msg.get("t"), msg.get("seq"), self.table
        who = fingerprint(key)
        if table.genesis is None or self.lobby is None or self.spectator:
            return
        link = self.links.get(key)
        if t == "takeover_ask":
            try:
                seq, prev, seats = parse_ask(msg, table.players)
            except ConsentError as e:
                self._blame(f"refused from {who}: {e}")
                return
            if seq > table.seq or link is None:
                return  # we are still catching up: the proposer asks again
            run = self.runners()
            taken = {s for s, _ in seats}
            reason = why_not(table, run, self._present(), seq, prev, seats)
            if reason is None and proposer(table.players, taken, run) != key:
                reason = "that peer is not the one to propose it"
            held = self.promises.get(seq)
            if reason is None and held is not None and (held.proposer, held.seats) != (key, tuple(seats)):
                reason = "this peer consented to another takeover at that seq"
            if reason is not None:
                link.send({"t": "takeover_no", "seq": seq, "reason": reason})
                return
            if held is None:
                self.promises[seq] = Promise(key, seq, prev, tuple(seats))
                self.replica.barred[seq] = frozenset(table.keys[s] for s in taken)
                self.say(f"agreed to let bots play {self._seat_names(sorted(taken))}: "
                         "their player is away")
            self._send_consent(key, self.promises[seq])
        elif t == "takeover_yes":
            p = self.proposal
            if p is None or p.seq != seq:
                if link is not None and seq >= table.seq:
                    link.send({"t": "takeover_off", "seq": seq})  # we no longer ask: release it
                return
            run = self.runners()
            for item in msg["signs"]:
                ok = item[0] in p.stay and run.get(item[0]) == key
                try:
                    if not ok:
                        raise ConsentError("a consent for a seat that peer does not run")
                    check_consent(item[1], key=table.keys[item[0]], game=table.game or b"",
                                  seq=p.seq, prev=p.prev, seats=p.seats)
                except ConsentError as e:
                    self._blame(f"refused from {who}: {e}")
                    continue
                p.signs[item[0]] = item[1]
            self._complete_takeover()
        elif t == "takeover_no":
            if self.proposal is not None and self.proposal.seq == seq:
                self._call_off(f"{who} said no: {msg['reason'][:120]}")
        elif t == "takeover_off":
            promise = self.promises.get(seq)
            if promise is not None and promise.proposer == key:
                del self.promises[seq]
                self.replica.barred.pop(seq, None)
                self.broadcast(self.replica.have())  # a move we held back may come again

    def _claim_seats(self) -> None:
        """Seats this node runs, from the lobby's claims (owner = this node); saved to disk
        before any of their events is written, so `allegra resume` can go on with them."""
        if self.lobby is None:
            return
        added = False
        for seat, c in self.lobby.claims.items():
            given_away = bool(self.table.keys) and self.table.keys[seat] != c.key  # a takeover
            if c.owner == self.me and c.key in self.local and seat not in self.players and not given_away:
                ident, bot = self.local[c.key]
                self.players[seat] = SeatPlayer(seat, ident, bot)
                added = True
        if added:
            save_seats(self)

    async def _play(self, seat: int) -> None:
        if self.pace:
            head = self.table.head
            await trio.sleep(self.pace)  # a headless game people can follow
            if self.table.head != head or seat not in self.players:
                return  # the log moved on (a takeover may even have kept its length)
        state = self.table.state
        assert state is not None
        legal = legal_moves(state)
        offered = legal
        knocks: dict[int, bytes | None] = {}
        if any(isinstance(m, Give) for m in legal):
            draw = self.table.head
            others = [s for s in range(state.players) if s != seat]
            deadline = trio.current_time() + KNOCK_WINDOW
            while True:
                knocks = self.knocks.get(draw, {})
                if all(s in knocks for s in others) or trio.current_time() >= deadline:
                    break
                changed = self.changed
                with trio.move_on_at(deadline):
                    await changed.wait()
                if self.table.head != draw:
                    return
            offered = [m for m in legal if not isinstance(m, Give) or knocks.get(m.to)]
        sp = self.players.get(seat)
        if sp is None or sp.bot is None:
            return
        self.play_move(seat, sp.bot.choose(view(state, seat), offered))

    def _answer_knocks(self) -> None:
        """ALLEGRA R16: after another seat's deck draw, each of our seats knocks or passes."""
        state = self.table.state
        if state is None:
            return
        d = knock_window(state)
        if d is None:
            return
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        for seat, sp in self.players.items():
            if seat == d.seat or seat in answered or sp.bot is None:
                continue
            self.answer_knock(seat, sp.bot.knocks(view(state, seat)))

    def answer_knock(self, seat: int, wants: bool) -> None:
        """Our seat's signed knock (or pass) for the deck draw that is the log's head."""
        sp = self.players[seat]
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        if seat in answered:
            return
        k = sign_knock(sp.identity.key, self.table.game or self.table_id, draw, wants)
        answered[seat] = k if wants else None
        self.broadcast({"t": "knock", "seat": seat, "draw": draw, "k": k})
        self.wake()

    def play_move(self, seat: int, move: Move) -> None:
        """A person's move for our seat (the terminal client): signed, taken, sent to all.
        Refused (nothing changes) if it is not that seat's to make or not legal; a give
        carries the receiver's knock for this draw."""
        knock = None
        if isinstance(move, Give):
            knock = self.knocks.get(self.table.head, {}).get(move.to)
            if knock is None:
                raise Refused(self.table.seq, f"seat {move.to} did not knock for this card",
                              fault="illegal")
        kind, body = move_body(move, knock)
        self.publish(self._sign(seat, kind, body))

def knock_window(state: State) -> Decision | None:
    """The active seat's decision while the card it drew from the deck is open for knocks
    (ALLEGRA R16: it may give that card away), else None."""
    d = to_act(state)
    if d is None or d.kind != "play" or not any(isinstance(m, Give) for m in legal_moves(state)):
        return None
    return d


def _seating(lobby: Lobby) -> tuple[Any, ...]:
    """What of a lobby the game's log fixes at the start: the table, the rules, the seats."""
    return (lobby.table_id, lobby.name, lobby.seats, lobby.host, lobby.spectators, lobby.takeover,
            sorted((s, c.name, c.key, c.owner, c.bot) for s, c in lobby.claims.items()))


def remote_address(fs: FramedStream) -> tuple[str, int] | None:
    """The IPv4 address and port a connection comes from (None if not a TCP socket)."""
    sock = getattr(fs.stream, "socket", None)
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[union-attr]
    except (AttributeError, OSError, TypeError, ValueError):
        return None
    return (host, port) if isinstance(host, str) and isinstance(port, int) else None


def game_path(node: Node) -> Path:
    """This peer's files of this game, without suffix (log.replay.game_stem)."""
    return game_stem(node.games_dir, node.table.game or node.table_id, node.me)


def seats_path(node: Node) -> Path:
    return game_path(node).with_suffix(SEATS_SUFFIX)


def save_seats(node: Node) -> None:
    """Write what this node needs to resume the game: the lobby, its seats' keys, bots
    and nonces, its port and the PIN; private (mode 0600), written whole, then renamed.
    A write that fails (a full disk) is WriteFailed naming the file, and the old file
    (if any) stays whole."""
    assert node.lobby is not None
    data = encode({
        "lobby": node.lobby.to_msg(), "port": node.port, "pin": node.pin or "",
        "node": bytes(node.identity.key),
        "seats": [[seat, bytes(sp.identity.key), sp.bot.name if sp.bot else "", sp.nonce]
                  for seat, sp in sorted(node.players.items())],
    })
    path = seats_path(node)
    try:
        node.games_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_failed(node.games_dir, e) from None
    write_atomic(path, data, mode=0o600)


def bot_for(name: str) -> Bot:
    """A bot for a networked seat: its randomness is fresh (no seed to share)."""
    return make_bot(name, os.urandom(32))


def finish(node: Node) -> None:
    """Close the replay with its final tags (Result when the game ended)."""
    if node.writer is not None:
        node.writer.finish(log_tags(node.table))


__all__ = ["Node", "SeatPlayer", "Link", "bot_for", "finish", "KNOCK_WINDOW"]
