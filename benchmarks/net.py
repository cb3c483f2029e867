"""Network speed on 127.0.0.1: raw round trip, move propagation, and time until a table is seen.

    /tmp/venv/bin/python benchmarks/net.py [--moves 500] [--pace 0.02] [--round-trips 2000]
                                           [--work-dir DIR]

Three figures, in one run, every socket on 127.0.0.1 (nothing is advertised or
browsed anywhere else):

(a) raw trio TCP round trip between two processes: an echo server subprocess
    (this script with `--role echo`) and this process, first with raw bytes, then
    with the project's frames (`FramedStream`, canonical msgpack) carrying an
    `events` message of one event's size. Median and 99th percentile.
(b) propagation: the time from one peer appending a move (`Replica.publish`,
    the signed event handed to its replica) until every other peer has accepted
    it (its replica took the event through `Table`), with 4 peers (Grande, its
    maximum) and 6 peers (ALLEGRA, its maximum), and ALLEGRA with 4 (so CPU per
    event compares across n for one variant), one process per peer (this
    script with `--role peer`, running `run_host` / `run_guest` with `random`
    bots), at least `--moves` moves each. Each peer process wraps
    `Replica.publish` and `Replica.received` (net/sync.py, whatever shell drives
    them), `ReplayWriter.append` and `FramedStream.send/receive` in its own
    memory (allegra_lan is not edited) and writes (seq, CLOCK_MONOTONIC ns)
    pairs to a file; CLOCK_MONOTONIC is one clock for every process of a Linux
    machine, so the pairs compare across processes. Bots wait `--pace` seconds
    before each move so that each move is measured alone (one move in flight at
    a time, as at a real table); a second, shorter run with no pace shows the
    same figure when bots move back to back. Targets: median <= 5x the raw
    round trip's median, 99th percentile <= 20x; copies per move n-1.
    To say why a figure is what it is, the run also splits the time to the slowest
    peer in three (the author's own append and replay write until its first frame
    goes out; the wire and the receiver's wake-up until the slowest peer reads its
    first copy; that peer's checks until it accepted), counts the copies of each
    move the peers send (from their frames) and of every event (the replicas'
    `copies` and `relayed` counters), times the replay appends with and without
    fsync, measures each peer's CPU time per event, and estimates what a LAN
    with a CPU per peer would give (the author's part, half the raw round trip,
    one receiver's checks: no queueing behind the other peers). Every peer here
    shares this machine's CPUs and disk, which a LAN's peers do not:
    `--work-dir /dev/shm` keeps the replays on tmpfs to leave the disk out.
(c) discovery: the time from starting `allegra host` (a subprocess) until
    `allegra games` in another process lists the table (target <= 2 s). `allegra
    games` listens for a fixed `--wait`, so it is run again and again, with a short
    wait, from the moment the host starts, until one run lists the table; the
    figure is when that run ended, so it includes the listing process's own start,
    its wait and its exit. Also: whether a run for a table already open lists it.

Every loop is bounded in count and time; the whole run takes one to two minutes.
"""

from __future__ import annotations

import argparse
import os
import queue
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import trio  # noqa: E402

from allegra_lan.log.identity import Identity  # noqa: E402
from allegra_lan.log.replay import ReplayWriter  # noqa: E402
from allegra_lan.net.framing import ConnectionClosed, FramedStream  # noqa: E402
from allegra_lan.net.node import Node  # noqa: E402
from allegra_lan.net.sync import Replica  # noqa: E402
from allegra_lan.net.session import SeatSpec, result_line, run_guest, run_host  # noqa: E402

LOOPBACK = "127.0.0.1"
SCRIPT = os.path.abspath(__file__)
ROOT = Path(SCRIPT).resolve().parents[1]
SETUP_KINDS = frozenset({"genesis", "accept", "commit", "reveal"})  # events that are not moves
RAW_PAYLOAD = 256  # bytes echoed per raw round trip
EVENT_SIZE = 220  # bytes of the event carried per framed round trip (a typical signed move)
WARMUP = 50  # round trips not counted (connection warm-up, caches)
TARGET_MEDIAN_RATIO = 5.0
TARGET_P99_RATIO = 20.0
TARGET_DISCOVERY = 2.0  # seconds
COPIES_SLACK = 0.05  # copies per move above n-1 still counted as n-1 (a gap's catch-up sends a few again)
PEER_LIMIT = 90.0  # seconds a peer process may run before it gives up
GAMES_MAX = 8  # games per configuration at most, whatever the move count
CONFIG_BUDGET = 45.0  # seconds of games per configuration at most
DISCOVERY_RUNS = 3  # hosts started, each looked for by `allegra games` runs from the same moment on
DISCOVERY_LATE = 1.5  # seconds after the host's start, for a run that looks for a table already open
DISCOVERY_WAIT = "0.3"  # seconds each `allegra games` listens
DISCOVERY_LIMIT = 10.0  # seconds after which a table not listed counts as a miss


# ---------------------------------------------------------------- figures


@dataclass(frozen=True)
class Spread:
    """Median and 99th percentile (nearest rank) of a sample, in microseconds."""

    n: int
    median: float
    p99: float
    low: float
    high: float

    @classmethod
    def of(cls, micros: Sequence[float]) -> "Spread":
        if not micros:
            raise ValueError("no samples")
        s = sorted(micros)
        rank = max(1, -(-99 * len(s) // 100))  # ceil(0.99 n): nearest-rank percentile
        return cls(len(s), statistics.median(s), s[rank - 1], s[0], s[-1])

    def show(self) -> str:
        return (f"median {self.median:9.1f} us   p99 {self.p99:9.1f} us   "
                f"(min {self.low:.1f}, max {self.high:.1f}, n={self.n})")


def show_seconds(value: float | None) -> str:
    return f"{value:.2f} s" if value is not None else "never"


def verdict(value: float, target: float) -> str:
    return "meets target" if value <= target else "MISSES target"


# ---------------------------------------------------------------- (a) round trip


async def echo_server() -> None:
    """Serve two connections, one after the other: raw bytes, then frames; exit at the end."""
    listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
    listener = listeners[0]
    print(listener.socket.getsockname()[1], flush=True)
    with trio.fail_after(PEER_LIMIT):
        raw = await listener.accept()
        async with raw:
            async for data in raw:
                await raw.send_all(data)
        framed = FramedStream(await listener.accept())
        while True:
            try:
                msg = await framed.receive()
            except ConnectionClosed:
                break
            await framed.send(msg)
        await framed.aclose()
    await listener.aclose()


async def measure_round_trips(port: int, count: int) -> tuple[list[float], list[float]]:
    """Round trips in microseconds: raw bytes, then one-event frames."""
    clock = time.perf_counter_ns
    raw_times: list[float] = []
    payload = secrets.token_bytes(RAW_PAYLOAD)
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    async with stream:
        for i in range(WARMUP + count):
            t0 = clock()
            await stream.send_all(payload)
            got = 0
            while got < RAW_PAYLOAD:
                data = await stream.receive_some(RAW_PAYLOAD - got)
                if not data:
                    raise RuntimeError("the echo server closed the connection")
                got += len(data)
            if i >= WARMUP:
                raw_times.append((clock() - t0) / 1000)
    framed_times: list[float] = []
    framed = FramedStream(await trio.open_tcp_stream(LOOPBACK, port))
    event = secrets.token_bytes(EVENT_SIZE)
    for i in range(WARMUP + count):
        msg = {"t": "events", "from": i, "items": [event]}
        t0 = clock()
        await framed.send(msg)
        back = await framed.receive()
        if i >= WARMUP:
            framed_times.append((clock() - t0) / 1000)
        if back != msg:
            raise RuntimeError("the echo server changed a frame")
    await framed.aclose()
    return raw_times, framed_times


def round_trip(count: int) -> tuple[Spread, Spread]:
    server = subprocess.Popen([sys.executable, SCRIPT, "--role", "echo"], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        raw, framed = trio.run(measure_round_trips, port, count)
        server.wait(timeout=20)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
    return Spread.of(raw), Spread.of(framed)


# ---------------------------------------------------------------- (b) propagation: one peer


@dataclass
class Recorder:
    """What a peer process saw, kept in memory while the game runs and written at its end."""

    published: list[tuple[int, int]] = field(default_factory=list)  # (seq, ns) when we appended our own
    accepted: list[tuple[int, str, int]] = field(default_factory=list)  # (seq, kind, ns) when our replica took it
    sent: list[tuple[int, int, int]] = field(default_factory=list)  # (from, count, ns) as a frame goes to a socket
    received: list[tuple[int, int, int]] = field(default_factory=list)  # (from, count, ns) as a frame is read
    frames: int = 0  # `events` frames this peer sent
    cpu: list[int] = field(default_factory=list)  # process CPU ns at the first and the latest accept
    writes: dict[bool, list[int]] = field(default_factory=lambda: {True: [0, 0], False: [0, 0]})
    replica: Replica | None = None  # this peer's replica (its copy counters, read at the end)
    replica_cpu: int = 0  # process CPU ns spent inside Replica.publish and Replica.received
    kinds_in: dict[str, int] = field(default_factory=dict)  # frames read, by message type

    def install(self) -> None:
        """Wrap Replica.publish and Replica.received (net/sync.py: whichever shell drives
        them), ReplayWriter.append, and FramedStream's send and receive, in this process only."""
        recorder = self
        original_publish = Replica.publish
        original_received = Replica.received
        original_append = ReplayWriter.append
        original_frame_send = FramedStream.send
        original_frame_receive = FramedStream.receive

        def took(replica: Replica, before: int) -> None:
            now = time.monotonic_ns()  # the replica has just taken these events
            recorder.replica = replica
            if replica.table.seq > before:
                for ev in replica.table.events[before:]:
                    recorder.accepted.append((ev.seq, ev.kind, now))
                cpu = time.process_time_ns()
                recorder.cpu = [recorder.cpu[0] if recorder.cpu else cpu, cpu]

        def publish(replica: Replica, signed: bytes, *args: Any, **kwargs: Any) -> Any:
            before, t0, c0 = replica.table.seq, time.monotonic_ns(), time.process_time_ns()
            try:
                return original_publish(replica, signed, *args, **kwargs)
            finally:
                recorder.replica_cpu += time.process_time_ns() - c0
                if replica.table.seq > before:
                    recorder.published.append((before, t0))
                took(replica, before)

        def received(replica: Replica, *args: Any, **kwargs: Any) -> Any:
            before, c0 = replica.table.seq, time.process_time_ns()
            try:
                return original_received(replica, *args, **kwargs)
            finally:
                recorder.replica_cpu += time.process_time_ns() - c0
                took(replica, before)

        def append(writer: ReplayWriter, signed: bytes, *args: Any, **kwargs: Any) -> None:
            sync = bool(kwargs.get("sync", True))
            t0 = time.monotonic_ns()
            try:
                original_append(writer, signed, *args, **kwargs)
            finally:
                acc = recorder.writes[sync]
                acc[0] += 1
                acc[1] += time.monotonic_ns() - t0

        async def frame_send(stream: FramedStream, msg: dict[str, Any]) -> None:
            if msg.get("t") == "events":
                recorder.frames += 1
                recorder.sent.append((msg["from"], len(msg["items"]), time.monotonic_ns()))
            await original_frame_send(stream, msg)

        async def frame_receive(stream: FramedStream) -> dict[str, Any]:
            msg = await original_frame_receive(stream)
            t = msg.get("t")
            if type(t) is str and len(t) <= 20:
                recorder.kinds_in[t] = recorder.kinds_in.get(t, 0) + 1
            if msg.get("t") == "events" and isinstance(msg.get("from"), int) and isinstance(msg.get("items"), list):
                recorder.received.append((msg["from"], len(msg["items"]), time.monotonic_ns()))
            return msg

        Replica.publish = publish  # type: ignore[method-assign]
        Replica.received = received  # type: ignore[method-assign]
        ReplayWriter.append = append  # type: ignore[method-assign]
        FramedStream.send = frame_send  # type: ignore[method-assign]
        FramedStream.receive = frame_receive  # type: ignore[method-assign]

    def write(self, path: Path, result: str) -> None:
        copies = (self.replica.copies, self.replica.relayed) if self.replica is not None else (0, 0)
        lines = [f"result {result}", f"frames {self.frames} {copies[0]} {copies[1]}",
                 f"cpu {' '.join(map(str, self.cpu))}", f"replica_cpu {self.replica_cpu}",
                 f"kinds {' '.join(f'{t}={n}' for t, n in sorted(self.kinds_in.items()))}",
                 f"writes {' '.join(str(x) for k in (True, False) for x in self.writes[k])}"]
        lines += [f"pub {seq} {ns}" for seq, ns in self.published]
        lines += [f"acc {seq} {kind} {ns}" for seq, kind, ns in self.accepted]
        lines += [f"snd {start} {count} {ns}" for start, count, ns in self.sent]
        lines += [f"rcv {start} {count} {ns}" for start, count, ns in self.received]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("\n".join(lines) + "\n", encoding="ascii")
        os.replace(tmp, path)


async def peer_main(args: argparse.Namespace) -> str:
    """Play one seat of the benchmark table (host if no --port), recording accept times."""
    say: Callable[[str], None] = lambda text: None  # noqa: E731
    games_dir = Path(args.games_dir)
    with trio.fail_after(PEER_LIMIT):
        if args.port is None:
            def listening(node: Node) -> None:
                print(f"LISTENING {node.port} {node.table_id.hex()}", flush=True)

            node = await run_host(Identity.generate(), LOOPBACK, variant=args.variant, players=args.players,
                                  table_name="bench", seats=[SeatSpec("p0", "random")], pin=None,
                                  games_dir=games_dir, say=say, advertise=False, on_listening=listening,
                                  pace=args.pace, deal=args.deal,
                                  options={"rounds": args.rounds} if args.rounds else None)
        else:
            node = await run_guest(Identity.generate(), LOOPBACK, address=(LOOPBACK, args.port),
                                   table_id=bytes.fromhex(args.table_id), seats=[SeatSpec("p", "random")],
                                   pin=None, games_dir=games_dir, say=say, pace=args.pace)
    return result_line(node)


def run_peer(args: argparse.Namespace) -> int:
    recorder = Recorder()
    recorder.install()
    result = "failed"
    try:
        result = trio.run(peer_main, args)
    finally:
        recorder.write(Path(args.out), result)
    return 0


# ---------------------------------------------------------------- (b) propagation: the table


@dataclass
class GameRecord:
    """One peer's file, read back; times in CLOCK_MONOTONIC ns, by seq."""

    result: str
    frames: int  # `events` frames sent
    items: int  # event copies sent in them (the replica's counter)
    relayed: int  # of those, copies of another author's events
    writes: tuple[int, int, int, int]  # replay lines appended with fsync (count, ns), then without
    published: dict[int, int]
    accepted: dict[int, int]
    kinds: dict[int, str]
    first_sent: dict[int, int]  # the first frame carrying the seq went to a socket
    first_read: dict[int, int]  # the first frame carrying the seq was read
    cpu: float = 0.0  # CPU ns this peer spent from its first accepted event to its last
    replica_cpu: float = 0.0  # of the whole run, CPU ns inside its replica (the checks)
    kinds_in: dict[str, int] = field(default_factory=dict)  # frames this peer read, by type
    copies: dict[int, int] = field(default_factory=dict)  # seq -> copies of it this peer sent


def read_record(path: Path) -> GameRecord:
    rec = GameRecord("", 0, 0, 0, (0, 0, 0, 0), {}, {}, {}, {}, {})
    for line in path.read_text(encoding="ascii").splitlines():
        word, _, rest = line.partition(" ")
        parts = rest.split(" ")
        if word == "result":
            rec.result = rest
        elif word == "cpu" and len(parts) == 2:
            rec.cpu = float(int(parts[1]) - int(parts[0]))
        elif word == "replica_cpu":
            rec.replica_cpu = float(parts[0])
        elif word == "kinds":
            rec.kinds_in = {t: int(n) for t, _, n in (part.partition("=") for part in parts if part)}
        elif word == "frames":
            rec.frames, rec.items, rec.relayed = int(parts[0]), int(parts[1]), int(parts[2])
        elif word == "writes":
            rec.writes = (int(parts[0]), int(parts[1]), int(parts[2]), int(parts[3]))
        elif word == "pub":
            rec.published[int(parts[0])] = int(parts[1])
        elif word == "acc":
            seq = int(parts[0])
            rec.kinds[seq] = parts[1]
            rec.accepted.setdefault(seq, int(parts[2]))
        elif word in ("snd", "rcv"):
            start, count, ns = int(parts[0]), int(parts[1]), int(parts[2])
            into = rec.first_sent if word == "snd" else rec.first_read
            for seq in range(start, start + count):
                into.setdefault(seq, ns)
                if word == "snd":
                    rec.copies[seq] = rec.copies.get(seq, 0) + 1
    return rec


@dataclass
class GameResult:
    """Propagation of every move of one game: to the last peer and to the first."""

    to_all: list[float]
    to_first: list[float]
    author: list[float]  # append -> the first frame carrying the move goes to a socket
    wire: list[float]  # -> the slowest peer reads its first copy
    taking: list[float]  # -> the slowest peer has accepted it
    moves: int
    events: int
    copies_per_move: float  # copies of a move sent by all peers together (target n-1), mean
    copies_per_event: float  # every copy of every event (setup and catch-up too): replica counters
    relayed_per_event: float  # of those, relayed for another author
    writes: tuple[int, int, int, int]  # replay appends of all peers: fsynced (count, ns), not fsynced
    cpu_per_event: list[float]  # each peer's CPU microseconds per event of the game
    replica_cpu_per_event: list[float]  # of which inside its replica (decode, signature, engine)
    frames_in: dict[str, float]  # frames a peer read per event, by message type (mean over peers)
    seconds: float
    records: list[GameRecord] = field(default_factory=list)  # every peer's, for benchmarks/deal.py


def play_one_game(base: Path, variant: str, players: int, pace: float, deal: str = "seeded",
                  rounds: int = 0) -> GameResult:
    """One game, one process per peer; the host first, then every guest at once (`deal`
    and `rounds`, 0: the variant's, for the host's table: benchmarks/deal.py)."""
    base.mkdir(parents=True)
    common = ["--role", "peer", "--variant", variant, "--players", str(players), "--pace", str(pace),
              "--deal", deal, "--rounds", str(rounds)]
    procs: list[subprocess.Popen[str]] = []
    began = time.monotonic()
    try:
        host = subprocess.Popen([sys.executable, SCRIPT, *common, "--out", str(base / "rec0"),
                                 "--games-dir", str(base / "g0")], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        procs.append(host)
        assert host.stdout is not None
        line = host.stdout.readline().split()
        if len(line) != 3 or line[0] != "LISTENING":
            raise RuntimeError(f"the host peer did not start: {line}")
        port, table_id = line[1], line[2]
        for i in range(1, players):
            procs.append(subprocess.Popen(
                [sys.executable, SCRIPT, *common, "--out", str(base / f"rec{i}"), "--games-dir",
                 str(base / f"g{i}"), "--port", port, "--table-id", table_id],
                stdout=subprocess.DEVNULL, cwd=ROOT))
        for p in procs:
            p.wait(timeout=PEER_LIMIT + 10)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
    seconds = time.monotonic() - began
    records = [read_record(base / f"rec{i}") for i in range(players)]
    results = {r.result for r in records}
    if len(results) != 1 or not next(iter(results)).startswith("game over"):
        raise RuntimeError(f"the peers did not finish one game: {results}")
    files = sorted(base.rglob("*.allegra"))
    if len(files) != players or len({f.read_bytes() for f in files}) != 1:
        raise RuntimeError(f"the peers' replays differ ({len(files)} files)")
    to_all: list[float] = []
    to_first: list[float] = []
    author_part: list[float] = []
    wire: list[float] = []
    taking: list[float] = []
    events = max(len(r.accepted) for r in records)
    for author, rec in enumerate(records):
        for seq, sent in rec.published.items():
            if rec.kinds.get(seq) in SETUP_KINDS:
                continue
            others = [r.accepted.get(seq) for i, r in enumerate(records) if i != author]
            if any(t is None for t in others):
                raise RuntimeError(f"seq {seq} never reached every peer")
            times = [(t - sent) / 1000 for t in others if t is not None]
            to_all.append(max(times))
            to_first.append(min(times))
            slowest = max((r for i, r in enumerate(records) if i != author), key=lambda r: r.accepted[seq])
            out, read = rec.first_sent.get(seq), slowest.first_read.get(seq)
            if out is not None and read is not None:
                author_part.append((out - sent) / 1000)
                wire.append((read - out) / 1000)
                taking.append((slowest.accepted[seq] - read) / 1000)
    moves = [seq for seq, kind in records[0].kinds.items() if kind not in SETUP_KINDS]
    per_move = [sum(r.copies.get(seq, 0) for r in records) for seq in moves]
    cpu = [r.cpu / 1000 / max(events - 1, 1) for r in records]
    replica_cpu = [r.replica_cpu / 1000 / max(events, 1) for r in records]
    kinds = sorted({t for r in records for t in r.kinds_in})
    frames_in = {t: sum(r.kinds_in.get(t, 0) for r in records) / len(records) / max(events, 1)
                 for t in kinds}
    writes = tuple(sum(r.writes[i] for r in records) for i in range(4))
    return GameResult(to_all, to_first, author_part, wire, taking, len(to_all), events,
                      statistics.mean(per_move) if per_move else 0.0,
                      sum(r.items for r in records) / max(events, 1),
                      sum(r.relayed for r in records) / max(events, 1),
                      writes, cpu, replica_cpu, frames_in, seconds, records)  # type: ignore[arg-type]


@dataclass
class Propagation:
    peers: int
    variant: str
    pace: float
    games: int
    to_all: Spread
    to_first: Spread
    author: Spread
    wire: Spread
    taking: Spread
    copies_per_move: float
    copies_per_event: float
    relayed_per_event: float
    write_synced: float  # microseconds per replay append with fsync (mean; 0 if none)
    write_unsynced: float  # and without
    writes: tuple[int, int]  # how many of each
    cpu_per_event: float  # median over peers and games, microseconds
    replica_cpu_per_event: float  # of which inside the replica, the same way
    frames_in: dict[str, float]  # frames a peer read per event, by type (mean over games)
    cpu_all_peers: float  # all peers of a game together, microseconds per event (mean over games)
    seconds: float


def propagation(work: Path, variant: str, players: int, pace: float, moves: int) -> Propagation:
    """Games until `moves` moves are measured (bounded by GAMES_MAX and CONFIG_BUDGET)."""
    to_all: list[float] = []
    to_first: list[float] = []
    parts: tuple[list[float], list[float], list[float]] = ([], [], [])
    copies: list[tuple[float, float, float]] = []
    writes = [0, 0, 0, 0]
    cpu: list[float] = []
    replica_cpu: list[float] = []
    frames_in: list[dict[str, float]] = []
    cpu_all: list[float] = []
    began = time.monotonic()
    games = 0
    while len(to_all) < moves and games < GAMES_MAX \
            and time.monotonic() - began < CONFIG_BUDGET:
        g = play_one_game(work / f"{variant}-{players}-{pace:g}-{games}", variant, players, pace)
        to_all += g.to_all
        to_first += g.to_first
        parts[0].extend(g.author)
        parts[1].extend(g.wire)
        parts[2].extend(g.taking)
        copies.append((g.copies_per_move, g.copies_per_event, g.relayed_per_event))
        writes = [a + b for a, b in zip(writes, g.writes)]
        cpu += g.cpu_per_event
        replica_cpu += g.replica_cpu_per_event
        frames_in.append(g.frames_in)
        cpu_all.append(sum(g.cpu_per_event))
        games += 1
    return Propagation(players, variant, pace, games, Spread.of(to_all), Spread.of(to_first),
                       Spread.of(parts[0]), Spread.of(parts[1]), Spread.of(parts[2]),
                       *(statistics.mean(c[i] for c in copies) for i in range(3)),
                       writes[1] / 1000 / max(writes[0], 1), writes[3] / 1000 / max(writes[2], 1),
                       (writes[0], writes[2]), statistics.median(cpu), statistics.median(replica_cpu),
                       {t: statistics.mean(f.get(t, 0.0) for f in frames_in)
                        for t in sorted({t for f in frames_in for t in f})},
                       statistics.mean(cpu_all),
                       time.monotonic() - began)


# ---------------------------------------------------------------- (c) discovery


def cli_env(home: Path) -> dict[str, str]:
    return {**os.environ, "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
            "PYTHONUNBUFFERED": "1"}


@dataclass(frozen=True)
class Discovery:
    """One `allegra host` start and the `allegra games` runs that looked for its table."""

    delay: float  # seconds between starting the host and starting the first `allegra games`
    listed: float | None  # seconds from starting the host until a listing run ended, None if never
    host_open: float | None  # seconds until the host said its table was open
    runs: int  # `allegra games` runs it took
    run_seconds: float  # how long one `allegra games` run took, on average
    again: float | None  # a further run, once the table was there: its duration if it listed it


def games_lists(name: str, home: Path) -> tuple[bool, float]:
    """Run `allegra games` once: did it list table `name`, and how long did it take."""
    s = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "allegra_lan", "games", "--interface", LOOPBACK,
                          "--wait", DISCOVERY_WAIT], env=cli_env(home), capture_output=True,
                         text=True, timeout=20, cwd=ROOT)
    listed = any(line[:24].strip() == name for line in out.stdout.splitlines())
    return listed, time.monotonic() - s


def discovery_once(work: Path, i: int, delay: float) -> Discovery:
    """Start a host; `delay` s later start `allegra games` runs, one after another, until one lists it."""
    name = f"bench-{secrets.token_hex(4)}"
    host_home, games_home = work / f"host{i}", work / f"games{i}"
    lines: queue.Queue[tuple[float, str]] = queue.Queue()
    t0 = time.monotonic()
    host = subprocess.Popen([sys.executable, "-m", "allegra_lan", "host", "--interface", LOOPBACK, "--bot",
                             "random", "--players", "2", "--table", name], env=cli_env(host_home),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, start_new_session=True)

    def read_notes() -> None:
        assert host.stderr is not None
        for line in host.stderr:
            lines.put((time.monotonic(), line))

    reader = threading.Thread(target=read_notes, daemon=True)
    reader.start()
    listed: float | None = None
    again: float | None = None
    runs = 0
    spent = 0.0
    try:
        time.sleep(delay)
        while time.monotonic() - t0 < DISCOVERY_LIMIT and host.poll() is None:
            seen, took = games_lists(name, games_home)
            runs += 1
            spent += took
            if seen:
                listed = time.monotonic() - t0
                break
        if listed is not None:
            seen, took = games_lists(name, games_home)
            again = took if seen else None
    finally:
        if host.poll() is None:
            host.send_signal(signal.SIGTERM)  # a clean stop withdraws the ad
        try:
            host.wait(timeout=10)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait(timeout=10)
        reader.join(timeout=5)
    host_open: float | None = None
    while not lines.empty():
        at, line = lines.get()
        if "open on" in line:
            host_open = at - t0
            break
    return Discovery(delay, listed, host_open, runs, spent / max(runs, 1), again)


# ---------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=500, help="moves measured per peer count (default 500)")
    ap.add_argument("--round-trips", type=int, default=2000, help="round trips measured (default 2000)")
    ap.add_argument("--pace", type=float, default=0.02, help="seconds a bot waits before each move (default 0.02)")
    ap.add_argument("--work-dir", type=Path, default=None,
                    help="where the peers keep their replays (default: a new directory in the system's "
                         "temporary directory); e.g. /dev/shm to leave the disk's fsync out")
    ap.add_argument("--role", choices=["echo", "peer"], help=argparse.SUPPRESS)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    ap.add_argument("--players", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("--games-dir", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--table-id", help=argparse.SUPPRESS)
    ap.add_argument("--deal", default="seeded", help=argparse.SUPPRESS)
    ap.add_argument("--rounds", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.role == "echo":
        trio.run(echo_server)
        return 0
    if args.role == "peer":
        return run_peer(args)
    if args.moves < 500 or args.round_trips < 500:
        ap.error("--moves and --round-trips must be 500 or more")
    if not 0 <= args.pace <= 1:
        ap.error("--pace must be 0 to 1 s")

    began = time.monotonic()
    print(f"network benchmark on {LOOPBACK}: Python {sys.version.split()[0]}, trio {trio.__version__}, "
          f"{os.cpu_count()} CPUs")
    raw, framed = round_trip(args.round_trips)
    print("(a) round trip between two processes")
    print(f"  raw bytes ({RAW_PAYLOAD} B):           {raw.show()}")
    print(f"  frames (one {EVENT_SIZE} B event):      {framed.show()}")

    work = Path(tempfile.mkdtemp(prefix="allegra-netbench-", dir=args.work_dir))
    fs = subprocess.run(["df", "--output=fstype", str(work)], capture_output=True, text=True).stdout.split()
    try:
        print(f"(b) propagation: append -> accepted by every other peer (one process per peer, "
              f"random bots; replays under {work}, a {fs[-1] if fs else '?'} file system)")
        results: list[Propagation] = []
        for variant, players, pace, moves in (("grande", 4, args.pace, args.moves),
                                              ("allegra", 6, args.pace, args.moves),
                                              ("allegra", 4, args.pace, args.moves),
                                              ("grande", 4, 0.0, 1), ("allegra", 6, 0.0, 1)):
            p = propagation(work, variant, players, pace, moves)
            results.append(p)
            how = f"pace {pace:g} s" if pace else "no pace (back to back)"
            print(f"  {players} peers, {variant}, {how}: {p.games} games, {p.seconds:.1f} s; "
                  f"CPU per event {p.cpu_per_event:.0f} us a peer ({p.replica_cpu_per_event:.0f} us of it in "
                  f"its replica: decode, signature, engine), {p.cpu_all_peers:.0f} us all peers "
                  f"together (on {os.cpu_count()} CPUs)")
            print(f"    copies: {p.copies_per_move:.2f} per move (target n-1 = {players - 1}, within "
                  f"{COPIES_SLACK:.0%} for catch-up after gaps: "
                  f"{verdict(p.copies_per_move, (players - 1) * (1 + COPIES_SLACK))}); "
                  f"{p.copies_per_event:.2f} per event with "
                  f"the setup and catch-up, {p.relayed_per_event:.2f} of them relayed (replica counters)")
            print(f"    replay appends: {p.writes[0]} fsynced, {p.write_synced:.0f} us each; "
                  f"{p.writes[1]} not, {p.write_unsynced:.0f} us each")
            print("    frames a peer reads per event: " + ", ".join(
                f"{t} {n:.2f}" for t, n in sorted(p.frames_in.items(), key=lambda kv: -kv[1])))
            print(f"    to every peer: {p.to_all.show()}")
            print(f"    to the first:  {p.to_first.show()}")
            print(f"    where the time to every peer goes (medians): the author's append until its first "
                  f"frame goes out {p.author.median:.0f} us; then until the slowest peer reads its "
                  f"first copy {p.wire.median:.0f} us; then until that peer accepted it {p.taking.median:.0f} us")
            print(f"    ratio to raw round trip: median {p.to_all.median / raw.median:6.1f}x "
                  f"(target <= {TARGET_MEDIAN_RATIO:g}x, {verdict(p.to_all.median / raw.median, TARGET_MEDIAN_RATIO)}), "
                  f"p99 {p.to_all.p99 / raw.median:6.1f}x "
                  f"(target <= {TARGET_P99_RATIO:g}x, {verdict(p.to_all.p99 / raw.median, TARGET_P99_RATIO)})")
            print(f"    ratio to framed round trip: median {p.to_all.median / framed.median:6.1f}x, "
                  f"p99 {p.to_all.p99 / framed.median:6.1f}x")
            lan = p.author.median + raw.median / 2 + p.taking.median
            print(f"    on a LAN with a CPU per peer (an estimate: the author's part + half the raw round "
                  f"trip + one receiver's checks, as measured here; no queueing behind other peers): "
                  f"{lan:.0f} us = {lan / raw.median:.1f}x the raw round trip")

        paced = {(p.variant, p.peers): p for p in results if p.pace}
        four, six = paced.get(("allegra", 4)), paced.get(("allegra", 6))
        if four is not None and six is not None:
            print(f"  CPU per event per peer, one variant (allegra), paced: 4 peers {four.cpu_per_event:.0f} us, "
                  f"6 peers {six.cpu_per_event:.0f} us ({six.cpu_per_event / four.cpu_per_event:.2f}x; flat in n "
                  f"is 1x); in the replica {four.replica_cpu_per_event:.0f} us and "
                  f"{six.replica_cpu_per_event:.0f} us")
        print(f"(c) discovery: `allegra host` started -> `allegra games --wait {DISCOVERY_WAIT}`, "
              f"started at the same moment and run again and again, lists the table")
        found: list[float] = []
        for i in range(DISCOVERY_RUNS):
            d = discovery_once(work, i, 0.0)
            found.append(d.listed if d.listed is not None else float("inf"))
            print(f"  run {i + 1}: listed after {show_seconds(d.listed)} ({d.runs} `allegra games` run(s) of "
                  f"{d.run_seconds:.2f} s; the host said its table was open after {show_seconds(d.host_open)}; "
                  f"one more run straight after: {'listed it' if d.again is not None else 'did not list it'})")
        worst = max(found)
        print(f"  median {statistics.median(found):.2f} s, worst {worst:.2f} s "
              f"(target <= {TARGET_DISCOVERY:g} s, {verdict(worst, TARGET_DISCOVERY)})")
        late = discovery_once(work, DISCOVERY_RUNS, DISCOVERY_LATE)
        print(f"  a table already open ({DISCOVERY_LATE:g} s after its host started; open after "
              f"{show_seconds(late.host_open)}): listed by the first `allegra games` run: "
              f"{'yes' if late.runs == 1 and late.listed is not None else 'no'}, "
              f"which took {late.run_seconds:.2f} s")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"total {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
