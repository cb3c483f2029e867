"""Deterministic randomness: the seed-to-deck algorithm of protocol/PROTOCOL.md.

Every peer, replay tool and later version must shuffle exactly alike, so the
algorithm is a protocol, not a library call: Python's `random` module may
change its algorithms between versions and is never used here.

Stream: block i of purpose P under seed K is
    BLAKE2b-512(key=K, data = len(P) as one byte || P || i as 8 bytes big-endian)
and the stream is the concatenation of blocks 0, 1, 2, ...; it is read as
unsigned 64-bit big-endian words. A uniform integer below n rejects words
at or above 2**64 - (2**64 mod n) and returns word mod n. A shuffle is
Fisher-Yates from the last index down: for i = len-1 .. 1, j = uniform(i+1),
swap items i and j.
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from typing import MutableSequence, TypeVar

T = TypeVar("T")

_TWO64 = 1 << 64


class Stream:
    """A counter-mode BLAKE2b stream of unsigned 64-bit words for one purpose."""

    __slots__ = ("_seed", "_prefix", "_counter", "_words", "_pos")

    def __init__(self, seed: bytes, purpose: str | bytes) -> None:
        if not isinstance(seed, (bytes, bytearray)) or not 1 <= len(seed) <= 64:
            raise ValueError("a seed is 1 to 64 bytes")
        p = purpose.encode("utf-8") if isinstance(purpose, str) else bytes(purpose)
        if len(p) > 255:
            raise ValueError("a purpose is at most 255 bytes")
        self._seed = bytes(seed)
        self._prefix = bytes([len(p)]) + p
        self._counter = 0
        self._words: list[int] = []
        self._pos = 0

    def _refill(self) -> None:
        block = blake2b(
            self._prefix + self._counter.to_bytes(8, "big"), key=self._seed, digest_size=64
        ).digest()
        self._counter += 1
        self._words = [int.from_bytes(block[k : k + 8], "big") for k in range(0, 64, 8)]
        self._pos = 0

    def word(self) -> int:
        """The next unsigned 64-bit word of the stream."""
        if self._pos >= len(self._words):
            self._refill()
        w = self._words[self._pos]
        self._pos += 1
        return w

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection sampling (no modulo bias)."""
        if n <= 0:
            raise ValueError("the bound must be positive")
        limit = _TWO64 - (_TWO64 % n)
        while True:
            w = self.word()
            if w < limit:
                return w % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place, from the last index down."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def deal_purpose(round_no: int) -> str:
    """The stream purpose of round `round_no`'s deal (0-based)."""
    return f"allegra-lan/deal/{round_no}"


def reshuffle_purpose(round_no: int, count: int) -> str:
    """The purpose of the `count`-th (1-based) reshuffle of the discard pile in a round."""
    return f"allegra-lan/reshuffle/{round_no}/{count}"


def seed_from_number(number: int, game: int = 0) -> bytes:
    """A 32-byte game seed from a number, for `allegra simulate --seed S` and tests.

    Networked games derive their seed from the players' revealed nonces instead.
    """
    return blake2b(
        f"allegra-lan/seed-from-number/{number}/{game}".encode(), digest_size=32
    ).digest()
