"""The `random` bot: a baseline that any sensible player must beat."""

from __future__ import annotations

from typing import Sequence

from allegra_lan.rules.moves import Move
from allegra_lan.rules.view import SeatView

from .base import Bot


class RandomBot(Bot):
    """Uniform over the moves offered; knocks on a fair coin."""

    name = "random"

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        return self.pick(legal)

    def knocks(self, view: SeatView) -> bool:
        return self.rng.below(2) == 0


__all__ = ["RandomBot"]
