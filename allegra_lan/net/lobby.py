"""The lobby before a game: who sits where, who runs which seat, who is ready.

Pure data and rules (no sockets). The host keeps the one true `Lobby` and
sends it to every peer whenever it changes; peers ask to sit, to leave and to
be ready. When every seat is taken and ready, the host writes the genesis in
seat order and the game's log takes over from here.

The lobby message and a seat claim have one schema each (`LOBBY`, `CLAIM`),
and `Lobby.from_msg` rebuilds a lobby only through `sit`, so a lobby from the
wire (or from a `.seats` file) holds the same invariants as the host's own:
seats 0 to seats-1, each once, seat 0 the host's, one key per seat, and an
address (an IPv4 address and a port 1-65535) only for a peer that holds a
seat, since every peer dials every address in it (issue 9, finding 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..log.ceremony import MAX_NAME, Genesis, SeatInfo
from ..log.schema import (
    KEY, PORT, SEAT, AnyMap, Array, Bool, Bytes, Int, IPv4, Map, Maybe, OneOf, SchemaError, Text,
    Tuple,
)
from ..rules import RulesetError, ruleset_from_dict


MAX_TAKEOVER = 3600
MAX_SEATS = 16
MAX_BOT = 32  # bytes of a bot's name
TABLE_ID_LEN = 16

NAME = Text(MAX_NAME, lo=1, line=True)  # as the genesis will require (log/ceremony.py)
CLAIM = Map({"name": NAME, "key": KEY, "owner": KEY, "bot": Text(MAX_BOT), "ready": Bool()})
# Which deal the host's genesis will name (log/ceremony.py Genesis.deal). A lobby message
# carries "deal" only for the fair deal, so a seeded table's lobby is what it always was.
DEALS = ("fair", "seeded")
LOBBY = Map({
    "t": OneOf(("lobby",)), "table": Bytes(TABLE_ID_LEN), "name": NAME, "ruleset": AnyMap(32),
    "seats": Int(1, MAX_SEATS), "host": KEY, "pin": Bool(), "spectators": Bool(),
    "takeover": Int(0, MAX_TAKEOVER),
    "claims": Array(Tuple((SEAT, CLAIM)), MAX_SEATS),
    "addresses": Array(Tuple((KEY, IPv4(), PORT)), MAX_SEATS),
    "deal": OneOf(DEALS),
}, optional=frozenset({"deal"}))
# A guest's request for seats (nil: the first free one) and the port it listens on; the
# host takes the address from the connection itself, never from this message.
SIT = Map({"t": OneOf(("sit",)), "claims": Array(Tuple((Maybe(SEAT), CLAIM)), MAX_SEATS, lo=1),
           "address": Tuple((IPv4(), PORT))})
READY = Map({"t": OneOf(("ready",)), "ready": Bool()})


class LobbyError(ValueError):
    """A lobby request that cannot be granted; the message says why in one line."""


@dataclass
class Claim:
    """A taken seat: its player's name and key, and the peer (owner key) that plays it."""

    name: str
    key: bytes
    owner: bytes
    bot: str | None = None  # a bot run by the owner, or None for a person
    ready: bool = False

    def to_msg(self) -> dict[str, Any]:
        return {"name": self.name, "key": self.key, "owner": self.owner,
                "bot": self.bot or "", "ready": self.ready}

    @classmethod
    def from_msg(cls, m: Any) -> "Claim":
        try:
            CLAIM.check(m)
        except SchemaError as e:
            raise LobbyError(f"a malformed seat claim: {e}") from None
        return cls(m["name"], m["key"], m["owner"], m["bot"] or None, m["ready"])


@dataclass
class Lobby:
    table_id: bytes
    name: str
    ruleset: dict[str, Any]
    seats: int
    host: bytes  # the host's key: it holds seat 0 and writes the genesis
    pin: bool = False
    spectators: bool = False
    takeover: int = 0  # seconds a seat's peer may be gone before a bot may take it (0: never)
    claims: dict[int, Claim] = field(default_factory=dict)
    addresses: dict[bytes, tuple[str, int]] = field(default_factory=dict)  # owner -> where it listens
    deal: str = "seeded"  # the deal the genesis names: the host decides, guests follow the genesis

    def __post_init__(self) -> None:
        rs = ruleset_from_dict(self.ruleset)
        rs.check_players(self.seats)
        if self.deal not in DEALS:
            raise LobbyError(f"the deal is one of {', '.join(DEALS)}, not {self.deal!r}")
        if type(self.takeover) is not int or not 0 <= self.takeover <= MAX_TAKEOVER:
            raise LobbyError(f"the takeover time must be 0 to {MAX_TAKEOVER} seconds")

    @property
    def taken(self) -> int:
        return len(self.claims)

    def free_seats(self) -> list[int]:
        return [s for s in range(self.seats) if s not in self.claims]

    def sit(self, seat: int, claim: Claim) -> None:
        if not 0 <= seat < self.seats:
            raise LobbyError(f"there is no seat {seat} at this table (seats 0 to {self.seats - 1})")
        if seat in self.claims and self.claims[seat].owner != claim.owner:
            raise LobbyError(f"seat {seat} is taken by {self.claims[seat].name}")
        if seat == 0 and claim.owner != self.host:
            raise LobbyError("seat 0 is the host's")
        for s, c in self.claims.items():
            if s != seat and c.key == claim.key:
                raise LobbyError(f"that key already sits at seat {s}")
        self.claims[seat] = claim

    def leave(self, owner: bytes) -> list[int]:
        """Every seat `owner` runs is freed (a peer that left or dropped before the start)."""
        gone = [s for s, c in self.claims.items() if c.owner == owner]
        for s in gone:
            del self.claims[s]
        self.addresses.pop(owner, None)
        return gone

    def set_ready(self, owner: bytes, ready: bool) -> None:
        mine = [c for c in self.claims.values() if c.owner == owner]
        if not mine:
            raise LobbyError("you hold no seat at this table")
        for c in mine:
            c.ready = ready

    def all_ready(self) -> bool:
        return len(self.claims) == self.seats and all(c.ready for c in self.claims.values())

    def genesis(self) -> Genesis:
        if not self.all_ready():
            raise LobbyError("not every seat is taken and ready")
        return Genesis(self.name, self.ruleset,
                       tuple(SeatInfo(self.claims[s].name, self.claims[s].key) for s in range(self.seats)),
                       deal=self.deal)

    def owners(self) -> set[bytes]:
        return {c.owner for c in self.claims.values()}

    def to_msg(self) -> dict[str, Any]:
        return {
            "t": "lobby", "table": self.table_id, "name": self.name, "ruleset": self.ruleset,
            "seats": self.seats, "host": self.host, "pin": self.pin, "spectators": self.spectators,
            "takeover": self.takeover,
            "claims": [[s, c.to_msg()] for s, c in sorted(self.claims.items())],
            "addresses": [[k, h, p] for k, (h, p) in sorted(self.addresses.items())],
            **({"deal": self.deal} if self.deal != "seeded" else {}),
        }

    @classmethod
    def from_msg(cls, m: Any) -> "Lobby":
        """The lobby a message describes; LobbyError (one line) for anything else."""
        try:
            LOBBY.check(m)
        except SchemaError as e:
            raise LobbyError(f"a malformed lobby message: {e}") from None
        try:
            lobby = cls(m["table"], m["name"], m["ruleset"], m["seats"], m["host"],
                        m["pin"], m["spectators"], m["takeover"], deal=m.get("deal", "seeded"))
        except RulesetError as e:
            raise LobbyError(f"a lobby with a bad ruleset: {e}") from None
        for seat, c in m["claims"]:
            if seat in lobby.claims:
                raise LobbyError(f"seat {seat} is claimed twice")
            lobby.sit(seat, Claim.from_msg(c))  # the host's own rules: a seat that exists, ...
        owners = lobby.owners()
        for key, host, port in m["addresses"]:
            if key in lobby.addresses:
                raise LobbyError("a peer has two addresses")
            if key not in owners:
                raise LobbyError("an address for a key that holds no seat")
            lobby.addresses[key] = (host, port)
        return lobby
