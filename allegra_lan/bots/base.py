"""What every bot is: a player that decides from its own seat's view alone.

A bot never receives the full `State`: the driver (and later the network
client) hands it `view(state, seat)` and the moves it may make, so a bot
cannot use a card its player could not see (DESIGN.md property 6). Its
randomness comes from a seeded `Stream`, so a game between bots is the same
byte for byte every time it is replayed with the same seed.
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from abc import ABC, abstractmethod
from typing import Sequence

from allegra_lan.rules.moves import Move
from allegra_lan.rules.rng import Stream
from allegra_lan.rules.view import SeatView


class UnknownBot(ValueError):
    """A bot name that is not in the registry; the message lists the names that are."""


class Bot(ABC):
    """A player: picks one of the offered moves, and says whether it knocks (ALLEGRA R16)."""

    name: str = "bot"

    def __init__(self, seed: bytes) -> None:
        self.seed = bytes(seed)
        # One stream per bot kind, so that two kinds seeded alike still decide independently.
        self.rng = Stream(self.seed, f"allegra-lan/bot/{self.name}")

    @abstractmethod
    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        """One move of `legal` (never empty) for the decision `view.decision` names."""

    @abstractmethod
    def knocks(self, view: SeatView) -> bool:
        """ALLEGRA R16: whether this seat knocks for the card the active seat just drew."""

    def pick(self, items: Sequence[Move]) -> Move:
        """A uniform choice from the bot's own stream (never Python's `random`)."""
        return items[self.rng.below(len(items))]


def seat_seed(game_seed: bytes, seat: int) -> bytes:
    """The seed of the bot at `seat` in a game: derived from the game seed, distinct per seat."""
    return blake2b(
        f"allegra-lan/bot-seat/{seat}".encode(), key=bytes(game_seed)[:64], digest_size=32
    ).digest()


__all__ = ["Bot", "UnknownBot", "seat_seed"]
