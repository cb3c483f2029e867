"""The rules engine: new_game, to_act, legal_moves, apply. Pure and deterministic.

Nothing here reads a clock, a socket, a thread or Python's `random`: the same
ruleset, seats, card source and moves give the same states on every peer.
Every ruling of RULINGS.md is named where it is decided.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

from .cards import HIDDEN, CardSource, NeedValues, PartialCards, RevealRequest, SeededCards
from . import geometry
from .clearing import resolve
from .effects import (
    Closed, Discarded, Drawn, EndTriggered, GameEnded, Given, Peeked, Placed,
    Reshuffled, Revealed, RoundEnded, Swapped,
)
from .moves import (
    Discard, DrawFromDeck, Exchange, Give, Move, PeekCard, PeekLine, Place,
    ReplaceOpen, Slot, Swap, TakeDiscard, TurnUp,
)
from .ruleset import Ruleset, Variant
from .state import DECISION_KIND, HOLE, Decision, DecisionKind, Grid, Phase, RoundResult, State

ACTION_VALUES = (-2, 5, 13)  # Grande R22


class IllegalMove(ValueError):
    """A move the rules do not allow now; the message says why in plain words."""


# ----------------------------------------------------------------- new game


def new_game(ruleset: Ruleset, seats: int, seed: bytes | None = None,
             source: CardSource | PartialCards | None = None) -> State:
    """A game of `seats` players, dealt for round 0 and waiting for the first turn-up (R3).

    Give a 32-byte `seed` (values from the seeded shuffle) or a `source`: a CardSource
    that knows every value, or a PartialCards (the fair deal: this seat's knowledge only;
    `apply` then raises NeedValues until the values a move shows have been learned).
    """
    ruleset.check_players(seats)
    if source is None:
        if seed is None:
            raise ValueError("new_game needs a seed or a card source")
        source = SeededCards(ruleset, seed)
    s = State.__new__(State)
    s.ruleset = ruleset
    s.players = seats
    s.source = source
    s.fair = getattr(source, "fair", False) is True
    s.totals = [0] * seats
    s.results = ()
    s.effects = []
    _start_round(s, 0)
    return s


def _start_round(s: State, round_no: int) -> None:
    """R2: round r is dealt by seat r mod n and the seat after the dealer starts."""
    n = s.players
    rows, cols = s.ruleset.dims(n)
    per = rows * cols
    s.round_no = round_no
    s.dealer = round_no % n
    starter = (s.dealer + 1) % n
    cells: list[list[int]] = [[HOLE] * per for _ in range(n)]
    # Deal one card at a time, clockwise from the starter, places in reading order.
    for k in range(per * n):
        cells[(starter + k % n) % n][k // n] = k
    s.grids = [Grid(rows, cols, c) for c in cells]
    size = s.ruleset.deck_size
    s.deck = list(range(size - 1, per * n - 1, -1))
    s.up = set()
    s.known = [None] * size
    s.peeked = [frozenset()] * n
    s.discard = []
    s.cleared = []
    s.hand = []
    s.draws = 0
    s.draw_limit = 1
    s.first_from_deck = False
    s.ender = None
    s.final_lap = None
    s.knock = None
    s.reshuffles = 0
    s.turn = 0
    s.round_cleared = 0
    s.sealed = False
    s.memo = {}
    s.active = starter
    # R3: each seat, clockwise from the starter, turns up two closed cards.
    s.reveal_queue = [(starter + i) % n for i in range(n) for _ in range(2)]
    s.phase = Phase.REVEAL
    _next_reveal(s)


def _next_reveal(s: State) -> None:
    while s.reveal_queue and not _has_closed(s, s.reveal_queue[0]):
        s.reveal_queue.pop(0)
    if s.reveal_queue:
        s.phase = Phase.REVEAL
        return
    # R3: then the top card of the deck starts the discard pile, face up.
    card = _draw_deck(s)
    _reveal(s, card, None)
    s.discard.append(card)
    s.active = (s.dealer + 1) % s.players
    _begin_turn(s)


# ----------------------------------------------------------------- queries


def to_act(state: State) -> Decision | None:
    """Which seat must decide next and what kind of decision; None when the game is over."""
    ph = state.phase
    if ph is Phase.OVER:
        return None
    if ph is Phase.REVEAL:
        return Decision(state.reveal_queue[0], DecisionKind.REVEAL)
    if ph is Phase.PLACE_GIVEN:
        assert state.knock is not None
        return Decision(state.knock[0], DecisionKind.PLACE_GIVEN)
    return Decision(state.active, DECISION_KIND[ph])


def is_over(state: State) -> bool:
    return state.phase is Phase.OVER


def winners(state: State) -> tuple[int, ...]:
    """R11: the seats with the lowest total (all of them on a tie); () before the end."""
    if state.phase is not Phase.OVER:
        return ()
    low = min(state.totals)
    return tuple(i for i, t in enumerate(state.totals) if t == low)


def area_slots(state: State, seat: int) -> list[Slot]:
    """The places a seat plays on: Grande its display; ALLEGRA its area (R13),
    row by row, the left neighbour's rightmost column first."""
    return [sl for sl, _, _ in _area(state, seat)]


# Area layouts are fixed for a (variant, players, seat, rows, cols): cache them, since
# every legality check walks one. Entries are (slot, seat of the grid, flat index).
_AREAS: dict[tuple[bool, int, int, int, int], tuple[tuple[Slot, int, int], ...]] = {}


def _area(s: State, seat: int) -> tuple[tuple[Slot, int, int], ...]:
    g = s.grids[seat]
    grande = s.ruleset.variant is Variant.GRANDE
    key = (grande, s.players, seat, g.rows, g.cols)
    area = _AREAS.get(key)
    if area is None:
        if grande:
            area = tuple(
                (Slot(seat, r, c), seat, r * g.cols + c) for r in range(g.rows) for c in range(g.cols)
            )
        else:
            area = tuple((sl, sl.seat, geometry.flat(sl)) for sl in geometry.area(s.players, seat))
        _AREAS[key] = area
    return area


def _cell(s: State, slot: Slot) -> int:
    g = s.grids[slot[0]]
    return g.cells[slot[1] * g.cols + slot[2]]


def _set(s: State, slot: Slot, card: int) -> None:
    g = s.grids[slot[0]]
    g.cells[slot[1] * g.cols + slot[2]] = card


def _card_slots(s: State, seat: int) -> list[Slot]:
    grids = s.grids
    return [sl for sl, gs, i in _area(s, seat) if grids[gs].cells[i] != HOLE]


def _closed_slots(s: State, seat: int) -> list[Slot]:
    grids = s.grids
    up = s.up
    out = []
    for sl, gs, i in _area(s, seat):
        c = grids[gs].cells[i]
        if c != HOLE and c not in up:
            out.append(sl)
    return out


def _has_closed(s: State, seat: int) -> bool:
    grids = s.grids
    up = s.up
    for _, gs, i in _area(s, seat):
        c = grids[gs].cells[i]
        if c != HOLE and c not in up:
            return True
    return False


def _open_slots(s: State, seat: int) -> list[Slot]:
    grids = s.grids
    up = s.up
    return [sl for sl, gs, i in _area(s, seat) if grids[gs].cells[i] in up]


def closed_in_display(state: State, seat: int) -> int:
    """Closed cards in a seat's own display (R9 and R20 count these)."""
    up = state.up
    n = 0
    for c in state.grids[seat].cells:
        if c != HOLE and c not in up:
            n += 1
    return n


def _can_draw_deck(s: State) -> bool:
    return bool(s.deck) or len(s.discard) > 1


def _lines_with_closed(s: State, seat: int) -> list[PeekLine]:
    g = s.grids[seat]
    up = s.up
    out = []
    for r in range(g.rows):
        if any(g.cells[r * g.cols + c] != HOLE and g.cells[r * g.cols + c] not in up for c in range(g.cols)):
            out.append(PeekLine("row", r))
    for c in range(g.cols):
        if any(g.cells[r * g.cols + c] != HOLE and g.cells[r * g.cols + c] not in up for r in range(g.rows)):
            out.append(PeekLine("col", c))
    return out


def legal_moves(state: State) -> list[Move]:
    """Every move the rules allow now, in a fixed order (ALLEGRA: a Give to every other
    seat; the caller offers only those to seats that really knocked)."""
    s = state
    ph = s.phase
    if ph is Phase.OVER:
        return []
    if ph is Phase.REVEAL:
        return [TurnUp(sl) for sl in _closed_slots(s, s.reveal_queue[0])]
    a = s.active
    grande = s.ruleset.variant is Variant.GRANDE
    if ph is Phase.DRAW:
        moves: list[Move] = []
        cards = _card_slots(s, a)
        if _can_draw_deck(s):
            moves.append(DrawFromDeck())
        if s.discard and cards:
            moves.append(TakeDiscard())
        if grande:
            moves.extend(_swaps(tuple(cards)))
        return moves
    if ph is Phase.DRAW_SECOND:
        moves = []
        if _can_draw_deck(s):
            moves.append(DrawFromDeck())
        if not s.first_from_deck and s.discard and _card_slots(s, a):
            moves.append(TakeDiscard())
        return moves
    if ph is Phase.PLAY:
        cards = _card_slots(s, a)
        moves = []
        for card, from_deck in s.hand:
            moves.extend(Place(card, sl) for sl in cards)
            if from_deck:
                moves.append(Discard(card))
        if not grande and _knocking(s) and s.hand[0][1]:
            moves.extend(Give(k) for k in _seats_after(s, a) if _card_slots(s, k))
        return moves
    if ph is Phase.TURN_UP:
        return [TurnUp(sl) for sl in _closed_slots(s, a)]
    if ph is Phase.PEEK_LINE:
        return list(_lines_with_closed(s, a))
    if ph is Phase.PEEK_CARD:
        return [PeekCard(sl) for sl in _closed_slots(s, a)]
    if ph is Phase.REPLACE_OPEN:
        return [ReplaceOpen(sl) for sl in _open_slots(s, a)]
    if ph is Phase.PLACE_GIVEN:
        assert s.knock is not None
        k, given, _ = s.knock
        return [Place(given, sl) for sl in _card_slots(s, k)]
    if ph is Phase.EXCHANGE:
        assert s.knock is not None
        return [Exchange(z, w) for z, w in _exchanges(s)]
    raise AssertionError(ph)


@lru_cache(maxsize=4096)
def _swaps(cards: tuple[Slot, ...]) -> tuple[Swap, ...]:
    """Every Swap of two cards (R26); cached, as a display's layout repeats turn after turn."""
    return tuple(Swap(cards[i], cards[j]) for i in range(len(cards)) for j in range(i + 1, len(cards)))


def _seats_after(s: State, seat: int) -> list[int]:
    return [(seat + i) % s.players for i in range(1, s.players)]


def _knocking(s: State) -> bool:
    return s.players >= s.ruleset.knock_min_players  # type: ignore[union-attr]


def _exchanges(s: State) -> list[tuple[Slot, Slot]]:
    assert s.knock is not None
    k = s.knock[0]
    mine = _card_slots(s, s.active)
    return [(z, w) for z in _card_slots(s, k) for w in mine if z != w]


# ----------------------------------------------------------------- apply


def apply(state: State, move: Move) -> State:
    """The state after `move` by the seat `to_act` names; raises IllegalMove (state unchanged)."""
    ph = state.phase
    if ph is Phase.OVER:
        raise IllegalMove("the game is over")
    handler = _HANDLERS.get(type(move))
    if handler is None:
        raise IllegalMove(f"{move!r} is not a move")
    s = state.clone()
    handler(s, move)
    return s


def apply_in_place(state: State, move: Move) -> None:
    """`apply` without the copy: `state` itself moves on (its effects are the move's alone).

    For a search's playouts only, on a state the searcher made and owns: a playout applies
    hundreds of moves to a throwaway state, and the clone `apply` makes of each is about
    40% of its cost (benchmarks/engine.py: the same moves run 1.66x as fast here). An
    illegal move may leave `state` half changed, so a caller offers only moves
    `legal_moves` gave."""
    if state.phase is Phase.OVER:
        raise IllegalMove("the game is over")
    handler = _HANDLERS.get(type(move))
    if handler is None:
        raise IllegalMove(f"{move!r} is not a move")
    state.effects = []
    handler(state, move)


def _want(s: State, *phases: Phase, what: str) -> None:
    if s.phase not in phases:
        d = to_act(s)
        raise IllegalMove(f"{what} is not possible now: {d} is expected")


def _check_slot(s: State, slot: Slot, allowed: list[Slot], where: str) -> None:
    if slot not in allowed:
        seat, r, c = slot
        if not (0 <= seat < s.players) or not s.grids[seat].inside(r, c):
            raise IllegalMove(f"there is no place {slot}")
        if _cell(s, slot) == HOLE:
            raise IllegalMove(f"{slot} is a hole: there is no card there")
        raise IllegalMove(f"{slot} is not {where}")


def _reveal(s: State, card: int, at: Slot | None) -> None:
    """Read a card's value and show it to all (the one public reveal of the rules)."""
    if s.known[card] is None:
        if s.fair:
            s.known[card] = _ask(s, [RevealRequest(s.round_no, card)])[0]
        else:
            s.known[card] = s.source.value(s.round_no, card)  # type: ignore[union-attr]
    s.effects.append(Revealed(card, s.known[card], at))  # type: ignore[arg-type]


def _ask(s: State, requests: Sequence[RevealRequest]) -> list[int | None]:
    """The values of a partial source (None: a private reveal to another seat); NeedValues
    naming every request still missing. Asking all of a move's reveals at once costs the
    seats one exchange of shares instead of one per card."""
    source: PartialCards = s.source  # type: ignore[assignment]
    out: list[int | None] = []
    missing = []
    for r in requests:
        v = source.reveal(r)
        if v is None:
            missing.append(r)
        out.append(None if v is HIDDEN else v)  # type: ignore[arg-type]
    if missing:
        raise NeedValues(missing)
    return out


def _need(s: State, cards: Sequence[int]) -> None:
    """Fair deal: stop the move at once (NeedValues) unless the public values of all of
    `cards` that the move will show are known, so that one batch asks for all of them."""
    if s.fair:
        _ask(s, [RevealRequest(s.round_no, c) for c in cards if s.known[c] is None])


def _draw_deck(s: State) -> int:
    """Take the deck's top card; R8 reshuffles the discard pile but its top when the deck is empty."""
    if not s.deck:
        if len(s.discard) < 2:
            raise IllegalMove("the deck is empty and the discard pile cannot be reshuffled")
        top = s.discard.pop()
        s.reshuffles += 1
        if s.fair:
            order = _fresh_pile(s)
        else:
            order = s.source.reshuffle(s.round_no, s.reshuffles, s.discard)  # type: ignore[union-attr]
        s.deck = list(reversed(order))
        s.discard = [top]
        s.effects.append(Reshuffled(len(order)))
    return s.deck.pop()


def _fresh_pile(s: State) -> list[int]:
    """R8 under the fair deal: the pile (but its top) becomes a new pile of fresh card ids,
    top first, whose order the seats' shuffle of its points decides; the old ids leave
    play, so no id of the new deck names a card seen on the discard pile."""
    values = [s.known[c] for c in s.discard]
    if any(v is None for v in values):
        raise AssertionError("a card on the discard pile has no public value")
    first = len(s.known)
    s.source.new_pile(s.round_no, s.reshuffles, first, values)  # type: ignore[union-attr]
    s.known.extend([None] * len(values))
    return list(range(first, first + len(values)))


def _turn_up(s: State, m: TurnUp) -> None:
    _want(s, Phase.REVEAL, Phase.TURN_UP, what="turning up a card")
    seat = s.reveal_queue[0] if s.phase is Phase.REVEAL else s.active
    _check_slot(s, m.at, _closed_slots(s, seat), "a closed card of your " + _region(s))
    card = _cell(s, m.at)
    s.up.add(card)
    if s.fair and s.phase is Phase.REVEAL and not any(_has_closed(s, q) for q in s.reveal_queue[1:]):
        _need(s, [card, s.deck[-1]])  # R3's last turn-up also starts the discard pile
    _reveal(s, card, m.at)
    resolve(s, [m.at])
    if s.phase is Phase.REVEAL:
        s.reveal_queue.pop(0)
        _next_reveal(s)
    else:
        _continue(s)


def _region(s: State) -> str:
    return "area" if s.ruleset.variant is Variant.ALLEGRA else "display"


def _draw(s: State, from_deck: bool) -> None:
    what = "drawing from the deck" if from_deck else "taking the discard pile's top card"
    _want(s, Phase.DRAW, Phase.DRAW_SECOND, what=what)
    if from_deck:
        if not _can_draw_deck(s):
            raise IllegalMove("the deck and the discard pile are used up")
        card = _draw_deck(s)
    else:
        if not s.discard:
            raise IllegalMove("the discard pile is empty")
        if s.phase is Phase.DRAW_SECOND and s.first_from_deck:
            raise IllegalMove("after a card from the deck the second card comes from the deck too (R20)")
        if not _card_slots(s, s.active):
            raise IllegalMove("a card from the discard pile must be placed, and you have no card to replace")
        card = s.discard.pop()
    if s.phase is Phase.DRAW:
        s.first_from_deck = from_deck
    s.draws += 1
    s.hand.append((card, from_deck))
    s.effects.append(Drawn(s.active, card, from_deck))
    _reveal(s, card, None)  # R4, R20: drawn cards are shown to everyone
    if s.draws < s.draw_limit and (_can_draw_deck(s) or (not s.first_from_deck and s.discard)):
        s.phase = Phase.DRAW_SECOND
    else:
        s.phase = Phase.PLAY


def _draw_deck_move(s: State, m: DrawFromDeck) -> None:
    _draw(s, True)


def _take_discard(s: State, m: TakeDiscard) -> None:
    _draw(s, False)


def _hand_index(s: State, card: int) -> int:
    for i, (c, _) in enumerate(s.hand):
        if c == card:
            return i
    raise IllegalMove(f"card #{card} is not in hand")


def _place(s: State, m: Place) -> None:
    _want(s, Phase.PLAY, Phase.PLACE_GIVEN, what="placing a card")
    if s.phase is Phase.PLACE_GIVEN:
        _place_given(s, m)
        return
    i = _hand_index(s, m.card)
    _check_slot(s, m.at, _card_slots(s, s.active), "a card of your " + _region(s))
    _need(s, [m.card, _cell(s, m.at)])
    s.hand.pop(i)
    old = _exchange_card(s, m.at, m.card, s.active)
    s.discard.append(old)
    resolve(s, [m.at])
    _continue(s)


def _exchange_card(s: State, at: Slot, card: int, seat: int) -> int:
    """Put `card` face up at `at`; the card that lay there leaves face up (R4) and is returned."""
    old = _cell(s, at)
    _set(s, at, card)
    s.up.add(card)
    s.up.discard(old)
    if s.known[card] is None:
        _reveal(s, card, at)
    _reveal(s, old, None)
    s.effects.append(Placed(seat, card, at, old))
    return old


def _discard(s: State, m: Discard) -> None:
    _want(s, Phase.PLAY, what="discarding")
    i = _hand_index(s, m.card)
    card, from_deck = s.hand[i]
    if not from_deck:
        raise IllegalMove("a card from the discard pile must be placed (R15, R21)")
    s.hand.pop(i)
    s.discard.append(card)
    a = s.active
    value = s.known[card]
    if s.ruleset.variant is Variant.GRANDE and value in ACTION_VALUES:
        # R22: discarding an action card straight from the deck activates it, always.
        s.effects.append(Discarded(a, card, True))
        if value == 13:
            if _open_slots(s, a) and _can_draw_deck(s):
                s.phase = Phase.REPLACE_OPEN
                return
            _continue(s)  # R22: no target, no action; R24: no turn-up after a 13
            return
        if _has_closed(s, a):
            s.phase = Phase.PEEK_LINE if value == -2 else Phase.PEEK_CARD
            return
        _continue(s)
        return
    s.effects.append(Discarded(a, card, False))
    _turn_up_or_continue(s)


def _turn_up_or_continue(s: State) -> None:
    """R15, R21, R23, R26: one closed card is turned up next, if any remains."""
    if _has_closed(s, s.active) and not s.sealed:
        s.phase = Phase.TURN_UP
    else:
        _continue(s)


def _continue(s: State) -> None:
    """After a card is played: the next card in hand, or the turn's end."""
    if s.ruleset.variant is Variant.GRANDE and s.hand:
        card, from_deck = s.hand[0]
        if not from_deck and not _card_slots(s, s.active):
            # Our ruling E2: a discard-pile card that has no card left to replace
            # (the display was cleared whole) goes back to the discard pile.
            s.hand.pop()
            s.discard.append(card)
            s.effects.append(Discarded(s.active, card, False))
            _end_turn(s)
            return
        s.phase = Phase.PLAY
        return
    _end_turn(s)


def _swap(s: State, m: Swap) -> None:
    _want(s, Phase.DRAW, what="a Swap")
    if s.ruleset.variant is not Variant.GRANDE:
        raise IllegalMove("ALLEGRA has no Swap")
    if s.draws:
        raise IllegalMove("a Swap replaces the draw (R26)")
    cards = _card_slots(s, s.active)
    _check_slot(s, m.a, cards, "a card of your display")
    _check_slot(s, m.b, cards, "a card of your display")
    if m.a == m.b:
        raise IllegalMove("a Swap exchanges two different cards")
    if m.a > m.b:
        # One decision, one encoding in the log: the two places in reading order.
        raise IllegalMove("name the two cards of a Swap in reading order (the first one first)")
    ca, cb = _cell(s, m.a), _cell(s, m.b)
    _set(s, m.a, cb)
    _set(s, m.b, ca)
    s.effects.append(Swapped(s.active, m.a, m.b))
    resolve(s, [m.a, m.b])
    _turn_up_or_continue(s)


def _peek_line(s: State, m: PeekLine) -> None:
    _want(s, Phase.PEEK_LINE, what="looking at a row or column")
    if m not in _lines_with_closed(s, s.active):
        raise IllegalMove(f"{m.axis} {m.index + 1} has no closed card to look at")
    g = s.grids[s.active]
    if m.axis == "row":
        cells = [g.at(m.index, c) for c in range(g.cols)]
    else:
        cells = [g.at(r, m.index) for r in range(g.rows)]
    _peek(s, [c for c in cells if c != HOLE and c not in s.up])


def _peek_card(s: State, m: PeekCard) -> None:
    _want(s, Phase.PEEK_CARD, what="looking at a card")
    _check_slot(s, m.at, _closed_slots(s, s.active), "a closed card of your display")
    _peek(s, [_cell(s, m.at)])


def _peek(s: State, cards: list[int]) -> None:
    """R23: the values go to the peeker alone; the engine reads them only for that seat.

    Fair deal: a private request to the peeker. Every engine waits until the shares it
    needs are in (the peeker's: the values; the others': that the reveal happened), so
    that every peer's public state moves on at the same event; only the peeker's source
    holds the values, and nothing public reads them."""
    a = s.active
    if s.fair:
        got = _ask(s, [RevealRequest(s.round_no, c, a) for c in cards])
        values: tuple[int, ...] = () if any(v is None for v in got) else tuple(got)  # type: ignore[arg-type]
    else:
        values = tuple(s.source.value(s.round_no, c) for c in cards)  # type: ignore[union-attr]
    s.peeked[a] = s.peeked[a] | frozenset(cards)
    s.effects.append(Peeked(a, tuple(cards), values))
    _turn_up_or_continue(s)


def peeked_value(state: State, seat: int, card: int) -> int | None:
    """The value `seat` saw of a closed `card` it peeked at, else None."""
    if card in state.peeked[seat]:
        if state.fair:
            return state.source.seen(state.round_no, card, seat)  # type: ignore[union-attr]
        return state.source.value(state.round_no, card)  # type: ignore[union-attr]
    return None


def _replace_open(s: State, m: ReplaceOpen) -> None:
    _want(s, Phase.REPLACE_OPEN, what="the 13's exchange")
    a = s.active
    _check_slot(s, m.at, _open_slots(s, a), "a face-up card of your display")
    old = _cell(s, m.at)
    s.up.discard(old)
    s.discard.append(old)
    s.effects.append(Discarded(a, old, False))
    new = _draw_deck(s)  # R24: unseen, closed
    _set(s, m.at, new)
    s.effects.append(Closed(a, new, m.at))
    # R24: no card is turned up after this action, for the rest of the turn (revised; a
    # ruleset from before the revision allowed a turn-up after the turn's other card).
    s.sealed = not s.ruleset.turn_up_after_13  # type: ignore[union-attr]
    _continue(s)


def _give(s: State, m: Give) -> None:
    _want(s, Phase.PLAY, what="giving the card to a knocker")
    if s.ruleset.variant is not Variant.ALLEGRA:
        raise IllegalMove("ALLEGRA Grande has no knocking")
    if not _knocking(s):
        raise IllegalMove(f"knocking needs {s.ruleset.knock_min_players} or more players (R16)")  # type: ignore[union-attr]
    card, from_deck = s.hand[0]
    if not from_deck:
        raise IllegalMove("only a card drawn from the deck can be given (R16)")
    if not 0 <= m.to < s.players or m.to == s.active:
        raise IllegalMove(f"seat {m.to} cannot take the card: give it to another seat that knocked")
    if not _card_slots(s, m.to):
        raise IllegalMove(f"seat {m.to} has no card in its area to exchange")
    s.hand.pop()
    s.knock = (m.to, card, HOLE)
    s.effects.append(Given(s.active, m.to, card))
    s.phase = Phase.PLACE_GIVEN


def _place_given(s: State, m: Place) -> None:
    """R16: the knocker puts the given card in place of Y and holds Y (revealed)."""
    assert s.knock is not None
    k, given, _ = s.knock
    if m.card != given:
        raise IllegalMove(f"card #{m.card} is not the card you were given")
    _check_slot(s, m.at, _card_slots(s, k), "a card of your area")
    _need(s, [given, _cell(s, m.at)])
    held = _exchange_card(s, m.at, given, k)
    s.knock = (k, given, held)
    resolve(s, [m.at])
    if _exchanges(s):
        s.phase = Phase.EXCHANGE
        return
    # Our ruling E1: no card Z to take or no card W to replace: Y is discarded.
    s.discard.append(held)
    s.effects.append(Discarded(k, held, False))
    s.knock = None
    _end_turn(s)


def _exchange(s: State, m: Exchange) -> None:
    _want(s, Phase.EXCHANGE, what="taking a card from the knocker")
    assert s.knock is not None
    k, _, held = s.knock
    if m.take == m.at:
        raise IllegalMove("the card you take must go in place of another card")
    _check_slot(s, m.take, _card_slots(s, k), f"a card of seat {k}'s area")
    _check_slot(s, m.at, _card_slots(s, s.active), "a card of your area")
    z = _cell(s, m.take)
    _need(s, [z, _cell(s, m.at)])
    _set(s, m.take, HOLE)
    s.up.discard(z)
    w = _exchange_card(s, m.at, z, s.active)
    s.discard.append(w)
    resolve(s, [m.at])
    # K puts Y into the hole left by Z.
    _set(s, m.take, held)
    s.up.add(held)
    s.effects.append(Placed(k, held, m.take, HOLE))
    resolve(s, [m.take])
    s.knock = None
    _end_turn(s)


_HANDLERS = {
    TurnUp: _turn_up, DrawFromDeck: _draw_deck_move, TakeDiscard: _take_discard,
    Place: _place, Discard: _discard, Swap: _swap, PeekLine: _peek_line,
    PeekCard: _peek_card, ReplaceOpen: _replace_open, Give: _give, Exchange: _exchange,
}


# ----------------------------------------------------------------- turns and rounds


def _begin_turn(s: State) -> None:
    s.phase = Phase.DRAW
    s.hand = []
    s.draws = 0
    s.first_from_deck = False
    s.sealed = False
    s.turn += 1
    if s.ruleset.variant is Variant.GRANDE:
        # R20: exactly one closed card at the turn's start: one card only.
        s.draw_limit = 1 if closed_in_display(s, s.active) == 1 else 2
    else:
        s.draw_limit = 1


def _end_turn(s: State) -> None:
    """R9: the end is triggered when a seat has no closed card left; then one final lap."""
    n = s.players
    a = s.active
    if s.ender is None:
        for i in range(n):
            seat = (a + i) % n
            if closed_in_display(s, seat) == 0:
                s.ender = seat
                s.effects.append(EndTriggered(seat))
                s.final_lap = [(a + j) % n for j in range(1, n + 1) if (a + j) % n != seat]
                break
    if s.final_lap is not None:
        if not s.final_lap:
            _end_round(s)
            return
        s.active = s.final_lap.pop(0)
    else:
        s.active = (a + 1) % n
    _begin_turn(s)


def round_scores(state: State) -> list[int]:
    """Each seat's sum of the values it owns (R9, R17); unknown values count as 0."""
    rs = state.ruleset
    n = state.players
    known = state.known

    def val(c: int) -> int:
        if c == HOLE:
            return 0
        v = known[c]
        return 0 if v is None else rs.score_of(v)

    if rs.variant is Variant.ALLEGRA:
        # R17: a seat owns its area, its own display and its left neighbour's rightmost column.
        return [sum(val(state.grids[sl.seat].cells[geometry.flat(sl)]) for sl in geometry.area(n, s))
                for s in range(n)]
    return [sum(val(c) for c in g.cells) for g in state.grids]


def _end_round(s: State) -> None:
    # R9: every closed card is turned up; no clearing happens at this reveal.
    _need(s, [c for g in s.grids for c in g.cells if c != HOLE and c not in s.up])
    for seat, g in enumerate(s.grids):
        for i, c in enumerate(g.cells):
            if c != HOLE and c not in s.up:
                s.up.add(c)
                _reveal(s, c, Slot(seat, i // g.cols, i % g.cols))
    raw = round_scores(s)
    scores = raw[:]
    rs = s.ruleset
    doubled = False
    e = s.ender
    if e is not None and rs.double_ender:
        lowest = all(raw[e] < raw[i] for i in range(s.players) if i != e)
        if not lowest and (raw[e] > 0 or not rs.double_only_positive):
            scores[e] = raw[e] * 2  # R10
            doubled = True
    s.totals = [t + x for t, x in zip(s.totals, scores)]
    displays = tuple(
        tuple(tuple(None if c == HOLE else s.known[c] for c in g.cells[r * g.cols:(r + 1) * g.cols])
              for r in range(g.rows))
        for g in s.grids
    )
    s.results = s.results + (RoundResult(
        s.round_no, e, tuple(raw), tuple(scores), doubled, tuple(s.totals),
        s.round_cleared, s.turn, displays,
    ),)
    s.effects.append(RoundEnded(s.round_no))
    if s.round_no + 1 < rs.rounds:
        _start_round(s, s.round_no + 1)
        return
    s.phase = Phase.OVER
    s.hand = []
    s.effects.append(GameEnded(winners(s)))


def needed(state: State, move: Move) -> tuple[RevealRequest, ...]:
    """The values `move` waits for now (the first batch; () when it can be applied). Only a
    fair-deal state ever waits; an illegal move raises IllegalMove as `apply` does."""
    try:
        apply(state, move)
    except NeedValues as e:
        return e.requests
    return ()


def play(state: State, moves: Sequence[Move]) -> State:
    """Apply moves one after another (a convenience for tests and tools)."""
    for m in moves:
        state = apply(state, m)
    return state
