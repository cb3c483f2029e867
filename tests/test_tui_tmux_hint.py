"""The hint key and the replay review in a real 80x24 terminal (tmux), as a person sees them.

`allegra play`: `a` (in the help, not the footer) draws the bot's move on the table (`<?>` marks the place) with its reason
on the status line; esc, and any move, clear it. `allegra replay view --review`: the bot's
verdict on each of the seat's moves, its tally, and `n` to the next move where it differed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from tmux_pane import Pane, allegra, needs_tmux

ROOT = Path(__file__).resolve().parents[1]
pytestmark = needs_tmux


def fits(screen: str) -> bool:
    lines = screen.splitlines()
    return len(lines) <= 24 and max(map(len, lines)) <= 80 and "Traceback" not in screen


def test_the_hint_key_in_a_real_terminal(pane_factory: Callable[[list[str]], Pane]) -> None:
    pane = pane_factory(allegra("play", "--seed", "1", "--pace", "0"))
    table = pane.wait_for(lambda s: "to act: you" in s, "the person's first decision")
    assert "Hint:" not in table
    pane.keys("?")
    helped = pane.wait_for(lambda s: "what the bot would do now" in s, "the help's hint key")
    assert fits(helped)
    pane.keys("x")
    pane.wait_for(lambda s: "to act: you" in s, "the table again")
    pane.keys("a")
    shown = pane.wait_for(lambda s: "Hint: turn up row" in s, "the hint")
    assert fits(shown)
    assert "<?>" in shown  # the card the bot would turn up, marked like a choice
    pane.keys("Escape")
    cleared = pane.wait_for(lambda s: "Hint:" not in s, "esc to clear the hint")
    assert "<?>" not in cleared and "Your turn" in cleared
    pane.keys("a")
    pane.wait_for(lambda s: "Hint: turn up row" in s, "the hint again")
    pane.keys("Enter")  # a move clears it
    pane.wait_for(lambda s: "Hint:" not in s and "<?>" not in s, "the move to clear the hint")
    pane.keys("q")
    pane.wait_for(lambda s: "y quits" in s, "the quit question")
    pane.keys("y")
    assert pane.exit_status() == "status 0"


def test_the_replay_review_in_a_real_terminal(pane_factory: Callable[[list[str]], Pane]) -> None:
    path = ROOT / "replays" / "golden" / "grande-2p.allegra"
    pane = pane_factory(allegra("replay", "view", str(path), "--review", "--seat", "1"))
    # ("(12 to judge)" may wrap in the status pane: look for the word alone)
    start = pane.wait_for(lambda s: "bot agreed" in s and "judge" not in s, "every verdict")
    assert fits(start) and "n p  next, previous differing move" in start
    pane.keys("n")
    differs = pane.wait_for(lambda s: "you: " in s and "; bot: " in s, "a move the bot made otherwise")
    assert fits(differs)
    pane.keys("Right")
    pane.wait_for(lambda s: s != differs, "a step on")
    pane.keys("?")
    helped = pane.wait_for(lambda s: "Review (--review)" in s, "the help's review keys")
    assert fits(helped)
    pane.keys("x", "q")
    assert pane.exit_status() == "status 0"
