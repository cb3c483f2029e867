"""Reveals: a card opens with one decryption share from every seat.

Seat s's share of card place i is D = x_s * C1 with a proof (dleq.py) that it used its
own deal key X_s; anyone checks it the moment it arrives. With every seat's share, the
card point is M = C2 - (D_0 + ... + D_{n-1}), looked up among the pile's card points.

Public reveal (a turn-up, a draw, the round's end): every seat publishes its share.
Private reveal (Grande's peeks): every seat but the peeker publishes its share, in the
clear; the peeker computes its own and alone learns the card. Why not seal the shares to
the peeker, as the blueprint did: what the others publish leaves the card encrypted under
the peeker's own part of the key (C2 - their shares = M + x_q*C1), which is as hidden as
before, and a public share is checked by everyone at once, so a wrong one is named on
arrival instead of at game end, and the peeker needs no box.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import dleq
from .cards import CardPoints, Pile
from .derive import deal_key
from .group import DealError, check_point, mul, mul_base, sub
from .passes import check_card

SHARE_BYTES = 32 + dleq.PROOF_BYTES


@dataclass(frozen=True)
class Share:
    """Seat `seat`'s decryption share of card place `card` (D) and its proof."""

    seat: int
    card: int
    point: bytes
    proof: bytes


def where(pile: Pile, seat: int, card: int) -> tuple[bytes | int, ...]:
    return (pile.game, pile.round_no, pile.pile, seat, card)


def make_share(secret: bytes, pile: Pile, seat: int, card: int, ciphertext: bytes) -> Share:
    """Seat `seat`'s share of card place `card`, whose ciphertext (in the final list) is
    `ciphertext`."""
    c1, _ = check_card(ciphertext, "a dealt card")
    x = deal_key(secret, pile.game)
    d = mul(x, c1)
    return Share(seat, card, d, dleq.prove(secret, where(pile, seat, card), x, mul_base(x), c1, d))


def check_share(pile: Pile, msg: Share, deal_key_point: bytes, ciphertext: bytes) -> bytes:
    """D as a checked point, or DealError: a valid point, then the proof that it is
    x_s*C1 for the seat's deal key X_s (`deal_key_point`, checked in the ceremony)."""
    c1, _ = check_card(ciphertext, "a dealt card")
    d = check_point(msg.point, f"the share of seat {msg.seat} for card {msg.card}")
    if not dleq.verify(msg.proof, where(pile, msg.seat, msg.card), deal_key_point, c1, d):
        raise DealError(f"the share of seat {msg.seat} for card {msg.card} fails its proof")
    return d


def open_point(ciphertext: bytes, shares: Sequence[bytes]) -> bytes:
    """C2 minus every seat's (checked) share: the card point when all seats gave theirs."""
    _, m = check_card(ciphertext, "a dealt card")
    for d in shares:
        m = sub(m, d)
    return m


def open_card(ciphertext: bytes, shares: Sequence[bytes], cards: CardPoints) -> int | None:
    """The place j of the pile's list that the card shows once every seat's checked share
    is removed; None when it opens to no card point (a tampered shuffle)."""
    return cards.card_index(open_point(ciphertext, shares))


__all__ = ["Share", "SHARE_BYTES", "make_share", "check_share", "open_point", "open_card", "where"]
