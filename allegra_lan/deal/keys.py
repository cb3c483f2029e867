"""A seat's deal key and the game's joint key.

Each seat's part x_s derives from its secret (derive.deal_key); it publishes X_s = x_s*G
with a proof of knowledge in the ceremony, next to its commitment and box key. The joint
key Y = X_0 + ... + X_{n-1} is what every card is encrypted to, so a card opens only
with a share from every seat.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import dleq
from .derive import commitment, deal_key
from .group import DealError, add, check_point, mul_base
from .seal import box_keypair
from .verdict import Fault


@dataclass(frozen=True)
class SeatKeys:
    """What a seat publishes at the start: the commitment to its secret, its box key, its
    deal key X_s and the proof that it knows x_s."""

    seat: int
    commitment: bytes
    box_key: bytes
    deal_key: bytes
    key_proof: bytes


def seat_keys(secret: bytes, game: bytes, seat: int) -> SeatKeys:
    x = deal_key(secret, game)
    big_x = mul_base(x)
    return SeatKeys(seat, commitment(game, seat, secret), box_keypair(secret, game)[1], big_x,
                    dleq.prove_key(secret, game, seat, x, big_x))


def check_seat_keys(game: bytes, keys: SeatKeys) -> Fault | None:
    """The checks on arrival, in order: commitment and box key 32 bytes, X_s a valid point,
    its proof good. None when it passes."""
    for name in ("commitment", "box_key"):
        v = getattr(keys, name)
        if not isinstance(v, bytes) or len(v) != 32:
            return Fault(keys.seat, "key", None, f"its {name.replace('_', ' ')} is not 32 bytes")
    try:
        check_point(keys.deal_key, "its deal key X_s")
    except DealError as e:
        return Fault(keys.seat, "key", None, str(e))
    if not dleq.verify_key(keys.key_proof, game, keys.seat, keys.deal_key):
        return Fault(keys.seat, "key", None, "the proof of its deal key does not verify")
    return None


def joint_key(deal_keys: Sequence[bytes]) -> bytes:
    """Y = X_0 + ... + X_{n-1}, in seat order (checked keys); DealError if it is the
    identity (possible only if two seats' keys cancel, which the key proofs prevent)."""
    if not deal_keys:
        raise DealError("no deal keys")
    y = deal_keys[0]
    for k in deal_keys[1:]:
        y = add(y, k)
    return check_point(y, "the joint key")


__all__ = ["SeatKeys", "seat_keys", "check_seat_keys", "joint_key"]
