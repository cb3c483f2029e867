"""Game-end verification: from the published secrets, redo every key, shuffle and share
of a pile and name who published something else.

Why this exists: a shuffle is unverifiable while the game runs (that is what hides the
order), so a seat could copy a card there or swap in a value of its choice. Every seat's
data derives from its secret (derive.py), so once the secrets are published each
published byte string has exactly one right value. Each seat is judged on its own step,
from the input it was actually given (the previous seat's published list), so a fault is
put on the seat that made it, not on the seats after it. A seat that withholds its
secret, or publishes one that misses its commitment, is itself a fault: its steps cannot
be checked, and the game is unverified.

Nothing here raises on hostile data: every finding is a Fault (verdict.py), in protocol
order (keys and secrets, then the shuffles in seat order, then the shares), so the first
one names the first seat whose published data differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

from .cards import CardPoints, Pile
from .derive import commitment, deal_key
from .escrow import EscrowShare, make_escrow
from .group import L, DealError, mul, sub
from .keys import SeatKeys, check_seat_keys, joint_key, seat_keys
from .passes import ShufflePass, check_shuffle, initial, shuffle_pass
from .reveal import Share, check_share, make_share
from .verdict import Fault


@dataclass(frozen=True)
class SeatRecord:
    """What the log holds of one seat: the keys it published at the start and its secret
    as published at game end (None: withheld)."""

    keys: SeatKeys
    secret: bytes | None

    @property
    def seat(self) -> int:
        return self.keys.seat


@dataclass(frozen=True)
class PileRecord:
    """Everything published about one pile: the shuffles in seat order and the shares."""

    pile: Pile
    shuffles: tuple[ShufflePass, ...]
    shares: tuple[Share, ...] = ()


def check_secrets(game: bytes, seats: Sequence[SeatRecord]) -> tuple[Fault, ...]:
    """A Fault for every seat whose published keys fail their arrival checks, whose secret
    is withheld or misses its commitment, or whose keys are not the ones its secret makes."""
    faults: list[Fault] = []
    for rec in seats:
        fault = check_seat_keys(game, rec.keys)
        if fault:
            faults.append(fault)
            continue
        if rec.secret is None:
            faults.append(Fault(rec.seat, "secret", None, "withheld its secret: its deal is unverified"))
            continue
        try:
            ok = commitment(game, rec.seat, rec.secret) == rec.keys.commitment
        except DealError:
            ok = False
        if not ok:
            faults.append(Fault(rec.seat, "secret", None, "its published secret misses its commitment"))
        elif seat_keys(rec.secret, game, rec.seat) != rec.keys:
            faults.append(Fault(rec.seat, "key", None, "its keys are not the ones its secret makes"))
    return tuple(faults)


def _good_secrets(game: bytes, seats: Sequence[SeatRecord]) -> dict[int, bytes]:
    bad = {f.seat for f in check_secrets(game, seats)}
    return {r.seat: r.secret for r in seats if r.seat not in bad and r.secret is not None}


def _first_difference(a: Sequence[object], b: Sequence[object]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def verify_pile(record: PileRecord, seats: Sequence[SeatRecord], *, proofs_checked: bool = False) -> tuple[Fault, ...]:
    """`_verify_pile`, remembered for the last piles checked: a tournament folder holds a
    copy of each game's log per seat, and every copy publishes the same piles. A record
    whose parts cannot be hashed (lists from a hostile log) is checked afresh."""
    key = (record, tuple(seats))
    try:
        hash(key)
    except TypeError:  # unhashable: not remembered (a TypeError of the check itself is not caught)
        return _verify_pile(record, seats, proofs_checked=proofs_checked)
    return _verify_pile_memo(*key, proofs_checked)


@lru_cache(maxsize=16)
def _verify_pile_memo(record: PileRecord, seats: tuple[SeatRecord, ...], proofs_checked: bool) -> tuple[Fault, ...]:
    return _verify_pile(record, seats, proofs_checked=proofs_checked)


def _verify_pile(record: PileRecord, seats: Sequence[SeatRecord], *, proofs_checked: bool = False) -> tuple[Fault, ...]:
    """Every fault in one pile's published data (empty: verified, given that check_secrets
    found nothing). The shuffles stop at the first one whose shape is wrong: those after
    it had no valid input to be judged on. `seats` must be in seat order 0..n-1.

    `proofs_checked`: every share's proof was checked when it arrived (the ledger takes a
    share only then), so with the seat's secret a share is right exactly when its point is
    x_s * C1: one scalar product instead of making the proof again (a third of the cost)."""
    pile = record.pile
    if any(check_seat_keys(pile.game, r.keys) for r in seats) or [r.seat for r in seats] != list(range(len(seats))):
        return tuple(f for f in check_secrets(pile.game, seats) if f.step == "key") or (
            Fault(0, "key", None, "the seats' keys are not in seat order"),)
    secrets = _good_secrets(pile.game, seats)
    try:
        joint = joint_key([r.keys.deal_key for r in seats])
    except DealError:  # every seat in it together: each proved its key, and they cancel
        return (Fault(len(seats) - 1, "key", None, "the seats' deal keys add up to the identity"),)
    cards = CardPoints.of(pile)
    faults: list[Fault] = []
    inputs: tuple[bytes, ...] = initial(cards, joint)
    final: tuple[bytes, ...] | None = None
    for s in range(len(seats)):
        msg = record.shuffles[s] if s < len(record.shuffles) else None
        if msg is None or msg.seat != s:
            faults.append(Fault(s, "shuffle", None, "its shuffle is missing or out of seat order"))
            break
        fault = check_shuffle(pile, msg)
        if fault:
            faults.append(fault)
            break
        if s in secrets:
            i = _first_difference(shuffle_pass(secrets[s], pile, s, joint, inputs).cards, msg.cards)
            if i is not None:
                faults.append(Fault(s, "shuffle", i, "its shuffle differs from the one its secret makes"))
        inputs = tuple(msg.cards)
    else:
        final = inputs
    if final is None:
        return tuple(faults)
    keys_of: dict[int, int] = {}  # seat -> x_s, derived once per pile
    for share in record.shares:
        if not (isinstance(share.seat, int) and 0 <= share.seat < len(seats)
                and isinstance(share.card, int) and 0 <= share.card < pile.size):
            faults.append(Fault(share.seat if isinstance(share.seat, int) else -1, "share", None,
                                "a share of no seat or no card"))
            continue
        # With the seat's secret, the share it makes is right by construction: equal bytes
        # need no proof check (half the cost of a game's verification); only a share that
        # differs is checked, to say why.
        if share.seat in secrets:
            if proofs_checked:
                x = keys_of.get(share.seat)
                if x is None:
                    x = keys_of[share.seat] = deal_key(secrets[share.seat], pile.game)
                if mul(x, final[share.card][:32]) == share.point:
                    continue
            elif make_share(secrets[share.seat], pile, share.seat, share.card, final[share.card]) == share:
                continue
        try:
            check_share(pile, share, seats[share.seat].keys.deal_key, final[share.card])
        except DealError as e:
            faults.append(Fault(share.seat, "share", share.card, str(e)))
            continue
        if share.seat in secrets:
            faults.append(Fault(share.seat, "share", share.card, "its share is not the one its secret makes"))
    if not faults and len(secrets) == len(seats):
        faults.extend(_open_all(pile, secrets, final, cards))
    return tuple(faults)


def _open_all(pile: Pile, secrets: Mapping[int, bytes], final: Sequence[bytes], cards: CardPoints) -> list[Fault]:
    """With every secret good and every shuffle matching its redo, every card opens to a
    distinct card point; this re-checks it (it fails only if the redone passes were
    wrong). One multiplication per card: with every secret, x = sum of x_s opens
    M = C2 - x*C1."""
    x = sum(deal_key(secret, pile.game) for secret in secrets.values()) % L
    seen: set[int] = set()
    for i, c in enumerate(final):
        j = cards.card_index(sub(c[32:], mul(x, c[:32])))
        if j is None or j in seen:
            return [Fault(len(secrets) - 1, "shuffle", i, "the deal does not open to the pile's cards")]
        seen.add(j)
    return []


def verify_escrow(game: bytes, seats: Sequence[SeatRecord], escrows: Mapping[int, Sequence[EscrowShare]]) -> tuple[Fault, ...]:
    """Every dealer whose published escrow is not the one its secret makes."""
    faults: list[Fault] = []
    secrets = _good_secrets(game, seats)
    boxes = {r.seat: r.keys.box_key for r in seats}
    for rec in seats:
        if rec.seat not in secrets:
            continue
        try:
            redo: tuple[EscrowShare, ...] = make_escrow(secrets[rec.seat], game, rec.seat,
                                                        {h: boxes[h] for h in boxes if h != rec.seat})
        except DealError:
            redo = ()
        if tuple(escrows.get(rec.seat, ())) != redo:
            faults.append(Fault(rec.seat, "escrow", None, "its escrow is not the one its secret makes"))
    return tuple(faults)


__all__ = ["SeatRecord", "PileRecord", "check_secrets", "verify_pile", "verify_escrow"]
