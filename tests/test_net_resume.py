"""A peer killed with SIGKILL in mid-game and restarted with `allegra resume` finishes the game.

Real processes of the `allegra` command on 127.0.0.1, each with its own config and
data directories; every log ends byte-identical.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from net_helpers import (
    LOOPBACK, MID_GAME_PACE, CliPool, check_same_ending, kill_a_guest_mid_game, replay_events,
    unique_table,
)


def test_a_killed_peer_resumes_and_every_log_ends_identical(clis: CliPool) -> None:
    table = unique_table("resume")
    net = ["--interface", LOOPBACK, "--pace", MID_GAME_PACE]
    host, other, victim, replay = kill_a_guest_mid_game(clis, table, net)
    before = replay_events(replay)  # the others noticed the loss, and wait
    resumed = clis.start("resumed", ["resume", str(replay), "--interface", LOOPBACK], home=victim.home)
    check_same_ending([host, other, resumed])
    assert resumed.replays() == [replay]  # it went on in the very file it was killed writing
    assert replay_events(replay) > before


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
