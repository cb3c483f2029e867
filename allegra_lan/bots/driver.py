"""Play a whole game between bots, and count what happened in it.

The driver is the only code here that holds the full `State`: it asks the
engine who acts, gives that seat's bot its view and the moves it may make,
and applies the answer. Statistics come from the effects the engine leaves
in `state.effects` after each move and from the round results, never from
re-deriving the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from allegra_lan.local import LocalGame
from allegra_lan.rules.effects import Cleared, Discarded, Given
from allegra_lan.rules.engine import ACTION_VALUES, apply, new_game, to_act, winners
from allegra_lan.rules.moves import describe_move
from allegra_lan.rules.ruleset import Ruleset, Variant
from allegra_lan.rules.state import State
from allegra_lan.rules.view import SeatView, view

from . import registry
from .base import Bot, seat_seed
from .offer import offered_moves


MAX_MOVES = 200_000
"""A game that has not ended after this many moves is a bug (a bot that never ends a
round, or an engine loop); the driver stops with an error instead of hanging."""


class BotError(RuntimeError):
    """A bot answered with a move it was not offered, no move was offered, or a game did not end."""


@dataclass
class GameStats:
    """What one game's moves caused: per round and overall."""

    players: int
    variant: Variant
    totals: tuple[int, ...] = ()
    winners: tuple[int, ...] = ()
    turns: tuple[int, ...] = ()  # per round (RoundResult.turns)
    cleared: tuple[int, ...] = ()  # per round (RoundResult.cleared)
    longest_chain: int = 0  # most clearing steps after one move (Cleared.step)
    activated: dict[int, int] = field(default_factory=lambda: {v: 0 for v in ACTION_VALUES})
    knock_windows: int = 0  # ALLEGRA R16: deck draws after which others were asked
    knocks: int = 0  # seats that knocked, summed over the windows
    gives: int = 0  # cards given to a knocker
    moves: int = 0  # apply() calls


def make_bots(names: Sequence[Bot | str], seed: bytes) -> list[Bot]:
    """Bots for a game: names are made with a per-seat seed derived from the game seed."""
    return [
        registry.make_bot(b, seat_seed(seed, seat)) if isinstance(b, str) else b
        for seat, b in enumerate(names)
    ]


def play_game(
    ruleset: Ruleset, players: int, seed: bytes, bots: Sequence[Bot | str],
    record: LocalGame | None = None,
) -> tuple[State, GameStats]:
    """A whole game from the seed to its end; returns the final state and its statistics.

    With `record` (a signed game whose ceremony gave `seed`), every move is
    signed by its seat and folded through the game's Table instead of applied
    directly, so the log (and its replay file) is the game that was played.
    """
    if len(bots) != players:
        raise ValueError(f"{len(bots)} bots for {players} players")
    seats = make_bots(bots, seed)
    if record is not None:
        if record.table.seed != seed:
            raise ValueError("the recorded game was seeded differently")
        state = record.state
    else:
        state = new_game(ruleset, players, seed)
    stats = GameStats(players=players, variant=ruleset.variant)

    def seat_view(seat: int) -> SeatView:
        # A fair-deal record: each bot sees its own seat's table (its peeks); else the state.
        return view(state if record is None else record.seat_state(seat), seat)

    while True:
        decision = to_act(state)
        if decision is None or (record is not None and record.halted):
            break
        if stats.moves >= MAX_MOVES:
            raise BotError(f"the game did not end within {MAX_MOVES} moves")
        offered = offered_moves(state, seats, stats, views=seat_view)
        if not offered:
            raise BotError(f"the engine offers no move to {decision}")
        bot = seats[decision.seat]
        move = bot.choose(seat_view(decision.seat), offered)
        if move not in offered:
            raise BotError(
                f"bot {bot.name!r} at seat {decision.seat} chose a move it was not offered: "
                f"{describe_move(move)} ({decision})"
            )
        before = state
        if record is not None:
            record.submit(move)
            state = record.state
        else:
            state = apply(state, move)
        stats.moves += 1
        _count(stats, before, state)
    stats.totals = tuple(state.totals)
    stats.winners = winners(state)
    stats.turns = tuple(r.turns for r in state.results)
    stats.cleared = tuple(r.cleared for r in state.results)
    return state, stats


def _count(stats: GameStats, before: State, after: State) -> None:
    for e in after.effects:
        if isinstance(e, Cleared):
            if e.step > stats.longest_chain:
                stats.longest_chain = e.step
        elif isinstance(e, Discarded):
            if e.activated:
                # The card was drawn (and shown) by an earlier move, so the state before
                # this move knows its value even when this move ended the round.
                value = before.known[e.card]
                if value is not None:
                    stats.activated[value] = stats.activated.get(value, 0) + 1
        elif isinstance(e, Given):
            stats.gives += 1


__all__ = ["GameStats", "BotError", "play_game", "offered_moves", "make_bots", "MAX_MOVES"]
