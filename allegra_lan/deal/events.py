"""The fair deal's log events: their bodies, one schema each, checked before anything reads them.

Why a module of its own: these events are written by a seat's peer without asking its
player (docs/fairdeal.md, "The events"), folded by every peer's ledger (ledger.py) and
read again by the replay tools, so their one decoder must be total: any value in, a
body dataclass or one `EventBodyError` line out. The shapes are the project's schema
machinery (log/schema.py), imported; what the shapes cannot say (a point valid, a proof
good, a pass the right size) is the ledger's, and is a Fault of the author, not a refusal.

Sizes: a signed event is at most 16 KiB (log/envelope.py MAX_EVENT) and a gossip message
carries at most 48 KiB of events. Signed, with the largest numbers: a pass of a 160-card pile
(any number of seats: a pass is one seat's) is one event of 10,800 bytes; a full shuffle part
(MAX_PASS_CARDS = 200 cards) 13,444; a full shares part (MAX_PART_SHARES = 128) 13,802; a
round's end of 5 Grande seats asks at most 80 cards, one shares event of 8,466; an escrow of
15 pieces 1,966; keys 407; a secret 244 (tests/test_deal_ledger.py pins the limit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from allegra_lan.log.schema import Array, Bytes, Int, Map, SchemaError, Spec, Tuple

from .dleq import PROOF_BYTES
from .escrow import EscrowShare
from .passes import CARD_BYTES
from .seal import SEALED_BYTES

MAX_PASS_CARDS = 200
"""Cards of one shuffle event: a bigger pile's pass is published in parts of this many."""
MAX_PART_SHARES = 128
"""Shares of one shares event: a bigger batch is published in parts of this many."""
MAX_SEATS = 16
MAX_NUMBER = 2**32 - 1

KEYS, ESCROW, SHUFFLE, SHARES, SECRET = "deal_keys", "deal_escrow", "deal_shuffle", "deal_shares", "deal_secret"
KINDS = (KEYS, ESCROW, SHUFFLE, SHARES, SECRET)

_NUM = Int(0, MAX_NUMBER)
SCHEMAS: dict[str, Spec] = {
    KEYS: Map({"commitment": Bytes(32), "box_key": Bytes(32), "deal_key": Bytes(32),
               "key_proof": Bytes(PROOF_BYTES)}),
    ESCROW: Map({"pieces": Array(Tuple((Bytes(32), Bytes(SEALED_BYTES))), MAX_SEATS - 1, 1)}),
    SHUFFLE: Map({"round": _NUM, "pile": _NUM, "part": _NUM,
                  "cards": Array(Bytes(CARD_BYTES), MAX_PASS_CARDS, 1)}),
    SHARES: Map({"batch": _NUM, "part": _NUM,
                 "shares": Array(Tuple((_NUM, Bytes(32), Bytes(PROOF_BYTES))), MAX_PART_SHARES, 1)}),
    SECRET: Map({"secret": Bytes(32)}),
}
"""The one schema of each kind's body: exactly these fields, these types and sizes."""


class EventBodyError(ValueError):
    """A deal event's body that does not fit its kind's schema (one line, naming the field)."""


@dataclass(frozen=True)
class KeysBody:
    """A seat's deal keys (keys.SeatKeys without the seat: the author is the seat)."""

    commitment: bytes
    box_key: bytes
    deal_key: bytes
    key_proof: bytes


@dataclass(frozen=True)
class EscrowBody:
    """A dealer's escrow pieces, (commitment, sealed piece), one per other seat ascending."""

    pieces: tuple[tuple[bytes, bytes], ...]


@dataclass(frozen=True)
class ShuffleBody:
    """Part `part` of the author's shuffle pass of round `round_no`'s pile `pile`: output
    places part*MAX_PASS_CARDS onward."""

    round_no: int
    pile: int
    part: int
    cards: tuple[bytes, ...]


@dataclass(frozen=True)
class SharesBody:
    """Part `part` of the author's shares of batch `batch`: (card id, D, proof), in the
    batch's request order, the requests the author owes only."""

    batch: int
    part: int
    shares: tuple[tuple[int, bytes, bytes], ...]


@dataclass(frozen=True)
class SecretBody:
    """The author's per-game secret, published at game end."""

    secret: bytes


Body = Union[KeysBody, EscrowBody, ShuffleBody, SharesBody, SecretBody]


def decode(kind: object, body: object) -> Body:
    """The body of a deal event of kind `kind`, checked against its schema; EventBodyError
    (one line) for anything else. Total: no other exception leaves."""
    if not isinstance(kind, str) or kind not in SCHEMAS:
        raise EventBodyError(f"{str(kind)[:40]!r} is not a deal event kind")
    try:
        SCHEMAS[kind].check(body)
    except SchemaError as e:
        raise EventBodyError(f"{kind}: {e}") from None
    b: dict[str, Any] = body  # type: ignore[assignment]
    if kind == KEYS:
        return KeysBody(b["commitment"], b["box_key"], b["deal_key"], b["key_proof"])
    if kind == ESCROW:
        return EscrowBody(tuple((c, s) for c, s in b["pieces"]))
    if kind == SHUFFLE:
        return ShuffleBody(b["round"], b["pile"], b["part"], tuple(b["cards"]))
    if kind == SHARES:
        return SharesBody(b["batch"], b["part"], tuple((c, p, q) for c, p, q in b["shares"]))
    return SecretBody(b["secret"])


def kind_of(body: Body) -> str:
    return {KeysBody: KEYS, EscrowBody: ESCROW, ShuffleBody: SHUFFLE, SharesBody: SHARES,
            SecretBody: SECRET}[type(body)]


def encode(body: Body) -> tuple[str, dict[str, Any]]:
    """(kind, body map) of an event to sign (log/envelope.py sign_event); decode(*encode(b))
    gives b back."""
    if isinstance(body, KeysBody):
        m: dict[str, Any] = {"commitment": body.commitment, "box_key": body.box_key,
                             "deal_key": body.deal_key, "key_proof": body.key_proof}
    elif isinstance(body, EscrowBody):
        m = {"pieces": [[c, s] for c, s in body.pieces]}
    elif isinstance(body, ShuffleBody):
        m = {"round": body.round_no, "pile": body.pile, "part": body.part, "cards": list(body.cards)}
    elif isinstance(body, SharesBody):
        m = {"batch": body.batch, "part": body.part, "shares": [[c, p, q] for c, p, q in body.shares]}
    else:
        m = {"secret": body.secret}
    return kind_of(body), m


def escrow_body(pieces: tuple[EscrowShare, ...]) -> EscrowBody:
    return EscrowBody(tuple((e.commitment, e.sealed) for e in pieces))


__all__ = ["KINDS", "KEYS", "ESCROW", "SHUFFLE", "SHARES", "SECRET", "SCHEMAS", "MAX_PASS_CARDS",
           "MAX_PART_SHARES", "EventBodyError", "KeysBody", "EscrowBody", "ShuffleBody", "SharesBody",
           "SecretBody", "Body", "decode", "encode", "kind_of", "escrow_body"]
