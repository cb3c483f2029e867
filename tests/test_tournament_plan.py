"""`allegra tournament plan` (issue 13): seat players over rounds so pairs meet evenly.

The plan is judged by measures computed here from its seats alone (not the
search's own bookkeeping): every player once in every round, tables of allowed
sizes, and pair meetings as even as a brute force over every possible seating
says they can be for small cases. The command runs as the real `allegra` in a
subprocess; its plan file is read back and fed hostile values.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from allegra_lan.local import derived
from allegra_lan.log.identity import Identity
from allegra_lan.tournament.command import cells, plan_csv, plan_table, spread_line
from allegra_lan.tournament.plan import (
    MAX_PLAYERS, Plan, PlanError, PlanPlayer, allowed_sizes, make_plan, spread, table_sizes,
)
from allegra_lan.tournament.planfile import (
    FORMAT, PlanFileError, parse_plan, plan_from_data, plan_to_dict, plan_to_json, read_plan,
)
from allegra_lan.tournament.roster import RosterError, parse_name_list, read_roster

ROOT = Path(__file__).resolve().parents[1]
SEVEN = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus"]
KEYS = [Identity.from_seed(derived("tournament-plan-key", i)).fingerprint for i in range(8)]
PREFIX = "allegra tournament plan: error: "


def allegra(cwd: Path, *args: str, hashseed: str = "0") -> subprocess.CompletedProcess[str]:
    """The real command, run as a user would, in `cwd` (where plan.json lands by default)."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(cwd / "c"), XDG_DATA_HOME=str(cwd / "d"),
               PYTHONHASHSEED=hashseed, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "allegra_lan", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def players(names: Sequence[str]) -> list[PlanPlayer]:
    return [PlanPlayer(n) for n in names]


# --- measures of a seating, computed here from seats only ----------------------------------


def meet_counts(n: int, rounds: Sequence[Sequence[Sequence[int]]]) -> dict[tuple[int, int], int]:
    out = {(a, b): 0 for a in range(n) for b in range(a + 1, n)}
    for tables in rounds:
        for table in tables:
            for a, b in itertools.combinations(sorted(table), 2):
                out[(a, b)] += 1
    return out


def costs(n: int, rounds: Sequence[Sequence[Sequence[int]]]) -> tuple[int, int, int]:
    """(sum of squares of pair meetings, sum of their cubes, sum of squares of each
    player's count per seat): the order in which the plan's docstring ranks plans."""
    met = meet_counts(n, rounds).values()
    seats: dict[tuple[int, int], int] = {}
    for tables in rounds:
        for table in tables:
            for s, p in enumerate(table):
                seats[(p, s)] = seats.get((p, s), 0) + 1
    return sum(c * c for c in met), sum(c ** 3 for c in met), sum(c * c for c in seats.values())


def as_indices(plan: Plan) -> list[list[list[int]]]:
    index = {p.name: i for i, p in enumerate(plan.players)}
    return [[[index[s] for s in table] for table in tables] for tables in plan.rounds]


def cut(order: Sequence[int], sizes: Sequence[int]) -> list[list[int]]:
    out, at = [], 0
    for s in sizes:
        out.append(list(order[at:at + s]))
        at += s
    return out


def splits(n: int, sizes: Sequence[int]) -> list[list[list[int]]]:
    """Every way to split players 0..n-1 into tables of these sizes (seat order ignored)."""
    def rec(left: tuple[int, ...], k: int) -> list[list[list[int]]]:
        if k == len(sizes):
            return [[]]
        out = []
        for table in itertools.combinations(left, sizes[k]):
            rest = tuple(p for p in left if p not in table)
            out += [[list(table)] + more for more in rec(rest, k + 1)]
        return out
    return rec(tuple(range(n)), 0)


def best_pair_costs(n: int, rounds: int, sizes: Sequence[int]) -> tuple[int, int]:
    """The least (sum of squares, then sum of cubes) of pair meetings over every seating.
    Round 1 is fixed: a renaming of the players maps any seating to one with that first
    round, and keeps the cost, so nothing is missed."""
    first = cut(range(n), sizes)
    return min(costs(n, [first, *rest])[:2] for rest in itertools.product(splits(n, sizes), repeat=rounds - 1))


def best_costs(n: int, rounds: int, sizes: Sequence[int]) -> tuple[int, int, int]:
    """The least costs (compared in order) over every seating, seat orders included."""
    first = cut(range(n), sizes)
    orders = [cut(p, sizes) for p in itertools.permutations(range(n))]
    return min(costs(n, [first, *rest]) for rest in itertools.product(orders, repeat=rounds - 1))


def check_seated(plan: Plan) -> None:
    names = [p.name for p in plan.players]
    allowed = allowed_sizes(plan.variant)
    for tables in plan.rounds:
        seated = [s for t in tables for s in t]
        assert sorted(seated) == sorted(names)  # every player, once, every round
        assert all(len(t) in allowed for t in tables)
        assert max(map(len, tables)) - min(map(len, tables)) <= 1
        assert [len(t) for t in tables] == list(plan.table_sizes)


# --- the plan -------------------------------------------------------------------------------


def test_seven_players_over_three_rounds_sit_at_a_four_and_a_three_as_evenly_as_can_be() -> None:
    """The issue's example: 7 players, 3 rounds, tables of 3 and 4."""
    for variant in ("allegra", "grande"):
        plan = make_plan(players(SEVEN), 3, variant, seed=1)
        check_seated(plan)
        assert plan.table_sizes == (4, 3)
        assert costs(7, as_indices(plan))[:2] == best_pair_costs(7, 3, (4, 3))
        s = spread(plan)
        assert (s.pairs, s.least, s.most) == (21, 0, 2)
        assert s.never == sum(1 for c in meet_counts(7, as_indices(plan)).values() if c == 0)


@pytest.mark.parametrize("n,rounds,preferred", [(6, 2, 3), (4, 3, 2), (5, 2, 2)])
def test_pairs_and_then_seats_are_as_even_as_a_brute_force_finds(n: int, rounds: int, preferred: int) -> None:
    plan = make_plan(players([f"p{i}" for i in range(n)]), rounds, "grande", seed=3, preferred=preferred)
    check_seated(plan)
    assert costs(n, as_indices(plan)) == best_costs(n, rounds, plan.table_sizes)


@pytest.mark.parametrize("n,rounds,preferred", [(6, 3, 3), (5, 3, 2), (8, 3, 4), (7, 4, 3)])
def test_pairs_meet_as_evenly_as_a_brute_force_finds(n: int, rounds: int, preferred: int) -> None:
    for seed in (1, 2):
        plan = make_plan(players([f"p{i}" for i in range(n)]), rounds, "allegra", seed=seed,
                         preferred=preferred)
        check_seated(plan)
        assert costs(n, as_indices(plan))[:2] == best_pair_costs(n, rounds, plan.table_sizes)


@pytest.mark.parametrize("n,rounds,size", [(9, 4, 3), (16, 5, 4)])
def test_when_every_pair_can_meet_exactly_once_the_plan_does_it(n: int, rounds: int, size: int) -> None:
    """9 players over 4 rounds of threes, 16 over 5 of fours: the affine planes of order 3
    and 4 seat every pair together exactly once, so the spread 1..1 exists; the plan finds it."""
    plan = make_plan(players([f"p{i}" for i in range(n)]), rounds, "grande", seed=1, preferred=size)
    check_seated(plan)
    assert set(meet_counts(n, as_indices(plan)).values()) == {1}


@pytest.mark.parametrize("n,rounds,squares", [(13, 4, 136), (12, 5, 150)])
def test_among_plans_as_even_by_squares_the_one_with_no_pair_meeting_thrice_wins(
        n: int, rounds: int, squares: int) -> None:
    """13 players over 4 rounds (a 5 and two 4s), 12 over 5 (three 4s): by the sum of
    squares alone the search settled on plans where one pair sat together 3 times, while
    plans of the same sum (136, 150: the least the search and a separate annealing run
    found) have none; the sum of cubes breaks the tie."""
    plan = make_plan(players([f"p{i}" for i in range(n)]), rounds, "grande", seed=1)
    check_seated(plan)
    assert costs(n, as_indices(plan))[0] == squares
    assert max(meet_counts(n, as_indices(plan)).values()) == 2


def test_the_same_seed_gives_the_same_plan_and_another_seed_may_not() -> None:
    a = make_plan(players(SEVEN), 3, "grande", seed=11)
    assert plan_to_json(a) == plan_to_json(make_plan(players(SEVEN), 3, "grande", seed=11))
    others = {plan_to_json(make_plan(players(SEVEN), 3, "grande", seed=s)) for s in range(12, 16)}
    assert any(o != plan_to_json(a) for o in others)


def test_a_seed_s_plan_is_the_same_in_every_version_of_the_search() -> None:
    """Pinned seats: the plan is a function of its inputs forever, so an organiser (or a
    later allegra) can print it again from the plan file's seed. A change of the search
    must change the plan file's version, not this plan."""
    plan = make_plan(players(SEVEN), 3, "grande", seed=7)
    assert plan.rounds == (
        (("Gus", "Fay", "Eve", "Cid"), ("Ann", "Dan", "Bob")),
        (("Bob", "Cid", "Gus", "Ann"), ("Fay", "Eve", "Dan")),
        (("Eve", "Gus", "Ann", "Dan"), ("Cid", "Bob", "Fay")),
    )


@pytest.mark.parametrize("count,preferred,want", [
    (7, 4, (4, 3)), (2, 4, (2,)), (5, 4, (5,)), (6, 4, (3, 3)), (6, 3, (3, 3)), (7, 2, (3, 2, 2)),
    (9, 4, (5, 4)), (10, 4, (4, 3, 3)), (13, 4, (5, 4, 4)), (16, 4, (4, 4, 4, 4)), (16, 5, (4, 4, 4, 4)),
])
def test_table_sizes_are_as_equal_as_possible_and_near_the_preferred_size(
        count: int, preferred: int, want: tuple[int, ...]) -> None:
    assert table_sizes(count, allowed_sizes("grande"), preferred) == want


def test_a_count_that_cannot_be_seated_says_so() -> None:
    with pytest.raises(PlanError, match=r"^1 player cannot be seated: a table seats 2 to 5$"):
        make_plan(players(["Ann"]), 3, "grande")
    with pytest.raises(PlanError, match=r"^ALLEGRA Grande is played at tables of 2 to 5, not 6$"):
        make_plan(players(SEVEN), 3, "grande", preferred=6)
    assert make_plan(players(SEVEN), 1, "allegra", preferred=6).table_sizes == (4, 3)  # 7 > 6
    with pytest.raises(PlanError, match="printable characters without spaces around them"):
        make_plan(players(["Ann", "Bob\n"]), 1, "grande")
    with pytest.raises(PlanError, match="given twice"):
        make_plan(players(["Ann", "Bob", "Ann"]), 1, "grande")
    with pytest.raises(PlanError, match="rounds must be 1 to"):
        make_plan(players(SEVEN), 0, "grande")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 16), rounds=st.integers(1, 6), variant=st.sampled_from(["allegra", "grande"]),
       seed=st.integers(0, 2**63 - 1), data=st.data())
def test_any_count_and_rounds_give_a_full_valid_plan_no_one_swap_can_improve(
        n: int, rounds: int, variant: str, seed: int, data: st.DataObject) -> None:
    preferred = data.draw(st.sampled_from(allowed_sizes(variant)))
    plan = make_plan(players([f"p{i}" for i in range(n)]), rounds, variant, seed=seed, preferred=preferred)
    check_seated(plan)
    assert len(plan.rounds) == rounds
    assert parse_plan(plan_to_json(plan)) == plan  # the file holds the whole plan
    assert plan_to_json(make_plan(players([f"p{i}" for i in range(n)]), rounds, variant, seed=seed,
                                  preferred=preferred)) == plan_to_json(plan)
    # A local optimum: swapping any two players of one round makes it no better.
    seats = as_indices(plan)
    here = costs(n, seats)
    r = data.draw(st.integers(0, rounds - 1))
    flat = [p for t in seats[r] for p in t]
    for i, j in itertools.combinations(range(n), 2):
        moved = list(flat)
        moved[i], moved[j] = moved[j], moved[i]
        assert costs(n, seats[:r] + [cut(moved, plan.table_sizes)] + seats[r + 1:]) >= here


# --- the plan file --------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def keyed_plan() -> Plan:
    """Seven players with keys (Dan has two), 3 rounds of ALLEGRA (a Plan is frozen: shared)."""
    people = [PlanPlayer(n, (KEYS[i],) if i != 3 else (KEYS[i], KEYS[7])) for i, n in enumerate(SEVEN)]
    return make_plan(people, 3, "allegra", seed=5)


def test_the_plan_file_round_trips_and_states_its_format_and_version() -> None:
    plan = keyed_plan()
    text = plan_to_json(plan)
    data = json.loads(text)
    assert data == plan_to_dict(plan)
    assert (data["format"], data["version"], data["variant"], data["seed"]) == (FORMAT, 1, "allegra", 5)
    assert data["table_sizes"] == {"allowed": [2, 3, 4, 5, 6], "preferred": 4}
    assert data["players"][3] == {"name": "Dan", "keys": [KEYS[3], KEYS[7]]}
    assert [t["seats"] for t in data["rounds"][0]["tables"]] == [list(t) for t in plan.rounds[0]]
    assert parse_plan(text) == plan
    assert plan_from_data(json.loads(json.dumps(data))) == plan


def _set(d: dict, path: tuple, value: object) -> dict:
    out = json.loads(json.dumps(d))
    at = out
    for k in path[:-1]:
        at = at[k]
    at[path[-1]] = value
    return out


@pytest.mark.parametrize("path,value,message", [
    (("version",), 2, "version 2 is not one this allegra reads"),
    (("version",), True, "version true/false is not one"),
    (("variant",), "poker", "variant must be one of allegra, grande"),
    (("seed",), -1, "seed must be a whole number"),
    (("table_sizes", "allowed"), [3, 7], "table_sizes.allowed must be a whole number from 2 to 6"),
    (("table_sizes", "allowed"), [3, 4], None),
    (("players", 1, "name"), "Ann", "the name 'Ann' is given to two players"),
    (("players", 1, "keys"), ["nope"], "Bob's keys must be key fingerprints"),
    (("players", 1, "keys"), [KEYS[0]], f"the key {KEYS[0]} is given to Ann and Bob"),
    (("rounds", 0, "round"), 2, "round 1 is numbered 2"),
    (("rounds", 1, "tables", 0, "table"), 1.0, "round 2 table 1 is numbered 1.0"),
    (("rounds", 0, "tables", 1, "seats", 0), "Zed", "round 1 table 2 seats 'Zed', who is not"),
    (("rounds", 0, "tables", 1, "seats", 0), 7, "round 1 table 2 seats 7, who is not"),
    (("rounds", 0, "extra"), 1, "round 1 has an unknown field 'extra'"),
    (("rounds", 2, "tables"), [], "round 3 does not seat"),
])
def test_a_wrong_plan_file_is_one_line_naming_what_is_wrong(path: tuple, value: object,
                                                            message: str | None) -> None:
    data = _set(plan_to_dict(keyed_plan()), path, value)
    if message is None:  # allowed sizes 3 and 4 are fine, but then the preferred 4 must be one
        data = _set(data, ("table_sizes", "preferred"), 5)
        message = "table_sizes.preferred (5) is not among the allowed sizes"
    with pytest.raises(PlanFileError) as e:
        plan_from_data(data, "plan.json")
    assert str(e.value).startswith("plan.json: ") and message in str(e.value), str(e.value)
    assert "\n" not in str(e.value)


def test_a_seat_given_twice_or_a_table_of_a_wrong_size_is_refused() -> None:
    d = plan_to_dict(keyed_plan())
    first = d["rounds"][0]["tables"]
    moved = _set(d, ("rounds", 0, "tables", 1, "seats"), first[1]["seats"] + [first[0]["seats"][0]])
    with pytest.raises(PlanFileError, match="seats .* twice"):
        plan_from_data(moved)
    one = first[0]["seats"] + first[1]["seats"][:-1]
    small = _set(_set(d, ("rounds", 0, "tables", 0, "seats"), one), ("rounds", 0, "tables", 1, "seats"),
                 first[1]["seats"][-1:])
    with pytest.raises(PlanFileError, match="seats 1; the plan's tables seat 2, 3, 4, 5, 6"):
        plan_from_data(small)


@pytest.mark.parametrize("text,message", [
    ("", "not JSON"), ("{", "not JSON"), ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"format": NaN}', "NaN is not a JSON number"), ("1" * 5000, "not a plan"),
    ("[]", "not a tournament plan"), ('{"format": "x"}', "not a tournament plan"),
])
def test_text_that_is_no_plan_is_one_line(text: str, message: str) -> None:
    with pytest.raises(PlanFileError) as e:
        parse_plan(text, "p.json")
    assert message in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_read_plan_refuses_a_fifo_a_huge_file_and_bad_utf8_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(PlanFileError, match="FIFO"):
        read_plan(fifo)  # never waits for a writer
    big = tmp_path / "big.json"
    big.write_bytes(b" " * ((4 << 20) + 1))
    with pytest.raises(PlanFileError, match="too large"):
        read_plan(big)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{\n"format": "\xff"}')
    with pytest.raises(PlanFileError, match="line 2: not UTF-8"):
        read_plan(bad)
    good = tmp_path / "good.json"
    good.write_text(plan_to_json(keyed_plan()), encoding="utf-8")
    assert read_plan(good) == keyed_plan()


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


def _paths(value: object, here: tuple = ()) -> list[tuple]:
    out = [here]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, here + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, here + (i,))
    return out


def _one_line_or_plan(data: object) -> None:
    try:
        plan = plan_from_data(data, "p")
    except PlanFileError as e:
        assert str(e).startswith("p: ") and "\n" not in str(e)
    else:
        check_seated(plan)
        assert plan_from_data(plan_to_dict(plan)) == plan


@settings(max_examples=200, deadline=None)
@given(data=JSONISH)
def test_any_value_is_a_plan_or_one_line(data: object) -> None:
    _one_line_or_plan(data)
    _one_line_or_plan({"format": FORMAT, "version": 1, "x": data})


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_valid_plan_with_any_one_value_replaced_is_a_plan_or_one_line(data: st.DataObject) -> None:
    good = plan_to_dict(keyed_plan())
    path = data.draw(st.sampled_from(_paths(good)[1:]))
    _one_line_or_plan(_set(good, path, data.draw(JSONISH)))


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_plan_or_one_line(text: str) -> None:
    try:
        parse_plan(text, "p")
    except PlanFileError as e:
        assert "\n" not in str(e)


# --- what a person reads --------------------------------------------------------------------


def table_rows(text: str) -> list[tuple[int, int, list[str]]]:
    """(round, table, seats) of the printed table (continuation lines joined)."""
    rows: list[tuple[int, int, list[str]]] = []
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["round", "table"]) + 1
    for line in lines[start:]:
        if not line.strip():
            break
        if line[:12].strip():
            r, t = line[:5], line[6:11]
            rows.append((int(r), int(t), [line[12:]]))
        else:  # a line after one that ends a name goes on with the next; else a cut name goes on
            parts = rows[-1][2]
            parts[-1] += (" " if parts[-1].endswith(",") else "") + line[12:]
    return [(r, t, parts[0].split(", ")) for r, t, parts in rows]


def csv_rows(text: str) -> list[tuple[int, int, list[str]]]:
    out: dict[tuple[int, int], list[tuple[int, str]]] = {}
    rows = list(csv.DictReader(io.StringIO(text)))
    for row in rows:
        out.setdefault((int(row["round"]), int(row["table"])), []).append((int(row["seat"]), row["player"]))
    return [(r, t, [n for _, n in sorted(seats)]) for (r, t), seats in out.items()]


def test_the_table_and_the_csv_say_the_same_plan() -> None:
    plan = keyed_plan()
    want = [(r, t, list(seats)) for r, tables in enumerate(plan.rounds, 1) for t, seats in enumerate(tables, 1)]
    assert table_rows(plan_table(plan)) == want
    assert csv_rows(plan_csv(plan)) == want
    keys = {row["player"]: row["keys"] for row in csv.DictReader(io.StringIO(plan_csv(plan)))}
    assert keys["Dan"] == f"{KEYS[3]} {KEYS[7]}" and keys["Ann"] == KEYS[0]


def test_the_table_fits_80_columns_whatever_the_names() -> None:
    long = [("名" * 60) + str(i) for i in range(5)] + ["x" * 63 + str(i) for i in range(5)]
    plan = make_plan(players(long), 2, "grande", preferred=5)
    text = plan_table(plan)
    assert max(cells(line) for line in text.splitlines()) <= 80
    assert table_rows(text) == [(r, t, list(s)) for r, tables in enumerate(plan.rounds, 1)
                                for t, s in enumerate(tables, 1)]
    assert cells(spread_line(spread(plan))) <= 80


# --- the command ----------------------------------------------------------------------------


def write_players_csv(folder: Path) -> Path:
    f = folder / "players.csv"
    f.write_text("name,fingerprint\n" + "".join(f"{n},{KEYS[i]}\n" for i, n in enumerate(SEVEN)),
                 encoding="utf-8")
    return f


def test_the_command_plans_seven_players_prints_the_table_and_writes_the_file(tmp_path: Path) -> None:
    pf = write_players_csv(tmp_path)
    done = allegra(tmp_path, "tournament", "plan", "--players", str(pf), "--rounds", "3",
                   "--variant", "allegra", "--seed", "5")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    plan = read_plan(tmp_path / "plan.json")  # the default --out, in the current directory
    assert [p.name for p in plan.players] == SEVEN
    assert [p.keys for p in plan.players] == [(k,) for k in KEYS[:7]]
    assert (plan.variant, plan.seed, plan.table_sizes) == ("allegra", 5, (4, 3))
    check_seated(plan)
    assert plan == make_plan(plan.players, 3, "allegra", seed=5)
    lines = done.stdout.splitlines()
    assert lines[0] == "ALLEGRA: 7 players, 3 rounds, seed 5"
    assert lines[1] == "each round: 1 table of 4 and 1 table of 3 (seat 0 starts)"
    assert table_rows(done.stdout) == [(r, t, list(s)) for r, tables in enumerate(plan.rounds, 1)
                                       for t, s in enumerate(tables, 1)]
    s = spread(plan)
    assert lines[-2] == spread_line(s) == (f"pairs meet 0 to 2 times ({s.never} of 21 "
                                           f"never); each player starts 0 to 1 times")
    assert lines[-1] == "wrote the plan to plan.json"
    assert max(map(cells, lines)) <= 80


def test_the_command_is_byte_for_byte_the_same_on_every_run(tmp_path: Path) -> None:
    """Two processes with different string hashing print and write the same bytes."""
    (tmp_path / "p.txt").write_text("\n".join(SEVEN) + "\n", encoding="utf-8")
    runs = []
    for k, hs in enumerate(("1", "2")):
        done = allegra(tmp_path, "tournament", "plan", "--players", "p.txt", "--rounds", "3",
                       "--variant", "grande", "--seed", "9", "--out", f"plan{k}.json", hashseed=hs)
        assert done.returncode == 0, done.stderr
        runs.append((done.stdout.replace(f"plan{k}.json", "F"), (tmp_path / f"plan{k}.json").read_bytes()))
    assert runs[0] == runs[1]


def test_csv_goes_to_stdout_and_the_summary_to_stderr(tmp_path: Path) -> None:
    pf = tmp_path / "players.toml"
    pf.write_text("[players]\n" + "".join(f'{n} = "{KEYS[i]}"\n' for i, n in enumerate(SEVEN[:5])) +
                  f'"Fay F." = ["{KEYS[5]}", "{KEYS[6]}"]\n', encoding="utf-8")
    done = allegra(tmp_path, "tournament", "plan", "--players", str(pf), "--rounds", "2",
                   "--variant", "grande", "--csv", "--out", "p.json", "--table-size", "3")
    assert done.returncode == 0, done.stderr
    plan = read_plan(tmp_path / "p.json")
    assert plan.players[-1] == PlanPlayer("Fay F.", (KEYS[5], KEYS[6]))
    assert plan.table_sizes == (3, 3)
    assert done.stdout == plan_csv(plan)
    assert done.stdout.splitlines()[0] == "round,table,seat,player,keys"
    assert csv_rows(done.stdout) == [(r, t, list(s)) for r, tables in enumerate(plan.rounds, 1)
                                     for t, s in enumerate(tables, 1)]
    assert done.stderr == spread_line(spread(plan)) + "\nwrote the plan to p.json\n"


def _bad_list(folder: Path, text: str, name: str = "p.txt") -> str:
    (folder / name).write_text(text, encoding="utf-8")
    return name


@pytest.mark.parametrize("setup,args,message", [
    (lambda d: _bad_list(d, "Ann\n"), ("--rounds", "3", "--variant", "grande"),
     "1 player cannot be seated: a table seats 2 to 5"),
    (lambda d: _bad_list(d, "# nobody yet\n"), ("--rounds", "3", "--variant", "grande"),
     "no players cannot be seated: a table seats 2 to 5"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "3", "--variant", "grande", "--table-size", "6"),
     "ALLEGRA Grande is played at tables of 2 to 5, not 6"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "0", "--variant", "allegra"),
     "rounds must be 1 to 30, not 0"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "three", "--variant", "allegra"),
     "argument --rounds: invalid int value: 'three'"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "2", "--variant", "allegra", "--seed", "-4"),
     "the seed must be 0 to 9223372036854775807, not -4"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "2"),
     "the following arguments are required: --variant"),
    (lambda d: _bad_list(d, "Ann\nBob\nAnn\n"), ("--rounds", "1", "--variant", "grande"),
     "p.txt: line 3: 'Ann' is already on line 1"),
    (lambda d: _bad_list(d, "Ann,MNXN\n", "p.csv"), ("--rounds", "1", "--variant", "grande"),
     "p.csv: line 1: 'MNXN' is not a key fingerprint"),
    (lambda d: _bad_list(d, "Ann\n", "p.xlsx"), ("--rounds", "1", "--variant", "grande"),
     "p.xlsx: name the players file .csv or .toml"),
    (lambda d: "missing.txt", ("--rounds", "1", "--variant", "grande"), "missing.txt"),
    (lambda d: _bad_list(d, "\n".join(f"p{i}" for i in range(MAX_PLAYERS + 1))),
     ("--rounds", "1", "--variant", "grande"), f"more than {MAX_PLAYERS} players"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "1", "--variant", "grande", "--out", "no/dir/p.json"),
     "could not write no/dir/p.json"),
    (lambda d: _bad_list(d, "\n".join(SEVEN)), ("--rounds", "1", "--variant", "grande", "--out", "./p.txt"),
     "--out ./p.txt is the players file; name another file"),
])
def test_a_bad_argument_is_one_line_and_exit_2_and_no_file(tmp_path: Path, setup: Callable[[Path], str],
                                                             args: tuple[str, ...], message: str) -> None:
    players_file = setup(tmp_path)
    before = (tmp_path / players_file).read_bytes() if (tmp_path / players_file).exists() else None
    done = allegra(tmp_path, "tournament", "plan", "--players", players_file, *args)
    assert done.returncode == 2, done
    assert done.stderr.startswith(PREFIX) and done.stderr.count("\n") == 1, done.stderr
    assert message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "plan.json").exists()
    if before is not None:  # the players file is never overwritten
        assert (tmp_path / players_file).read_bytes() == before


def test_tournament_without_a_tool_says_which_there_are(tmp_path: Path) -> None:
    done = allegra(tmp_path, "tournament")
    assert (done.returncode, done.stderr) == (2, "allegra tournament: error: choose a tool: plan, check, standings or report\n")


def test_the_help_does_not_load_the_scheduler(tmp_path: Path) -> None:
    """The parser reads tournament.args (argparse only); the search and the rules load only
    when `plan` runs."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "allegra_lan", "tournament", "plan", "--help"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--table-size" in done.stdout
    assert "allegra_lan.tournament.args" in done.stderr
    assert "allegra_lan.tournament.plan" not in done.stderr and "allegra_lan.rules" not in done.stderr


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_list_of_names_or_one_line(text: str) -> None:
    try:
        got = parse_name_list(text, "p.txt")
    except RosterError as e:
        assert str(e).startswith("p.txt") and "\n" not in str(e)
    else:
        names = [p.name for p in got]
        assert len(set(names)) == len(names) and all(n == n.strip() and n.isprintable() for n in names)
        assert names == [x.strip() for x in text.splitlines() if x.strip() and not x.strip().startswith("#")]


def test_a_plain_list_skips_blanks_and_comments_and_keeps_its_order(tmp_path: Path) -> None:
    assert parse_name_list("# club night\n\nAnn\n  Bob  \n\nCid\n") == tuple(players(["Ann", "Bob", "Cid"]))
    f = tmp_path / "p.txt"
    f.write_bytes("\ufeffAnn\nBob\n".encode("utf-8"))
    assert read_roster(f) == tuple(players(["Ann", "Bob"]))  # a BOM at the start is no name
    with pytest.raises(RosterError, match="line 2: a name must be 1 to 64 printable"):
        parse_name_list("Ann\n" + "x" * 65)


def test_the_example_in_docs_tournaments_md_is_what_the_command_prints(tmp_path: Path) -> None:
    doc = (ROOT / "docs" / "tournaments.md").read_text(encoding="utf-8")
    block = doc.split("```text\n", 1)[1].split("```", 1)[0]
    command, shown = block.split("\n", 1)
    assert command.startswith("$ allegra ")
    (tmp_path / "club.txt").write_text("\n".join(SEVEN) + "\n", encoding="utf-8")
    done = allegra(tmp_path, *command.split()[2:])
    assert done.returncode == 0, done.stderr
    assert done.stdout == shown
