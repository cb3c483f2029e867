"""A peer that does not come back: the other seats agree, a bot plays its seat, the game ends.

Real `allegra` processes on 127.0.0.1: the host sets `--takeover-after 1`; a guest is
killed with SIGKILL mid-game; the two others agree (each signs) and a bot on the host
plays the dead seat. The killed peer, resumed with `allegra resume`, learns of the takeover,
follows the game to its end as a watcher of its old seat, and every log ends identical.
"""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from pathlib import Path

from allegra_lan.tools.verify import verify_file

from net_helpers import kill_a_guest_mid_game, kinds_in, start_allegra, wait_for


def test_the_others_let_a_bot_take_a_dead_peers_seat_and_it_follows_on_resume(tmp_path: Path) -> None:
    table = f"takeover-{uuid.uuid4().hex[:8]}"
    net = ["--interface", "127.0.0.1", "--pace", "0.04"]
    homes = {name: tmp_path / name for name in ("host", "victim", "other")}
    games = {n: h / "data" / "allegra-lan" / "games" for n, h in homes.items()}
    procs: list[subprocess.Popen[str]] = []

    def replay(name: str) -> Path | None:
        found = sorted(games[name].glob("*.allegra")) if games[name].exists() else []
        return found[0] if found else None

    try:
        host, other, mine = kill_a_guest_mid_game(homes, table, net, procs, "--takeover-after", "1")
        # Without the dead peer, the others agree and go on: a takeover lands in the host's log.
        host_file = wait_for("the host's replay", lambda: replay("host"))
        wait_for("a takeover in the host's log", lambda: "takeover" in kinds_in(host_file))
        resumed = start_allegra(homes["victim"], "resume", str(mine), "--interface", "127.0.0.1")
        procs.append(resumed)
        outs = {}
        for name, p in (("host", host), ("other", other), ("victim", resumed)):
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, f"{name} exit {p.returncode}: {err[-2000:]}"
            outs[name] = (out, err)
        lines = {n: next(x for x in out.splitlines() if x.startswith("game over")) for n, (out, _) in outs.items()}
        assert len(set(lines.values())) == 1, lines
        files = [replay(n) for n in homes]
        assert all(files) and len({f.read_bytes() for f in files if f}) == 1
        assert kinds_in(files[0]).count("takeover") == 1  # type: ignore[arg-type]
        verdict = verify_file(files[0])  # type: ignore[arg-type]
        assert verdict.ok and verdict.finished, verdict
        assert "asking the other seats to let bots play" in outs["host"][1]
        assert "agreed to let bots play" in outs["other"][1]
        assert "is played by a bot on" in outs["victim"][1] and "from now on" in outs["victim"][1]
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)


def test_takeover_after_must_be_whole_seconds(tmp_path: Path) -> None:
    p = start_allegra(tmp_path, "host", "--interface", "127.0.0.1", "--bot", "greedy", "--takeover-after", "soon")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2 and len(err.strip().splitlines()) == 1
    assert "--takeover-after" in err and "not a whole number of seconds" in err
