"""The lobby before a game: who sits where, who runs which seat, who is ready.

Pure data and rules (no sockets). The host keeps the one true `Lobby` and
sends it to every peer whenever it changes; peers ask to sit, to leave and to
be ready. When every seat is taken and ready, the host writes the genesis in
seat order and the game's log takes over from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..log.ceremony import MAX_NAME, Genesis, SeatInfo
from ..rules import ruleset_from_dict


MAX_TAKEOVER = 3600


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
        if not isinstance(m, dict):
            raise LobbyError("a seat claim must be a map")
        name, key, owner, bot, ready = (m.get(k) for k in ("name", "key", "owner", "bot", "ready"))
        if not isinstance(name, str) or not 0 < len(name.encode()) <= MAX_NAME:
            raise LobbyError("a seat's name must be 1 to 64 bytes")
        if not isinstance(key, bytes) or len(key) != 32 or not isinstance(owner, bytes) or len(owner) != 32:
            raise LobbyError("a seat's key and owner must be 32-byte keys")
        if not isinstance(bot, str) or not isinstance(ready, bool):
            raise LobbyError("a seat claim has a malformed bot or ready field")
        return cls(name, key, owner, bot or None, ready)


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

    def __post_init__(self) -> None:
        rs = ruleset_from_dict(self.ruleset)
        rs.check_players(self.seats)
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
                       tuple(SeatInfo(self.claims[s].name, self.claims[s].key) for s in range(self.seats)))

    def owners(self) -> set[bytes]:
        return {c.owner for c in self.claims.values()}

    def to_msg(self) -> dict[str, Any]:
        return {
            "t": "lobby", "table": self.table_id, "name": self.name, "ruleset": self.ruleset,
            "seats": self.seats, "host": self.host, "pin": self.pin, "spectators": self.spectators,
            "takeover": self.takeover,
            "claims": [[s, c.to_msg()] for s, c in sorted(self.claims.items())],
            "addresses": [[k, h, p] for k, (h, p) in sorted(self.addresses.items())],
        }

    @classmethod
    def from_msg(cls, m: dict[str, Any]) -> "Lobby":
        try:
            lobby = cls(m["table"], m["name"], m["ruleset"], m["seats"], m["host"],
                        bool(m["pin"]), bool(m["spectators"]), m["takeover"])
            for seat, c in m["claims"]:
                lobby.claims[int(seat)] = Claim.from_msg(c)
            for key, host, port in m["addresses"]:
                if not isinstance(key, bytes) or not isinstance(host, str) or not isinstance(port, int):
                    raise LobbyError("a malformed address")
                lobby.addresses[key] = (host, port)
        except LobbyError:
            raise
        except (KeyError, TypeError, ValueError) as e:
            raise LobbyError(f"a malformed lobby message ({e})") from None
        return lobby
