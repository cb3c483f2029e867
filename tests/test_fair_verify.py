"""`allegra replay verify` of fair-deal games (issue 12): every pass and share is redone from
the published secrets; a broken deal, a tampered shuffle and a withheld secret each fail the
file (exit 1) naming the seat; a fair file cut mid-game passes as unfinished; `simulate
--deal fair` writes such files, and the other replay tools read them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.deal.cheats import CopyCard, WithholdSecret, WrongShare
from allegra_lan.local import LocalGame, seat_tags
from allegra_lan.log.replay import write_replay
from allegra_lan.tags import log_tags

from helpers import fair_game


def allegra(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_DATA_HOME": str(home / "data")}
    return subprocess.run([sys.executable, "-m", "allegra_lan", *map(str, args)], cwd=home, env=env,
                          capture_output=True, text=True, timeout=300)


def saved(g: LocalGame, path: Path, upto: int | None = None) -> Path:
    """`g`'s log (its first `upto` events) as a replay file whose header says what it holds."""
    events = [e.signed for e in g.table.events[:upto]]
    if upto is None:
        tags = {**log_tags(g.table), **seat_tags(g.players)}
    else:
        from allegra_lan.table import fold
        t, _ = fold(events)
        tags = {**log_tags(t), **seat_tags(g.players)}
    write_replay(path, tags, events)
    return path


def verify(tmp_path: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return allegra(tmp_path, "replay", "verify", *files)


def test_a_fair_game_verifies_from_every_secret(tmp_path: Path) -> None:
    f = saved(fair_game("grande", 3), tmp_path / "fair.allegra")
    p = verify(tmp_path, f)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fair deal re-checked from every seat's secret" in p.stdout
    assert "results signed by every seat" in p.stdout


def test_a_fair_file_cut_mid_game_is_unfinished_not_failed(tmp_path: Path) -> None:
    g = fair_game("allegra", 2, tag="cut")
    f = saved(g, tmp_path / "cut.allegra", upto=len(g.table.events) // 2)
    p = verify(tmp_path, f)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "unfinished" in p.stdout


@pytest.mark.parametrize("cheat, seat, words", [
    (WithholdSecret(seat=1), 1, "withheld its deal secret"),
    (WrongShare(seat=0, batch=2), 0, "the deal broke during the game"),
    (CopyCard(seat=1, into=0, of=1), 1, "shuffle"),
], ids=["withheld-secret", "wrong-share", "copied-card"])
def test_a_dishonest_dealer_fails_the_file_naming_its_seat(tmp_path: Path, cheat: Any, seat: int,
                                                          words: str) -> None:
    g = fair_game("grande", 2, cheat=cheat, tag=f"verify-{type(cheat).__name__}")
    f = saved(g, tmp_path / "cheat.allegra")
    p = verify(tmp_path, f)
    assert p.returncode == 1, p.stdout + p.stderr
    line = p.stdout.splitlines()[0]
    assert line.startswith("FAIL ") and " deal: " in line and words in line, line
    assert f"seat {seat} (p{seat})" in line, line
    assert "Traceback" not in p.stderr


def test_simulate_writes_fair_deal_files_the_tools_read(tmp_path: Path) -> None:
    out = tmp_path / "games"
    p = allegra(tmp_path, "simulate", "--variant", "allegra", "--players", "2", "--games", "2",
                "--deal", "fair", "--out", out)
    assert p.returncode == 0, p.stderr
    files = sorted(out.glob("*.allegra"))
    assert len(files) == 2
    v = verify(tmp_path, *files)
    assert v.returncode == 0 and v.stdout.count("fair deal re-checked") == 2, v.stdout
    for tool in (["replay", "show", "--all"], ["replay", "export", "--format", "csv"], ["replay", "show", "--seat", "1"]):
        r = allegra(tmp_path, *tool, files[0])
        assert r.returncode == 0 and r.stdout and not r.stderr, (tool, r.stderr)
    d = allegra(tmp_path, "diff", files[0], files[0])
    assert d.returncode == 0, d.stdout + d.stderr
    seeded = allegra(tmp_path, "simulate", "--variant", "allegra", "--players", "2", "--games", "2")
    fair = allegra(tmp_path, "simulate", "--variant", "allegra", "--players", "2", "--games", "2",
                   "--deal", "fair")
    assert seeded.returncode == fair.returncode == 0
    assert seeded.stdout != fair.stdout  # the cards come from the seats' shuffles, not the seed
    bad = allegra(tmp_path, "simulate", "--deal", "open")
    assert bad.returncode == 2 and "--deal" in bad.stderr and "Traceback" not in bad.stderr
