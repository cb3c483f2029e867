"""Seat takeovers: the remaining seats' signed consent to let a bot play missing seats.

A peer that drops and does not come back would stop the game for good. So
the seats still at the table may agree, every one of them signing, that
new keys (bots run by one of them) play the missing seats from a given
seq on. The consent names the game, the seq and the prev it is for, and
each taken seat with its new key, so it can be used exactly once, at that
one place in that one log; the `takeover` event that carries all the
consents is checked by `Table` like any other event (PROTOCOL.md,
"Seat takeovers").
"""

from __future__ import annotations

from typing import Any, Sequence

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from .codec import encode

CONSENT_KEYS = ("takeover", "game", "seq", "prev", "seats")


class ConsentError(ValueError):
    """A consent that does not prove what it must."""


def consent_message(game: bytes, seq: int, prev: bytes, seats: Sequence[tuple[int, bytes]]) -> bytes:
    """The canonical bytes every remaining seat signs (the domain tag keeps it from ever
    reading as an event or a knock)."""
    return encode({"takeover": 1, "game": game, "seq": seq, "prev": prev,
                   "seats": [[s, k] for s, k in seats]}, key_order=CONSENT_KEYS)


def sign_consent(key: SigningKey, game: bytes, seq: int, prev: bytes,
                 seats: Sequence[tuple[int, bytes]]) -> bytes:
    """A seat's signature (64 bytes, detached) agreeing to this takeover."""
    return key.sign(consent_message(game, seq, prev, seats)).signature


def check_consent(signature: Any, *, key: bytes, game: bytes, seq: int, prev: bytes,
                  seats: Sequence[tuple[int, bytes]]) -> None:
    """Raise ConsentError unless `signature` is `key`'s consent to exactly this takeover."""
    if not isinstance(signature, bytes) or len(signature) != 64:
        raise ConsentError("a consent is a 64-byte signature")
    try:
        VerifyKey(key).verify(consent_message(game, seq, prev, seats), signature)
    except BadSignatureError:
        raise ConsentError("the consent is not that seat's signature of this takeover") from None


def read_seats(value: Any, players: int) -> list[tuple[int, bytes]]:
    """The `seats` field of a takeover body: [[seat, new key], ...], seats ascending."""
    if not isinstance(value, list) or not value:
        raise ConsentError("a takeover names at least one seat")
    out: list[tuple[int, bytes]] = []
    for item in value:
        if (not isinstance(item, list) or len(item) != 2 or type(item[0]) is not int
                or not isinstance(item[1], bytes) or len(item[1]) != 32):
            raise ConsentError("a taken seat is [seat, 32-byte key]")
        seat, key = item
        if not 0 <= seat < players:
            raise ConsentError(f"there is no seat {seat}")
        if out and seat <= out[-1][0]:
            raise ConsentError("the taken seats must be in ascending order, each once")
        out.append((seat, key))
    if len(out) >= players:
        raise ConsentError("a takeover must leave at least one seat to agree to it")
    return out

