"""An in-memory network of `Replica`s on a virtual clock, for the gossip tests.

Each replica is named ("a", "B", ...) and known to the others by a 32-byte key
derived from its name, as a node is by its node key (a `links` message names
keys). Messages travel in order on each direction of a link, each after a
latency (plus a seeded jitter, so copies over different links can overtake
each other); a link that is cut drops what is on its way, and a link that comes
back is a new connection (nothing of the old one arrives on it). The clock moves
only in `run`, from one delivery or replica timer to the next.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from typing import Any, Hashable

from allegra_lan.net.sync import Replica, Send
from allegra_lan.table import Table


def key_of(name: str) -> bytes:
    return hashlib.sha256(b"bus peer " + name.encode()).digest()


class Bus:
    """Delivers sends between replicas, with links that can be cut and come back."""

    def __init__(self, names: list[str], *, latency: float = 0.001, jitter: float = 0.0,
                 seed: int = 0) -> None:
        self.r = {n: Replica(Table()) for n in names}
        self.keys = {n: key_of(n) for n in names}
        self.names = {k: n for n, k in self.keys.items()}
        self.latency, self.jitter = latency, jitter
        self.rng = random.Random(seed)
        self.now = 0.0
        self.up: set[frozenset[str]] = set()
        self.epoch: dict[frozenset[str], int] = {}
        self.q: list[tuple[float, int, str, str, int, dict[str, Any]]] = []
        self._last: dict[tuple[str, str], float] = {}  # per direction: messages stay in order
        self._count = 0
        self.copies = 0  # events carried by `events` messages put on a link
        self.delivered: list[tuple[str, str, dict[str, Any]]] = []  # (src, dst, msg), in order

    def key(self, name: str) -> bytes:
        return self.keys[name]

    def name(self, peer: Hashable) -> str:
        return peer if isinstance(peer, str) and peer in self.r else self.names[peer]  # type: ignore[index]

    def linked(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.up

    def link(self, a: str, b: str) -> None:
        pair = frozenset((a, b))
        if pair in self.up:
            return
        self.up.add(pair)
        self.epoch[pair] = self.epoch.get(pair, 0) + 1
        self.push(a, self.r[a].connected(self.keys[b], self.now))
        self.push(b, self.r[b].connected(self.keys[a], self.now))

    def cut(self, a: str, b: str) -> None:
        pair = frozenset((a, b))
        if pair not in self.up:
            return
        self.up.discard(pair)
        self.epoch[pair] += 1
        self.push(a, self.r[a].disconnected(self.keys[b], self.now))
        self.push(b, self.r[b].disconnected(self.keys[a], self.now))

    def push(self, src: str, sends: list[Send]) -> None:
        """Put sends on their links (a send to a peer with no link is dropped)."""
        for dst, msg in sends:
            d = self.name(dst)
            pair = frozenset((src, d))
            if pair not in self.up:
                continue
            at = self.now + self.latency + (self.rng.uniform(0, self.jitter) if self.jitter else 0.0)
            at = max(at, self._last.get((src, d), 0.0))
            self._last[(src, d)] = at
            self._count += 1
            heapq.heappush(self.q, (at, self._count, src, d, self.epoch[pair], msg))
            if msg.get("t") == "events":
                self.copies += len(msg["items"])

    def publish(self, name: str, signed: bytes) -> None:
        self.push(name, self.r[name].publish(signed, self.now))

    def run(self, for_seconds: float | None = None, limit: int = 200_000) -> None:
        """Deliver and fire timers in time order: until nothing is left to do, or for
        `for_seconds` of virtual time (then the clock stands at the end of that span)."""
        end = None if for_seconds is None else self.now + for_seconds
        for _ in range(limit):
            timers = [(t, n) for n, r in self.r.items() if (t := r.next_deadline()) is not None]
            next_timer = min(timers)[0] if timers else None
            next_msg = self.q[0][0] if self.q else None
            times = [t for t in (next_timer, next_msg) if t is not None]
            if not times or (end is not None and min(times) > end):
                if end is not None:
                    self.now = max(self.now, end)
                return
            self.now = max(self.now, min(times))
            if next_msg is not None and next_msg <= self.now:
                _, _, src, dst, epoch, msg = heapq.heappop(self.q)
                if self.epoch.get(frozenset((src, dst))) != epoch or not self.linked(src, dst):
                    continue  # the connection it was sent on is gone
                self.delivered.append((src, dst, msg))
                self.push(dst, self.r[dst].received(self.keys[src], msg, self.now))
            else:
                for t, n in timers:
                    if t <= self.now:
                        self.push(n, self.r[n].tick(self.now))
        raise AssertionError("the bus did not settle")
