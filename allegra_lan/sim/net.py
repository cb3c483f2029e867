"""The virtual clock and the simulated network: TCP-like connections between nodes.

One `Clock` orders everything by (virtual time, arrival order), so a run is a
pure function of its seed: nothing reads the real clock, nothing uses an OS
random source. A `Network` holds connections between node indices. Each
connection has two directions, each a FIFO queue of frames with an arrival
time: `send` stamps a frame with now + the link's latency + seeded jitter, but
never earlier than the frame before it on that direction (TCP keeps order
inside a connection; frames on different links overtake each other freely).

What TCP does and the model keeps:
- no frame is lost, duplicated or reordered inside a live connection;
- a partition stalls the connections across it (TCP retransmits): their
  frames wait and arrive after the heal, unless an end closes the connection
  first (the peer's silence timer), and then whatever was in flight is gone;
- a reset (`cut`) ends a connection at once for both ends: in-flight frames
  are dropped, each end hears of it after its own small delay;
- a closing end's frames already sent still arrive, then its FIN.
Loss therefore only ever happens as a connection that ends; duplication is an
old frame sent again (a replaying peer, or a shell that resends after a
reconnect), injected by the world, never by the network.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Clock", "Network", "Conn", "LinkSpec"]


class Clock:
    """A virtual clock and its agenda: callbacks run in (time, order of scheduling) order."""

    def __init__(self, start: float) -> None:
        self.now = start
        self._q: list[tuple[float, int, Callable[..., None], tuple[Any, ...]]] = []
        self._n = 0

    def at(self, when: float, fn: Callable[..., None], *args: Any) -> None:
        if when < self.now:
            when = self.now
        heapq.heappush(self._q, (when, self._n, fn, args))
        self._n += 1

    def next_time(self) -> float | None:
        return self._q[0][0] if self._q else None

    def step(self) -> bool:
        """Run the next callback; False when the agenda is empty."""
        if not self._q:
            return False
        when, _, fn, args = heapq.heappop(self._q)
        self.now = when
        fn(*args)
        return True

    def __len__(self) -> int:
        return len(self._q)


@dataclass(frozen=True)
class LinkSpec:
    """One pair of nodes' network: base one-way latency and mean extra jitter (seconds)."""

    base: float
    jitter: float


@dataclass
class _Direction:
    queue: deque[tuple[float, bytes | None, str]] = field(default_factory=deque)  # (arrive, frame, why)
    last: float = 0.0  # arrival time of the latest frame queued (FIFO)
    pump_at: float | None = None  # when a delivery of this direction is scheduled


@dataclass
class Conn:
    """One connection. `open_at[i]`: whether end i still has it (got no disconnect yet)."""

    id: int
    a: int
    b: int
    dialled_by: int
    open_at: dict[int, bool]
    dirs: dict[int, _Direction]  # keyed by the receiving end
    stalled: bool = False  # frames wait (partitioned, or one end powered off)

    def other(self, i: int) -> int:
        return self.b if i == self.a else self.a

    @property
    def live(self) -> bool:
        return self.open_at[self.a] and self.open_at[self.b]


Deliver = Callable[[Conn, int, bytes], None]  # (conn, receiving end, frame)
Ended = Callable[[Conn, int, str], None]  # (conn, end that hears of the end, why)


class Network:
    """Connections, partitions and the delivery of frames over them."""

    def __init__(self, clock: Clock, rng: random.Random, links: dict[tuple[int, int], LinkSpec],
                 deliver: Deliver, ended: Ended) -> None:
        self.clock = clock
        self.rng = rng
        self.links = links
        self.deliver = deliver
        self.ended = ended
        self.conns: dict[int, Conn] = {}
        self._ids = 0
        self.groups: list[frozenset[int]] | None = None  # a partition: who can reach whom
        self.down: set[int] = set()  # nodes powered off (frames to and from them vanish)
        self.blocked: set[tuple[int, int]] = set()  # links that carry nothing for now (a, b), a < b
        self.frames = 0  # frames delivered
        self.bytes = 0

    # ------------------------------------------------------------ reachability

    def reachable(self, a: int, b: int) -> bool:
        if a in self.down or b in self.down:
            return False
        if self.blocked and ((a, b) if a < b else (b, a)) in self.blocked:
            return False
        if self.groups is None:
            return True
        return any(a in g and b in g for g in self.groups)

    def latency(self, a: int, b: int) -> float:
        spec = self.links[(a, b) if a < b else (b, a)]
        return spec.base + self.rng.expovariate(1.0 / spec.jitter)

    # ------------------------------------------------------------ connections

    def open(self, a: int, b: int, dialled_by: int) -> Conn:
        self._ids += 1
        c = Conn(self._ids, a, b, dialled_by, {a: True, b: True}, {a: _Direction(), b: _Direction()})
        self.conns[c.id] = c
        return c

    def send(self, conn: Conn, sender: int, frame: bytes) -> None:
        """Queue a frame from `sender` to the other end (dropped if the other end is gone)."""
        to = conn.other(sender)
        if not conn.open_at.get(to) or not conn.open_at.get(sender):
            return
        self._queue(conn, to, frame, "")

    def finish(self, conn: Conn, closer: int, why: str) -> None:
        """`closer` closed its end (it has been told already): the other end hears a FIN
        after the frames already on their way; nothing more goes towards `closer`."""
        conn.open_at[closer] = False
        conn.dirs[closer].queue.clear()
        to = conn.other(closer)
        if conn.open_at.get(to):
            self._queue(conn, to, None, why)
        else:
            self.conns.pop(conn.id, None)

    def reset(self, conn: Conn, why: str) -> None:
        """A reset: in-flight frames both ways are gone; each open end hears of it soon."""
        for end in (conn.a, conn.b):
            conn.dirs[end].queue.clear()
        for end in (conn.a, conn.b):
            if conn.open_at.get(end) and end not in self.down:
                delay = self.latency(conn.a, conn.b)
                self.clock.at(self.clock.now + delay, self._end_now, conn, end, why)

    def vanish(self, node: int) -> None:
        """`node` lost power: its frames in flight and those towards it are gone; nothing
        tells the other ends (their silence timers must notice)."""
        for c in list(self.conns.values()):
            if node in (c.a, c.b):
                for end in (c.a, c.b):
                    c.dirs[end].queue.clear()
                c.open_at[node] = False

    def _end_now(self, conn: Conn, end: int, why: str) -> None:
        if conn.open_at.get(end):
            conn.open_at[end] = False
            if not any(conn.open_at.values()):
                self.conns.pop(conn.id, None)
            self.ended(conn, end, why)

    def _queue(self, conn: Conn, to: int, frame: bytes | None, why: str) -> None:
        d = conn.dirs[to]
        arrive = max(self.clock.now + self.latency(conn.a, conn.b), d.last)
        d.last = arrive
        d.queue.append((arrive, frame, why))
        if d.pump_at is None or arrive < d.pump_at:
            d.pump_at = arrive
            self.clock.at(arrive, self._pump, conn, to)

    def _pump(self, conn: Conn, to: int) -> None:
        d = conn.dirs[to]
        now = self.clock.now
        if d.pump_at is not None and d.pump_at > now:
            return  # a later pump was scheduled in its place
        d.pump_at = None
        frm = conn.other(to)
        if not self.reachable(frm, to):
            return  # stalled: `heal` pumps again
        while d.queue and d.queue[0][0] <= now:
            _, frame, why = d.queue.popleft()
            if not conn.open_at.get(to):
                d.queue.clear()
                return
            if frame is None:
                self._end_now(conn, to, why)
                return
            self.frames += 1
            self.bytes += len(frame)
            self.deliver(conn, to, frame)
        if d.queue:
            d.pump_at = d.queue[0][0]
            self.clock.at(d.pump_at, self._pump, conn, to)

    # ------------------------------------------------------------ partitions

    def partition(self, groups: list[frozenset[int]]) -> None:
        self.groups = groups

    def heal(self) -> None:
        """Everyone reaches everyone again: stalled frames go on, no earlier than now + latency."""
        self.groups = None
        self.restart_stalled()

    def block(self, a: int, b: int) -> None:
        self.blocked.add((a, b) if a < b else (b, a))

    def unblock(self, a: int, b: int) -> None:
        self.blocked.discard((a, b) if a < b else (b, a))
        self.restart_stalled()

    def restart_stalled(self) -> None:
        now = self.clock.now
        for c in list(self.conns.values()):
            for to, d in c.dirs.items():
                if d.queue and d.pump_at is None and self.reachable(c.other(to), to):
                    lat = self.latency(c.a, c.b)
                    shifted = deque((max(t, now + lat), f, w) for t, f, w in d.queue)
                    # arrival times stay in order: each is at least the one before it
                    last = 0.0
                    fixed: deque[tuple[float, bytes | None, str]] = deque()
                    for t, f, w in shifted:
                        last = max(last, t)
                        fixed.append((last, f, w))
                    d.queue = fixed
                    d.last = max(d.last, last)
                    d.pump_at = d.queue[0][0]
                    self.clock.at(d.pump_at, self._pump, c, to)
