"""Issue 13's "Done when": a small tournament, run for real.

Seven players (one `--profile` each in one data directory, so seven keys)
are planned over 3 rounds of ALLEGRA at a table of 4 and a table of 3 by
`allegra tournament plan`; every planned table is then played by headless
`allegra host/join --bot greedy` peers over 127.0.0.1 (real subprocesses;
each round's two tables at once), one peer per seat, each writing its own
replay. Every file is collected into one folder, plus a copy of one file, a
file cut short, and a forged file of a game not in the plan. Then
`tournament check`, `tournament standings` and `tournament report` run as
subprocesses, and the report's site is opened in headless chromium.

What the tools say is checked against what this test computes itself from
the games, read with `allegra replay show` (totals) and `replay export`
(who held each seat): never with the tournament modules' own functions.

The folder is built once for the module (`tournament`), and each tool is one test
over it.
"""

from __future__ import annotations

import base64
import csv
import fcntl
import io
import json
import pickle
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import pytest

from allegra_lan.log.envelope import decode_event, sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import format_header, read_replay
from net_helpers import LOOPBACK, ROOT, START_LIMIT, CliPool, CliRun, data_home, unique_table

NAMES = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus")
VARIANT = "allegra"
ROUNDS = 3
# The tests of the tournament run one after another on one pytest-xdist worker (with
# `--dist loadgroup`, the project's default): spread over workers, all but the first
# waited on the lock below while the first played it, a worker idle for half a minute.
ON_ONE_WORKER = pytest.mark.xdist_group("tournament")
GAME_LIMIT = 240.0  # seconds a one-round network game of bots may take on a loaded machine


def allegra(*args: str | Path, home: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real command, from this interpreter's environment (in `home`'s XDG directories)."""
    import os

    env = dict(os.environ)
    if home is not None:
        env.update(XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    env.pop("ALLEGRA_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "allegra_lan", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@dataclass
class GameSeen:
    """One game as this test reads it from a file with `replay show` and `replay export`."""

    game: str  # the header's Game tag (verify checks it against the log): copies share it
    fingerprints: tuple[str, ...]  # seat order
    totals: tuple[int, ...]


def read_game(path: Path) -> GameSeen:
    shown = allegra("replay", "show", path)
    assert shown.returncode == 0, shown.stderr
    totals = tuple(int(t) for t in re.findall(r"^seat \d+ .+  total (-?\d+)$", shown.stdout, re.M))
    exported = allegra("replay", "export", path)
    assert exported.returncode == 0, exported.stderr
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    seats: dict[int, str] = {}
    for r in records:
        if isinstance(r.get("seat"), int):
            seats.setdefault(r["seat"], r["author"])
    assert sorted(seats) == list(range(len(totals))), (seats, totals)
    game = re.search(r'^\[Game "([0-9a-f]{32})"\]$', path.read_text(encoding="ascii"), re.M)
    assert game, f"{path} has no Game tag"
    return GameSeen(game.group(1), tuple(seats[s] for s in sorted(seats)), totals)


@dataclass
class Tournament:
    home: Path
    plan: Path
    players: Path
    folder: Path
    keys: dict[str, str]  # name -> fingerprint
    rounds: list[list[list[str]]]  # the plan's tables, names in seat order
    peer_files: list[Path]  # every peer's replay, as collected
    copied: Path
    cut: Path
    forged: Path
    forged_game: str


def _play_table(clis: CliPool, home: Path, r: int, t: int, seats: list[str]) -> list[CliRun]:
    """Start one planned table: its seat 0 hosts, the others join at their planned seats."""
    table = unique_table(f"t{r}{t}")
    host = clis.start(f"r{r}t{t}-host", ["host", "--interface", LOOPBACK, "--bot", "greedy",
                                         "--profile", seats[0], "--name", seats[0],
                                         "--players", str(len(seats)), "--variant", VARIANT,
                                         "--table", table, "--rounds", "1"], home=home)
    host.wait_for_stderr(rf"table '{re.escape(table)}' open on ", START_LIMIT)
    joins = [clis.start(f"r{r}t{t}-seat{i}", ["join", table, "--interface", LOOPBACK, "--bot", "greedy",
                                              "--profile", name, "--name", name, "--seat", str(i),
                                              "--wait", str(START_LIMIT)], home=home)
             for i, name in enumerate(seats[1:], 1)]
    return [host, *joins]


def _forge(source: Path, out: Path) -> str:
    """A forger's file of a game not in the plan: its last move re-signed by a key that holds
    no seat (a player cannot sign as another), and its header's Result and Winners edited to
    name another winner. Returns the game id."""
    replay = read_replay(source)
    last = decode_event(replay.events[-1])
    stranger = Identity.generate()
    forged = sign_event(stranger.key, game=last.game, seq=last.seq, prev=last.prev, kind=last.kind,
                        body=last.body)
    tags = dict(replay.tags)
    totals = tags["Result"].split()
    tags["Result"] = " ".join(reversed(totals))
    tags["Winners"] = str(len(totals) - 1)
    lines = [base64.b64encode(e).decode("ascii") for e in replay.events[:-1] + [forged.signed]]
    out.write_text(format_header(tags) + "".join(line + "\n" for line in lines), encoding="ascii")
    return last.game.hex()


@pytest.fixture(scope="session")
def tournament(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Tournament:
    """The tournament, played once per run: under pytest-xdist the first worker to ask plays
    it in the run's shared temporary folder (under a lock) and the others read it from there
    (the pattern of xdist's docs); the tests only read its files. Built per worker, or per
    module, it was the slowest part of the suite. (With the project's `--dist loadgroup` its
    tests share one worker, `ON_ONE_WORKER`, and the lock is never waited on; it stays for a
    run that spreads them, `--dist load`.)"""
    if worker_id == "master":  # no xdist
        return _play_tournament(tmp_path_factory.mktemp("tournament"))
    shared = tmp_path_factory.getbasetemp().parent  # this run's, shared by its workers
    done = shared / "tournament.pickle"
    with open(shared / "tournament.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return pickle.loads(done.read_bytes())
        t = _play_tournament(shared / "tournament")
        done.write_bytes(pickle.dumps(t))
        return t


def _play_tournament(base: Path) -> Tournament:
    base.mkdir(exist_ok=True)
    home = base / "club"  # one data directory; a profile (key) per player
    home.mkdir()
    keys = {}
    for name in NAMES:
        done = allegra("id", "--profile", name, home=home)
        assert done.returncode == 0, done.stderr
        keys[name] = done.stdout.strip()
    assert len(set(keys.values())) == len(NAMES)
    players = base / "players.csv"
    players.write_text("name,fingerprint\n" + "".join(f"{n},{k}\n" for n, k in keys.items()), encoding="utf-8")
    plan = base / "plan.json"
    made = allegra("tournament", "plan", "--players", players, "--rounds", ROUNDS, "--variant", VARIANT,
                   "--seed", "13", "--out", plan)
    assert made.returncode == 0, made.stderr
    data = json.loads(plan.read_text(encoding="utf-8"))
    rounds = [[t["seats"] for t in r["tables"]] for r in data["rounds"]]
    assert [sorted(len(t) for t in r) for r in rounds] == [[3, 4]] * ROUNDS

    clis = CliPool(base)
    try:
        for r, tables in enumerate(rounds, 1):  # the round's tables at once; rounds one after another
            runs = [run for t, seats in enumerate(tables, 1) for run in _play_table(clis, home, r, t, seats)]
            codes = {run.label: run.wait(GAME_LIMIT) for run in runs}
            assert all(c == 0 for c in codes.values()), \
                {run.label: (codes[run.label], run.stderr()[-1500:]) for run in runs if codes[run.label]}
            time.sleep(0.05)  # the next round's files are later by their modification time
    finally:
        clis.close()

    folder = base / "collected"
    folder.mkdir()
    games = data_home(home) / "allegra-lan" / "games"
    peer_files = []
    for f in sorted(games.glob("*.allegra")):
        shutil.copy2(f, folder / f.name)
        peer_files.append(folder / f.name)
    assert len(peer_files) == 7 * ROUNDS, sorted(p.name for p in peer_files)  # one per seat per table
    copied = folder / "copied" / peer_files[0].name  # the same file sent twice, under another folder
    copied.parent.mkdir()
    shutil.copy2(peer_files[0], copied)
    cut = folder / "cut-short.allegra"  # a transfer cut short halfway
    blob = peer_files[1].read_bytes()
    cut.write_bytes(blob[: len(blob) // 2])
    extra = base / "extra"
    sim = allegra("simulate", "--variant", VARIANT, "--players", "3", "--games", "1", "--seed", "77",
                  "--out", extra)
    assert sim.returncode == 0, sim.stderr
    forged = folder / "forged.allegra"
    forged_game = _forge(next(extra.glob("*.allegra")), forged)
    return Tournament(home, plan, players, folder, keys, rounds, peer_files, copied, cut, forged, forged_game)


_GAMES: dict[Path, dict[str, tuple[GameSeen, list[Path]]]] = {}  # the folder -> its games, read once


def _expected_games(t: Tournament) -> dict[str, tuple[GameSeen, list[Path]]]:
    """The games of the peers' files (and the copy), by game, read here. Files whose logs
    and Game tags are the same bytes read alike, so one of them is read with the commands
    (twice per file, over 22 files, in five tests, was the slowest part of the suite)."""
    if t.folder in _GAMES:
        return _GAMES[t.folder]
    alike: dict[tuple[str, tuple[bytes, ...]], list[Path]] = {}
    for f in t.peer_files + [t.copied]:
        replay = read_replay(f)
        alike.setdefault((replay.tags.get("Game", ""), tuple(replay.events)), []).append(f)
    out: dict[str, tuple[GameSeen, list[Path]]] = {}
    for files in alike.values():
        g = read_game(files[0])
        if g.game in out:  # copies of one game whose bytes differ must still read alike
            assert out[g.game][0] == g, f"copies of one game read differently: {files[0]}"
            out[g.game][1].extend(files)
        else:
            out[g.game] = (g, files)
    _GAMES[t.folder] = out
    return out


@ON_ONE_WORKER
def test_check_counts_each_planned_game_once_and_names_the_bad_files(tournament: Tournament) -> None:
    t = tournament
    games = _expected_games(t)
    assert len(games) == 2 * ROUNDS
    by_name = {fp: n for n, fp in t.keys.items()}
    done = allegra("tournament", "check", "--plan", t.plan, "--players", t.players, t.folder)
    assert done.returncode == 1, done.stdout + done.stderr  # the cut and forged files are findings
    assert done.stderr == ""
    out = done.stdout
    # every planned table: played, by the game of exactly its players, every copy listed once
    for r, tables in enumerate(t.rounds, 1):
        for k, seats in enumerate(tables, 1):
            line = next(x for x in out.splitlines() if x.startswith(f"round {r} table {k}: "))
            assert ": played: game " in line, line
            gid = line.split("game ")[1].split()[0]
            (g, files), = [v for key, v in games.items() if key.startswith(gid)]
            assert sorted(by_name[fp] for fp in g.fingerprints) == sorted(seats)
            for f in files:
                assert line.count(str(f)) == 1, (f, line)
            assert str(t.cut) not in line and str(t.forged) not in line
    assert f"{2 * ROUNDS} planned tables: {2 * ROUNDS} played;" in out, out
    # the bad files are named, with verify's own words
    unverified = out.split("unverified files:\n")[1].split("\n\n")[0].splitlines()
    assert len(unverified) == 2, out
    cut_line = next(x for x in unverified if str(t.cut) in x)
    assert cut_line.strip().startswith(f"FAIL {t.cut}"), cut_line
    assert "counted from its other copies" in cut_line, cut_line
    forged_line = next(x for x in unverified if str(t.forged) in x)
    assert forged_line.strip().startswith(f"FAIL {t.forged}  seq "), forged_line
    assert "no seat" in forged_line or "not a seat" in forged_line or "seat" in forged_line, forged_line
    assert t.forged_game[:16] not in out.split("unverified files:")[0], "the forged game was placed"
    assert "games not in the plan" not in out and "wrong players" not in out and "keys not in" not in out

    as_csv = allegra("tournament", "check", "--plan", t.plan, "--players", t.players, t.folder,
                     "--format", "csv")
    assert as_csv.returncode == 1
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    tables = [r for r in rows if r["round"]]
    assert len(tables) == 2 * ROUNDS and {r["status"] for r in tables} == {"played"}
    assert sorted(r["game"] for r in tables) == sorted(games)
    for r in tables:
        assert sorted(r["files"].split("; ")) == sorted(str(f) for f in games[r["game"]][1])
    findings = [r for r in rows if not r["round"]]
    assert sorted(r["status"] for r in findings) == ["unverified", "unverified"]


def _expected_standings(t: Tournament) -> dict[str, tuple[int, Fraction, Fraction]]:
    """name: (games, points, margin), computed here from each game's totals: at a table,
    the share of opponents with a higher total, a tie half; the margin, the opponents'
    mean total minus one's own."""
    by_name = {fp: n for n, fp in t.keys.items()}
    out = {n: (0, Fraction(0), Fraction(0)) for n in NAMES}
    for g, _ in _expected_games(t).values():
        n = len(g.totals)
        for seat, fp in enumerate(g.fingerprints):
            mine = g.totals[seat]
            others = [x for i, x in enumerate(g.totals) if i != seat]
            beaten = sum(1 for x in others if x > mine) + Fraction(sum(1 for x in others if x == mine), 2)
            games, points, margin = out[by_name[fp]]
            out[by_name[fp]] = (games + 1, points + beaten / (n - 1), margin + Fraction(sum(others), n - 1) - mine)
    return out


@ON_ONE_WORKER
def test_standings_equal_the_points_computed_from_the_games(tournament: Tournament) -> None:
    t = tournament
    want = _expected_standings(t)
    done = allegra("tournament", "standings", "--plan", t.plan, "--players", t.players, t.folder,
                   "--format", "csv")
    assert done.returncode == 0, done.stderr  # something was left out, but not --strict
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert sorted(r["player"] for r in rows) == sorted(NAMES)
    for r in rows:
        games, points, margin = want[r["player"]]
        assert int(r["games"]) == games == ROUNDS, r
        assert r["points"] == f"{float(points):.4f}", (r, points)
        assert r["margin"] == f"{float(margin):.4f}", (r, margin)
    order = sorted(NAMES, key=lambda n: (-want[n][1], -want[n][2]))
    got = [r["player"] for r in rows]
    for a, b in zip(order, order[1:]):  # only exact ties may swap places
        if want[a][1:] != want[b][1:]:
            assert got.index(a) < got.index(b), (order, got)
    # ratings: openskill's Plackett-Luce over the games in the plan's round order (the two
    # tables of a round seat different players, so their order does not matter)
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current = {n: model.rating() for n in NAMES}
    by_set = {frozenset(g.fingerprints): g for g, _ in _expected_games(t).values()}
    for tables in t.rounds:
        for seats in tables:
            g = by_set[frozenset(t.keys[n] for n in seats)]
            names = [next(n for n, k in t.keys.items() if k == fp) for fp in g.fingerprints]
            places = [1 + sum(1 for o in g.totals if o < x) for x in g.totals]
            for n, team in zip(names, model.rate([[current[n]] for n in names], ranks=places)):
                current[n] = team[0]
    for r in rows:
        want = current[r["player"]]
        assert (r["rating"], r["sigma"]) == (f"{want.mu:.4f}", f"{want.sigma:.4f}"), r
    # what was left out is named, as check words it, and --strict refuses it
    left = [x for x in done.stderr.splitlines() if x.startswith("left out: ")]
    assert len(left) == 2 and any(str(t.cut) in x for x in left) and any(str(t.forged) in x for x in left), \
        done.stderr
    strict = allegra("tournament", "standings", "--plan", t.plan, "--players", t.players, t.folder,
                     "--strict")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "left out (2):" in strict.stdout and str(t.forged) in strict.stdout
    # without the bad files: the check passes, and the standings are the same
    clean = allegra("tournament", "check", "--plan", t.plan, "--players", t.players,
                    *t.peer_files, t.copied)
    assert clean.returncode == 0, clean.stdout
    assert clean.stdout.count(": played: game ") == 2 * ROUNDS


@ON_ONE_WORKER
def test_report_publishes_the_tournament_and_it_renders_in_chromium(tournament: Tournament,
                                                                    tmp_path: Path) -> None:
    """`tournament report` of the collected folder: the points table equals the computation
    above, every planned table links to its game's page, the bad files are named, only the
    planned games have pages; then the index and every game page as chromium opens them
    (links that resolve, non-blank screenshots)."""
    from report_helpers import CHROMIUM, check_links, dom, read_page, tables_of

    t = tournament
    site = tmp_path / "site"
    done = allegra("tournament", "report", "--plan", t.plan, "--players", t.players, t.folder, "--out", site)
    assert done.returncode == 0, done.stdout + done.stderr  # written, though the check found the bad files
    assert done.stdout.startswith(f"wrote {site / 'index.html'} and {2 * ROUNDS} game pages"), done.stdout
    games = _expected_games(t)
    assert sorted(p.name for p in site.glob("game-*.html")) == sorted(f"game-{g}.html" for g in games)
    html = (site / "index.html").read_text(encoding="utf-8")
    if CHROMIUM is not None:  # its DOM, and its screenshot from the same run
        html = dom(site / "index.html", tmp_path / "index.png")
    page = read_page(html)
    want = _expected_standings(t)
    (points,) = tables_of(page, "points")
    assert [h for h in points[0]][:6] == ["Rank", "Player", "Games", "Wins", "Points", "Margin"]
    assert sorted(row[1] for row in points[1:]) == sorted(NAMES)
    for row in points[1:]:
        games_n, pts, margin = want[row[1]]
        assert (int(row[2]), row[4], row[5]) == (games_n, f"{float(pts):.2f}", f"{float(margin):+.2f}"), row
    (tables,) = tables_of(page, "tables")
    by_name = {fp: n for n, fp in t.keys.items()}
    assert len(tables) == 1 + 2 * ROUNDS
    for row in tables[1:]:
        r, k, status, planned, seated, gid = row
        assert status == "played" and planned == ", ".join(t.rounds[int(r) - 1][int(k) - 1]), row
        (g,) = [g for key, (g, _) in games.items() if key.startswith(gid)]
        assert sorted(by_name[fp] for fp in g.fingerprints) == sorted(planned.split(", "))
    (found,) = tables_of(page, "findings")
    assert sorted(row[0] for row in found[1:]) == ["unverified", "unverified"]
    assert any(str(t.cut) in row[1] for row in found[1:]) and any(str(t.forged) in row[1] for row in found[1:])
    assert t.forged_game not in "".join(p.name for p in site.iterdir())
    if CHROMIUM is None:
        pytest.skip("chromium is not installed: the site was checked as written, not as rendered")
    assert check_links(site / "index.html", html) >= 3 * 2 * ROUNDS  # games, tables, pages
    for i, g in enumerate(games):  # the first game's page pictured too, from the same run
        game_page = site / f"game-{g}.html"
        seen = dom(game_page, tmp_path / "game.png" if i == 0 else None)
        assert check_links(game_page, seen) >= 2


def test_a_bot_given_a_profile_plays_with_the_profiles_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tournament knows its bot entrants by key, so `host/join --bot NAME --profile P`
    plays with P's key, the same in every game (before: a fresh key every game, whatever
    the profile, and a players file could name no bot). Without a profile a bot still makes
    a key of its own per game."""
    import argparse

    from allegra_lan.log.identity import PROFILE_ENV, load_or_create
    from allegra_lan.netcli import _identity

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    bot = argparse.Namespace(bot="greedy")
    assert _identity(bot).fingerprint != _identity(bot).fingerprint
    monkeypatch.setenv(PROFILE_ENV, "Ann")
    ann = load_or_create()[0].fingerprint
    assert _identity(bot).fingerprint == _identity(bot).fingerprint == ann
    monkeypatch.setenv(PROFILE_ENV, "Bob")
    assert _identity(bot).fingerprint != ann
