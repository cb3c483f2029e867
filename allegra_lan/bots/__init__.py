"""Bots: players that decide from their own seat's view alone (DESIGN.md property 6).

    >>> from allegra_lan.bots import bot_names, play_game
    >>> from allegra_lan.rules import Variant, ruleset_for
    >>> from allegra_lan.rules.rng import seed_from_number
    >>> bot_names()
    ['easy', 'greedy', 'hard', 'normal', 'random', 'strong']
    >>> state, stats = play_game(ruleset_for(Variant.GRANDE), 2, seed_from_number(1), ["greedy", "random"])
    >>> len(state.results)
    3
"""

from .base import Bot, UnknownBot, seat_seed
from .driver import BotError, GameStats, make_bots, offered_moves, play_game
from .greedy import GreedyBot, Weights
from .random_bot import RandomBot
from .registry import bot_names, make_bot
from .strong import Budget, StrongBot

__all__ = [
    "Bot", "UnknownBot", "seat_seed", "BotError", "GameStats", "make_bots", "offered_moves",
    "play_game", "GreedyBot", "Weights", "RandomBot", "bot_names", "make_bot", "Budget", "StrongBot",
]
