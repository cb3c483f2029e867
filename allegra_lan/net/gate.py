"""The door of a listening peer: how many strangers may be half-way in, and what to do when
the process runs out of file descriptors.

Pure bookkeeping (no sockets, no clock: `now` is an argument), so every rule can be tested
alone. Why these rules exist:

- Before a connection has finished its handshake we know nothing of who opened it, yet it
  costs a task, a socket and a frame buffer. An attacker who opens thousands of them and
  sends the start of a large frame on each made a host hold 230 MB. So at most
  `max_pending` connections may be in their handshake at once, and at most
  `max_per_source` from one address, so one machine cannot crowd out the others; the
  handshake itself reads frames of at most `HANDSHAKE_MAX_FRAME` bytes and has a deadline
  (net/handshake.py), so each one costs little and not for long.
- Once authenticated, a key that holds no seat (someone browsing the lobby, a spectator)
  is still a stranger: at most `max_watchers` such links at once.
- `accept()` fails with EMFILE/ENFILE (or ENOBUFS/ENOMEM) when the process or the system is
  out of descriptors. The connection stays in the kernel's queue, so retrying at once spins;
  trio's own accept loop logs a traceback each time. We back off (doubling, up to a second)
  and say so once per burst, then once more when accepting works again.
- Notes about refused strangers come at most once per `NOTE_EVERY` seconds, with counts: a
  flood must not become a flood of lines on the players' screens.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

MAX_PENDING = 64  # connections in their handshake at once, in all
MAX_PER_SOURCE = 8  # of them from one address
MAX_WATCHERS = 16  # authenticated links of keys that hold no seat
HANDSHAKE_MAX_FRAME = 4096  # bytes: the largest handshake message is a few hundred
NOTE_EVERY = 5.0  # seconds between two notes about refused connections
BACKOFF_FIRST = 0.05  # seconds to wait after accept() first fails for lack of resources
BACKOFF_MAX = 1.0


@dataclass(frozen=True)
class Admission:
    """The gate's answer to a new connection: its ticket (None: refused, `why` says why),
    and the ticket of an older stranger to cut off to make room for it."""

    ticket: int | None
    evict: int | None = None
    why: str | None = None


@dataclass
class Gate:
    """Counts the connections still in their handshake, by source address.

    When every place is taken, a newcomer is not turned away: the oldest handshake of the
    source with the most of them makes room. An honest handshake takes a few round trips,
    a flood's connections idle until their deadline, so a flood from many addresses evicts
    itself and a player who joins meanwhile still gets in; one address can never hold more
    than `max_per_source`."""

    max_pending: int = MAX_PENDING
    max_per_source: int = MAX_PER_SOURCE
    pending: dict[str, list[int]] = field(default_factory=dict)  # source -> tickets, oldest first
    refused: dict[str, int] = field(default_factory=dict)  # since the last note, by source
    noted_at: float = float("-inf")
    _next: int = 0

    @property
    def total(self) -> int:
        return sum(len(t) for t in self.pending.values())

    def enter(self, source: str) -> Admission:
        """Let a new connection from `source` start its handshake, or say why not."""
        mine = self.pending.setdefault(source, [])
        if len(mine) >= self.max_per_source:
            self._count_refused(source)
            return Admission(None, why=f"{self.max_per_source} connections from {source} are "
                                       "already in their handshake")
        evict = None
        if self.total >= self.max_pending:
            crowd = max(self.pending.values(), key=lambda t: (len(t), -t[0] if t else 0))
            evict = crowd.pop(0)
            self._count_refused(next(s for s, t in self.pending.items() if t is crowd))
        self._next += 1
        mine.append(self._next)
        self._drop_empty()
        return Admission(self._next, evict,
                         None if evict is None else f"{self.max_pending} connections were in "
                                                    "their handshake: the oldest made room")

    def leave(self, source: str, ticket: int) -> None:
        """A connection finished its handshake, well or not (or was evicted)."""
        tickets = self.pending.get(source)
        if tickets is not None and ticket in tickets:
            tickets.remove(ticket)
        self._drop_empty()

    def _drop_empty(self) -> None:
        for s in [s for s, t in self.pending.items() if not t]:
            del self.pending[s]

    def _count_refused(self, source: str) -> None:
        if len(self.refused) < self.max_pending or source in self.refused:  # bounded too
            self.refused[source] = self.refused.get(source, 0) + 1

    def note(self, now: float, why: str) -> str | None:
        """The line to show about refused connections, at most once per NOTE_EVERY seconds."""
        if not self.refused or now < self.noted_at + NOTE_EVERY:
            return None
        count = sum(self.refused.values())
        sources = sorted(self.refused, key=lambda s: -self.refused[s])
        shown = ", ".join(f"{s} ({self.refused[s]})" for s in sources[:3])
        more = f" and {len(sources) - 3} more" if len(sources) > 3 else ""
        self.refused.clear()
        self.noted_at = now
        return f"refused or cut off {count} unfinished connection(s) from {shown}{more}: {why}"


@dataclass
class Throttle:
    """At most one line per NOTE_EVERY seconds about one kind of event (a refused handshake):
    the first of a quiet spell is said at once, the rest are counted into the next line."""

    said_at: float = float("-inf")
    held: int = 0

    def note(self, now: float, text: str) -> str | None:
        if now < self.said_at + NOTE_EVERY:
            self.held += 1
            return None
        more = f" (and {self.held} more like it in the last {now - self.said_at:.0f} s)" \
            if self.held else ""
        self.said_at, self.held = now, 0
        return text + more


@dataclass
class AcceptBackoff:
    """How long to wait after accept() fails, and what to say about it."""

    delay: float = 0.0
    failures: int = 0

    def failed(self, err: OSError) -> tuple[float, str | None]:
        """The seconds to wait before the next accept, and a line for the first failure of a
        burst. Any OSError backs off: the listening socket stays, so a later accept may work."""
        self.failures += 1
        self.delay = BACKOFF_FIRST if self.delay == 0 else min(BACKOFF_MAX, self.delay * 2)
        if self.failures > 1:
            return self.delay, None
        code = errno.errorcode.get(err.errno or 0, "an error")
        what = ("out of file descriptors" if err.errno in (errno.EMFILE, errno.ENFILE)
                else os.strerror(err.errno) if err.errno else str(err) or type(err).__name__)
        return self.delay, (f"cannot accept connections: {what} ({code}); "
                            "waiting and trying again")

    def succeeded(self) -> str | None:
        """A connection was accepted: the line to say if accepting had been failing."""
        if not self.failures:
            return None
        n, self.failures, self.delay = self.failures, 0, 0.0
        return f"accepting connections again (accept failed {n} time(s))"


__all__ = ["Gate", "Admission", "Throttle", "AcceptBackoff", "MAX_PENDING", "MAX_PER_SOURCE", "MAX_WATCHERS",
           "HANDSHAKE_MAX_FRAME"]
