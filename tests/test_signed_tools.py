"""The tools on logs with signed results and times (issue 13), with real files of real games:
a network game of two `allegra` peers over 127.0.0.1, `allegra simulate --out`, a golden
replay of the older version, and the protocol vector whose seat signed a wrong hash."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from allegra_lan.log.replay import read_replay
from allegra_lan.table import fold

from net_helpers import LOOPBACK, CliPool, CliRun, unique_table

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 90.0  # seconds a network game of two bot peers may take (it takes a few)
ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"


def allegra(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(cwd / "config"), XDG_DATA_HOME=str(cwd / "data"))
    return subprocess.run([sys.executable, "-m", "allegra_lan", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def network_game(clis: CliPool, rounds: int = 2, deal: str = "fair") -> list[Path]:
    """A host and a guest (bots) play a whole ALLEGRA game over 127.0.0.1: each peer's replay."""
    table = unique_table("signed")
    host = clis.start("host", ["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", "2",
                               "--variant", "allegra", "--table", table, "--rounds", str(rounds),
                               "--deal", deal])
    host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:\d+", 20.0)
    guest = clis.start("guest", ["join", table, "--interface", LOOPBACK, "--bot", "random"])
    runs: list[CliRun] = [host, guest]
    for run in runs:
        assert run.wait(LIMIT) == 0, f"{run.label}: {run.stdout()}{run.stderr()[-2000:]}"
    return [run.replay_path() for run in runs]


def test_a_network_game_is_signed_by_every_seat_and_the_tools_show_its_times(clis: CliPool,
                                                                              tmp_path: Path) -> None:
    # The seeded deal: its log ends with the last result, whose record `export` gives the
    # game's end (a fair-deal log ends with every seat's deal_secret after it).
    paths = network_game(clis, deal="seeded")
    assert paths[0].read_bytes() == paths[1].read_bytes()  # one game, one log, on both peers
    t, fault = fold(read_replay(paths[0]).events)
    assert fault is None and t.over and t.signs_results and len(t.results) == 2
    assert [[t.seat_of(e.author) for e in r] for r in t.results] == [[0, 1], [0, 1]]
    started, ended = t.times()
    assert started is not None and ended is not None and 0 <= ended - started < LIMIT * 1000
    # The host's clock, read by its node (the simulator's peers count from a fixed epoch).
    assert abs(time.time() * 1000 - ended) < 10 * 60 * 1000

    v = allegra(tmp_path, "replay", "verify", *paths)
    assert v.returncode == 0, v.stderr
    lines = v.stdout.splitlines()
    for line, path in zip(lines, paths):
        assert line.startswith(f"OK  {path}  (") and line.endswith("; results signed by every seat)")

    show = allegra(tmp_path, "replay", "show", paths[0])
    assert show.returncode == 0, show.stderr
    assert re.search(rf"^started: {ISO} \(seat 0's clock\)$", show.stdout, re.M), show.stdout
    assert len(re.findall(r"^round \d result signed by 2 of 2 seats: scores ", show.stdout, re.M)) == 2
    assert re.search(rf"^ended: {ISO} \(the last result's clock\), after \d+ s$", show.stdout, re.M)

    ex = allegra(tmp_path, "replay", "export", paths[0])
    assert ex.returncode == 0, ex.stderr
    records = [json.loads(line) for line in ex.stdout.splitlines()]
    assert re.fullmatch(ISO, records[0]["started"])
    results = [r for r in records if r["kind"] == "result"]
    assert [r["seat"] for r in results] == [0, 1, 0, 1]
    assert all(re.fullmatch(ISO, r["time"]) for r in results)
    last = records[-1]
    assert last["kind"] == "result" and last["duration_ms"] == ended - started
    assert re.fullmatch(ISO, last["ended"]) and last["duration"].endswith(" s")
    assert not any("ended" in r for r in records[:-1])

    # Standings --signed counts the game once (both peers' copies), nothing left out.
    st = allegra(tmp_path, "replay", "standings", "--signed", *paths)
    assert st.returncode == 0, st.stderr
    assert "1 game counted (and 1 more copy of them), 0 left out" in st.stdout, st.stdout


def test_verify_names_old_logs_and_standings_signed_leaves_them_out(tmp_path: Path) -> None:
    """A folder of `allegra simulate --out` games and a golden replay of the older version."""
    out = tmp_path / "games"
    sim = allegra(tmp_path, "simulate", "--variant", "grande", "--players", "2", "--seed", "987",
                  "--games", "2", "--out", out)
    assert sim.returncode == 0, sim.stderr
    old = out / "golden-grande-2p.allegra"
    shutil.copy(ROOT / "replays" / "golden" / "grande-2p.allegra", old)
    v = allegra(tmp_path, "replay", "verify", out)
    assert v.returncode == 0, v.stdout + v.stderr
    by_file = {line.split()[1]: line for line in v.stdout.splitlines() if line.startswith("OK  ")}
    assert by_file[str(old)].endswith("; no signed results (a log of an older version))")
    assert sum(line.endswith("; results signed by every seat)") for line in by_file.values()) == 2

    plain = allegra(tmp_path, "replay", "standings", out)
    assert plain.returncode == 0 and "3 games counted, 0 left out" in plain.stdout, plain.stdout
    signed = allegra(tmp_path, "replay", "standings", "--signed", out)
    assert signed.returncode == 0, signed.stderr
    assert "2 games counted, 1 left out" in signed.stdout, signed.stdout
    assert (f": its results are not signed by every seat (a log of an older version): {old}"
            in signed.stdout)
    csv = allegra(tmp_path, "replay", "standings", "--signed", "--format", "csv", out)
    assert csv.returncode == 0 and "not signed by every seat" in csv.stderr


def test_verify_names_the_seat_whose_result_disagrees_with_both_hashes(tmp_path: Path) -> None:
    path = ROOT / "protocol" / "vectors" / "logs" / "result-disagrees.allegra"
    v = allegra(tmp_path, "replay", "verify", path)
    assert v.returncode == 1
    assert re.fullmatch(
        rf"FAIL {re.escape(str(path))}  seq \d+: result: seat 1 \(bob\) signed round 1 with state "
        r"hash 0{32}, this engine's is [0-9a-f]{32}", v.stdout.splitlines()[0]), v.stdout
    ex = allegra(tmp_path, "replay", "export", path)
    assert ex.returncode == 1
    assert json.loads(ex.stdout.splitlines()[-1])["type"] == "result"
