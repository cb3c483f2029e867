"""One peer of a networked game: listen, connect, authenticate, lobby, then gossip the log.

The trio edge of the network layer. Every decision about the log is made by
`Table` (through `sync.Replica`) and every decision about seats by `Lobby`;
this module moves frames between them and sockets, runs the seats this peer
plays (bots, for now), and writes the log to disk as it grows.

Tasks of a node (all in one nursery, so none outlives the game):
  listener      accepts connections, runs the handshake, starts a link
  link (each)   a sender (queued frames) and a receiver (dispatch)
  dialer        keeps a connection open to every other seated peer
  actor         writes the events of the seats this peer plays when it is their turn
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
from ..local import log_tags
from ..log.ceremony import commitment
from ..log.codec import encode
from ..log.envelope import Event, sign_event
from ..log.identity import Identity, fingerprint
from ..log.knock import KnockError, check_answer, sign_knock
from ..log.replay import ReplayWriter
from ..rules import Give, legal_moves, to_act, view
from ..table import Table, move_body
from .framing import ConnectionClosed, FramedStream, FrameError
from .handshake import HandshakeError, handshake
from .lobby import Claim, Lobby, LobbyError
from .sync import Replica

SEND_QUEUE = 256  # frames waiting for one peer; a peer that falls further behind is dropped
KNOCK_WINDOW = 3.0  # seconds the active seat waits for knocks (ALLEGRA R16)
SETUP_TIMEOUT = 30.0  # seconds the ceremony waits for a seat before the start is aborted
PAUSE_NOTE_EVERY = 5.0  # seconds between "waiting for ..." notes while the game is paused
SEATS_SUFFIX = ".seats"
REDIAL_EVERY = 0.5
PING_EVERY = 2.0


@dataclass
class SeatPlayer:
    """A seat this node plays: its key, its bot, and its seed nonce while the ceremony runs."""

    seat: int
    identity: Identity
    bot: Bot
    nonce: bytes = field(default_factory=lambda: os.urandom(32))


class Link:
    """One authenticated connection to a peer, with its own send queue."""

    def __init__(self, key: bytes, stream: FramedStream, dialled_by: bytes) -> None:
        self.key = key
        self.stream = stream
        self.dialled_by = dialled_by  # the key of the side that opened the connection
        self.why = ""  # why the link closed
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
        self.say = say
        self.replica = Replica(Table())
        self.lobby: Lobby | None = None
        self.links: dict[bytes, Link] = {}
        self.players: dict[int, SeatPlayer] = {}
        self.port = 0
        self.writer: ReplayWriter | None = None
        self.changed = trio.Event()
        self.knocks: dict[bytes, dict[int, bytes | None]] = {}  # draw id -> seat -> knock or None
        self.done = trio.Event()
        self.stopped: str | None = None  # why the game stopped before its end
        self.faults: list[str] = []
        self.pace = 0.0  # seconds each of our bots waits before it moves
        self.spectator = False  # watches only: holds no seat, dials only the host
        self.dial_everyone = False  # a resumed peer may listen on a new port: it dials all
        self.local: dict[bytes, tuple[Identity, Bot]] = {}  # seat keys this node plays, by public key
        self._nursery: trio.Nursery | None = None

    # ------------------------------------------------------------ plumbing

    @property
    def table(self) -> Table:
        return self.replica.table

    def wake(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

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
            text = f"refused from {who}: " + (f"seq {f.seq}: " if f.seq is not None else "") + f.reason
            self.faults.append(text)
            self.say(text)
        if self.replica.faults or self.replica.fork is not None:
            self.wake()
        self.replica.faults.clear()
        new = self.replica.accepted[:]
        self.replica.accepted.clear()
        for ev in new:
            self._persist(ev)
        if new:
            self.wake()

    def _persist(self, ev: Event) -> None:
        """Append to this game's replay in the data directory (made at the genesis, with
        every tag the genesis fixes, so a file cut short by a crash still verifies)."""
        if self.writer is None:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            path = game_path(self).with_suffix(".allegra")
            tags = {"Event": "allegra-lan game", "Site": "allegra-lan",
                    "Date": time.strftime("%Y.%m.%d", time.gmtime()), **log_tags(self.table)}
            self.writer = ReplayWriter(path, tags)
        self.writer.append(ev.signed)

    # ------------------------------------------------------------ connections

    async def serve(self, port: int = 0, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(port, host=self.interface)
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started(self.port)
        await trio.serve_listeners(self._accept, listeners)

    def _seated_keys(self) -> set[bytes] | None:
        """Who may connect: anyone while the lobby is open; once it started, the seated
        peers, and anyone at a table whose host allowed (read-only) spectators."""
        if self.table.genesis is None or self.lobby is None or self.lobby.spectators:
            return None
        return self.lobby.owners()

    async def _accept(self, stream: trio.SocketStream) -> None:
        fs = FramedStream(stream)
        try:
            peer = await handshake(fs, self.identity, initiator=False, table_id=self.table_id,
                                   pin=self.pin, expect_keys=self._seated_keys())
        except HandshakeError as e:
            self.say(f"refused a connection: {e}")
            await fs.aclose()
            return
        await self._run_link(peer.key, fs, dialled_by=peer.key)

    async def dial(self, host: str, port: int, expect: bytes | None = None) -> bool:
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError:
            return False
        fs = FramedStream(stream)
        try:
            peer = await handshake(fs, self.identity, initiator=True, table_id=self.table_id,
                                   pin=self.pin, expect_keys=None if expect is None else [expect])
        except HandshakeError:
            await fs.aclose()
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
        link = Link(key, fs, dialled_by)
        self.links[key] = link
        task_status.started()
        self.say(f"connected to {fingerprint(key)}")
        try:
            async with trio.open_nursery() as n:
                n.start_soon(self._sender, link)
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
                self.say(f"lost {fingerprint(key)}: {link.why or 'closed'}")
                self._peer_left(key)
                self.wake()
            await fs.aclose()

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

    async def _receiver(self, link: Link) -> None:
        while True:
            try:
                msg = await link.stream.receive()
            except ConnectionClosed:
                link.why = link.why or "the connection closed"
                return
            except FrameError as e:
                link.why = link.why or str(e)
                if e.fault:
                    text = f"refused from {fingerprint(link.key)}: {e}"
                    self.faults.append(text)
                    self.say(text)
                return
            self.dispatch(link.key, msg)
            if link.closed:
                return

    # ------------------------------------------------------------ messages

    def dispatch(self, key: bytes, msg: dict[str, Any]) -> None:
        t = msg.get("t")
        if t in ("have", "events", "refused"):
            self.deliver(self.replica.received(key, msg))
            if t == "have":
                self.wake()
        elif t == "lobby":
            self._on_lobby(key, msg)
        elif t in ("sit", "ready"):
            self._on_request(key, msg)
        elif t == "knock":
            self._on_knock(key, msg)
        elif t == "lobby_error":
            if self.lobby is not None and key == self.lobby.host:
                self.say(f"the host refused our request: {str(msg.get('reason'))[:200]}")
        elif t == "ping":
            pass
        else:
            self._blame(f"refused from {fingerprint(key)}: unknown message {t!r:.30}")

    def _on_lobby(self, key: bytes, msg: dict[str, Any]) -> None:
        if self.lobby is not None and self.lobby.host == self.me:
            return  # the host keeps its own lobby
        if self.lobby is not None and key != self.lobby.host:
            return
        try:
            lobby = Lobby.from_msg(msg)
        except (LobbyError, ValueError) as e:
            self.faults.append(f"refused a lobby message: {e}")
            return
        if lobby.table_id != self.table_id:
            return
        self.lobby = lobby
        self.wake()

    def _on_request(self, key: bytes, msg: dict[str, Any]) -> None:
        lobby = self.lobby
        if lobby is None or lobby.host != self.me or self.table.genesis is not None:
            if msg.get("t") == "sit" and self.table.genesis is not None:
                link = self.links.get(key)
                if link is not None:
                    link.send({"t": "lobby_error", "reason": "the game has started: you may only watch"})
            return
        try:
            if msg["t"] == "sit":
                claims = msg.get("claims")
                addr = msg.get("address")
                if not isinstance(claims, list) or not isinstance(addr, list) or len(addr) != 2:
                    raise LobbyError("a malformed sit request")
                for seat, c in claims:
                    claim = Claim.from_msg(c)
                    if claim.owner != key:
                        raise LobbyError("a peer may only claim seats for itself")
                    if not isinstance(seat, int):
                        seat = lobby.free_seats()[0] if lobby.free_seats() else -1
                    lobby.sit(seat, claim)
                lobby.addresses[key] = (str(addr[0]), int(addr[1]))
            else:
                lobby.set_ready(key, bool(msg.get("ready")))
        except (LobbyError, KeyError, IndexError, TypeError, ValueError) as e:
            link = self.links.get(key)
            if link is not None:
                link.send({"t": "lobby_error", "reason": str(e)[:200]})
            self.say(f"lobby request from {fingerprint(key)} refused: {e}")
            return
        self.broadcast(lobby.to_msg())
        self.wake()

    def _peer_left(self, key: bytes) -> None:
        lobby = self.lobby
        if lobby is not None and lobby.host == self.me and self.table.genesis is None:
            if lobby.leave(key):
                self.broadcast(lobby.to_msg())

    def _on_knock(self, key: bytes, msg: dict[str, Any]) -> None:
        """A seat's signed knock or pass for a draw. The signature proves the seat, so any
        peer may relay it: each new answer goes on to every other link (a missing link
        must not cost a knocker its chance); the first answer of a seat counts."""
        seat, draw, k = msg.get("seat"), msg.get("draw"), msg.get("k")
        who = fingerprint(key)
        g = self.table.genesis
        if (not isinstance(seat, int) or not isinstance(draw, bytes) or not isinstance(k, bytes)
                or g is None or not 0 <= seat < len(g.seats)):
            self._blame(f"refused from {who}: a malformed knock message")
            return
        answers = self.knocks.setdefault(draw, {})
        if seat in answers:
            return
        try:
            knocked = check_answer(k, key=g.seats[seat].key, game=self.table.game or self.table_id,
                                   draw_id=draw)
        except KnockError as e:
            self._blame(f"refused from {who}: a knock for seat {seat}: {e}")
            return
        answers[seat] = k if knocked else None
        self.broadcast(msg, but=key)
        self.wake()

    def _blame(self, text: str) -> None:
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
            if changed.is_set():
                continue  # something happened while we acted: look again at once
            with trio.move_on_at(idle_since + noted + PAUSE_NOTE_EVERY):
                await changed.wait()
            if self.table.seq == last_seq and not changed.is_set():
                noted = trio.current_time() - idle_since
                self._note_pause(noted)

    def _stop_for_fork(self) -> None:
        """DESIGN.md: keep both events as the proof, show it, stop the game."""
        fork = self.replica.fork
        assert fork is not None
        path = game_path(self).with_suffix(".fork")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(base64.b64encode(e).decode() + "\n"
                                    for e in (fork.first.signed, fork.second.signed)))
            where = f"; both events are kept in {path}"
        except OSError:
            where = ""
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
        connected = claim is not None and claim.owner in self.links
        self.say(f"waiting for {name} (seat {seat}): "
                 + ("thinking" if connected else "disconnected")
                 + f" for {waited:.0f} s")

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
        sp = self.players[seat]
        if stage == "accept":
            self.publish(self._sign(seat, "accept", {}))
        elif stage == "commit":
            self.publish(self._sign(seat, "commit", {"commit": commitment(sp.nonce)}))
        elif stage == "reveal":
            self.publish(self._sign(seat, "reveal", {"nonce": sp.nonce}))
        elif stage == "play":
            await self._play(seat)

    def _claim_seats(self) -> None:
        """Seats this node runs, from the lobby's claims (owner = this node); saved to disk
        before any of their events is written, so `allegra resume` can go on with them."""
        if self.lobby is None:
            return
        added = False
        for seat, c in self.lobby.claims.items():
            if c.owner == self.me and c.key in self.local and seat not in self.players:
                ident, bot = self.local[c.key]
                self.players[seat] = SeatPlayer(seat, ident, bot)
                added = True
        if added:
            save_seats(self)

    async def _play(self, seat: int) -> None:
        if self.pace:
            seq = self.table.seq
            await trio.sleep(self.pace)  # a headless game people can follow
            if self.table.seq != seq:
                return
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
        sp = self.players[seat]
        move = sp.bot.choose(view(state, seat), offered)
        kind, body = move_body(move, knocks.get(move.to) if isinstance(move, Give) else None)
        self.publish(self._sign(seat, kind, body))

    def _answer_knocks(self) -> None:
        """ALLEGRA R16: after another seat's deck draw, each of our seats knocks or passes."""
        state = self.table.state
        if state is None:
            return
        d = to_act(state)
        if d is None or d.kind != "play" or not any(isinstance(m, Give) for m in legal_moves(state)):
            return
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        for seat, sp in self.players.items():
            if seat == d.seat or seat in answered:
                continue
            wants = sp.bot.knocks(view(state, seat))
            k = sign_knock(sp.identity.key, self.table.game or self.table_id, draw, wants)
            answered[seat] = k if wants else None
            self.broadcast({"t": "knock", "seat": seat, "draw": draw, "k": k})


def game_path(node: Node) -> Path:
    """This peer's files of this game, without suffix: the game id and this peer's key,
    so peers that share one data directory (several on one machine) never share a file."""
    game = (node.table.game or node.table_id).hex()
    return node.games_dir / f"{game[:16]}-{fingerprint(node.me)[:9]}"


def seats_path(node: Node) -> Path:
    return game_path(node).with_suffix(SEATS_SUFFIX)


def save_seats(node: Node) -> None:
    """Write what this node needs to resume the game: the lobby, its seats' keys, bots
    and nonces, its port and the PIN; private (mode 0600), written whole, then renamed."""
    assert node.lobby is not None
    data = encode({
        "lobby": node.lobby.to_msg(), "port": node.port, "pin": node.pin or "",
        "node": bytes(node.identity.key),
        "seats": [[seat, bytes(sp.identity.key), sp.bot.name, sp.nonce]
                  for seat, sp in sorted(node.players.items())],
    })
    path = seats_path(node)
    node.games_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def bot_for(name: str) -> Bot:
    """A bot for a networked seat: its randomness is fresh (no seed to share)."""
    return make_bot(name, os.urandom(32))


def finish(node: Node) -> None:
    """Close the replay with its final tags (Result when the game ended)."""
    if node.writer is not None:
        node.writer.finish(log_tags(node.table))


__all__ = ["Node", "SeatPlayer", "Link", "bot_for", "finish", "KNOCK_WINDOW"]
