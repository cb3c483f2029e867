"""Where card values come from.

The engine names cards by card id (their place in the round's shuffled deck)
and asks its source for a value only at the moment the rules reveal that card
to someone. Two kinds of source:

- a CardSource knows every value (the seeded deal of local games, `simulate`,
  positions built by hand): the engine asks `value(round, card)` and never waits;
- a PartialCards knows only what was revealed to its seat (the fair deal,
  docs/fairdeal.md): the engine asks `reveal(RevealRequest)`, which says who may
  learn the value, and stops the move with NeedValues while a share is missing.
"""

from __future__ import annotations

from dataclasses import dataclass
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
    fair = False

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
    fair = False

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


# ----------------------------------------------------------------- the fair deal's partial knowledge


@dataclass(frozen=True, slots=True)
class RevealRequest:
    """One value the engine needs now: card `card` of round `round_no`, shown to every seat
    (`to` None: a public reveal, a turn-up, a draw, a card leaving its place, the round's
    end) or to seat `to` alone (a private reveal: Grande's peeks, R23).

    Why explicit: under the fair deal a value exists only once the seats have handed in
    their decryption shares, and which shares are owed depends on who may learn it
    (`owed_by`): a public reveal needs every seat's share in the log; a private one the
    shares of every seat but the peeker, who adds its own and tells nobody. A request
    depends only on public state, so every peer's engine asks the same ones at the same
    move.
    """

    round_no: int
    card: int
    to: int | None = None

    @property
    def public(self) -> bool:
        return self.to is None

    def owed_by(self, players: int) -> tuple[int, ...]:
        """The seats whose shares this reveal needs in the log (all but the peeker)."""
        return tuple(s for s in range(players) if s != self.to)


class NeedValues(Exception):
    """`apply` cannot finish the move before these values are known to this engine.

    Raised only with a partial source (the fair deal); the state passed to `apply` is
    unchanged (apply works on a copy). The caller gathers the shares the requests name,
    tells the source (`PartialCards.learn`) and applies the same move again; a move
    needs at most two such batches (the cards it shows, then, if it ends the round,
    every card still closed), and the same on every peer. Not an IllegalMove: the move
    is legal, it is only early.
    """

    def __init__(self, requests: Sequence[RevealRequest]) -> None:
        self.requests = tuple(requests)
        shown = ", ".join(f"#{r.card}" + ("" if r.to is None else f" (to seat {r.to})")
                          for r in self.requests)
        super().__init__(f"the move waits for the values of round {self.requests[0].round_no}'s "
                         f"card{'s' if len(self.requests) > 1 else ''} {shown}")


class Hidden:
    """The answer for a private reveal to another seat whose shares are all in: this
    engine goes on without the value, as the rules make it do (R23). One instance, HIDDEN."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HIDDEN"


HIDDEN = Hidden()


class ValueConflict(ValueError):
    """A card was opened to two different values: the deal was tampered with (its
    author is named by the game-end verification of the deal)."""


@dataclass(frozen=True, slots=True)
class PileInfo:
    """One shuffled pile of a round, as the engine names its cards: card ids `first` to
    `first + len(values) - 1` are its places 0.. in the final list, and `values` is the
    public unshuffled list (place j of the card points is value `values[j]`)."""

    round_no: int
    pile: int
    first: int
    values: tuple[int, ...]

    def holds(self, card: int) -> bool:
        return self.first <= card < self.first + len(self.values)


def _check_request(request: object) -> None:
    """A request that arrives from outside the engine (the later slice builds them from
    log events) is three plain numbers, or ValueError."""
    if not isinstance(request, RevealRequest):
        raise ValueError(f"{request!r:.60} is not a reveal request")
    for name in ("round_no", "card"):
        v = getattr(request, name)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 2**32:
            raise ValueError(f"a reveal request's {name} is not a number from 0 to 2^32-1")
    to = request.to
    if to is not None and (isinstance(to, bool) or not isinstance(to, int) or not 0 <= to < 64):
        raise ValueError("a reveal request's seat is not a seat number")


class PartialCards:
    """What one seat's engine knows of a fair-deal game's cards: the values revealed to
    everyone, and those revealed to this seat alone (its peeks), nothing else.

    Why a store and not a computation: under the fair deal no peer can compute a value;
    it arrives when the seats' shares open the card (deal/reveal.py), as events, after
    the move that reveals it. The engine asks `reveal(request)` and, on None, stops the
    move with NeedValues; the caller `learn`s what the shares opened and applies again.
    Public and private knowledge are kept apart, so that a public reveal is answered only
    by a public opening (the same on every peer) even where this seat peeked the card.

    `seat` None is a spectator (a replay of the public log): it learns no private value.
    Reshuffled piles (R8) get fresh card ids: `new_pile`, called by the engine, records
    which ids are which pile's places, so that a card's id never names a card seen
    before.
    """

    fair = True

    def __init__(self, ruleset: Ruleset, seat: int | None) -> None:
        self.ruleset = ruleset
        self.seat = seat
        self._public: dict[tuple[int, int], int] = {}
        self._private: dict[tuple[int, int], int] = {}
        self._hidden: set[tuple[int, int]] = set()
        self._piles: dict[tuple[int, int], PileInfo] = {}
        self._opened: dict[tuple[int, int, int], int] = {}  # (round, pile, place) -> card
        self._deck = tuple(ruleset.deck_values())

    # -- what the engine asks

    def reveal(self, request: RevealRequest) -> int | Hidden | None:
        """The value, HIDDEN (a private reveal to another seat whose shares are in), or
        None while a share is missing."""
        key = (request.round_no, request.card)
        if request.to is None:
            return self._public.get(key)
        if request.to == self.seat:
            return self._private.get(key)
        return HIDDEN if key in self._hidden else None

    def seen(self, round_no: int, card: int, seat: int) -> int | None:
        """The value `seat` saw of a card it peeked at, if this engine may know it."""
        return self._private.get((round_no, card)) if seat == self.seat else None

    def known(self, round_no: int, card: int) -> int | None:
        """Whatever this seat knows of the card: its public value, else its own peek."""
        key = (round_no, card)
        v = self._public.get(key)
        return self._private.get(key) if v is None else v

    def value(self, round_no: int, card: int) -> int:
        """CardSource's question, for tools that read a source directly: only what this
        seat knows; LookupError for the rest."""
        v = self.known(round_no, card)
        if v is None:
            raise LookupError(f"card #{card} of round {round_no} is not known to this seat")
        return v

    def reshuffle(self, round_no: int, count: int, cards: Sequence[int]) -> list[int]:
        raise TypeError("a fair-deal pile is reshuffled into fresh card ids (new_pile), not permuted")

    def new_pile(self, round_no: int, count: int, first: int, values: Sequence[int]) -> PileInfo:
        """R8's `count`-th reshuffle of round `round_no`: the cards get ids `first`.. and
        the pile's public list is `values` (the discard pile but its top, bottom first).
        Asking again with the same arguments (a move applied again) changes nothing."""
        info = PileInfo(round_no, count, first, tuple(values))
        old = self._piles.setdefault((round_no, count), info)
        if old != info:
            raise ValueConflict(f"reshuffle {count} of round {round_no} was made twice differently")
        return info

    # -- where a card is in the deal

    def pile_of(self, round_no: int, card: int) -> PileInfo:
        """The pile and place of a card id (pile 0: the round's deck, ids 0 to size-1)."""
        if 0 <= card < len(self._deck):
            return PileInfo(round_no, 0, 0, self._deck)
        for info in self._piles.values():
            if info.round_no == round_no and info.holds(card):
                return info
        raise LookupError(f"card #{card} of round {round_no} is in no pile")

    def piles(self, round_no: int) -> list[PileInfo]:
        """Round `round_no`'s piles, the deck first, then its reshuffles in order."""
        extra = sorted((i for i in self._piles.values() if i.round_no == round_no), key=lambda i: i.pile)
        return [PileInfo(round_no, 0, 0, self._deck)] + extra

    # -- what the shares opened

    def learn(self, request: RevealRequest, place: int | None) -> None:
        """The shares of `request` are all in. `place` is the place j of the card's pile
        that they opened it to (deal/reveal.py's open_card), or None for a private reveal
        to another seat (this engine holds the others' shares but not the peeker's key
        part, so it learns that the reveal happened and not the value)."""
        _check_request(request)
        key = (request.round_no, request.card)
        if request.to is not None and request.to != self.seat:
            if place is not None:
                raise ValueError(f"seat {self.seat} cannot open a card shown to seat {request.to}")
            self._hidden.add(key)
            return
        if place is None:
            raise ValueError(f"a reveal of card #{request.card} to this seat needs the place it opened to")
        info = self.pile_of(request.round_no, request.card)
        values = info.values
        if isinstance(place, bool) or not isinstance(place, int) or not 0 <= place < len(values):
            raise ValueConflict(f"card #{request.card} opened to place {place!r}, outside its pile")
        value = values[place]
        for held in (self._public.get(key), self._private.get(key)):
            if held is not None and held != value:
                raise ValueConflict(f"card #{request.card} of round {request.round_no} opened to "
                                    f"{value}, it had opened to {held}")
        # Every card of a pile is a different place of its list: a second card opening to
        # the same place is a copied card (PROTOCOL.md, "Revealing a card").
        twin = self._opened.setdefault((info.round_no, info.pile, place), request.card)
        if twin != request.card:
            raise ValueConflict(f"card #{request.card} of round {request.round_no} opened to the "
                                f"place card #{twin} had opened to: the deal holds a copied card")
        (self._public if request.to is None else self._private)[key] = value
