"""`allegra tournament check`: a folder of collected replays matched to the plan (issue 13).

Every replay is a real signed game (tests/tournament_games.py: LocalGame and
ReplayWriter); the command runs as a subprocess where its output and exit
status are what is tested, and `check_games` in-process where the matching
itself is (time order, file order).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.tools.verify import verify_file
from allegra_lan.tournament.check import Names, check_games
from allegra_lan.tournament.planfile import read_plan
from tournament_games import fp, write_game, write_plan, write_players

ROOT = Path(__file__).resolve().parents[1]
R1 = [["Ann", "Bob", "Cid", "Dan"], ["Eve", "Fay", "Gus"]]
R2 = [["Ann", "Eve", "Cid", "Gus"], ["Bob", "Fay", "Dan"]]


def check_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "check", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def table_line(out: str, r: int, t: int) -> str:
    found = [x for x in out.splitlines() if x.startswith(f"round {r} table {t}: ")]
    assert len(found) == 1, out
    return found[0]


def section(out: str, title: str) -> list[str]:
    if f"\n{title}:\n" not in out:
        return []
    return [x.strip() for x in out.split(f"\n{title}:\n")[1].split("\n\n")[0].splitlines()]


@pytest.fixture
def club(tmp_path: Path) -> Path:
    """A two-round plan of 7 players (keys in it) and a folder with every table played,
    each game in as many copies as it has seats (every peer's file), one copy cut short."""
    write_plan(tmp_path / "plan.json", [R1, R2])
    folder = tmp_path / "in"
    for k, seats in enumerate(R1 + R2):
        w = write_game(folder / f"g{k}-0.allegra", seats, seed=k, mtime=1000 + k)
        for c in range(1, len(seats)):
            shutil.copy2(w.path, folder / f"g{k}-{c}.allegra")
    return tmp_path


def test_every_table_played_passes_and_each_game_counts_once(club: Path) -> None:
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    for r in (1, 2):
        for t in (1, 2):
            line = table_line(done.stdout, r, t)
            assert ": played: game " in line and line.count(".allegra") in (3, 4), line
    assert "4 planned tables: 4 played; 0 findings that fail: the check passes" in done.stdout


def test_a_missing_table_and_a_game_not_in_the_plan(club: Path) -> None:
    for c in range(3):
        (club / "in" / f"g3-{c}.allegra").unlink()  # round 2 table 2 never arrived
    write_game(club / "in" / "friendly.allegra", ["Ann", "Bob"], seed=50)
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert done.returncode == 1, done.stdout
    assert table_line(done.stdout, 2, 2) == "round 2 table 2: missing (no game of Bob, Fay, Dan)"
    (friendly,) = section(done.stdout, "games not in the plan")
    assert "(ALLEGRA Grande, 2 seats) of Ann, Bob: not in the plan" in friendly and "friendly.allegra" in friendly


def test_a_friendly_alone_does_not_fail_the_check(club: Path) -> None:
    write_game(club / "in" / "friendly.allegra", ["Ann", "Bob", "Cid"], seed=51)
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert done.returncode == 0, done.stdout
    assert len(section(done.stdout, "games not in the plan")) == 1


def test_wrong_players_name_who_was_planned_and_who_sat(club: Path) -> None:
    for c in range(4):
        (club / "in" / f"g2-{c}.allegra").unlink()
    write_game(club / "in" / "sub.allegra", ["Ann", "Eve", "Cid", "Hal"], seed=60)  # Hal sat for Gus
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert done.returncode == 1
    assert table_line(done.stdout, 2, 1).startswith("round 2 table 1: wrong players (below): game ")
    (wrong,) = section(done.stdout, "wrong players")
    hal = fp("Hal")
    assert wrong.startswith(f"round 2 table 1: wrong players: planned Ann, Eve, Cid, Gus; "
                            f"sat Ann, Eve, Cid, {hal} (as Hal) ({hal} (as Hal) for Gus): game "), wrong
    assert section(done.stdout, "keys not in the plan") == [f"{hal} (seated as Hal; 1 game)"]
    # with a players file that names Hal, Hal is a name
    players = write_players(club / "players.csv", ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal"])
    named = check_cli("--plan", club / "plan.json", "--players", players, club / "in")
    (wrong,) = section(named.stdout, "wrong players")
    assert "sat Ann, Eve, Cid, Hal (Hal for Gus)" in wrong, wrong
    assert "keys not in" not in named.stdout


def test_a_game_of_half_the_planned_players_is_not_the_tables(club: Path) -> None:
    """Two of four seats are not a majority: the game is not in the plan, the table missing."""
    for c in range(4):
        (club / "in" / f"g2-{c}.allegra").unlink()
    write_game(club / "in" / "two.allegra", ["Ann", "Eve", "Hal", "Bob"], seed=61)
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert table_line(done.stdout, 2, 1).startswith("round 2 table 1: missing")
    assert len(section(done.stdout, "games not in the plan")) == 1
    assert "wrong players" not in done.stdout


def test_the_same_players_at_two_tables_are_matched_in_time_order(tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", [[["Ann", "Bob", "Cid"]], [["Cid", "Bob", "Ann"]]])
    first = write_game(tmp_path / "in" / "z-first.allegra", ["Ann", "Bob", "Cid"], seed=1, mtime=5000)
    later = write_game(tmp_path / "in" / "a-later.allegra", ["Cid", "Bob", "Ann"], seed=2, mtime=9000)
    names = Names(read_plan(plan))

    def tables() -> list[str]:
        c = check_games(read_plan(plan), [verify_file(p) for p in sorted((tmp_path / "in").iterdir())], names)
        assert c.ok, [t.line() for t in c.tables]
        return [t.game.game for t in c.tables if t.game]

    assert tables() == [first.game, later.game]
    os.utime(first.path, (10000, 10000))  # now the other game was first
    assert tables() == [later.game, first.game]


def test_unfinished_games_of_the_same_players_take_their_tables_in_time_order(tmp_path: Path) -> None:
    plan = read_plan(write_plan(tmp_path / "plan.json", [[["Ann", "Bob", "Cid"]], [["Cid", "Bob", "Ann"]]]))
    first = write_game(tmp_path / "in" / "z.allegra", ["Ann", "Bob", "Cid"], seed=1, limit=9, mtime=5000)
    later = write_game(tmp_path / "in" / "a.allegra", ["Ann", "Bob", "Cid"], seed=2, limit=9, mtime=9000)
    for when, want in ((None, [first.game, later.game]), (10000, [later.game, first.game])):
        if when is not None:
            os.utime(first.path, (when, when))
        c = check_games(plan, [verify_file(p) for p in sorted((tmp_path / "in").iterdir())], Names(plan))
        assert [t.status for t in c.tables] == ["unfinished", "unfinished"]
        assert [t.game.game for t in c.tables if t.game] == want


def test_another_seat_order_is_noted_not_refused(tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", [[["Ann", "Bob", "Cid"]]])
    write_game(tmp_path / "in" / "g.allegra", ["Bob", "Ann", "Cid"], seed=3)
    done = check_cli("--plan", plan, tmp_path / "in")
    assert done.returncode == 0
    assert table_line(done.stdout, 1, 1).endswith("; seated in another order: Bob, Ann, Cid")


def test_a_game_of_the_other_variant_is_not_in_the_plan(tmp_path: Path) -> None:
    plan = write_plan(tmp_path / "plan.json", [[["Ann", "Bob", "Cid"]]])
    write_game(tmp_path / "in" / "g.allegra", ["Ann", "Bob", "Cid"], seed=3, variant="allegra")
    done = check_cli("--plan", plan, tmp_path / "in")
    assert done.returncode == 1
    assert table_line(done.stdout, 1, 1).startswith("round 1 table 1: missing")
    (other,) = section(done.stdout, "games not in the plan")
    assert "(ALLEGRA, 3 seats)" in other


def test_unfinished_disputed_and_unverified_are_findings(club: Path) -> None:
    folder = club / "in"
    # round 1 table 2: only a copy cut short by a crash (its peers' whole files lost)
    for c in range(3):
        (folder / f"g1-{c}.allegra").unlink()
    write_game(folder / "g1-cut.allegra", R1[1], seed=1, limit=15)
    # round 2 table 1: two copies that part (another history of the same game)
    (folder / "g2-3.allegra").unlink()
    write_game(folder / "g2-other.allegra", R2[0], seed=2, moves_seed=99)
    # a flipped byte in one copy of round 2 table 2
    blob = bytearray((folder / "g3-2.allegra").read_bytes())
    blob[-20] = ord("A") if blob[-20] != ord("A") else ord("B")
    (folder / "g3-2.allegra").write_bytes(bytes(blob))
    done = check_cli("--plan", club / "plan.json", folder)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert table_line(out, 1, 1).startswith("round 1 table 1: played")
    assert table_line(out, 1, 2).startswith("round 1 table 2: unfinished: game ")
    assert table_line(out, 2, 1).startswith("round 2 table 1: disputed: game ")
    assert table_line(out, 2, 2).startswith("round 2 table 2: played")  # from its two good copies
    (unfinished,) = section(out, "unfinished games")
    assert unfinished.startswith("round 1 table 2: game ") and "unfinished (the longest copy ends after seq" in unfinished
    (disputed,) = section(out, "copies that disagree")
    assert disputed.startswith("round 2 table 1: game ") and "copies disagree from seq " in disputed
    assert "g2-other.allegra" in disputed
    (flipped,) = section(out, "unverified files")
    assert flipped.startswith(f"FAIL {folder / 'g3-2.allegra'}  seq ") and \
        flipped.endswith("(a copy of round 2 table 2's game, counted from its other copies)")
    assert "4 planned tables: 2 played, 1 unfinished, 1 disputed; 3 findings that fail" in out


def test_a_file_that_is_not_a_replay_is_bad_input_and_the_rest_is_still_checked(club: Path) -> None:
    """The one exit rule of every command: a file that cannot be read as a replay is 2 and
    a stderr line (as for replay verify and standings), the report of the others printed."""
    junk = club / "in" / "junk.allegra"
    junk.write_text("not a replay\n", encoding="utf-8")
    done = check_cli("--plan", club / "plan.json", club / "in")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"allegra tournament check: error: {junk}: ") and \
        len(done.stderr.splitlines()) == 1, done.stderr
    assert "4 planned tables: 4 played; 0 findings that fail: the check passes" in done.stdout
    ranked = subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "standings", "--plan",
                             str(club / "plan.json"), str(club / "in")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert ranked.returncode == 2 and ranked.stderr.startswith(f"allegra tournament standings: error: {junk}: ")
    assert "4 of 4 planned tables counted" in ranked.stdout


def test_csv_has_a_row_per_table_and_a_row_per_finding(club: Path) -> None:
    for c in range(3):
        (club / "in" / f"g3-{c}.allegra").unlink()
    write_game(club / "in" / "friendly.allegra", ["Ann", "Hal"], seed=52)
    done = check_cli("--plan", club / "plan.json", club / "in", "--format", "csv")
    assert done.returncode == 1
    assert "4 planned tables: 3 played, 1 missing" in done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert list(rows[0]) == ["round", "table", "status", "game", "planned", "seated", "files", "detail"]
    tables = rows[:4]
    assert [(r["round"], r["table"], r["status"]) for r in tables] == [
        ("1", "1", "played"), ("1", "2", "played"), ("2", "1", "played"), ("2", "2", "missing")]
    assert tables[0]["planned"] == tables[0]["seated"] == "Ann; Bob; Cid; Dan"
    assert len(tables[0]["files"].split("; ")) == 4
    assert [r["status"] for r in rows[4:]] == ["not in the plan", "unknown key"]
    assert rows[5]["detail"] == f"{fp('Hal')} (seated as Hal; 1 game)"


BAD_PLAN = [
    ("missing", None, "No such file"),
    ("not-json", "{", "not JSON"),
    ("not-a-plan", '{"format": "x"}', "not a tournament plan"),
]


@pytest.mark.parametrize("label,text,words", BAD_PLAN, ids=[b[0] for b in BAD_PLAN])
def test_a_bad_plan_is_one_line_and_status_2(club: Path, label: str, text: str | None, words: str) -> None:
    plan = club / f"{label}.json"
    if text is not None:
        plan.write_text(text, encoding="utf-8")
    done = check_cli("--plan", plan, club / "in")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("allegra tournament check: error: ") and words in done.stderr


def test_bad_input_is_one_line_and_status_2(club: Path) -> None:
    def refused(*args: str | Path) -> str:
        done = check_cli(*args)
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
        return done.stderr

    plan = club / "plan.json"
    bad = club / "bad.csv"
    bad.write_text("Ann,not-a-key\n", encoding="utf-8")
    assert "not a key fingerprint" in refused("--plan", plan, "--players", bad, club / "in")
    clash = club / "clash.csv"
    clash.write_text(f"Bob,{fp('Ann')}\n", encoding="utf-8")
    assert f"the key {fp('Ann')} is Ann's in the plan but Bob's in {clash}" in \
        refused("--plan", plan, "--players", clash, club / "in")
    bare = write_plan(club / "bare.json", [R1], keys=False)
    assert "the plan names no keys" in refused("--plan", bare, club / "in")
    assert "no such file or directory" in refused("--plan", plan, club / "nowhere")
    assert "--plan" in refused(club / "in")
    assert "invalid choice" in refused("--plan", plan, club / "in", "--format", "xml")
    # a plan of names and a players file: the keys come from the file
    players = write_players(club / "players.csv", ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus"])
    bare2 = write_plan(club / "bare2.json", [R1, R2], keys=False)
    assert check_cli("--plan", bare2, "--players", players, club / "in").returncode == 0


def test_help_says_the_exit_codes() -> None:
    done = subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "check", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0 and "Exit status 0" in text and "1 the check found" in text and "2 bad input" in text


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> list:
    """The verdicts of a folder with copies, a dispute-free friendly and a cut copy."""
    base = tmp_path_factory.mktemp("order")
    out = []
    for k, seats in enumerate(R1 + R2):
        w = write_game(base / f"g{k}.allegra", seats, seed=k, mtime=2000 + k)
        shutil.copy2(w.path, base / f"g{k}-copy.allegra")
    write_game(base / "cut.allegra", R1[0], seed=0, limit=10)
    write_game(base / "friendly.allegra", ["Ann", "Hal", "Bob"], seed=70)
    for p in sorted(base.glob("*.allegra")):
        out.append(verify_file(p))
    assert len(out) == 10
    return out


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(10)))
def test_the_files_order_does_not_change_the_check(verdicts: list, order: list[int]) -> None:
    plan = read_plan(write_plan(Path(verdicts[0].path).parent / "plan.json", [R1, R2]))
    names = Names(plan)
    base = check_games(plan, verdicts, names)
    shuffled = check_games(plan, [verdicts[i] for i in order], names)
    assert base.ok and shuffled.ok
    assert [(t.status, t.game.game if t.game else "") for t in base.tables] == \
        [(t.status, t.game.game if t.game else "") for t in shuffled.tables]
    assert sorted(f.kind for f in base.findings) == sorted(f.kind for f in shuffled.findings)
    assert base.unknown == shuffled.unknown


PEOPLE = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", None]  # None: a key nobody named


@st.composite
def games_st(draw: st.DrawFn) -> list:
    """Arbitrary games (finished, unfinished or disputed) of 3 or 4 seats, of either variant,
    seated by the plan's players, strangers or one player twice, at arbitrary times."""
    from allegra_lan.tournament.check import Seat, Seen

    out = []
    for k in range(draw(st.integers(0, 9))):
        size = draw(st.sampled_from([3, 4]))
        who = draw(st.lists(st.sampled_from(PEOPLE), min_size=size, max_size=size))
        seats = tuple(Seat(n, f"KEY{k}{i}", n or "stranger") for i, n in enumerate(who))
        out.append(Seen(f"{k:032x}", draw(st.sampled_from(["grande", "allegra"])), seats, [f"f{k}"],
                        status=draw(st.sampled_from(["played", "played", "unfinished", "disputed"])),
                        when=("", float(draw(st.integers(0, 5))), f"{k:032x}")))
    return out


@settings(max_examples=200, deadline=None)
@given(games=games_st())
def test_matching_places_each_game_once_and_only_where_it_belongs(games: list) -> None:
    from allegra_lan.tournament.check import match
    from allegra_lan.tournament.plan import Plan, PlanPlayer, allowed_sizes

    plan = Plan("grande", 1, allowed_sizes("grande"), 4,
                tuple(PlanPlayer(n) for n in PEOPLE if n), ((tuple(R1[0]), tuple(R1[1])), (tuple(R2[0]), tuple(R2[1]))))
    tables, outside = match(plan, games)
    placed = [t.game.game for t in tables if t.game is not None]
    assert len(placed) == len(set(placed))  # a game at one table at most
    assert not set(placed) & {g.game for g in outside}
    assert {g.game for g in outside} <= {g.game for g in games if g.status == "played"}
    for t in tables:
        g = t.game
        if g is None:
            assert t.status == "missing"
            continue
        assert g.variant == "grande" and len(g.seats) == len(t.planned)
        if t.status == "wrong players":
            assert g.status == "played" and 2 * len(g.names & set(t.planned)) > len(g.seats)
            assert g.names != set(t.planned) or len(g.names) < len(g.seats)
        else:
            assert t.status == g.status and g.names == set(t.planned) and len(g.names) == len(g.seats)
    # a finished game of exactly a table's players is never left outside while that table is
    # missing or holds a game that is not exactly its own
    for g in outside:
        for t in tables:
            if g.variant == "grande" and len(g.seats) == len(t.planned) and g.names == set(t.planned) \
                    and len(g.names) == len(g.seats):
                assert t.status == "played", (g, t)
