"""The rules for people (issue 11, found 2): each variant in plain words, checked against the
engine's own rulesets and the points a newcomer must learn."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.rules import ruleset_for
from allegra_lan.rules_text import rules_text


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_each_variant_says_what_a_newcomer_must_know(variant: str) -> None:
    text = _flat(rules_text(variant))
    rs = ruleset_for(variant)
    assert "the lowest total wins" in text.lower()
    assert f"after {rs.rounds} rounds" in text
    assert "three or more equal face-up cards" in text
    assert "ends the round" in text and "one more turn" in text
    assert "does not have the lowest sum" in text and "doubled" in text
    assert "a tie is not lowest" in text
    assert "turns up two" in text


def test_allegra_explains_the_shared_column_and_knocking() -> None:
    text = _flat(rules_text("allegra"))
    assert "rightmost column of your left neighbour" in text
    assert "counts for both players" in text
    assert "KNOCKING" in text and "may knock" in text and "y knocks" in text
    assert "(-1 to 11)" in text
    assert "another player's move in a shared column can turn up your last closed card" in text
    for grande_only in ("Joker", "-2", "13:", "SWAP"):
        assert grande_only not in text


def test_grande_explains_actions_joker_swap_and_chains() -> None:
    text = _flat(rules_text("grande"))
    for word in ("-2: look in secret at every closed card of one row or column",
                 "5: look in secret at one closed card",
                 "13: discard one face-up card of your display",
                 "No card is turned up for the rest of that turn",  # R24 as revised
                 "J, the Joker: matches any value", "SWAP. Instead of drawing",
                 "chain reaction", "drawn from the deck and discarded at once", "(dodging)"):
        assert word in text, word
    assert f"counts {ruleset_for('grande').joker_value}" in text  # type: ignore[union-attr]
    assert "knocking" in text  # as what Grande does not have
    assert "y knocks" not in text


@pytest.mark.parametrize("variant", ["allegra", "grande"])
@pytest.mark.parametrize("width", [40, 60, 78, 120])
def test_lines_fit_the_width_and_examples_are_drawn(variant: str, width: int) -> None:
    text = rules_text(variant, width)
    lines = text.split("\n")
    assert max(len(line) for line in lines) <= width
    assert text.endswith("\n") and "\n\n\n" not in text
    if variant == "allegra":
        assert "7   | 7  7  ?  2" in text  # the drawn area, neighbour's column on the left
    else:
        assert "3  3  3  3  -> all four 3s are cleared" in text


def test_an_unknown_variant_is_one_line() -> None:
    with pytest.raises(ValueError) as e:
        rules_text("poker")
    assert "\n" not in str(e.value) and "poker" in str(e.value)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["allegra", "grande"]), st.integers(min_value=-5, max_value=400))
def test_any_width_gives_text_no_wider_than_asked_or_20(variant: str, width: int) -> None:
    text = rules_text(variant, width)
    assert max(len(line) for line in text.split("\n")) <= max(20, width)
    assert "THE RULES" in " ".join(text.split())
