"""The table screen as text: sizes, what each seat may see, marks that survive monochrome."""

from __future__ import annotations

from allegra_lan.rules import Slot, full_view, new_game, ruleset_for, to_act, view
from allegra_lan.rules.rng import seed_from_number
from allegra_lan.rules.state import State
from allegra_lan.tui.screen import (
    UiState, area_layout, make_style, needed_size, render, screen_lines, screen_text,
)
from helpers import greedy_play


def played(variant: str, players: int, moves: int, seed: int = 3) -> State:
    return greedy_play(new_game(ruleset_for(variant), players, seed_from_number(seed)), moves, b"s" * 32)


NAMES = ("ann", "bob", "cy", "dee", "eve", "fay")


def test_every_size_gives_exactly_that_many_lines_and_columns() -> None:
    for variant, players in (("grande", 2), ("grande", 4), ("grande", 5), ("allegra", 4), ("allegra", 6)):
        s = played(variant, players, 40)
        ui = UiState(names=NAMES[:players], cursor=Slot(0, 0, 0), moves=("a move",) * 30,
                     keys=(("d", "draw from deck"), ("?", "help")))
        for w, h in ((80, 24), (100, 40), (60, 20), (30, 8)):
            lines = screen_lines(view(s, 0), ui, w, h)
            assert len(lines) == h
            assert all(sum(len(t) for _, t in line) == w for line in lines)
            text = screen_text(view(s, 0), ui, w, h)
            need = needed_size(view(s, 0), ui, w)
            if w < need[0] or h < need[1]:
                # the size named works at this width: it, or the narrowest, and the height
                assert "too small" in text.lower() and f"{max(w, need[0])}x{need[1]}" in text
            else:
                assert "ann (you)" in text and " d  draw from deck" in text
                assert "[" in text  # the cursor is bracketed, colour or not


def test_allegra_marks_the_shared_columns() -> None:
    s = played("allegra", 4, 20)
    v = view(s, 0)
    text = screen_text(v, UiState(names=NAMES[:4]))
    assert "| col 4: also in dee's area" in text
    assert "first column: bob's col 4, in your area" in text
    layout = area_layout(v, 0)
    assert [row[0] for row in layout] == [Slot(1, r, 3) for r in range(3)]


def test_full_view_shows_closed_cards_and_spectators_see_no_peeks() -> None:
    s = played("grande", 3, 60, seed=2)
    all_text = screen_text(full_view(s), UiState(names=NAMES[:3]))
    assert "?" in all_text and any(f"?{n}" in all_text for n in range(-2, 14))
    spectator = screen_text(view(s, -1), UiState(names=NAMES[:3]))
    assert "seen by you alone" not in spectator


def test_round_end_shows_scores_doubling_and_a_bar_per_round() -> None:
    s = played("grande", 4, 100_000)
    assert s.results and to_act(s) is None
    v = view(s, 0)
    text = screen_text(v, UiState(names=NAMES[:4], overlay="game"), 80, 24)
    assert text.startswith("Game over: ")
    assert all(f"round {r + 1}" in text for r in range(len(s.results)))
    last = s.results[-1]
    if last.doubled:
        assert f"doubled to {last.scores[last.ender]}" in text
    else:
        assert "not doubled" in text or "nobody ended" in text


def test_monochrome_has_no_colours() -> None:
    mono = make_style(color=False)
    colour = make_style(color=True)
    assert all("ansi" not in rule and "bg:" not in rule for _, rule in mono.style_rules)
    assert any("ansi" in rule for _, rule in colour.style_rules)
    s = played("grande", 2, 10)
    frags = render(view(s, 0), UiState(cursor=Slot(0, 0, 0)), 80, 24)
    assert all(style == "" or style.startswith("class:") for style, _ in frags)


def test_a_seat_s_last_turn_never_breaks_a_place_over_two_lines() -> None:
    """Issue 11, read in tmux at 80x24: `greedy: row 4 col 5: turned up a 0; row 4 col` /
    `1: turned up a 12`. A place (`row 4 col 1`, `col 3`) is kept on one line at every width."""
    import re

    from allegra_lan.tui.screen import turn_lines

    words = "row 4 col 5: turned up a 0; row 4 col 1: turned up a 12; col 3: cleared 3 cards: 5 5 5"
    for width in range(14, 90):
        for lines in (1, 2, 3):
            _, out = turn_lines("greedy", words, width, lines)
            for a in out[:-1]:  # no line but the last ends inside a place
                assert not re.search(r"\b(row|col)( \d+)?( col)?$", a.rstrip(";")), (width, out)


def test_while_a_fair_deal_deals_the_header_says_so_where_it_names_whose_turn_it_is() -> None:
    s = played("grande", 2, 3)
    v = view(s, 0)
    assert "to act:" in screen_text(v, UiState(names=NAMES[:2]))
    text = screen_text(v, UiState(names=NAMES[:2], dealing=True))
    header = text.splitlines()[0]
    assert "dealing..." in header and "to act" not in header, header
