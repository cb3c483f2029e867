"""Rulings R1-R11 of RULINGS.md, which both variants share: seats, dealing, the start of a round,
faces, matching, runs, what clearing does with cards, reshuffles, the round's end, doubling
and the game's length. Each test is named after the ruling it pins."""

from __future__ import annotations

from collections import Counter

import pytest

from allegra_lan.rules import (
    AllegraRuleset, Discard, DrawFromDeck, Exchange, Give, GrandeRuleset, IllegalMove, Move,
    Phase, Place, PeekCard, Ruleset, Slot, State, Swap, TakeDiscard, TurnUp, apply,
    area_slots, legal_moves, new_game, ruleset_for, state_hash, to_act, view, winners,
)
from allegra_lan.rules.effects import Cleared, EndTriggered, GameEnded, Reshuffled, Revealed
from allegra_lan.rules.position import area_layout, build, layout
from allegra_lan.rules.rng import seed_from_number

from helpers import (
    Played, clear_steps, cleared_cards, closed_display, illegal, of_type, play, play_until,
    quick_move,
)

GRANDE = ruleset_for("grande")
ALLEGRA = ruleset_for("allegra")


def _until_over(p: Played) -> bool:
    return p.state.phase is Phase.OVER


# ------------------------------------------------------------------ R1 seats


@pytest.mark.parametrize("variant,seats", [("grande", 4), ("allegra", 5)])
def test_r01_play_passes_clockwise_to_the_next_seat(variant: str, seats: int) -> None:
    """Turns go i -> i+1 (mod n): after seat n-1 comes seat 0."""
    state = new_game(ruleset_for(variant), seats, seed_from_number(11))
    p = play_until(state, lambda p: sum(k == "draw" for _, k in p.decisions) >= 2 * seats + 1)
    starters = [seat for seat, kind in p.decisions if kind == "draw"]
    first = starters[0]
    assert starters == [(first + i) % seats for i in range(len(starters))]


def test_r01_left_neighbour_is_the_next_seat() -> None:
    """Seat i's left neighbour is seat i+1: its area starts with seat i+1's rightmost column."""
    state = new_game(ALLEGRA, 4, seed_from_number(1))
    for seat in range(4):
        left = (seat + 1) % 4
        slots = area_slots(state, seat)
        assert [s for s in slots if s.seat != seat] == [Slot(left, r, 3) for r in range(3)]


# ------------------------------------------------------------------ R2 dealer and starter


@pytest.mark.parametrize("variant,seats", [("allegra", 3), ("grande", 2)])
def test_r02_dealer_and_starter_of_every_round(variant: str, seats: int) -> None:
    """Round r is dealt by seat r mod n and seat r+1 mod n plays the round's first turn."""
    state = new_game(ruleset_for(variant), seats, seed_from_number(5))
    dealers: dict[int, int] = {}
    first_draw: dict[int, int] = {}
    while (d := to_act(state)) is not None:
        dealers.setdefault(state.round_no, state.dealer)
        if d.kind == "draw":
            first_draw.setdefault(state.round_no, d.seat)
        state = apply(state, quick_move(state))
    assert sorted(dealers) == sorted(first_draw) == [0, 1, 2]
    for r, dealer in dealers.items():
        assert dealer == r % seats
        assert first_draw[r] == (r + 1) % seats


def test_r02_deal_comes_from_the_seed_only() -> None:
    """Same seed, same deal on every peer; another seed, another deal."""
    a = new_game(GRANDE, 3, seed_from_number(7))
    b = new_game(GRANDE, 3, seed_from_number(7))
    c = new_game(GRANDE, 3, seed_from_number(8))
    values = [a.source.value(0, i) for i in range(GRANDE.deck_size)]
    assert values == [b.source.value(0, i) for i in range(GRANDE.deck_size)]
    assert values != [c.source.value(0, i) for i in range(GRANDE.deck_size)]
    assert state_hash(a) == state_hash(b)
    # Later rounds are dealt afresh from the same seed.
    assert values != [a.source.value(1, i) for i in range(GRANDE.deck_size)]


# ------------------------------------------------------------------ R3 start of a round


@pytest.mark.parametrize("variant,seats", [("grande", 3), ("allegra", 4)])
def test_r03_two_cards_each_then_the_discard_pile_starts(variant: str, seats: int) -> None:
    """Every seat turns up exactly two cards before the first draw; then the deck's top starts the
    discard pile face up."""
    rs = ruleset_for(variant)
    state = new_game(rs, seats, seed_from_number(3))
    assert state.discard == []
    p = play_until(state, lambda p: to_act(p.state) is not None and to_act(p.state).kind == "draw")
    reveals = Counter(seat for seat, kind in p.decisions if kind == "reveal")
    assert reveals == Counter({seat: 2 for seat in range(seats)})
    assert all(kind == "reveal" for _, kind in p.decisions)
    s = p.state
    rows, cols = rs.dims(seats)
    assert len(s.discard) == 1
    assert len(s.deck) == rs.deck_size - seats * rows * cols - 1
    top = view(s, 0).discard_top
    assert top is not None and top.value is not None
    assert sum(1 for g in s.grids for c in g.cells if c in s.up) == 2 * seats


def test_r03_grande_turns_up_any_closed_card_of_own_display() -> None:
    state = new_game(GRANDE, 3, seed_from_number(3))
    seat = to_act(state).seat
    assert set(legal_moves(state)) == {TurnUp(Slot(seat, r, c)) for r in range(4) for c in range(4)}


def test_r03_allegra_turns_up_any_two_cards_of_the_area() -> None:
    """ALLEGRA: the two cards are any two of the area, the left neighbour's column included."""
    state = new_game(ALLEGRA, 3, seed_from_number(3))
    seat = to_act(state).seat
    left = (seat + 1) % 3
    assert set(legal_moves(state)) == {TurnUp(s) for s in area_slots(state, seat)}
    p = play(state, [TurnUp(Slot(left, 0, 3)), TurnUp(Slot(left, 2, 3))])
    assert Counter(seat for seat, _ in p.decisions) == Counter({seat: 2})
    v = view(p.state, (seat + 2) % 3)
    assert v.card_at(Slot(left, 0, 3)).up and v.card_at(Slot(left, 2, 3)).up


def test_r03_only_closed_cards_can_be_turned_up() -> None:
    """Turning up means a closed card: an open one or a hole is refused, at the start and later."""
    state = new_game(GRANDE, 3, seed_from_number(3))
    seat = to_act(state).seat
    once = apply(state, TurnUp(Slot(seat, 0, 0)))
    assert "not a closed card" in illegal(once, TurnUp(Slot(seat, 0, 0)))
    later = build(GRANDE, [[". 1 ?2", "3 ?4 5"], closed_display(), closed_display()],
                  discard=["0"], hand=[("8", True)])
    turning = apply(later, Discard(later.hand[0][0]))
    assert "not a closed card" in illegal(turning, TurnUp(Slot(0, 0, 1)))
    assert "hole" in illegal(turning, TurnUp(Slot(0, 0, 0)))


# ------------------------------------------------------------------ R4 a card that moves is face up


def test_r04_drawn_and_replaced_cards_are_shown_to_everyone() -> None:
    state = build(GRANDE, [["?7 ? ? ?", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(),
                           closed_display()], deck=["9", "1"], discard=["0"])
    drawn = apply(state, DrawFromDeck())
    for seat in (1, 2):
        assert [h.value for h in view(drawn, seat).hand] == [9]
    card = drawn.hand[0][0]
    second = apply(drawn, DrawFromDeck())
    placed = apply(second, Place(card, Slot(0, 0, 0)))
    assert Revealed(placed.discard[-1], 7, None) in placed.effects
    for seat in (0, 1, 2):
        assert view(placed, seat).discard_top.value == 7
        assert view(placed, seat).card_at(Slot(0, 0, 0)).value == 9


# ------------------------------------------------------------------ R5 only face-up cards match


def test_r05_a_closed_card_does_not_match() -> None:
    state = build(GRANDE, [["?5 5 ? 1", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(),
                           closed_display()], discard=["0"], hand=[("5", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 2)))
    assert layout(after, 0)[0] == "? 5 5 1"
    assert cleared_cards(after.effects) == 0


def test_r05_a_hole_breaks_adjacency_in_an_allegra_area() -> None:
    """Area row: seat 1's col 3 = 5, then seat 0's display ". 5 ? 2": a 5 at the closed card
    makes "5 . 5 5 2", which holds no three adjacent fives."""
    state = build(ALLEGRA, [[". 5 ? 2", "? ? ? ?", "? ? ? ?"], ["? ? ? 5", "? ? ? ?", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("5", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 2)))
    assert area_layout(after, 0)[0] == "5 . 5 5 2"
    assert cleared_cards(after.effects) == 0


# ------------------------------------------------------------------ R6 runs


def test_r06_three_clear_at_once_before_the_second_card_is_played() -> None:
    """A run of three clears at once, even when the player holds a fourth equal card."""
    state = build(GRANDE, [["3 3 ? ?", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(),
                           closed_display()], deck=["3", "3"], discard=["0"])
    p = play(state, [DrawFromDeck(), DrawFromDeck()])
    first, second = (c for c, _ in p.state.hand)
    after = apply(p.state, Place(first, Slot(0, 0, 2)))
    assert layout(after, 0)[0] == ". . . ?"
    assert cleared_cards(after.effects) == 3
    assert to_act(after).kind == "play" and after.hand == [(second, True)]


@pytest.mark.parametrize("row,gap,length,players", [
    ("3 4 3 3", 1, 4, 3), ("3 3 4 3", 2, 4, 3), ("3 3 4 3 3", 2, 5, 2),
])
def test_r06_runs_of_four_and_five_made_by_filling_a_gap(row: str, gap: int, length: int,
                                                         players: int) -> None:
    """A gap filled makes one run of the whole length; all of it clears (3, 4 or 5 cards)."""
    width = len(row.split())
    rest = [" ".join(["?"] * width)] * 3
    displays = [[row] + rest] + [closed_display(4, width) for _ in range(players - 1)]
    state = build(GRANDE, displays, discard=["0"], hand=[("3", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, gap)))
    assert cleared_cards(after.effects) == length
    assert layout(after, 0) == rest  # R27: the emptied row is gone


def test_r06_run_of_five_across_an_allegra_area() -> None:
    """ALLEGRA's area rows are 5 long: seat 1's col 3 and seat 0's four columns clear together."""
    state = build(ALLEGRA, [["3 4 3 3", "? ? ? ?", "? ? ? ?"], ["? ? ? 3", "? ? ? ?", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("3", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 1)))
    assert area_layout(after, 0)[0] == ". . . . ."
    assert cleared_cards(after.effects) == 5
    assert layout(after, 1)[0] == "? ? ? ."


def test_r06_row_and_column_runs_clear_together_each_card_once() -> None:
    state = build(GRANDE, [["3 3 ? ?", "? ? 3 ?", "? ? 3 ?", "? ? ? ?"], closed_display(),
                           closed_display()], discard=["0"], hand=[("3", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 2)))
    assert cleared_cards(after.effects) == 5
    assert clear_steps(after.effects) == 1
    assert len(of_type(after.effects, Cleared)) == 1


def test_r06_runs_are_looked_for_after_a_turn_up() -> None:
    """Turning up a card is an event that changes a face: "?5 5 5" becomes a run when it turns."""
    state = build(GRANDE, [["?5 5 5 1", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(),
                           closed_display()], discard=["0"], hand=[("8", True)])
    card = state.hand[0][0]
    discarded = apply(state, Discard(card))
    assert cleared_cards(discarded.effects) == 0
    turned = apply(discarded, TurnUp(Slot(0, 0, 0)))
    assert layout(turned, 0)[0] == ". . . 1"
    assert cleared_cards(turned.effects) == 3


# ------------------------------------------------------------------ R7 cleared cards leave play


def _three_to_clear(rs: Ruleset) -> State:
    return build(rs, [["3 3 ?9 ?", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(),
                      closed_display()], discard=["0", "1"], hand=[("3", False)])


def test_r07_cleared_cards_leave_play() -> None:
    state = _three_to_clear(GRANDE)
    row = state.grids[0].cells[:3]
    card = state.hand[0][0]
    after = apply(state, Place(card, Slot(0, 0, 2)))
    assert sorted(after.cleared) == sorted([row[0], row[1], card])
    assert after.discard == state.discard + [row[2]]  # only the replaced 9
    assert view(after, 1).discard_top.value == 9
    assert after.card_count() == state.card_count()


def test_r07_option_cleared_to_discard() -> None:
    rs = GrandeRuleset(cleared_to_discard=True)
    state = _three_to_clear(rs)
    row = state.grids[0].cells[:3]
    card = state.hand[0][0]
    after = apply(state, Place(card, Slot(0, 0, 2)))
    assert after.cleared == []
    assert sorted(after.discard) == sorted(state.discard + [row[0], row[1], row[2], card])
    assert after.card_count() == state.card_count()


# ------------------------------------------------------------------ R8 reshuffle


def test_r08_empty_deck_reshuffles_the_discard_pile_but_its_top() -> None:
    state = build(GRANDE, [closed_display(), closed_display(), closed_display()],
                  discard=["1", "2", "3", "4"])
    old = list(state.discard)
    assert DrawFromDeck() in legal_moves(state)
    after = apply(state, DrawFromDeck())
    assert Reshuffled(3) in after.effects
    assert after.discard == [old[-1]]
    drawn = after.hand[0][0]
    assert sorted(after.deck + [drawn]) == sorted(old[:-1])
    assert after.known[drawn] in (1, 2, 3)
    # What every seat watched go down under the top is out of sight until the reshuffle
    # takes it back into the deck.
    assert [v for _, v in view(state, 0).out_of_sight] == [1, 2, 3]
    assert view(after, 0).out_of_sight == ()


def test_r08_nothing_to_reshuffle_means_no_deck_draw() -> None:
    state = build(GRANDE, [closed_display(), closed_display(), closed_display()], discard=["4"])
    assert DrawFromDeck() not in legal_moves(state)
    assert "deck" in illegal(state, DrawFromDeck())


def _keep_closed(state: State) -> Move:
    """Draw from the deck and put every card on an open place: the round lasts until the deck
    has to be reshuffled."""
    moves = legal_moves(state)
    for m in moves:
        if isinstance(m, DrawFromDeck):
            return m
    for m in moves:
        if isinstance(m, Place):
            g = state.grids[m.at.seat]
            if g.cells[m.at.row * g.cols + m.at.col] in state.up:
                return m
    return moves[0]


def test_r08_reshuffle_in_a_real_game_is_fixed_by_the_seed() -> None:
    """A real game that draws the deck dry: the new deck is the old discard pile but its top, and
    replaying the same moves from the same seed gives the same new deck."""
    start = new_game(GRANDE, 2, seed_from_number(21))
    p = play_until(start, lambda q: any(isinstance(e, Reshuffled) for e in q.state.effects),
                   chooser=_keep_closed)
    s = p.state
    n = len(p.decisions)
    before = play_until(start, lambda q: len(q.decisions) == n - 1, chooser=_keep_closed).state
    assert s.round_no == 0 and before.deck == []
    assert s.discard == [before.discard[-1]]
    assert sorted(s.deck + [s.hand[-1][0]]) == sorted(before.discard[:-1])
    again = play_until(start, lambda q: len(q.decisions) == n, chooser=_keep_closed)
    assert state_hash(again.state) == state_hash(s)


# ------------------------------------------------------------------ R9 the round's end


def _single_closed_round(values: list[tuple[int, int]], rs: Ruleset, round_no: int = 0) -> State:
    """Seat i holds `a ?b` (one open, one closed card); each seat draws a 0, discards it and turns
    up its last card. Seat 0 plays first, so it triggers the end and every other seat has one turn."""
    displays = [[f"{a} ?{b}"] for a, b in values]
    state = build(rs, displays, deck=["0"] * len(values), discard=["0"], round_no=round_no)
    for seat in range(len(values)):
        assert to_act(state).seat == seat
        state = apply(state, DrawFromDeck())
        state = apply(state, Discard(state.hand[0][0]))
        state = apply(state, TurnUp(Slot(seat, 0, 1)))
    return state


def test_r09_final_lap_every_seat_but_the_trigger_plays_once() -> None:
    """Seat 0 turns up its last closed card (a cleared place counts as done); seats 1 and 2 then
    have exactly one turn each, and the round ends."""
    state = build(GrandeRuleset(rounds=1), [[". 1 ?2"], ["?6 4 ?7", "1 2 3"], ["?8 4 ?9", "1 2 3"]],
                  deck=["0", "10", "11", "12", "-1"], discard=["0"])
    assert state.draw_limit == 1  # R20: one closed card, one draw
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 0, 2))])
    assert EndTriggered(0) in p.state.effects and p.state.ender == 0
    assert to_act(p.state).seat == 1
    for seat in (1, 2):
        assert to_act(p.state).seat == seat
        q = play(p.state, [DrawFromDeck(), DrawFromDeck()])
        a, b = (c for c, _ in q.state.hand)
        p = play(q.state, [Place(a, Slot(seat, 1, 0)), Place(b, Slot(seat, 1, 1))])
    assert p.state.phase is Phase.OVER
    result = p.state.results[0]
    assert result.ender == 0
    assert result.raw == (1 + 2, 6 + 4 + 7 + 10 + 11 + 3, 8 + 4 + 9 + 12 + -1 + 3)
    assert result.scores[1:] == result.raw[1:]


def test_r09_trigger_by_a_non_active_seat_through_the_allegra_neighbour_column() -> None:
    """Seat 0 turns up seat 1's last closed card (seat 1's col 3 is in seat 0's area): seat 1
    triggers the end; seats 2 and 0 have one more turn each, seat 1 none."""
    rs = AllegraRuleset(rounds=1)
    seat0 = ["?1 ?2 ?3 ?4", "?2 ?3 ?4 ?5", "?3 ?4 ?5 ?6"]
    seat1 = ["1 2 3 ?4", "2 3 4 0", "3 4 0 1"]
    seat2 = ["?0 ?1 ?0 ?7", "?1 ?0 ?1 ?8", "?0 ?1 ?0 ?9"]
    state = build(rs, [seat0, seat1, seat2], deck=["7", "8", "9", "10"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(1, 0, 3))])
    assert p.state.ender == 1
    assert EndTriggered(1) in p.state.effects
    assert p.state.final_lap == [0]
    assert to_act(p.state).seat == 2
    p = play(p.state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(2, 0, 0))])
    assert to_act(p.state).seat == 0
    p = play(p.state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 0, 0))])
    assert p.state.phase is Phase.OVER
    assert p.state.results[0].ender == 1


def test_r09_first_such_seat_clockwise_from_the_active_one() -> None:
    """When several seats have no closed card, the active seat triggers if it is one, else the
    first of them clockwise from it."""
    done = ["1 2 3 0", "2 3 4 1", "3 4 0 2"]
    closed_one = ["1 2 3 ?4", "2 3 4 1", "3 4 0 2"]
    # Seat 0 turns up seat 1's last closed card; seat 2 had none already: seat 1 is first clockwise.
    state = build(ALLEGRA, [["?1 ?2 ?3 ?4", "?2 ?3 ?4 ?5", "?3 ?4 ?5 ?6"], closed_one, done],
                  deck=["7"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(1, 0, 3))])
    assert p.state.ender == 1
    # Seat 0 turns up its own last closed card while seat 1 has none: seat 0, the active seat.
    state = build(ALLEGRA, [["1 2 3 0", "2 3 4 1", "3 4 0 ?2"], done, closed_display(3, 4)],
                  deck=["7"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 2, 3))])
    assert p.state.ender == 0


def test_r09_no_clearing_at_the_final_reveal() -> None:
    """At the round's end the closed cards turn up, and three equal values stay and score."""
    rs = GrandeRuleset(rounds=1)
    state = build(rs, [[". 1 ?2"], ["?6 6 ?6", "1 2 3"]], deck=["0", "0", "7"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 0, 2))])
    q = play(p.state, [DrawFromDeck(), DrawFromDeck()])
    a, b = (c for c, _ in q.state.hand)
    end = play(q.state, [Place(a, Slot(1, 1, 0)), Place(b, Slot(1, 1, 1))])
    assert end.state.phase is Phase.OVER
    result = end.state.results[0]
    assert result.displays[1] == ((6, 6, 6), (0, 7, 3))
    assert result.cleared == 0 and cleared_cards(end.effects) == 0
    assert result.raw == (3, 6 + 6 + 6 + 0 + 7 + 3)


# ------------------------------------------------------------------ R10 doubling


@pytest.mark.parametrize("ender,other,expected,options", [
    ((4, 6), (2, 3), 20, {}),  # 10 > 5: positive and not lowest: doubled
    ((2, 3), (4, 6), 5, {}),  # strictly lowest: not doubled
    ((3, 4), (2, 5), 14, {}),  # tie 7 = 7 counts as not lowest: doubled
    ((-1, -2), (-3, -2), -3, {}),  # negative, not lowest: not doubled by default
    ((-1, -2), (-3, -2), -6, {"double_only_positive": False}),  # ... doubled when allowed
    ((-1, -2), (-1, -2), -6, {"double_only_positive": False}),  # negative tie, option off
    ((4, 6), (2, 3), 10, {"double_ender": False}),  # no doubling at all
])
def test_r10_the_ender_is_doubled_unless_strictly_lowest(
        ender: tuple[int, int], other: tuple[int, int], expected: int,
        options: dict[str, bool]) -> None:
    rs = GrandeRuleset(rounds=1, **options)
    state = _single_closed_round([ender, other], rs)
    assert state.phase is Phase.OVER
    result = state.results[0]
    assert result.ender == 0
    assert result.raw == (sum(ender), sum(other))
    assert result.scores == (expected, sum(other))
    assert result.doubled == (expected != sum(ender))


def test_r10_tie_with_a_third_seat_counts_as_not_lowest() -> None:
    rs = GrandeRuleset(rounds=1)
    state = _single_closed_round([(1, 2), (3, 0), (4, 4)], rs)
    assert state.results[0].scores == (6, 3, 8)


def test_r10_allegra_ender_doubled_too() -> None:
    """Both variants double; ALLEGRA's score is the area's (R17)."""
    rs = AllegraRuleset(rounds=1)
    seat0 = ["1 2 3 ?4", "2 3 4 5", "3 4 5 6"]
    seat1 = ["0 1 0 7", "1 0 1 8", "0 1 0 9"]
    state = build(rs, [seat0, seat1], deck=["0", "0"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 0, 3))])
    p = play(p.state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0])])
    assert p.state.phase is Phase.OVER
    result = p.state.results[0]
    own0, own1 = 42, 28
    assert result.raw == (own0 + 7 + 8 + 9, own1 + 4 + 5 + 6)
    assert result.scores == (2 * (own0 + 24), own1 + 15)


# ------------------------------------------------------------------ R11 game length and winners


@pytest.mark.parametrize("variant,seats", [("grande", 3), ("allegra", 4)])
def test_r11_a_game_is_three_rounds_lowest_total_wins(variant: str, seats: int) -> None:
    p = play_until(new_game(ruleset_for(variant), seats, seed_from_number(2)), _until_over)
    s = p.state
    assert [r.round_no for r in s.results] == [0, 1, 2]
    totals = [0] * seats
    for r in s.results:
        totals = [t + x for t, x in zip(totals, r.scores)]
        assert list(r.totals) == totals
    assert s.totals == totals
    low = min(totals)
    assert winners(s) == tuple(i for i, t in enumerate(totals) if t == low)
    assert GameEnded(winners(s)) in s.effects
    assert legal_moves(s) == [] and to_act(s) is None
    assert "over" in illegal(s, DrawFromDeck())


@pytest.mark.parametrize("rounds", [1, 2])
def test_r11_option_rounds(rounds: int) -> None:
    rs = GrandeRuleset(rounds=rounds)
    p = play_until(new_game(rs, 2, seed_from_number(4)), _until_over)
    assert len(p.state.results) == rounds


def test_r11_equal_totals_share_the_win() -> None:
    """The last round (round 2 of 3) ends with seats 1 and 2 equal and lowest: both win."""
    state = _single_closed_round([(4, 6), (1, 2), (0, 3)], GRANDE, round_no=2)
    assert state.phase is Phase.OVER
    assert state.totals == [20, 3, 3]
    assert winners(state) == (1, 2)
    assert GameEnded((1, 2)) in state.effects


def test_r11_no_winner_before_the_end() -> None:
    state = _single_closed_round([(4, 6), (1, 2), (0, 3)], GRANDE, round_no=1)
    assert state.phase is not Phase.OVER and state.round_no == 2
    assert winners(state) == ()


# ------------------------------------------------------------------ refusals say why


def _refusals() -> list[tuple[str, State, Move, str]]:
    grande = build(GRANDE, [[". 1 ?2 5", "3 4 ?6 7"], closed_display(), closed_display()],
                   deck=["8", "9"], discard=["0"])
    holding = build(GRANDE, [["1 ?2", "3 4"], closed_display(), closed_display()],
                    deck=["8"], discard=["0"], hand=[("9", False)])
    drawn = apply(grande, DrawFromDeck())
    allegra2 = build(AllegraRuleset(knock_min_players=3), [closed_display(3, 4)] * 2, deck=["5"],
                     discard=["0"])  # R16's option that turns knocking off for two
    allegra3 = build(ALLEGRA, [closed_display(3, 4)] * 3, deck=["5"], discard=["0"])
    return [
        ("discard a discard-pile card", holding, Discard(holding.hand[0][0]), "must be placed"),
        ("deck then discard pile", drawn, TakeDiscard(), "deck"),
        ("place on a hole", apply(drawn, DrawFromDeck()), Place(drawn.hand[0][0], Slot(0, 0, 0)),
         "hole"),
        ("place before drawing", grande, Place(0, Slot(0, 0, 1)), "not possible now"),
        ("another seat's display", holding, Place(holding.hand[0][0], Slot(1, 0, 0)),
         "not a card of your display"),
        ("no such place", holding, Place(holding.hand[0][0], Slot(0, 5, 5)), "no place"),
        ("swap in ALLEGRA", allegra3, Swap(Slot(0, 0, 0), Slot(0, 0, 1)), "ALLEGRA has no Swap"),
        ("knock with two players", apply(allegra2, DrawFromDeck()), Give(1), "knocking needs 3"),
        ("give to oneself", apply(allegra3, DrawFromDeck()), Give(0), "another seat"),
        ("peek out of turn", grande, PeekCard(Slot(0, 0, 2)), "not possible now"),
        ("exchange out of turn", grande, Exchange(Slot(1, 0, 0), Slot(0, 0, 1)), "not possible now"),
        ("card not in hand", holding, Place(999, Slot(0, 0, 0)), "not in hand"),
    ]


@pytest.mark.parametrize("name,state,move,why", _refusals(), ids=[r[0] for r in _refusals()])
def test_illegal_move_messages_are_one_readable_line(name: str, state: State, move: Move,
                                                      why: str) -> None:
    """A refused move must say, in one plain line, why: players and logs read it."""
    with pytest.raises(IllegalMove) as err:
        apply(state, move)
    msg = str(err.value)
    assert why in msg
    assert "\n" not in msg and 10 <= len(msg) <= 160
    assert "Traceback" not in msg and "Slot(" not in msg
