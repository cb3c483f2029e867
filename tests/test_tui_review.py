"""`allegra replay view --review` (tui/review.py): the bot's verdict on each move of a seat,
from the view that seat had, and the command's argument errors (one line, exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from allegra_lan.bots.hint import REASON_MAX
from allegra_lan.rules import Give, legal_moves
from allegra_lan.tui.replay_view import open_viewer
from allegra_lan.tui.review import Review, offered_then
from allegra_lan.tui.stepper import StepperError, load_replay

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "replays" / "golden"


def test_every_move_of_the_seat_is_judged_from_the_moves_then_offered() -> None:
    stepper = load_replay(GOLDEN / "allegra-3p-knocks.allegra")
    review = Review(stepper, 1)
    review.complete()
    mine = [p for p in stepper.positions if p.index > 0 and p.seat == 1 and p.move is not None]
    assert [p.index for p in mine] == list(review.decisions) and mine
    for p in mine:
        v = review.at(p.index)
        assert v is not None and v.taken == p.move
        before = stepper.positions[p.index - 1].state
        offered = offered_then(before, p)
        assert p.move in offered and v.bot.move in offered
        assert all(not isinstance(m, Give) or m == p.move for m in offered)
        assert set(offered) <= set(legal_moves(before))
        assert len(v.bot.reason) <= REASON_MAX and "\n" not in v.line()
        assert v.agreed == (v.bot.move == p.move)
        if v.agreed:
            assert v.line().startswith("you and the bot: ")
        elif not v.as_good:
            assert v.line().startswith("you: ") and "; bot: " in v.line()
    agreed = sum(1 for v in review.verdicts.values() if v.agreed)
    assert review.summary().startswith(f"bot agreed {agreed} of {len(mine)}")


def test_the_same_bot_agrees_with_itself_where_the_rating_can_tell() -> None:
    """The golden games' greedy seats: the reviewing greedy bot makes their move, or one its
    rating finds as good (ties are broken by each bot's own seed)."""
    stepper = load_replay(GOLDEN / "grande-2p.allegra")
    seat = next(i for i, n in enumerate(stepper.names) if n.startswith("greedy"))
    review = Review(stepper, seat, "greedy")
    review.complete()
    verdicts = list(review.verdicts.values())
    assert verdicts and all(v.agreed or v.as_good for v in verdicts), [
        v.line() for v in verdicts if not (v.agreed or v.as_good)]
    # Greedy's reasons are told in greedy's own rating, its move rated in full: a reviewing
    # bot's move is never one "the rating would never make" (once told as "inf points").
    assert not any("inf" in v.line() for v in verdicts)


def test_the_viewer_shows_the_verdict_and_n_finds_a_difference() -> None:
    stepper_file = GOLDEN / "grande-2p.allegra"
    viewer = open_viewer(str(stepper_file), 1, False, review=True)
    assert viewer.review is not None
    assert "bot agreed 0 of 0" in viewer.text() and viewer.review.summary().endswith(" to judge)")
    viewer.review.complete()
    viewer.press("n")
    screen = viewer.text()
    assert "you: " in screen and "bot: " in screen and "bot agreed" in screen
    here = viewer.stepper.index
    viewer.press("p")
    assert viewer.stepper.index <= here
    viewer.stepper.index = viewer.stepper.last
    viewer.press("n")
    assert "no later move" in viewer.text()


@pytest.mark.parametrize("args, words", [
    (["--review", "--all"], "--review looks at one seat's decisions"),
    (["--bot", "greedy"], "--bot names the reviewing bot: it needs --review"),
    (["--review", "--bot", "nobody"], "unknown bot 'nobody'"),
    (["--review", "--seat", "7"], "--seat 7: the game has seats 0 to 1"),
])
def test_bad_review_arguments_are_one_line_and_exit_2(args: list[str], words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "view",
                           str(GOLDEN / "grande-2p.allegra"), *args],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in done.stderr, done.stderr


def test_open_viewer_refuses_review_with_all() -> None:
    with pytest.raises(StepperError):
        open_viewer(str(GOLDEN / "grande-2p.allegra"), None, True, review=True)
