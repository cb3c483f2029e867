"""Ratings over games in time order, with openskill's Plackett-Luce model.

Wins and means say how a night went; a rating says how strong a player is
given whom they met: beating strong players counts more, and a newcomer's
uncertainty (sigma) shrinks as games come in. Plackett-Luce rates a whole
table's finishing order at once (no pairwise bookkeeping), which is what a
table of 2 to 6 Golf players gives. The conservative `ordinal` (mu - 3 sigma)
is what to rank by when some have played few games.

openskill is imported here only, by the function that rates, so no other
command pays for it at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Sequence


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        """mu - 3 sigma: the rating the player is 99.7% likely to be above (openskill's default)."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True)
class RatedGame:
    """One finished game for the model: who sat (in seat order) and their game totals."""

    players: Sequence[Hashable]
    totals: Sequence[int]


def finishing_ranks(totals: Sequence[int]) -> list[int]:
    """Golf ranks: the lowest total is 1st; equal totals share a place (1, 2, 2, 4)."""
    return [1 + sum(1 for o in totals if o < t) for t in totals]


def rate(games: Sequence[RatedGame]) -> dict[Hashable, Rating]:
    """Every player's rating after `games`, taken in the order given (time order: the caller's).

    A player seated twice in one game (two seats, one key) is rated on their best seat,
    since the model needs each player once per game."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current: dict[Hashable, object] = {}
    for g in games:
        ranks = finishing_ranks(g.totals)
        best: dict[Hashable, int] = {}
        for who, rank in zip(g.players, ranks):
            best[who] = min(rank, best.get(who, rank))
        if len(best) < 2:
            continue  # one player at the table: nobody to be rated against
        order = list(best)
        teams = [[current.get(w) or model.rating()] for w in order]
        rated = model.rate(teams, ranks=[best[w] for w in order])
        for w, team in zip(order, rated):
            current[w] = team[0]
    return {w: Rating(float(r.mu), float(r.sigma)) for w, r in current.items()}  # type: ignore[attr-defined]


__all__ = ["Rating", "RatedGame", "finishing_ranks", "rate"]
