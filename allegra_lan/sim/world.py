"""One simulated game: real `Peer` objects on the virtual network, with faults and adversaries.

The world is the simulator's shell, the counterpart of the trio `Node`: it
carries out each `Peer`'s actions (sends frames, dials, persists to a
simulated disk, keeps timers) and feeds it inputs (`connected`,
`disconnected`, `handle`, `refused_frame`, `tick`, and a simulated person's
commands) at virtual times. Every input runs inside a guard: an exception from
an honest peer is a finding (its traceback is kept with the seed), never a
crash of the simulator.

What the trio shell does and the world mirrors: a frame that does not decode
is passed to `refused_frame` and the connection ends (its byte stream is
unusable); a `Close` ends the link and the peer hears `disconnected`; two
connections between one pair keep the one the smaller key dialled; after the
game started, a connection from a key that holds no seat is refused in the
handshake unless the table admits spectators (net/node.py `_seated_keys`);
what was written without its fsync is fsynced at most SYNC_EVERY later.
What it leaves out: the handshake itself (keys are taken as proven), the
PIN, discovery, and the file formats on disk (the disk keeps events and the
seats bytes; see disk.py).
"""

from __future__ import annotations

import random
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from nacl.signing import SigningKey

from ..log.envelope import Event
from ..log.identity import Identity
from ..net.actions import (
    Changed, Close, Dial, Done, KeepDisagreement, KeepFork, Note, Persist, Rewrite, SaveSeats, Send,
    Timer,
)
from ..log.codec import decode
from ..net.peer import Peer, ResumeError, SeatSpec, knock_window
from ..net.seats_file import MAX_SEATS_FILE, SeatsFileError, check_seats
from ..rules import Give, legal_moves, to_act
from ..table import CEREMONY_STAGES, Refused, Stage
from .adversary import Attack, Stranger, make_attack
from .disk import Disk
from .net import Clock, Conn, Network
from .scenario import Scenario
from .wire import FrameError, decode_frame, encode_message

VIRTUAL_CAP = 1800.0  # virtual seconds a run may last (a finished game takes well under 300)
STEP_CAP = 400_000  # inputs a run may feed its peers (a game takes a few thousand)
QUIET = 150.0  # virtual seconds without a new event, all faults over: the game is stuck
SAMPLE_EVERY = 25  # inputs between samples of the peers' pending state
DUPLICABLE = frozenset({"have", "events", "knock", "ping"})  # a shell may resend these
HISTORY = 64  # frames kept per direction for duplication
SETUP_STAGES = (Stage.GENESIS, *CEREMONY_STAGES)
SPIN = 200  # ticks of one peer at one virtual instant: it asks for a timer not after now, forever
LINGER = 10.0  # seconds a finished peer waits for the others to confirm (net/peer/config.py)
DIAL_TIMEOUT = 5.0  # seconds a dial to a machine that does not answer takes to fail (net/node.py)
SYNC_EVERY = 1.0  # seconds at most between an event written without fsync and its fsync (net/node.py)

# Caps on what a peer may hold pending (the invariant of bounded state): generous
# enough for any honest game, far below what a flood would leave behind.
def caps(players: int, nodes: int) -> dict[str, int]:
    return {
        "knocks": 4,  # draws with answers kept (one draw at a time, a few in passing)
        "early_knocks": (nodes + 2) * players,  # one per sender and seat
        "replica._early": 8 * (nodes + 2),  # MAX_EARLY per linked peer
        "replica.peers": nodes + 17,  # links: seated peers and at most 16 watchers
        "faults": 1000,  # the latest refusals kept
        "promises": 4,
        "replica.barred": 4,
        "replica.confirmed": nodes + 17,
    }


@dataclass
class SimNode:
    """One peer's machine: its keys, address, disk, and the Peer while its process runs."""

    index: int
    ident: Identity
    host: str
    port: int
    disk: Disk
    honest: bool
    person: bool  # one of its seats is played by a (simulated) person
    peer: Peer | None = None
    alive: bool = False
    gone: bool = False  # its machine died and never came back (planned, or no state to resume)
    incarnation: int = 0
    conns: dict[bytes, Conn] = field(default_factory=dict)
    next_tick: float = float("inf")
    tick_queued: bool = False
    busy: float = 0.0  # CPU model: the virtual CPU is busy until then
    cpu: float = 0.0  # CPU seconds used (measured)
    done: bool = False
    stopped: str | None = None
    attack: Attack | None = None
    entropy: random.Random = field(default_factory=random.Random)
    person_at: tuple[bytes, str] | None = None  # the head a person's decision is scheduled for
    calls: int = 0
    cut_mid: float | None = None  # a power cut due inside the next actions that persist (downtime)
    spin_at: float = -1.0
    spins: int = 0
    stranded: bool = False
    disturbed: float = float("-inf")  # when a fault that cut it off last ended  # every other peer left while it was away: nobody to finish with
    done_at: float | None = None
    synced_at: float = float("-inf")  # when the shell last fsynced the unsynced tail
    sync_due: float = float("inf")  # the wake-up planned for that fsync

    @property
    def key(self) -> bytes:
        return self.ident.public


@dataclass
class Record:
    """What a run found, for the checker and the summary."""

    errors: list[str] = field(default_factory=list)  # findings (tracebacks) of honest peers
    faults: dict[str, int] = field(default_factory=dict)  # injected, by kind
    maxima: dict[str, int] = field(default_factory=dict)  # pending state, largest seen
    over_cap: list[str] = field(default_factory=list)
    notes_multiline: list[str] = field(default_factory=list)
    events_at: dict[bytes, list[float]] = field(default_factory=dict)  # event id -> persist times
    trace: list[str] = field(default_factory=list)
    unresumable: list[str] = field(default_factory=list)
    setup_disturbed: bool = False  # a fault was active while the ceremony ran, or a power cut took a peer back to it
    fork_struck: bool = False
    result_struck: int | None = None  # the seat a forged-result adversary signed a wrong hash for
    absent_in_play: bool = False  # a seat's peer left for good while the play ran
    absent_in_setup: bool = False
    absent_seats: int = 0  # seats whose peer is away for good (as seated at the start)
    absent_nodes: set[int] = field(default_factory=set)
    ended: str = ""  # why the run stopped: done, quiet, time cap, step cap, error


class World:
    """Runs one `Scenario` to its end; `run()` returns the Record."""

    def __init__(self, sc: Scenario, *, verbose: bool = False, cpu: bool = False) -> None:
        self.sc = sc
        self.verbose = verbose
        self.cpu = cpu
        self.rng = random.Random(sc.seed * 7919 + 1)  # the network's and faults' own stream
        self.clock = Clock(sc.start)
        self.net = Network(self.clock, random.Random(sc.seed * 7919 + 2), sc.links,
                           self._deliver, self._ended)
        self.rec = Record()
        self.steps = 0
        self.nodes: list[SimNode] = []
        self.by_key: dict[bytes, SimNode] = {}
        self.by_addr: dict[tuple[str, int], SimNode] = {}
        self.stranger: Stranger | None = None
        self.caps = caps(sc.players, len(sc.nodes))
        self.max_seq = 0
        self.last_growth = sc.start
        self.pending_faults = list(sc.faults)
        self.active: int = 0  # faults in progress (a partition not healed, a peer down)
        self.history: dict[tuple[int, int], list[bytes]] = {}
        self._stop = False
        self._ephemeral = 40000
        self._encoded: tuple[object, bytes] = (None, b"")
        self._build()

    # ------------------------------------------------------------ setup

    def _identity(self, label: str) -> Identity:
        return Identity(SigningKey(random.Random(f"{self.sc.seed}/{label}").randbytes(32)))

    def _build(self) -> None:
        sc = self.sc
        table_id = random.Random(f"{sc.seed}/table").randbytes(16)
        for plan in sc.nodes:
            n = SimNode(plan.index, self._identity(f"node/{plan.index}"), f"10.0.0.{plan.index + 1}",
                        7000 + plan.index, Disk(), honest=plan.adversary is None,
                        person=any(s.bot is None for s in plan.seats),
                        entropy=random.Random(f"{sc.seed}/entropy/{plan.index}/0"))
            self.nodes.append(n)
            self.by_key[n.key] = n
            self.by_addr[(n.host, n.port)] = n
        host = self.nodes[0]
        for n, plan in zip(self.nodes, sc.nodes):
            seats = [SeatSpec(s.name, s.bot) for s in plan.seats]
            if n is host:
                n.peer = Peer.host(n.ident, variant=sc.variant, players=sc.players,
                                   table_name=f"sim {sc.seed}", seats=seats,
                                   spectators=sc.spectators, takeover=sc.takeover,
                                   table_id=table_id, entropy=n.entropy.randbytes, pace=sc.pace,
                                   options={"rounds": sc.rounds, **dict(sc.rules)},
                                   deal=sc.options.deal)
            else:
                n.peer = Peer.guest(n.ident, host=(host.host, host.port), table_id=table_id,
                                    seats=seats, entropy=n.entropy.randbytes, pace=sc.pace)
            n.alive = True
            if plan.adversary is not None:
                n.attack = make_attack(plan.adversary, plan.variant_of, self, n,
                                       random.Random(f"{sc.seed}/attack"), sc.adversary_at_seq,
                                       sc.adversary_count)
        if sc.stranger is not None:
            idx = len(self.nodes)
            self.stranger = Stranger(sc.stranger, self, idx, self._identity("stranger").public,
                                     random.Random(f"{sc.seed}/stranger"), sc.stranger_at_seq)
        for n in self.nodes:
            self.clock.at(self.clock.now, self._start_node, n, n.incarnation)
        if self.stranger is not None:
            self.stranger.maybe_start()
        self.clock.at(self.clock.now + 10.0, self._watchdog)

    def _start_node(self, n: SimNode, inc: int) -> None:
        if n.incarnation != inc or n.peer is None:
            return
        self.call(n, "listening", n.host, n.port)
        self._queue_tick(n)

    # ------------------------------------------------------------ running

    def run(self) -> Record:
        clock = self.clock
        end = self.sc.start + VIRTUAL_CAP
        while not self._stop:
            t = clock.next_time()
            if t is None:
                self.rec.ended = "no more events"
                break
            if t > end:
                self.rec.ended = "time cap"
                break
            if self.steps > STEP_CAP:
                self.rec.ended = "step cap"
                break
            clock.step()
        self._sample()
        return self.rec

    def stop(self, why: str) -> None:
        if not self._stop:
            self._stop = True
            self.rec.ended = why

    def trace(self, text: str) -> None:
        if self.verbose:
            self.rec.trace.append(f"{self.clock.now - self.sc.start:10.4f} {text}")

    def _watchdog(self) -> None:
        """Every 10 virtual seconds: is the game stuck (no event for QUIET s, no fault pending)?"""
        now = self.clock.now
        if not self.active and not self._stop and now - self.last_growth > QUIET:
            self.stop("quiet")
            return
        self.clock.at(now + 10.0, self._watchdog)

    # ------------------------------------------------------------ inputs

    def call(self, n: SimNode, name: str, *args: Any, **kw: Any) -> Any:
        """Feed one input to a node's Peer and carry out what it returns."""
        peer = n.peer
        if peer is None or self._stop or n.done:
            return None
        now = self.clock.now
        if self.cpu and n.busy > now:
            self.clock.at(n.busy, self._call_later, n, n.incarnation, name, args, kw)
            return None
        self.steps += 1
        n.calls += 1
        if n.attack is not None:
            n.attack.before_call()
        t0 = time.perf_counter()
        try:
            out = getattr(peer, name)(now, *args, **kw)
        except Refused:
            if name == "play_move":
                raise  # the simulated person chose a move the table refuses: the caller's
            self._raised(n, name)
            return None
        except Exception:
            self._raised(n, name)
            return None
        cost = time.perf_counter() - t0
        n.cpu += cost
        actions = out[1] if name == "add_bot" else out
        if self.cpu:
            n.busy = now + cost
            if cost > 0:
                self.clock.at(now + cost, self._carry_out, n, n.incarnation, actions)
            else:
                self._carry_out(n, n.incarnation, actions)
        else:
            self._carry_out(n, n.incarnation, actions)
        if self.steps % SAMPLE_EVERY == 0:
            self._sample()
        return out

    def _call_later(self, n: SimNode, inc: int, name: str, args: tuple[Any, ...],
                    kw: dict[str, Any]) -> None:
        if n.incarnation == inc:
            self.call(n, name, *args, **kw)

    def _raised(self, n: SimNode, name: str) -> None:
        tb = traceback.format_exc()
        if n.honest:
            self.rec.errors.append(f"node {n.index} raised in {name}:\n{tb}")
            self.stop("error")
        else:
            if self.verbose:
                self.trace(f"adversary node {n.index} raised in {name}: {tb.splitlines()[-1]}")

    def _queue_tick(self, n: SimNode) -> None:
        """A tick after the current batch of inputs (same virtual instant, after them)."""
        if not n.tick_queued:
            n.tick_queued = True
            self.clock.at(self.clock.now, self._batch_tick, n, n.incarnation)

    def _batch_tick(self, n: SimNode, inc: int) -> None:
        if n.incarnation != inc:
            return
        n.tick_queued = False
        now = self.clock.now
        if n.spin_at == now:
            n.spins += 1
            if n.spins > SPIN:
                # A real shell would burn a core here: virtual time does not pass between
                # ticks at one instant, so the Peer must not keep asking for a time <= now.
                if n.honest:
                    self.rec.errors.append(
                        f"node {n.index} spins: {SPIN} ticks at one instant, each asking for a "
                        f"Timer at or before now (seq {n.peer.table.seq if n.peer else '?'})")
                    self.stop("spin")
                elif n.spins == SPIN + 1:
                    if self.verbose:
                        self.trace(f"adversary node {n.index} spins: its ticks at this instant are dropped")
                return
        else:
            n.spin_at, n.spins = now, 0
        self.call(n, "tick")
        self._sync_now_and_then(n, inc)
        self._person(n)
        if n.attack is not None:
            n.attack.after_input()

    def _sync_now_and_then(self, n: SimNode, inc: int) -> None:
        """net/node.py `_sync_now_and_then`, after each tick: what was written without its
        fsync (others' events, our bots') is fsynced at most SYNC_EVERY later. Without it a
        power cut took a tail the trio shell holds on disk (seed 515785: a bot-only host cut
        5 s after its peer had gone for good lost 42 events and came back in the ceremony)."""
        if n.incarnation != inc or n.peer is None or n.done or not n.disk.unsynced:
            return
        now = self.clock.now
        if now >= n.synced_at + SYNC_EVERY:
            n.disk.sync()
            n.synced_at = now
        elif n.synced_at + SYNC_EVERY < n.sync_due:
            n.sync_due = n.synced_at + SYNC_EVERY
            self.clock.at(n.sync_due, self._sync_wake, n, inc)

    def _sync_wake(self, n: SimNode, inc: int) -> None:
        """The shell's ticker wakes for the fsync: a tick, then the sync."""
        if n.incarnation != inc:
            return
        n.sync_due = float("inf")
        self._queue_tick(n)

    def _timer(self, n: SimNode, inc: int, at: float) -> None:
        if n.incarnation != inc or at != n.next_tick:
            return  # an older timer, or the node restarted meanwhile
        n.next_tick = float("inf")
        self._queue_tick(n)

    def input(self, n: SimNode, name: str, *args: Any, **kw: Any) -> None:
        """An input followed by a tick in the same batch."""
        self.call(n, name, *args, **kw)
        self._queue_tick(n)

    # ------------------------------------------------------------ actions

    def _carry_out(self, n: SimNode, inc: int, actions: list[Any]) -> None:
        if n.incarnation != inc or n.peer is None:
            return
        self._encoded = (None, b"")  # a broadcast sends one dict to many: encode it once
        cut_at = -1
        if n.cut_mid is not None and any(type(a) is Persist for a in actions):
            cut_at = self.rng.randrange(len(actions))  # the power goes after this action
        for i, a in enumerate(actions):
            if n.peer is None or n.incarnation != inc:
                return  # an earlier action ended this incarnation
            if i > cut_at >= 0:
                self._cut_now(n)
                return
            kind = type(a)
            if kind is Send:
                self._send(n, a.peer, a.msg)
            elif kind is Persist:
                self._persist(n, a.event, a.sync)
            elif kind is Timer:
                if a.at < n.next_tick:
                    n.next_tick = a.at
                    self.clock.at(a.at, self._timer, n, inc, a.at)
            elif kind is Dial:
                self._dial(n, a)
            elif kind is Close:
                self._close(n, a.peer, a.why)
            elif kind is SaveSeats:
                n.disk.save_seats(a.data)
            elif kind is Rewrite:
                n.disk.rewrite(a.events, a.superseded)
                if self.verbose:
                    self.trace(f"node {n.index} rewrites its log: {len(a.superseded)} superseded")
            elif kind is KeepFork:
                n.disk.fork = (a.first, a.second)
                if self.verbose:
                    self.trace(f"node {n.index} keeps a fork proof")
            elif kind is KeepDisagreement:
                n.disk.disagreement = a.event
                if self.verbose:
                    self.trace(f"node {n.index} keeps a disagreement proof: {a.reason[:160]}")
            elif kind is Note:
                if "\n" in a.text or "\r" in a.text:
                    self.rec.notes_multiline.append(f"node {n.index}: {a.text!r:.200}")
                if self.verbose:
                    self.trace(f"node {n.index} note: {a.text[:160]}")
            elif kind is Done:
                self._exit(n, a.stopped)
                return
            elif kind is Changed:
                pass
            else:
                raise TypeError(f"unknown action {a!r}")

    def _persist(self, n: SimNode, ev: Event, sync: bool) -> None:
        n.disk.persist(ev, sync)
        times = self.rec.events_at.setdefault(ev.id, [])
        times.append(self.clock.now)
        if n.attack is not None:
            n.attack.on_persist(ev)
        if n.honest and ev.seq + 1 > self.max_seq:
            self.max_seq = ev.seq + 1
            self.last_growth = self.clock.now
            self._fire_faults()
            if self.stranger is not None:
                self.stranger.maybe_start()

    def _send(self, n: SimNode, to: bytes, msg: dict[str, Any]) -> None:
        conn = n.conns.get(to)
        if conn is None:
            return
        try:
            if self._encoded[0] is msg:
                frame = self._encoded[1]
            else:
                frame = encode_message(msg)
                self._encoded = (msg, frame)
        except ValueError as e:
            if n.honest:
                self.rec.errors.append(f"node {n.index} asked to send a message no frame can "
                                       f"carry ({e}): {str(msg)[:200]}")
                self.stop("error")
            return
        if self.verbose:
            self.trace(f"{n.index} -> {self._name(to)} {_summary(msg)}")
        frames = [frame] if n.attack is None else n.attack.outgoing(to, msg, frame)
        for f in frames:
            self.net.send(conn, n.index, f)
        if n.honest and msg["t"] in DUPLICABLE:
            other = self.by_key.get(to)
            if other is not None:
                h = self.history.setdefault((n.index, other.index), [])
                h.append(frame)
                if len(h) > HISTORY:
                    del h[0]

    def send_frame(self, n_index: int, to: bytes, frame: bytes) -> None:
        """An adversary's raw frame on its link to `to` (dropped if there is none)."""
        n = self.nodes[n_index] if n_index < len(self.nodes) else None
        conn = n.conns.get(to) if n is not None else (
            self.stranger.conns.get(to) if self.stranger else None)
        if conn is not None:
            self.net.send(conn, n_index, frame)

    def _name(self, key: bytes) -> str:
        n = self.by_key.get(key)
        if n is not None:
            return str(n.index)
        if self.stranger is not None and key == self.stranger.key:
            return "stranger"
        return key.hex()[:8]

    # ------------------------------------------------------------ connections

    def _dial(self, n: SimNode, d: Dial) -> None:
        """A connection attempt: a machine that is off or cut off does not answer (the Peer
        hears `dial_failed` after DIAL_TIMEOUT); one whose process is dead refuses at once;
        else the handshake takes about one and a half round trips."""
        now = self.clock.now
        if self.verbose:
            self.trace(f"{n.index} dials {d.host}:{d.port}" + (f" for {self._name(d.peer)}" if d.peer else ""))
        self._try_dial(n, n.incarnation, d, now)

    def _try_dial(self, n: SimNode, inc: int, d: Dial, began: float) -> None:
        """TCP's SYN goes again 1 s and 3 s after the first: a link that comes back within
        the dial's 5 s still gives a connection; else `dial_failed` at 5 s."""
        if n.incarnation != inc or n.peer is None or n.done:
            return
        target = self.by_addr.get((d.host, d.port))
        now = self.clock.now
        if (target is None or target.index in self.net.down
                or not self.net.reachable(n.index, target.index)):
            for retry in (1.0, 3.0):
                if now < began + retry:
                    self.clock.at(began + retry, self._try_dial, n, inc, d, began)
                    return
            self.clock.at(began + DIAL_TIMEOUT, self._dial_failed, n, inc, d, None)
            return
        rtt = self.net.latency(n.index, target.index) + self.net.latency(n.index, target.index)
        if not target.alive or target.done:
            self.clock.at(now + rtt, self._dial_failed, n, n.incarnation, d, None)
            return
        self.clock.at(now + 1.5 * rtt, self._dial_done, n, n.incarnation, target,
                      target.incarnation, d)

    def _dial_failed(self, n: SimNode, inc: int, d: Dial, reason: str | None) -> None:
        if n.incarnation == inc:
            if self.verbose:
                self.trace(f"{n.index}: dial to {d.host}:{d.port} failed ({reason or 'no answer'})")
            self.input(n, "dial_failed", d.peer, d.host, d.port, reason)

    def _dial_done(self, n: SimNode, inc: int, target: SimNode, tinc: int, d: Dial) -> None:
        if n.incarnation != inc or n.peer is None or n.done:
            return
        if (target.incarnation != tinc or target.peer is None or target.done
                or not self.net.reachable(n.index, target.index)):
            self._dial_failed(n, inc, d, None)
            return
        if d.peer is not None and d.peer != target.key:
            self._dial_failed(n, inc, d, "the peer at that address holds another key")
            return
        if not self.admits(target.peer, n.key):
            self._dial_failed(n, inc, d, "this table admits only its seated peers now")
            return
        self.connect(n.index, n.key, target, dialler_node=n)

    @staticmethod
    def admits(peer: Peer, key: bytes) -> bool:
        """The accepting side's handshake gate (`Peer.expected_keys`)."""
        expected = peer.expected_keys()
        return expected is None or key in expected

    def connect(self, dialler: int, dkey: bytes, target: SimNode,
                dialler_node: SimNode | None) -> Conn | None:
        """A connection whose handshake finished, as the trio shell runs it on each end
        (net/node.py `_run_link`): an end that already holds a link to that key keeps the
        new one only if `Peer.keeps_new_link` says so (and the old one then goes without a
        `disconnected`); the accepting end turns it away if `Peer.refusal` has a message
        (sent, then closed). Each end that keeps it hears `connected`, the dialler first."""
        assert target.peer is not None
        conn = self.net.open(dialler, target.index, dialler)
        if self.verbose:
            self.trace(f"connect {self._name(dkey)} -> {target.index} (conn {conn.id})")
        self._ephemeral += 1
        src = dialler_node.host if dialler_node is not None else f"10.0.0.{dialler + 1}"
        ends: list[tuple[SimNode | None, int, bytes, tuple[str, int]]] = [
            (dialler_node, dialler, target.key, (target.host, target.port)),
            (target, target.index, dkey, (src, self._ephemeral))]
        refusal = target.peer.refusal(dkey)
        kept = 0
        for side, idx, other, remote in ends:
            if side is None:  # the stranger keeps whatever it gets
                assert self.stranger is not None
                self.stranger.conns[other] = conn
                kept += 1
                continue
            old = side.conns.get(other)
            if side is target and refusal is not None:
                self.net.send(conn, idx, encode_message(refusal))
                self.net.finish(conn, idx, "turned away")
                continue
            if old is not None and not Peer.keeps_new_link(side.key, other,
                                                           self._key_of(old.dialled_by), dkey):
                self.net.finish(conn, idx, "the older connection stays")
                continue
            if old is not None:
                self.net.finish(old, idx, "replaced by a newer connection")
            side.conns[other] = conn
            kept += 1
            self.input(side, "connected", other, dialled_by=dkey, remote=remote)
        return conn if kept == 2 else None

    def _key_of(self, index: int) -> bytes:
        if index < len(self.nodes):
            return self.nodes[index].key
        assert self.stranger is not None
        return self.stranger.key

    def _close(self, n: SimNode, to: bytes, why: str) -> None:
        conn = n.conns.pop(to, None)
        if conn is None:
            return
        if self.verbose:
            self.trace(f"{n.index} closes its link to {self._name(to)}: {why[:100]}")
        self.net.finish(conn, n.index, why)
        self.input(n, "disconnected", to, why)

    def _deliver(self, conn: Conn, to: int, frame: bytes) -> None:
        if to >= len(self.nodes):
            if self.stranger is not None:
                self.stranger.received(frame)
            return
        n = self.nodes[to]
        sender = self._key_of(conn.other(to))
        if n.conns.get(sender) is not conn:
            return
        try:
            msg = decode_frame(frame)
        except FrameError as e:
            # The real shell's receiver: a fault is named, and the stream cannot go on.
            if e.fault:
                self.input(n, "refused_frame", sender, str(e))
            if n.conns.get(sender) is conn:
                n.conns.pop(sender)
                self.net.finish(conn, to, str(e))
                self.input(n, "disconnected", sender, str(e))
            return
        self.input(n, "handle", sender, msg)

    def _ended(self, conn: Conn, end: int, why: str) -> None:
        if end >= len(self.nodes):
            if self.stranger is not None:
                self.stranger.conns = {k: c for k, c in self.stranger.conns.items() if c is not conn}
            return
        n = self.nodes[end]
        other = self._key_of(conn.other(end))
        if n.conns.get(other) is conn:
            del n.conns[other]
            if self.verbose:
                self.trace(f"{end} loses its link to {self._name(other)}: {why[:80]}")
            self.input(n, "disconnected", other, why)

    # ------------------------------------------------------------ the simulated person

    def _person(self, n: SimNode) -> None:
        """A person at node n's terminal: says ready, knocks or passes, and moves, each after
        a seeded moment of thought."""
        peer = n.peer
        if not n.person or peer is None:
            return
        if peer.table.genesis is None:
            lobby = peer.lobby
            if lobby is not None and any(c.owner == n.key and not c.ready for c in lobby.claims.values()):
                key = (b"ready", "ready")
                if n.person_at != key:
                    n.person_at = key
                    self.clock.at(self.clock.now + n.entropy.uniform(0.05, 1.0), self._person_ready,
                                  n, n.incarnation)
            return
        state = peer.table.state
        if state is None or peer.table.stage() is not Stage.PLAY:
            return
        head = peer.table.head
        d = to_act(state)
        persons = [s for s, sp in peer.players.items() if sp.bot is None]
        window = knock_window(state)
        if d is not None and d.seat in persons:
            key = (head, "move")
        elif window is not None and any(s != window.seat and s not in peer.knocks.get(head, {})
                                        for s in persons):
            key = (head, "knock")
        else:
            return
        if n.person_at != key:
            n.person_at = key
            self.clock.at(self.clock.now + n.entropy.uniform(0.1, 3.0), self._person_acts, n,
                          n.incarnation, key)

    def _person_ready(self, n: SimNode, inc: int) -> None:
        if n.incarnation == inc and n.peer is not None and n.peer.table.genesis is None:
            n.person_at = None
            self.input(n, "set_ready", True)

    def _person_acts(self, n: SimNode, inc: int, key: tuple[bytes, str]) -> None:
        peer = n.peer
        if n.incarnation != inc or peer is None or peer.table.head != key[0]:
            return
        state = peer.table.state
        assert state is not None
        d = to_act(state)
        if d is None:
            return
        persons = [s for s, sp in peer.players.items() if sp.bot is None]
        if key[1] == "move":
            if d.seat not in persons:
                return
            knocks = peer.knocks.get(key[0], {})
            moves = [m for m in legal_moves(state) if not isinstance(m, Give) or knocks.get(m.to)]
            if not moves:
                return
            move = moves[n.entropy.randrange(len(moves))]
            try:
                self.call(n, "play_move", d.seat, move)
            except Refused as e:
                self.rec.errors.append(f"node {n.index}: the person's legal move was refused: {e}")
                self.stop("error")
                return
        else:
            answered = peer.knocks.get(key[0], {})
            for seat in persons:
                if seat != d.seat and seat not in answered:
                    self.call(n, "answer_knock", seat, n.entropy.random() < 0.3)
        self._queue_tick(n)

    # ------------------------------------------------------------ faults

    def _fire_faults(self) -> None:
        while self.pending_faults and self.pending_faults[0].at_seq <= self.max_seq:
            f = self.pending_faults.pop(0)
            self.clock.at(self.clock.now, self._fault, f)

    def _count(self, kind: str) -> None:
        self.rec.faults[kind] = self.rec.faults.get(kind, 0) + 1

    def _in_setup(self) -> bool:
        """Whether some honest peer still runs the ceremony (its log has no play yet)."""
        return any(n.peer.table.stage() in SETUP_STAGES for n in self.nodes
                   if n.honest and n.peer is not None and not n.done)

    def _fault(self, f: Any) -> None:
        if self._stop:
            return
        now = self.clock.now
        kind = f.kind
        if self.verbose:
            self.trace(f"FAULT {kind} node {f.node} other {f.other} for {f.duration:.2f}s")
        if self._in_setup() and kind not in ("duplicate", "cut"):
            self.rec.setup_disturbed = True
        if kind in ("cut", "stall", "duplicate"):
            a, b = self.nodes[f.node], self.nodes[f.other]
            conn = a.conns.get(b.key) or b.conns.get(a.key)
            if conn is None:
                return  # no link between them right now: nothing to strike
            self._count(kind)
            if kind == "cut":
                self.net.reset(conn, "connection reset by peer")
            elif kind == "stall":
                self.active += 1
                self.net.block(f.node, f.other)
                self.clock.at(now + f.duration, self._unblock, f.node, f.other)
            else:
                for src, dst in ((a, b), (b, a)):
                    old = self.history.get((src.index, dst.index), [])
                    c = src.conns.get(dst.key)
                    if old and c is not None:
                        for _ in range(f.count):
                            self.net.send(c, src.index, old[self.rng.randrange(len(old))])
        elif kind == "partition":
            if self.net.groups is not None:
                return
            self._count(kind)
            self.active += 1
            self.net.partition(list(f.groups))
            self.clock.at(now + f.duration, self._heal)
        elif kind in ("kill", "powercut", "gone"):
            n = self.nodes[f.node]
            if not n.alive or n.done:
                return
            self._count(kind)
            if kind == "powercut" and self.rng.random() < 0.5:
                # The power goes while the shell carries out a Peer's actions (after a Send,
                # before the Persist that follows it, ...), at the latest 5 s from now.
                self.active += 1
                n.cut_mid = f.duration
                self.clock.at(now + 5.0, self._cut_late, n, n.incarnation)
                return
            # The seats it writes for now (a takeover may have given it more than it sat in).
            held = len(n.peer.players) if n.peer is not None and n.peer.players else None
            self._down(n, power=kind != "kill")
            if kind == "gone":
                n.gone = True
                self._absent(n, held)
            else:
                self.active += 1
                self.clock.at(now + f.duration, self._restart, n)

    def _cut_now(self, n: SimNode) -> None:
        duration = n.cut_mid
        assert duration is not None
        n.cut_mid = None
        if self.verbose:
            self.trace(f"node {n.index}: the power goes in the middle of its actions")
        self._down(n, power=True)
        self.clock.at(self.clock.now + duration, self._restart, n)

    def _cut_late(self, n: SimNode, inc: int) -> None:
        if n.cut_mid is not None and n.incarnation == inc:
            if n.alive and not n.done:
                self._cut_now(n)
            else:
                n.cut_mid = None
                self.active -= 1

    def _absent(self, n: SimNode, held: int | None = None) -> None:
        """`n` is away for good (gone, or withholding everything): its seats are absent
        (`held`: how many it wrote for when it went, if known; else those it sat in; the
        judge also counts, at the end, the seats the others see it run)."""
        self.rec.absent_seats += held if held is not None else len(self.sc.nodes[n.index].seats)
        self.rec.absent_nodes.add(n.index)
        if self._in_setup():
            self.rec.absent_in_setup = True
        else:
            self.rec.absent_in_play = True

    def _heal(self) -> None:
        self.active -= 1
        for n in self.nodes:
            n.disturbed = self.clock.now
        self.trace("HEAL")
        self.net.heal()
        self.last_growth = max(self.last_growth, self.clock.now)

    def _unblock(self, a: int, b: int) -> None:
        self.active -= 1
        self.nodes[a].disturbed = self.nodes[b].disturbed = self.clock.now
        if self.verbose:
            self.trace(f"UNBLOCK {a}-{b}")
        self.net.unblock(a, b)
        self.last_growth = max(self.last_growth, self.clock.now)

    def _down(self, n: SimNode, *, power: bool) -> None:
        n.alive = False
        n.peer = None
        n.incarnation += 1
        n.next_tick = float("inf")
        n.tick_queued = False
        n.done = False
        n.person_at = None
        n.synced_at, n.sync_due = float("-inf"), float("inf")  # a new shell's writer
        if power:
            self.net.vanish(n.index)
            self.net.down.add(n.index)
            lost = n.disk.power_cut(self.rng)
            if self.verbose:
                self.trace(f"node {n.index} loses power ({lost} unsynced events lost)")
        else:
            for key, conn in list(n.conns.items()):
                self.net.finish(conn, n.index, "the peer closed the connection")
            if self.verbose:
                self.trace(f"node {n.index} is killed")
        n.conns = {}

    def _restart(self, n: SimNode) -> None:
        self.active -= 1
        self.last_growth = max(self.last_growth, self.clock.now)
        if self._stop:
            return
        self.net.down.discard(n.index)
        for c in list(self.net.conns.values()):  # the new kernel resets what the old one held
            if n.index in (c.a, c.b):
                self.net.reset(c, "connection reset by peer")
        self.net.restart_stalled()
        if n.disk.seats is None or not n.disk.events:
            n.gone = True
            self.rec.unresumable.append(f"node {n.index}: nothing on disk to resume from")
            self._absent(n)
            return
        n.entropy = random.Random(f"{self.sc.seed}/entropy/{n.index}/{n.incarnation}")
        t0 = time.perf_counter()
        try:
            # As `allegra resume` reads the .seats file: canonically decoded, then checked.
            stored = check_seats(decode(n.disk.seats, max_size=MAX_SEATS_FILE))
            peer = Peer.resume(stored, list(n.disk.events), entropy=n.entropy.randbytes,
                               pace=self.sc.pace, person=n.person)
        except (ResumeError, SeatsFileError) as e:
            n.gone = True
            self.rec.unresumable.append(f"node {n.index}: {e}")
            self._absent(n)
            return
        except Exception:
            self._raised(n, "resume")
            return
        n.cpu += time.perf_counter() - t0
        n.peer = peer
        n.disturbed = self.clock.now
        n.alive = True
        if peer.table.stage() in SETUP_STAGES:
            # A power cut within SYNC_EVERY of the start can take the play and leave the
            # ceremony: the peer runs it again after a fault, as after one that struck in it
            # (with its only other peer gone for good, nobody can give the rest back).
            self.rec.setup_disturbed = True
        if self.verbose:
            self.trace(f"node {n.index} restarts at seq {peer.table.seq}")
        self._start_node(n, n.incarnation)

    # ------------------------------------------------------------ ending

    def honest_nodes(self) -> list[SimNode]:
        return [n for n in self.nodes if n.honest and not n.gone]

    def _exit(self, n: SimNode, stopped: str | None) -> None:
        """Done: the shell ends (net/node.py `_ticker`), and with it every link. An honest
        peer that is away at that moment (down, or cut off from the one leaving) may be left
        with nobody to finish with: it is `stranded`, and only its log's prefix is judged."""
        n.done = True
        n.stopped = stopped
        n.done_at = self.clock.now
        if self.verbose:
            self.trace(f"node {n.index} done" + (f" (stopped: {stopped})" if stopped else ""))
        for key, conn in list(n.conns.items()):
            self.net.finish(conn, n.index, "the peer left")
        n.conns = {}
        # Any peer that leaves may strand one: an adversary that plays on honestly enough to
        # finish is the only other peer an honest one has (seed 103094: it finished and left
        # while the honest peer was down).
        for o in self.nodes:
            if o is n or not o.honest or o.done or o.gone:
                continue
            away = not o.alive or not self.net.reachable(n.index, o.index)
            # Back from a fault too late: the peer that leaves waited LINGER for it.
            late = n.key not in o.conns and self.clock.now - o.disturbed <= LINGER + DIAL_TIMEOUT
            if away or late:
                o.stranded = True
        nodes = self.honest_nodes()
        if nodes and all(o.done for o in nodes):
            self.stop("done")

    def _sample(self) -> None:
        """The pending state of every honest peer against its caps."""
        mx = self.rec.maxima
        cap = self.caps
        for n in self.nodes:
            p = n.peer
            if p is None or not n.honest:
                continue
            r = p.replica
            sizes = {
                "knocks": len(p.knocks),
                "early_knocks": len(p.early_knocks),
                "replica._early": sum(len(v) for v in r._early.values()),
                "replica.peers": len(r.peers),
                "faults": len(p.faults),
                "promises": len(p.promises),
                "replica.barred": len(r.barred),
                "replica.confirmed": len(r.confirmed),
            }
            for k, v in sizes.items():
                if v > mx.get(k, 0):
                    mx[k] = v
                    if v > cap[k]:
                        self.rec.over_cap.append(f"node {n.index}: {k} holds {v} (cap {cap[k]}) "
                                                 f"at seq {p.table.seq}")


def _summary(msg: dict[str, Any]) -> str:
    t = msg.get("t")
    if t == "events":
        return f"events from {msg.get('from')} x{len(msg.get('items', []))}"
    if t == "have":
        return f"have {msg.get('seq')}"
    if t == "knock":
        return f"knock seat {msg.get('seat')}"
    return str(t)

