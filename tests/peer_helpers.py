"""What the sans-I/O peer tests share (tests/test_peer.py, tests/test_peer_fair.py): a seeded
entropy, named identities, a Disk that keeps what a shell would have written, and a clock of
the test's own that ticks a Peer until it is done."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from allegra_lan.log.codec import decode
from allegra_lan.log.envelope import decode_event
from allegra_lan.log.identity import Identity
from allegra_lan.net.actions import Action, Note, Persist, SaveSeats, Timer
from allegra_lan.net.lobby import Claim
from allegra_lan.net.peer import Peer, SeatSpec
from allegra_lan.net.seats_file import check_seats

TABLE = b"\x11" * 16


def entropy(seed: str) -> Any:
    """A seeded stand-in for os.urandom: what makes a Peer's run repeatable."""
    counter = [0]

    def draw(n: int) -> bytes:
        counter[0] += 1
        return hashlib.shake_256(f"{seed}/{counter[0]}".encode()).digest(n)

    return draw


def seats_of(data: bytes) -> Any:
    return check_seats(decode(data, max_size=1 << 20))


def ident(name: str) -> Identity:
    return Identity.from_seed(hashlib.sha256(name.encode()).digest())


@dataclass
class Disk:
    """What a shell would have written: every persisted event (and whether it was synced)
    and the last .seats file."""

    events: list[tuple[bytes, bool]] = field(default_factory=list)
    seats: bytes | None = None
    notes: list[str] = field(default_factory=list)

    def take(self, actions: list[Action]) -> float | None:
        at = None
        for a in actions:
            if isinstance(a, Persist):
                self.events.append((a.event.signed, a.sync))
            elif isinstance(a, SaveSeats):
                self.seats = a.data
            elif isinstance(a, Note):
                self.notes.append(a.text)
            elif isinstance(a, Timer):
                at = a.at if at is None else min(at, a.at)
        return at


def alone(variant: str, players: int, *, seed: str = "alone", bots: str = "greedy") -> Peer:
    """A host that plays every seat of its table with bots: it needs nobody."""
    seats = [SeatSpec(f"{bots} {i}", bots) for i in range(players)]
    return Peer.host(ident(f"{seed}/host"), variant=variant, players=players, table_name="alone",
                     seats=seats, table_id=TABLE, entropy=entropy(seed), options={"rounds": 1})


def run(peer: Peer, disk: Disk, *, now: float = 0.0, stop_after: int | None = None,
        steps: int = 20_000) -> float:
    """Tick `peer` on a clock of ours until it is done (or has persisted `stop_after` events)."""
    disk.take(peer.listening(now, "10.0.0.1", 4000))
    for _ in range(steps):
        if peer.gone or (stop_after is not None and len(disk.events) >= stop_after):
            return now
        at = disk.take(peer.tick(now))
        now = max(now, at if at is not None else now + 1.0)
    raise AssertionError(f"not done after {steps} ticks: seq {peer.table.seq}")


def timeless(signed: bytes) -> Any:
    """An event as a comparison of two runs sees it: a result without its clock, else bytes."""
    ev = decode_event(signed)
    if ev.kind != "result":
        return signed
    return (ev.seq, ev.author, {k: v for k, v in ev.body.items() if k != "at"})


def two_seats_one_person(deal: str = "seeded") -> tuple[Peer, bytes]:
    """A host whose seat 0 is its person and seat 1 a guest's (linked), in play."""
    me, guest = ident("person"), ident("guest")
    peer = Peer.host(me, variant="grande", players=2, table_name="t",
                     seats=[SeatSpec("ann", None)], table_id=TABLE, entropy=entropy("person"),
                     options={"rounds": 1}, deal=deal)
    assert peer.lobby is not None
    peer.listening(0.0, "10.0.0.1", 4000)
    peer.connected(0.0, guest.public, dialled_by=guest.public, remote=("10.0.0.2", 5000))
    peer.lobby.sit(1, Claim("bob", guest.public, guest.public, None, True))
    peer.lobby.addresses[guest.public] = ("10.0.0.2", 4001)
    peer.set_ready(0.0, True)
    return peer, guest.public
