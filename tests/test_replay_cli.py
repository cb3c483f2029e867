"""The `allegra` command end to end: real subprocesses on the files `allegra simulate` writes.

Every test runs `python -m allegra_lan ...` as a user would, with the config
and data directories pointed into a temporary directory, and reads only what
the command prints and writes: that replays verify and rebuild the scores the
simulation printed, that a flipped byte is named by its seq, that the tools
agree with each other, and that bad arguments get one line and exit status 2.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from allegra_lan.local import simulated_setup
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import read_replay, write_replay
from allegra_lan.rules import legal_moves, move_from_dict, to_act
from allegra_lan.table import Table, fold, move_body

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = json.loads((ROOT / "replays" / "manifest.json").read_text(encoding="utf-8"))
FINGERPRINT = re.compile(r"[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}")
SEAT_ROW = re.compile(r"\s*(\d+)\s+(\S+)\s+(\d+)\s+\d\.\d\d \(\d\.\d\d-\d\.\d\d\)\s+(-?\d+\.\d\d)\s+(\d+\.\d\d)")
OK_LINE = re.compile(r"OK  (\S+)  \((\d+) events, finished: ([-\d ]+); results signed by every seat\)")

# Two small simulations: ALLEGRA with knocking (3 seats) and Grande with 2.
SIMS = {
    "allegra": ["--variant", "allegra", "--players", "3", "--games", "3", "--seed", "11",
                "--bots", "greedy,random,greedy"],
    "grande": ["--variant", "grande", "--players", "2", "--games", "2", "--seed", "12",
               "--bots", "greedy"],
}


def environment(home: Path) -> dict[str, str]:
    """The user's environment with the key and data directories inside the test's own."""
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["XDG_DATA_HOME"] = str(home / "data")
    env["HOME"] = str(home)
    env.pop("PYTHONHASHSEED", None)
    return env


def allegra(home: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan", *map(str, args)], cwd=home,
                          env=environment(home), capture_output=True, text=True, timeout=120)


@dataclass
class Sim:
    """One `allegra simulate --out` run: what it printed and the replays it wrote."""

    args: list[str]
    stdout: str
    files: list[Path]


@dataclass
class World:
    home: Path
    replays: Path  # holds allegra/ and grande/
    sims: dict[str, Sim]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    home = tmp_path_factory.mktemp("home")
    replays = home / "replays"
    sims = {}
    for variant, args in SIMS.items():
        out = replays / variant
        p = allegra(home, "simulate", *args, "--out", out)
        assert p.returncode == 0, p.stderr
        assert p.stderr == ""
        files = sorted(out.glob("*.allegra"))
        games = int(args[args.index("--games") + 1])
        assert len(files) == games
        assert p.stdout.endswith(f"\nwrote {games} signed replays to {out}\n")
        sims[variant] = Sim(args, p.stdout, files)
    return World(home, replays, sims)


def seat_rows(summary: str) -> list[tuple[int, str, int, str]]:
    """(seat, bot, wins, mean total as printed) from a simulate summary."""
    rows = []
    for line in summary.splitlines():
        m = SEAT_ROW.fullmatch(line)
        if m:
            rows.append((int(m[1]), m[2], int(m[3]), m[4]))
    return rows


def flip_in_event(src: Path, dst: Path, seq: int) -> Path:
    """A copy of `src` with one base64 character of event `seq`'s line changed (a flipped byte)."""
    data = bytearray(src.read_bytes())
    start = data.index(b"\n\n") + 2
    lines = data[start:].split(b"\n")
    i = start + sum(len(line) + 1 for line in lines[:seq]) + len(lines[seq]) // 2
    data[i] = ord("B") if data[i] != ord("B") else ord("C")
    dst.write_bytes(bytes(data))
    return dst


def one_error_line(p: subprocess.CompletedProcess[str], prog: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


# ------------------------------------------------------------------ simulate, then verify


def test_simulated_replays_verify_and_rebuild_the_printed_scores(world: World) -> None:
    for variant, sim in world.sims.items():
        p = allegra(world.home, "replay", "verify", world.replays / variant)
        assert p.returncode == 0, p.stdout
        lines = p.stdout.splitlines()
        n = len(sim.files)
        assert lines[-1] == f"{n} files: {n} OK, 0 failed"
        totals: list[list[int]] = []
        for line, path in zip(lines[:-1], sim.files, strict=True):
            m = OK_LINE.fullmatch(line)
            assert m, line
            assert Path(m[1]) == path
            totals.append([int(t) for t in m[3].split()])
            # The fold of the file agrees with what verify printed.
            table, fault = fold(read_replay(path).events)
            assert fault is None and table.state is not None
            assert table.seq == int(m[2]) and list(table.state.totals) == totals[-1]
        # Per seat: wins (shared wins count for each, R11) and mean total, as simulate printed them.
        rows = seat_rows(sim.stdout)
        assert [r[0] for r in rows] == list(range(len(totals[0])))
        for seat, _bot, wins, mean in rows:
            won = sum(1 for t in totals if t[seat] == min(t))
            assert wins == won
            assert mean == f"{sum(t[seat] for t in totals) / len(totals):.2f}"


def test_standings_csv_sums_the_same_games(world: World) -> None:
    """One table per variant and seat count; simulate's seats are bots (greedy-0, random-1),
    counted under their bot kind (issue 13)."""
    p = allegra(world.home, "replay", "standings", world.replays, "--format", "csv")
    assert p.returncode == 0 and p.stderr == ""
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert list(rows[0]) == ["variant", "seats", "rank", "player", "fingerprint", "games", "wins", "total",
                             "mean", "rating", "sigma", "ordinal"]
    expected: dict[tuple[str, str, str], dict[str, Any]] = {}
    for sim in world.sims.values():
        for path in sim.files:
            table, _ = fold(read_replay(path).events)
            assert table.genesis is not None and table.state is not None
            totals = table.state.totals
            for seat, info in enumerate(table.genesis.seats):
                kind = re.fullmatch(r"(greedy|random)(-\d+)?", info.name)
                who = kind.group(1) if kind else info.name
                e = expected.setdefault((str(table.genesis.ruleset["variant"]), str(len(totals)), who),
                                        {"games": 0, "wins": 0, "total": 0})
                e["games"] += 1
                e["wins"] += totals[seat] == min(totals)
                e["total"] += totals[seat]
    assert len(rows) == len(expected)
    for row in rows:
        e = expected[(row["variant"], row["seats"], row["player"])]
        assert (int(row["games"]), int(row["wins"]), int(row["total"])) == (e["games"], e["wins"], e["total"])
        assert row["mean"] == f"{e['total'] / e['games']:.2f}"
    # Sorted by wins, then mean, in each table.
    for table in {(r["variant"], r["seats"]) for r in rows}:
        keys = [(-int(r["wins"]), float(r["mean"])) for r in rows if (r["variant"], r["seats"]) == table]
        assert keys == sorted(keys)


def test_jobs_2_prints_what_one_job_prints(world: World) -> None:
    bad = world.home / "jobs"
    bad.mkdir()
    flip_in_event(world.sims["allegra"].files[1], bad / "flipped.allegra", 30)
    one = allegra(world.home, "replay", "verify", world.replays, bad)
    two = allegra(world.home, "replay", "verify", "--jobs", "2", world.replays, bad)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    assert one.stdout.splitlines()[-1] == "6 files: 5 OK, 1 failed"
    assert f"FAIL {bad / 'flipped.allegra'}  seq 30: " in one.stdout


def test_copies_of_a_file_are_each_named_with_the_verdict_of_its_bytes(world: World) -> None:
    """A tournament's folder holds every seat's copy of a game, and `verify_many` verifies
    equal bytes once: each copy is still named, in order, with the verdict of its own bytes,
    also beside a file of the same size whose bytes differ (a flipped byte), with any --jobs."""
    import shutil

    d = world.home / "copies"
    d.mkdir()
    src = world.sims["grande"].files[0]
    shutil.copy(src, d / "a.allegra")
    flip_in_event(src, d / "b-flipped.allegra", 7)
    shutil.copy(src, d / "c.allegra")
    shutil.copy(d / "b-flipped.allegra", d / "d-flipped.allegra")
    one = allegra(world.home, "replay", "verify", d)
    two = allegra(world.home, "replay", "verify", "--jobs", "2", d)
    assert one.returncode == two.returncode == 1
    assert one.stdout == two.stdout
    lines = one.stdout.splitlines()
    assert lines[-1] == "4 files: 2 OK, 2 failed"
    assert [line.split()[:2] for line in lines[:-1]] == [
        ["OK", str(d / "a.allegra")], ["FAIL", str(d / "b-flipped.allegra")],
        ["OK", str(d / "c.allegra")], ["FAIL", str(d / "d-flipped.allegra")]]
    rest = [line.split(None, 2)[2] for line in lines[:-1]]
    assert rest[0] == rest[2] and rest[1] == rest[3] and rest[1].startswith("seq 7: ")


def test_a_flipped_byte_is_named_by_its_seq(world: World) -> None:
    src = world.sims["grande"].files[0]
    n = len(read_replay(src).events)
    for seq in (0, 7, n // 2, n - 1):
        bad = flip_in_event(src, world.home / f"flip{seq}.allegra", seq)
        p = allegra(world.home, "replay", "verify", bad)
        assert p.returncode == 1
        first, summary = p.stdout.splitlines()
        assert first.startswith(f"FAIL {bad}  seq {seq}: "), first
        assert summary == "1 file: 0 OK, 1 failed"


def test_simulate_writes_the_golden_game_but_for_its_date(world: World) -> None:
    """A golden game played by registry bots is what `allegra simulate` writes today, but for
    the Date tag and what the version with signed results adds (issue 13): the genesis's start
    time and every seat's result after each round. So its events are signed anew, but its game
    id, seats, every move (a give's knock names its draw by id, so it is signed anew too) and
    the final state are the golden game's."""
    entry = next(e for e in MANIFEST["replays"] if e["file"] == "golden/allegra-2p-knocks.allegra")
    assert entry["made"] == "simulate" and entry["rules"] == {}  # today's default rules
    out = world.home / "golden-again"
    p = allegra(world.home, "simulate", "--variant", entry["variant"], "--players",
                str(entry["players"]), "--seed", str(entry["seed"]), "--games", str(entry["game"] + 1),
                "--bots", ",".join(entry["bots"]), "--out", out)
    assert p.returncode == 0, p.stderr
    made = sorted(out.glob("*.allegra"))[entry["game"]].read_text(encoding="utf-8").splitlines()
    golden = (ROOT / "replays" / entry["file"]).read_text(encoding="utf-8").splitlines()
    date = [i for i, line in enumerate(golden) if line.startswith("[Date ")]
    assert len(date) == 1 and made[date[0]].startswith("[Date ")
    del made[date[0]], golden[date[0]]
    cut = golden.index("")
    assert made[:cut] == golden[:cut]  # the header: game, seats, Result, Winners
    new, _ = fold(read_replay(sorted(out.glob("*.allegra"))[entry["game"]]).events)
    old, _ = fold(read_replay(ROOT / "replays" / entry["file"]).events)
    assert new.signs_results and not old.signs_results
    assert new.state_hash() == old.state_hash() == entry["state_hash"]

    def plays(t: Table) -> list[tuple[str, object]]:
        return [(e.kind, {k: v for k, v in e.body.items() if k not in ("started", "knock")})
                for e in t.events if e.kind != "result"]
    assert plays(new) == plays(old)
    assert len(new.events) == len(old.events) + 2 * len(new.results) == len(old.events) + 2 * 3


# ------------------------------------------------------------------ show and export


def test_show_as_a_seat_and_with_every_card(world: World) -> None:
    path = world.sims["allegra"].files[0]
    seat = allegra(world.home, "replay", "show", path, "--at", "30", "--seat", "1")
    every = allegra(world.home, "replay", "show", path, "--at", "30", "--all")
    for p in (seat, every):
        assert p.returncode == 0 and p.stderr == ""
        assert p.stdout.startswith("after seq 30 by seat ")
        assert "ALLEGRA, 3 players, round 1 of 3" in p.stdout
    assert "as seat 1 random-1 sees it" in seat.stdout
    assert "every card shown (closed ones as ?N)" in every.stdout
    # Closed cards: `?` for the seat (no peeks in ALLEGRA), `?7` with every card shown.
    closed_values = re.compile(r"\?-?\d+")
    assert closed_values.search(every.stdout) and not closed_values.search(seat.stdout)
    assert re.search(r"(?m)^\s+\d\s.*\?", seat.stdout)
    # The end of the game, by default.
    end = allegra(world.home, "replay", "show", path)
    assert end.returncode == 0 and "game over: " in end.stdout


def test_export_jsonl_one_object_per_event_with_state_hashes(world: World) -> None:
    path = world.sims["grande"].files[1]
    p = allegra(world.home, "replay", "export", path, "--format", "jsonl")
    assert p.returncode == 0 and p.stderr == ""
    records = [json.loads(line) for line in p.stdout.splitlines()]
    table, fault = fold(read_replay(path).events)
    assert fault is None
    assert len(records) == table.seq
    setup = 1 + 3 * 2  # genesis, then accept, commit and reveal per seat
    names = {"greedy-0", "greedy-1"}
    for i, rec in enumerate(records):
        assert rec["seq"] == i and rec["id"] == table.events[i].id.hex()
        assert rec["prev"] == (records[i - 1]["id"] if i else "00" * 32)
        assert rec["name"] in names and FINGERPRINT.fullmatch(rec["author"])
        if i < setup - 1:
            assert rec["state_hash"] is None  # not dealt before the last reveal
        else:
            assert re.fullmatch(r"[0-9a-f]{32}", rec["state_hash"]), rec
    assert [r["kind"] for r in records[:setup]] == ["genesis", "accept", "accept", "commit", "commit",
                                                    "reveal", "reveal"]
    assert records[-1]["state_hash"] == table.state_hash()
    assert len({r["state_hash"] for r in records[setup:]}) > len(records[setup:]) // 2


# ------------------------------------------------------------------ diff


def changed_move(src: Path, dst: Path, seq: int) -> Path:
    """A copy of `src` whose event `seq` is another legal move, signed by the same seat's key:
    an alternative history, as a peer that parted from the others would hold."""
    events = read_replay(src).events
    table, fault = fold(events[:seq])
    assert fault is None and table.state is not None and table.game is not None
    d = to_act(table.state)
    assert d is not None
    original = fold(events[:seq + 1])[0].events[seq]
    played = move_from_dict({"move": original.kind, **original.body})
    other = next(m for m in legal_moves(table.state) if m != played)
    kind, body = move_body(other)
    setup = simulated_setup(12, 0, table.players)  # the grande simulation's bot keys (seed 12)
    ev = sign_event(setup.identities[d.seat].key, game=table.game, seq=seq, prev=table.head,
                    kind=kind, body=body)
    write_replay(dst, {"Result": "*"}, events[:seq] + [ev.signed])
    return dst


def test_diff_same_different_and_unreadable(world: World) -> None:
    a, other = world.sims["grande"].files
    n = len(read_replay(a).events)
    p = allegra(world.home, "diff", a, a)
    assert (p.returncode, p.stderr) == (0, "")
    assert p.stdout.splitlines()[0] == f"same: both logs hold the same {n} events"
    # Another game of the simulation: another game id from the very first event.
    p = allegra(world.home, "diff", a, other)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0] == "different: the logs part at seq 0"
    # A tampered copy: the flipped event's seq.
    flipped = flip_in_event(a, world.home / "diff-flip.allegra", 40)
    p = allegra(world.home, "diff", a, flipped)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0] == "different: the logs part at seq 40"
    # One move changed and signed again: both events are taken, the logs part there.
    alt = changed_move(a, world.home / "diff-alt.allegra", 25)
    p = allegra(world.home, "diff", a, alt)
    assert p.returncode == 1
    lines = p.stdout.splitlines()
    assert lines[0] == "different: the logs part at seq 25"
    verdict = next(line for line in lines if line.split()[:1] == ["verdict"])
    assert verdict.split() == ["verdict", "taken", "taken"]
    assert lines[-1] == f"after seq 25: A has {n - 26} more events (to seq {n - 1}); B has nothing after it"
    # Unreadable: not a replay, and no file at all.
    junk = world.home / "junk.allegra"
    junk.write_text("hello\n", encoding="utf-8")
    assert "junk.allegra" in one_error_line(allegra(world.home, "diff", a, junk), "allegra diff")
    missing = world.home / "missing.allegra"
    assert "missing.allegra" in one_error_line(allegra(world.home, "diff", missing, a), "allegra diff")


# ------------------------------------------------------------------ allegra id


def test_id_makes_a_private_key_once_and_keeps_its_fingerprint(tmp_path: Path) -> None:
    first = allegra(tmp_path, "id")
    assert first.returncode == 0
    key = tmp_path / "config" / "allegra-lan" / "identity.key"
    assert first.stderr == f"made a new key pair in {key.parent}\n"
    fp = first.stdout.strip()
    assert first.stdout == fp + "\n" and FINGERPRINT.fullmatch(fp)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert re.fullmatch(r"[0-9a-f]{64}\n", key.read_text(encoding="ascii"))
    second = allegra(tmp_path, "id", "--verbose")
    assert second.returncode == 0 and second.stderr == ""
    lines = second.stdout.splitlines()
    assert lines[0] == fp
    public = bytes.fromhex(lines[1].removeprefix("public key: "))
    assert fingerprint(public) == fp
    assert lines[2] == f"key file:   {key}"
    # Another home, another key.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    other = allegra(elsewhere, "id")
    assert other.returncode == 0 and FINGERPRINT.fullmatch(other.stdout.strip())
    assert other.stdout.strip() != fp


# ------------------------------------------------------------------ bad arguments


BAD = [
    (["replay", "show", "{file}", "--seat", "0", "--all"], "allegra replay show", "not allowed with"),
    (["replay", "show", "{file}", "--at", "99999"], "allegra replay show", "--at 99999 is not in the log"),
    (["replay", "show", "{file}", "--seat", "7"], "allegra replay show", "--seat 7"),
    (["replay", "verify", "--jobs", "0", "{dir}"], "allegra replay verify", "--jobs must be 1 or more, not 0"),
    (["replay", "verify", "--jobs", "two", "{dir}"], "allegra replay verify", "--jobs needs a whole number"),
    (["replay", "standings", "{dir}", "--jobs", "0"], "allegra replay standings", "--jobs must be 1 or more"),
    (["replay", "export", "{file}", "--format", "xml"], "allegra replay export", "invalid choice: 'xml'"),
    (["replay", "standings", "{dir}", "--format", "xml"], "allegra replay standings", "invalid choice: 'xml'"),
    (["replay", "verify", "{missing}"], "allegra replay verify", "no such file or directory"),
    (["replay", "show", "{missing}"], "allegra replay show", "missing.allegra"),
    (["replay", "export", "{missing}"], "allegra replay export", "missing.allegra"),
    (["replay", "standings", "{missing}"], "allegra replay standings", "no such file or directory"),
    (["replay", "verify", "{empty}"], "allegra replay verify", "no .allegra files in the directory"),
    (["diff", "{file}"], "allegra diff", "the following arguments are required: B"),
    (["replay"], "allegra replay", "choose a tool"),
]


@pytest.mark.parametrize(("argv", "prog", "message"), BAD, ids=[" ".join(a) for a, _, _ in BAD])
def test_bad_arguments_one_line_exit_2(world: World, argv: list[str], prog: str, message: str) -> None:
    empty = world.home / "empty"
    empty.mkdir(exist_ok=True)
    where = {"file": str(world.sims["allegra"].files[0]), "dir": str(world.replays),
             "missing": str(world.home / "missing.allegra"), "empty": str(empty)}
    p = allegra(world.home, *[a.format(**where) for a in argv])
    assert p.stdout == ""
    assert message in one_error_line(p, prog)


# ------------------------------------------------------------------ a crash while writing


def test_a_simulate_replay_cut_short_by_a_crash_verifies_as_unfinished(tmp_path: Path) -> None:
    """Issue 3: a file cut short by a crash is still a valid prefix that every tool reads.

    The crash is real: simulate runs with the driver's move limit lowered, so play_game
    raises in the middle of the game, after some events were written and flushed."""
    out = tmp_path / "out"
    code = ("import sys, allegra_lan.bots.driver as d; d.MAX_MOVES = 60; "
            "from allegra_lan.cli import main; sys.exit(main(sys.argv[1:]))")
    p = subprocess.run([sys.executable, "-c", code, "simulate", "--variant", "allegra", "--players", "3",
                        "--games", "1", "--seed", "5", "--out", str(out)],
                       cwd=tmp_path, env=environment(tmp_path), capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "did not end within 60 moves" in p.stderr
    (path,) = sorted(out.glob("*.allegra"))
    events = read_replay(path).events
    assert len(events) == 10 + 60  # the setup of 3 seats, then the moves made before the crash
    v = allegra(tmp_path, "replay", "verify", path)
    assert v.stdout.splitlines()[0] == f"OK  {path}  (unfinished after seq {len(events) - 1})"
    assert v.returncode == 0
