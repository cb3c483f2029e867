"""`allegra simulate` as users run it: the real command in a subprocess, and its figures."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allegra_lan import __version__
from allegra_lan.bots import play_game
from allegra_lan.bots.driver import GameStats
from allegra_lan.cli import main
from allegra_lan.rules import ruleset_for
from allegra_lan.local import simulated_setup
from allegra_lan.simulate import (
    SeatSummary, SimulateArgs, SimulateError, Summary, check, format_summary, simulate,
    wilson_interval,
)

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["simulate", "--games", "2", "--players", "3", "--seed", "7", "--bots", "greedy,random,random"]


def run(args: list[str], command: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """The command line as a user types it (by default `python -m allegra_lan`)."""
    cmd = (command or [sys.executable, "-m", "allegra_lan"]) + args
    env = dict(os.environ, PYTHONHASHSEED="random")
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def commands() -> list[list[str]]:
    """`python -m allegra_lan`, and the installed `allegra` script when it is on PATH."""
    out = [[sys.executable, "-m", "allegra_lan"]]
    script = shutil.which("allegra")
    if script is None and Path(sys.executable).with_name("allegra").exists():
        script = str(Path(sys.executable).with_name("allegra"))
    if script is not None:
        out.append([script])
    return out


# ------------------------------------------------------------------ the real command


@pytest.mark.parametrize("variant", ["grande", "allegra"])
def test_same_arguments_same_output_byte_for_byte(variant: str) -> None:
    args = QUICK + ["--variant", variant]
    outputs = []
    for command in commands():
        for _ in range(2):
            p = run(args, command)
            assert p.returncode == 0, p.stderr
            assert p.stderr == ""
            outputs.append(p.stdout)
    assert len(set(outputs)) == 1
    text = outputs[0]
    title = "ALLEGRA Grande" if variant == "grande" else "ALLEGRA"
    assert text.startswith(f"{title}: 3 players, 2 games, seed 7\n")
    assert "greedy" in text and "random" in text
    assert ("action cards activated" in text) == (variant == "grande")
    assert ("knocks" in text) == (variant == "allegra")


def test_jobs_play_the_same_games_and_print_the_same_output() -> None:
    """--jobs N splits the games over processes; the summary is the one of --jobs 1."""
    one = run(QUICK + ["--games", "3"])
    two = run(QUICK + ["--games", "3", "--jobs", "2"])
    assert one.returncode == two.returncode == 0, two.stderr
    assert two.stderr == "" and one.stdout == two.stdout
    assert "win rate (95% CI)" in one.stdout


def test_the_wilson_interval_is_the_textbook_one() -> None:
    """Known values: 8 of 10 is 0.490-0.943; no games says nothing; all or none stay in [0, 1]."""
    lo, hi = wilson_interval(8, 10)
    assert (round(lo, 3), round(hi, 3)) == (0.490, 0.943)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    assert wilson_interval(200, 400) == pytest.approx((0.4512, 0.5488), abs=1e-4)


def test_another_seed_gives_other_games() -> None:
    a = run(QUICK)
    b = run([x if x != "7" else "8" for x in QUICK])
    assert a.returncode == b.returncode == 0
    assert a.stdout.splitlines()[2:] != b.stdout.splitlines()[2:]


ERRORS = [
    (["--players", "7"], "ALLEGRA Grande is for 2 to 5 players, not 7"),
    (["--players", "1"], "ALLEGRA Grande is for 2 to 5 players, not 1"),
    (["--variant", "allegra", "--players", "7"], "ALLEGRA is for 2 to 6 players, not 7"),
    (["--bots", "clever"], "unknown bot 'clever'"),
    (["--bots", "greedy,random"], "--bots names 2 bots for 4 players"),
    (["--bots", "greedy,,random,random"], "--bots needs a bot name for every seat"),
    (["--games", "0"], "--games must be 1 or more, not 0"),
    (["--games", "-3"], "--games must be 1 or more, not -3"),
    (["--jobs", "0"], "--jobs must be 1 or more, not 0"),
    (["--games", "ten"], "argument --games: invalid int value: 'ten'"),
    (["--players", "4.5"], "argument --players: invalid int value: '4.5'"),
    (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    (["--variant", "golf"], "argument --variant: invalid choice: 'golf'"),
    (["--frobnicate"], "unrecognized arguments: --frobnicate"),
]


@pytest.mark.parametrize(("args", "message"), ERRORS, ids=[" ".join(a) for a, _ in ERRORS])
def test_errors_are_one_line_and_exit_2(args: list[str], message: str) -> None:
    p = run(["simulate"] + args)
    assert p.returncode == 2
    assert p.stdout == ""
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("allegra simulate: error: ")
    assert message in lines[0]


def test_errors_through_the_installed_script() -> None:
    for command in commands():
        p = run(["simulate", "--players", "7"], command)
        assert (p.returncode, p.stdout) == (2, "")
        assert p.stderr == "allegra simulate: error: ALLEGRA Grande is for 2 to 5 players, not 7\n"


def test_no_command_is_an_error() -> None:
    p = run([])
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1
    assert p.stderr.startswith("allegra: error: ")


def test_help_and_version() -> None:
    p = run(["--help"])
    assert p.returncode == 0 and "simulate" in p.stdout and p.stderr == ""
    p = run(["simulate", "--help"])
    assert p.returncode == 0 and "--bots" in p.stdout and "--variant" in p.stdout
    p = run(["--version"])
    assert (p.returncode, p.stdout) == (0, f"allegra {__version__}\n")


# ------------------------------------------------------------------ in process


def test_main_returns_status_and_prints_the_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(QUICK) == 0
    out = capsys.readouterr().out
    args = SimulateArgs(players=3, games=2, seed=7, bots=("greedy", "random", "random"))
    assert out == format_summary(simulate(args))
    assert main(["simulate", "--games", "0"]) == 2
    assert capsys.readouterr().err == "allegra simulate: error: --games must be 1 or more, not 0\n"
    assert main(["--version"]) == 0


def test_game_g_is_dealt_from_the_ceremony_made_from_s_and_g() -> None:
    args = SimulateArgs(variant="allegra", players=3, games=2, seed=4, bots=("random",))
    summary = simulate(args)
    totals = [
        play_game(ruleset_for("allegra"), 3, simulated_setup(4, g, 3).seed, ["random"] * 3)[1].totals
        for g in range(2)
    ]
    for seat in range(3):
        assert summary.seats[seat].totals == [t[seat] for t in totals]
    assert [s.bot for s in summary.seats] == ["random"] * 3


def test_check_expands_one_name_to_every_seat() -> None:
    assert check(SimulateArgs(players=3, bots=("random",)))[1] == ["random"] * 3
    with pytest.raises(SimulateError):
        check(SimulateArgs(players=3, bots=("random", "greedy")))


def test_figures_wins_mean_and_population_spread() -> None:
    """Shared wins count for every winner (R11); the spread is the population deviation."""
    summary = Summary(ruleset_for("allegra"), SimulateArgs(variant="allegra", players=2, games=2),
                      [SeatSummary(0, "greedy"), SeatSummary(1, "random")])
    g1 = GameStats(players=2, variant="allegra", totals=(10, 30), winners=(0,), turns=(20, 30, 40),
                   cleared=(3, 0, 6), longest_chain=1, knock_windows=5, knocks=2, gives=1)
    g2 = GameStats(players=2, variant="allegra", totals=(20, 20), winners=(0, 1), turns=(10, 10, 10),
                   cleared=(0, 0, 0), longest_chain=1)
    summary.add(g1)
    summary.add(g2)
    assert [s.wins for s in summary.seats] == [2, 1]
    assert summary.seats[0].mean == 15.0 and summary.seats[0].spread == 5.0
    assert summary.seats[1].mean == 25.0 and summary.seats[1].spread == 5.0
    text = format_summary(summary)
    assert "   0  greedy         2   1.00 (0.34-1.00)       15.00      5.00" in text
    assert "   1  random         1   0.50 (0.09-0.91)       25.00      5.00" in text
    assert "turns per round:         20.00" in text  # 120 turns in 6 rounds
    assert "cards cleared per round: 1.50" in text
    assert "knocks:                  2 in 5 deck draws" in text
    assert "cards given:             1" in text


def test_no_command_names_every_command() -> None:
    r = run([], command=[sys.executable, "-m", "allegra_lan"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    for name in ("play", "simulate", "id", "replay", "diff", "games", "host", "join", "watch", "resume"):
        assert name in r.stderr, name
