"""A peer killed with SIGKILL in mid-game and restarted with `allegra resume` finishes the game.

Real processes of the `allegra` command on 127.0.0.1, each with its own config and
data directories; every log ends byte-identical.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from net_helpers import kill_a_guest_mid_game, replay_events, start_allegra


def test_a_killed_peer_resumes_and_every_log_ends_identical(tmp_path: Path) -> None:
    table = f"resume-{uuid.uuid4().hex[:8]}"
    net = ["--interface", "127.0.0.1", "--pace", "0.03"]
    homes = {name: tmp_path / name for name in ("host", "victim", "other")}
    procs: list[subprocess.Popen[str]] = []
    try:
        host, other, replay = kill_a_guest_mid_game(homes, table, net, procs)
        before = replay_events(replay)
        time.sleep(2.0)  # the others notice, and wait
        resumed = start_allegra(homes["victim"], "resume", str(replay), "--interface", "127.0.0.1")
        procs.append(resumed)
        outs = {}
        for name, p in (("host", host), ("other", other), ("victim", resumed)):
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, f"{name} exit {p.returncode}: {err[-2000:]}"
            outs[name] = out
        lines = {name: next(x for x in out.splitlines() if x.startswith("game over")) for name, out in outs.items()}
        assert len(set(lines.values())) == 1, lines
        files = [next((homes[n] / "data" / "allegra-lan" / "games").glob("*.allegra")) for n in homes]
        assert len({f.read_bytes() for f in files}) == 1
        assert replay_events(files[0]) > before
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


@pytest.mark.parametrize("args, message", [
    (["resume", "/nonexistent.allegra", "--interface", "127.0.0.1"], "No such file"),
    (["resume", "x.allegra"], "--interface"),
])
def test_resume_errors_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "allegra_lan", *args], env=env, text=True,
                       capture_output=True, timeout=60)
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and message in p.stderr
    assert "Traceback" not in p.stderr


def test_resume_of_a_file_without_its_seats_file_says_why(tmp_path: Path) -> None:
    replay = Path(__file__).parent.parent / "replays" / "golden" / "allegra-2p.allegra"
    copy = tmp_path / "game.allegra"
    copy.write_bytes(replay.read_bytes())
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "allegra_lan", "resume", str(copy), "--interface",
                        "127.0.0.1"], env=env, text=True, capture_output=True, timeout=60)
    assert p.returncode == 2 and "only the peer that played the game can resume it" in p.stderr
