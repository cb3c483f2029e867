"""`python -m allegra_lan.sim`: run seeded games, check every invariant, summarise.

    python -m allegra_lan.sim --seeds 10000 --jobs 2 [--start S] [--peers 2-6]
                              [--faults kind,kind|all|none] [--cpu] [--latency MS]
    python -m allegra_lan.sim --seed S [-v] [same options]

Exit status 0 when every run held every invariant, 1 when one failed (each
failing seed is printed with the one command that replays it), 2 for a bad
argument (one line on stderr).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Iterator, Sequence, TextIO

from .invariants import INVARIANTS
from .run import Result, replay_command, run_seed
from .scenario import FAULT_KINDS, Options

PROG = "python -m allegra_lan.sim"
CHUNK = 16  # seeds a worker runs before it reports back
SHOW_FAILURES = 20


class ArgError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise ArgError(message)


def _peers(text: str) -> tuple[int, int]:
    try:
        lo, _, hi = text.partition("-")
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--peers needs N or N-M, not {text!r}") from None
    if not 2 <= a <= b <= 6:
        raise argparse.ArgumentTypeError(f"--peers must be within 2-6, low to high, not {text!r}")
    return a, b


def _faults(text: str) -> tuple[str, ...]:
    if text == "all":
        return FAULT_KINDS
    if text == "none":
        return ()
    kinds = tuple(k for k in text.split(",") if k)
    bad = [k for k in kinds if k not in FAULT_KINDS]
    if bad or not kinds:
        raise argparse.ArgumentTypeError(
            f"unknown fault kind {bad[0] if bad else text!r}: choose all, none or from "
            f"{','.join(FAULT_KINDS)}")
    return tuple(k for k in FAULT_KINDS if k in kinds)


def _ms(text: str) -> float:
    try:
        ms = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--latency needs milliseconds, not {text!r}") from None
    if not 0.001 <= ms <= 1000:
        raise argparse.ArgumentTypeError(f"--latency must be 0.001 to 1000 ms, not {text}")
    return ms / 1000


def _count(name: str, lo: int):  # type: ignore[no-untyped-def]
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} needs a whole number, not {text!r}") from None
        if n < lo:
            raise argparse.ArgumentTypeError(f"{name} must be {lo} or more, not {n}")
        return n
    return parse


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Seeded games of real peers on a simulated network, "
                "with faults and adversaries; every run is checked against the invariants.")
    p.add_argument("--seeds", type=_count("--seeds", 1), default=100, metavar="N",
                   help="how many seeds to run (default 100)")
    p.add_argument("--start", type=_count("--start", 0), default=0, metavar="S",
                   help="the first seed (default 0)")
    p.add_argument("--seed", type=_count("--seed", 0), default=None, metavar="S",
                   help="run this one seed (with -v: print its trace)")
    p.add_argument("--jobs", "-j", type=_count("--jobs", 1), default=1, metavar="N",
                   help="worker processes (default 1)")
    p.add_argument("--peers", type=_peers, default=(2, 6), metavar="N-M",
                   help="peers per game (default 2-6)")
    p.add_argument("--faults", type=_faults, default=FAULT_KINDS, metavar="KINDS",
                   help=f"fault kinds to draw from: all (default), none, or some of {','.join(FAULT_KINDS)}")
    p.add_argument("--cpu", action="store_true",
                   help="each peer's calls cost their measured CPU time on that peer's own "
                        "virtual CPU (a LAN with a CPU per peer; timings then depend on this machine)")
    p.add_argument("--latency", type=_ms, default=None, metavar="MS",
                   help="every link's one-way latency in milliseconds, jitter a tenth of it "
                        "(default: seeded per link, 0.1-2 ms and 0.05-3 ms of jitter)")
    p.add_argument("--deal", choices=("seeded", "fair"), default="seeded",
                   help="the deal the games use: seeded (default: the ceremony's seed fixes "
                        "every card) or fair (issue 12's fair deal, far slower)")
    p.add_argument("-v", "--verbose", action="store_true", help="with --seed: print the run's trace")
    return p


def _chunk(seeds: Sequence[int], options: Options) -> list[Result]:
    return [_slim(run_seed(s, options)) for s in seeds]


def _slim(r: Result) -> Result:
    r.trace = []
    return r


def results(seeds: Sequence[int], options: Options, jobs: int) -> Iterator[Result]:
    if jobs == 1 or len(seeds) <= CHUNK:
        for s in seeds:
            yield _slim(run_seed(s, options))
        return
    chunks = [seeds[i:i + CHUNK] for i in range(0, len(seeds), CHUNK)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        pending: set[Future[list[Result]]] = set()
        it = iter(chunks)
        for c in it:
            pending.add(pool.submit(_chunk, c, options))
            if len(pending) >= jobs * 3:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                yield from f.result()
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(_chunk, nxt, options))


class Bar:
    """Progress on stderr: a bar redrawn with \\r on a terminal, a line every 10% elsewhere."""

    def __init__(self, err: TextIO, total: int) -> None:
        self.err = err
        self.total = total
        try:
            self.tty = err.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.step = max(1, total // 10)
        self.t0 = time.monotonic()
        self.last = 0.0

    def update(self, done: int, failed: int) -> None:
        rate = done / max(time.monotonic() - self.t0, 1e-9)
        text = f"{done}/{self.total} games, {rate:.1f}/s, {failed} failed"
        if self.tty:
            now = time.monotonic()
            if now - self.last > 0.1 or done == self.total:
                self.last = now
                filled = 30 * done // max(self.total, 1)
                self.err.write(f"\r[{'#' * filled}{'-' * (30 - filled)}] {text}")
                if done == self.total:
                    self.err.write("\n")
                self.err.flush()
        elif done % self.step == 0 or done == self.total:
            self.err.write(text + "\n")
            self.err.flush()


def _fmt(counter: Counter[str], order: Sequence[str]) -> str:
    keys = [k for k in order if counter.get(k)] + sorted(k for k in counter if k not in order)
    return ", ".join(f"{k} {counter[k]}" for k in keys) or "none"


def summary(rs: list[Result], wall: float, options: Options, out: TextIO) -> None:
    games = len(rs)
    outcome = Counter(r.outcome for r in rs)
    faults: Counter[str] = Counter()
    checks: Counter[str] = Counter()
    for r in rs:
        faults.update(r.faults)
        checks.update(r.checks)
    events = sum(r.events for r in rs)
    per_game = sum(r.wall for r in rs) / max(games, 1)
    in_peers = sum(r.cpu for r in rs) / max(games, 1)
    out.write(f"games: {games} ({_fmt(outcome, ('finished', 'stopped', 'stalled'))})\n")
    out.write(f"events: {events} ({events / max(games, 1):.0f} a game); frames: "
              f"{sum(r.frames for r in rs)}; inputs: {sum(r.steps for r in rs)}; virtual time: "
              f"{sum(r.virtual for r in rs):.0f} s\n")
    out.write(f"cost: {per_game * 1000:.1f} ms a game ({in_peers * 1000:.1f} ms of it inside the "
              f"peers), {wall:.1f} s wall in all\n")
    out.write(f"faults injected: {_fmt(faults, FAULT_KINDS)}\n")
    out.write(f"invariants checked: {_fmt(checks, INVARIANTS)}\n")
    spread = [s for r in rs for s in r.spread]
    if len(spread) > 1:
        q = statistics.quantiles(spread, n=100)
        model = "with a CPU per peer" if options.cpu else "network only, calls take no time"
        out.write(f"event spread (virtual time from an event's first persist to its last, "
                  f"{model}): median {statistics.median(spread) * 1000:.2f} ms, "
                  f"p99 {q[98] * 1000:.2f} ms\n")
    peer_events = sum(r.events * r.peers for r in rs)
    if peer_events:
        out.write(f"CPU inside the peers: {sum(r.cpu for r in rs) / peer_events * 1e6:.0f} us per "
                  f"event per peer\n")
    failed = [r for r in rs if not r.ok]
    out.write(f"failures: {len(failed)}\n")
    for r in failed[:SHOW_FAILURES]:
        out.write(f"FAIL seed {r.seed}: {r.failures[0].splitlines()[0][:300]}\n")
        out.write(f"  replay: {replay_command(r.seed, options)} -v\n")
    if len(failed) > SHOW_FAILURES:
        out.write(f"... and {len(failed) - SHOW_FAILURES} more failing seeds\n")


def one(seed: int, options: Options, verbose: bool, out: TextIO) -> int:
    r = run_seed(seed, options, verbose=verbose)
    out.write(r.describe + "\n" if r.describe else "")
    if verbose:
        for line in r.trace:
            out.write(line + "\n")
    out.write(f"seed {seed}: {r.outcome}, {r.events} events, {r.steps} inputs, "
              f"{r.virtual:.1f} virtual s, {r.wall * 1000:.0f} ms; ended: {r.ended}\n")
    out.write(f"faults injected: {_fmt(r.faults, FAULT_KINDS)}\n")
    out.write(f"invariants checked: {_fmt(r.checks, INVARIANTS)}\n")
    if r.ok:
        out.write("all invariants hold\n")
        return 0
    for f in r.failures:
        out.write(f"FAIL {f}\n")
    out.write(f"replay: {replay_command(seed, options)} -v\n")
    return 1


def main(argv: Sequence[str] | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        args = parser().parse_args(argv)
    except ArgError as e:
        err.write(f"{PROG}: error: {e}\n")
        return 2
    options = Options(peers=args.peers, faults=args.faults, cpu=args.cpu, latency=args.latency,
                      deal=args.deal)
    if args.verbose and args.seed is None:
        err.write(f"{PROG}: error: -v prints one run's trace: give it with --seed S\n")
        return 2
    if args.seed is not None:
        return one(args.seed, options, args.verbose, out)
    seeds = list(range(args.start, args.start + args.seeds))
    bar = Bar(err, len(seeds))
    rs: list[Result] = []
    failed = 0
    t0 = time.monotonic()
    try:
        for r in results(seeds, options, args.jobs):
            rs.append(r)
            if not r.ok:  # at once, so a run cut short still names what failed
                failed += 1
                err.write(("\r" if bar.tty else "") + f"FAIL seed {r.seed}: "
                          f"{r.failures[0].splitlines()[0][:200]} (replay: "
                          f"{replay_command(r.seed, options)} -v)\n")
            bar.update(len(rs), failed)
    except KeyboardInterrupt:
        err.write(f"\ninterrupted after {len(rs)} games\n")
    rs.sort(key=lambda r: r.seed)
    summary(rs, time.monotonic() - t0, options, out)
    return 1 if failed else 0
