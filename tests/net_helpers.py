"""Helpers of the networked-game tests: tables of peers in one trio run, and `allegra`
commands in subprocesses, each with a home of its own.

Everything binds to 127.0.0.1 (in-process nodes never advertise; subprocesses are told
`--interface 127.0.0.1`), so no test reaches the machine's real interfaces.

When a game does not finish, the tests say how far each peer got (events in its
replay file, its last notes), since "timed out" alone would not tell the lead which
peer stalled and what it waited for.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence, TypeVar

import trio

from allegra_lan.log.envelope import decode_event
from allegra_lan.log.identity import Identity
from allegra_lan.net.node import Node
from allegra_lan.net.session import SeatSpec, result_line, run_guest, run_host
from allegra_lan.rules import to_act
from allegra_lan.tools.verify import Verdict, verify_file

LOOPBACK = "127.0.0.1"
# seconds each bot waits before it moves in kill_a_guest_mid_game's game: ~300 events then
# last 3 s or more, so the victim (killed once it holds 20) surely dies mid-game
MID_GAME_PACE = "0.01"
START_LIMIT = 60.0  # seconds an `allegra` process may take to open, find or join a table (a loaded machine)
T = TypeVar("T")
ROOT = Path(__file__).resolve().parents[1]


def unique_table(prefix: str) -> str:
    """A table name no other test (or other mDNS user of 127.0.0.1) uses; short enough for
    the 24 characters `allegra games` shows of a name."""
    name = f"{prefix}-{secrets.token_hex(4)}"
    assert len(name) <= 24, name
    return name


def replay_events(path: Path) -> int:
    """Events in a replay file: its non-empty lines that are not header tags."""
    lines = path.read_text(encoding="ascii").splitlines()
    return sum(1 for line in lines if line and not line.startswith("["))


def kinds_in(path: Path) -> list[str]:
    """The kind of every event in a replay file, in log order (e.g. to find a takeover).

    Only whole lines count: tests poll files a running peer is still appending to, and a
    line read half-written would not decode."""
    text = path.read_text(encoding="utf-8").partition("\n\n")[2]
    whole = text[:text.rfind("\n") + 1]
    return [decode_event(base64.b64decode(x)).kind for x in whole.split("\n") if x]


def wait_for(what: str, check: Callable[[], T], limit: float = 30.0) -> T:
    """Poll `check` until it returns something true, and return that; fail naming `what`
    after `limit` s (generous: a loaded machine is slow, not wrong)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


# ---------------------------------------------------------------- peers in one process


@dataclass
class InProcessPeer:
    """One node of an in-process table: the seats it plays, where it keeps its replays,
    and everything it said (the notes a player would see)."""

    label: str
    seats: list[SeatSpec]
    games_dir: Path
    identity: Identity = field(default_factory=Identity.generate)
    notes: list[str] = field(default_factory=list)
    node: Node | None = None

    def say(self, text: str) -> None:
        self.notes.append(text)

    def replays(self) -> list[Path]:
        return sorted(self.games_dir.glob("*.allegra")) if self.games_dir.exists() else []

    def progress(self) -> str:
        """How far this peer got, for a failure message."""
        files = self.replays()
        got = ", ".join(f"{f.name}: {replay_events(f)} events" for f in files) or "no replay file"
        state = ""
        if self.node is not None:
            t = self.node.table
            d = to_act(t.state) if t.state is not None else None
            state = (f"; table seq {t.seq}, next: {d}, links {len(self.node.links)}, "
                     f"faults {self.node.faults}")
        last = " | ".join(self.notes[-6:])
        return f"{self.label} ({[s.name for s in self.seats]}): {got}{state}; last notes: {last}"


@dataclass
class PlayedTable:
    """A finished in-process table: its peers (the host first) and the seat count."""

    variant: str
    players: int
    peers: list[InProcessPeer]


async def play_table(tmp: Path, variant: str, layout: Sequence[Sequence[SeatSpec]],
                     limit: float) -> PlayedTable:
    """Host `layout[0]`'s seats, let one guest join per further entry (all at once, real TCP
    on 127.0.0.1, by address: no advertising), and play until every peer returns.

    Fails with each peer's progress if the whole table takes longer than `limit` seconds."""
    players = sum(len(seats) for seats in layout)
    peers = [InProcessPeer("host", list(layout[0]), tmp / "host")]
    peers += [InProcessPeer(f"guest{i}", list(seats), tmp / f"guest{i}") for i, seats in enumerate(layout[1:], 1)]
    host = peers[0]
    listening = trio.Event()

    def on_listening(node: Node) -> None:
        host.node = node
        listening.set()

    async def run_the_host() -> None:
        host.node = await run_host(host.identity, LOOPBACK, variant=variant, players=players,
                                   table_name=unique_table("inproc"), seats=host.seats, pin=None,
                                   games_dir=host.games_dir, say=host.say, advertise=False,
                                   on_listening=on_listening)

    async def run_a_guest(peer: InProcessPeer, address: tuple[str, int], table_id: bytes) -> None:
        peer.node = await run_guest(peer.identity, LOOPBACK, address=address, table_id=table_id,
                                    seats=peer.seats, pin=None, games_dir=peer.games_dir, say=peer.say)

    try:
        with trio.fail_after(limit):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_the_host)
                await listening.wait()
                assert host.node is not None
                for peer in peers[1:]:
                    nursery.start_soon(run_a_guest, peer, (LOOPBACK, host.node.port), host.node.table_id)
    except trio.TooSlowError:
        raise AssertionError(
            f"{variant} with {players} seats on {len(peers)} peers did not finish within {limit:g} s:\n  "
            + "\n  ".join(p.progress() for p in peers)) from None
    return PlayedTable(variant, players, peers)


def check_same_finished_game(played: PlayedTable) -> bytes:
    """Every peer holds the same finished, valid game; returns the replay's bytes.

    Checks: one replay file per peer, byte-identical across peers; equal state hashes and
    result lines; the game is over; the replay verifies and is finished; no peer recorded a
    fault or saw a fork; each peer plays exactly its own seats, and the genesis seats every
    name the layout asked for, the host's first seat at seat 0."""
    peers = played.peers
    problems = [p.progress() for p in peers if p.node is None]
    assert not problems, "peers without a node: " + "; ".join(problems)
    nodes = [p.node for p in peers if p.node is not None]
    for p, node in zip(peers, nodes):
        assert node.faults == [], f"{p.label} recorded faults: {node.faults}"
        assert node.replica.fork is None, f"{p.label} saw a fork"
        assert node.table.state is not None and node.table.over, \
            f"{p.label}'s game is not over: {p.progress()}"
        assert len(node.players) == len(p.seats), \
            f"{p.label} plays seats {sorted(node.players)}, it asked for {len(p.seats)}"
    seats_played = sorted(s for node in nodes for s in node.players)
    assert seats_played == list(range(played.players)), f"seats played by the peers: {seats_played}"
    files = [p.replays() for p in peers]
    assert all(len(f) == 1 for f in files), f"replay files per peer: {files}"
    data = [f[0].read_bytes() for f in files]
    for p, blob in zip(peers[1:], data[1:]):
        assert blob == data[0], f"{p.label}'s replay differs from the host's:\n  " + \
            "\n  ".join(q.progress() for q in peers)
    assert len({node.table.state_hash() for node in nodes}) == 1, "final state hashes differ"
    assert len({node.table.head for node in nodes}) == 1, "final heads differ"
    lines = {result_line(node) for node in nodes}
    assert len(lines) == 1 and next(iter(lines)).startswith("game over: "), lines
    verdict: Verdict = verify_file(files[0][0])
    assert verdict.ok and verdict.finished, f"verify: {verdict}"
    assert verdict.events == nodes[0].table.seq == replay_events(files[0][0])
    names = [name for name, _ in verdict.seats]
    assert len(names) == played.players
    assert sorted(names) == sorted(s.name for p in peers for s in p.seats)
    assert names[0] == peers[0].seats[0].name
    # The host's own key sits at seat 0; every guest's own key sits somewhere.
    fingerprints = [fp for _, fp in verdict.seats]
    assert fingerprints[0] == peers[0].identity.fingerprint
    assert all(p.identity.fingerprint in fingerprints for p in peers)
    return data[0]


# ---------------------------------------------------------------- the real command


@dataclass
class CliRun:
    """One `allegra` subprocess with its own config and data directories (so its own key and
    its own replays), its output going to files so a chatty process never blocks on a pipe."""

    label: str
    args: list[str]
    home: Path
    proc: subprocess.Popen[bytes]
    tag: str = ""  # prefix of its output files: a second run in the same home keeps its own

    @property
    def stdout_path(self) -> Path:
        return self.home / f"{self.tag}stdout.txt"

    @property
    def stderr_path(self) -> Path:
        return self.home / f"{self.tag}stderr.txt"

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float) -> int:
        """The exit status; a process still running after `timeout` s is killed and fails the test."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(f"`allegra {' '.join(self.args)}` ({self.label}) still ran after "
                                 f"{timeout:g} s; stdout:\n{self.stdout()}\nstderr (end):\n"
                                 + "\n".join(self.stderr().splitlines()[-15:])) from None

    def wait_for_stderr(self, pattern: str, timeout: float, *, since: int = 0) -> re.Match[str]:
        """Poll the stderr notes until `pattern` shows up (the process must still run or have said it);
        with `since`, only in what it said after its first `since` characters (see said_so_far)."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern, re.M)
        while True:
            found = regex.search(self.stderr()[since:])
            if found:
                return found
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{self.label} never said /{pattern}/ (exit {self.proc.poll()}); "
                                     f"stderr:\n{self.stderr()}\nstdout:\n{self.stdout()}")
            time.sleep(0.05)

    def said_so_far(self) -> int:
        """How much it has said on stderr: a mark for wait_for_stderr(since=...)."""
        return len(self.stderr())

    def kill(self) -> None:
        """SIGKILL, and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def replays(self) -> list[Path]:
        """The replay files in its data directory (none before its genesis)."""
        games = data_home(self.home) / "allegra-lan" / "games"
        return sorted(games.glob("*.allegra")) if games.exists() else []

    def replay_path(self) -> Path:
        found = re.search(r"^replay: (.+)$", self.stdout(), re.M)
        assert found, f"{self.label} printed no replay path; stdout:\n{self.stdout()}"
        return Path(found.group(1))

    def game_over_line(self) -> str:
        lines = [line for line in self.stdout().splitlines() if line.startswith("game over: ")]
        assert len(lines) == 1, f"{self.label}'s stdout:\n{self.stdout()}"
        return lines[0]


def config_home(home: Path) -> Path:
    return home / "config"


def data_home(home: Path) -> Path:
    return home / "data"


class CliPool:
    """Starts `allegra` subprocesses and kills whichever still runs when the test ends."""

    def __init__(self, base: Path, *, wrap: Sequence[str] = ()) -> None:
        self.base = base
        self.wrap = list(wrap)
        self.runs: list[CliRun] = []

    def start(self, label: str, args: Sequence[str], *, home: Path | None = None) -> CliRun:
        """Run `python -m allegra_lan ARGS` with XDG_CONFIG_HOME and XDG_DATA_HOME under base/label,
        or under an earlier run's `home` (its key and replays: `allegra resume`), its output then
        in files of its own (LABEL.stdout.txt)."""
        tag = ""
        if home is None:
            home = self.base / label
            home.mkdir(parents=True, exist_ok=False)
        else:
            tag = f"{label}."
        env = dict(os.environ, XDG_CONFIG_HOME=str(config_home(home)), XDG_DATA_HOME=str(data_home(home)),
                   PYTHONUNBUFFERED="1")
        with open(home / f"{tag}stdout.txt", "xb") as out, open(home / f"{tag}stderr.txt", "xb") as err:
            proc = subprocess.Popen([*self.wrap, sys.executable, "-m", "allegra_lan", *args], cwd=ROOT,
                                    env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        run = CliRun(label, list(args), home, proc, tag)
        self.runs.append(run)
        return run

    def close(self) -> None:
        for run in self.runs:
            if run.proc.poll() is None:
                run.proc.kill()
        for run in self.runs:
            try:
                run.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def start_allegra(home: Path, *args: str) -> subprocess.Popen[str]:
    """`python -m allegra_lan ARGS` with XDG homes under `home`, its output on pipes, in a
    session of its own (so `os.killpg` reaches it and whatever it started)."""
    env = {**os.environ, "XDG_CONFIG_HOME": str(config_home(home)), "XDG_DATA_HOME": str(data_home(home))}
    return subprocess.Popen([sys.executable, "-m", "allegra_lan", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def kill_a_guest_mid_game(clis: CliPool, table: str, net: Sequence[str], *host_args: str,
                          ) -> tuple[CliRun, CliRun, CliRun, Path]:
    """A 3-seat ALLEGRA table of `allegra` processes: the host, then (once it is open: no
    fixed sleeps) the victim and the other guest at once. Once the victim's replay holds
    20 events and it is linked to both others (a peer of the full mesh dies, not one still
    dialling), it is killed with SIGKILL; this returns once both others said they lost it:
    the host, the other guest, the (dead) victim and its replay."""
    host = clis.start("host", ["host", *net, "--bot", "greedy", "--players", "3", "--variant", "allegra",
                               "--table", table, "--rounds", "2", *host_args])
    host.wait_for_stderr(rf"table '{re.escape(table)}' open on ", START_LIMIT)
    joining = ["join", table, *net, "--bot", "random", "--wait", str(START_LIMIT)]
    victim = clis.start("victim", joining)  # both at once: the host gives each the first free seat
    other = clis.start("other", joining)
    deadline = time.monotonic() + START_LIMIT + 30
    replay: Path | None = None
    while replay is None:
        found = victim.replays()
        linked = set(re.findall(r"^connected to (\S+)$", victim.stderr(), re.M))
        if found and replay_events(found[0]) > 20 and len(linked) >= 2:
            replay = found[0]
        else:
            assert victim.proc.poll() is None and time.monotonic() < deadline, \
                f"the victim never held 20 events with links to both others " \
                f"(exit {victim.proc.poll()}):\n{victim.stderr()}"
            time.sleep(0.05)
    marks = {run.label: run.said_so_far() for run in (host, other)}
    victim.kill()
    for run in (host, other):
        run.wait_for_stderr(r"^lost ", START_LIMIT, since=marks[run.label])
    return host, other, victim, replay


def check_same_ending(runs: Sequence[CliRun], timeout: float = 120.0) -> Path:
    """Every run exits 0 within `timeout` s, prints one and the same `game over` line, and
    holds exactly one replay, byte-identical across runs, that verifies as a finished game.
    Returns the first run's replay."""
    codes = {run.label: run.wait(timeout) for run in runs}
    assert all(c == 0 for c in codes.values()), \
        {run.label: (codes[run.label], run.stderr()[-2000:]) for run in runs}
    lines = {run.label: run.game_over_line() for run in runs}
    assert len(set(lines.values())) == 1, lines
    files = {run.label: run.replays() for run in runs}
    assert all(len(f) == 1 for f in files.values()), files
    blobs = {label: f[0].read_bytes() for label, f in files.items()}
    assert len(set(blobs.values())) == 1, {label: replay_events(f[0]) for label, f in files.items()}
    first = files[runs[0].label][0]
    verdict = verify_file(first)
    assert verdict.ok and verdict.finished, verdict
    return first


@dataclass(frozen=True)
class ListedTable:
    """One row of `allegra games`."""

    name: str
    line: str
    taken: int
    total: int
    pin: bool


def parse_games(stdout: str, name: str) -> ListedTable | None:
    """The row of table `name` in `allegra games`'s output, or None if it is not listed."""
    rows = [line for line in stdout.splitlines() if line[:24].strip() == name[:24]]
    assert len(rows) <= 1, f"table {name!r} listed twice:\n{stdout}"
    if not rows:
        return None
    line = rows[0]
    seats = re.search(r"\s(\d+)/(\d+)\s+(yes|no)\s", line)
    assert seats, f"no seats/pin columns in {line!r}"
    return ListedTable(name, line, int(seats.group(1)), int(seats.group(2)), seats.group(3) == "yes")


__all__ = [
    "LOOPBACK", "InProcessPeer", "PlayedTable", "play_table", "check_same_finished_game", "CliRun",
    "CliPool", "ListedTable", "parse_games", "unique_table", "replay_events", "kinds_in", "wait_for",
    "start_allegra", "kill_a_guest_mid_game", "check_same_ending", "START_LIMIT", "MID_GAME_PACE",
]
