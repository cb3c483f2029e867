"""The network client in a real terminal (issue 11, found 7): two terminals of one person,
profiles, leaving and coming back, as a person meets them.

Each pane is its own tmux server on a private socket, 80x24, running `allegra` of this
interpreter with the test's own XDG homes (two panes of one test share them: the same
person, the same key). Everything binds to 127.0.0.1; the bot peers are real
`allegra join --bot` subprocesses. Without tmux these tests skip and say so.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from pathlib import Path
from typing import Callable, Iterator

import pytest

from net_helpers import start_allegra, unique_table
from tmux_pane import Pane, allegra, needs_tmux

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
pytestmark = needs_tmux


@pytest.fixture
def panes(tmp_path: Path) -> Iterator[Callable[[list[str]], Pane]]:
    """Panes that read a long printed line whole, and wait longer (real peers start up)."""
    made: list[Pane] = []

    def make(command: list[str]) -> Pane:
        p = Pane(tmp_path, command, join=True, timeout=60.0)
        made.append(p)
        return p

    try:
        yield make
    finally:
        for p in made:
            p.kill()


def lines(screen: str) -> list[str]:
    return [line.rstrip() for line in screen.splitlines()]


def run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    env.pop("ALLEGRA_PROFILE", None)
    return subprocess.run(allegra(*args), cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


def moves_pane(screen: str) -> list[str]:
    """The lines of the "Last moves" pane: what stands below its title, in its column."""
    rows = screen.splitlines()
    at = next(i for i, row in enumerate(rows) if "Last moves" in row)
    col = rows[at].index("Last moves")
    return [row[col:].strip() for row in rows[at + 1:] if row[col:].strip()]


SAME_KEY = "refused: your key already sits at this table; --profile NAME gives another"


def test_a_second_terminal_of_one_person_is_told_why_and_a_profile_gives_it_a_seat(
        panes: Callable[[list[str]], Pane], tmp_path: Path) -> None:
    table = unique_table("twice")
    host = panes(allegra("host", "--interface", LOOPBACK, "--players", "2", "--table", table,
                         "--name", "ann"))
    host.wait_for(lambda s: "seat 1  (free)" in s, "the host's table to open")
    # The same person, the same key, a second terminal: refused, back to the list, one line.
    again = panes(allegra("join", table, "--interface", LOOPBACK, "--name", "ann2"))
    seen = again.wait_for(lambda s: SAME_KEY in s, "the reason of the refusal")
    assert SAME_KEY in lines(seen)  # whole, on one line of 80
    assert "tables open now" in seen  # the list again, not a room stuck at "connecting"
    assert "connecting" not in seen
    host.wait_for(lambda s: "refused your key from a second terminal: join there with --profile NAME"
                  in lines(s), "the host's note of it")
    again.keys("q")
    assert again.exit_status() == "status 1"
    assert SAME_KEY in lines(again.history())  # said again once the screen is gone
    # Another profile is another key, kept in the data directory, and gets the seat.
    mine, other = run(tmp_path, "id"), run(tmp_path, "id", "--profile", "bob", "-v")
    assert mine.returncode == 0 and other.returncode == 0, other.stderr
    assert mine.stdout.split()[0] != other.stdout.split()[0]
    assert (tmp_path / "data" / "allegra-lan" / "profiles" / "bob" / "identity.key").is_file()
    assert run(tmp_path, "id", "--profile", "bob").stdout == other.stdout.splitlines()[0] + "\n"
    bob = panes(allegra("join", table, "--interface", LOOPBACK, "--name", "bob", "--profile", "bob"))
    room = bob.wait_for(lambda s: re.search(r"seat 1  bob\s+you\s", s) is not None, "bob's seat")
    assert f"host {mine.stdout.split()[0]}" in room
    host.wait_for(lambda s: re.search(r"seat 1  bob ", s) is not None, "bob at the host's table")
    for p in (bob, host):
        p.keys("q")
    assert bob.exit_status() == "status 0" and host.exit_status() == "status 0"


def test_a_bad_profile_name_is_one_line_and_status_2(tmp_path: Path) -> None:
    done = run(tmp_path, "id", "--profile", "../x")
    assert done.returncode == 2
    assert done.stderr.startswith("allegra id: error: argument --profile: not a profile name: '../x'")
    assert done.stderr.count("\n") == 1
    env_named = subprocess.run(allegra("id"), cwd=ROOT, capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "c"),
                                        XDG_DATA_HOME=str(tmp_path / "d"), ALLEGRA_PROFILE="a/b"))
    assert env_named.returncode == 2 and env_named.stderr.count("\n") == 1
    assert "not a profile name: 'a/b'" in env_named.stderr


def test_leaving_prints_the_resume_command_and_resume_shows_the_last_moves(
        panes: Callable[[list[str]], Pane], tmp_path: Path) -> None:
    """Host in the client, a bot peer takes the other seat; a few moves by keys; leave.
    The exact command printed goes on with the game, its "Last moves" already filled."""
    table = unique_table("comeback")
    host = panes(allegra("host", "--interface", LOOPBACK, "--players", "2", "--table", table,
                         "--name", "cy", "--rounds", "1", "--takeover-after", "0"))
    host.wait_for(lambda s: "seat 1  (free)" in s, "the table to open")
    bot = start_allegra(tmp_path / "bothome", "join", table, "--interface", LOOPBACK, "--bot", "greedy",
                        "--pace", "0.2")
    try:
        host.wait_for(lambda s: "bot (greedy)" in s, "the bot peer to sit down")
        host.keys("r")
        # Our turn, not the bot's first turn-up (whose header says "turn up" too).
        host.wait_for(lambda s: "to act: you (turn up" in s and "Last moves" in s, "our first turn-up")
        host.keys("Enter")
        played = host.wait_for(lambda s: "your row 1 col 1: turned up" in s, "our move in Last moves")
        host.keys("q")
        host.wait_for(lambda s: "y quits" in s or "quit" in s.lower(), "the quit question")
        host.keys("y")
        assert host.exit_status() == "status 0"
        said = host.history()
        found = re.search(r"^to go on with this game: (allegra resume .+)$", said, re.M)
        assert found, said
        words = shlex.split(found.group(1))
        (replay,) = (tmp_path / "data" / "allegra-lan" / "games").glob("*.allegra")
        assert words == ["allegra", "resume", str(replay), "--interface", LOOPBACK]
        assert f"replay: {replay}" in said
        # The very command (this interpreter's allegra), in a new terminal of the same person.
        back = panes(allegra(*words[1:]))
        screen = back.wait_for(lambda s: "your row 1 col 1: turned up" in s, "the moves again")
        assert moves_pane(played)[:3] == moves_pane(screen)[:3], (played, screen)
        back.keys("q")
        back.wait_for(lambda s: "y quits" in s or "quit" in s.lower(), "the quit question")
        back.keys("y")
        assert back.exit_status() == "status 0"
    finally:
        if bot.poll() is None:
            os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(timeout=10)
