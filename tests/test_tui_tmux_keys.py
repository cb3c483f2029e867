"""The keys as a person meets them, in a real 80x24 terminal (tmux): `?` shows a help whose
keys are the footer's, `r` shows the rules and scrolls, Ctrl-C asks before it quits.

Like test_tui_tmux.py: a private tmux server per test (`tmux -L <unique>`, no user
configuration), data and config directories in tmp_path, keys by `send-keys`, the screen
by `capture-pane -p`; the server is always killed. No network.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable, Iterator

import pytest

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (.ci/run installs it)")


class Pane:
    """One tmux server with one 80x24 pane running one command."""

    def __init__(self, tmp: Path, command: list[str]) -> None:
        assert TMUX is not None
        self.socket = f"allegra-keys-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        conf = tmp / "tmux.conf"
        conf.write_text("set -g remain-on-exit on\nset -g status off\n", "utf-8")
        env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "NO_COLOR")}
        env.update(XDG_DATA_HOME=str(tmp / "data"), XDG_CONFIG_HOME=str(tmp / "config"),
                   HOME=str(tmp), TERM="xterm-256color")
        self.status_file = tmp / f"{self.socket}.status"
        shell = " ".join([
            "env", *(f"{k}={shlex.quote(env[k])}" for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")),
            *map(shlex.quote, command), "; echo $? >", shlex.quote(str(self.status_file)),
        ])
        self._tmux("-f", str(conf), "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", shell,
                   env=env)

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        assert TMUX is not None
        done = subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              timeout=10, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, test: Callable[[str], bool], what: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        while True:
            text = self.screen()
            if test(text):
                return text
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{text}")
            time.sleep(0.05)

    def exit_status(self, timeout: float = 15.0) -> str:
        end = time.monotonic() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().endswith("\n"):
            if time.monotonic() > end:
                raise AssertionError(f"the command is still running; the screen:\n{self.screen()}")
            time.sleep(0.05)
        return f"status {self.status_file.read_text().strip()}"

    def kill(self) -> None:
        assert TMUX is not None
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        tmpdir = Path(os.environ.get("TMUX_TMPDIR") or "/tmp") / f"tmux-{os.getuid()}"
        (tmpdir / self.socket).unlink(missing_ok=True)


@pytest.fixture
def pane_factory(tmp_path: Path) -> Iterator[Callable[[list[str]], Pane]]:
    panes: list[Pane] = []

    def make(command: list[str]) -> Pane:
        p = Pane(tmp_path, command)
        panes.append(p)
        return p

    try:
        yield make
    finally:
        for p in panes:
            p.kill()


def allegra(*args: str) -> list[str]:
    """The `allegra` command of this very interpreter (CI's venv, or the dev one)."""
    return [sys.executable, "-m", "allegra_lan", *args]


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
