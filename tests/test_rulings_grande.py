"""Rulings R18-R27 of RULINGS.md: ALLEGRA Grande's deck, displays, two-card turns, action cards
(-2, 5, 13), Jokers, the Swap and the collapse with its chain reactions. Each test is named
after the ruling it pins."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from allegra_lan.rules import (
    JOKER, Discard, DrawFromDeck, GrandeRuleset, PeekCard, PeekLine, Phase, Place,
    ReplaceOpen, RulesetError, Slot, State, Swap, TakeDiscard, TurnUp, apply, legal_moves,
    new_game, ruleset_for, ruleset_from_dict, to_act, view,
)
from allegra_lan.rules.clearing import runs_in_line
from allegra_lan.rules.effects import (
    Cleared, Closed, Collapsed, Discarded, EndTriggered, Peeked, Revealed, Swapped,
)
from allegra_lan.rules.position import build, layout
from allegra_lan.rules.rng import seed_from_number

from helpers import clear_steps, cleared_cards, closed_display, illegal, of_type, play

GRANDE = ruleset_for("grande")

# R18 as written in RULINGS.md (not read back from the ruleset, so that a changed default shows).
R18_COUNTS = {-2: 4, -1: 8, 0: 9, 1: 10, 2: 10, 3: 10, 4: 10, 5: 16, 6: 10, 7: 10, 8: 10, 9: 10,
              10: 10, 11: 10, 12: 10, 13: 10}

ACTION_DECISION = {"-2": "peek_line", "5": "peek_card", "13": "replace_open"}


def three_seats(rows: Sequence[str], *, deck: Sequence[str] = (), discard: Sequence[str] = ("0",),
                hand: Sequence[tuple[str, bool]] = ()) -> State:
    """Seat 0 holds `rows` and plays; seats 1 and 2 hold closed 4x4 displays (never looked at)."""
    return build(GRANDE, [list(rows), closed_display(), closed_display()], deck=deck,
                 discard=discard, hand=hand)


def activations(effects: Sequence[object]) -> list[Discarded]:
    return [e for e in of_type(effects, Discarded) if e.activated]


def assert_secret(state: State, slot: Slot, value: int, peeker: int) -> None:
    """R23: the peeked value shows in the peeker's view only; every other view keeps it closed
    and strips the values from the Peeked effect."""
    for seat in range(state.players):
        v = view(state, seat)
        card = v.card_at(slot)
        assert card is not None and not card.up
        if seat == peeker:
            assert card.value == value and card.peeked
        else:
            assert card.value is None and not card.peeked
            assert all(e.values == () for e in of_type(v.effects, Peeked))


# ------------------------------------------------------------------ R18 deck


def test_r18_deck_of_157_numbers_and_3_jokers() -> None:
    assert sum(R18_COUNTS.values()) == 157
    expected = Counter(R18_COUNTS)
    expected[JOKER] = 3
    assert GRANDE.deck_size == 160
    assert Counter(GRANDE.deck_values()) == expected
    state = new_game(GRANDE, 5, seed_from_number(12))
    for round_no in (0, 1):
        assert Counter(state.source.value(round_no, c) for c in range(160)) == expected


@pytest.mark.parametrize("joker_value", [0, 3])
def test_r18_r25_a_joker_scores_joker_value(joker_value: int) -> None:
    rs = GrandeRuleset(rounds=1, joker_value=joker_value)
    state = build(rs, [["J ?2"], ["1 ?3"]], deck=["0", "0"], discard=["0"])
    for seat in (0, 1):
        state = play(state, [DrawFromDeck()]).state
        state = play(state, [Discard(state.hand[0][0]), TurnUp(Slot(seat, 0, 1))]).state
    assert state.phase is Phase.OVER
    assert state.results[0].raw == (joker_value + 2, 4)


# ------------------------------------------------------------------ R19 displays


@pytest.mark.parametrize("players,dims", [(2, (4, 5)), (3, (4, 4)), (4, (4, 4)), (5, (4, 4))])
def test_r19_display_4x4_and_4x5_with_two_players(players: int, dims: tuple[int, int]) -> None:
    state = new_game(GRANDE, players, seed_from_number(1))
    assert all((g.rows, g.cols) == dims for g in state.grids)
    assert len(state.deck) == 160 - players * dims[0] * dims[1]


@pytest.mark.parametrize("players", [1, 6])
def test_r19_two_to_five_players(players: int) -> None:
    with pytest.raises(RulesetError, match="2 to 5"):
        new_game(GRANDE, players, seed_from_number(1))


# ------------------------------------------------------------------ R20 drawing two cards


def _draw_position(discard: Sequence[str] = ("0", "7", "8")) -> State:
    return three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["10", "11", "12"],
                       discard=list(discard))


def _hand_values(state: State) -> list[tuple[int | None, bool]]:
    return [(state.known[c], d) for c, d in state.hand]


def test_r20_deck_then_deck() -> None:
    state = _draw_position()
    first = apply(state, DrawFromDeck())
    assert to_act(first).kind == "draw_second"
    assert legal_moves(first) == [DrawFromDeck()]
    second = apply(first, DrawFromDeck())
    assert _hand_values(second) == [(10, True), (11, True)]
    assert to_act(second).kind == "play"


def test_r20_deck_then_discard_pile_is_refused() -> None:
    first = apply(_draw_position(), DrawFromDeck())
    assert TakeDiscard() not in legal_moves(first)
    assert "from the deck too" in illegal(first, TakeDiscard())


def test_r20_discard_pile_then_deck() -> None:
    first = apply(_draw_position(), TakeDiscard())
    assert set(legal_moves(first)) == {DrawFromDeck(), TakeDiscard()}
    second = apply(first, DrawFromDeck())
    assert _hand_values(second) == [(8, False), (10, True)]


def test_r20_discard_pile_twice_takes_the_card_under_the_first() -> None:
    second = play(_draw_position(), [TakeDiscard(), TakeDiscard()]).state
    assert _hand_values(second) == [(8, False), (7, False)]
    assert [second.known[c] for c in second.discard] == [0]


def test_r20_the_first_card_is_seen_by_all_before_the_second_is_chosen() -> None:
    first = apply(_draw_position(), DrawFromDeck())
    for seat in range(3):
        assert [(h.value, h.from_deck) for h in view(first, seat).hand] == [(10, True)]


def test_r20_the_two_cards_are_played_in_the_order_the_player_chooses() -> None:
    both = play(_draw_position(), [DrawFromDeck(), DrawFromDeck()]).state
    a, b = (c for c, _ in both.hand)
    after_b = apply(both, Place(b, Slot(0, 0, 0)))
    assert after_b.hand == [(a, True)] and to_act(after_b).kind == "play"
    done = apply(after_b, Place(a, Slot(0, 0, 1)))
    assert layout(done, 0)[0] == "11 10 ? ?"
    assert to_act(done).seat == 1


def test_r20_one_closed_card_means_one_draw() -> None:
    state = three_seats(["1 2 3 ?4"], deck=["10", "11"], discard=["0", "7"])
    assert state.draw_limit == 1
    for first in (DrawFromDeck(), TakeDiscard()):
        drawn = apply(state, first)
        assert to_act(drawn).kind == "play" and len(drawn.hand) == 1
        assert "not possible now" in illegal(drawn, DrawFromDeck())


# ------------------------------------------------------------------ R21 playing a card


def test_r21_a_card_replaces_an_open_or_a_closed_card() -> None:
    both = play(_draw_position(), [DrawFromDeck(), DrawFromDeck()]).state
    a, b = (c for c, _ in both.hand)
    p = play(both, [Place(a, Slot(0, 0, 1)), Place(b, Slot(0, 0, 3))])
    assert layout(p.state, 0)[0] == "1 10 ? 11"
    assert [p.state.known[c] for c in p.state.discard[-2:]] == [2, 4]


def test_r21_a_deck_card_discarded_then_a_closed_card_turns_up() -> None:
    both = play(_draw_position(), [DrawFromDeck(), DrawFromDeck()]).state
    a = both.hand[0][0]
    discarded = apply(both, Discard(a))
    assert to_act(discarded).kind == "turn_up"
    closed = {Slot(0, r, c) for r in range(4) for c in range(4)} - {Slot(0, 0, 0), Slot(0, 0, 1)}
    assert set(legal_moves(discarded)) == {TurnUp(s) for s in closed}
    turned = apply(discarded, TurnUp(Slot(0, 0, 3)))
    assert layout(turned, 0)[0] == "1 2 ? 4"
    assert to_act(turned).kind == "play"


def test_r21_no_closed_card_left_means_no_turn_up() -> None:
    state = three_seats(["1 2", "3 4"], discard=["0"], hand=[("8", True)])
    done = apply(state, Discard(state.hand[0][0]))
    assert to_act(done).seat == 1


def test_r21_a_discard_pile_card_must_be_placed() -> None:
    both = play(_draw_position(), [TakeDiscard(), TakeDiscard()]).state
    assert not any(isinstance(m, Discard) for m in legal_moves(both))
    for card, _ in both.hand:
        assert "must be placed" in illegal(both, Discard(card))
    mixed = play(_draw_position(), [TakeDiscard(), DrawFromDeck()]).state
    from_pile, from_deck = (c for c, _ in mixed.hand)
    assert Discard(from_deck) in legal_moves(mixed)
    assert Discard(from_pile) not in legal_moves(mixed)


def test_r21_dodging_the_second_card_replaces_the_first() -> None:
    both = play(_draw_position(), [DrawFromDeck(), DrawFromDeck()]).state
    a, b = (c for c, _ in both.hand)
    p = play(both, [Place(a, Slot(0, 1, 1)), Place(b, Slot(0, 1, 1))])
    assert layout(p.state, 0)[1] == "? 11 ? ?"
    assert p.state.discard[-1] == a
    assert not activations(p.effects)


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r21_r22_dodging_an_action_card_defuses_it(value: str) -> None:
    """Place the action card first, then put the second card on it: it is discarded, no action."""
    state = three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=[value, "9"],
                        discard=["0"])
    both = play(state, [DrawFromDeck(), DrawFromDeck()]).state
    action, other = (c for c, _ in both.hand)
    p = play(both, [Place(action, Slot(0, 0, 0)), Place(other, Slot(0, 0, 0))])
    assert p.state.discard[-1] == action
    assert not activations(p.effects)
    assert to_act(p.state).seat == 1 and to_act(p.state).kind == "draw"


# ------------------------------------------------------------------ R22 action cards


def _action_position(value: str, second: str = "9") -> State:
    return three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=[value, second],
                       discard=["0"])


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_discarded_straight_from_the_deck_activates(value: str) -> None:
    both = play(_action_position(value), [DrawFromDeck(), DrawFromDeck()]).state
    action = both.hand[0][0]
    after = apply(both, Discard(action))
    assert Discarded(0, action, True) in after.effects
    assert to_act(after) is not None and to_act(after).kind == ACTION_DECISION[value]


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_the_second_card_activates_too(value: str) -> None:
    both = play(_action_position("9", value), [DrawFromDeck(), DrawFromDeck()]).state
    plain, action = (c for c, _ in both.hand)
    placed = apply(both, Place(plain, Slot(0, 1, 0)))
    after = apply(placed, Discard(action))
    assert Discarded(0, action, True) in after.effects
    assert to_act(after).kind == ACTION_DECISION[value]


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_placing_never_activates(value: str) -> None:
    both = play(_action_position(value), [DrawFromDeck(), DrawFromDeck()]).state
    action, other = (c for c, _ in both.hand)
    p = play(both, [Place(action, Slot(0, 0, 2)), Place(other, Slot(0, 0, 3))])
    assert layout(p.state, 0)[0] == f"1 2 {value} 9"
    assert not activations(p.effects)
    assert to_act(p.state).seat == 1


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_taken_from_the_discard_pile_never_activates(value: str) -> None:
    state = three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["9"],
                        discard=["0", value])
    both = play(state, [TakeDiscard(), DrawFromDeck()]).state
    action, other = (c for c, _ in both.hand)
    assert "must be placed" in illegal(both, Discard(action))
    p = play(both, [Place(action, Slot(0, 0, 0)), Discard(other)])
    assert not activations(p.effects)
    assert to_act(p.state).kind == "turn_up"  # the plain 9's discard, not an action


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_replaced_out_of_the_display_never_activates(value: str) -> None:
    state = three_seats([f"{value} 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["8", "9"],
                        discard=["0"])
    both = play(state, [DrawFromDeck(), DrawFromDeck()]).state
    a, b = (c for c, _ in both.hand)
    placed = apply(both, Place(a, Slot(0, 0, 0)))
    assert placed.known[placed.discard[-1]] == int(value)
    assert to_act(placed).kind == "play"
    p = play(placed, [Place(b, Slot(0, 0, 1))])
    assert not activations(placed.effects + p.effects)


@pytest.mark.parametrize("value", ["-2", "5", "13"])
def test_r22_turned_up_never_activates(value: str) -> None:
    state = three_seats([f"1 2 ?{value} ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"],
                        hand=[("8", True)])
    p = play(state, [Discard(state.hand[0][0]), TurnUp(Slot(0, 0, 2))])
    assert layout(p.state, 0)[0] == f"1 2 {value} ?"
    assert not activations(p.effects)
    assert to_act(p.state).seat == 1 and to_act(p.state).kind == "draw"


@pytest.mark.parametrize("value", ["-2", "5"])
def test_r22_a_peek_with_no_closed_card_does_nothing(value: str) -> None:
    state = three_seats(["1 2", "3 4"], discard=["0"], hand=[(value, True)])
    after = apply(state, Discard(state.hand[0][0]))
    assert to_act(after).seat == 1
    assert not of_type(after.effects, Peeked)


def test_r22_a_thirteen_with_no_open_card_does_nothing() -> None:
    state = three_seats(["?1 ?2", "?3 ?6"], deck=["9"], discard=["0"], hand=[("13", True)])
    cells = list(state.grids[0].cells)
    after = apply(state, Discard(state.hand[0][0]))
    assert to_act(after).kind != "replace_open"
    assert not of_type(after.effects, Closed)
    assert after.grids[0].cells == cells


def test_r22_r25_a_joker_has_no_action() -> None:
    state = three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"],
                        hand=[("J", True)])
    after = apply(state, Discard(state.hand[0][0]))
    assert not activations(after.effects)
    assert to_act(after).kind == "turn_up"


# ------------------------------------------------------------------ R23 peeks


def test_r23_minus_two_peeks_a_row_seen_by_the_peeker_only() -> None:
    state = three_seats(["1 ?5 2 ?7", "?8 ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["-2", "9", "10"],
                        discard=["0"])
    both = play(state, [DrawFromDeck(), DrawFromDeck()]).state
    minus_two, nine = (c for c, _ in both.hand)
    peeking = apply(both, Discard(minus_two))
    lines = set(legal_moves(peeking))
    assert lines == {PeekLine("row", r) for r in range(4)} | {PeekLine("col", c) for c in range(4)}
    peeked = apply(peeking, PeekLine("row", 0))
    five, seven = peeked.grids[0].at(0, 1), peeked.grids[0].at(0, 3)
    assert Peeked(0, (five, seven), (5, 7)) in peeked.effects
    assert_secret(peeked, Slot(0, 0, 1), 5, peeker=0)
    assert_secret(peeked, Slot(0, 0, 3), 7, peeker=0)
    assert peeked.known[five] is None and peeked.known[seven] is None
    # R23: after the peek one closed card is turned up, then the second card is played.
    assert to_act(peeked).kind == "turn_up"
    p = play(peeked, [TurnUp(Slot(0, 1, 0)), Place(nine, Slot(0, 1, 1)), DrawFromDeck()])
    assert to_act(p.state).seat == 1
    # What seat 0 saw stays its own, turns later.
    assert_secret(p.state, Slot(0, 0, 1), 5, peeker=0)
    assert_secret(p.state, Slot(0, 0, 3), 7, peeker=0)


def test_r23_minus_two_peeks_a_column() -> None:
    state = three_seats(["1 ? ? ?", "?6 ? ? ?", "2 ? ? ?", "?-1 ? ? ?"], discard=["0"],
                        hand=[("-2", True)])
    peeking = apply(state, Discard(state.hand[0][0]))
    peeked = apply(peeking, PeekLine("col", 0))
    e = of_type(peeked.effects, Peeked)[0]
    assert e.values == (6, -1)
    assert_secret(peeked, Slot(0, 1, 0), 6, peeker=0)
    assert_secret(peeked, Slot(0, 3, 0), -1, peeker=0)


def test_r23_a_line_without_closed_card_cannot_be_peeked() -> None:
    state = three_seats(["1 2 3", "?6 ? ?"], discard=["0"], hand=[("-2", True)])
    peeking = apply(state, Discard(state.hand[0][0]))
    assert PeekLine("row", 0) not in legal_moves(peeking)
    assert "no closed card" in illegal(peeking, PeekLine("row", 0))


def test_r23_five_peeks_one_closed_card_seen_by_the_peeker_only() -> None:
    state = three_seats(["1 ?5 2 ?7", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"],
                        hand=[("5", True)])
    peeking = apply(state, Discard(state.hand[0][0]))
    assert to_act(peeking).kind == "peek_card"
    assert PeekCard(Slot(0, 0, 0)) not in legal_moves(peeking)
    assert "not a closed card" in illegal(peeking, PeekCard(Slot(0, 0, 0)))
    peeked = apply(peeking, PeekCard(Slot(0, 0, 3)))
    assert_secret(peeked, Slot(0, 0, 3), 7, peeker=0)
    # Only the one card: its neighbour stays unknown even to the peeker.
    assert view(peeked, 0).card_at(Slot(0, 0, 1)).value is None
    assert to_act(peeked).kind == "turn_up"


def test_r23_a_peek_of_another_seat_stays_hidden_from_the_others() -> None:
    """Seat 1 peeks on its turn; when seat 2 acts next it still sees the card closed and unknown."""
    state = build(GRANDE, [closed_display(), ["?9 ? ? ?", "? ? ? ?", "? ? ? ?", "? ? ? ?"],
                           closed_display()], active=1, deck=["8", "1", "2"], discard=["0"],
                  hand=[("5", True)])
    p = play(state, [Discard(state.hand[0][0]), PeekCard(Slot(1, 0, 0)), TurnUp(Slot(1, 1, 1))])
    assert to_act(p.state).seat == 2
    assert_secret(p.state, Slot(1, 0, 0), 9, peeker=1)


# ------------------------------------------------------------------ R24 the 13


def test_r24_thirteen_replaces_an_open_card_with_the_decks_top_unseen() -> None:
    state = three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["13", "9", "6"],
                        discard=["0"])
    both = play(state, [DrawFromDeck(), DrawFromDeck()]).state
    thirteen, nine = (c for c, _ in both.hand)
    replacing = apply(both, Discard(thirteen))
    assert set(legal_moves(replacing)) == {ReplaceOpen(Slot(0, 0, 0)), ReplaceOpen(Slot(0, 0, 1))}
    assert "not a face-up card" in illegal(replacing, ReplaceOpen(Slot(0, 0, 2)))
    two = replacing.grids[0].at(0, 1)
    top = replacing.deck[-1]
    done = apply(replacing, ReplaceOpen(Slot(0, 0, 1)))
    assert done.discard[-1] == two and view(done, 1).discard_top.value == 2
    assert done.grids[0].at(0, 1) == top
    assert Closed(0, top, Slot(0, 0, 1)) in done.effects
    # R4's exception: the new card stays closed and nobody, not even seat 0, knows it.
    assert done.known[top] is None
    assert not any(isinstance(e, Revealed) and e.card == top for e in done.effects)
    for seat in range(3):
        cv = view(done, seat).card_at(Slot(0, 0, 1))
        assert cv is not None and not cv.up and cv.value is None
    # No turn-up after the 13: the second card is played next.
    assert to_act(done).kind == "play" and done.hand == [(nine, True)]


def test_r24_no_turn_up_after_the_thirteen() -> None:
    state = three_seats(["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["6"],
                        discard=["0"], hand=[("13", True)])
    p = play(state, [Discard(state.hand[0][0]), ReplaceOpen(Slot(0, 0, 0))])
    assert to_act(p.state).seat == 1 and to_act(p.state).kind == "draw"
    assert not any(kind == "turn_up" for _, kind in p.decisions)


def _thirteen_then_the_other_card(rs: GrandeRuleset) -> State:
    """Seat 0 draws a 13 and a 9 from the deck, lets the 13 replace its face-up 1 (the
    deck's 6 goes there, closed) and discards the 9: the turn's other card."""
    state = build(rs, [["1 2 ?3 ?4", "? ? ? ?", "? ? ? ?", "? ? ? ?"], closed_display(), closed_display()],
                  deck=["13", "9", "6"],
                  discard=["0"])
    both = play(state, [DrawFromDeck(), DrawFromDeck()]).state
    thirteen, nine = (c for c, _ in both.hand)
    assert both.known[thirteen] == 13 and both.known[nine] == 9
    done = play(both, [Discard(thirteen), ReplaceOpen(Slot(0, 0, 0))]).state
    assert to_act(done).kind == "play"
    return apply(done, Discard(nine))


def test_r24_no_turn_up_for_the_rest_of_the_turn_after_the_thirteen() -> None:
    """Revised R24: discarding the turn's other card after the 13 asks for no turn-up, so the
    13's new card (and every other closed card) stays closed until the next turn."""
    after = _thirteen_then_the_other_card(GRANDE)
    assert to_act(after).seat == 1 and to_act(after).kind == "draw"
    assert layout(after, 0)[0].startswith("? 2 ? ?")
    # The next turn of seat 0 may turn cards up again (the flag lasts one turn).
    assert not after.sealed


def test_r24_a_ruleset_from_before_the_revision_keeps_the_turn_up() -> None:
    """A log written before `turn_up_after_13` existed has no such field: it reads as the old
    rule (a turn-up follows the other card, even of the 13's card), and hashes as before."""
    old_map = {k: v for k, v in GRANDE.to_dict().items() if k != "turn_up_after_13"}
    old = ruleset_from_dict(old_map)
    assert old.turn_up_after_13 is True
    assert old.to_dict() == old_map  # rebuilt byte for byte, and hashed as before
    after = _thirteen_then_the_other_card(old)
    assert to_act(after).seat == 0 and to_act(after).kind == "turn_up"
    assert TurnUp(Slot(0, 0, 0)) in legal_moves(after)  # the 13's own card, at once
    # Today's default writes the field, and reads back as written.
    assert GRANDE.to_dict()["turn_up_after_13"] is False
    assert ruleset_from_dict(GRANDE.to_dict()) == GRANDE


def test_r24_thirteen_gives_back_a_second_draw() -> None:
    """One closed card: one draw. The 13 puts a closed card back: the next turn has two draws."""
    state = build(GRANDE, [["1 2 ?3"], ["? ? ?", "? ? ?"]],
                  deck=["13", "7", "8", "9", "10", "11"], discard=["0"])
    assert state.draw_limit == 1
    drawn = apply(state, DrawFromDeck())
    assert to_act(drawn).kind == "play"
    p = play(drawn, [Discard(drawn.hand[0][0]), ReplaceOpen(Slot(0, 0, 0))])
    assert layout(p.state, 0) == ["? 2 ?"]
    assert to_act(p.state).seat == 1
    q = play(p.state, [DrawFromDeck(), DrawFromDeck()])
    a, b = (c for c, _ in q.state.hand)
    q = play(q.state, [Place(a, Slot(1, 0, 0)), Place(b, Slot(1, 0, 1))])
    assert to_act(q.state).seat == 0
    again = apply(q.state, DrawFromDeck())
    assert to_act(again).kind == "draw_second"


# ------------------------------------------------------------------ R25 Jokers


J = JOKER


@pytest.mark.parametrize("line,runs", [
    ([6, J, 6, 1], [(0, 3)]),  # between equal values
    ([5, 5, J, 6], [(0, 3)]),  # between different values: the longer stretch (left)
    ([5, J, 6, 6], [(1, 4)]),  # ... (right)
    ([5, 5, J, 6, 6], [(0, 3)]),  # equal lengths: the left one
    ([5, J, J, 6], [(0, 3)]),  # equal with every Joker counted: the left one takes both
    ([5, J, 6], []),  # each stretch only two long
    ([5, J, 6, J, 7], [(1, 4)]),  # the middle value can take both blocks
    ([J, J, J], [(0, 3)]),  # Jokers alone
    ([J, J, J, 7], [(0, 4)]),  # Jokers next to a value take it
    ([J, J, None, 7], []),  # a closed card or a hole breaks the line (R5)
    ([3, 3, 3, None, J, J, J], [(0, 3), (4, 7)]),
    ([J, 5, 5, J, J, 6, 6, 6], [(0, 5), (5, 8)]),
])
def test_r25_joker_stretches(line: list[int | None], runs: list[tuple[int, int]]) -> None:
    assert runs_in_line(line) == runs


def test_r25_joker_joins_the_longer_stretch_on_the_right() -> None:
    state = three_seats(["5 ? 6 6", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"],
                        hand=[("J", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 1)))
    assert layout(after, 0)[0] == "5 . . ."
    assert cleared_cards(after.effects) == 3


def test_r25_equal_stretches_in_a_column_the_upper_one_wins() -> None:
    state = three_seats(["5 ? ? ?", "J ? ? ?", "? ? ? ?", "6 ? ? ?"], discard=["0"],
                        hand=[("J", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 2, 0)))
    assert [row.split()[0] for row in layout(after, 0)] == [".", ".", ".", "6"]
    assert cleared_cards(after.effects) == 3


# ------------------------------------------------------------------ R26 Swap


def test_r26_swap_keeps_faces_then_one_closed_card_turns_up() -> None:
    state = three_seats(["7 ?9 1 2", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"])
    nine = state.grids[0].at(0, 1)
    swapped = apply(state, Swap(Slot(0, 0, 0), Slot(0, 0, 1)))
    assert layout(swapped, 0)[0] == "? 7 1 2"
    assert swapped.grids[0].at(0, 0) == nine
    assert swapped.known[nine] is None
    assert Swapped(0, Slot(0, 0, 0), Slot(0, 0, 1)) in swapped.effects
    for seat in range(3):
        assert view(swapped, seat).card_at(Slot(0, 0, 0)).value is None
    assert to_act(swapped).kind == "turn_up"
    turned = apply(swapped, TurnUp(Slot(0, 1, 1)))
    assert to_act(turned).seat == 1  # a Swap is the whole turn: no draw follows


def test_r26_swap_of_two_closed_cards_reveals_nothing() -> None:
    state = three_seats(["?7 ?9 1 2", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"])
    swapped = apply(state, Swap(Slot(0, 0, 0), Slot(0, 0, 1)))
    assert layout(swapped, 0)[0] == "? ? 1 2"
    assert not of_type(swapped.effects, Revealed)


def test_r26_swap_a_joker_into_place_clears_before_the_turn_up() -> None:
    state = three_seats(["6 1 6 J", "? ? ? ?", "? ? ? ?", "? ? ? ?"], discard=["0"])
    swapped = apply(state, Swap(Slot(0, 0, 1), Slot(0, 0, 3)))
    assert layout(swapped, 0)[0] == ". . . 1"
    assert cleared_cards(swapped.effects) == 3
    assert to_act(swapped).kind == "turn_up"


def test_r26_swap_only_instead_of_drawing() -> None:
    state = three_seats(["7 ?9 1 2", "? ? ? ?", "? ? ? ?", "? ? ? ?"], deck=["3", "4"],
                        discard=["0"])
    assert Swap(Slot(0, 0, 0), Slot(0, 0, 1)) in legal_moves(state)
    drawn = apply(state, DrawFromDeck())
    assert not any(isinstance(m, Swap) for m in legal_moves(drawn))
    assert "not possible now" in illegal(drawn, Swap(Slot(0, 0, 0), Slot(0, 0, 1)))


def test_r26_swap_with_no_closed_card_left_ends_the_turn() -> None:
    state = three_seats(["1 2", "3 4"], discard=["0"])
    swapped = apply(state, Swap(Slot(0, 0, 0), Slot(0, 1, 1)))
    assert layout(swapped, 0) == ["4 2", "3 1"]
    assert to_act(swapped).seat == 1


# ------------------------------------------------------------------ R27 collapse and chain reactions


def _place(rows: Sequence[str], card: str, at: tuple[int, int], players: int = 3) -> State:
    width = len(rows[0].split())
    state = build(GRANDE, [list(rows)] + [closed_display(4, width)] * (players - 1),
                  discard=["0"], hand=[(card, False)])
    return apply(state, Place(state.hand[0][0], Slot(0, *at)))


def test_r27_an_emptied_row_goes_and_the_rows_below_move_up() -> None:
    after = _place(["? ? ? ?", "3 4 3 3", "5 ? ? ?", "? ? ? ?"], "3", (1, 1))
    assert layout(after, 0) == ["? ? ? ?", "5 ? ? ?", "? ? ? ?"]
    assert Collapsed(0, (1,), ()) in after.effects
    # Places are numbered in the current layout: the 5 is now at row 1.
    assert after.known[after.grids[0].at(1, 0)] == 5


def test_r27_an_emptied_column_goes_and_the_columns_to_its_right_move_left() -> None:
    after = _place(["? 7 1 ?", "? 7 2 ?", "? ? 3 ?", "? 7 4 ?"], "7", (2, 1))
    assert layout(after, 0) == ["? 1 ?", "? 2 ?", "? 3 ?", "? 4 ?"]
    assert Collapsed(0, (), (1,)) in after.effects
    assert (after.grids[0].rows, after.grids[0].cols) == (4, 3)


def test_r27_a_line_that_still_holds_a_card_stays_with_its_holes() -> None:
    after = _place(["8 ? ? ?", "8 ? ? ?", "? ? ? ?", "2 ? ? ?"], "8", (2, 0))
    assert layout(after, 0) == [". ? ? ?", ". ? ? ?", ". ? ? ?", "2 ? ? ?"]
    assert not of_type(after.effects, Collapsed)


def test_r27_chain_reaction_of_three_steps() -> None:
    """Column 1 clears and goes; the 2s of row 1 meet and clear, the row goes; the 9s of column 0
    meet and clear, the column goes: 10 cards in three steps."""
    after = _place(["9 7 ? ?", "2 7 2 2", "9 7 ? ?", "9 ? ? ?"], "7", (3, 1))
    assert cleared_cards(after.effects) == 4 + 3 + 3
    assert clear_steps(after.effects) == 3
    assert [e.step for e in of_type(after.effects, Cleared)] == [1, 2, 3]
    assert layout(after, 0) == ["? ?", "? ?", "? ?"]


def test_r27_chain_reaction_clears_all_16_cards() -> None:
    after = _place(["2 3 4 5", "7 7 ? 7", "2 3 4 5", "2 3 4 5"], "7", (1, 2))
    assert cleared_cards(after.effects) == 16
    assert clear_steps(after.effects) == 2
    assert layout(after, 0) == []
    assert (after.grids[0].rows, after.grids[0].cols) == (0, 0)
    # R9: an emptied display has no closed card left: seat 0 triggers the round's end.
    assert EndTriggered(0) in after.effects


def test_r27_allegra_never_collapses() -> None:
    rs = ruleset_for("allegra")
    state = build(rs, [["4 4 ? 1", "? ? ? ?", "? ? ? ?"], ["? ? ? 4", "? ? ? ?", "? ? ? ?"],
                       closed_display(3, 4)], discard=["0"], hand=[("4", False)])
    after = apply(state, Place(state.hand[0][0], Slot(0, 0, 2)))
    assert layout(after, 0)[0] == ". . . 1"
    assert not of_type(after.effects, Collapsed)



@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["rounds", "jokers", "joker_value", "turn_up_after_13",
                                        "double_ender", "x"]),
                       st.integers(-3, 120) | st.booleans() | st.text(max_size=3), max_size=4))
def test_r24_any_ruleset_map_reads_back_as_written_or_is_refused_in_one_line(fields: dict) -> None:
    """A ruleset map with or without turn_up_after_13, of any value: either refused with a
    RulesetError, or read into a ruleset whose map reads back to the same ruleset (the field
    left out only at its legacy value, true)."""
    d = {"variant": "grande", **fields}
    try:
        rs = ruleset_from_dict(d)
    except RulesetError as e:
        assert "\n" not in str(e) and str(e)
        return
    again = rs.to_dict()
    assert ruleset_from_dict(again) == rs
    assert ("turn_up_after_13" in again) == (rs.turn_up_after_13 is False)
    assert rs.turn_up_after_13 is fields.get("turn_up_after_13", True)
