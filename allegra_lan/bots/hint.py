"""The hint: what a bot would do now from a seat's view, and why, in a person's words.

The client's hint key and `allegra replay view --review` both ask this module.
The move comes from a bot by name (bots/registry.py), so a stronger bot can
give the hints without any change here; the reason comes from the greedy
bot's rating (bots/greedy.py) with the hinting bot's weights (the strong
bot's, `strong.strong_weights`, for the hint key; greedy's own when a review
asks greedy), worked out for the chosen move and for the best
other move: the expected points saved, a run the move clears or lines up
(R5, R14, R25), or a card it keeps from the next seat (the discard pile's
top). The reason says only what that rating sees: when the hinting bot picks
a move the rating likes less, the reason says so rather than invent a cause.

Pure: no I/O, no clock. A hint is a function of the view, the offered moves,
the bot's name and the seed, so the same position always gives the same hint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from allegra_lan.rules.moves import (
    Discard, DrawFromDeck, Exchange, Give, Move, PeekCard, PeekLine, Place, ReplaceOpen, Slot,
    Swap, TakeDiscard, TurnUp,
)
from allegra_lan.rules.ruleset import JOKER, Variant
from allegra_lan.rules.view import DecisionKind, SeatView

from allegra_lan.rules.clearing import runs_in_line

from .board import Board
from .base import Bot
from .greedy import Base, GreedyBot, Judge, Weights, m_value
from .registry import make_bot
from .strong import StrongBot, strong_weights

HINT_BOT = "strong"
"""The bot whose move a hint shows: "strong" (bots/strong.py), the best this package plays;
the reason is told in greedy's rating with the strong weights, which a person can follow."""

HINT_SEED = b"allegra-lan/hint"  # the hinting bot's seed: ties are broken alike every time
REASON_MAX = 70  # characters: a reason fits an 80-column status line with its prefix
_TIE = 0.05  # points: closer than this, two moves are as good as each other


@dataclass(frozen=True)
class Hint:
    """One hint: the move, the places it touches (to draw on the table), and why."""

    move: Move
    cells: tuple[Slot, ...]  # the card to turn up, the place for the card, a Swap's two ...
    words: str  # the move, for a person: "take the 3 from the discard pile"
    reason: str  # one line, at most REASON_MAX characters
    # With `against` (a review): points the rating sees that move behind this one (negative:
    # ahead; inf: a move the rating would never make); 0.0 when it is this move.
    behind: float = 0.0

    @property
    def text(self) -> str:
        return f"{self.words} - {self.reason}"


@dataclass(frozen=True)
class _Rated:
    """What greedy's rating sees after one move (lower `value` is better, in points)."""

    move: Move
    value: float
    cleared: int  # cards a run clears at once (0: none)
    run_of: int | None  # the value of that run, or of two of a kind the move lines up
    lines_up: bool  # the move puts two of a kind in a line with room for the third
    feed: float  # what the card it leaves on the discard pile gives the next seat
    left: int | None  # that card's value, when the seat knows it
    cells: tuple[Slot, ...]


def hint(view: SeatView, offered: Sequence[Move], *, bot: str = HINT_BOT,
         seed: bytes = HINT_SEED, against: Move | None = None) -> Hint:
    """The move bot `bot` would make now of `offered` (never empty), and its reason.

    The reason weighs the move against the best other move by the rating, or against
    `against` (the move a player made, for a review) when that is another move."""
    if not offered:
        raise ValueError("a hint needs at least one offered move")
    player = make_bot(bot, seed)
    chosen = player.choose(view, list(offered))
    # The bot's own move is rated in full even where the rating would not look at it: a
    # rating of another bot's weights may have left it out of its two-deep shortlist.
    rater = _Rater(view, offered, (chosen,) + ((against,) if against is not None else ()),
                   rating_weights(player, view))
    mine = rater.rate(chosen)
    behind = 0.0
    if against is not None and against != chosen:
        best: _Rated | None = rater.rate(against)
        behind = best.value if best.value == float("inf") else best.value - mine.value
    else:
        others = [r for r in (rater.rate(m) for m in offered if m != chosen) if r.value != float("inf")]
        best = min(others, key=lambda r: r.value) if others else None
    return Hint(chosen, mine.cells, move_words(view, chosen), rater.reason(mine, best), behind)


def rating_weights(player: Bot, view: SeatView) -> Weights:
    """The weights of the rating that tells `player`'s reasons: its own where it rates moves
    as greedy does (greedy, or the strong bot's judgement at this table), else the strong
    bot's (a bot with no rating of its own, as random)."""
    if isinstance(player, GreedyBot):
        return player.w
    if isinstance(player, StrongBot):
        return player.greedy(view).w
    return strong_weights(view.ruleset.variant, view.players)


def as_good(points: float) -> bool:
    """Whether a gap (points) is too small to tell two moves apart."""
    return abs(points) < _TIE


def move_words(view: SeatView, move: Move) -> str:
    """A move in a person's words, with the values the seat can see."""
    if isinstance(move, DrawFromDeck):
        return "draw from the deck"
    if isinstance(move, TakeDiscard):
        top = view.discard_top
        return f"take the {_v(top.value if top else None)} from the discard pile"
    if isinstance(move, Place):
        return f"put the {_v(_card_value(view, move.card))} at {slot_words(view, move.at)}"
    if isinstance(move, Discard):
        return f"discard the {_v(_card_value(view, move.card))}"
    if isinstance(move, TurnUp):
        return f"turn up {slot_words(view, move.at)}"
    if isinstance(move, Swap):
        return f"swap {slot_words(view, move.a)} with {slot_words(view, move.b)}"
    if isinstance(move, PeekLine):
        return f"peek at {'row' if move.axis == 'row' else 'column'} {move.index + 1}"
    if isinstance(move, PeekCard):
        return f"peek at {slot_words(view, move.at)}"
    if isinstance(move, ReplaceOpen):
        return f"replace the {_v(_slot_value(view, move.at))} at {slot_words(view, move.at)}"
    if isinstance(move, Give):
        return f"give the card to seat {move.to}"
    return (f"take the {_v(_slot_value(view, move.take))} at {slot_words(view, move.take)}, "
            f"put it at {slot_words(view, move.at)}")


def slot_words(view: SeatView, slot: Slot) -> str:
    """`row 2 col 3` of the seat's own display, `seat 1 row 2 col 4` of another's."""
    where = f"row {slot.row + 1} col {slot.col + 1}"
    return where if slot.seat == view.seat else f"seat {slot.seat} {where}"


def _v(value: int | None) -> str:
    return "card" if value is None else ("Joker" if value == JOKER else str(value))


def _card_value(view: SeatView, card: int) -> int | None:
    for h in view.hand:
        if h.card == card:
            return h.value
    if view.knock is not None and view.knock[1].card == card:
        return view.knock[1].value
    return None


def _slot_value(view: SeatView, slot: Slot) -> int | None:
    try:
        cv = view.card_at(slot)
    except IndexError:
        return None
    return None if cv is None else cv.value


class _Rater:
    """Greedy's rating of each offered move, taken apart into what a person can be told."""

    def __init__(self, view: SeatView, offered: Sequence[Move], weighed: Sequence[Move],
                 weights: Weights) -> None:
        """`weighed`: moves to rate in full even where greedy would not look at them (the
        bot's own, and the move a player made, in a review). `weights`: the hinting bot's."""
        self.view = view
        self.offered = list(offered)
        self.weighed = tuple(weighed)
        self.greedy = GreedyBot(HINT_SEED, weights)
        self.judge = Judge(view, weights)
        self.base: Base = self.judge.base
        self.kind = view.decision.kind if view.decision is not None else None
        self._deck: float | None = None
        self._shortlist: frozenset[Move] | None = None

    # ------------------------------------------------------------ the rating of one move

    def rate(self, m: Move) -> _Rated:
        judge, base, board, g = self.judge, self.base, self.base.board, self.greedy
        values = {h.card: h.value for h in self.view.hand}
        if isinstance(m, TurnUp):
            return self._plain(m, g._turn_up(judge, m), (m.at,))
        if isinstance(m, DrawFromDeck):
            return self._plain(m, base.value - self.deck() * self._cards())
        if isinstance(m, TakeDiscard):
            top = self.view.discard_top
            if top is None or top.value is None:
                return self._plain(m, base.value)
            best, pos = judge.best_place(base, top.value)
            value = best - self.deck() * (self._cards() - 1)
            return self._placed(m, value, pos, top.value)
        if isinstance(m, Swap):
            gain = g._swap_gain(judge, m)
            if gain is None:  # greedy plays a Swap only for a run (R26)
                return self._plain(m, float("inf"), (m.a, m.b))
            return self._swapped(m, base.value - gain)
        if isinstance(m, Place) and self.kind is DecisionKind.PLACE_GIVEN:
            value = m_value(self.view, m)
            pos = board.pos(m.at)
            return self._placed(m, judge.place_value(base, pos, value, discards_old=False), pos,
                                value, feeds=False)
        if isinstance(m, (Place, Discard, Give)):
            if m in self._two_deep_rated():
                value = g._two_deep(judge, base, m, values)
            elif self._two_deep_rated():  # greedy looks no further at a first card rated low
                return self._plain(m, float("inf"))
            else:
                value = g._play_value(judge, base, m, values)
            if isinstance(m, Place):
                return self._placed(m, value, board.pos(m.at), values[m.card])
            if isinstance(m, Discard):
                left = values.get(m.card)
                return _Rated(m, value, 0, None, False, judge.feed(left), left, ())
            return self._plain(m, value)
        if isinstance(m, PeekLine):
            return self._plain(m, -g._line_unknown(judge, m), self._line_cells(m))
        if isinstance(m, PeekCard):
            return self._plain(m, -g._card_interest(judge, m), (m.at,))
        if isinstance(m, ReplaceOpen):
            return self._plain(m, g._replace_open(judge, m), (m.at,))
        if isinstance(m, Exchange):
            z = self.view.card_at(m.take)
            r = self._placed(m, g._exchange_value(judge, m), board.pos(m.at),
                             None if z is None else z.value)
            return _Rated(m, r.value, r.cleared, r.run_of, r.lines_up, r.feed, r.left, (m.take, m.at))
        return self._plain(m, base.value)

    def _two_deep_rated(self) -> frozenset[Move]:
        """Grande R20, R21, two cards in hand: the first moves greedy rates two deep (its best
        few by one card's rating, and for each card the place its partner would go best).
        Empty otherwise: then every move is rated one deep, as greedy does."""
        if self._shortlist is not None:
            return self._shortlist
        view, judge, base, g = self.view, self.judge, self.base, self.greedy
        short: set[Move] = set()
        if view.variant is Variant.GRANDE and len(view.hand) == 2 and self.kind is DecisionKind.PLAY:
            values = {h.card: h.value for h in view.hand}
            rated = [g._play_value(judge, base, m, values) for m in self.offered]
            short = {self.offered[i] for i in g._shortlist(judge, base, self.offered, rated)}
            short |= {m for m in self.weighed if isinstance(m, (Place, Discard))}
        self._shortlist = frozenset(short)
        return self._shortlist

    def deck(self) -> float:
        if self._deck is None:
            self._deck = self.judge.deck_gain(self.base)
        return self._deck

    def _cards(self) -> int:
        """Grande R20: a first draw takes two cards unless one closed card is left."""
        if (self.view.variant is Variant.GRANDE and self.kind is DecisionKind.DRAW
                and self.base.board.closed_own() != 1):
            return 2
        return 1

    def _plain(self, m: Move, value: float, cells: tuple[Slot, ...] = ()) -> _Rated:
        return _Rated(m, value, 0, None, False, 0.0, None, cells)

    def _placed(self, m: Move, value: float, pos: int, card: int | None, feeds: bool = True) -> _Rated:
        """A card of value `card` put at cell `pos` (face up): the run it clears or lines up,
        and the card it sends to the discard pile."""
        board = self.base.board
        old = board.cells[pos]
        left = old[0] if feeds and old is not None else None
        feed = self.base.feed_old(self.judge)[pos] if feeds else 0.0
        cleared, lines_up = 0, False
        if card is not None:
            cleared = after_clear(board, pos, card)
            lines_up = not cleared and self._lines_up(pos, card)
        return _Rated(m, value, cleared, card, lines_up, feed, left, (self._slot_of(pos),))

    def _swapped(self, m: Swap, value: float) -> _Rated:
        board = self.base.board
        after = board.copy()
        pa, pb = board.pos(m.a), board.pos(m.b)
        after.cells[pa], after.cells[pb] = board.cells[pb], board.cells[pa]
        run_of = _run_value(after, after.lines_at[pa] + after.lines_at[pb])
        cleared = after.resolve([pa, pb])
        return _Rated(m, value, cleared, run_of, False, 0.0, None, (m.a, m.b))

    def _lines_up(self, pos: int, card: int) -> bool:
        """Whether the card at `pos` raises greedy's hope of a run in a line of the seat's."""
        board = self.base.board
        old = board.cells[pos]
        board.cells[pos] = (card, True)
        try:
            return any(self.judge.line_hope(board, i) > self.base.pots[i] + 1e-9
                       for i in board.lines_at[pos] if i in self.base.pots)
        finally:
            board.cells[pos] = old

    def _slot_of(self, pos: int) -> Slot:
        board = self.base.board
        for slot in self.view.area():
            if board.pos(slot) == pos:
                return slot
        return Slot(self.view.seat, pos // max(board.cols, 1), pos % max(board.cols, 1))

    def _line_cells(self, m: PeekLine) -> tuple[Slot, ...]:
        d = self.view.displays[self.view.seat]
        rows, cols = len(d), len(d[0]) if d else 0
        if m.axis == "row":
            return tuple(Slot(self.view.seat, m.index, c) for c in range(cols))
        return tuple(Slot(self.view.seat, r, m.index) for r in range(rows))

    # ------------------------------------------------------------ the words

    def reason(self, mine: _Rated, best: _Rated | None) -> str:
        """One line: why `mine` rather than `best`, the best other move by the rating."""
        if best is None:
            return "the only move here"
        if isinstance(mine.move, PeekLine):
            n = int(-mine.value)
            return f"{n} closed card{'s' if n != 1 else ''} there you have not seen"
        if isinstance(mine.move, PeekCard):
            n = int(-mine.value)
            if n <= 0:
                return "a closed card you have not seen"
            return f"{n} open card{'s' if n != 1 else ''} in its lines could pair with it"
        saved = best.value - mine.value
        if saved == float("inf"):  # greedy swaps only for a run (R26)
            return "that swap makes no run"
        alt = self._gerund(best.move)
        if mine.cleared:
            return _fit(f"clears {mine.cleared} cards with a run of {_v(mine.run_of)}s, "
                        f"{saved:.1f} points better than {alt}",
                        f"clears {mine.cleared} cards with a run of {_v(mine.run_of)}s")
        if saved < -1e-9:
            return _fit(f"the rating likes {alt} {-saved:.1f} points better",
                        f"the rating likes another move {-saved:.1f} points better")
        if mine.lines_up and not best.lines_up and saved >= _TIE:
            return _fit(f"lines up two {_v(mine.run_of)}s for a run, {saved:.1f} points better",
                        f"lines up two {_v(mine.run_of)}s for a run")
        gift = best.feed - mine.feed
        if best.left is not None and gift >= 0.5 and gift >= saved / 2:
            return _fit(f"keeps the {_v(best.left)} from the next seat, {saved:.1f} points better",
                        f"keeps the {_v(best.left)} from the next seat")
        if saved < _TIE:
            return _fit(f"about as good as {alt}", "about as good as the other moves")
        return _fit(f"expected {saved:.1f} points better than {alt}",
                    f"expected {saved:.1f} points better than the next best move")

    def _gerund(self, m: Move) -> str:
        view = self.view
        if isinstance(m, DrawFromDeck):
            return "drawing from the deck"
        if isinstance(m, TakeDiscard):
            return f"taking the {_v(view.discard_top.value if view.discard_top else None)}"
        if isinstance(m, Place):
            return f"putting the {_v(_card_value(view, m.card))} at {slot_words(view, m.at)}"
        if isinstance(m, Discard):
            return f"discarding the {_v(_card_value(view, m.card))}"
        if isinstance(m, TurnUp):
            return f"turning up {slot_words(view, m.at)}"
        if isinstance(m, Swap):
            return "a swap"
        if isinstance(m, Give):
            return f"giving it to seat {m.to}"
        if isinstance(m, Exchange):
            return f"taking {slot_words(view, m.take)}"
        if isinstance(m, ReplaceOpen):
            return f"replacing {slot_words(view, m.at)}"
        return "the other choice"


def after_clear(board: Board, pos: int, card: int) -> int:
    """Cards a run clears at once when a face-up `card` goes to cell `pos` (R5-R7, R27)."""
    after = board.copy()
    after.cells[pos] = (card, True)
    return after.resolve([pos])


def _run_value(board: Board, line_ids: Sequence[int]) -> int | None:
    """The value of the first run in these lines (a Joker's only when the run is all Jokers):
    what a person is told a move clears, which need not be either card it moved."""
    for i in line_ids:
        f = board.faces(board.lines[i])
        for a, b in runs_in_line(f):
            faces = [x for x in f[a:b] if x is not None]
            return next((x for x in faces if x != JOKER), faces[0] if faces else None)
    return None


def _fit(*options: str) -> str:
    """The first option that fits REASON_MAX characters (the last one, cut, if none does)."""
    for text in options:
        if len(text) <= REASON_MAX:
            return text
    return options[-1][:REASON_MAX]


__all__ = ["HINT_BOT", "HINT_SEED", "REASON_MAX", "Hint", "hint", "as_good", "move_words",
           "slot_words"]
