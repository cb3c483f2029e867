"""A whole pile dealt honestly in one process, from every seat's secret.

Why: tests, the test-vector generator and benchmarks need the full sequence of messages
that the seats of a game would publish one by one (shuffles in seat order, then locks,
then shares); building it in one place keeps them all on the protocol's order. A peer
never has every secret; it makes its own messages with shuffle_pass, lock_pass and the
reveal functions.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from .cards import CardPoints, Pile
from .passes import LockPass, ShufflePass, lock_pass, shuffle_pass
from .reveal import PrivateReveal, Reveal, box_keypair, private_reveal, public_reveal
from .verify import PileRecord


@dataclass(frozen=True)
class Dealt:
    """The passes of one pile and, for each card place i and seat s, the lock's input and
    output (x, y) that a share of that seat for that card refers to."""

    pile: Pile
    cards: CardPoints
    shuffles: tuple[ShufflePass, ...]
    locks: tuple[LockPass, ...]

    def lock_io(self, seat: int, card: int) -> tuple[bytes, bytes]:
        x = (self.shuffles[-1] if seat == 0 else self.locks[seat - 1]).points[card]
        return x, self.locks[seat].points[card]

    @property
    def final(self) -> tuple[bytes, ...]:
        return self.locks[-1].points

    def record(self, reveals: Sequence[Reveal] = (), private: Sequence[PrivateReveal] = ()) -> PileRecord:
        return PileRecord(self.pile, self.shuffles, self.locks, tuple(reveals), tuple(private))


Tamper = Callable[[str, int, tuple[bytes, ...]], Sequence[bytes]]
"""(step, seat, points) -> the points that seat publishes instead: "shuffle" or "lock"."""


def deal(pile: Pile, secrets: Sequence[bytes], tamper: Tamper | None = None) -> Dealt:
    """Every seat's shuffle, then every seat's lock, seat 0 first. `tamper`, if given, may
    replace the points a seat publishes at a step (a dishonest seat, for tests and the
    simulator's adversaries); the later seats work on what was published."""
    cards = CardPoints.of(pile)
    points = cards.points
    shuffles: list[ShufflePass] = []
    for seat, secret in enumerate(secrets):
        made = shuffle_pass(secret, pile, seat, points)
        if tamper is not None:
            made = replace(made, points=tuple(tamper("shuffle", seat, made.points)))
        shuffles.append(made)
        points = made.points
    locks: list[LockPass] = []
    for seat, secret in enumerate(secrets):
        lock = lock_pass(secret, pile, seat, points)
        if tamper is not None:
            lock = replace(lock, points=tuple(tamper("lock", seat, lock.points)))
        locks.append(lock)
        points = lock.points
    return Dealt(pile, cards, tuple(shuffles), tuple(locks))


def reveal_all(dealt: Dealt, secrets: Sequence[bytes], card: int) -> tuple[Reveal, ...]:
    """Every seat's public share of one card place."""
    return tuple(public_reveal(secret, dealt.pile, seat, card, *dealt.lock_io(seat, card))
                 for seat, secret in enumerate(secrets))


def reveal_to(dealt: Dealt, secrets: Sequence[bytes], card: int, peeker: int) -> tuple[PrivateReveal, ...]:
    """Every other seat's share of one card place, sealed to `peeker`."""
    box = box_keypair(secrets[peeker], dealt.pile.game)[1]
    return tuple(private_reveal(secret, dealt.pile, seat, card, *dealt.lock_io(seat, card), peeker, box)
                 for seat, secret in enumerate(secrets) if seat != peeker)


__all__ = ["Dealt", "Tamper", "deal", "reveal_all", "reveal_to"]
