"""The state of a game: plain data that only the engine changes, by copying.

`apply` clones a state and changes the clone, so a state a caller holds never
changes under it. The hidden values live in the card source, not here: a state
records where every card id lies, which are face up, the values the rules have
revealed to all, and which cards each seat peeked at; a peeked value is only in
the source (under the fair deal, only in the peeker's), so the state and its
hash are public knowledge.
"""

from __future__ import annotations

from allegra_lan.blake import blake2b
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Any

from .cards import CardSource, PartialCards
from .effects import Effect
from .ruleset import Ruleset, Variant

HOLE = -1
"""A place whose card was cleared (R5): it matches nothing and breaks adjacency."""


class Phase(IntEnum):
    REVEAL = 0  # R3: a seat turns up a card at the round's start
    DRAW = 1  # start of a turn: draw (Grande: or Swap)
    DRAW_SECOND = 2  # Grande R20: the second draw
    PLAY = 3  # play a card in hand (ALLEGRA: or give it to a knocker)
    TURN_UP = 4  # turn up a closed card after a discard or a Swap
    PEEK_LINE = 5  # Grande -2
    PEEK_CARD = 6  # Grande 5
    REPLACE_OPEN = 7  # Grande 13
    PLACE_GIVEN = 8  # ALLEGRA R16: the knocker places the given card
    EXCHANGE = 9  # ALLEGRA R16: the active player takes Z and replaces W
    OVER = 10


class DecisionKind(StrEnum):
    """What a seat must decide next (`to_act(state).kind`). A StrEnum, so a member is the very
    string these kinds always were ("reveal", "place_given", ...): it equals, hashes and
    formats as that string, so text built from it and code that still compares with the plain
    string read the same, while the rules, bots and client compare members a typo cannot miss."""

    REVEAL = "reveal"
    DRAW = "draw"
    DRAW_SECOND = "draw_second"
    PLAY = "play"
    TURN_UP = "turn_up"
    PEEK_LINE = "peek_line"
    PEEK_CARD = "peek_card"
    REPLACE_OPEN = "replace_open"
    PLACE_GIVEN = "place_given"
    EXCHANGE = "exchange"


DECISION_KIND: dict[Phase, DecisionKind] = {
    Phase.REVEAL: DecisionKind.REVEAL,
    Phase.DRAW: DecisionKind.DRAW,
    Phase.DRAW_SECOND: DecisionKind.DRAW_SECOND,
    Phase.PLAY: DecisionKind.PLAY,
    Phase.TURN_UP: DecisionKind.TURN_UP,
    Phase.PEEK_LINE: DecisionKind.PEEK_LINE,
    Phase.PEEK_CARD: DecisionKind.PEEK_CARD,
    Phase.REPLACE_OPEN: DecisionKind.REPLACE_OPEN,
    Phase.PLACE_GIVEN: DecisionKind.PLACE_GIVEN,
    Phase.EXCHANGE: DecisionKind.EXCHANGE,
}

DECISION_WORDS: dict[DecisionKind, str] = {
    DecisionKind.REVEAL: "turn up a card to start the round",
    DecisionKind.DRAW: "draw a card",
    DecisionKind.DRAW_SECOND: "draw the second card",
    DecisionKind.PLAY: "play a card in hand",
    DecisionKind.TURN_UP: "turn up a closed card",
    DecisionKind.PEEK_LINE: "look at a row or column (-2)",
    DecisionKind.PEEK_CARD: "look at a closed card (5)",
    DecisionKind.REPLACE_OPEN: "replace an open card with a closed one (13)",
    DecisionKind.PLACE_GIVEN: "place the card given to you",
    DecisionKind.EXCHANGE: "take a card from the knocker's area",
}


@dataclass(frozen=True, slots=True)
class Decision:
    """Who must act next, and what kind of decision it is."""

    seat: int
    kind: DecisionKind

    def __str__(self) -> str:
        return f"seat {self.seat}: {DECISION_WORDS[self.kind]}"


@dataclass(frozen=True, slots=True)
class RoundResult:
    round_no: int
    ender: int | None
    raw: tuple[int, ...]  # each seat's sum before doubling
    scores: tuple[int, ...]  # after doubling (R10)
    doubled: bool
    totals: tuple[int, ...]  # game totals after this round
    cleared: int  # cards cleared in the round
    turns: int  # turns played in the round
    displays: tuple[tuple[tuple[int | None, ...], ...], ...]  # final values (JOKER for a Joker), None = hole


class Grid:
    """One seat's display: `rows` x `cols` card ids (HOLE where a card was cleared)."""

    __slots__ = ("rows", "cols", "cells")

    def __init__(self, rows: int, cols: int, cells: list[int]) -> None:
        self.rows = rows
        self.cols = cols
        self.cells = cells

    def copy(self) -> "Grid":
        return Grid(self.rows, self.cols, self.cells[:])

    def at(self, row: int, col: int) -> int:
        return self.cells[row * self.cols + col]

    def inside(self, row: int, col: int) -> bool:
        return 0 <= row < self.rows and 0 <= col < self.cols


class State:
    """A game at one moment. Treat as immutable: use `engine.apply` to move on."""

    __slots__ = (
        "ruleset", "players", "source", "round_no", "dealer", "phase", "active",
        "grids", "up", "known", "peeked", "deck", "discard", "cleared", "hand",
        "draws", "draw_limit", "first_from_deck", "reveal_queue", "ender",
        "final_lap", "totals", "results", "knock", "reshuffles", "turn",
        "round_cleared", "sealed", "fair", "effects", "memo",
    )

    ruleset: Ruleset
    players: int
    source: CardSource | PartialCards  # PartialCards: the fair deal, one seat's knowledge
    round_no: int
    dealer: int
    phase: Phase
    active: int
    grids: list[Grid]
    up: set[int]  # card ids face up in the displays
    known: list[int | None]  # values revealed to everyone, by card id
    peeked: list[frozenset[int]]  # per seat: card ids it looked at while closed
    deck: list[int]  # top is the last element
    discard: list[int]  # top is the last element
    cleared: list[int]  # cards out of play this round (R7)
    hand: list[tuple[int, bool]]  # (card id, came from the deck) for the active seat
    draws: int
    draw_limit: int
    first_from_deck: bool
    reveal_queue: list[int]  # seats still to turn up a card at the round's start
    ender: int | None  # R9: the seat that triggered the round's end
    final_lap: list[int] | None  # seats still to play their last turn
    totals: list[int]
    results: tuple[RoundResult, ...]
    knock: tuple[int, int, int] | None  # (knocker, given card, card the knocker holds or HOLE)
    reshuffles: int
    turn: int  # turns begun in this round
    round_cleared: int
    sealed: bool  # Grande R24: a 13 acted this turn, so no closed card is turned up until it ends
    fair: bool  # the fair deal: the source knows only this seat's share of the values
    effects: list[Effect]  # what the last move caused
    memo: dict[Any, Any]  # per-round memo of immutable view parts, shared by clones (not state)

    def clone(self) -> "State":
        s = State.__new__(State)
        s.ruleset = self.ruleset
        s.players = self.players
        s.source = self.source
        s.round_no = self.round_no
        s.dealer = self.dealer
        s.phase = self.phase
        s.active = self.active
        s.grids = [g.copy() for g in self.grids]
        s.up = set(self.up)
        s.known = self.known[:]
        s.peeked = self.peeked[:]
        s.deck = self.deck[:]
        s.discard = self.discard[:]
        s.cleared = self.cleared[:]
        s.hand = self.hand[:]
        s.draws = self.draws
        s.draw_limit = self.draw_limit
        s.first_from_deck = self.first_from_deck
        s.reveal_queue = self.reveal_queue[:]
        s.ender = self.ender
        s.final_lap = None if self.final_lap is None else self.final_lap[:]
        s.totals = self.totals[:]
        s.results = self.results
        s.knock = self.knock
        s.reshuffles = self.reshuffles
        s.turn = self.turn
        s.round_cleared = self.round_cleared
        s.sealed = self.sealed
        s.fair = self.fair
        s.effects = []
        s.memo = self.memo
        return s

    @property
    def variant(self) -> Variant:
        return self.ruleset.variant

    def card_count(self) -> int:
        """Cards in deck, discard pile, displays, out of play and in hands (always the deck size)."""
        on_table = sum(1 for g in self.grids for c in g.cells if c != HOLE)
        # During a knock (R16) one card is in a hand: the given card, then the knocker's Y.
        held = len(self.hand) + (self.knock is not None)
        return len(self.deck) + len(self.discard) + on_table + len(self.cleared) + held

    def canonical(self) -> tuple[Any, ...]:
        """Everything the log has determined, as nested tuples of ints, bools, str and None."""
        return (
            repr(tuple(sorted(self.ruleset.to_dict().items(), key=lambda kv: kv[0]))),
            self.players, self.round_no, self.dealer, int(self.phase), self.active,
            tuple((g.rows, g.cols, tuple(g.cells)) for g in self.grids),
            tuple(sorted(self.up)), tuple(self.known),
            tuple(tuple(sorted(p)) for p in self.peeked),
            tuple(self.deck), tuple(self.discard), tuple(self.cleared), tuple(self.hand),
            self.draws, self.draw_limit, self.first_from_deck, tuple(self.reveal_queue),
            self.ender, None if self.final_lap is None else tuple(self.final_lap),
            tuple(self.totals),
            tuple((r.round_no, r.ender, r.raw, r.scores, r.doubled) for r in self.results),
            self.knock, self.reshuffles, self.turn, self.round_cleared,
        ) + (("sealed",) if self.sealed else ()) + (("fair",) if self.fair else ())
        # R24's flag and the fair deal's, added later: absent when unset (so the hash of
        # every state that never had them is the hash it always had)


def state_hash(state: State) -> str:
    """A stable hex digest of the state: equal on every peer that folded the same log."""
    return blake2b(repr(state.canonical()).encode(), digest_size=16).hexdigest()
