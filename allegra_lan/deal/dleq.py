"""Chaum-Pedersen proof that a seat's share removes exactly the key it put on a card.

Statement, for seat s and card place i: log_G(K_s) == log_W(X), where K_s = k_s*G is the
seat's published shuffle key, X is the card as the seat's lock received it, and W =
k_{s,i}^-1 * Y with Y the card as the seat's lock published it. Both logs are k_s, so
Y = (k_{s,i}/k_s) * X: the share k_{s,i} is exactly the key the seat's lock put on the
card, and a wrong share can never pass.

Why at reveal time and not in the lock pass: a proof per card in the lock pass costs 5
scalar multiplications to make and 4 to check per card, for every card of every pile,
revealed or not (for 5 seats and 160 cards, over 3 s of CPU on every peer's machine
together); at reveal time it costs the same for the one card being revealed, and the
share is still refused the moment it arrives. A lock that is not the seat's
transformation is found when that card is revealed (its seat cannot prove its share) or
at game end by redoing the lock from the secret.

Non-interactive (Fiat-Shamir); the challenge hashes the whole statement and where it
sits, so a proof cannot be moved to another card or seat; the nonce is derived from the
secret and the statement (RFC 6979 style), so proving is deterministic and game-end
verification can compare bytes:

    r  = scalar(secret, "dleq-nonce", game, round, pile, seat, i, K_s, W, X)
    R1 = r*G,  R2 = r*W
    c  = BLAKE2b-512(frame("dleq", game, round, pile, seat, i, K_s, W, X, R1, R2)) mod L
    z  = r + c*k_s mod L;   proof = c (32 bytes LE) || z (32 bytes LE)
    verify: R1 = z*G - c*K_s, R2 = z*W - c*X, and c == the hash over them
"""

from __future__ import annotations

from .cards import Pile
from .derive import hash_, scalar
from .group import DealError, check_scalar, mul, mul_base, reduce64, sc, sub

PROOF_BYTES = 64


def challenge(pile: Pile, seat: int, card: int, big_k: bytes, w: bytes, x: bytes, r1: bytes, r2: bytes) -> int:
    return reduce64(hash_("dleq", pile.game, pile.round_no, pile.pile, seat, card, big_k, w, x, r1, r2))


def prove(secret: bytes, pile: Pile, seat: int, card: int, k: int, big_k: bytes, w: bytes, x: bytes) -> bytes:
    """The proof that big_k == k*G and x == k*w, from the seat's secret (k is k_s)."""
    r = scalar(secret, "dleq-nonce", pile.game, pile.round_no, pile.pile, seat, card, big_k, w, x)
    c = challenge(pile, seat, card, big_k, w, x, mul_base(r), mul(r, w))
    return sc(c) + sc(r + c * k)


def verify(proof: object, pile: Pile, seat: int, card: int, big_k: bytes, w: bytes, x: bytes) -> bool:
    """True when `proof` shows log_G(big_k) == log_w(x). The points must already be checked
    (check_point); any proof bytes at all give True or False, never an exception."""
    if not isinstance(proof, (bytes, bytearray)) or len(proof) != PROOF_BYTES:
        return False
    try:
        c = check_scalar(bytes(proof[:32]))
        z = check_scalar(bytes(proof[32:]))
    except DealError:
        return False
    r1 = sub(mul_base(z), mul(c, big_k))
    r2 = sub(mul(z, w), mul(c, x))
    return challenge(pile, seat, card, big_k, w, x, r1, r2) == c


__all__ = ["prove", "verify", "challenge", "PROOF_BYTES"]
