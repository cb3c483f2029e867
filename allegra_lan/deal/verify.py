"""Game-end verification: from the published secrets, redo every pass, share and sealed
share of a pile and name who published something else.

Why this exists: a shuffle is unverifiable while the game runs (that is what hides the
order), so a seat could copy or swap a card there; and a sealed share is seen only by its
peeker. Every seat's data derives from its secret (derive.py), so once the secrets are
published each published byte string has exactly one right value. Each seat is judged on
its own step, from the inputs it was actually given (the previous seat's published list),
so a fault is attributed to the seat that made it, not to the seats after it. A seat that
withholds its secret, or publishes one that misses its commitment, is itself a fault: its
passes cannot be checked, and the game is unverified.

Nothing here raises on hostile data: every finding is a Fault (verdict.py), in protocol
order (secrets, then the shuffles and locks in seat order, then shares, then sealed
shares), so the first one names the first seat whose published data differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from .cards import CardPoints, Pile
from .derive import commitment
from .escrow import EscrowShare, make_escrow
from .group import DealError, check_point
from .passes import LockPass, ShufflePass, check_lock, check_shuffle, lock_pass, shuffle_pass
from .reveal import (PrivateReveal, Reveal, box_keypair, check_private_reveal, check_reveal, open_card,
                     private_reveal, public_reveal)
from .derive import lock_key
from .verdict import Fault


@dataclass(frozen=True)
class SeatRecord:
    """What the log holds of one seat: its ceremony commitment and box key, and its secret
    as published at game end (None: withheld)."""

    seat: int
    commitment: bytes
    box_key: bytes
    secret: bytes | None


@dataclass(frozen=True)
class PileRecord:
    """Everything published about one pile: the passes in seat order, the public shares
    and the private (sealed) shares."""

    pile: Pile
    shuffles: tuple[ShufflePass, ...]
    locks: tuple[LockPass, ...]
    reveals: tuple[Reveal, ...] = ()
    private: tuple[PrivateReveal, ...] = ()


def check_secrets(game: bytes, seats: Sequence[SeatRecord]) -> tuple[Fault, ...]:
    """A Fault for every seat whose secret is withheld, misses its commitment, or whose
    box key is not the one its secret makes."""
    faults: list[Fault] = []
    for rec in seats:
        if rec.secret is None:
            faults.append(Fault(rec.seat, "secret", None, "withheld its secret: its deal is unverified"))
            continue
        try:
            ok = commitment(game, rec.seat, rec.secret) == rec.commitment
        except DealError:
            ok = False
        if not ok:
            faults.append(Fault(rec.seat, "secret", None, "its published secret misses its commitment"))
        elif box_keypair(rec.secret, game)[1] != rec.box_key:
            faults.append(Fault(rec.seat, "secret", None, "its box key is not the one its secret makes"))
    return tuple(faults)


def _good_secrets(game: bytes, seats: Sequence[SeatRecord]) -> dict[int, bytes]:
    bad = {f.seat for f in check_secrets(game, seats)}
    return {r.seat: r.secret for r in seats if r.seat not in bad and r.secret is not None}


def _first_difference(a: Sequence[object], b: Sequence[object]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def verify_pile(record: PileRecord, seats: Sequence[SeatRecord]) -> tuple[Fault, ...]:
    """Every fault in one pile's published data (empty: the pile is verified, given that
    check_secrets found nothing). The chain of passes stops at the first pass whose shape
    is wrong: the passes after it had no valid input to be judged on."""
    pile = record.pile
    secrets = _good_secrets(pile.game, seats)
    n_seats = len(seats)
    faults: list[Fault] = []
    inputs: tuple[bytes, ...] = CardPoints.of(pile).points
    shuffle_keys: dict[int, bytes] = {}
    chain_ok = True
    for s in range(n_seats):
        msg = record.shuffles[s] if s < len(record.shuffles) else None
        if msg is None or msg.seat != s:
            faults.append(Fault(s, "shuffle", None, "its shuffle is missing or out of seat order"))
            chain_ok = False
            break
        fault = check_shuffle(pile, msg)
        if fault:
            faults.append(fault)
            chain_ok = False
            break
        if s in secrets:
            redo = shuffle_pass(secrets[s], pile, s, inputs)
            if redo.key != msg.key:
                faults.append(Fault(s, "shuffle", None, "its shuffle key is not the one its secret makes"))
            else:
                i = _first_difference(redo.points, msg.points)
                if i is not None:
                    faults.append(Fault(s, "shuffle", i, "its shuffle differs from the one its secret makes"))
        shuffle_keys[s] = msg.key
        inputs = tuple(msg.points)
    lock_io: dict[int, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {}
    final: tuple[bytes, ...] | None = None
    if chain_ok:
        for s in range(n_seats):
            msg = record.locks[s] if s < len(record.locks) else None
            if msg is None or msg.seat != s:
                faults.append(Fault(s, "lock", None, "its lock is missing or out of seat order"))
                break
            fault = check_lock(pile, msg)
            if fault:
                faults.append(fault)
                break
            if s in secrets:
                i = _first_difference(lock_pass(secrets[s], pile, s, inputs).points, msg.points)
                if i is not None:
                    faults.append(Fault(s, "lock", i, "its lock differs from the one its secret makes"))
            lock_io[s] = (inputs, tuple(msg.points))
            inputs = tuple(msg.points)
        else:
            final = inputs
    faults.extend(_share_faults(record, seats, secrets, shuffle_keys, lock_io))
    if final is not None and not faults:
        faults.extend(_open_all(record, secrets, final, n_seats))
    return tuple(faults)


def _share_faults(record: PileRecord, seats: Sequence[SeatRecord], secrets: Mapping[int, bytes],
                  shuffle_keys: Mapping[int, bytes],
                  lock_io: Mapping[int, tuple[tuple[bytes, ...], tuple[bytes, ...]]]) -> list[Fault]:
    """Every share checked as on arrival, then compared with the one the secret makes."""
    pile = record.pile
    faults: list[Fault] = []
    boxes = {r.seat: r.box_key for r in seats}
    for item in record.reveals:
        if item.seat not in lock_io or not (isinstance(item.card, int) and 0 <= item.card < pile.size):
            faults.append(Fault(item.seat, "share", None, "a share of no card of its lock"))
            continue
        x, y = lock_io[item.seat][0][item.card], lock_io[item.seat][1][item.card]
        try:
            check_reveal(pile, item, shuffle_keys[item.seat], x, y)
        except DealError as e:
            faults.append(Fault(item.seat, "share", item.card, str(e)))
            continue
        if item.seat in secrets and public_reveal(secrets[item.seat], pile, item.seat, item.card, x, y) != item:
            faults.append(Fault(item.seat, "share", item.card, "its share is not the one its secret makes"))
    for priv in record.private:
        if (priv.seat not in lock_io or priv.peeker not in boxes or priv.peeker == priv.seat
                or not (isinstance(priv.card, int) and 0 <= priv.card < pile.size)):
            faults.append(Fault(priv.seat, "sealed", None, "a sealed share of no card or to no other seat"))
            continue
        x, y = lock_io[priv.seat][0][priv.card], lock_io[priv.seat][1][priv.card]
        try:
            check_private_reveal(pile, priv, shuffle_keys[priv.seat], x)
        except DealError as e:
            faults.append(Fault(priv.seat, "sealed", priv.card, str(e)))
            continue
        if priv.seat in secrets:
            try:
                redo: PrivateReveal | None = private_reveal(secrets[priv.seat], pile, priv.seat, priv.card, x, y,
                                                            priv.peeker, boxes[priv.peeker])
            except DealError:
                redo = None
            if redo != priv:
                faults.append(Fault(priv.seat, "sealed", priv.card,
                                    f"its sealed share to seat {priv.peeker} is not the one its secret makes"))
    return faults


def _open_all(record: PileRecord, secrets: Mapping[int, bytes], final: Sequence[bytes], n_seats: int) -> list[Fault]:
    """With every secret good and every pass matching its redo, every card must open to a
    distinct card point; this re-checks it (it fails only if the passes above were wrong)."""
    if len(secrets) != n_seats:
        return []
    cards = CardPoints.of(record.pile)
    pile = record.pile
    seen: set[int] = set()
    for i, point in enumerate(final):
        j = open_card(check_point(point), [lock_key(secrets[s], pile.game, pile.round_no, pile.pile, i)
                                           for s in range(n_seats)], cards)
        if j is None or j in seen:
            return [Fault(n_seats - 1, "lock", i, "the deal does not open to the pile's cards")]
        seen.add(j)
    return []


def verify_escrow(game: bytes, seats: Sequence[SeatRecord], escrows: Mapping[int, Sequence[EscrowShare]]) -> tuple[Fault, ...]:
    """Every dealer whose published escrow is not the one its secret makes."""
    faults: list[Fault] = []
    secrets = _good_secrets(game, seats)
    boxes = {r.seat: r.box_key for r in seats}
    for rec in seats:
        if rec.seat not in secrets:
            continue
        holders = {h: boxes[h] for h in boxes if h != rec.seat}
        try:
            redo = make_escrow(secrets[rec.seat], game, rec.seat, holders)
        except DealError:
            redo = ()
        if tuple(escrows.get(rec.seat, ())) != redo:
            faults.append(Fault(rec.seat, "escrow", None, "its escrow is not the one its secret makes"))
    return tuple(faults)


__all__ = ["SeatRecord", "PileRecord", "check_secrets", "verify_pile", "verify_escrow"]
