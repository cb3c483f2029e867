"""The two passes every seat makes over a pile: shuffle, then lock.

Shuffle (seat by seat, seat 0 first, on the card points): out[i] = k_s * in[p_s[i]];
the seat publishes the list and K_s = k_s*G. Nobody can check a shuffle without the
secret (that is what keeps the order hidden); on arrival we check only its shape: n
valid, distinct points (a copied card shows as two equal points, since one k_s multiplies
all). A tampered shuffle is found when a card opens to no card point (or to one already
opened), and named at game end by `redo_shuffle` from the published secret.

Lock (seat by seat, seat 0 first, on the last shuffle's list): out[i] = (k_{s,i}/k_s) *
in[i]; the seat publishes the list. After every lock, card i is C_i = (prod_s k_{s,i}) *
M_{p(i)}: every round key is gone and each card carries one independent key per seat, so
revealing card i (every seat's k_{s,i}) tells nothing about any other card. A lock is
checked on arrival for its shape only (n valid points); that it is the seat's
transformation is proven card by card when a card is revealed (dleq.py says why), and
for the cards never revealed at game end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .cards import Pile
from .derive import lock_key, permutation, shuffle_key
from .group import DealError, check_point, inverse, mul, mul_base
from .verdict import Fault


@dataclass(frozen=True)
class ShufflePass:
    """What a seat publishes for its shuffle: K_s and the shuffled, re-keyed points."""

    seat: int
    key: bytes
    points: tuple[bytes, ...]


@dataclass(frozen=True)
class LockPass:
    """What a seat publishes for its lock: the locked points."""

    seat: int
    points: tuple[bytes, ...]


def _check_inputs(pile: Pile, inputs: Sequence[bytes]) -> tuple[bytes, ...]:
    if len(inputs) != pile.size:
        raise DealError(f"a pass over {len(inputs)} points, the pile has {pile.size}")
    return tuple(check_point(p, f"input point {i}") for i, p in enumerate(inputs))


def shuffle_pass(secret: bytes, pile: Pile, seat: int, inputs: Sequence[bytes]) -> ShufflePass:
    """Seat `seat`'s shuffle of `inputs` (the card points for seat 0, else the previous
    seat's shuffle), from its secret."""
    inputs = _check_inputs(pile, inputs)
    k = shuffle_key(secret, pile.game, pile.round_no, pile.pile)
    perm = permutation(secret, pile.game, pile.round_no, pile.pile, pile.size)
    return ShufflePass(seat, mul_base(k), tuple(mul(k, inputs[perm[i]]) for i in range(pile.size)))


def redo_shuffle(secret: bytes, pile: Pile, seat: int, inputs: Sequence[bytes]) -> ShufflePass:
    """The shuffle the seat should have published; equal to what it did publish unless it
    cheated (game-end verification compares them)."""
    return shuffle_pass(secret, pile, seat, inputs)


def lock_pass(secret: bytes, pile: Pile, seat: int, inputs: Sequence[bytes]) -> LockPass:
    """Seat `seat`'s lock of `inputs` (the last shuffle for seat 0, else the previous
    seat's lock), from its secret."""
    inputs = _check_inputs(pile, inputs)
    k_inv = inverse(shuffle_key(secret, pile.game, pile.round_no, pile.pile))
    return LockPass(seat, tuple(mul(lock_key(secret, pile.game, pile.round_no, pile.pile, i) * k_inv, x)
                                for i, x in enumerate(inputs)))


def _points_fault(pile: Pile, seat: int, step: str, points: object, what: str) -> Fault | None:
    if not isinstance(points, (tuple, list)) or len(points) != pile.size:
        return Fault(seat, step, None, f"{what} is not a list of {pile.size} points")
    for i, p in enumerate(points):
        try:
            check_point(p, f"{what} {i}")
        except DealError as e:
            return Fault(seat, step, i, str(e))
    return None


def check_shuffle(pile: Pile, msg: ShufflePass) -> Fault | None:
    """The checks on a shuffle's arrival, in order: K_s a valid point; n valid points; all
    distinct. None when it passes; else the Fault, attributed to its seat."""
    try:
        check_point(msg.key, "the shuffle key K_s")
    except DealError as e:
        return Fault(msg.seat, "shuffle", None, str(e))
    fault = _points_fault(pile, msg.seat, "shuffle", msg.points, "shuffled point")
    if fault:
        return fault
    seen: dict[bytes, int] = {}
    for i, p in enumerate(msg.points):
        if p in seen:
            return Fault(msg.seat, "shuffle", i, f"shuffled point {i} repeats point {seen[p]}")
        seen[p] = i
    return None


def check_lock(pile: Pile, msg: LockPass) -> Fault | None:
    """The check on a lock's arrival: n valid points. None when it passes."""
    return _points_fault(pile, msg.seat, "lock", msg.points, "locked point")


__all__ = ["ShufflePass", "LockPass", "shuffle_pass", "redo_shuffle", "lock_pass", "check_shuffle",
           "check_lock"]
