"""Read-only spectators: only where the host allowed them (real `allegra` processes, 127.0.0.1)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

NET = ["--interface", "127.0.0.1"]


def start(home: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data")}
    return subprocess.Popen([sys.executable, "-m", "allegra_lan", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def said(host: subprocess.Popen[str], pattern: str, limit: float = 60) -> re.Match[str]:
    """The first line the host says from now on that matches `pattern` (no fixed sleeps:
    the tests wait for what they need, however loaded the machine)."""
    assert host.stderr is not None
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = host.stderr.readline()
        if not line and host.poll() is not None:
            break
        m = re.search(pattern, line)
        if m:
            return m
    raise AssertionError(f"the host never said {pattern!r}")


def opened(host: subprocess.Popen[str], limit: float = 60) -> tuple[str, str]:
    """The host's address and table id, from the line it says when its table opens."""
    m = said(host, r"open on (127\.0\.0\.1:\d+).*table id ([0-9a-f]{32})", limit)
    return m.group(1), m.group(2)


def stop_all(procs: list[subprocess.Popen[str]]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=10)


def test_a_spectator_follows_the_whole_game_and_keeps_the_same_log(tmp_path: Path) -> None:
    table = f"watch-{uuid.uuid4().hex[:8]}"
    procs: list[subprocess.Popen[str]] = []
    try:
        host = start(tmp_path / "h", "host", *NET, "--bot", "greedy", "--players", "3", "--table", table,
                     "--spectators", "--pace", "0.01", "--rounds", "1")
        procs.append(host)
        opened(host)
        watcher = start(tmp_path / "w", "watch", table, *NET)
        procs.append(watcher)
        said(host, r"^connected to ")  # the watcher found the table (by name) before it fills
        procs += [start(tmp_path / f"j{i}", "join", table, *NET, "--bot", "random") for i in range(2)]
        outs = [p.communicate(timeout=120) for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0, 0], [o[1][-800:] for o in outs]
        over = {next(x for x in out.splitlines() if x.startswith("game over")) for out, _ in outs}
        assert len(over) == 1
        replays = [Path(re.search(r"replay: (.+)", out).group(1)) for out, _ in outs]  # type: ignore[union-attr]
        assert len({r.read_bytes() for r in replays}) == 1
        assert "watching" in outs[1][1]
    finally:
        stop_all(procs)


def test_a_table_without_spectators_refuses_a_watcher_once_it_started(tmp_path: Path) -> None:
    table = f"nowatch-{uuid.uuid4().hex[:8]}"
    procs: list[subprocess.Popen[str]] = []
    try:
        host = start(tmp_path / "h", "host", *NET, "--bot", "greedy", "--players", "2", "--table", table,
                     "--pace", "0.05")
        procs.append(host)
        address, table_id = opened(host)
        procs.append(start(tmp_path / "j", "join", table, *NET, "--bot", "random"))
        said(host, r"the game starts")
        watch = subprocess.run([sys.executable, "-m", "allegra_lan", "watch", *NET, "--address", address,
                                "--table-id", table_id], capture_output=True, text=True, timeout=60,
                               env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "w"),
                                    "XDG_DATA_HOME": str(tmp_path / "w")})
        assert watch.returncode == 2
        errors = [x for x in watch.stderr.splitlines() if x.startswith("allegra watch: error:")]
        assert len(errors) == 1 and "holds no seat" in errors[0], watch.stderr
        assert "Traceback" not in watch.stderr
    finally:
        stop_all(procs)


def test_watch_argument_errors_are_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    for args, message in ((["--address", "127.0.0.1:9"], "both --address and --table-id"),
                          (["--address", "nowhere", "--table-id", "00" * 16], "HOST:PORT"),
                          (["--address", "127.0.0.1:9", "--table-id", "zz"], "32 hex digits")):
        p = subprocess.run([sys.executable, "-m", "allegra_lan", "watch", *NET, *args], env=env,
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr, p.stderr
