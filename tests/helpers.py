"""Shared helpers of the ruling tests: effects counted over several moves, filler displays,
and one deterministic player that brings rounds to their end without any strategy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence, TypeVar

from allegra_lan.rules import (
    Discard, DrawFromDeck, Give, IllegalMove, Move, State, apply, legal_moves, to_act,
)
from allegra_lan.rules.effects import Cleared, Effect

T = TypeVar("T")


def closed_display(rows: int = 4, cols: int = 4) -> list[str]:
    """A display of closed filler cards, for the seats a test does not look at."""
    return [" ".join(["?"] * cols) for _ in range(rows)]


def of_type(effects: Sequence[Effect], kind: type[T]) -> list[T]:
    return [e for e in effects if isinstance(e, kind)]


def cleared_cards(effects: Sequence[Effect]) -> int:
    return sum(len(e.cards) for e in of_type(effects, Cleared))


def clear_steps(effects: Sequence[Effect]) -> int:
    """Clearing steps as RULINGS.md counts them: distinct `step` numbers of the clears."""
    return len({e.step for e in of_type(effects, Cleared)})


def illegal(state: State, move: Move) -> str:
    """The refusal message of a move the test expects to be illegal."""
    try:
        apply(state, move)
    except IllegalMove as err:
        return str(err)
    raise AssertionError(f"{move!r} was accepted in phase {state.phase.name}")


@dataclass
class Played:
    """A state reached by several moves, with every effect on the way (apply keeps only the last)."""

    state: State
    effects: list[Effect] = field(default_factory=list)
    decisions: list[tuple[int, str]] = field(default_factory=list)


def play(state: State, moves: Sequence[Move]) -> Played:
    out = Played(state)
    for move in moves:
        d = to_act(out.state)
        assert d is not None, "the game is over"
        out.decisions.append((d.seat, d.kind))
        out.state = apply(out.state, move)
        out.effects.extend(out.state.effects)
    return out


def quick_move(state: State) -> Move:
    """Draw from the deck and discard at once (so a closed card turns up every time):
    rounds end in a few turns. Never gives to a knocker; a discard-pile card is placed."""
    moves = legal_moves(state)
    for m in moves:
        if isinstance(m, DrawFromDeck):
            return m
    for m in moves:
        if isinstance(m, Discard):
            return m
    return next(m for m in moves if not isinstance(m, Give))


def play_until(state: State, done: Callable[[Played], bool], limit: int = 20_000,
               chooser: Callable[[State], Move] = quick_move) -> Played:
    """Apply `chooser`'s moves until `done` says so (checked after every move)."""
    out = Played(state)
    for _ in range(limit):
        if done(out):
            return out
        d = to_act(out.state)
        assert d is not None, "the game ended before the awaited moment"
        out.decisions.append((d.seat, d.kind))
        out.state = apply(out.state, chooser(out.state))
        out.effects.extend(out.state.effects)
    raise AssertionError("the awaited moment never came")
