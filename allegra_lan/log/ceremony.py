"""The setup events of a game and the seed ceremony (DESIGN.md, "Randomness").

The log of an n-seat game opens with:
  seq 0            genesis  by seat 0: table name, ruleset, seats (name, key)
  seq 1 .. n       accept   by seat 0 .. n-1, in seat order
  seq n+1 .. 2n    commit   by seat 0 .. n-1: BLAKE2b-256 of a fresh 32-byte nonce
  seq 2n+1 .. 3n   reveal   by seat 0 .. n-1: the nonce itself
Every commit precedes every reveal, so no seat can choose its nonce after
seeing another's, and the seed is a hash of all of them: nobody chooses the deal.
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from dataclasses import dataclass
from typing import Any

NONCE_LEN = 32
MAX_NAME = 64  # bytes of a seat or table name, UTF-8


class SetupError(ValueError):
    """A setup event whose body is wrong; the message names the field."""


@dataclass(frozen=True)
class SeatInfo:
    name: str
    key: bytes


@dataclass(frozen=True)
class Genesis:
    table: str
    ruleset: dict[str, Any]
    seats: tuple[SeatInfo, ...]
    # ms since the Unix epoch, UTC, by seat 0's clock: a genesis with it begins a log with
    # signed results (log/results.py); None in an older log, whose body has no such field.
    started: int | None = None
    # Which deal the game uses: "seeded" (the seed of the ceremony fixes every card: local
    # games, `simulate`, older logs, whose body has no such field) or "fair" (the cards are
    # dealt by the seats' cryptography, docs/fairdeal.md; the body says "deal": "fair").
    deal: str = "seeded"

    @property
    def fair(self) -> bool:
        return self.deal == "fair"

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "table": self.table,
            "ruleset": self.ruleset,
            "seats": [{"name": s.name, "key": s.key} for s in self.seats],
        }
        if self.started is not None:
            body["started"] = self.started
        if self.fair:
            body["deal"] = "fair"
        return body


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value.encode("utf-8")) > MAX_NAME:
        raise SetupError(f"{what} must be a name of 1 to {MAX_NAME} bytes")
    if not value.isprintable():  # controls (C0, DEL, C1), line breaks, bidi overrides
        raise SetupError(f"{what} must not contain control characters")
    return value


def read_genesis(body: dict[str, Any]) -> Genesis:
    if set(body) - {"started", "deal"} != {"table", "ruleset", "seats"}:
        raise SetupError("genesis body must have exactly table, ruleset and seats (and started, deal)")
    deal = body.get("deal", "seeded")
    if "deal" in body and deal != "fair":
        raise SetupError("the genesis's deal, where it is named, is \"fair\"")
    started = body.get("started")
    if started is not None and type(started) is not int:
        raise SetupError("the genesis's started must be an integer")
    table = _name(body["table"], "the table name")
    if not isinstance(body["ruleset"], dict):
        raise SetupError("genesis ruleset must be a map")
    seats_raw = body["seats"]
    if not isinstance(seats_raw, list) or not 1 <= len(seats_raw) <= 16:
        raise SetupError("genesis seats must be a list of 1 to 16 seats")
    seats = []
    for i, s in enumerate(seats_raw):
        if not isinstance(s, dict) or set(s) != {"name", "key"}:
            raise SetupError(f"seat {i} must have exactly a name and a key")
        if not isinstance(s["key"], bytes) or len(s["key"]) != 32:
            raise SetupError(f"seat {i}'s key must be 32 bytes")
        seats.append(SeatInfo(_name(s["name"], f"seat {i}'s name"), s["key"]))
    if len({s.key for s in seats}) != len(seats):
        raise SetupError("two seats have the same key")
    return Genesis(table, body["ruleset"], tuple(seats), started, deal)


def commitment(nonce: bytes) -> bytes:
    return blake2b(b"allegra-lan/commit/v1" + nonce, digest_size=32).digest()


def derive_seed(game: bytes, nonces: list[bytes]) -> bytes:
    """The game seed: BLAKE2b-256 over the game id and the revealed nonces in seat order."""
    h = blake2b(digest_size=32)
    h.update(b"allegra-lan/seed/v1")
    h.update(game)
    for nonce in nonces:
        h.update(nonce)
    return h.digest()


def read_commit(body: dict[str, Any]) -> bytes:
    if set(body) != {"commit"} or not isinstance(body["commit"], bytes) or len(body["commit"]) != 32:
        raise SetupError("a commit body is {commit: 32 bytes}")
    return body["commit"]


def read_reveal(body: dict[str, Any]) -> bytes:
    if set(body) != {"nonce"} or not isinstance(body["nonce"], bytes) or len(body["nonce"]) != NONCE_LEN:
        raise SetupError(f"a reveal body is {{nonce: {NONCE_LEN} bytes}}")
    return body["nonce"]
