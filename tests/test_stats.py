"""`allegra stats` and the line after `allegra play` (issue 11, "What to build").

Real replay files, signed with the key `allegra id` keeps in the test's own config
directory, played to the end in this process; the figures the command prints are
checked against what the game itself said while it was played (totals, round scores,
the clears of each move), not against the command's own fold. Broken files in the data
directory are named in one line, never a traceback.
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
from dataclasses import dataclass
from pathlib import Path

import pytest

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import log_tags, result_tags
from allegra_lan.log.identity import Identity, load_or_create
from allegra_lan.log.replay import ReplayWriter
from allegra_lan.rules import legal_moves, ruleset_for, to_act
from allegra_lan.rules.effects import Cleared
from allegra_lan.rules.rng import Stream
from allegra_lan.tools.verify import verify_file

ROOT = Path(__file__).resolve().parents[1]
TMUX = shutil.which("tmux")


@dataclass
class Played:
    path: Path
    variant: str
    players: int
    total: int
    won: bool
    best_round: int
    clears: int
    chain: int


def games_dir(home: Path) -> Path:
    return home / "data" / "allegra-lan" / "games"


def my_identity(home: Path, profile: str | None = None) -> Identity:
    if profile is None:
        return load_or_create(home / "config" / "allegra-lan")[0]
    return load_or_create(home / "data" / "allegra-lan" / "profiles" / profile)[0]


def play_one(home: Path, me: Identity, g: int, variant: str, n: int, *, finish: bool = True,
             seat: int = 0) -> Played:
    """A game with `me` at `seat` and derived keys elsewhere, random legal moves, written
    as a replay in the data directory; what the game said about `seat` along the way."""
    players = [Player(f"p{i}", Identity.from_seed(derived("stats-key", g, i))) for i in range(n)]
    players[seat] = Player("me", me)
    game = LocalGame(ruleset_for(variant), players, game_id=derived("stats-game", g)[:16],
                     nonces=[derived("stats-nonce", g, i) for i in range(n)], table_name="stats")
    rng = Stream(derived("stats-moves", g), "moves")
    clears = chain = moves = 0
    while to_act(game.state) is not None and (finish or moves < 12):
        d = to_act(game.state)
        options = legal_moves(game.state)
        game.submit(options[rng.below(len(options))])
        moves += 1
        cleared = [e for e in game.state.effects if isinstance(e, Cleared)]
        clears += sum(1 for e in cleared for s in e.slots if s.seat == seat)
        if cleared and d is not None and d.seat == seat:
            chain = max(chain, max(e.step for e in cleared))
    games_dir(home).mkdir(parents=True, exist_ok=True)
    path = games_dir(home) / f"game-{g:03d}.allegra"
    writer = ReplayWriter(path, {**log_tags(game.table), **seat_tags(players)}, fsync=False)
    for ev in game.table.events:
        writer.append(ev.signed)
    state = game.state
    writer.finish(result_tags(state) if finish else log_tags(game.table))
    return Played(path, variant, n, state.totals[seat], state.totals[seat] == min(state.totals),
                  min((r.scores[seat] for r in state.results), default=0), clears, chain)


def allegra(home: Path, *args: str, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
               **(env_extra or {}))
    if not env_extra or "ALLEGRA_PROFILE" not in env_extra:
        env.pop("ALLEGRA_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "allegra_lan", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


ROW = re.compile(r"^(ALLEGRA(?: Grande)?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(-?\d+\.\d)\s+(-?\d+)\s+(\d+)\s+(\d+)$", re.M)


def rows(stdout: str) -> dict[tuple[str, int], tuple[int, int, float, int, int, int]]:
    return {(m.group(1), int(m.group(2))): (int(m.group(3)), int(m.group(4)), float(m.group(5)),
                                             int(m.group(6)), int(m.group(7)), int(m.group(8)))
            for m in ROW.finditer(stdout)}


def expected(games: list[Played]) -> tuple[int, int, float, int, int, int]:
    return (len(games), sum(g.won for g in games), round(sum(g.total for g in games) / len(games), 1),
            min(g.best_round for g in games), sum(g.clears for g in games), max(g.chain for g in games))


def test_stats_per_variant_and_player_count_from_the_games_the_person_played(tmp_path: Path) -> None:
    me = my_identity(tmp_path)
    grande4 = [play_one(tmp_path, me, g, "grande", 4, seat=g % 4) for g in range(3)]
    allegra3 = [play_one(tmp_path, me, g, "allegra", 3, seat=1) for g in range(3, 5)]
    play_one(tmp_path, me, 5, "grande", 4, finish=False)  # left: not counted
    play_one(tmp_path, Identity.from_seed(b"someone else" * 3), 6, "grande", 2)  # not ours
    done = allegra(tmp_path, "stats")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    got = rows(done.stdout)
    assert set(got) == {("ALLEGRA Grande", 4), ("ALLEGRA", 3)}, done.stdout
    for key, games in ((("ALLEGRA Grande", 4), grande4), (("ALLEGRA", 3), allegra3)):
        want = expected(games)
        assert got[key][:2] == want[:2] and got[key][3:] == want[3:], (key, got[key], want)
        assert abs(got[key][2] - want[2]) < 0.051, (got[key], want)
    assert me.fingerprint in done.stdout
    assert "left out: 1 unfinished, 1 of other keys" in done.stdout


def test_unreadable_files_are_counted_and_named_in_one_line(tmp_path: Path) -> None:
    me = my_identity(tmp_path)
    good = play_one(tmp_path, me, 1, "grande", 2)
    (games_dir(tmp_path) / "garbage.allegra").write_bytes(b"\x00\xffnot a replay\n" * 3)
    cut = games_dir(tmp_path) / "cut.allegra"
    data = good.path.read_bytes()
    cut.write_bytes(data[:len(data) // 2] + b"#!garbage!#\n" + data[len(data) // 2:])
    os.mkfifo(games_dir(tmp_path) / "fifo.allegra")  # never read (it would block)
    done = allegra(tmp_path, "stats")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    line = done.stderr.strip()
    assert line.startswith("3 files could not be read, left out: "), line
    assert "garbage.allegra (" in line and "cut.allegra (" in line and "fifo.allegra (" in line
    assert rows(done.stdout) == {("ALLEGRA Grande", 2): expected([good])}


def test_stats_of_a_profile_count_only_that_profile_s_games(tmp_path: Path) -> None:
    mine = play_one(tmp_path, my_identity(tmp_path), 1, "grande", 2)
    bobs = [play_one(tmp_path, my_identity(tmp_path, "bob"), g, "allegra", 2) for g in (2, 3)]
    assert rows(allegra(tmp_path, "stats").stdout) == {("ALLEGRA Grande", 2): expected([mine])}
    by_flag = allegra(tmp_path, "stats", "--profile", "bob")
    by_env = allegra(tmp_path, "stats", env_extra={"ALLEGRA_PROFILE": "bob"})
    assert rows(by_flag.stdout) == rows(by_env.stdout) == {("ALLEGRA", 2): expected(bobs)}


def test_stats_before_any_game_and_with_a_bad_directory(tmp_path: Path) -> None:
    done = allegra(tmp_path, "stats")
    assert done.returncode == 0 and done.stdout.startswith("no games of yours yet"), done.stdout
    assert not (tmp_path / "config" / "allegra-lan" / "identity.key").exists()  # stats makes no key
    bad = allegra(tmp_path, "stats", "--dir", str(tmp_path / "nowhere"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("allegra stats: error: not a directory: ")


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (.ci/run installs it)")
def test_allegra_play_ends_with_a_line_of_the_person_s_record(tmp_path: Path) -> None:
    """In a real terminal, as profile bob: two finished 4-player Grande games of bob's (and
    one of the default key) in the data directory; a new game, quit at once; bob's record
    is printed under the replay line, and bob's key sits at seat 0 of the new game."""
    me = my_identity(tmp_path, "bob")
    before = [play_one(tmp_path, me, g, "grande", 4) for g in (1, 2)]
    play_one(tmp_path, my_identity(tmp_path), 3, "grande", 4)
    socket = f"allegra-stats-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    conf = tmp_path / "tmux.conf"
    conf.write_text("set -g remain-on-exit on\nset -g status off\n", "utf-8")
    status = tmp_path / "status"
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "ALLEGRA_PROFILE")}
    env["TERM"] = "xterm-256color"
    shell = (f"env XDG_CONFIG_HOME={shlex.quote(str(tmp_path / 'config'))} "
             f"XDG_DATA_HOME={shlex.quote(str(tmp_path / 'data'))} "
             f"{shlex.quote(sys.executable)} -m allegra_lan play --seed 3 --profile bob; echo $? > {shlex.quote(str(status))}")

    def tmux(*args: str) -> str:
        assert TMUX is not None
        out = subprocess.run([TMUX, "-L", socket, *args], capture_output=True, text=True, timeout=10, env=env)
        assert out.returncode == 0, out.stderr
        return out.stdout

    def wait(test, what: str) -> str:  # type: ignore[no-untyped-def]
        end = time.monotonic() + 60
        while True:
            text = tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "t")
            if test(text):
                return text
            assert time.monotonic() < end, f"timed out waiting for {what}:\n{text}"
            time.sleep(0.05)

    tmux("-f", str(conf), "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", shell)
    try:
        wait(lambda s: "to act: you" in s, "the table")
        tmux("send-keys", "-t", "t", "q")
        wait(lambda s: "y quits" in s, "the quit question")
        tmux("send-keys", "-t", "t", "y")
        end = time.monotonic() + 30
        while not status.exists() or not status.read_text().endswith("\n"):
            assert time.monotonic() < end, "allegra play did not end"
            time.sleep(0.05)
        assert status.read_text().strip() == "0"
        text = wait(lambda s: "unfinished game; replay:" in s, "the replay line")
        want = expected(before)
        assert (f"your ALLEGRA Grande games with 4 players: 2 played, {want[1]} won, mean score "
                f"{want[2]:.1f}, best round {want[3]}, longest chain {want[5]} (allegra stats for all)"
                in text), text
        new = [p for p in games_dir(tmp_path).glob("*.allegra") if not p.name.startswith("game-")]
        assert len(new) == 1
        assert verify_file(new[0]).seats[0][1] == me.fingerprint
    finally:
        subprocess.run([TMUX, "-L", socket, "kill-server"], capture_output=True, timeout=10)
