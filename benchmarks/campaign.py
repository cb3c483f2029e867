"""The hostile-input campaign of issue 9: every attack at once on real peers, then the figures.

    .venv/bin/python benchmarks/campaign.py [--minutes 30] [--kills 50] [--connections 2000]
                                            [--pin-seconds 90] [--only kills,flood,pin,disk,fuzz]
                                            [--work-dir DIR]

Everything runs on this machine, on 127.0.0.1 and other loopback addresses (127.0.0.0/8);
nothing is advertised or browsed on another interface; every loop is bounded in count and
time. The phases, run one after another while the fuzzers (fuzz/run.py) run beside them:

  kills  3-seat games of `allegra` processes (host, victim, other), each host also holding 300
         unfinished connections from 50 addresses; the victim is killed with SIGKILL at a
         random moment and brought back with `allegra resume`, again and again, game after
         game until the campaign's time is up (at least --kills kills); every game must end
         with three identical, verified replays.
  flood  a 2-seat game while --connections connections from 200 loopback addresses open,
         send half a frame and idle, in waves; the game must finish identically.
  pin    a table with a 4-digit and one with a 6-digit PIN under an online guessing attack
         with the real handshake, as fast as the host lets it; then, once the minute of the
         wrong-PIN limit is over (it holds for the whole table), the right PIN joins and the
         game finishes. Counts guesses tried, answered "wrong", refused as too many.
  disk   a host whose data directory is a 64 KiB tmpfs (a private mount namespace, so nothing
         leaks): it must stop in one line naming the file, leave a replay prefix that reads as
         unfinished, and its guest must finish the game (a bot takes the host's seat).
  fuzz   every atheris target of fuzz/run.py for the campaign's whole length, if atheris is
         installed.

Every honest process's resident memory is sampled twice a second (target: under 100 MB);
every stderr is searched for "Traceback". The run prints one table of figures and exits 1 if
any check failed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
MEMORY_LIMIT_MB = 100.0


@dataclass
class Proc:
    """One `allegra` subprocess with its own home (key, replays) and its output in files."""

    label: str
    home: Path
    popen: subprocess.Popen[bytes]

    def stderr(self) -> str:
        return (self.home / f"{self.label}.err").read_text(errors="replace")

    def stdout(self) -> str:
        return (self.home / f"{self.label}.out").read_text(errors="replace")

    def replays(self) -> list[Path]:
        games = self.home / "data" / "allegra-lan" / "games"
        return sorted(games.glob("*.allegra")) if games.exists() else []


@dataclass
class Campaign:
    work: Path
    results: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)
    peak_mb: dict[str, float] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _held: list[socket.socket] = field(default_factory=list)

    # ------------------------------------------------------------ processes

    def start(self, label: str, home: Path, *args: str, wrap: list[str] | None = None,
              env: dict[str, str] | None = None) -> Proc:
        home.mkdir(parents=True, exist_ok=True)
        e = dict(os.environ, XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"),
                 PYTHONUNBUFFERED="1", **(env or {}))
        n = sum(1 for p in self.procs if p.home == home and p.label.startswith(label))
        name = f"{label}{n or ''}"
        with open(home / f"{name}.out", "wb") as out, open(home / f"{name}.err", "wb") as err:
            popen = subprocess.Popen([*(wrap or []), sys.executable, "-m", "allegra_lan", *args],
                                     cwd=ROOT, env=e, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err, start_new_session=True)
        proc = Proc(name, home, popen)
        self.procs.append(proc)
        return proc

    def wait(self, proc: Proc, timeout: float) -> int | None:
        try:
            return proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.fail(f"{proc.label} in {proc.home.name} still ran after {timeout:g} s")
            self.kill(proc)
            return None

    def kill(self, proc: Proc) -> None:
        if proc.popen.poll() is None:
            os.killpg(proc.popen.pid, signal.SIGKILL)
            proc.popen.wait(timeout=10)

    def fail(self, text: str) -> None:
        print(f"  FAIL: {text}", flush=True)
        self.failures.append(text)

    def watch_memory(self) -> None:
        """Sample every live honest process's RSS twice a second (a thread, until stopped)."""
        def loop() -> None:
            while not self._stop.wait(0.5):
                for p in list(self.procs):
                    if p.popen.poll() is not None:
                        continue
                    try:
                        status = Path(f"/proc/{p.popen.pid}/status").read_text()
                    except OSError:
                        continue
                    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
                    if m:
                        key = f"{p.home.name}/{p.label}"
                        self.peak_mb[key] = max(self.peak_mb.get(key, 0.0), int(m.group(1)) / 1024)
        threading.Thread(target=loop, daemon=True).start()

    def open_port(self, proc: Proc, table: str, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(rf"table '{re.escape(table)}' open on [\d.]+:(\d+)", proc.stderr())
            if m:
                return int(m.group(1))
            if proc.popen.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"{proc.label} did not open {table}: {proc.stderr()[-500:]}")

    def same_finished(self, what: str, procs: list[Proc]) -> bool:
        """Every process's replay of the game is byte-identical and verifies as finished."""
        from allegra_lan.tools.verify import verify_file

        files = [p.replays() for p in procs]
        if not all(files):
            self.fail(f"{what}: a peer wrote no replay")
            return False
        blobs = {f[0].read_bytes() for f in files}
        if len(blobs) != 1:
            self.fail(f"{what}: the replays differ")
            return False
        v = verify_file(files[0][0])
        if not (v.ok and v.finished):
            self.fail(f"{what}: the replay does not verify as a finished game: {v}")
            return False
        return True

    # ------------------------------------------------------------ phases

    def kills(self, target: int, budget: float) -> None:
        """Kill a guest mid-game again and again; each game ends with identical logs."""
        rng = random.Random(9)
        done = games = resumes_failed = 0
        until = time.monotonic() + budget
        flooded = 0
        while time.monotonic() < until:  # `target` kills at least; more while time is left
            games += 1
            base = self.work / f"kills-{games}"
            table = f"kills-{os.getpid()}-{games}"
            net = ["--interface", LOOPBACK, "--pace", "0.05"]
            host = self.start("host", base / "host", "host", *net, "--bot", "greedy", "--players",
                              "3", "--variant", "grande", "--table", table)
            port = self.open_port(host, table)
            flooded += len(self._half_frames(port, 300))  # strangers at the door all game long
            victim = self.start("victim", base / "victim", "join", table, *net, "--bot", "random")
            other = self.start("other", base / "other", "join", table, *net, "--bot", "random")
            replay: Path | None = None
            while host.popen.poll() is None and time.monotonic() < until:
                seen = len(victim.replays()[0].read_bytes()) if victim.replays() else 0
                time.sleep(rng.uniform(0.7, 2.5))
                found = victim.replays()
                if not found or len(found[0].read_bytes()) <= seen:
                    continue  # not yet in the game (or stalled): no kill before it has played
                replay = found[0]
                self.kill(victim)
                done += 1
                victim = self.start("victim", base / "victim", "resume", str(replay),
                                    "--interface", LOOPBACK, "--pace", "0.05")
            peers = [host, other, victim]
            codes = [self.wait(p, 180) for p in peers]
            self._close_half_frames()
            if codes != [0, 0, 0]:
                resumes_failed += 1
                self.fail(f"kills game {games}: exit codes {codes}; victim said: "
                          f"{victim.stderr()[-400:]}")
            else:
                self.same_finished(f"kills game {games}", peers)
        self.results["kills: peers killed mid-game (SIGKILL) and resumed"] = done
        self.results["kills: games played"] = games
        self.results["kills: unfinished connections sent to their hosts"] = flooded
        self._close_half_frames()
        if done < target:
            self.fail(f"kills: only {done} of {target} kills in the time given")

    def flood(self, count: int) -> None:
        """A game while `count` unfinished connections from 200 addresses come in waves."""
        base = self.work / "flood"
        table = f"flood-{os.getpid()}"
        net = ["--interface", LOOPBACK, "--pace", "0.03"]
        host = self.start("host", base / "host", "host", *net, "--bot", "greedy", "--players",
                          "2", "--variant", "grande", "--table", table)
        port = self.open_port(host, table)
        guest = self.start("guest", base / "guest", "join", table, *net, "--bot", "random")
        sources = [f"127.0.{1 + i // 250}.{2 + i % 250}" for i in range(200)]
        opened = refused = 0
        until = time.monotonic() + 120
        while opened + refused < count and host.popen.poll() is None and time.monotonic() < until:
            wave: list[socket.socket] = []
            for i in range(min(500, count - opened - refused)):
                s = socket.socket()
                s.settimeout(2.0)
                try:
                    s.bind((sources[i % len(sources)], 0))
                    s.connect((LOOPBACK, port))
                    s.sendall(struct.pack(">I", 60_000) + os.urandom(2000))
                    wave.append(s)
                    opened += 1
                except OSError:
                    s.close()
                    refused += 1
            time.sleep(2.0)
            for s in wave:
                s.close()
        codes = [self.wait(p, 240) for p in (host, guest)]
        if codes != [0, 0]:
            self.fail(f"flood: exit codes {codes}: {host.stderr()[-400:]}")
        else:
            self.same_finished("flood", [host, guest])
        self.results["flood: connections opened (half a 60 kB frame each)"] = opened
        self.results["flood: connections the kernel refused"] = refused
        notes = [x for x in host.stderr().splitlines()
                 if "unfinished connection" in x or x.startswith("refused a connection")]
        self.results["flood: lines the host said about it"] = len(notes)

    def _half_frames(self, port: int, count: int) -> list[socket.socket]:
        """`count` connections from 50 loopback addresses, each holding half a frame."""
        opened: list[socket.socket] = []
        for i in range(count):
            s = socket.socket()
            s.settimeout(2.0)
            try:
                s.bind((f"127.0.3.{2 + i % 50}", 0))
                s.connect((LOOPBACK, port))
                s.sendall(struct.pack(">I", 3000) + os.urandom(1500))
                opened.append(s)
            except OSError:
                s.close()
        self._held.extend(opened)
        return opened

    def _close_half_frames(self) -> None:
        for s in self._held:
            s.close()
        self._held.clear()

    def pin(self, digits: int, seconds: float) -> None:
        """Guess a `digits`-digit PIN online with the real handshake for `seconds`."""
        import trio

        from allegra_lan.log.identity import Identity
        from allegra_lan.net.framing import FramedStream
        from allegra_lan.net.handshake import HandshakeError, handshake

        base = self.work / f"pin{digits}"
        table = f"pin{digits}-{os.getpid()}"
        secret = "".join(random.Random(digits).choice("0123456789") for _ in range(digits))
        host = self.start("host", base / "host", "host", "--interface", LOOPBACK, "--bot", "greedy",
                          "--players", "2", "--variant", "grande", "--table", table, "--pin", secret)
        port = self.open_port(host, table)
        table_id = bytes.fromhex(re.search(r"table id ([0-9a-f]{32})", host.stderr()).group(1))
        counts = {"tried": 0, "wrong": 0, "too many": 0, "other": 0, "in": 0}
        tried: set[str] = set()

        async def attack() -> None:
            me = Identity.generate()
            rng = random.Random(digits * 7)
            with trio.move_on_after(seconds):
                while counts["tried"] < min(100_000, 10 ** digits - 1):  # every wrong PIN once
                    guess = "".join(rng.choice("0123456789") for _ in range(digits))
                    if guess == secret or guess in tried:
                        await trio.lowlevel.checkpoint()
                        continue
                    tried.add(guess)
                    counts["tried"] += 1
                    try:
                        stream = await trio.open_tcp_stream(LOOPBACK, port, local_address="127.0.9.9")
                    except OSError:
                        await trio.sleep(0.05)
                        continue
                    fs = FramedStream(stream)
                    try:
                        await handshake(fs, me, initiator=True, table_id=table_id, pin=guess,
                                        expect_keys=None)
                        counts["in"] += 1
                    except HandshakeError as e:
                        text = str(e).lower()
                        key = "too many" if "too many" in text else "wrong" if "pin" in text else "other"
                        counts[key] += 1
                    finally:
                        await fs.aclose()

        trio.run(attack)
        time.sleep(62.0)  # the limit is per table: the right PIN too waits out the minute
        guest = self.start("guest", base / "guest", "join", table, "--interface", LOOPBACK, "--bot",
                           "random", "--pin", secret)
        codes = [self.wait(p, 120) for p in (host, guest)]
        if codes != [0, 0]:
            self.fail(f"pin{digits}: the right PIN did not play the game: {codes} {guest.stderr()[-300:]}")
        else:
            self.same_finished(f"pin{digits}", [host, guest])
        if counts["in"]:
            self.fail(f"pin{digits}: a wrong PIN got in")
        per_min = counts["wrong"] / max(1.0, seconds / 60)  # PINs the host checked a minute
        space = 10 ** digits
        self.results[f"pin {digits} digits: guesses tried in {seconds:.0f} s"] = counts["tried"]
        self.results[f"pin {digits} digits: answered wrong PIN"] = counts["wrong"]
        self.results[f"pin {digits} digits: refused as too many"] = counts["too many"]
        self.results[f"pin {digits} digits: other refusals"] = counts["other"]
        self.results[f"pin {digits} digits: wrong PINs checked a minute"] = round(per_min, 1)
        self.results[f"pin {digits} digits: days to try half the PINs online"] = \
            round(space / 2 / max(per_min, 1e-9) / 60 / 24, 1)

    def disk(self) -> None:
        """A host whose data directory fills up mid-game; its guest finishes the game."""
        if shutil.which("unshare") is None or os.geteuid() != 0:
            self.fail("disk: needs root and unshare for a private tmpfs")
            return
        base = self.work / "disk"
        table = f"disk-{os.getpid()}"
        out = base / "host-copy"
        out.mkdir(parents=True)
        data = base / "host" / "data"
        data.mkdir(parents=True)
        script = ('mount -t tmpfs -o size=64k tmpfs "$0" || exit 97; "$@"; rc=$?; '
                  'cp -r "$0/." "' + str(out) + '"; exit $rc')
        net = ["--interface", LOOPBACK, "--pace", "0.01"]
        host = self.start("host", base / "host", "host", *net, "--bot", "greedy", "--players", "2",
                          "--variant", "grande", "--table", table, "--takeover-after", "2",
                          wrap=["unshare", "--mount", "--", "sh", "-c", script, str(data)])
        self.open_port(host, table)
        guest = self.start("guest", base / "guest", "join", table, *net, "--bot", "random")
        code = self.wait(host, 120)
        gcode = self.wait(guest, 180)
        err = host.stderr()
        lines = [x for x in err.splitlines() if "disk" in x.lower() or "space" in x.lower()]
        self.results["disk: host exit code"] = code
        self.results["disk: host's line"] = lines[-1][:90] if lines else "(none)"
        if code in (0, 97, None) or not lines:
            self.fail(f"disk: the host did not stop in one line: exit {code}: {err[-400:]}")
        from allegra_lan.tools.verify import verify_file

        prefixes = sorted(out.rglob("*.allegra"))
        if prefixes:
            v = verify_file(prefixes[0])
            self.results["disk: host's replay prefix"] = "unfinished, valid" if v.ok else f"INVALID {v}"
            if not v.ok:
                self.fail(f"disk: the replay left on the full disk is not a valid prefix: {v}")
        if gcode != 0:
            self.fail(f"disk: the guest did not finish the game: exit {gcode}: {guest.stderr()[-300:]}")
        else:
            from allegra_lan.tools.verify import verify_file as vf

            v = vf(guest.replays()[0])
            self.results["disk: guest's replay"] = "finished, valid" if v.ok and v.finished else str(v)

    def fuzz(self, seconds: float) -> subprocess.Popen[bytes] | None:
        runner = ROOT / "fuzz" / "run.py"
        if not runner.exists():
            self.fail("fuzz: fuzz/run.py is missing")
            return None
        log = open(self.work / "fuzz.log", "wb")
        return subprocess.Popen([sys.executable, str(runner), "--all", "--seconds",
                                 str(int(seconds))], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    # ------------------------------------------------------------ the end

    def report(self) -> int:
        self._stop.set()
        for p in self.procs:
            if p.popen.poll() is None:
                self.kill(p)
            if "Traceback" in p.stderr():
                self.fail(f"a traceback in {p.home.name}/{p.label}: "
                          f"{p.stderr().split('Traceback')[1][:300]!r}")
        worst = max(self.peak_mb.items(), key=lambda kv: kv[1], default=("-", 0.0))
        self.results["memory: peak RSS of any honest peer (MB)"] = f"{worst[1]:.1f} ({worst[0]})"
        if worst[1] >= MEMORY_LIMIT_MB:
            self.fail(f"memory: {worst[0]} reached {worst[1]:.0f} MB")
        print()
        width = max(len(k) for k in self.results) if self.results else 10
        for k, v in self.results.items():
            print(f"{k:<{width}}  {v}")
        print(f"\n{len(self.failures)} check(s) failed" if self.failures else "\nevery check held")
        return 1 if self.failures else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--connections", type=int, default=2000)
    ap.add_argument("--pin-seconds", type=float, default=90.0)
    ap.add_argument("--only", default="kills,flood,pin,disk,fuzz")
    ap.add_argument("--work-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="allegra-campaign-"))
    c = Campaign(work)
    c.watch_memory()
    began = time.monotonic()
    total = args.minutes * 60
    fuzzer = c.fuzz(total) if "fuzz" in only else None
    phases: list[tuple[str, Callable[[], None]]] = [
        ("flood", lambda: c.flood(args.connections)),
        ("pin", lambda: (c.pin(4, args.pin_seconds), c.pin(6, args.pin_seconds))),
        ("disk", c.disk),
        ("kills", lambda: c.kills(args.kills, max(60.0, total - (time.monotonic() - began) - 30))),
    ]
    for name, run in phases:
        if name in only:
            print(f"[{time.monotonic() - began:6.0f} s] {name}", flush=True)
            try:
                run()
            except Exception as e:  # a broken phase is a failed check, and the others still run
                c.fail(f"{name}: {type(e).__name__}: {e}")
    if fuzzer is not None:
        left = total - (time.monotonic() - began)
        try:
            fuzzer.wait(timeout=max(1.0, left) + 120)
        except subprocess.TimeoutExpired:
            os.killpg(fuzzer.pid, signal.SIGKILL)
        log = (work / "fuzz.log").read_text(errors="replace")
        c.results["fuzz: runner's last lines"] = " | ".join(log.strip().splitlines()[-3:])[:200]
        if fuzzer.returncode != 0:
            c.fail(f"fuzz: the fuzz runner exited {fuzzer.returncode} (see {work / 'fuzz.log'})")
    c.results["campaign: minutes"] = round((time.monotonic() - began) / 60, 1)
    c.results["campaign: work directory"] = str(work)
    return c.report()


if __name__ == "__main__":
    sys.exit(main())
