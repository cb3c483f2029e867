"""A dishonest dealer's events: the cheats issue 12 names, as rewrites of an honest body.

Why here and not in a test: the simulator's adversaries (sim/) and the one-process proof
(bots/fair_driver.py) must make the same cheats, and each is a few lines of the deal's own
cryptography. A cheat gets the cheating seat's ledger (what that seat knows: the joint
key, the piles as published), the event owed and the body its honest seat would write,
and returns what the cheater publishes instead, or None to withhold it. Each names its
seat; every one must be detected and attributed to it by every honest peer's ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from .cards import card_point
from .derive import hash_
from .escrow import EscrowShare
from .events import (
    ESCROW, SECRET, SHARES, SHUFFLE, Body, EscrowBody, SharesBody, ShuffleBody, escrow_body,
)
from .group import add, mul, mul_base, reduce64
from .ledger import Ledger, Owed
from .seal import seal

Cheat = Callable[[Ledger, Owed, Body], Body | None]


def _r(tag: str, *parts: int) -> int:
    """A public re-encryption scalar for a cheat (it needs no secrecy: it is a cheat)."""
    return reduce64(hash_("cheat/" + tag, *parts)) or 1


@dataclass(frozen=True)
class CopyCard:
    """`seat`'s pass of round `round_no`'s deck puts a re-encrypted copy of its output
    card `of` at output place `into` (the card there is lost). Not refused on arrival (a
    re-encryption is a new ciphertext); shows when both places open (ValueConflict) and is
    named at game end."""

    seat: int
    round_no: int = 0
    into: int = 0
    of: int = 1

    def __call__(self, ledger: Ledger, owed: Owed, body: Body) -> Body | None:
        if owed.kind != SHUFFLE or owed.seat != self.seat or owed.round_no != self.round_no or owed.pile != 0:
            return body
        assert isinstance(body, ShuffleBody) and ledger.joint is not None
        cards = list(body.cards)
        r = _r("copy", self.seat, self.into)
        src = cards[self.of]
        cards[self.into] = add(src[:32], mul_base(r)) + add(src[32:], mul(r, ledger.joint))
        return replace(body, cards=tuple(cards))


@dataclass(frozen=True)
class SwapIn:
    """`seat`'s pass of round `round_no`'s deck replaces output place `into` with a fresh
    encryption of card point `place` (a card of its choice, already in the deck once)."""

    seat: int
    round_no: int = 0
    into: int = 0
    place: int = 0

    def __call__(self, ledger: Ledger, owed: Owed, body: Body) -> Body | None:
        if owed.kind != SHUFFLE or owed.seat != self.seat or owed.round_no != self.round_no or owed.pile != 0:
            return body
        assert isinstance(body, ShuffleBody) and ledger.joint is not None
        pile = ledger.piles[(owed.round_no, 0)].pile
        r = _r("swap", self.seat, self.into)
        cards = list(body.cards)
        cards[self.into] = mul_base(r) + add(card_point(pile, self.place), mul(r, ledger.joint))
        return replace(body, cards=tuple(cards))


@dataclass(frozen=True)
class WrongShare:
    """`seat`'s shares of batch `batch` carry, for their first card, another point than
    its share (D + G) with the honest proof: refused by `check_share` on arrival."""

    seat: int
    batch: int = 0

    def __call__(self, ledger: Ledger, owed: Owed, body: Body) -> Body | None:
        if owed.kind != SHARES or owed.seat != self.seat or owed.batch != self.batch:
            return body
        assert isinstance(body, SharesBody)
        card, point, proof = body.shares[0]
        return replace(body, shares=((card, add(point, mul_base(1)), proof),) + body.shares[1:])


@dataclass(frozen=True)
class WrongSealedShare:
    """`seat`'s escrow seals another piece than the committed one to holder `holder`: the
    holder sees it at once (privately), everyone at game end (verify_escrow)."""

    seat: int
    holder: int

    def __call__(self, ledger: Ledger, owed: Owed, body: Body) -> Body | None:
        if owed.kind != ESCROW or owed.seat != self.seat:
            return body
        assert isinstance(body, EscrowBody) and ledger.secret is not None
        holders = [h for h in range(ledger.players) if h != self.seat]
        box = ledger.keys[self.holder].box_key  # type: ignore[union-attr]
        bad = seal(ledger.secret, (b"cheat", self.holder), box, bytes(32))
        pieces = tuple(EscrowShare(self.seat, h, c, bad if h == self.holder else s)
                       for h, (c, s) in zip(holders, body.pieces))
        return escrow_body(pieces)


@dataclass(frozen=True)
class WithholdSecret:
    """`seat` never publishes its secret at game end."""

    seat: int

    def __call__(self, ledger: Ledger, owed: Owed, body: Body) -> Body | None:
        if owed.kind == SECRET and owed.seat == self.seat:
            return None
        return body


__all__ = ["Cheat", "CopyCard", "SwapIn", "WrongShare", "WrongSealedShare", "WithholdSecret"]
