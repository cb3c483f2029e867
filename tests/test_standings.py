"""`allegra replay standings` as an organiser uses it (issue 13): one game, one result.

Every replay here is real: games signed and written by LocalGame and
ReplayWriter with seeded random legal moves, and one two-player network game
played by headless `allegra host/join --bot` peers over 127.0.0.1, whose two
peers each wrote their file. Standings are checked against sums and ratings
computed here from the games' own final states, never against the tool's
own output.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import result_tags
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import ReplayWriter, read_replay
from allegra_lan.rules import Give, Move, legal_moves, ruleset_from_dict, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.tools import fold_log
from allegra_lan.tools.players import Players, PlayersError, parse_players
from allegra_lan.tools.ratings import finishing_ranks
from net_helpers import LOOPBACK, ROOT, CliPool, data_home, unique_table

POOL = [Player(f"player{i}", Identity.from_seed(derived("standings-test-key", i))) for i in range(8)]
FP = [p.identity.fingerprint for p in POOL]
PROCESS_LIMIT = 90.0  # seconds a headless network game subprocess may take (a loaded machine)


@dataclass
class Played:
    path: Path
    local: LocalGame
    moves: list[Move]

    @property
    def totals(self) -> list[int]:
        return list(self.local.state.totals)

    @property
    def winners(self) -> list[int]:
        return [int(x) for x in result_tags(self.local.state)["Winners"].split()]


def play(folder: Path, name: str, *, variant: str = "grande", seats: tuple[int, ...] = (0, 1),
         players: list[Player] | None = None, seed: int = 0, date: str = "2026.03.01",
         limit: int | None = None, moves: list[Move] | None = None,
         clock: Callable[[], int] | None = None) -> Played:
    """A one-round game of random legal moves written to folder/name (cut after `limit` moves)."""
    folder.mkdir(parents=True, exist_ok=True)
    rs = ruleset_from_dict({"variant": variant, "rounds": 1})
    people = players if players is not None else [POOL[i] for i in seats]
    gid = derived("standings-game", variant, len(people), seed)[:16]
    tags = {"Event": "Club night", "Site": "Kitchen", "Date": date, "Variant": variant,
            "Table": "t", "Players": str(len(people)), "Game": gid.hex(), **seat_tags(people)}
    writer = ReplayWriter(folder / name, tags, fsync=False)
    g = LocalGame(rs, people, game_id=gid, nonces=[derived("standings-nonce", seed, i) for i in range(len(people))],
                  table_name="t", writer=writer, clock=clock)
    rng = Stream(derived("standings-moves", seed), "moves")
    given_moves = list(moves or [])
    played: list[Move] = []
    while to_act(g.state) is not None and (limit is None or len(played) < limit):
        if given_moves:
            move = given_moves.pop(0)
        else:
            by_kind: dict[type, list[Move]] = {}
            for m in legal_moves(g.state):
                by_kind.setdefault(type(m), []).append(m)
            kinds = list(by_kind.values())
            pick = kinds[rng.below(len(kinds))]
            move = pick[rng.below(len(pick))]
        g.submit(move)
        played.append(move)
    if to_act(g.state) is None:
        writer.finish(result_tags(g.state))
    else:
        writer.close()
    return Played(folder / name, g, played)


def standings_cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command, from this interpreter's environment."""
    return subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "standings", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def rows_of(out: str) -> dict[tuple[str, str], list[dict[str, str]]]:
    """CSV rows by (variant, seats)."""
    tables: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in csv.DictReader(io.StringIO(out)):
        tables.setdefault((r["variant"], r["seats"]), []).append(r)
    return tables


def expected_sums(games: list[Played], who: dict[str, str] | None = None) -> dict[str, list[int]]:
    """entrant (fingerprint, or a name of `who`): [games, wins, total], from the games' states."""
    out: dict[str, list[int]] = {}
    for g in games:
        for seat, p in enumerate(g.local.players):
            key = (who or {}).get(p.identity.fingerprint, p.identity.fingerprint)
            row = out.setdefault(key, [0, 0, 0])
            row[0] += 1
            row[1] += seat in g.winners
            row[2] += g.totals[seat]
    return out


# ------------------------------------------------------------------ a real network game


@pytest.fixture(scope="module")
def network_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The host's and the guest's replay of one 2-player ALLEGRA game over 127.0.0.1."""
    base = tmp_path_factory.mktemp("net")
    pool = CliPool(base)
    try:
        table = unique_table("standings")
        host = pool.start("host", ["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", "2",
                                   "--variant", "allegra", "--table", table, "--rounds", "1"])
        host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:\d+", PROCESS_LIMIT)
        guest = pool.start("guest", ["join", table, "--interface", LOOPBACK, "--bot", "random"])
        codes = [host.wait(PROCESS_LIMIT), guest.wait(PROCESS_LIMIT)]
        assert codes == [0, 0], f"{host.stdout()}{host.stderr()[-1500:]}{guest.stdout()}{guest.stderr()[-1500:]}"
        paths = [run.replay_path() for run in (host, guest)]
        for run, path in zip((host, guest), paths):
            assert path.is_relative_to(data_home(run.home))
        return paths[0], paths[1]
    finally:
        pool.close()


def test_a_network_games_host_and_guest_files_and_a_copy_count_once(network_game: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:
    """The issue's opening: both peers' files of ONE game (and a copy) ranked it 2-3 times."""
    collected = tmp_path / "collected"
    (collected / "host").mkdir(parents=True)
    (collected / "guest").mkdir()
    shutil.copy(network_game[0], collected / "host" / "game.allegra")
    shutil.copy(network_game[1], collected / "guest" / "game.allegra")
    shutil.copy(network_game[1], collected / "copied.allegra")
    replay = read_replay(network_game[0])
    totals = [int(x) for x in replay.tags["Result"].split()]
    p = standings_cli(collected, "--format", "csv")
    assert p.returncode == 0, p.stderr
    tables = rows_of(p.stdout)
    assert list(tables) == [("allegra", "2")]
    rows = {r["player"]: r for r in tables[("allegra", "2")]}
    # The host's seat is named after its bot (greedy), the guest's too (random): bot kinds.
    assert set(rows) == {"greedy", "random"}
    assert [rows["greedy"]["games"], rows["random"]["games"]] == ["1", "1"]
    assert sorted(int(r["total"]) for r in rows.values()) == sorted(totals)
    assert all(r["fingerprint"] == "bot" for r in rows.values())
    text = standings_cli(collected)
    assert text.returncode == 0
    assert "1 game counted (and 2 more copies of them), 0 left out" in text.stdout


# ------------------------------------------------------------------ one game, one result


def test_variants_and_table_sizes_are_never_summed_together(tmp_path: Path) -> None:
    night = tmp_path / "night"
    g2 = [play(night, "a.allegra", seats=(0, 1), seed=1), play(night, "b.allegra", seats=(1, 0), seed=2)]
    g3 = [play(night, "c.allegra", seats=(0, 1, 2), seed=3)]
    a2 = [play(night, "d.allegra", variant="allegra", seats=(0, 1), seed=4)]
    p = standings_cli(night, "--format", "csv")
    assert p.returncode == 0, p.stderr
    tables = rows_of(p.stdout)
    assert list(tables) == [("allegra", "2"), ("grande", "2"), ("grande", "3")]
    for key, games in ((("grande", "2"), g2), (("grande", "3"), g3), (("allegra", "2"), a2)):
        got = {r["fingerprint"]: [int(r["games"]), int(r["wins"]), int(r["total"])] for r in tables[key]}
        assert got == expected_sums(games), key
    text = standings_cli(night).stdout
    titles = [line for line in text.splitlines() if line.endswith(("game", "games"))]
    assert titles == ["ALLEGRA, 2 players: 1 game", "ALLEGRA Grande, 2 players: 2 games",
                      "ALLEGRA Grande, 3 players: 1 game"]


def test_one_row_per_bot_kind_not_one_per_game(tmp_path: Path) -> None:
    """Bots make a fresh key every game; the genesis names them after their kind."""
    night = tmp_path / "bots"
    games = []
    for i in range(3):
        bots = [Player("greedy", Identity.from_seed(derived("bot-a", i))),
                Player("random-1", Identity.from_seed(derived("bot-b", i))), POOL[0]]
        games.append(play(night, f"g{i}.allegra", players=bots, seed=20 + i))
    p = standings_cli(night, "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = {r["player"]: r for r in rows_of(p.stdout)[("grande", "3")]}
    assert set(rows) == {"greedy", "random", "player0"}
    assert rows["greedy"]["games"] == rows["random"]["games"] == rows["player0"]["games"] == "3"
    assert rows["greedy"]["fingerprint"] == "bot" and rows["player0"]["fingerprint"] == FP[0]
    assert int(rows["greedy"]["total"]) == sum(g.totals[0] for g in games)
    assert int(rows["random"]["total"]) == sum(g.totals[1] for g in games)


def test_an_unfinished_game_is_listed_not_an_error_and_a_cut_copy_hides_nothing(tmp_path: Path) -> None:
    night = tmp_path / "night"
    whole = play(night, "whole.allegra", seats=(0, 1), seed=31)
    cut = play(night / "crashed", "cut.allegra", seats=(0, 1), seed=31, limit=30)  # as a crash leaves it
    assert to_act(cut.local.state) is not None
    other = play(night, "other.allegra", seats=(2, 3), seed=32, limit=25)
    p = standings_cli(night)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 game counted (and 1 more copy of them), 1 left out" in p.stdout
    left = p.stdout.splitlines()
    i = left.index("left out:")
    assert left[i + 1].startswith(f"  game {other.local.table.game.hex()}: unfinished")  # type: ignore[union-attr]
    assert str(other.path) in left[i + 1]
    got = rows_of(standings_cli(night, "--format", "csv").stdout)[("grande", "2")]
    assert {r["fingerprint"]: [int(r["games"]), int(r["wins"]), int(r["total"])] for r in got} == \
        expected_sums([whole])
    # Strictness is about files that fail or disagree, not about games still being played.
    assert standings_cli(night, "--strict").returncode == 0


def test_copies_that_disagree_are_left_out_with_the_seq_where_they_part(tmp_path: Path) -> None:
    night = tmp_path / "night"
    a = play(night, "a.allegra", variant="allegra", seats=(0, 1, 2), seed=41)
    setup = 1 + 3 * 3  # genesis, three commits, three reveals, three accepts
    m = 15
    state = fold_log([e.signed for e in a.local.table.events][:setup + m]).table.state
    assert state is not None
    other = next(x for x in legal_moves(state) if x != a.moves[m] and not isinstance(x, Give))
    b = play(night / "sub", "b.allegra", variant="allegra", seats=(0, 1, 2), seed=41, moves=a.moves[:m] + [other])
    assert to_act(b.local.state) is None
    fine = play(night, "fine.allegra", seats=(0, 1), seed=42)
    p = standings_cli(night)
    assert p.returncode == 0, p.stdout + p.stderr
    gid = a.local.table.game.hex()  # type: ignore[union-attr]
    lines = [x for x in p.stdout.splitlines() if x.startswith(f"  game {gid}")]
    assert lines == [f"  game {gid}: copies disagree from seq {setup + m}: {a.path} and {b.path} "
                     f"(`allegra diff` shows both); left out until resolved"]
    assert "1 game counted, 1 left out" in p.stdout
    assert "ALLEGRA, 3 players" not in p.stdout
    rows = rows_of(standings_cli(night, "--format", "csv").stdout)
    assert list(rows) == [("grande", "2")] and len(fine.totals) == 2
    strict = standings_cli(night, "--strict")
    assert strict.returncode == 1 and "copies disagree" in strict.stdout


def test_a_tampered_file_is_listed_and_only_strict_makes_it_an_error(tmp_path: Path) -> None:
    night = tmp_path / "night"
    g = play(night, "g.allegra", seats=(0, 1), seed=51)
    forged = play(night, "forged.allegra", seats=(2, 3), seed=52)
    text = forged.path.read_text()
    result = read_replay(forged.path).tags["Result"]
    forged.path.write_text(text.replace(f'[Result "{result}"]', '[Result "0 0"]'))
    p = standings_cli(night)
    assert p.returncode == 0
    assert f"  FAIL {forged.path}  header: Result is \"0 0\"" in p.stdout
    assert "1 game counted, 1 left out" in p.stdout
    strict = standings_cli(night, "--strict")
    assert strict.returncode == 1 and strict.stdout == p.stdout
    assert len(g.totals) == 2
    (night / "junk.allegra").write_text("not a replay")
    junk = standings_cli(night)
    assert junk.returncode == 2 and junk.stderr.count("\n") == 1 and "junk.allegra" in junk.stderr
    assert "1 game counted" in junk.stdout


def test_help_says_the_exit_statuses() -> None:
    p = subprocess.run([sys.executable, "-m", "allegra_lan", "replay", "standings", "--help"],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    flat = " ".join(p.stdout.split())
    assert p.returncode == 0
    assert "Exit status 0 when the standings were made; 1 with --strict if a file failed a check" in flat
    assert "--players FILE" in flat and "--strict" in flat


# ------------------------------------------------------------------ who is who


def test_a_players_file_names_keys_and_lists_the_missing_once(tmp_path: Path) -> None:
    night = tmp_path / "night"
    games = [play(night, "a.allegra", seats=(0, 1, 2), seed=61), play(night, "b.allegra", seats=(2, 1, 0), seed=62),
             play(night, "c.allegra", seats=(3, 0, 1), seed=63)]
    # Ann plays with two keys (0 and 3), Bob with one; key 2 is not in the file.
    csv_file = tmp_path / "players.csv"
    csv_file.write_text(f"name,fingerprint\n# the club\nAnn,{FP[0]}\nBob,{FP[1]}\nAnn,{FP[3].lower()}\n")
    toml_file = tmp_path / "players.toml"
    toml_file.write_text(f'[players]\nAnn = ["{FP[0]}", "{FP[3]}"]\n"Bob" = "{FP[1]}"\n')
    who = {FP[0]: "Ann", FP[3]: "Ann", FP[1]: "Bob"}
    want = expected_sums(games, who)
    for f in (csv_file, toml_file):
        p = standings_cli(night, "--players", f, "--format", "csv")
        assert p.returncode == 0, p.stderr
        rows = rows_of(p.stdout)[("grande", "3")]
        got = {r["player"]: [int(r["games"]), int(r["wins"]), int(r["total"])] for r in rows}
        assert got == {("player2" if k == FP[2] else k): v for k, v in want.items()}
        ann = next(r for r in rows if r["player"] == "Ann")
        assert ann["fingerprint"] == f"{FP[0]} {FP[3]}"
        assert p.stderr.splitlines() == [f"keys not in {f}:", f"  {FP[2]} (seated as player2; 2 games)"]
        text = standings_cli(night, "--players", f)
        assert text.stdout.count(FP[2]) == 2  # its row and its one line under "keys not in"


@pytest.mark.parametrize("name,text,line,words", [
    ("p.csv", "name,fingerprint\nAnn,ABCD\n", 2, "'ABCD' is not a key fingerprint"),
    ("p.csv", f"Ann,{'A' * 4}-BBBB-CCCC-DDDD\nBob,AAAA-BBBB-CCCC-DDDD\n", 2, "already Ann's"),
    ("p.csv", "Ann,AAAA-BBBB-CCCC-DDDD,extra\n", 1, "want two fields"),
    ("p.toml", "[players]\nAnn = 3\n", 2, "must be a fingerprint in quotes"),
    ("p.toml", "[players]\nAnn = \n", 2, "line 2"),
    ("p.toml", "[people]\nAnn = \"AAAA-BBBB-CCCC-DDDD\"\n", 0, "want one [players] table"),
])
def test_a_bad_players_file_is_one_line_naming_the_line(tmp_path: Path, name: str, text: str, line: int,
                                                         words: str) -> None:
    game = play(tmp_path / "g", "g.allegra", seats=(0, 1), seed=71)
    f = tmp_path / name
    f.write_text(text)
    p = standings_cli(game.path, "--players", f)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"allegra replay standings: error: {f}: ")
    assert words in p.stderr
    if line:
        assert f"line {line}" in p.stderr
    missing = standings_cli(game.path, "--players", tmp_path / "none.csv")
    assert missing.returncode == 2 and "none.csv" in missing.stderr and missing.stderr.count("\n") == 1


def test_a_players_file_that_is_a_fifo_or_too_big_is_refused_at_once(tmp_path: Path) -> None:
    game = play(tmp_path / "g", "g.allegra", seats=(0, 1), seed=72)
    fifo = tmp_path / "players.csv"
    os.mkfifo(fifo)
    p = standings_cli(game.path, "--players", fifo)  # a plain open() would wait for a writer
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and str(fifo) in p.stderr
    big = tmp_path / "big.csv"
    big.write_text(f"Ann,{FP[0]}\n" * 60_000)
    p = standings_cli(game.path, "--players", big)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "too large" in p.stderr
    utf = tmp_path / "latin.csv"
    utf.write_bytes(f"Ann,{FP[0]}\nJos\xe9,{FP[1]}\n".encode("latin-1"))
    p = standings_cli(game.path, "--players", utf)
    assert p.returncode == 2 and p.stderr.endswith(f"{utf}: line 2: not UTF-8 text\n")


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300), suffix=st.sampled_from([".csv", ".toml", ".txt"]))
def test_the_players_parser_takes_any_text_to_a_mapping_or_one_line(text: str, suffix: str) -> None:
    try:
        players = parse_players(text, suffix, "f")
    except PlayersError as e:
        msg = str(e)
        assert msg.startswith("f") and "\n" not in msg and "\r" not in msg and len(msg) < 400
        return
    assert isinstance(players, Players)
    for fp, name in players.by_key.items():
        assert isinstance(name, str) and name and name in players.names and len(fp) == 19


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.text(min_size=1, max_size=20), st.sampled_from(FP)), max_size=8))
def test_the_players_parser_reads_back_what_a_csv_writer_writes(rows: list[tuple[str, str]]) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    try:
        players = parse_players(buf.getvalue(), ".csv", "f")
    except PlayersError as e:
        assert "\n" not in str(e)
        return
    want: dict[str, str] = {}
    for name, fp in rows:
        if name.strip() and not name.lstrip().startswith("#"):  # a '#' line is a comment
            want.setdefault(fp, name.strip())
    assert players.by_key == want


# ------------------------------------------------------------------ ratings


def openskill_in_order(games: list[Played]) -> dict[str, Any]:
    """openskill's Plackett-Luce ratings by fingerprint, computed here game by game in the
    given order from each game's finishing places (equal totals share one)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    current: dict[str, Any] = {}
    for g in games:
        fps = [p.identity.fingerprint for p in g.local.players]
        teams = [[current.get(fp) or model.rating()] for fp in fps]
        ranks = [1 + sum(1 for o in g.totals if o < t) for t in g.totals]
        for fp, team in zip(fps, model.rate(teams, ranks=ranks)):
            current[fp] = team[0]
    return current


def test_ratings_follow_openskill_in_the_games_time_order(tmp_path: Path) -> None:
    """Files named against the time order: ratings must follow the Date tags, not the names."""
    night = tmp_path / "night"
    games = [
        play(night, "1.allegra", seats=(0, 1, 2), seed=81, date="2026.03.04"),
        play(night, "2.allegra", seats=(1, 2, 3), seed=82, date="2026.03.02"),
        play(night, "3.allegra", seats=(3, 0, 1), seed=83, date="2026.03.03"),
        play(night, "4.allegra", seats=(2, 3, 0), seed=84, date="2026.03.01"),
    ]
    current = openskill_in_order(sorted(games, key=lambda g: read_replay(g.path).tags["Date"]))
    p = standings_cli(night, "--format", "csv")
    assert p.returncode == 0
    rows = rows_of(p.stdout)[("grande", "3")]
    for r in rows:
        want = current[r["fingerprint"]]
        assert float(r["rating"]) == pytest.approx(want.mu, abs=1e-4)  # type: ignore[attr-defined]
        assert float(r["sigma"]) == pytest.approx(want.sigma, abs=1e-4)  # type: ignore[attr-defined]
        assert float(r["ordinal"]) == pytest.approx(want.mu - 3 * want.sigma, abs=1e-3)  # type: ignore[attr-defined]
    text = standings_cli(night).stdout
    assert text.splitlines()[1].split()[-3:] == ["rating", "sigma", "ordinal"]
    assert "a log of an older version, which signs none, by its file's Date tag" in text


def test_ratings_follow_the_signed_start_times_before_the_date_tags(tmp_path: Path) -> None:
    """Logs that sign their start: ratings follow the signed starts, not the Date tags
    (which say the opposite here) nor the file names."""
    night = tmp_path / "night"
    starts = [1_900_000_300_000, 1_900_000_100_000, 1_900_000_200_000]
    games = [play(night, f"{i}.allegra", seats=seats, seed=90 + i, date=f"2026.03.0{i + 1}",
                  clock=lambda at=at: at)
             for i, (seats, at) in enumerate(zip([(0, 1, 2), (1, 2, 3), (3, 0, 1)], starts))]
    assert [g.local.table.genesis.started for g in games] == starts
    current = openskill_in_order(sorted(games, key=lambda g: g.local.table.genesis.started))
    p = standings_cli(night, "--format", "csv")
    assert p.returncode == 0, p.stderr
    for r in rows_of(p.stdout)[("grande", "3")]:
        want = current[r["fingerprint"]]
        assert float(r["rating"]) == pytest.approx(want.mu, abs=1e-4)  # type: ignore[attr-defined]
        assert float(r["sigma"]) == pytest.approx(want.sigma, abs=1e-4)  # type: ignore[attr-defined]


def test_finishing_ranks_share_places_and_lowest_total_is_first() -> None:
    assert finishing_ranks([30, 10, 30, 5]) == [3, 2, 3, 1]
    assert finishing_ranks([7]) == [1]


def test_only_the_command_that_rates_imports_openskill(tmp_path: Path) -> None:
    """Start-up stays lazy (benchmarks/startup.py): verify and --help never load the rating model."""
    game = play(tmp_path, "g.allegra", seats=(0, 1), seed=91)

    def imported(*args: str) -> set[str]:
        done = subprocess.run([sys.executable, "-X", "importtime", "-m", "allegra_lan", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}

    assert "openskill" not in imported("--help")
    assert "openskill" not in imported("replay", "verify", str(game.path))
    assert "openskill" in imported("replay", "standings", str(game.path))
