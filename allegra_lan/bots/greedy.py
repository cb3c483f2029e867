"""The `greedy` bot: a sensible player that looks one move (two in a Grande hand) ahead.

It rates every offered move by what its own seat could expect afterwards
and plays the best. The rating (lower is better) of a board is

    expected score of the seat's area   (unknown cards at the unseen cards' mean)
  - hope  * runs it could complete next (two of three in a line, by value)
  + tempo * its closed cards            (ending sooner pays when ahead)
  + the price of triggering the round's end when it is not ahead (R9, R10)
  - shared * the score of its cells that a rival's area holds too (ALLEGRA R17; 0 in greedy)

plus, for the card a move leaves on the discard pile, what that card is
worth to the next seat (low cards, and cards that complete its runs). The
bot sees only its view: values it does not know count at the mean of the
cards it has not seen.

Float sums use `math.fsum` (exactly rounded): the builtin `sum` of floats
changed in Python 3.12, and a bot must decide alike on every version for a
game to replay byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import fsum
from typing import Callable, Iterable, Sequence

from allegra_lan.rules.moves import (
    Discard, DrawFromDeck, Exchange, Give, Move, PeekCard, PeekLine, Place, ReplaceOpen,
    Swap, TakeDiscard, TurnUp,
)
from allegra_lan.rules.ruleset import JOKER, Ruleset, Variant
from allegra_lan.rules.view import DecisionKind, SeatView

from .base import Bot
from .board import Board, Cell, area_cells, closed_cards, unseen_values

PEEK_VALUE = -2  # Grande R23: look at a row or column
PEEK_ONE = 5  # Grande R23: look at one card
REFRESH = 13  # Grande R24: an open card goes, the deck's top comes closed
_HOLE = -10_000  # a hole in a line of faces (None there is a closed card)


@dataclass(frozen=True)
class Weights:
    """The greedy bot's judgement, in points of its own score."""

    hope: float = 0.3  # share of a two-of-three line's value counted as won already
    hope_open: float = 0.3  # ... relative share when the third card is face up (it must be replaced)
    tempo_ahead: float = 1.0  # a closed card's cost when the bot leads: it wants the end
    tempo_behind: float = 0.25  # ... and when it trails: there is time to catch up
    end_margin: float = 2.0  # lead needed before ending the round (others still play once)
    end_bonus: float = 2.0
    end_penalty: float = 4.0  # beyond the doubled score (R10): the chances given away
    patience: int = 25  # turns per seat after which a trailing bot stops avoiding the end
    one_card: float = 0.0  # Grande R20: exactly one closed card left means one-card turns
    shared: float = 0.0  # ALLEGRA R17: share of a shared column's score discounted (it counts for a rival too)
    peek_one: float = 1.0  # knowing one closed card (Grande 5) ...
    peek_per_card: float = 0.6  # ... each closed card of the line looked at (Grande -2) ...
    peek_min_closed: int = 6  # ... is worth something only while many cards are still closed
    reveal_info: float = 0.3  # turning up an unknown card tells the bot its value
    feed_low: float = 0.3  # per point a discarded card is below (mean - 2): a gift to the next seat
    feed_run: float = 0.5  # share of a run the discarded card would complete for the next seat
    knock_max: int = 1  # ALLEGRA R16: knock only for a card this low ...
    knock_gain: float = 5.0  # ... that improves the bot's area by this much
    give_cost: float = 1.0  # a Give also helps the knocker, an opponent
    candidates: int = 6  # first moves looked at two deep in a Grande hand of two
    future: float = 0.0  # replacements still to come, per closed card of the nearest other display
    future_r: float = 3.0  # ... each by a card worth this much
    future_lag: float = 0.0  # ... less these closed cards, which that display can turn up in its last turn
    recall: bool = False  # the unseen cards' mean leaves out the cards seen this round, now out of sight


class Base:
    """A board with its rating's parts, so one-card changes can be rated without a copy."""

    __slots__ = ("board", "score", "shared", "pots", "pot", "closed", "value", "mine", "own", "_line_vals",
                 "_feed_old", "ests", "fut")

    def __init__(self, judge: "Judge", board: Board, closed_adj: int = 0) -> None:
        self._board_and_score(judge, board)
        cells = board.cells
        est = judge.est
        self.pots = {i: judge.line_hope(board, i) for i in board.my_lines}
        self.pot = fsum(self.pots.values())
        self.closed = board.closed_own() + closed_adj
        self.shared = fsum(est(cells[p]) for p in judge.shared_cells) if judge.shared_cells else 0.0
        self.ests: dict[int, float] | None = None
        self.fut = 0.0
        if judge.future_n:
            self.ests = {p: est(cells[p]) for p in board.mine}
            self.fut = judge.future_cost(self.ests.values())
        self.value = judge.combine(self.score, self.pot, self.closed, self.shared, self.fut)

    @classmethod
    def scored(cls, judge: "Judge", board: Board) -> "Base":
        """A board with its score alone (the next seat's, whose runs `Judge.next_run` looks
        for): the other parts are the viewer's rating and are never asked of it."""
        self = cls.__new__(cls)
        self._board_and_score(judge, board)
        return self

    def _board_and_score(self, judge: "Judge", board: Board) -> None:
        """The part of a rating `scored` needs as well as `__init__`: one copy, so the two
        kinds of Base never count a board's score two ways."""
        self.board = board
        self.mine = set(board.mine)
        self.own = set(board.own)
        est = judge.est
        cells = board.cells
        self.score = fsum(est(cells[p]) for p in board.mine)
        self._line_vals: list[dict[int | None, int]] | None = None
        self._feed_old: list[float] | None = None

    @property
    def line_vals(self) -> list[dict[int | None, int]]:
        """Per line, how many faces of each value it shows: a run needs two besides the new card."""
        if self._line_vals is None:
            out: list[dict[int | None, int]] = []
            for line in self.board.lines:
                counts: dict[int | None, int] = {}
                for f in self.board.faces(line):
                    counts[f] = counts.get(f, 0) + 1
                out.append(counts)
            self._line_vals = out
        return self._line_vals

    def feed_old(self, judge: "Judge") -> list[float]:
        """Per cell: the cost of sending the card there to the discard pile (if its value is known)."""
        if self._feed_old is None:
            out = []
            for c in self.board.cells:
                out.append(judge.feed(c[0]) if c is not None and c[0] is not None else 0.0)
            self._feed_old = out
        return self._feed_old


class Judge:
    """Everything the bot works out once per decision from its view."""

    def __init__(self, view: SeatView, w: Weights, hopes: dict[tuple[int | None, ...], float] | None = None) -> None:
        self.view = view
        self._hopes: dict[tuple[int | None, ...], float] = {} if hopes is None else hopes
        self.w = w
        rs = view.ruleset
        self.grande = rs.variant is Variant.GRANDE
        self.score_of: Callable[[int], int] = rs.score_of
        pool = unseen_values(view, w.recall)
        counts: dict[int, int] = {}
        for v in pool:
            counts[v] = counts.get(v, 0) + 1
        self.mean = sum(rs.score_of(v) * c for v, c in counts.items()) / len(pool)
        self.dist = [(v, c / len(pool)) for v, c in sorted(counts.items())]
        self.board = Board.from_view(view)
        # ALLEGRA R17: the cells of the seat's area that another seat's area holds too.
        self.shared_cells: frozenset[int] = frozenset()
        if w.shared and not self.grande:
            self.shared_cells = _shared_cells(view.players, view.seat)
        self.deck_open = view.deck_size > 0 or view.discard_size > 1
        last_turn = view.ender is not None
        others = [self.seat_estimate(s) for s in range(view.players) if s != view.seat]
        self.others_min = min(others) if others else 0.0
        ahead = self.seat_estimate(view.seat) < self.others_min
        self.hope = 0.0 if last_turn else w.hope
        self.tempo = 0.0 if last_turn else (w.tempo_ahead if ahead else w.tempo_behind)
        self.one_card = w.one_card if self.grande and not last_turn else 0.0
        # The replacements still to come (`future_cost`): as many as a share of the closed
        # cards of the display nearest its end, the seat's best clock for when the round ends,
        # less the closed cards that display turns up in the turn that ends the round
        # (`future_lag`: one with a single closed card left can end it in its next turn);
        # none on the last turn (R9).
        self.future_n = 0.0
        if w.future and not last_turn:
            near = min((closed_cards(d) for q, d in enumerate(view.displays) if q != view.seat), default=0)
            self.future_n = w.future * max(0.0, near - w.future_lag)
        # Past its patience a trailing bot no longer holds its last closed card back: bots
        # that all trail (by their own estimates) must not keep a round going for ever.
        self.can_trigger = (
            view.ender is None and self.board.closed_own() > 0 and view.turn <= w.patience * view.players
        )
        self._base: Base | None = None
        self._next_runs: dict[int, float] = {}
        self._next_base: Base | None = None

    # ------------------------------------------------------------ rating parts

    def est(self, cell: Cell) -> float:
        if cell is None:
            return 0.0
        v = cell[0]
        return self.mean if v is None else self.score_of(v)

    def seat_estimate(self, seat: int) -> float:
        """A seat's expected round score as this bot sees it (unknown cards at the mean)."""
        v = self.view
        if self.grande:
            return fsum(self.est(None if cv is None else (cv.value, cv.up)) for row in v.displays[seat] for cv in row)
        cells = [cv for d in v.displays for row in d for cv in row]
        return fsum(
            self.est(None if cells[p] is None else (cells[p].value, cells[p].up))  # type: ignore[union-attr]
            for p in area_cells(v.players, seat)
        )

    def line_hope(self, board: Board, line_id: int) -> float:
        """Points a line could clear soon: the best window of three with two matching faces up."""
        cells = board.cells
        f: list[int | None] = []
        for p in board.lines[line_id]:
            c = cells[p]
            f.append(_HOLE if c is None else (c[0] if c[1] else None))
        key = tuple(f)
        got = self._hopes.get(key)
        if got is None:
            got = self._hopes[key] = self._window_hope(f)
        return got

    def _window_hope(self, f: list[int | None]) -> float:
        best = 0.0
        for i in range(len(f) - 2):
            a, b, c = f[i], f[i + 1], f[i + 2]
            if _HOLE in (a, b, c):
                continue
            share = 1.0
            if a is None:
                if b is None or c is None:
                    continue
                x, y = b, c
            elif b is None:
                if c is None:
                    continue
                x, y = a, c
            elif c is None:
                x, y = a, b
            else:  # three faces up and no run: the odd card would have to be replaced
                share = self.w.hope_open
                if _fits(a, b):
                    x, y = a, b
                elif _fits(b, c):
                    x, y = b, c
                elif _fits(a, c):
                    x, y = a, c
                else:
                    continue
            if x == JOKER:
                x = y
            elif y != JOKER and x != y:
                continue
            v = 0 if x == JOKER else self.score_of(x)  # type: ignore[arg-type]
            gain = 3.0 * v * share if v > 0 else 0.0
            if gain > best:
                best = gain
        return best

    def future_cost(self, ests: Iterable[float]) -> float:
        """What the replacements still to come will take off the seat's highest cards.

        The seat will draw more cards before the round ends, and its next low ones go on its
        highest cards whatever it does now: so the `future_n` highest (the last one in part)
        count as a card of `future_r`, and what a high card really costs is the card below
        them, the one no replacement is left for. Without it a 9 turned into a 7 looks like
        two points saved, where a later 2 would have replaced either."""
        left = self.future_n
        r = self.w.future_r
        total = 0.0
        for e in sorted(ests, reverse=True):
            if left <= 0 or e <= r:
                break
            total += min(1.0, left) * (e - r)
            left -= 1.0
        return total

    def combine(self, score: float, pot: float, closed: int, shared: float = 0.0, fut: float = 0.0) -> float:
        v = score - fut - self.hope * pot + self.tempo * closed
        if self.shared_cells:
            v -= self.w.shared * shared
        if closed == 1:
            v += self.one_card
        if self.can_trigger and closed <= 0:
            if score + self.w.end_margin < self.others_min:
                v -= self.w.end_bonus
            else:
                v += max(score, 0.0) + self.w.end_penalty
        return v

    def rate(self, board: Board, closed_adj: int = 0) -> float:
        return Base(self, board, closed_adj).value

    @property
    def base(self) -> Base:
        if self._base is None:
            self._base = Base(self, self.board)
        return self._base

    # ------------------------------------------------------------ one change

    def set_value(self, base: Base, pos: int, cell: Cell, closed_adj: int = 0) -> float:
        """The rating after the cell at `pos` becomes `cell` (and any runs that makes are cleared)."""
        b = base.board
        old = b.cells[pos]
        if cell is not None and cell[1] and cell[0] is not None and _may_run(base, pos, old, cell[0]):
            b.cells[pos] = cell
            run = b.has_run(b.lines_at[pos])
            b.cells[pos] = old
            if run:
                b2 = b.copy()
                b2.cells[pos] = cell
                b2.resolve([pos])
                return self.rate(b2, closed_adj + base.closed - b.closed_own())
        score = base.score
        shared = base.shared
        if pos in base.mine:
            score += self.est(cell) - self.est(old)
            if pos in self.shared_cells:
                shared += self.est(cell) - self.est(old)
        closed = base.closed + closed_adj
        if pos in base.own:
            closed += (cell is not None and not cell[1]) - (old is not None and not old[1])
        pot = base.pot
        b.cells[pos] = cell
        for i in b.lines_at[pos]:
            if i in base.pots:
                pot += self.line_hope(b, i) - base.pots[i]
        b.cells[pos] = old
        fut = base.fut
        if base.ests is not None and pos in base.ests:
            new = self.est(cell)
            fut = self.future_cost(new if p == pos else e for p, e in base.ests.items())
        return self.combine(score, pot, closed, shared, fut)

    def place_value(self, base: Base, pos: int, value: int, discards_old: bool = True) -> float:
        v = self.set_value(base, pos, (value, True))
        if discards_old:
            v += base.feed_old(self)[pos]
        return v

    def best_place(self, base: Base, value: int) -> tuple[float, int]:
        """The best cell of the bot's area for a card of `value`, and its rating."""
        best = float("inf")
        at = -1
        for pos in base.board.cards_mine():
            v = self.place_value(base, pos, value)
            if v < best:
                best, at = v, pos
        return best, at

    def turn_up_adj(self, base: Base) -> int:
        """-1 when a discard's forced turn-up (R15, R21, R23) will close one of the seat's own cards."""
        return -1 if base.closed > 0 else 0

    def discard_value(self, base: Base, value: int) -> float:
        """The rating after discarding a deck card of `value` (Grande: with its action, R22-R24)."""
        return self.discard_values(base, [value])[0]

    def discard_values(self, base: Base, values: Sequence[int]) -> list[float]:
        """`discard_value` for each of `values`: the board's part of a discard that turns a card
        up is one figure for every value, worked out once (the deck's gain asks every value)."""
        b = base.board
        closed_cards = [p for p in b.cards_mine() if not b.cells[p][1]]  # type: ignore[index]
        turned = 0.0
        peeks = False
        if closed_cards:
            turned = self.combine(base.score, base.pot, base.closed + self.turn_up_adj(base), base.shared,
                                  base.fut) - self.w.reveal_info
            peeks = self.grande and len(closed_cards) >= max(2, self.w.peek_min_closed)
        out: list[float] = []
        for u in values:
            if self.grande and u == REFRESH:
                out.append(self._refresh_value(base, u))
                continue
            if not closed_cards:
                out.append(base.value + self.feed(u))
                continue
            v = turned
            if peeks:
                if u == PEEK_ONE:
                    v -= self.w.peek_one
                elif u == PEEK_VALUE:
                    v -= self.w.peek_per_card * min(self.most_closed_in_line(b), len(closed_cards) - 1)
            out.append(v + self.feed(u))
        return out

    def _refresh_value(self, base: Base, value: int) -> float:
        """A 13 discarded (R24): one of the seat's open cards goes, the deck's top comes closed."""
        b = base.board
        if not self.deck_open:
            return base.value + self.feed(value)
        opens = [p for p in b.cards_mine() if b.cells[p][1]]  # type: ignore[index]
        if not opens:
            return base.value + self.feed(value)
        feed = base.feed_old(self)
        return min(self.set_value(base, p, (None, False)) + feed[p] for p in opens)

    def most_closed_in_line(self, b: Board) -> int:
        best = 0
        for line in b.lines:
            n = sum(1 for p in line if b.cells[p] is not None and not b.cells[p][1] and b.cells[p][0] is None)  # type: ignore[index]
            best = max(best, n)
        return best

    def deck_gain(self, base: Base) -> float:
        """What a card from the deck is worth on average: the best use of each value, weighted."""
        values = [u for u, _ in self.dist]
        bests = self.discard_values(base, values)
        feed = base.feed_old(self)
        for pos in base.board.cards_mine():
            f = feed[pos]
            for k, v in enumerate(self.face_up_values(base, pos, values)):
                v += f
                if v < bests[k]:
                    bests[k] = v
        total = 0.0
        for (_, p), best in zip(self.dist, bests):
            total += p * (base.value - best)
        return total

    def face_up_values(self, base: Base, pos: int, values: Sequence[int]) -> list[float]:
        """`set_value(base, pos, (u, True))` for each u of `values`, exactly, at a fraction of
        its cost: the deck's gain and a turn-up rate every value at every cell of the seat, and
        that was half of a playout's time. What does not depend on the value is worked out once
        (the old card, the closed count, the lines through the cell, the other cells' order for
        `future_cost`); a value that may make a run takes the whole path."""
        b = base.board
        old = b.cells[pos]
        est_old = self.est(old)
        mine = pos in base.mine
        shared_cell = pos in self.shared_cells
        closed = base.closed
        if pos in base.own:
            closed -= old is not None and not old[1]
        cells = b.cells
        lines: list[tuple[list[int | None], int, float]] = []
        for i in b.lines_at[pos]:
            if i in base.pots:
                faces: list[int | None] = []
                at = 0
                for j, p in enumerate(b.lines[i]):
                    c = cells[p]
                    if p == pos:
                        at = j
                    faces.append(_HOLE if c is None else (c[0] if c[1] else None))
                lines.append((faces, at, base.pots[i]))
        rest: list[float] | None = None
        if base.ests is not None and pos in base.ests:
            rest = sorted((e for p, e in base.ests.items() if p != pos), reverse=True)
        hopes = self._hopes
        score_of = self.score_of
        # `_two_match` for every value at once, written out (this loop is a playout's hottest, and
        # a call per value cost a tenth of a greedy game); the property test in test_bots.py
        # holds it to `set_value`, which asks `_may_run`.
        old_face = old[0] if old is not None and old[1] else None
        near: list[tuple[dict[int | None, int], int]] = []
        for i in b.lines_at[pos]:
            counts = base.line_vals[i]
            near.append((counts, sum(counts.values()) - counts.get(None, 0) - (old_face is not None)))
        out: list[float] = []
        for u in values:
            for counts, faces_left in near:
                if u == JOKER:
                    n = faces_left
                else:
                    n = counts.get(u, 0) + counts.get(JOKER, 0)
                    if old_face is not None and (old_face == u or old_face == JOKER):
                        n -= 1
                if n >= 2:
                    break
            else:
                n = 0
            if n >= 2:
                out.append(self.set_value(base, pos, (u, True)))
                continue
            new = score_of(u)
            score = base.score
            shared = base.shared
            if mine:
                score += new - est_old
                if shared_cell:
                    shared += new - est_old
            pot = base.pot
            for faces, at, was in lines:
                faces[at] = u
                key = tuple(faces)
                got = hopes.get(key)
                if got is None:
                    got = hopes[key] = self._window_hope(faces)
                pot += got - was
            fut = base.fut if rest is None else self._future_with(rest, new)
            out.append(self.combine(score, pot, closed, shared, fut))
        return out

    def _future_with(self, rest: list[float], new: float) -> float:
        """`future_cost` of the other cells' estimates (`rest`, highest first) and `new`: the
        same terms in the same order, without sorting again."""
        left = self.future_n
        r = self.w.future_r
        total = 0.0
        placed = False
        i = 0
        n = len(rest)
        while left > 0:
            if not placed and (i >= n or new >= rest[i]):
                e = new
                placed = True
            elif i < n:
                e = rest[i]
                i += 1
            else:
                break
            if e <= r:
                break
            total += min(1.0, left) * (e - r)
            left -= 1.0
        return total

    # ------------------------------------------------------------ the next seat

    def feed(self, value: int | None) -> float:
        """What leaving a card of `value` on top of the discard pile gives the next seat."""
        if value is None:
            return 0.0
        low = self.mean - 2.0 - self.score_of(value)
        cost = self.w.feed_low * low if low > 0 else 0.0
        return cost + self.w.feed_run * self.next_run(value)

    def next_run(self, value: int) -> float:
        """Points the next seat could clear by placing a card of `value` (runs only)."""
        got = self._next_runs.get(value)
        if got is not None:
            return got
        if self._next_base is None:
            v = self.view
            self._next_base = Base.scored(self, Board.from_view(v, (v.seat + 1) % v.players))
        nb = self._next_base
        b = nb.board
        best = 0.0
        cell = (value, True)
        if not _line_may_run(nb, value):
            self._next_runs[value] = best
            return best
        for pos in b.cards_mine():
            old = b.cells[pos]
            if not _may_run(nb, pos, old, value):
                continue
            b.cells[pos] = cell
            run = b.has_run(b.lines_at[pos])
            b.cells[pos] = old
            if not run:
                continue
            b2 = b.copy()
            b2.cells[pos] = cell
            b2.resolve([pos])
            before = nb.score - self.est(old) + self.score_of(value)
            after = fsum(self.est(b2.cells[p]) for p in b2.mine)
            best = max(best, before - after)
        self._next_runs[value] = best
        return best


_SHARED: dict[tuple[int, int], frozenset[int]] = {}


def _shared_cells(players: int, seat: int) -> frozenset[int]:
    key = (players, seat)
    got = _SHARED.get(key)
    if got is None:
        others: set[int] = set()
        for q in range(players):
            if q != seat:
                others.update(area_cells(players, q))
        got = _SHARED[key] = frozenset(set(area_cells(players, seat)) & others)
    return got


def _fits(a: int | None, b: int | None) -> bool:
    return a == b or a == JOKER or b == JOKER


def _lines_near_run(base: Base) -> bool:
    """Whether some line shows two faces that match each other (one value, or Jokers).

    A Swap (R26) moves two cards: a line holding both keeps its faces (only their order
    changes), a line holding one gains one face. So where no line shows two matching faces,
    no Swap can leave three, and none makes a run."""
    for counts in base.line_vals:
        jokers = counts.get(JOKER, 0)
        most = max((n for f, n in counts.items() if f is not None and f != JOKER), default=0)
        if most + jokers >= 2:
            return True
    return False


def _line_may_run(base: Base, value: int) -> bool:
    """Whether some line of the board shows two faces a card of `value` matches: where none
    does, `_may_run` is false at every cell and no cell needs asking."""
    return _two_match(base, range(len(base.board.lines)), None, value)


def _may_run(base: Base, pos: int, old: Cell, value: int) -> bool:
    """A cheap necessary condition for a card of `value` at `pos` to make a run: some line
    through `pos` shows two more faces that match it (its value or Jokers)."""
    old_face = old[0] if old is not None and old[1] else None
    return _two_match(base, base.board.lines_at[pos], old_face, value)


def _two_match(base: Base, line_ids: Iterable[int], old_face: int | None, value: int) -> bool:
    """Whether one of these lines shows two faces a card of `value` matches (its value or
    Jokers), besides `old_face`, the face it would replace (None: closed, or no card)."""
    lines = base.line_vals
    for i in line_ids:
        counts = lines[i]
        if value == JOKER:  # a Joker matches every face
            n = sum(counts.values()) - counts.get(None, 0) - (old_face is not None)
        else:
            n = counts.get(value, 0) + counts.get(JOKER, 0)
            if old_face is not None and (old_face == value or old_face == JOKER):
                n -= 1
        if n >= 2:
            return True
    return False


class GreedyBot(Bot):
    """Plays the move its rating likes best; ties are broken by its own seeded stream."""

    name = "greedy"

    def __init__(self, seed: bytes, weights: Weights | None = None,
                 hopes: dict[tuple[int | None, ...], float] | None = None, rules: Ruleset | None = None) -> None:
        super().__init__(seed)
        self.w = weights or Weights()
        # Line faces -> hope, for speed; a search's many playout bots of one weights share one,
        # made under `rules` (a line's hope depends on the ruleset's scores): a fresh bot that
        # did not know them would clear the shared cache at its first decision.
        self._hopes: dict[tuple[int | None, ...], float] = {} if hopes is None else hopes
        self._hopes_rules: object = rules

    # ------------------------------------------------------------ interface

    def choose(self, view: SeatView, legal: Sequence[Move]) -> Move:
        if len(legal) == 1:
            return legal[0]
        kind = view.decision.kind if view.decision is not None else None
        judge = self._judge(view)
        if kind in (DecisionKind.REVEAL, DecisionKind.TURN_UP):
            return self._best(legal, lambda m: self._turn_up(judge, m))
        if kind in (DecisionKind.DRAW, DecisionKind.DRAW_SECOND):
            return self._draw(judge, legal)
        if kind is DecisionKind.PLAY:
            return self._play(judge, legal)
        if kind is DecisionKind.PEEK_LINE:
            return self._best(legal, lambda m: -self._line_unknown(judge, m))
        if kind is DecisionKind.PEEK_CARD:
            return self._best(legal, lambda m: -self._card_interest(judge, m))
        if kind is DecisionKind.REPLACE_OPEN:
            return self._best(legal, lambda m: self._replace_open(judge, m))
        if kind is DecisionKind.PLACE_GIVEN:
            base = judge.base
            return self._best(legal, lambda m: judge.place_value(
                base, base.board.pos(m.at), m_value(view, m), discards_old=False))  # type: ignore[union-attr]
        if kind is DecisionKind.EXCHANGE:
            return self._exchange(judge, legal)
        return self.pick(legal)

    def knocks(self, view: SeatView) -> bool:
        if not view.hand:
            return False
        value = view.hand[0].value
        if view.ruleset.score_of(value) > self.w.knock_max:
            return False
        judge = self._judge(view)
        base = judge.base
        best, _ = judge.best_place(base, value)
        return base.value - best >= self.w.knock_gain

    def play_ratings(self, view: SeatView, legal: Sequence[Move]) -> list[float]:
        """Each move's one-move rating at a "play" decision (lower is better): how a search
        picks the alternatives worth playing out."""
        judge = self._judge(view)
        base = judge.base
        values = {h.card: h.value for h in view.hand}
        return [self._play_value(judge, base, m, values) for m in legal]

    # ------------------------------------------------------------ choosing

    def _judge(self, view: SeatView) -> Judge:
        if len(self._hopes) > 200_000 or (self._hopes and self._hopes_rules is not view.ruleset):
            self._hopes.clear()
        self._hopes_rules = view.ruleset
        return Judge(view, self.w, self._hopes)

    def _best(self, legal: Sequence[Move], rate: Callable[[Move], float]) -> Move:
        best = float("inf")
        tied: list[Move] = []
        for m in legal:
            v = rate(m)
            if v < best - 1e-9:
                best = v
                tied = [m]
            elif v <= best + 1e-9:
                tied.append(m)
        return tied[0] if len(tied) == 1 else self.pick(tied)

    def _turn_up(self, judge: Judge, m: Move) -> float:
        assert isinstance(m, TurnUp)
        base = judge.base
        pos = base.board.pos(m.at)
        cell = base.board.cells[pos]
        if cell is not None and cell[0] is not None:  # a card the bot peeked at (R23)
            return judge.set_value(base, pos, (cell[0], True))
        total = 0.0
        for (_, p), v in zip(judge.dist, judge.face_up_values(base, pos, [u for u, _ in judge.dist])):
            total += p * v
        return total - judge.w.reveal_info

    def _draw(self, judge: Judge, legal: Sequence[Move]) -> Move:
        view = judge.view
        base = judge.base
        cards = 1
        if judge.grande and view.decision is not None and view.decision.kind is DecisionKind.DRAW and base.board.closed_own() != 1:
            cards = 2  # R20
        gains: list[tuple[float, Move]] = []
        deck = 0.0
        if any(isinstance(m, DrawFromDeck) for m in legal):
            deck = judge.deck_gain(base)
            gains.append((deck * cards, DrawFromDeck()))
        if any(isinstance(m, TakeDiscard) for m in legal) and view.discard_top is not None:
            top = view.discard_top.value
            assert top is not None
            best, _ = judge.best_place(base, top)
            gains.append((base.value - best + deck * (cards - 1), TakeDiscard()))
        if _lines_near_run(base):  # else no Swap can make a run (R26), and none is worth it
            for m in legal:
                if isinstance(m, Swap):
                    g = self._swap_gain(judge, m)
                    if g is not None:
                        gains.append((g, m))
        top_gain = max(g for g, _ in gains)
        tied = [m for g, m in gains if g >= top_gain - 1e-9]
        return tied[0] if len(tied) == 1 else self.pick(tied)

    def _swap_gain(self, judge: Judge, m: Swap) -> float | None:
        """A Swap (R26) is worth playing only when it makes a run; None when it does not."""
        base = judge.base
        b = base.board
        pa, pb = b.pos(m.a), b.pos(m.b)
        ca, cb = b.cells[pa], b.cells[pb]
        if ca is None or cb is None or not (ca[1] or cb[1]) or ca == cb:
            return None
        b.cells[pa], b.cells[pb] = cb, ca
        run = b.has_run(b.lines_at[pa] + b.lines_at[pb])
        b.cells[pa], b.cells[pb] = ca, cb
        if not run:
            return None
        b2 = b.copy()
        b2.cells[pa], b2.cells[pb] = cb, ca
        b2.resolve([pa, pb])
        adj = -1 if b2.closed_own() > 0 else 0
        return base.value - (judge.rate(b2, adj) - judge.w.reveal_info * (adj != 0))

    def _play(self, judge: Judge, legal: Sequence[Move]) -> Move:
        view = judge.view
        base = judge.base
        values = {h.card: h.value for h in view.hand}
        rated: list[tuple[float, int, Move]] = []
        for i, m in enumerate(legal):
            rated.append((self._play_value(judge, base, m, values), i, m))
        if not (judge.grande and len(view.hand) == 2):
            best = min(v for v, _, _ in rated)
            tied = [m for v, _, m in rated if v <= best + 1e-9]
            return tied[0] if len(tied) == 1 else self.pick(tied)
        # Two cards in hand (R20, R21): rate the first move by the best follow-up with the other.
        short = self._shortlist(judge, base, legal, [v for v, _, _ in rated])
        best = float("inf")
        tied: list[Move] = []
        for i in sorted(short):
            m = legal[i]
            v = self._two_deep(judge, base, m, values)
            if v < best - 1e-9:
                best, tied = v, [m]
            elif v <= best + 1e-9:
                tied.append(m)
        return tied[0] if len(tied) == 1 else self.pick(tied)

    def _shortlist(self, judge: Judge, base: Base, legal: Sequence[Move], rated: Sequence[float]) -> set[int]:
        """The first moves of a hand of two worth rating two deep (their indices in `legal`):
        the best few by one card's rating, and for each card the place its partner would go
        best (dodging, R21)."""
        order = sorted(range(len(legal)), key=lambda i: (rated[i], i))
        short = set(order[: self.w.candidates])
        hand = judge.view.hand
        for h in hand:
            other = next(o for o in hand if o.card != h.card)
            _, at = judge.best_place(base, other.value)
            for i, m in enumerate(legal):
                if isinstance(m, Place) and m.card == h.card and base.board.pos(m.at) == at:
                    short.add(i)
        return short

    def _play_value(self, judge: Judge, base: Base, m: Move, values: dict[int, int]) -> float:
        if isinstance(m, Place):
            return judge.place_value(base, base.board.pos(m.at), values[m.card])
        if isinstance(m, Discard):
            return judge.discard_value(base, values[m.card])
        if isinstance(m, Give):
            return self._give_value(judge, base, m)
        return base.value

    def _two_deep(self, judge: Judge, base: Base, m: Move, values: dict[int, int]) -> float:
        """The first card's move, then the best play of the second card on the board it leaves."""
        view = judge.view
        card = m.card  # type: ignore[union-attr]
        second = next(h for h in view.hand if h.card != card)
        b = base.board
        extra = 0.0
        adj = 0
        if isinstance(m, Place):
            pos = b.pos(m.at)
            b1 = b.copy()
            b1.cells[pos] = (values[card], True)
            b1.resolve([pos])
            extra = base.feed_old(judge)[pos]
        else:
            value = values[card]
            if judge.grande and value == REFRESH and judge.deck_open and any(
                    b.cells[p][1] for p in b.cards_mine()):  # type: ignore[index]
                feed = base.feed_old(judge)
                opens = [p for p in b.cards_mine() if b.cells[p][1]]  # type: ignore[index]
                pos = min(opens, key=lambda p: judge.set_value(base, p, (None, False)) + feed[p])
                b1 = b.copy()
                b1.cells[pos] = (None, False)
                extra = feed[pos]
            else:
                b1 = b
                refresh = judge.grande and value == REFRESH  # a 13 with no target: no turn-up (R22, R24)
                adj = judge.turn_up_adj(base) if not refresh and any(
                    not b.cells[p][1] for p in b.cards_mine()) else 0  # type: ignore[index]
                # What the discard's rating holds beyond the board: peeks, reveal, the gift.
                extra = judge.discard_value(base, value) - judge.combine(
                    base.score, base.pot, base.closed + adj, base.shared, base.fut)
        base1 = Base(judge, b1, adj)
        options = [judge.place_value(base1, p, second.value) for p in b1.cards_mine()]
        if second.from_deck:
            options.append(judge.discard_value(base1, second.value))
        if not options:  # Our ruling E2: the discard-pile card goes back
            options.append(base1.value)
        return min(options) + extra

    def _give_value(self, judge: Judge, base: Base, m: Give) -> float:
        """ALLEGRA R16: giving lets the bot take the best card of the knocker's area (or the gift)."""
        view = judge.view
        gift = view.hand[0].value
        takeable = {gift}
        for slot in view.area(m.to):
            cv = view.card_at(slot)
            if cv is not None and cv.up and cv.value is not None:
                takeable.add(cv.value)
        best = min(judge.best_place(base, z)[0] for z in sorted(takeable))
        return best + judge.w.give_cost

    def _line_unknown(self, judge: Judge, m: Move) -> float:
        assert isinstance(m, PeekLine)
        d = judge.view.displays[judge.view.seat]
        if m.axis == "row":
            cells = list(d[m.index])
        else:
            cells = [row[m.index] for row in d]
        return float(sum(1 for cv in cells if cv is not None and not cv.up and cv.value is None))

    def _card_interest(self, judge: Judge, m: Move) -> float:
        """A closed card is most worth a look when face-up cards in its lines could pair with it."""
        assert isinstance(m, PeekCard)
        b = judge.board
        pos = b.pos(m.at)
        cell = b.cells[pos]
        if cell is None or cell[0] is not None:
            return -1.0
        return float(sum(1 for i in b.lines_at[pos] for q in b.lines[i]
                         if q != pos and b.cells[q] is not None and b.cells[q][1]))  # type: ignore[index]

    def _replace_open(self, judge: Judge, m: Move) -> float:
        assert isinstance(m, ReplaceOpen)
        base = judge.base
        pos = base.board.pos(m.at)
        return judge.set_value(base, pos, (None, False)) + base.feed_old(judge)[pos]

    def _exchange(self, judge: Judge, legal: Sequence[Move]) -> Move:
        """ALLEGRA R16: take Z (face up) at W, W is discarded, the knocker's Y fills Z's hole.

        Up to 15 x 15 pairs are offered; a quick rating (Z put at W, Y put at
        Z's place, no runs) picks the few worth simulating in full.
        """
        view = judge.view
        base = judge.base
        b = base.board
        held = view.knock[2] if view.knock is not None else None
        y_est = judge.est(None if held is None else (held.value, True))
        feed = base.feed_old(judge)
        quick: list[tuple[float, int, Exchange]] = []
        for i, m in enumerate(legal):
            assert isinstance(m, Exchange)
            take, at = b.pos(m.take), b.pos(m.at)
            z = b.cells[take]
            v = judge.set_value(base, at, (None if z is None else z[0], True)) + feed[at]
            if take in base.mine:
                v += y_est - judge.est(z)
            quick.append((v, i, m))
        quick.sort(key=lambda t: (t[0], t[1]))
        best = float("inf")
        tied: list[Move] = []
        for _, _, m in sorted(quick[: self.w.candidates * 2], key=lambda t: t[1]):
            v = self._exchange_value(judge, m)
            if v < best - 1e-9:
                best, tied = v, [m]
            elif v <= best + 1e-9:
                tied.append(m)
        return tied[0] if len(tied) == 1 else self.pick(tied)

    def _exchange_value(self, judge: Judge, m: Exchange) -> float:
        view = judge.view
        base = judge.base
        b = base.board.copy()
        take, at = b.pos(m.take), b.pos(m.at)
        z = b.cells[take]
        w = b.cells[at]
        b.cells[take] = None
        b.cells[at] = (None if z is None else z[0], True)
        b.resolve([at])
        held = view.knock[2] if view.knock is not None else None
        if held is not None:
            b.cells[take] = (held.value, True)
            b.resolve([take])
        feed = judge.feed(w[0]) if w is not None else 0.0
        return judge.rate(b) + feed


def m_value(view: SeatView, m: Move) -> int:
    """The value of the card a Place move puts down: the given card (R16) or a hand card."""
    assert isinstance(m, Place)
    if view.knock is not None and view.knock[1].card == m.card:
        return view.knock[1].value
    for h in view.hand:
        if h.card == m.card:
            return h.value
    raise ValueError(f"card #{m.card} is neither in hand nor given")


__all__ = ["GreedyBot", "Weights", "Judge"]
