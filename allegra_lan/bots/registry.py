"""The bots by name, for `allegra simulate --bots` and every later tool that seats bots."""

from __future__ import annotations

from typing import Callable

from .base import Bot, UnknownBot
from .greedy import GreedyBot
from .random_bot import RandomBot
from .strong import StrongBot, make_level

# The levels a person picks (docs/bots.md): easy is greedy's one-move lookahead, normal
# and hard the strong bot's search at a small and at its full budget; `strong` is hard.
_BOTS: dict[str, Callable[[bytes], Bot]] = {
    "easy": GreedyBot,
    "greedy": GreedyBot,
    "hard": make_level("hard"),
    "normal": make_level("normal"),
    "random": RandomBot,
    "strong": StrongBot,
}


def bot_names() -> list[str]:
    """The registered bot names, sorted."""
    return sorted(_BOTS)


def make_bot(name: str, seed: bytes) -> Bot:
    """A fresh bot of kind `name` drawing its randomness from `seed`."""
    factory = _BOTS.get(name)
    if factory is None:
        raise UnknownBot(f"unknown bot {name!r}: choose from {', '.join(bot_names())}")
    return factory(seed)


__all__ = ["bot_names", "make_bot"]
