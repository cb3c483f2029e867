"""The hint (allegra_lan/bots/hint.py): an offered move, the places it touches, and a reason
that fits one status line and says what greedy's rating sees."""

from __future__ import annotations

import ast
import pathlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import Phase as HypothesisPhase
from hypothesis import strategies as st

from allegra_lan.bots import UnknownBot, make_bot
from allegra_lan.bots.driver import offered_moves
from allegra_lan.bots.hint import HINT_BOT, REASON_MAX, Hint, hint, move_words
from allegra_lan.rules import (
    DrawFromDeck, Move, PeekLine, Place, Slot, Swap, TakeDiscard, apply, new_game, ruleset_for,
    to_act, view,
)
from allegra_lan.rules.position import build
from allegra_lan.rules.rng import Stream

GRANDE = ruleset_for("grande")
ALLEGRA = ruleset_for("allegra")
CLOSED = "? ? ? ?"
DECK = ["?"] * 12
HINT_PY = pathlib.Path(__file__).resolve().parents[1] / "allegra_lan" / "bots" / "hint.py"


def hint_now(state, **kw) -> Hint:  # type: ignore[no-untyped-def]
    d = to_act(state)
    assert d is not None
    return hint(view(state, d.seat), offered_moves(state, [make_bot("greedy", bytes([i]) * 32)
                                                         for i in range(state.players)]), **kw)


def test_hint_bot_is_a_registered_name_and_documented() -> None:
    make_bot(HINT_BOT, b"x" * 32)
    tree = ast.parse(HINT_PY.read_text())
    doc = next(n for i, n in enumerate(tree.body) if isinstance(n, ast.Assign)
               and any(getattr(t, "id", "") == "HINT_BOT" for t in n.targets)
               and isinstance(tree.body[i + 1], ast.Expr))
    follow = tree.body[tree.body.index(doc) + 1]
    assert '"strong"' in follow.value.value  # type: ignore[attr-defined]


def test_hint_module_does_no_io() -> None:
    names = {a.name for n in ast.walk(ast.parse(HINT_PY.read_text()))
             if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
    modules = {n.module for n in ast.walk(ast.parse(HINT_PY.read_text())) if isinstance(n, ast.ImportFrom)}
    assert not names & {"os", "sys", "time", "random", "socket", "pathlib", "asyncio"}
    assert not any(m and m.startswith("allegra_lan.tui") for m in modules)


def test_taking_the_card_that_completes_a_run_says_so_and_shows_where() -> None:
    s = build(GRANDE, [["3 3 ? ?", CLOSED, CLOSED, CLOSED], [CLOSED] * 4], deck=DECK, discard=["3"])
    h = hint_now(s)
    assert h.move == TakeDiscard()
    assert h.cells == (Slot(0, 0, 2),)  # where the 3 would go
    assert h.words == "take the 3 from the discard pile"
    assert h.reason.startswith("clears 3 cards with a run of 3s")


def test_a_high_discard_is_left_and_the_reason_names_the_points() -> None:
    s = build(GRANDE, [["1 2 ? ?", CLOSED, CLOSED, CLOSED], [CLOSED] * 4], deck=DECK, discard=["12"])
    h = hint_now(s)
    assert h.move == DrawFromDeck()
    assert h.cells == ()
    assert h.reason.startswith("expected ") and h.reason.endswith("better than taking the 12")


def test_placing_a_card_names_it_and_its_place() -> None:
    s = build(GRANDE, [["7 7 ? ?", "3 ? ? ?", CLOSED, CLOSED], [CLOSED] * 4], hand=[("7", True)], deck=DECK)
    h = hint_now(s)
    assert h.move == Place(h.move.card, Slot(0, 0, 2))  # type: ignore[union-attr]
    assert h.words == "put the 7 at row 1 col 3"
    assert h.cells == (Slot(0, 0, 2),)
    assert "run of 7s" in h.reason


def test_a_swap_shows_both_cards_and_names_the_run_it_makes() -> None:
    # Late in the round (the other display has two closed cards), where no later card is
    # sure to come for the 12s: the Joker swapped beside them clears a run of 12s. The
    # reason names the run's value, not the 3 the Joker changed places with.
    other = ["1 2 3 4", "4 5 6 1", "2 3 ? ?", "1 2 6 7"]
    s = build(GRANDE, [["12 12 3 ?", "? ? ? J", CLOSED, CLOSED], other], deck=DECK, discard=["8"])
    h = hint_now(s)
    assert h.move == Swap(Slot(0, 0, 2), Slot(0, 1, 3))
    assert set(h.cells) == {Slot(0, 0, 2), Slot(0, 1, 3)}
    assert h.words == "swap row 1 col 3 with row 2 col 4"
    assert h.reason.startswith("clears 3 cards with a run of 12s")


def test_an_allegra_place_in_the_neighbours_column_names_that_seat() -> None:
    s = build(ALLEGRA, [["? 8 8 ?", CLOSED, CLOSED], ["? ? ? 8", CLOSED, CLOSED], [CLOSED] * 3],
              hand=[("8", True)], deck=DECK)
    h = hint_now(s)
    assert isinstance(h.move, Place)
    assert "run of 8s" in h.reason
    assert h.cells == (h.move.at,)


def test_a_peek_at_a_line_shows_the_whole_line() -> None:
    s = build(GRANDE, [["1 2 ? ?", "1 ? ? ?", CLOSED, CLOSED], [CLOSED] * 4], hand=[("-2", True)], deck=DECK)
    from allegra_lan.rules import Discard
    s = apply(s, Discard(s.hand[0][0]))
    h = hint_now(s)
    assert isinstance(h.move, PeekLine)
    assert len(h.cells) == 4
    assert "closed card" in h.reason


def test_the_only_move_says_so() -> None:
    s = build(GRANDE, [["1 2 3 4", "5 6 7 8", "9 10 11 ?", "1 2 3 4"], [CLOSED] * 4], deck=DECK)
    d = to_act(s)
    assert d is not None
    h = hint(view(s, 0), [DrawFromDeck()])
    assert h.move == DrawFromDeck() and h.reason == "the only move here"


def test_an_unknown_bot_name_and_no_moves_are_refused() -> None:
    s = build(GRANDE, [["1 2 ? ?", CLOSED, CLOSED, CLOSED], [CLOSED] * 4], deck=DECK, discard=["12"])
    with pytest.raises(UnknownBot):
        hint_now(s, bot="nobody")
    with pytest.raises(ValueError):
        hint(view(s, 0), [])


def test_a_hint_is_the_same_every_time_and_any_bot_name_works() -> None:
    s = new_game(GRANDE, 4, b"s" * 32)
    assert hint_now(s) == hint_now(s)
    assert hint_now(s, bot="random").move in offered_moves(s, [make_bot("greedy", bytes(32))] * 4)


def test_move_words_for_every_kind_have_no_card_ids() -> None:
    s = build(GRANDE, [["7 7 ? ?", "3 ? ? ?", CLOSED, CLOSED], [CLOSED] * 4], hand=[("7", True)], deck=DECK)
    for m in offered_moves(s, [make_bot("greedy", bytes(32))] * 2):
        assert "#" not in move_words(view(s, 0), m)


# ---------------------------------------------------------------- the property


HINT_SETTINGS = settings(
    derandomize=True, database=None, max_examples=12, deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[HypothesisPhase.explicit, HypothesisPhase.reuse, HypothesisPhase.generate],
)


@HINT_SETTINGS
@given(variant=st.sampled_from(["grande", "allegra"]), players=st.integers(2, 5),
       seed=st.binary(min_size=32, max_size=32), moves=st.integers(0, 250),
       hint_bot=st.sampled_from(["greedy", "random"]))
def test_the_hint_is_offered_and_its_reason_fits_a_line(
        variant: str, players: int, seed: bytes, moves: int, hint_bot: str) -> None:
    """Over positions of both variants reached by bots (greedy seats, random choices mixed in):
    the hint's move is one of the offered moves, its places are places of the table, and its
    reason is one line of at most REASON_MAX characters; the same position, the same hint."""
    state = new_game(ruleset_for(variant), players, seed)
    bots = [make_bot("greedy", bytes([i]) * 32) for i in range(players)]
    stream = Stream(seed, "test-hint")
    checked = 0
    for i in range(moves + 1):
        d = to_act(state)
        if d is None:
            break
        offered: list[Move] = offered_moves(state, bots)
        if i % 7 == 0 or i == moves:
            v = view(state, d.seat)
            h = hint(v, offered, bot=hint_bot)
            assert h.move in offered
            assert "\n" not in h.reason and "\n" not in h.words
            assert 0 < len(h.reason) <= REASON_MAX
            for slot in h.cells:
                v.card_at(slot)  # an IndexError here: a place that is not on the table
            assert hint(v, offered, bot=hint_bot) == h
            checked += 1
        move = bots[d.seat].choose(view(state, d.seat), offered) if stream.below(4) else \
            offered[stream.below(len(offered))]
        state = apply(state, move)
    assert checked >= 1
