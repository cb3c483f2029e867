"""Chaum-Pedersen proof that a decryption share uses the seat's own deal key.

Statement, for seat s and card place i: log_G(X_s) == log_{C1}(D), where X_s = x_s*G is
the seat's published deal key, C1 the first half of the card's ciphertext and D = x_s*C1
the seat's share. A share that passes removes exactly the seat's part of the joint key,
so a wrong share is refused the moment it arrives.

Non-interactive (Fiat-Shamir). The challenge hashes the whole statement and where it
sits (game, round, pile, seat, card), so a proof cannot be moved to another card or
seat; the nonce is derived from the seat's secret and the statement (RFC 6979 style),
so proving is deterministic and game-end verification compares bytes:

    r  = scalar(secret, "dleq-nonce", game, round, pile, seat, i, X_s, C1, D)
    R1 = r*G,  R2 = r*C1
    c  = BLAKE2b-512(frame("dleq", game, round, pile, seat, i, X_s, C1, D, R1, R2)) mod L
    z  = r + c*x_s mod L;   proof = c (32 bytes LE) || z (32 bytes LE)
    verify: R1 = z*G - c*X_s, R2 = z*C1 - c*D, and c == the hash over them

The seat's deal key itself comes with a Schnorr proof of knowledge (`prove_key`), so
that no seat can choose its key as a function of the others' (a "rogue key" X = x*G -
sum of the others would make the joint key its own, and it alone could read every card).

    r = scalar(secret, "key-nonce", game, seat, X),  R = r*G
    c = BLAKE2b-512(frame("key-proof", game, seat, X, R)) mod L,  z = r + c*x mod L
    proof = c || z;  verify: R = z*G - c*X and c == the hash over it
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .derive import Part, hash_, scalar
from .group import DealError, check_scalar, mul, mul_base, reduce64, sc, sub

PROOF_BYTES = 64


def _split(proof: object) -> tuple[int, int] | None:
    if not isinstance(proof, (bytes, bytearray)) or len(proof) != PROOF_BYTES:
        return None
    try:
        return check_scalar(bytes(proof[:32])), check_scalar(bytes(proof[32:]))
    except DealError:
        return None


def prove(secret: bytes, where: Sequence[Part], x: int, big_x: bytes, c1: bytes, d: bytes) -> bytes:
    """The proof that big_x == x*G and d == x*c1; `where` is (game, round, pile, seat, card)."""
    r = scalar(secret, "dleq-nonce", *where, big_x, c1, d)
    c = reduce64(hash_("dleq", *where, big_x, c1, d, mul_base(r), mul(r, c1)))
    return sc(c) + sc(r + c * x)


def verify(proof: object, where: Sequence[Part], big_x: bytes, c1: bytes, d: bytes) -> bool:
    """True when `proof` shows log_G(big_x) == log_c1(d). The points must already be checked
    (check_point); any proof bytes at all give True or False, never an exception."""
    if not isinstance(proof, (bytes, bytearray)) or len(proof) != PROOF_BYTES:
        return False
    return _verify(bytes(proof), tuple(where), big_x, c1, d)


@lru_cache(maxsize=8192)
def _verify(proof: bytes, where: tuple[Part, ...], big_x: bytes, c1: bytes, d: bytes) -> bool:
    """`verify`, remembered by every byte of the statement and the proof: the copies of one
    game's log that a tournament folder holds (one per seat) prove the same shares, and
    four scalar products per share are most of the time a fair game's check takes."""
    cz = _split(proof)
    if cz is None:
        return False
    c, z = cz
    r1 = sub(mul_base(z), mul(c, big_x))
    r2 = sub(mul(z, c1), mul(c, d))
    return reduce64(hash_("dleq", *where, big_x, c1, d, r1, r2)) == c


def prove_key(secret: bytes, game: bytes, seat: int, x: int, big_x: bytes) -> bytes:
    """The Schnorr proof that the seat knows x with big_x == x*G."""
    r = scalar(secret, "key-nonce", game, seat, big_x)
    c = reduce64(hash_("key-proof", game, seat, big_x, mul_base(r)))
    return sc(c) + sc(r + c * x)


def verify_key(proof: object, game: bytes, seat: int, big_x: bytes) -> bool:
    cz = _split(proof)
    if cz is None:
        return False
    c, z = cz
    return reduce64(hash_("key-proof", game, seat, big_x, sub(mul_base(z), mul(c, big_x)))) == c


__all__ = ["prove", "verify", "prove_key", "verify_key", "PROOF_BYTES"]
