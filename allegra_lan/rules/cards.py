"""Where card values come from.

The engine names cards by card id (their place in the round's shuffled deck)
and asks a CardSource for a value only at the moment the rules reveal that
card to someone. Today the source is the seeded shuffle; a later dealing
protocol in which no peer knows an unrevealed value can supply values as they
are revealed through this same interface, without touching the rules.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from .rng import Stream, deal_purpose, reshuffle_purpose
from .ruleset import Ruleset


class CardSource(Protocol):
    def value(self, round_no: int, card: int) -> int:
        """The value of `card` in round `round_no`; asked only when the rules reveal it."""
        ...

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        """The new deck order (top first) of the `count`-th reshuffle of `cards` (R8)."""
        ...


class SeededCards:
    """Values and reshuffles from the game seed (PROTOCOL.md, "Seed to deck")."""

    __slots__ = ("ruleset", "seed", "_rounds")

    def __init__(self, ruleset: Ruleset, seed: bytes) -> None:
        self.ruleset = ruleset
        self.seed = bytes(seed)
        self._rounds: dict[int, list[int]] = {}

    def deck(self, round_no: int) -> list[int]:
        """The values of round `round_no`'s shuffled deck, card id 0 (the top) first."""
        values = self._rounds.get(round_no)
        if values is None:
            values = self.ruleset.deck_values()
            Stream(self.seed, deal_purpose(round_no)).shuffle(values)
            self._rounds[round_no] = values
        return values

    def value(self, round_no: int, card: int) -> int:
        return self.deck(round_no)[card]

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        order = list(cards)
        Stream(self.seed, reshuffle_purpose(round_no, count)).shuffle(order)
        return order


class FixedCards:
    """Values given outright for one round, for positions built by hand (tests, examples).

    Reshuffles in that round reverse the pile so that a test can predict them;
    later rounds are dealt by `later` (a seeded source).
    """

    __slots__ = ("values", "round_no", "later")

    def __init__(self, values: Sequence[int], round_no: int, later: CardSource) -> None:
        self.values = list(values)
        self.round_no = round_no
        self.later = later

    def value(self, round_no: int, card: int) -> int:
        if round_no == self.round_no:
            return self.values[card]
        return self.later.value(round_no, card)

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        if round_no == self.round_no:
            return list(reversed(cards))
        return self.later.reshuffle(round_no, count, cards)
