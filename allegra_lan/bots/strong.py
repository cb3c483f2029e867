"""The `strong` bot: greedy's judgement, checked by playing the round out many times.

Near the round's end (the end triggered, or a display with `closed_at` or
fewer closed cards), at each decision with a real choice, it takes a few
candidate moves (greedy's pick and the moves a quick rating likes best),
deals the cards its seat cannot see in `samples` ways consistent with all
it has seen (`search.determinize`), and plays each candidate in each deal to the end of
the round with the quick playout policy (`search.play_round`). Every
candidate meets the same deals (common random numbers), so the comparison is
between paired playouts and their noise mostly cancels. A candidate replaces
greedy's pick only when it beats it on average by more than `margin` points
and by more than `sure` standard errors of the paired differences: when the
playouts cannot tell, greedy's one-move judgement is the better guide.
Earlier in a round greedy's pick stands: a cheap policy's play of a long
future judged worse than greedy does (docs/bots.md has the measurements).

The budget is counted in playouts (samples x candidates), so a seed fixes
every game; the wall-clock cap (`seconds`) is a safety that stops adding
samples after at least two, for a machine far slower than expected.

Knocking (ALLEGRA R16) is greedy's rule: the knock is decided on another
seat's turn, from a card the bot can place in one move, which is greedy's
strength.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

from allegra_lan.rules.moves import Move, Swap
from allegra_lan.rules.rng import Stream
from allegra_lan.rules.view import DecisionKind, SeatView

from .base import Bot
from .greedy import GreedyBot
from .search import Deal, Memory, clears, deck_mean, determinize, play_out, public_lead


@dataclass(frozen=True)
class Budget:
    """How hard the bot thinks: deals per decision and candidates per deal."""

    samples: int = 16
    candidates: int = 5
    margin: float = 0.25  # points a candidate must gain over greedy's pick on average
    sure: float = 2.0  # ... and standard errors of the paired differences
    closed_at: int = 3  # search once a display has this few closed cards, or the end is triggered
    seconds: float = 10.0  # safety cap per decision (never reached on a sane machine)


LEVELS: dict[str, Budget] = {
    "normal": Budget(samples=8, candidates=4),
    "hard": Budget(samples=40, candidates=6),
}


class StrongBot(Bot):
    """Determinized Monte Carlo over greedy's candidates, whole rounds played out."""

    name = "strong"

    def __init__(self, seed: bytes, budget: Budget | None = None) -> None:
        super().__init__(seed)
        self.budget = budget or LEVELS["hard"]
        self.greedy = GreedyBot(self.seed)
        self.memory = Memory()
        self.decisions = 0

    def knocks(self, view: SeatView) -> bool:
        self.memory.see(view)
        return self.greedy.knocks(view)

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        self.memory.see(view)
        pick = self.greedy.choose(view, legal)
        if len(legal) == 1 or not self._endgame(view):
            return pick
        self.decisions += 1
        stream = Stream(self.seed, f"allegra-lan/bot/strong/decision/{self.decisions}")
        first = determinize(view, stream, self.memory)
        candidates = self._candidates(view, first, legal, pick)
        if len(candidates) == 1:
            return pick
        mean = deck_mean(view.ruleset)
        seat = view.seat
        worth: list[list[float]] = [[] for _ in candidates]
        start = time.monotonic()
        for k in range(self.budget.samples):
            deal = first if k == 0 else determinize(view, stream, self.memory)
            for i, m in enumerate(candidates):
                worth[i].append(play_out(deal, m, seat, mean))
            if k >= 1 and time.monotonic() - start > self.budget.seconds:
                break
        return self._verdict(candidates, worth, pick)

    # ------------------------------------------------------------ the search's parts

    def _verdict(self, candidates: list[Move], worth: list[list[float]], pick: Move) -> Move:
        """Greedy's pick unless another candidate is better by a margin the noise cannot explain."""
        base = worth[candidates.index(pick)]
        best, best_gain = pick, 0.0
        for m, w in zip(candidates, worth):
            if m == pick:
                continue
            diffs = [a - b for a, b in zip(w, base)]
            n = len(diffs)
            gain = math.fsum(diffs) / n
            var = math.fsum((d - gain) ** 2 for d in diffs) / max(1, n - 1)
            if gain > self.budget.margin and gain > self.budget.sure * math.sqrt(var / n) and gain > best_gain:
                best, best_gain = m, gain
        return best

    def _endgame(self, view: SeatView) -> bool:
        """Whether the round's end is near: there the playouts are short and nearly exact,
        while early in a round a quick policy's play of a long future is a poor judge."""
        if view.ender is not None:
            return True
        for d in view.displays:
            closed = sum(1 for row in d for cv in row if cv is not None and not cv.up)
            if closed <= self.budget.closed_at:
                return True
        return False

    def _candidates(self, view: SeatView, deal: Deal, legal: Sequence[Move], pick: Move) -> list[Move]:
        """Greedy's pick first, then the best others by a one-move rating of the public facts.

        A Swap (R26) is looked at only when it makes a run: any other Swap only spends a turn."""
        kind = view.decision.kind if view.decision is not None else None
        room = self.budget.candidates
        others = [m for m in legal if m != pick and (not isinstance(m, Swap) or clears(deal, m))]
        if len(others) >= room and kind in (DecisionKind.REVEAL, DecisionKind.TURN_UP,
                                              DecisionKind.PEEK_LINE, DecisionKind.PEEK_CARD):
            # What a turn-up or a look shows is unknown: a one-move rating cannot rank them,
            # so the candidates are spread over the places.
            step = len(others) / (room - 1)
            others = [others[int(i * step)] for i in range(room - 1)]
        elif len(others) >= room:
            mean = deck_mean(view.ruleset)
            rated = sorted(range(len(others)), key=lambda i: (-public_lead(deal, others[i], view.seat, mean), i))
            others = [others[i] for i in rated[: room - 1]]
        return [pick] + others


def make_level(level: str):
    """A factory for a registry entry: a StrongBot at one of LEVELS' budgets."""
    budget = LEVELS[level]

    def factory(seed: bytes) -> Bot:
        return StrongBot(seed, budget)

    return factory


__all__ = ["StrongBot", "Budget", "LEVELS", "make_level"]
