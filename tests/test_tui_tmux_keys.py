"""The keys as a person meets them, in a real 80x24 terminal (tmux): `?` shows a help whose
keys are the footer's, `r` shows the rules and scrolls, Ctrl-C asks before it quits.

Like test_tui_tmux.py: a private tmux server per test (`tmux -L <unique>`, no user
configuration), data and config directories in tmp_path, keys by `send-keys`, the screen
by `capture-pane -p`; the server is always killed. No network.
"""

from __future__ import annotations

import re
from typing import Callable

import pytest

from tmux_pane import Pane, allegra, needs_tmux

pytestmark = needs_tmux


def footer_keys(screen: str) -> list[tuple[str, str]]:
    """(key, what it does) of the footer: the last two lines, items three spaces apart."""
    out = []
    for line in screen.rstrip("\n").split("\n")[-2:]:
        for item in re.split(r" {3,}", line.strip()):
            key, sep, does = item.partition("  ")
            if sep:
                out.append((key.strip(), does.strip()))
    return out


@pytest.mark.parametrize("variant,players", [("grande", 4), ("allegra", 3)])
def test_help_lists_the_footers_keys_and_r_shows_the_rules(
        pane_factory: Callable[[list[str]], Pane], variant: str, players: int) -> None:
    pane = pane_factory(allegra("play", "--seed", "7", "--variant", variant,
                                "--players", str(players), "--pace", "0"))
    table = pane.wait_for(lambda s: "to act: you" in s, "the person's first decision")
    footer = footer_keys(table)
    assert ("?", "help") in footer, footer
    pane.keys("?")
    help_screen = pane.wait_for(lambda s: "help" in s.split("\n")[0] and "Keys" in s, "the help")
    for key, does in footer:
        assert re.search(rf"^  {re.escape(key)} +\S", help_screen, re.M), (key, help_screen)
    if variant == "allegra":
        assert "1/2" not in help_screen and re.search(r"^  y +knock", help_screen, re.M)
        assert not re.search(r"^  k +", help_screen, re.M)  # k moves the cursor, nothing else
    else:
        assert "knock" not in help_screen and "1/2" in help_screen
    assert max(map(len, help_screen.splitlines())) <= 80
    assert ("r", "rules") in footer, footer
    pane.keys("x")  # any key closes the help
    pane.wait_for(lambda s: "to act: you" in s, "the table again")
    pane.keys("r")
    title = "ALLEGRA: THE RULES" if variant == "allegra" else "ALLEGRA Grande: THE RULES"
    rules = pane.wait_for(lambda s: title in s, "the rules page")
    assert "lowest total wins" in rules and "more lines below" in rules
    assert ("down", "scroll down") in footer_keys(rules)
    pane.keys("Down")
    pane.wait_for(lambda s: title not in s, "the rules to scroll")
    pane.keys("q")  # any key other than the scroll keys: back to the table
    pane.wait_for(lambda s: "to act: you" in s, "the table after the rules")
    pane.keys("q")
    pane.wait_for(lambda s: "y quits" in s, "the quit question")
    pane.keys("y")
    assert pane.exit_status() == "status 0"


def test_ctrl_c_asks_first_and_a_second_one_quits(pane_factory: Callable[[list[str]], Pane]) -> None:
    pane = pane_factory(allegra("play", "--seed", "7", "--pace", "0"))
    pane.wait_for(lambda s: "to act: you" in s, "the person's first decision")
    pane.keys("C-c")
    asked = pane.wait_for(lambda s: "Quit this game? y quits" in s, "the quit question")
    assert ("y", "quit (the replay is kept)") in footer_keys(asked)
    pane.keys("n")
    pane.wait_for(lambda s: "Quit this game?" not in s and "to act: you" in s, "the game again")
    pane.keys("C-c")
    pane.wait_for(lambda s: "Quit this game? y quits" in s, "the quit question again")
    pane.keys("C-c")
    assert pane.exit_status() == "status 0"
    assert "unfinished game; replay:" in pane.screen()
