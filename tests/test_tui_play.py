"""`allegra play` headless: a whole game against bots played by keystrokes only.

The Application runs for real on asyncio with prompt_toolkit's pipe input and
a DummyOutput of 80x24; the test presses keys as a person would, choosing
them from what the screen says (the footer), and asserts on the screen text.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

from prompt_toolkit.input import create_pipe_input

from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import read_replay
from allegra_lan.rules import (
    Discard, DrawFromDeck, Exchange, PeekCard, PeekLine, Place, ReplaceOpen, Swap,
    TakeDiscard, TurnUp, view,
)
from allegra_lan.rules.engine import peeked_value
from allegra_lan.tui.app import Pace, PlayClient, make_application
from allegra_lan.tui.play import PlayArgs, start_game
from allegra_lan.tui.screen import UiState, screen_text

from helpers import KeySession, Screen24, choose, press_offered

ROOT = Path(__file__).resolve().parents[1]
ME = Identity.from_seed(b"test-tui-play")

# What each footer label stands for: the move kinds that make it legal.
LABELS = {
    "turn up": {TurnUp}, "draw from deck": {DrawFromDeck}, "take discard": {TakeDiscard},
    "swap two cards": {Swap}, "swap with this": {Swap}, "place here": {Place},
    "place the given card": {Place}, "discard it": {Discard}, "discard the deck card": {Discard},
    "peek at this row": {PeekLine}, "peek at this column": {PeekLine},
    "peek at this card": {PeekCard}, "replace this open card": {ReplaceOpen},
    "take this card": {Exchange}, "put it here": {Exchange},
}
ALWAYS = {"move", "help", "rules", "quit", "choose card", "cancel", "choose again", "hint"}


Session = KeySession  # (tests/helpers.py)


def footer_labels(footer: str) -> list[str]:
    """The labels of a footer line like ` d  draw from deck   t  take discard`."""
    parts = [p.strip() for p in footer.split("   ") if p.strip()]
    out = []
    for p in parts:
        key, _, label = p.partition("  ")
        out.append(label.strip() if label else key)
    return out


async def play_session(variant: str, players: int, seed: int, tmp: Path, strategy, pace: Pace | None = None):  # type: ignore[no-untyped-def]
    game, bots, writer, path = start_game(
        PlayArgs(variant=variant, players=players, seed=seed, name="ann"), ME, tmp)
    client = PlayClient(game, bots, 0, writer=writer, pace=pace or Pace(bot=0, knock=None),
                        replay_path=path)
    with create_pipe_input() as inp:
        app = make_application(client, input=inp, output=Screen24())
        task = asyncio.ensure_future(app.run_async())
        s = Session(client, inp)
        await asyncio.wait_for(client.idle.wait(), 30)
        try:
            await strategy(s)
        finally:
            if not task.done():
                s.inp.send_text("\x03\x03")  # Ctrl-C asks, a second one quits  # type: ignore[attr-defined]
            await asyncio.wait_for(task, 30)
    client.close()
    return s, path


async def simple_player(s: Session, limit: int = 6000, knock: str = "n") -> None:
    """Play by keys alone to the game's end (see press_offered)."""
    for _ in range(limit):
        if s.client.finished:
            return
        if await press_offered(s, knock) is None:
            raise AssertionError("no key to press on this screen:\n" + s.screen())
    raise AssertionError("the game did not end")


def test_a_whole_grande_game_by_keystrokes(tmp_path: Path) -> None:
    checked: list[str] = []

    async def player(s: Session) -> None:
        original = s.press

        async def press(key: str) -> str:
            # Before every key: the footer offers exactly the kinds of move the rules allow.
            offered = {type(m) for m in s.client.offered()}
            labels = footer_labels(s.footer())
            for label in labels:
                if label in LABELS:
                    assert LABELS[label] & offered, (label, offered, s.footer())
                elif label not in ALWAYS and not label.startswith("give to"):
                    assert label in ("knock", "pass", "next round", "back to the table"), label
            for kind in offered:
                assert any(kind in LABELS.get(lb, ()) for lb in labels), (kind, s.footer())
            checked.append(s.footer())
            return await original(key)

        s.press = press  # type: ignore[method-assign]
        await simple_player(s)

    s, path = asyncio.run(play_session("grande", 4, 1, tmp_path, player))
    assert s.client.finished
    final = s.screen()
    assert "Game over:" in final and "wins with" in final or "share the win" in final
    assert f"replay: {path.name} in" in final
    assert len(checked) > 100
    # Every round's end was shown: all cards up, scores, totals, a bar per round.
    round_ends = [t for t in s.screens if "is over" in t.split("\n")[0]]
    assert len(round_ends) == 2 and "round 1" in round_ends[1] and "round 2" in round_ends[1]
    assert any("doubled to" in t for t in s.screens + [final])
    # The replay is complete, signed and verifies with the real command.
    replay = read_replay(path)
    assert replay.finished
    r = subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "verify", str(path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_refused_actions_say_why(tmp_path: Path) -> None:
    async def player(s: Session) -> None:
        text = await s.press("d")  # it is the start of the round: turn up a card first
        assert "First turn up a card to start the round." in text or "Wait: it is" in text, text
        while "turn up" not in s.footer():
            await s.press("n")
        await s.press("\r")  # turns up the card under the cursor
        while "turn up" not in s.footer():
            await s.press("n")
        text = await s.press("\r")  # the same card again: it is face up now
        line = [ln for ln in text.split("\n") if "Not this card" in ln]
        assert line and "Not this card: choose a closed card of your display." in line[0], text
        assert "Slot(" not in text and "seat 0" not in text
        assert "d  draw from deck" not in s.footer()
        text = await s.press("?")
        assert "Keys" in text and "s               instead of drawing: swap two cards" in text
        text = await s.press("x")  # any key goes back to the table
        assert "to act: you" in text.split("\n")[0]
        await s.press("q")
        assert "Quit this game? y quits" in s.screen()
        await s.press("y")

    s, path = asyncio.run(play_session("grande", 3, 5, tmp_path, player))
    assert s.client.quit and not s.client.finished
    assert read_replay(path).tags["Result"] == "*"


def test_a_peek_is_seen_by_its_peeker_only(tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    async def player(s: Session) -> None:
        tries = 0
        for _ in range(6000):
            f = s.footer()
            if "peek at this card" in f or "peek at this row" in f:
                if "peek at this row" in f:
                    await s.press("r")
                else:
                    await s.press("\r")
                if s.client.refused:
                    tries += 1
                    await s.press("l" if tries % 5 else "j")
                    continue
                seen["mine"] = s.screen()
                seen["state"] = s.client.game.state
                return
            if "next round" in f:
                await s.press("\r")
            elif "discard it" in f:
                await s.press("x")
            elif "draw from deck" in f:
                await s.press("d")
            elif "enter" in f:
                await s.press("\r")
                if s.client.refused:
                    tries += 1
                    await s.press("l" if tries % 5 else "j")
            else:
                raise AssertionError(s.screen())
        raise AssertionError("no peek in the game")

    asyncio.run(play_session("grande", 3, 2, tmp_path, player))
    mine = str(seen["mine"])
    assert "(n) seen by you alone" in mine
    assert "secretly saw:" in mine
    state = seen["state"]
    peeked = state.peeked[0]  # type: ignore[attr-defined]
    assert peeked
    values = {peeked_value(state, 0, c) for c in peeked}  # type: ignore[arg-type]
    marks = set(re.findall(r"\((-?\d+|J)\)", mine))
    assert marks and {int(m) for m in marks if m != "J"} <= {v for v in values if v is not None}
    # Every other seat's screen of the same moment shows no peeked value at all.
    for seat in (1, 2):
        other = screen_text(view(state, seat), UiState(names=("ann", "b", "c")), 80, 24)  # type: ignore[arg-type]
        assert "seen by you alone" not in other
        assert not re.findall(r"\((-?\d+|J)\)", other), other


def test_allegra_knocks_and_gives(tmp_path: Path) -> None:
    async def player(s: Session) -> None:
        knocked = gave = 0
        for _ in range(4000):
            f = s.footer()
            if " y  knock" in f:
                assert "Knock window open" in s.screen()
                await s.press("y")
                knocked += 1
            elif "give to" in f:
                key = f.split(" give to")[0].split()[-1]
                text = await s.press(key)
                gave += 1
                assert "you gave the" in text
            elif "draw from deck" in f:
                await s.press("d")
            elif "discard it" in f:
                await s.press("x")
            elif "next round" in f:
                await s.press("\r")
            elif "enter" in f:
                await choose(s)
            else:
                raise AssertionError(s.screen())
            if knocked and gave:
                return
        raise AssertionError(f"knocked {knocked}, gave {gave}\n{s.screen()}")

    asyncio.run(play_session("allegra", 4, 1, tmp_path, player))


def test_the_table_shows_a_clear_step_by_step(tmp_path: Path) -> None:
    """With a pace, a clear's cards are highlighted before they go (the message says so)."""
    frames: list[str] = []

    async def player(s: Session) -> None:
        client = s.client
        change = client.on_change

        def spy() -> None:
            if client.frame is not None:
                frames.append(s.screen())
            change()

        client.on_change = spy
        for _ in range(3000):
            if frames:
                return
            f = s.footer()
            if "next round" in f:
                await s.press("\r")
            elif "draw from deck" in f:
                await s.press("d")
            elif "discard it" in f:
                await s.press("x")
            elif "enter" in f:
                await choose(s)
        raise AssertionError("nothing was cleared")

    asyncio.run(play_session("grande", 2, 3, tmp_path, player, Pace(bot=0.001, knock=None)))
    assert any("clear:" in f for f in frames)


def run_play(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(kw.get("home", "/nonexistent")),
               XDG_DATA_HOME=str(kw.get("home", "/nonexistent")))
    return subprocess.run([sys.executable, "-m", "allegra_lan", "play", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)


def test_play_argument_errors_are_one_line(tmp_path: Path) -> None:
    for args, words in (
        (["--players", "9"], "for 2 to 5 players, not 9"),
        (["--variant", "allegra", "--players", "1"], "for 2 to 6 players, not 1"),
        (["--bots", "clever"], "unknown bot 'clever'"),
        (["--bots", "greedy,random"], "--bots names 2 bots for 3 opponents"),
        (["--variant", "poker"], "invalid choice"),
        (["--seed", "x"], "invalid int value"),
        (["--pace", "-1"], "--pace must be 0 to 60"),
        (["--rounds", "0"], "--rounds: must be 1 to 20 rounds"),
        (["--rounds", "two"], "not a whole number of rounds: 'two'"),
        (["--seed", "-3"], "--seed must be 0 or more"),
        ([], "needs a terminal"),
    ):
        r = run_play(args, home=tmp_path)
        assert r.returncode == 2, (args, r.stderr)
        lines = r.stderr.strip().split("\n")
        assert len(lines) == 1 and lines[0].startswith("allegra play: error: "), r.stderr
        assert words in lines[0], (args, lines[0])
        assert r.stdout == ""
    assert not (tmp_path / "allegra-lan" / "games").exists()
