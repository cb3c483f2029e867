"""Card points: the public starting points of a pile, and the way back from a point to a card.

Why hash to the curve: M_j = from_uniform(H(game, round, pile, j)) gives every card place
of every pile of every game a point whose discrete log nobody knows, so no two points have
a known relation: encryption is additive, and with M_j = j*G a seat could turn an
encrypted card into another valid card (add an encryption of G) unseen; with hashed
points any such combination opens to no card point, and is caught. The value
of M_j is public: it is value j of the pile's unshuffled list (the ruleset's deck for pile
0, the discard pile in its public order for a reshuffle), and a reshuffled pile gets fresh
points, so a card's point never tells where it was seen before.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import nacl.bindings as nb

from .derive import hash_
from .group import DealError, check_point

MAX_PILE = 4096
"""More cards than any ruleset deals (a pile of 160 is the largest today)."""


@dataclass(frozen=True)
class Pile:
    """One shuffled pile: `game` (the game id), `round_no`, `pile` (0 for the round's deck,
    c for the c-th reshuffle of the discard pile) and `size` (its number of cards). Every
    key of the pile derives from these, so two piles never share a key."""

    game: bytes
    round_no: int
    pile: int
    size: int

    def __post_init__(self) -> None:
        if not isinstance(self.game, bytes) or not 1 <= len(self.game) <= 64:
            raise DealError("a game id is not 1 to 64 bytes")
        for name in ("round_no", "pile"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 2**32:
                raise DealError(f"a pile's {name} is not a number from 0 to 2^32-1")
        if not isinstance(self.size, int) or isinstance(self.size, bool) or not 1 <= self.size <= MAX_PILE:
            raise DealError(f"a pile's size is not a number from 1 to {MAX_PILE}")


def card_point(pile: Pile, j: int) -> bytes:
    """M_j = from_uniform(BLAKE2b-256(frame("card", game, round, pile, j)))."""
    return nb.crypto_core_ed25519_from_uniform(hash_("card", pile.game, pile.round_no, pile.pile, j, size=32))


@dataclass(frozen=True)
class CardPoints:
    """The pile's card points in order and a dict from point back to its place j."""

    pile: Pile
    points: tuple[bytes, ...]
    index: dict[bytes, int] = field(repr=False, compare=False)

    @classmethod
    def of(cls, pile: Pile) -> CardPoints:
        points = tuple(card_point(pile, j) for j in range(pile.size))
        for j, p in enumerate(points):
            check_point(p, f"card point {j}")  # the identity has probability 2^-252; refuse it
        index = {p: j for j, p in enumerate(points)}
        if len(index) != len(points):
            raise DealError("two card points of a pile coincide")
        return cls(pile, points, index)

    def card_index(self, point: bytes) -> int | None:
        """The place j whose point this is, or None (a card that opens to no card point:
        some seat tampered with its shuffle, named at game end)."""
        return self.index.get(point)
