"""A peer's part in the fair deal (issue 12): which seats' secrets it holds, and the
tables that know them.

In a fair-deal game (a genesis with "deal": "fair") every seat's deal events (keys,
escrow, passes, shares, its secret at the end) can only be made by a table that holds
that seat's per-game secret (`Table(me=seat, secret=...)`), and only that table's engine
knows the cards the seat peeked at. The peer's own table (the replica's, which checks
and gossips every event) holds the secret of its *own* seat: the one it plays with the
node's key. A peer that plays more seats from the start (a host's `--bots`, a simulated
node with several seats) keeps one more table per such seat, fed the same log, only to
make that seat's deal events and to show its bot what the seat may see (docs/fairdeal.md,
"What is wired, and what is left"). A seat taken over from another peer is not one of
them: its deal events need the escrowed secret of its first key (not built).

Each secret derives from its seat's identity seed (`deal/derive.py` `game_secret`), so a
peer resumed from its log re-makes exactly the deal events it made before: they need no
fsync before they go out, like a bot's moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...deal.derive import game_secret
from ...deal.events import KINDS as DEAL_KINDS
from ...log.identity import Identity
from ...log.results import Owed
from ...rules import State
from ...table import Table, fold

__all__ = ["DEAL_KINDS", "SeatTables", "seat_secret"]


def seat_secret(identity: Identity, game: bytes, seat: int) -> bytes:
    """The per-game deal secret of the seat played with `identity`."""
    return game_secret(bytes(identity.key), game, seat)


@dataclass
class SeatTables:
    """One table per further seat this peer plays from the genesis on (not its own seat,
    whose secret the replica's table holds): each folds the replica's log as it grows
    and is folded anew when a takeover replaced part of that log."""

    tables: dict[int, Table] = field(default_factory=dict)

    def follow(self, log: Table, seats: dict[int, Identity]) -> None:
        """Catch every seat's table up with `log` (the replica's table). `seats`: the seats
        to hold, each with the identity that holds it in the genesis (a seat that holds
        another key now was taken over: its table is dropped)."""
        for seat in [s for s in self.tables if s not in seats]:
            del self.tables[seat]
        if log.genesis is None or not log.fair:
            return
        events = log.events
        for seat, ident in seats.items():
            t = self.tables.get(seat)
            if t is None or len(events) < t.seq or (t.seq and events[t.seq - 1].id != t.head):
                t, _ = fold((e.signed for e in events), me=seat,
                            secret=seat_secret(ident, log.events[0].game, seat))
                self.tables[seat] = t
                continue
            for e in events[t.seq:]:
                t.append(e.signed)

    def owed(self, seat: int) -> Owed | None:
        """The deal event `seat` owes now, if this peer holds a table for it."""
        t = self.tables.get(seat)
        return None if t is None else t.owed()

    def state(self, seat: int) -> State | None:
        """What `seat`'s own table knows of the game (its peeks included), if held."""
        t = self.tables.get(seat)
        return None if t is None else t.state
