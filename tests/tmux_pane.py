"""A real terminal for tests: one private tmux server with one 80x24 pane running a command.

Shared by every tmux test (a test module must not import another: test_suite_shape.py;
the `pane_factory` fixture comes through conftest.py). Each test starts its own tmux server on a
private socket (`tmux -L <unique>`, no user configuration), runs the command with its
data and config directories in tmp_path, types with `send-keys`, reads the screen with
`capture-pane -p`, and always kills its server. Nothing here uses the network.
"""

from __future__ import annotations

import os
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
needs_tmux = pytest.mark.skipif(TMUX is None, reason="tmux is not installed (.ci/run installs it)")


class Pane:
    """One tmux server with one 80x24 pane running one command."""

    def __init__(self, tmp: Path, command: list[str], *, join: bool = False,
                 timeout: float = 30.0) -> None:
        """`join`: read wrapped lines as one (a long line a command printed after the client
        left); `timeout`: how long `wait_for` waits unless told."""
        assert TMUX is not None
        self.join, self.timeout = join, timeout
        self.socket = f"allegra-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        conf = tmp / f"{self.socket}.conf"
        conf.write_text("set -g remain-on-exit on\nset -g status off\n", "utf-8")
        env = {k: v for k, v in os.environ.items()
               if k not in ("TMUX", "TMUX_PANE", "NO_COLOR", "ALLEGRA_PROFILE")}
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
        return self._tmux("capture-pane", "-p", *(["-J"] if self.join else []), "-t", "t")

    def history(self) -> str:
        """The screen and what scrolled off it (a line printed after the client left)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "t")

    def resize(self, width: int, height: int) -> None:
        """Make the pane `width` x `height` (the client redraws for its new size)."""
        self._tmux("resize-window", "-t", "t", "-x", str(width), "-y", str(height))

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def exit_status(self, timeout: float = 30.0) -> str:
        """Wait for the command to end and give its exit status. The shell that runs it writes
        the status to a file: tmux's own pane_dead_status is sometimes never filled in when
        the terminal closes before the process is reaped."""
        end = time.monotonic() + timeout
        while not self.status_file.exists() or not self.status_file.read_text().endswith("\n"):
            if time.monotonic() > end:
                raise AssertionError(f"the command is still running; the screen:\n{self.screen()}")
            time.sleep(0.05)
        return f"status {self.status_file.read_text().strip()}"

    def wait_for(self, test: Callable[[str], bool], what: str, timeout: float | None = None) -> str:
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            text = self.screen()
            if test(text):
                return text
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{text}")
            time.sleep(0.05)

    def kill(self) -> None:
        assert TMUX is not None
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=10)
        # tmux leaves the socket file behind after kill-server.
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
