"""A simulated peer's disk: its replay (events, each fsynced or not) and its .seats file.

This is what a killed peer comes back from. The trio shell appends an event
for every `Persist` and fsyncs it at once only when `sync` is True (a person's
own move), the others at most SYNC_EVERY later (`sync()`, called by the world
as net/node.py `_sync_now_and_then` does); a `Rewrite` and a `SaveSeats` are
written whole and renamed, so they are durable when done. What a crash takes:
- a process kill (SIGKILL, a crash of the program): nothing; every write had
  reached the kernel, which writes it out later;
- a power cut or a crash of the machine: the events appended after the last
  fsync may be lost, as a tail (a log file loses its end, not its middle).
  How much of that tail survives is drawn from the run's seed.
Since the replay is only ever appended to or replaced whole, the events that
survive are always a prefix of what was written.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..log.envelope import Event

__all__ = ["Disk"]


@dataclass
class Disk:
    events: list[bytes] = field(default_factory=list)
    durable: int = 0  # how many of `events` are fsynced (a prefix)
    seats: bytes | None = None  # the last SaveSeats (written whole: always durable)
    superseded: list[bytes] = field(default_factory=list)
    fork: tuple[bytes, bytes] | None = None
    disagreement: bytes | None = None  # a signed result our engine refused (the proof)
    lost: int = 0  # events a power cut took, over the run

    def persist(self, event: Event, sync: bool) -> None:
        self.events.append(event.signed)
        if sync:
            self.durable = len(self.events)

    @property
    def unsynced(self) -> int:
        return len(self.events) - self.durable

    def sync(self) -> None:
        """fsync: every event written so far is durable (ReplayWriter.sync)."""
        self.durable = len(self.events)

    def rewrite(self, events: tuple[bytes, ...], superseded: tuple[bytes, ...]) -> None:
        self.events = list(events)
        self.durable = len(self.events)
        self.superseded.extend(superseded)

    def save_seats(self, data: bytes) -> None:
        self.seats = data

    def power_cut(self, rng: random.Random) -> int:
        """Lose a seeded part of the unsynced tail; returns how many events were lost."""
        tail = len(self.events) - self.durable
        if tail <= 0:
            return 0
        keep = rng.randint(0, tail)
        lost = tail - keep
        del self.events[self.durable + keep:]
        self.durable = len(self.events)  # what survived a reboot is on the platter now
        self.lost += lost
        return lost
