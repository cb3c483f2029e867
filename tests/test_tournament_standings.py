"""`allegra tournament standings`: points per table over the games check matched (issue 13).

The expected figures are computed here from the games' own final totals (as
LocalGame played them), with the scheme docs/tournaments.md argues: the share
of opponents beaten (a tie half), the opponents' mean minus one's own as the
tie-break, and openskill's Plackett-Luce model rated here in time order.
"""

from __future__ import annotations

import csv
import io
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.tournament.points import ranks, Row, table_margins, table_points
from tournament_games import Written, write_game, write_plan, write_players

ROOT = Path(__file__).resolve().parents[1]
R1 = [["Ann", "Bob", "Cid", "Dan"], ["Eve", "Fay", "Gus"]]
R2 = [["Ann", "Eve", "Cid", "Gus"], ["Bob", "Fay", "Dan"]]
R3 = [["Dan", "Gus", "Fay", "Ann"], ["Cid", "Bob", "Eve"]]
PLAYERS = ("Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus")


def standings_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "standings", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def expected(games: list[Written]) -> dict[str, tuple[int, Fraction, Fraction]]:
    out = {n: (0, Fraction(0), Fraction(0)) for n in PLAYERS}
    for g in games:
        n = len(g.totals)
        for seat, name in enumerate(g.names):
            mine = g.totals[seat]
            others = g.totals[:seat] + g.totals[seat + 1:]
            share = (sum(1 for o in others if o > mine) + Fraction(sum(1 for o in others if o == mine), 2)) / (n - 1)
            k, p, m = out[name]
            out[name] = (k + 1, p + share, m + Fraction(sum(others), n - 1) - mine)
    return out


@pytest.fixture
def club(tmp_path: Path) -> tuple[Path, list[Written]]:
    """Three rounds planned and played, two copies of every game, in time order by mtime."""
    write_plan(tmp_path / "plan.json", [R1, R2, R3])
    games = []
    for k, seats in enumerate(R1 + R2 + R3):
        w = write_game(tmp_path / "in" / f"g{k}.allegra", seats, seed=k, mtime=1000 + 10 * k)
        shutil.copy2(w.path, tmp_path / "in" / f"g{k}-copy.allegra")
        games.append(w)
    return tmp_path, games


def rows(out: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(out)))


def test_standings_are_the_points_and_margins_of_the_planned_games(club: tuple[Path, list[Written]]) -> None:
    base, games = club
    done = standings_cli("--plan", base / "plan.json", base / "in", "--format", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    want = expected(games)
    got = rows(done.stdout)
    assert list(got[0]) == ["rank", "player", "games", "wins", "points", "margin", "rating", "sigma", "ordinal"]
    assert sorted(r["player"] for r in got) == sorted(PLAYERS)
    for r in got:
        k, p, m = want[r["player"]]
        assert (int(r["games"]), r["points"], r["margin"]) == (k, f"{float(p):.4f}", f"{float(m):.4f}"), r
    keys = [(-want[r["player"]][1], -want[r["player"]][2]) for r in got]
    assert keys == sorted(keys), "not in order of points, then margin"
    for prev, cur in zip(got, got[1:]):
        same = want[prev["player"]][1:] == want[cur["player"]][1:]
        assert (prev["rank"] == cur["rank"]) == same


def test_ratings_are_openskill_over_the_games_in_time_order(club: tuple[Path, list[Written]]) -> None:
    from openskill.models import PlackettLuce

    base, games = club
    model = PlackettLuce()
    current = {n: model.rating() for n in PLAYERS}
    for g in games:  # written (and timed) in this order
        places = [1 + sum(1 for o in g.totals if o < t) for t in g.totals]
        rated = model.rate([[current[n]] for n in g.names], ranks=places)
        for n, team in zip(g.names, rated):
            current[n] = team[0]
    done = standings_cli("--plan", base / "plan.json", base / "in", "--format", "csv")
    for r in rows(done.stdout):
        want = current[r["player"]]
        assert r["rating"] == f"{want.mu:.4f}" and r["sigma"] == f"{want.sigma:.4f}", r
        assert r["ordinal"] == f"{want.mu - 3 * want.sigma:.4f}", r


def test_only_matched_games_count_and_the_rest_is_named_as_check_words_it(
        club: tuple[Path, list[Written]]) -> None:
    base, games = club
    folder = base / "in"
    for f in ("g5.allegra", "g5-copy.allegra"):  # round 3 table 2 lost
        (folder / f).unlink()
    for f in ("g2.allegra", "g2-copy.allegra"):  # round 2 table 1 played with Hal for Gus
        (folder / f).unlink()
    write_game(folder / "sub.allegra", ["Ann", "Eve", "Cid", "Hal"], seed=80)
    write_game(folder / "half.allegra", R3[0], seed=4, limit=12)  # a cut copy: not a second game
    players = write_players(base / "players.csv", [*PLAYERS, "Hal"])
    check = subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "check", "--plan",
                            str(base / "plan.json"), "--players", str(players), str(folder)],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert check.returncode == 1
    done = standings_cli("--plan", base / "plan.json", "--players", players, folder)
    assert done.returncode == 0, done.stderr
    left = done.stdout.split("left out (")[1].split("\n\n")[0].splitlines()[1:]
    left = [x.strip() for x in left]
    assert len(left) == 2, done.stdout
    assert left[0] == "round 3 table 2: missing (no game of Cid, Bob, Eve)"
    assert left[0] in check.stdout.splitlines()
    assert left[1].startswith("round 2 table 1: wrong players: planned Ann, Eve, Cid, Gus; sat Ann, Eve, Cid, Hal")
    assert "  " + left[1] in check.stdout.splitlines()
    as_csv = standings_cli("--plan", base / "plan.json", "--players", players, folder, "--format", "csv")
    want = expected([g for k, g in enumerate(games) if k not in (2, 5)])
    for r in rows(as_csv.stdout):
        assert r["points"] == f"{float(want[r['player']][1]):.4f}", r
    assert as_csv.stderr.splitlines() == [f"left out: {x}" for x in left]
    strict = standings_cli("--plan", base / "plan.json", "--players", players, folder, "--strict")
    assert strict.returncode == 1 and "left out (2):" in strict.stdout


def test_strict_passes_when_nothing_is_left_out(club: tuple[Path, list[Written]]) -> None:
    base, _ = club
    done = standings_cli("--plan", base / "plan.json", base / "in", "--strict")
    assert done.returncode == 0, done.stdout
    assert "6 of 6 planned tables counted" in done.stdout
    assert "left out" not in done.stdout


def test_a_player_with_no_game_counted_is_listed_with_none(tmp_path: Path) -> None:
    write_plan(tmp_path / "plan.json", [[["Ann", "Bob", "Cid"]]])
    (tmp_path / "in").mkdir()
    write_game(tmp_path / "in" / "x.allegra", ["Ann", "Bob"], seed=1)  # not the planned table
    done = standings_cli("--plan", tmp_path / "plan.json", tmp_path / "in", "--format", "csv")
    assert done.returncode == 0
    got = rows(done.stdout)
    assert [(r["rank"], r["games"], r["points"], r["rating"]) for r in got] == [("1", "0", "0.0000", "-")] * 3
    assert [x.split(": ")[0] for x in done.stderr.splitlines()] == ["left out", "left out"]


def test_bad_input_is_one_line_and_status_2(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    write_game(tmp_path / "in" / "x.allegra", ["Ann", "Bob"], seed=1)
    for args, words in ((["--plan", tmp_path / "none.json"], "No such file"),
                        (["--plan", write_plan(tmp_path / "bare.json", [[["Ann", "Bob"]]], keys=False)],
                         "the plan names no keys")):
        done = standings_cli(*args, tmp_path / "in")
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("allegra tournament standings: error: ")
        assert words in done.stderr


def test_help_says_the_exit_codes() -> None:
    done = subprocess.run([sys.executable, "-m", "allegra_lan", "tournament", "standings", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    text = " ".join(done.stdout.split())
    assert done.returncode == 0 and "Exit status 0" in text and "1 with --strict" in text and "2 bad input" in text


# ------------------------------------------------------------------ the scheme itself

totals_st = st.lists(st.integers(min_value=-20, max_value=400), min_size=2, max_size=6)


@settings(max_examples=300, deadline=None)
@given(totals=totals_st)
def test_a_tables_points_are_shares_of_opponents_beaten(totals: list[int]) -> None:
    n = len(totals)
    points = table_points(totals)
    assert sum(points) == Fraction(n, 2)  # every table gives the same half a point a player
    assert all(0 <= p <= 1 for p in points)
    for i, a in enumerate(totals):
        for j, b in enumerate(totals):
            assert (points[i] > points[j]) == (a < b) and (points[i] == points[j]) == (a == b)
    assert (max(points) == 1) == (totals.count(min(totals)) == 1)
    margins = table_margins(totals)
    assert sum(margins) == 0
    assert all(m == Fraction(sum(totals) - t, n - 1) - t for m, t in zip(margins, totals))


@settings(max_examples=100, deadline=None)
@given(three=st.permutations([10, 20, 30]), four=st.permutations([10, 20, 30, 40]))
def test_tables_of_three_and_four_give_first_and_last_the_same(three: list[int], four: list[int]) -> None:
    p3, p4 = table_points(three), table_points(four)
    assert p3[three.index(10)] == p4[four.index(10)] == 1
    assert p3[three.index(30)] == p4[four.index(40)] == 0
    assert p3[three.index(20)] == Fraction(1, 2) == (p4[four.index(20)] + p4[four.index(30)]) / 2


def test_equal_totals_share_the_places_points() -> None:
    assert table_points([5, 5, 9, 9]) == [Fraction(5, 6), Fraction(5, 6), Fraction(1, 6), Fraction(1, 6)]
    assert table_points([7, 7, 7]) == [Fraction(1, 2)] * 3


def test_equal_points_and_margin_share_a_rank() -> None:
    rows_ = [Row("a", 1, Fraction(1), Fraction(3)), Row("b", 1, Fraction(1), Fraction(3)),
             Row("c", 1, Fraction(1), Fraction(2)), Row("d", 1, Fraction(0), Fraction(9))]
    assert ranks(rows_) == [1, 1, 3, 4]
