"""The trio shell of a peer: sockets, timers and files around the pure `Peer`.

Every decision is the `Peer`'s (net/peer/); this module only carries out
its actions (net/actions.py) and feeds it what happens: it listens and
dials, runs the handshake behind the connection gate (net/gate.py), moves
frames between sockets and the Peer, calls `tick` when a Timer is due, and
writes the replay, the .seats file and a fork's proof.

Tasks of a node (all in one nursery, so none outlives the game):
  accept loop   accepts connections behind the gate, runs the handshake, starts a link
  link (each)   a sender (its queue of frames) and a receiver (frames to `Peer.handle`)
  dial (each)   one connection attempt the Peer asked for (a `Dial`)
  ticker        calls `Peer.tick` after every input and at each Timer
"""

from __future__ import annotations

import base64
import os
from contextlib import nullcontext
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import trio

from ..files import WriteFailed, append_whole, write_atomic, write_failed
from ..tags import log_tags
from ..log.identity import fingerprint
from ..log.replay import ReplayWriter, game_stem
from ..rules import Move
from ..text import one_line
from .actions import (
    Action, Changed, Close, Dial, Done, KeepDisagreement, KeepFork, Note, Persist, Rewrite, SaveSeats,
    Send, Timer,
)
from .framing import MAX_FRAME, ConnectionClosed, FramedStream, FrameError
from .gate import HANDSHAKE_MAX_FRAME, AcceptBackoff, Gate, Throttle
from .handshake import PIN_CODE, SAME_KEY_CODE, HandshakeError, handshake
from .peer import KNOCK_WINDOW, Peer, SeatPlayer
from .pin_guard import PinGuard

SEND_QUEUE = 256  # frames waiting for one peer; a peer that falls further behind is dropped
DIAL_TIMEOUT = 5.0  # seconds one connection attempt (TCP and handshake) may take
CLOSE_GRACE = 1.0  # seconds a closing link may take to send what it still has queued
SYNC_EVERY = 1.0  # seconds at most between a line written without fsync and its fsync
SEATS_SUFFIX = ".seats"


@dataclass
class Link:
    """One authenticated connection: its stream and its queue of frames to send (a dict is
    a message; bytes a raw frame, which only the test peers of tests/ send)."""

    key: bytes
    stream: FramedStream
    dialled_by: bytes
    send_q: Any = None
    recv_q: Any = None
    closed: bool = False
    why: str = ""
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)

    def __post_init__(self) -> None:
        self.send_q, self.recv_q = trio.open_memory_channel[Any](SEND_QUEUE)

    def send(self, item: Any) -> None:
        """Queue a frame; a peer that falls too far behind is dropped."""
        if self.closed:
            return
        try:
            self.send_q.send_nowait(item)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.close("the peer fell too far behind (send queue full)")

    def close(self, why: str) -> None:
        """Close after what is queued went out (at most CLOSE_GRACE)."""
        if not self.closed:
            self.closed = True
            self.why = self.why or why
            self.send_q.close()


class Node:
    """A peer's shell. Build it around a `Peer`, then `await node.run()`: it returns when
    the Peer is done (the game over, stopped, or joining failed)."""

    def __init__(self, peer: Peer, interface: str, *, pin: str | None, games_dir: Path,
                 say: Callable[[str], None]) -> None:
        self.peer = peer
        self.interface = interface
        self.pin = pin
        self.games_dir = games_dir
        # Every note passes through one_line: a note may quote what a peer sent.
        self.say: Callable[[str], None] = lambda text: say(one_line(text))
        self.port = 0
        self.writer: ReplayWriter | None = None
        self.links: dict[bytes, Link] = {}
        self.changed = trio.Event()
        self.done = trio.Event()
        self.watchers: list[Callable[[], None]] = []  # told of every change (the terminal client)
        self.gate = Gate()  # strangers in their handshake (net/gate.py)
        self.backoff = AcceptBackoff()
        # At most PIN_LIMIT wrong PINs a minute at this table (net/pin_guard.py); and as many
        # PIN confirmations of ours that a stranger at an address we dial could check.
        self.pin_guard = PinGuard()
        self.dial_pin_guard = PinGuard(what="PIN handshakes got no valid confirmation from",
                                       paused="this peer dials with the PIN again in {wait} s")
        self.refusals = Throttle()  # lines about refused handshakes: a flood is not a flood of lines
        self.join_refusal: HandshakeError | None = None  # why the table we join refused us, if it did
        self._handshakes: dict[int, trio.CancelScope] = {}  # gate ticket -> its handshake
        self._nursery: trio.Nursery | None = None
        self._poke = trio.Event()
        self._wake_at = float("inf")
        self._synced_at = 0.0  # when the replay was last fsynced (trio time)

    # ------------------------------------------------------------ what the client reads

    @property
    def me(self) -> bytes:
        return self.peer.me

    @property
    def table_id(self) -> bytes:
        return self.peer.table_id

    @property
    def table(self):  # type: ignore[no-untyped-def]
        return self.peer.table

    @property
    def replica(self):  # type: ignore[no-untyped-def]
        return self.peer.replica

    @property
    def lobby(self):  # type: ignore[no-untyped-def]
        return self.peer.lobby

    @property
    def players(self) -> dict[int, SeatPlayer]:
        return self.peer.players

    @property
    def knocks(self) -> dict[bytes, dict[int, bytes | None]]:
        return self.peer.knocks

    @property
    def faults(self) -> list[str]:
        return self.peer.faults

    @property
    def stopped(self) -> str | None:
        return self.peer.stopped

    # ------------------------------------------------------------ the person's commands

    def play_move(self, seat: int, move: Move) -> None:
        """A person's move (the terminal client); table.Refused if it is not legal."""
        self._input(self.peer.play_move(trio.current_time(), seat, move))

    def answer_knock(self, seat: int, wants: bool) -> None:
        self._input(self.peer.answer_knock(trio.current_time(), seat, wants))

    def set_ready(self, ready: bool) -> None:
        self._input(self.peer.set_ready(trio.current_time(), ready))

    def add_bot(self, name: str) -> int | None:
        seat, actions = self.peer.add_bot(trio.current_time(), name)
        self._input(actions)
        return seat

    def send_raw(self, key: bytes, frame: bytes) -> None:
        """Queue bytes for `key`'s socket, written as they are, in order with its frames: the
        hook through which the test peers of tests/evil_peer.py send what no honest peer would
        (a header that lies, a body that is not msgpack)."""
        link = self.links.get(key)
        if link is not None:
            link.send(bytes(frame))

    # ------------------------------------------------------------ running

    async def run(self, port: int = 0, *, any_port: bool = False,
                  on_listening: Callable[["Node"], None] | None = None) -> None:
        """Listen on `port` of the interface (`any_port`: another if that one is taken), then
        carry out the Peer's actions until it is done."""
        # The peer's wall clock (signed start and result times) is this machine's, read once.
        self.peer.epoch_ms = time.time_ns() // 1_000_000 - int(trio.current_time() * 1000)
        async with trio.open_nursery() as n:
            self._nursery = n
            try:
                await n.start(self.serve, port)
            except OSError:
                if not any_port:
                    raise
                await n.start(self.serve, 0)
            if on_listening is not None:
                on_listening(self)
            await self._ticker()
            n.cancel_scope.cancel()

    async def serve(self, port: int = 0, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Accept connections on `port` (0: any) of the interface until cancelled."""
        listeners = await trio.open_tcp_listeners(port, host=self.interface)
        self.port = listeners[0].socket.getsockname()[1]
        self._carry_out(self.peer.listening(trio.current_time(), self.interface, self.port))
        task_status.started(self.port)
        async with trio.open_nursery() as n:
            for listener in listeners:
                n.start_soon(self._accept_loop, listener, n)

    async def _ticker(self) -> None:
        while not self.peer.gone:
            self._wake_at = float("inf")
            self._carry_out(self.peer.tick(trio.current_time()))
            if self.peer.gone:
                break
            self._sync_now_and_then()
            poke = self._poke
            with trio.move_on_at(self._wake_at):
                await poke.wait()
            self._poke = trio.Event()
        await self._finish()

    def _sync_now_and_then(self) -> None:
        """What was written without its fsync (other peers' events, our bots') is fsynced at
        most SYNC_EVERY seconds later: catch-up would restore it after a power cut while any
        other peer is still there, and this keeps what a cut can take small when none is."""
        w = self.writer
        if w is None or not w.unsynced:
            return
        now = trio.current_time()
        if now >= self._synced_at + SYNC_EVERY:
            try:
                w.sync()
            except WriteFailed as e:
                self.peer.stopped = str(e)
                self.done.set()
                raise
            self._synced_at = now
        else:
            self._wake_at = min(self._wake_at, self._synced_at + SYNC_EVERY)

    async def _finish(self) -> None:
        if self.writer is not None:
            self.writer.finish(log_tags(self.table))
        if self.peer.join_error is None:
            # Our own last `have` (or a fork proof) must be out before we go: a peer that never
            # hears we hold its end doubts that end (Peer._doubt_the_end). A fixed 0.1 s was not
            # always enough on a loaded machine (seen in a clean-clone CI run: the guest said the
            # end was never confirmed). Each link sends what it has queued, then closes.
            for link in list(self.links.values()):
                link.close("this peer has left: the game is over here")
            with trio.move_on_after(CLOSE_GRACE):
                while self.links:
                    await trio.sleep(0.01)
        self.done.set()
        self._changed()

    def _input(self, actions: list[Action]) -> None:
        self._carry_out(actions)
        self._poke.set()

    def _carry_out(self, actions: list[Action]) -> None:
        for a in actions:
            if isinstance(a, Send):
                link = self.links.get(a.peer)
                if link is not None:
                    link.send(a.msg)
            elif isinstance(a, Persist):
                self._persist(a.event.signed, a.sync)
            elif isinstance(a, Note):
                self.say(a.text)
            elif isinstance(a, Timer):
                self._wake_at = min(self._wake_at, a.at)
            elif isinstance(a, Changed):
                self._changed()
            elif isinstance(a, Close):
                link = self.links.get(a.peer)
                if link is not None:
                    link.close(a.why)
            elif isinstance(a, Dial):
                assert self._nursery is not None
                self._nursery.start_soon(self._dial, a)
            elif isinstance(a, SaveSeats):
                self._save_seats(a.data)
            elif isinstance(a, Rewrite):
                self._rewrite(a)
            elif isinstance(a, KeepFork):
                self._keep_fork(a)
            elif isinstance(a, KeepDisagreement):
                self._keep_disagreement(a)
            elif isinstance(a, Done):
                self._changed()
            else:
                raise TypeError(f"unknown action {a!r}")

    def _changed(self) -> None:
        self.changed.set()
        self.changed = trio.Event()
        for watch in self.watchers:
            watch()

    # ------------------------------------------------------------ files

    def game_path(self) -> Path:
        """This peer's files of this game, without suffix (log.replay.game_stem)."""
        return game_stem(self.games_dir, self.table.game or self.peer.table_id, self.me)

    def _persist(self, signed: bytes, sync: bool) -> None:
        """Append to this game's replay in the data directory (made at the genesis, with
        every tag the genesis fixes, so a file cut short by a crash still verifies).

        A write that fails (a full disk) stops the game for this peer: a peer that
        cannot keep the log cannot vouch for it. The file keeps its valid prefix, and
        WriteFailed (one line naming the file) goes up to the command."""
        try:
            if self.writer is None:
                path = self.game_path().with_suffix(".allegra")
                tags = {"Event": "allegra-lan game", "Site": "allegra-lan",
                        "Date": time.strftime("%Y.%m.%d", time.gmtime()), **log_tags(self.table)}
                self.writer = ReplayWriter(path, tags)  # makes the games directory too
            self.writer.append(signed, sync=sync)
        except WriteFailed as e:
            self.peer.stopped = str(e)
            self.done.set()
            raise

    def _save_seats(self, data: bytes) -> None:
        """The .seats file: private (0600), written whole, then renamed; WriteFailed names
        the file, and the old file (if any) stays whole."""
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise write_failed(self.games_dir, e) from None
        write_atomic(self.game_path().with_suffix(SEATS_SUFFIX), data, mode=0o600)

    def _rewrite(self, a: Rewrite) -> None:
        """A takeover replaced moves our seats wrote while we were cut off: keep them as
        evidence beside the replay, and rewrite the replay as the table's log now is."""
        path = self.game_path().with_suffix(".superseded")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:  # whole lines or nothing (a full disk)
                append_whole(fd, "".join(base64.b64encode(e).decode() + "\n"
                                         for e in a.superseded).encode("ascii"), os.fstat(fd).st_size)
            finally:
                os.close(fd)
            where = f" (kept in {path})"
        except OSError as e:
            where = f" ({write_failed(path, e)})"
        if self.writer is not None:
            self.writer.replace(list(a.events))
        else:
            for signed in a.events:
                self._persist(signed, True)
        first = self.table.events[len(a.events) - len(a.superseded)].seq if a.superseded else 0
        self.say(f"while this peer was away the others let a bot take over at seq {first}; "
                 f"the {len(a.superseded)} event(s) it wrote alone from there are replaced{where}")

    def _keep_fork(self, a: KeepFork) -> None:
        path = self.game_path().with_suffix(".fork")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, "".join(base64.b64encode(e).decode() + "\n"
                                       for e in (a.first, a.second)).encode(), mode=0o644)
            where = f"; both events are kept in {path}"
        except (OSError, WriteFailed) as e:
            where = f"; {e}" if isinstance(e, WriteFailed) else ""
        self.say(f"the game stopped: a fork: {fingerprint(a.author)} signed two different "
                 f"events for seq {a.seq}{where}")

    def _keep_disagreement(self, a: KeepDisagreement) -> None:
        """The signed result our engine refused, beside the replay (its log before that seq
        is the replay itself), so anyone can recheck it."""
        path = self.game_path().with_suffix(".disagreement")
        try:
            self.games_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, (base64.b64encode(a.event).decode() + "\n").encode(), mode=0o644)
            where = f"; the signed result is kept in {path}"
        except (OSError, WriteFailed) as e:
            where = f"; {e}" if isinstance(e, WriteFailed) else ""
        self.say(f"the game stopped: {a.reason}{where}")

    # ------------------------------------------------------------ connections

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

    async def _accept(self, stream: trio.SocketStream, source: str, ticket: int,
                      scope: trio.CancelScope) -> None:
        fs = FramedStream(stream, max_frame=HANDSHAKE_MAX_FRAME)  # a stranger's frames are small
        peer = None
        try:
            lobby = self.peer.lobby
            label = f"table {lobby.name!r}" if lobby is not None else "this table"
            with scope:  # cancelled when the gate gives this place to a newer connection
                peer = await handshake(fs, self.peer.identity, initiator=False,
                                       table_id=self.peer.table_id, pin=self.pin,
                                       expect_keys=self.peer.expected_keys(),
                                       guard=self.pin_guard, clock=trio.current_time,
                                       source=source, label=label)
        except HandshakeError as e:
            text = ("refused your key from a second terminal: join there with --profile NAME"
                    if e.code == SAME_KEY_CODE else f"refused a connection: {e} (from {source})")
            note = self.refusals.note(trio.current_time(), text)
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

    async def _dial(self, d: Dial) -> None:
        """One connection attempt the Peer asked for; it hears `connected` or `dial_failed`."""
        reason: str | None = None
        with trio.move_on_after(DIAL_TIMEOUT):  # a dead peer must not hold up the others
            try:
                if await self.dial(d.host, d.port, d.peer):
                    return
            except HandshakeError as e:
                reason = e.reason if e.code == PIN_CODE else str(e)
                if d.peer is None:  # the table we join: its refusal, code and all, for run_guest
                    self.join_refusal = e
        self._input(self.peer.dial_failed(trio.current_time(), d.peer, d.host, d.port, reason))

    async def dial(self, host: str, port: int, expect: bytes | None = None) -> bool:
        """Connect to host:port and run the handshake (expecting the key `expect`; None:
        any); True once the link runs, False if nobody answered; HandshakeError if refused."""
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
            peer = await handshake(fs, self.peer.identity, initiator=True,
                                   table_id=self.peer.table_id, pin=self.pin,
                                   expect_keys=None if expect is None else [expect],
                                   guard=guard, clock=trio.current_time, source=f"{host}:{port}")
        except BaseException as e:
            with trio.CancelScope(shield=True):
                await fs.aclose()
            if isinstance(e, HandshakeError):
                notice = guard.take_notice()
                if notice is not None:
                    self.say(notice)
            raise
        assert self._nursery is not None
        await self._nursery.start(self._run_link, peer.key, fs, self.me)
        return True

    async def _run_link(self, key: bytes, fs: FramedStream, dialled_by: bytes,
                        task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        old = self.links.get(key)
        if old is not None and not old.closed:
            if not Peer.keeps_new_link(self.me, key, old.dialled_by, dialled_by):
                task_status.started()
                await fs.aclose()
                return
            old.closed = True
            old.scope.cancel()
        refusal = self.peer.refusal(key)
        if refusal is not None:
            task_status.started()
            with trio.move_on_after(CLOSE_GRACE):
                try:
                    await fs.send(refusal)
                except (ConnectionClosed, FrameError, trio.BrokenResourceError,
                        trio.ClosedResourceError):
                    pass
            await fs.aclose()
            return
        fs.max_frame = MAX_FRAME  # authenticated: events may travel now
        link = Link(key, fs, dialled_by)
        self.links[key] = link
        task_status.started()
        try:
            async with trio.open_nursery() as n:
                n.start_soon(self._sender, link, n.cancel_scope)
                self._input(self.peer.connected(trio.current_time(), key, dialled_by=dialled_by,
                                                remote=remote_address(fs)))
                with link.scope:
                    await self._receiver(link)
                link.close(link.why or "closed")
        finally:
            link.closed = True
            if self.links.get(key) is link:  # not when a newer connection replaced this one
                del self.links[key]
                self._input(self.peer.disconnected(trio.current_time(), key, link.why))
            with trio.CancelScope(shield=True):
                await fs.aclose()

    async def _sender(self, link: Link, scope: trio.CancelScope) -> None:
        """Send the queued frames; after a Close, what is queued still goes (CLOSE_GRACE)."""
        async with link.recv_q:
            async for item in link.recv_q:
                try:
                    with trio.fail_after(CLOSE_GRACE) if link.closed else nullcontext():
                        if isinstance(item, bytes):  # send_raw: as they are
                            await link.stream.stream.send_all(item)
                        else:
                            await link.stream.send(item)
                except (ConnectionClosed, FrameError, trio.BrokenResourceError,
                        trio.ClosedResourceError, trio.TooSlowError) as e:
                    link.closed = True
                    link.why = link.why or f"sending failed: {e or type(e).__name__}"
                    break
        scope.cancel()  # closed and sent: the receiver stops too

    async def _receiver(self, link: Link) -> None:
        while not link.closed:
            try:
                msg = await link.stream.receive()
            except ConnectionClosed:
                link.why = link.why or "the connection closed"
                return
            except FrameError as e:
                link.why = link.why or str(e)
                if e.fault:
                    self._input(self.peer.refused_frame(trio.current_time(), link.key, str(e)))
                return
            self._input(self.peer.handle(trio.current_time(), link.key, msg))


def remote_address(fs: FramedStream) -> tuple[str, int] | None:
    """The IPv4 address and port a connection comes from (None if not a TCP socket)."""
    sock = getattr(fs.stream, "socket", None)
    try:
        host, port = sock.getpeername()[:2]  # type: ignore[union-attr]
    except (AttributeError, OSError, TypeError, ValueError):
        return None
    return (host, port) if isinstance(host, str) and isinstance(port, int) else None


__all__ = ["Node", "Link", "KNOCK_WINDOW", "SEATS_SUFFIX", "remote_address"]
