"""Rulings R12-R17 of RULINGS.md: ALLEGRA's deck, displays and areas, clearing across
neighbours, turns, knocking and scores. Each test is named after the ruling it pins."""

from __future__ import annotations

from collections import Counter

import pytest

from allegra_lan.rules import (
    AllegraRuleset, Discard, DrawFromDeck, Exchange, Give, Phase, Place, RulesetError, Slot,
    State, TakeDiscard, TurnUp, apply, area_slots, legal_moves, new_game, ruleset_for, to_act, view,
)
from allegra_lan.rules.effects import Cleared, Placed, Revealed
from allegra_lan.rules.position import area_layout, build, layout
from allegra_lan.rules.rng import seed_from_number

from helpers import cleared_cards, closed_display, illegal, of_type, play

ALLEGRA = ruleset_for("allegra")

# R12 as written in RULINGS.md (not read back from the ruleset, so that a changed default shows).
R12_COUNTS = {-1: 5, 0: 7, 1: 8, 2: 9, 3: 10, 4: 11, 5: 12, 6: 12, 7: 11, 8: 10, 9: 9, 10: 8, 11: 8}


# ------------------------------------------------------------------ R12 deck


def test_r12_deck_of_120_cards_minus_1_to_11() -> None:
    assert sum(R12_COUNTS.values()) == 120
    assert ALLEGRA.deck_size == 120
    assert Counter(ALLEGRA.deck_values()) == Counter(R12_COUNTS)


@pytest.mark.parametrize("round_no", [0, 1, 2])
def test_r12_every_round_is_dealt_from_the_whole_deck(round_no: int) -> None:
    state = new_game(ALLEGRA, 4, seed_from_number(9))
    values = Counter(state.source.value(round_no, c) for c in range(120))
    assert values == Counter(R12_COUNTS)


def test_r12_card_counts_option() -> None:
    rs = AllegraRuleset(card_counts=((1, 60), (2, 60)))
    assert rs.deck_size == 120
    state = new_game(rs, 3, seed_from_number(9))
    assert {state.source.value(0, c) for c in range(120)} == {1, 2}


@pytest.mark.parametrize("players", [1, 7])
def test_r12_two_to_six_players(players: int) -> None:
    for ok in range(2, 7):
        new_game(ALLEGRA, ok, seed_from_number(1))
    with pytest.raises(RulesetError, match="2 to 6"):
        new_game(ALLEGRA, players, seed_from_number(1))


# ------------------------------------------------------------------ R13 displays and areas


@pytest.mark.parametrize("players", [2, 3, 6])
def test_r13_display_3x4_and_area_of_rows_of_5(players: int) -> None:
    state = new_game(ALLEGRA, players, seed_from_number(1))
    assert all((g.rows, g.cols) == (3, 4) for g in state.grids)
    assert len(state.deck) == 120 - 12 * players
    for seat in range(players):
        left = (seat + 1) % players
        slots = area_slots(state, seat)
        assert len(slots) == 15
        for r in range(3):
            assert slots[5 * r:5 * r + 5] == [Slot(left, r, 3)] + [Slot(seat, r, c) for c in range(4)]


def test_r13_two_player_ring() -> None:
    """With two players each is the other's left neighbour: each area holds the other's col 3."""
    state = new_game(ALLEGRA, 2, seed_from_number(1))
    assert [s for s in area_slots(state, 0) if s.seat == 1] == [Slot(1, r, 3) for r in range(3)]
    assert [s for s in area_slots(state, 1) if s.seat == 0] == [Slot(0, r, 3) for r in range(3)]
    # A run through the shared column clears in either seat's area.
    pos = build(ALLEGRA, [["? ? ? ?", "? ? ? ?", "? ? ? ?"], ["7 7 ? ?", "? ? ? ?", "? ? ? ?"]],
                discard=["0"], hand=[("7", False)], active=1)
    after = apply(pos, Place(pos.hand[0][0], Slot(0, 0, 3)))
    assert layout(after, 0)[0] == "? ? ? ."
    assert layout(after, 1)[0] == ". . ? ?"
    assert area_layout(after, 1)[0] == ". . . ? ?"


# ------------------------------------------------------------------ R14 runs across areas


def test_r14_area_row_run_clears_from_the_neighbours_display() -> None:
    """Seat 1's col 3 starts seat 0's area row: its card leaves seat 1's display."""
    state = build(ALLEGRA, [["4 ? 9 9", "? ? ? ?", "? ? ? ?"], ["? ? ? 4", "? ? ? ?", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("4", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 1)))
    assert area_layout(after, 0)[0] == ". . . 9 9"
    assert layout(after, 1)[0] == "? ? ? ."
    assert cleared_cards(after.effects) == 3


def test_r14_every_column_including_the_neighbours() -> None:
    """Seat 0 plays on seat 1's col 3 (part of seat 0's area): the column of three clears."""
    state = build(ALLEGRA, [closed_display(3, 4), ["? ? ? 5", "? ? ? 5", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("5", False)])
    after = apply(state, Place(state.hand[0][0], Slot(1, 2, 3)))
    assert [row.split()[3] for row in layout(after, 1)] == [".", ".", "."]
    assert cleared_cards(after.effects) == 3


def test_r14_one_card_in_the_shared_column_clears_runs_in_two_areas() -> None:
    """Seat 1's col 3 is in seat 0's area row and in seat 1's own area row: a 6 there completes
    "6 6" on both sides, and both runs clear at once."""
    state = build(ALLEGRA, [["6 6 ? ?", "? ? ? ?", "? ? ? ?"], ["? 6 6 ?", "? ? ? ?", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("6", False)])
    after = apply(state, Place(state.hand[0][0], Slot(1, 0, 3)))
    assert area_layout(after, 0)[0] == ". . . ? ?"
    assert area_layout(after, 1)[0] == "? ? . . ."
    assert cleared_cards(after.effects) == 5
    assert len(of_type(after.effects, Cleared)) == 1


def test_r14_no_line_across_the_edge_of_an_area() -> None:
    """Seat 1's cols 2 and 3 and seat 0's col 0 are not one line of any area: no run."""
    state = build(ALLEGRA, [["? ? ? ?", "? ? ? ?", "? ? ? ?"], ["? ? 4 4", "? ? ? ?", "? ? ? ?"],
                            closed_display(3, 4)], discard=["0"], hand=[("4", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 0)))
    assert area_layout(after, 0)[0] == "4 4 ? ? ?"
    assert cleared_cards(after.effects) == 0


def test_r14_holes_stay_and_nothing_slides() -> None:
    """A column wholly cleared stays as holes, and a row of holes stays: ALLEGRA never collapses."""
    state = build(ALLEGRA, [["2 . . .", "2 . . .", "? . . ."], ["? ? ? .", "? ? ? .", "? ? ? ."],
                            closed_display(3, 4)], discard=["0"], hand=[("2", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 2, 0)))
    assert layout(after, 0) == [". . . .", ". . . .", ". . . ."]
    assert (after.grids[0].rows, after.grids[0].cols) == (3, 4)
    assert area_slots(after, 0) == area_slots(state, 0)


# ------------------------------------------------------------------ R15 a turn


def test_r15_a_discard_pile_card_must_replace_a_card_of_the_area() -> None:
    state = build(ALLEGRA, [closed_display(3, 4)] * 3, deck=["5"], discard=["1", "8"])
    took = apply(state, TakeDiscard())
    card = took.hand[0][0]
    assert took.known[card] == 8
    assert set(legal_moves(took)) == {Place(card, s) for s in area_slots(took, 0)}
    assert "must be placed" in illegal(took, Discard(card))
    placed = apply(took, Place(card, Slot(1, 1, 3)))
    assert layout(placed, 1)[1] == "? ? ? 8"
    assert to_act(placed).seat == 1  # one card a turn


def test_r15_a_deck_card_replaces_a_card_and_the_replaced_one_is_discarded() -> None:
    state = build(ALLEGRA, [["?3 ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(3, 4),
                            closed_display(3, 4)], deck=["5"], discard=["1"])
    drawn = apply(state, DrawFromDeck())
    assert view(drawn, 2).hand[0].value == 5
    placed = apply(drawn, Place(drawn.hand[0][0], Slot(0, 0, 0)))
    assert view(placed, 1).discard_top.value == 3
    assert layout(placed, 0)[0] == "5 ? ? ?"
    assert to_act(placed) is not None and to_act(placed).seat == 1


def test_r15_a_deck_card_discarded_then_a_closed_card_of_the_area_turns_up() -> None:
    state = build(ALLEGRA, [["1 2 ?3 4", "2 3 4 1", "3 4 1 2"], ["? ? ? ?7", "? ? ? 2", "? ? ? 3"],
                            closed_display(3, 4)], deck=["5"], discard=["1"])
    drawn = apply(state, DrawFromDeck())
    discarded = apply(drawn, Discard(drawn.hand[0][0]))
    assert to_act(discarded).kind == "turn_up"
    assert set(legal_moves(discarded)) == {TurnUp(Slot(0, 0, 2)), TurnUp(Slot(1, 0, 3))}
    turned = apply(discarded, TurnUp(Slot(1, 0, 3)))
    assert Revealed(turned.grids[1].at(0, 3), 7, Slot(1, 0, 3)) in turned.effects
    assert to_act(turned).seat == 1


def test_r15_no_closed_card_left_in_the_area_ends_the_turn_after_a_discard() -> None:
    open_area = ["1 2 3 4", "2 3 4 1", "3 4 1 2"]
    state = build(ALLEGRA, [open_area, ["? ? ? 0", "? ? ? 1", "? ? ? 0"], closed_display(3, 4)],
                  deck=["5"], discard=["1"])
    drawn = apply(state, DrawFromDeck())
    done = apply(drawn, Discard(drawn.hand[0][0]))
    assert to_act(done).kind == "draw"


# ------------------------------------------------------------------ R16 knocking


def _knock_position() -> State:
    """Seat 0 draws a 6 and gives it to seat 2 (whose area starts with seat 0's col 3)."""
    seat0 = ["1 5 5 9", "? ? ? ?", "? ? ? ?"]
    seat1 = closed_display(3, 4)
    seat2 = ["5 5 2 3", "? ? ? ?", "6 6 ?5 4"]
    return build(ALLEGRA, [seat0, seat1, seat2], deck=["6", "8"], discard=["0"])


def test_r16_full_knock_exchange_runs_after_each_step() -> None:
    """Give -> K places (its run clears at once) -> the active seat takes Z and replaces W (its
    run clears) -> K's Y goes into Z's hole and is looked at on its own: had the clearing waited
    for the end, Y's 5 would have joined a run with the 5s cleared one step before."""
    state = _knock_position()
    drawn = apply(state, DrawFromDeck())
    given = drawn.hand[0][0]
    assert {Give(1), Give(2)} <= set(legal_moves(drawn))
    gave = apply(drawn, Give(2))
    assert to_act(gave).seat == 2 and to_act(gave).kind == "place_given"
    y = gave.grids[2].at(2, 2)
    # Step 1: K puts the 6 in place of Y; "6 6 6" in K's area row clears now.
    placed = apply(gave, Place(given, Slot(2, 2, 2)))
    assert layout(placed, 2)[2] == ". . . 4"
    assert cleared_cards(placed.effects) == 3
    assert Revealed(y, 5, None) in placed.effects  # R4: Y is shown to everyone
    for seat in (0, 1):
        k = view(placed, seat).knock
        assert k is not None and k[0] == 2 and k[2] is not None and k[2].value == 5
    assert to_act(placed).seat == 0 and to_act(placed).kind == "exchange"
    # Steps 2 and 3: Z (a 5 of K's area) replaces W (the 9 at seat 0's col 3).
    z = placed.grids[2].at(0, 1)
    w = placed.grids[0].at(0, 3)
    done = apply(placed, Exchange(Slot(2, 0, 1), Slot(0, 0, 3)))
    assert layout(done, 0)[0] == "1 . . ."
    assert layout(done, 2) == ["5 5 2 3", "? ? ? ?", ". . . 4"]
    assert done.grids[2].at(0, 1) == y and done.grids[0].at(0, 3) == -1
    assert area_layout(done, 2)[0] == ". 5 5 2 3"
    assert done.discard == state.discard + [w]
    assert z in done.cleared and given in done.cleared and y not in done.cleared
    cleared = of_type(done.effects, Cleared)
    assert len(cleared) == 1 and cleared_cards(done.effects) == 3
    effects = list(done.effects)
    y_back = next(e for e in effects if isinstance(e, Placed) and e.card == y)
    assert effects.index(cleared[0]) < effects.index(y_back)
    assert done.knock is None and to_act(done).seat == 1
    assert done.card_count() == state.card_count()


def test_r16_r04_closed_cards_taken_in_the_exchange_arrive_face_up() -> None:
    """K is seat 0's left neighbour here. Y, Z and W are all closed: Y and W are revealed as they
    leave their places, Z arrives face up at W, and Y face up in Z's hole, for every seat to see."""
    seat0 = ["?2 ? ? ?", "? ? ? ?", "? ? ? ?"]
    seat1 = ["?8 ? ? ?", "? ?9 ? ?", "? ? ? ?"]
    state = build(ALLEGRA, [seat0, seat1, closed_display(3, 4)], deck=["6"], discard=["0"])
    drawn = apply(state, DrawFromDeck())
    p = play(drawn, [Give(1), Place(drawn.hand[0][0], Slot(1, 1, 1)),
                     Exchange(Slot(1, 0, 0), Slot(0, 0, 0))])
    s = p.state
    for seat in range(3):
        v = view(s, seat)
        assert (v.card_at(Slot(0, 0, 0)).value, v.card_at(Slot(0, 0, 0)).up) == (8, True)
        assert (v.card_at(Slot(1, 0, 0)).value, v.card_at(Slot(1, 0, 0)).up) == (9, True)
        assert (v.card_at(Slot(1, 1, 1)).value, v.card_at(Slot(1, 1, 1)).up) == (6, True)
        assert v.discard_top is not None and v.discard_top.value == 2
    assert to_act(s).seat == 1 and to_act(s).kind == "draw"


def test_r16_give_only_a_card_drawn_from_the_deck() -> None:
    state = _knock_position()
    took = apply(state, TakeDiscard())
    assert not any(isinstance(m, Give) for m in legal_moves(took))
    assert "drawn from the deck" in illegal(took, Give(2))


def test_r16_knocking_with_two_players_by_default() -> None:
    """Revised R16: "any other player" may knock, with two players too (it was 3 or more)."""
    assert ALLEGRA.knock_min_players == 2
    state = build(ALLEGRA, [closed_display(3, 4)] * 2, deck=["6"], discard=["0"])
    drawn = apply(state, DrawFromDeck())
    assert Give(1) in legal_moves(drawn)
    gave = apply(drawn, Give(1))
    assert to_act(gave).seat == 1 and to_act(gave).kind == "place_given"


def test_r16_knock_min_players_option() -> None:
    """3 is the option that turns knocking off for two players (and what old logs say)."""
    three = AllegraRuleset(knock_min_players=3)
    state = build(three, [closed_display(3, 4)] * 2, deck=["6"], discard=["0"])
    drawn = apply(state, DrawFromDeck())
    assert not any(isinstance(m, Give) for m in legal_moves(drawn))
    assert "3 or more players" in illegal(drawn, Give(1))
    state = build(three, [closed_display(3, 4)] * 3, deck=["6"], discard=["0"])
    assert Give(1) in legal_moves(apply(state, DrawFromDeck()))
    four = AllegraRuleset(knock_min_players=4)
    state = build(four, [closed_display(3, 4)] * 3, deck=["6"], discard=["0"])
    drawn = apply(state, DrawFromDeck())
    assert not any(isinstance(m, Give) for m in legal_moves(drawn))
    assert "4 or more players" in illegal(drawn, Give(1))


def test_r16_the_knock_is_a_choice_the_active_player_may_ignore() -> None:
    state = _knock_position()
    drawn = apply(state, DrawFromDeck())
    played = apply(drawn, Place(drawn.hand[0][0], Slot(0, 1, 0)))
    assert to_act(played).seat == 1 and played.knock is None


# ------------------------------------------------------------------ R17 scores


def test_r17_a_shared_column_scores_for_both_seats() -> None:
    """3 seats: each owns its 12 places and its left neighbour's col 3."""
    rs = AllegraRuleset(rounds=1)
    seat0 = ["0 1 2 3", "4 5 6 7", "8 9 10 ?11"]
    seat1 = ["1 2 3 4", "5 6 7 8", "9 10 11 -1"]
    seat2 = ["2 3 4 5", "6 7 8 9", "10 11 -1 0"]
    state = build(rs, [seat0, seat1, seat2], deck=["0", "0", "0"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 2, 3))])
    for _ in (1, 2):
        p = play(p.state, [DrawFromDeck()])
        p = play(p.state, [Discard(p.state.hand[0][0])])
    assert p.state.phase is Phase.OVER
    own = (66, 65, 64)
    col3 = (3 + 7 + 11, 4 + 8 - 1, 5 + 9 + 0)
    result = p.state.results[0]
    assert result.raw == (own[0] + col3[1], own[1] + col3[2], own[2] + col3[0])
    assert result.ender == 0 and result.scores == result.raw  # 77 is the lowest


def test_r17_two_player_ring_scores_each_shared_column_for_both() -> None:
    rs = AllegraRuleset(rounds=1, double_ender=False)
    seat0 = ["1 2 3 ?4", "2 3 4 5", "3 4 5 6"]
    seat1 = ["0 1 0 7", "1 0 1 8", "0 1 0 9"]
    state = build(rs, [seat0, seat1], deck=["0", "0"], discard=["0"])
    p = play(state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0]), TurnUp(Slot(0, 0, 3))])
    p = play(p.state, [DrawFromDeck()])
    p = play(p.state, [Discard(p.state.hand[0][0])])
    assert p.state.phase is Phase.OVER
    assert p.state.results[0].raw == (42 + (7 + 8 + 9), 28 + (4 + 5 + 6))
