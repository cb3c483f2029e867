"""A whole pile dealt honestly in one process, from every seat's secret.

Why: tests, the test-vector generator and benchmarks need the full sequence of messages
that the seats of a game would publish one by one (keys, shuffles in seat order, then
shares); building it in one place keeps them all on the protocol's order. A peer never
has every secret; it makes its own messages with seat_keys, shuffle_pass and make_share.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from .cards import CardPoints, Pile
from .keys import SeatKeys, joint_key, seat_keys
from .passes import ShufflePass, initial, shuffle_pass
from .reveal import Share, make_share
from .verify import PileRecord, SeatRecord

Tamper = Callable[[int, tuple[bytes, ...]], Sequence[bytes]]
"""(seat, cards) -> the cards that seat publishes instead of its honest shuffle."""


@dataclass(frozen=True)
class Dealt:
    """The keys and shuffles of one pile."""

    pile: Pile
    cards: CardPoints
    keys: tuple[SeatKeys, ...]
    joint: bytes
    shuffles: tuple[ShufflePass, ...]

    @property
    def final(self) -> tuple[bytes, ...]:
        return self.shuffles[-1].cards

    def input_of(self, seat: int) -> tuple[bytes, ...]:
        return initial(self.cards, self.joint) if seat == 0 else self.shuffles[seat - 1].cards

    def record(self, shares: Sequence[Share] = ()) -> PileRecord:
        return PileRecord(self.pile, self.shuffles, tuple(shares))

    def seats(self, published: Sequence[bytes | None]) -> list[SeatRecord]:
        return [SeatRecord(k, p) for k, p in zip(self.keys, published)]


def deal(pile: Pile, secrets: Sequence[bytes], tamper: Tamper | None = None) -> Dealt:
    """Every seat's keys, then every seat's shuffle, seat 0 first. `tamper`, if given, may
    replace the cards a seat publishes (a dishonest seat, for tests and the simulator's
    adversaries); the later seats work on what was published."""
    keys = tuple(seat_keys(secret, pile.game, seat) for seat, secret in enumerate(secrets))
    joint = joint_key([k.deal_key for k in keys])
    cards = CardPoints.of(pile)
    current = initial(cards, joint)
    shuffles: list[ShufflePass] = []
    for seat, secret in enumerate(secrets):
        made = shuffle_pass(secret, pile, seat, joint, current)
        if tamper is not None:
            made = replace(made, cards=tuple(tamper(seat, made.cards)))
        shuffles.append(made)
        current = made.cards
    return Dealt(pile, cards, keys, joint, tuple(shuffles))


def shares_of(dealt: Dealt, secrets: Sequence[bytes], card: int, but: int | None = None) -> tuple[Share, ...]:
    """Every seat's share of one card place (all but seat `but`, for a peek by that seat)."""
    return tuple(make_share(secret, dealt.pile, seat, card, dealt.final[card])
                 for seat, secret in enumerate(secrets) if seat != but)


__all__ = ["Dealt", "Tamper", "deal", "shares_of"]
