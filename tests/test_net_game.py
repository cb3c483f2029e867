"""Whole games over the network (issue 4): real TCP and real zeroconf on 127.0.0.1, no mocks.

In one process: tables of 2 to 6 peers (both variants, up to each maximum) play
complete bot games; every peer ends with the same finished, verifiable replay.
As `allegra` subprocesses: host and joins play to the end with byte-identical
replays; `allegra games` sees a table's seats fill and sees it go when the game
starts; a PIN keeps out who does not know it; bad arguments are one-line errors.

Every subprocess has its own XDG_CONFIG_HOME and XDG_DATA_HOME (its own key and
replays), a timeout, and is killed if it outlives its test. Table names are unique
per test, since other mDNS users may share 127.0.0.1.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any


import pytest
import trio

from allegra_lan.deal.events import KINDS as DEAL_KINDS
from allegra_lan.net.peer import config as node_module
from allegra_lan.net.session import SeatSpec
from allegra_lan.tools.verify import verify_file

from net_helpers import (
    LOOPBACK, CliPool, CliRun, check_same_finished_game, data_home, kinds_in, parse_games, play_table,
    replay_events, unique_table,
)

GAME_LIMIT = 40.0  # seconds one in-process table may take (fail_after)
KNOCK_LIMIT = 120.0  # the same, for the tables whose knock window is stretched beyond it (a lost
# answer stalls the game for 10x this; a loaded machine must never come near it)
PROCESS_LIMIT = 60.0  # seconds one `allegra` game subprocess may take
ARGS_LIMIT = 20.0  # seconds a refused command may take
LISTEN = "2"  # seconds `allegra games` listens (its documented minimum for tables already there)



def _specs(*bots: str, prefix: str) -> list[SeatSpec]:
    return [SeatSpec(f"{prefix}{i}-{bot}", bot) for i, bot in enumerate(bots)]


def _one_seat_each(players: int) -> list[list[SeatSpec]]:
    """The host plays greedy, every guest random: seats of distinct names."""
    return [[SeatSpec("host-greedy", "greedy")]] + \
        [[SeatSpec(f"guest{i}-random", "random")] for i in range(1, players)]


# ---------------------------------------------------------------- in one process


@pytest.mark.parametrize("variant,players", [
    ("allegra", 2), ("allegra", 4), ("allegra", 6),
    ("grande", 2), ("grande", 4), ("grande", 5),
])
def test_in_process_table_one_peer_per_seat(tmp_path: Path, variant: str, players: int) -> None:
    played = trio.run(play_table, tmp_path, variant, _one_seat_each(players), GAME_LIMIT)
    assert len(played.peers) == players
    check_same_finished_game(played)


@pytest.mark.parametrize("variant,layout", [
    # The host runs three seats (one greedy, two random) and meets one guest: knocks among
    # seats of one node must go out like anyone else's.
    ("allegra", [["greedy", "random", "random"], ["random"]]),
    # Grande at its maximum with two peers of two seats each.
    ("grande", [["greedy", "random"], ["random", "greedy"], ["random"]]),
])
def test_in_process_table_peers_with_several_seats(tmp_path: Path, variant: str,
                                                   layout: list[list[str]]) -> None:
    seats = [_specs(*bots, prefix=f"p{i}s") for i, bots in enumerate(layout)]
    played = trio.run(play_table, tmp_path, variant, seats, GAME_LIMIT)
    check_same_finished_game(played)


@pytest.mark.parametrize("players", [3, 6])
def test_in_process_every_knock_answer_reaches_the_active_seat(tmp_path: Path, players: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots answer every deck draw at once (knock or pass), so the active seat never needs its
    knock window: with a window far longer than the game's time limit, a single answer that
    does not reach the active seat (not sent, not forwarded, lost with a replaced link)
    stalls the game past the limit instead of costing 3 silent seconds and the knocker its
    chance to be given the card (R16)."""
    monkeypatch.setattr(node_module, "KNOCK_WINDOW", 10 * KNOCK_LIMIT)
    played = trio.run(play_table, tmp_path, "allegra", _one_seat_each(players), KNOCK_LIMIT)
    check_same_finished_game(played)


# ---------------------------------------------------------------- the real command


def _host_args(table: str, variant: str, players: int, *extra: str) -> list[str]:
    return ["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", str(players),
            "--variant", variant, "--table", table, "--rounds", "1", *extra]


def _join_args(table: str, *extra: str) -> list[str]:
    return ["join", table, "--interface", LOOPBACK, "--bot", "random", *extra]


def _wait_open(host: CliRun, table: str) -> None:
    host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:\d+", ARGS_LIMIT)


def _check_cli_game(runs: list[CliRun], players: int) -> None:
    """All exit 0, print one and the same `game over` line and byte-identical replays that
    verify as finished games with a key of its own at every seat."""
    codes = [run.wait(PROCESS_LIMIT) for run in runs]
    details = "\n".join(f"--- {r.label}: exit {c}\n{r.stdout()}{r.stderr()[-2000:]}" for r, c in zip(runs, codes))
    assert codes == [0] * len(runs), details
    lines = {run.game_over_line() for run in runs}
    assert len(lines) == 1, details
    paths = [run.replay_path() for run in runs]
    for run, path in zip(runs, paths):
        assert path.is_relative_to(data_home(run.home) / "allegra-lan" / "games"), path
    blobs = [p.read_bytes() for p in paths]
    assert all(b == blobs[0] for b in blobs), \
        "replays differ: " + ", ".join(f"{r.label} {replay_events(p)} events" for r, p in zip(runs, paths))
    verdict = verify_file(paths[0])
    assert verdict.ok and verdict.finished, verdict
    assert len(verdict.seats) == players
    assert len({fp for _, fp in verdict.seats}) == players, f"a key sits twice: {verdict.seats}"
    for run in runs:
        assert "Traceback" not in run.stderr(), run.stderr()
        assert "refused" not in run.stdout() and "refused from" not in run.stderr(), \
            f"{run.label} recorded faults:\n{run.stdout()}{run.stderr()}"


@pytest.mark.parametrize("variant,players,deal", [
    ("allegra", 3, []), ("grande", 4, []), ("grande", 2, ["--deal", "seeded"]),
])
def test_cli_host_and_joins_play_to_the_end(clis: CliPool, variant: str, players: int,
                                            deal: list[str]) -> None:
    """`allegra host` deals fair unless told (issue 12): every seat's peer writes its deal
    events, the joiners follow the host's genesis, and the replay verifies; `--deal seeded`
    plays a game without one."""
    table = unique_table(f"cli-{variant[:3]}")
    host = clis.start("host", _host_args(table, variant, players, *deal))
    _wait_open(host, table)
    joins = [clis.start(f"join{i}", _join_args(table)) for i in range(1, players)]
    _check_cli_game([host, *joins], players)
    kinds = kinds_in(host.replay_path())
    if deal:
        assert not any(k.startswith("deal_") for k in kinds), sorted(set(kinds))
    else:
        for kind in DEAL_KINDS:
            assert kind in kinds, (kind, sorted(set(kinds)))
        assert kinds.count("deal_secret") == players  # every seat's, at the end


def _games(clis: CliPool, label: str) -> CliRun:
    run = clis.start(label, ["games", "--interface", LOOPBACK, "--wait", LISTEN])
    code = run.wait(ARGS_LIMIT)
    assert code == 0, run.stderr()
    assert run.stderr() == "", run.stderr()
    return run


def _listed(clis: CliPool, label: str, table: str, taken: int, tries: int = 5) -> tuple[CliRun, Any]:
    """`allegra games` until it lists `table` with `taken` seats taken (at most `tries` runs):
    on a loaded machine one 2 s listen can end before the host's answer is read, which says
    nothing about the listing; a wrong count or a missing table in every run still fails."""
    for i in range(tries):
        run = _games(clis, f"{label}-{i}")
        row = parse_games(run.stdout(), table)
        if row is not None and row.taken == taken:
            break
    return run, row


def test_cli_games_lists_a_table_while_it_fills_and_not_once_it_started(clis: CliPool) -> None:
    table = unique_table("disc")
    host = clis.start("host", _host_args(table, "allegra", 3))
    _wait_open(host, table)

    first, row = _listed(clis, "games-open", table, 1)
    assert row is not None, f"table {table!r} not listed:\n{first.stdout()}"
    assert (row.taken, row.total, row.pin) == (1, 3, False), row.line
    assert "ALLEGRA" in row.line and "Grande" not in row.line, row.line
    assert "127.0.0.1:" in row.line, row.line
    host_fp = row.line.split()[-2]

    join1 = clis.start("join1", _join_args(table))
    host.wait_for_stderr(r"2 of 3 seats taken", PROCESS_LIMIT)
    second, row = _listed(clis, "games-one-joined", table, 2)
    assert row is not None, f"table {table!r} not listed after one join:\n{second.stdout()}"
    assert (row.taken, row.total) == (2, 3), row.line

    # Hold the game before it can end: a stopped peer stalls it (the ceremony waits for its
    # acceptance), so the host surely still runs while we listen, and the table must be gone
    # because its game started, not because its host exited. (join1 is ready by now: its
    # `ready` left right after its `sit`, and we have listened for seconds since.)
    join1.proc.send_signal(signal.SIGSTOP)
    try:
        join2 = clis.start("join2", _join_args(table))
        host.wait_for_stderr(r"the game starts", PROCESS_LIMIT)
        third = _games(clis, "games-started")
        assert host.proc.poll() is None, f"the host exited while the game was held:\n{host.stderr()}"
    finally:
        join1.proc.send_signal(signal.SIGCONT)
    assert parse_games(third.stdout(), table) is None, \
        f"table {table!r} still listed after its game started:\n{third.stdout()}"
    _check_cli_game([host, join1, join2], 3)
    assert verify_file(host.replay_path()).seats[0][1] == host_fp, "the listing named another host key"


def test_cli_pin_keeps_out_a_wrong_or_missing_pin_and_lets_the_right_one_play(clis: CliPool) -> None:
    table = unique_table("pin")
    host = clis.start("host", _host_args(table, "grande", 2, "--pin", "1234"))
    _wait_open(host, table)

    _, listed = _listed(clis, "games", table, 1)
    assert listed is not None and listed.pin and (listed.taken, listed.total) == (1, 2)

    wrong = clis.start("wrong", _join_args(table, "--pin", "9999", "--name", "intruder"))
    code = wrong.wait(ARGS_LIMIT)
    errors = [line for line in wrong.stderr().splitlines() if line.startswith("allegra join: error:")]
    assert code != 0 and len(errors) == 1 and "PIN" in errors[0], (code, wrong.stderr())
    assert "Traceback" not in wrong.stderr() and wrong.stdout() == "", wrong.stderr()

    missing = clis.start("missing", _join_args(table, "--name", "intruder"))
    assert missing.wait(ARGS_LIMIT) == 2, missing.stderr()
    assert missing.stderr().splitlines() == [f"allegra join: error: table '{table}' needs a PIN: give --pin"]

    # The refused join took no seat: the only free seat is still there for the right PIN.
    right = clis.start("right", _join_args(table, "--pin", "1234", "--name", "welcome"))
    _check_cli_game([host, right], 2)
    verdict = verify_file(host.replay_path())
    assert [name for name, _ in verdict.seats] == ["greedy", "welcome"]
    assert "refused a connection: wrong PIN" in host.stderr()
    # Only the right PIN's peer ever connected (once, or twice when both sides dialled at
    # once and the newer connection replaced the older).
    peers = {line.split("connected to ", 1)[1] for line in host.stderr().splitlines()
             if line.startswith("connected to ")}
    assert len(peers) == 1, host.stderr()


# ---------------------------------------------------------------- bad arguments


def _network_jail() -> list[str]:
    """`unshare -n`: run a command in a fresh, empty network namespace, so that a refused
    argument that a regression let through (say `--interface 0.0.0.0`) still cannot reach
    the machine's interfaces."""
    if shutil.which("unshare") is None:
        pytest.skip("`unshare` is not installed: bad-argument runs need a private network namespace")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        pytest.skip(f"the kernel refused `unshare -n`: {probe.stderr.strip()}")
    return ["unshare", "-n"]


BAD = [
    ("no-interface-host", ["host", "--bot", "random"], "--interface"),
    ("no-interface-join", ["join", "--bot", "random"], "--interface"),
    ("no-interface-games", ["games"], "--interface"),
    ("any-host", ["host", "--interface", "0.0.0.0", "--bot", "random"], "0.0.0.0"),
    ("any-join", ["join", "--interface", "0.0.0.0", "--bot", "random"], "0.0.0.0"),
    ("any-games", ["games", "--interface", "0.0.0.0"], "0.0.0.0"),
    ("word-host", ["host", "--interface", "not-an-address", "--bot", "random"], "not-an-address"),
    ("word-join", ["join", "--interface", "not-an-address", "--bot", "random"], "not-an-address"),
    ("word-games", ["games", "--interface", "not-an-address"], "not-an-address"),
    ("grande-7", ["host", "--interface", LOOPBACK, "--bot", "random", "--players", "7", "--variant", "grande"],
     "7"),
    ("bot-host", ["host", "--interface", LOOPBACK, "--bot", "nosuchbot"], "nosuchbot"),
    ("bot-join", ["join", "--interface", LOOPBACK, "--bot", "nosuchbot"], "nosuchbot"),
    ("bots-host", ["host", "--interface", LOOPBACK, "--bot", "random", "--bots", "greedy,nosuchbot"],
     "nosuchbot"),
    ("rounds-0", ["host", "--interface", LOOPBACK, "--bot", "random", "--rounds", "0"], "1 to 20 rounds"),
    ("rounds-word", ["host", "--interface", LOOPBACK, "--bot", "random", "--rounds", "many"], "'many'"),
    ("deal-word", ["host", "--interface", LOOPBACK, "--bot", "random", "--deal", "marked"], "'marked'"),
    ("deal-join", ["join", "--interface", LOOPBACK, "--bot", "random", "--deal", "fair"], "--deal"),
]


def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    pool = CliPool(tmp_path, wrap=_network_jail())
    try:
        runs = [(pool.start(label, args), mention) for label, args, mention in BAD]
        failures = []
        for run, mention in runs:
            code = run.wait(ARGS_LIMIT)
            lines = run.stderr().splitlines()
            command = run.args[0]
            if (code != 2 or len(lines) != 1 or not lines[0].startswith(f"allegra {command}: error: ")
                    or mention not in lines[0] or run.stdout() != ""):
                failures.append(f"{run.label} (allegra {' '.join(run.args)}): exit {code}, "
                                f"stdout {run.stdout()!r}, stderr {run.stderr()!r}")
        assert not failures, "\n".join(failures)
    finally:
        pool.close()

