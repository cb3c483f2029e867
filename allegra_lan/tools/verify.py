"""`allegra replay verify`: is this file a game that really happened, as its header says?

A replay passes when every line is a signed event, the events fold through a
Table without a refusal (signatures, chain, seed ceremony, every move's
legality), and the header agrees with the log: the players, their keys, the
variant, the game id, and the Result recomputed from the moves. A file cut
short by a crash is still a valid prefix: it passes as *unfinished*, and its
Result must say so (`*`). The header's free-text tags (Event, Site, Date) are
not in the signed log, so nothing can check them; every other byte of a
replay is checked by something.

A log of the version with signed results (issue 13) is finished only when every
seat signed the last round's result; its verdict says "results signed by every
seat". An older log (its genesis has no start time) has no signed results: it
still verifies, and its verdict says so.

A fair-deal log (issue 12) is checked once more at its end: every shuffle pass and
every share is redone from the secrets the seats published (deal/ledger.py
`verdict`), and any fault fails the file naming its seat; so does a deal that broke
during the game, and a game whose moves ended but whose seat never published its
secret (it withheld it: nothing can check its deal). A fair-deal file cut short
mid-game passes as unfinished, as any other.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence, TextIO

from allegra_lan.files import FileRefused, open_regular
from allegra_lan.tags import log_tags, result_tags
from allegra_lan.log.envelope import decode_event
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import Replay, ReplayError, ReplayStream, read_replay
from allegra_lan.deal.events import SECRET
from allegra_lan.rules import ruleset_from_dict, to_act
from allegra_lan.table import Fork, Table
from allegra_lan.tool_args import add_verify_arguments, jobs_arg
from allegra_lan.tools import (
    ToolError, describe_event, files_and_jobs, fold_log, prog_of, usage_error,
)

if TYPE_CHECKING:
    from concurrent.futures import Future

PROG = "allegra replay verify"
SIGNED_BY_ALL = "all"
OLD_LOG = "old"
PROGRESS_OVER = 20  # more files than this get a progress bar on a terminal
_SEAT_TAG = re.compile(r"Seat(\d+)")


@dataclass
class Verdict:
    """What verifying one file found; plain data, so worker processes can send it back."""

    path: str
    ok: bool
    seq: int | None = None  # the seq of the fault (None: the fault is in the header or the file)
    reason: str = ""
    events: int = 0  # events that passed
    finished: bool = False  # the log reaches the game's end
    result: str | None = None  # the recomputed Result tag of a finished game
    notes: list[str] = field(default_factory=list)
    where: str = "seq"  # "seq", "header" or "file": what `reason` is about
    seats: tuple[tuple[str, str], ...] = ()  # (name, fingerprint) per seat, from the genesis
    totals: tuple[int, ...] = ()  # game totals of a finished game
    winners: tuple[int, ...] = ()
    fork: tuple[bytes, bytes] | None = None  # both signed events of a fork: the proof
    # What standings needs to tell games and copies apart (empty before a genesis):
    game: str = ""  # the game id (hex) the log signs
    variant: str = ""  # the ruleset's variant ("allegra", "grande")
    head: str = ""  # the last event's id (hex): with `events`, equal logs have equal heads
    date: str = ""  # the header's Date tag (free text nobody signed; "" if none)
    # Signed results (issue 13): "all" when every round of a finished game has every seat's
    # signed result, "old" for an older log (no start time, so no results), "" otherwise.
    signed: str = ""
    started: int | None = None  # the genesis's start time (ms since the epoch, UTC)
    ended: int | None = None  # the latest clock of the last round's results
    deal: str = ""  # "fair" for a fair-deal game whose deal verified from every secret

    @property
    def signed_by_all(self) -> bool:
        """Every round's result carries every seat's signature (a finished game only)."""
        return self.signed == SIGNED_BY_ALL

    @property
    def unfinished(self) -> bool:
        return self.ok and not self.finished


def _variant_names(table: Table) -> tuple[str, ...]:
    """The Variant tag may name the variant as the command line does or as people do."""
    assert table.genesis is not None
    rs = ruleset_from_dict(table.genesis.ruleset)
    return (rs.variant, rs.title)


def check_header(tags: dict[str, str], table: Table, *, whole: bool = True) -> str | None:
    """The first disagreement between the header and the log, or None.

    Every tag the log determines (see `log_tags`) must be there and agree:
    a tag that could be missing unnoticed would let a flipped byte in its name
    pass. Other tags (Event, Site, Date ...) are free text nobody signed.

    With `whole` False (the file ends inside its header) missing tags are not
    faults, since they were never written; tags that are there must still agree."""
    want = log_tags(table)
    if table.genesis is not None:
        for name in tags:
            if _SEAT_TAG.fullmatch(name) and name not in want:
                return f"the header has a {name} tag but the game has {table.players} seats"
    finished = want["Result"] != "*"
    for name, value in want.items():
        if name == "Format":  # parse_replay has refused any other format already
            continue
        if name not in tags:
            if whole:
                return f"the header has no {name} tag"
            continue
        said = tags[name]
        if name == "Variant":
            if said not in _variant_names(table):
                return f'Variant is "{said}" but the log says "{value}"'
        elif name == "Result" and not finished:
            if said != "*":
                return (f'Result is "{said}" but the log ends before the game does '
                        f'(after seq {table.seq - 1}); an unfinished game\'s Result is "*"')
        elif said != value:
            source = "the moves give" if name in ("Result", "Winners") else "the log says"
            return f'{name} is "{said}" but {source} "{value}"'
    if not finished and "Winners" in tags:
        return f'Winners is "{tags["Winners"]}" but the game is unfinished'
    return None


def read_for_verify(path: str | os.PathLike[str]) -> Replay:
    """Read a replay as `read_replay` does, and also refuse a line whose base64 is not the
    one encoding of its bytes (base64 ignores a character's unused low bits, so a flipped
    bit there would change the file but no event)."""
    return read_replay(path, canonical=True)


def _fail(path: str, where: str, reason: str, seq: int | None = None, **kw: object) -> Verdict:
    return Verdict(path, False, seq, reason, where=where, **kw)  # type: ignore[arg-type]


def verify_file(path: str | os.PathLike[str]) -> Verdict:
    """Verify one replay file; never raises (whatever is wrong is in the verdict)."""
    name = str(path)
    try:
        # Streamed: each line is checked as it is read, and the first refusal ends the reading.
        with ReplayStream(path, canonical=True) as stream:
            replay = stream.replay
            folded = fold_log(stream)
    except ReplayError as e:
        msg = str(e)
        if msg.startswith(name + ": "):
            msg = msg[len(name) + 2:]
        return _fail(name, "file", msg)
    t = folded.table
    seats = tuple((s.name, fingerprint(s.key)) for s in t.genesis.seats) if t.genesis else ()
    notes = list(replay.notes)
    ident: dict[str, str] = {"date": replay.tags.get("Date", "")}
    if t.genesis is not None and t.game is not None:
        ident["game"] = t.game.hex()
        ident["variant"] = str(t.genesis.ruleset.get("variant", ""))
    if t.events:
        ident["head"] = t.events[-1].id.hex()
    if folded.fault is not None:
        fork = None
        if isinstance(folded.fault, Fork):
            fork = (folded.fault.first.signed, folded.fault.second.signed)
        return _fail(name, "seq", folded.fault.reason, folded.fault_seq, events=t.seq, notes=notes,
                     seats=seats, fork=fork, **ident)
    if replay.fault is not None:
        seq, reason = replay.fault
        return _fail(name, "seq", reason, seq, events=t.seq, notes=notes, seats=seats, **ident)
    deal_problem = check_deal(t)
    if deal_problem is not None:
        return _fail(name, "deal", deal_problem, events=t.seq, notes=notes, seats=seats, **ident)
    over = t.over
    if t.genesis is not None:
        ident["started"], ident["ended"] = t.times()  # type: ignore[assignment]
    if over and replay.cut_short:
        return _fail(name, "seq", "a line after the game's end is cut short", t.seq, events=t.seq,
                     notes=notes, seats=seats, **ident)
    whole = "the file ends inside its header" not in replay.notes
    problem = check_header(replay.tags, t, whole=whole)
    if problem is not None:
        return _fail(name, "header", problem, events=t.seq, notes=notes, seats=seats, **ident)
    if not over:
        return Verdict(name, True, events=t.seq, notes=notes, seats=seats, **ident)
    assert t.state is not None
    tags = result_tags(t.state)
    signed = OLD_LOG if not t.signs_results else (
        SIGNED_BY_ALL if len(t.results) == len(t.state.results) else "")
    return Verdict(name, True, events=t.seq, finished=True, result=tags["Result"], notes=notes,
                   seats=seats, totals=tuple(t.state.totals), signed=signed,
                   winners=tuple(int(w) for w in tags["Winners"].split()),
                   deal="fair" if t.fair else "", **ident)


def check_deal(t: Table) -> str | None:
    """What is wrong with a fair-deal log's deal, naming the seat, or None (a seeded log,
    a fair one still playing, or one whose deal the published secrets verify)."""
    ledger = t.ledger
    if ledger is None or t.state is None or t.genesis is None:
        return None
    names = [s.name for s in t.genesis.seats]

    def who(seat: int) -> str:
        return f"seat {seat} ({names[seat]})" if 0 <= seat < len(names) else f"seat {seat}"

    def faults() -> str:
        found = ledger.verdict()
        text = "; ".join(f"{who(f.seat)}, {f.step}{'' if f.card is None else f' of card {f.card}'}: "
                         f"{f.reason}" for f in found[:3])
        return text + (f" (and {len(found) - 3} more)" if len(found) > 3 else "")

    if t.stopped is not None:  # the log proves the break, whatever follows it
        found = faults()
        return f"the deal broke during the game: {t.stopped}" + (f"; {found}" if found else "")
    owed = ledger.owed()
    if to_act(t.state) is None and owed is not None and owed.kind == SECRET:
        return (f"{who(owed.seat)} withheld its deal secret at the game's end: its shuffles and "
                "shares cannot be checked, the deal is unverified")
    if not t.over:
        return None
    found = faults()
    return f"the deal does not verify from the published secrets: {found}" if found else None


def verdict_line(v: Verdict) -> str:
    """`OK  path  (...)` or `FAIL path  seq N: reason`: one line a person or grep can read."""
    if v.ok:
        if v.finished:
            detail = f"{v.events} events, finished: {v.result}"
            if v.signed == SIGNED_BY_ALL:
                detail += "; results signed by every seat"
            elif v.signed == OLD_LOG:
                detail += "; no signed results (a log of an older version)"
            if v.deal == "fair":
                detail += "; fair deal re-checked from every seat's secret"
        elif v.events:
            detail = f"unfinished after seq {v.events - 1}"
        else:
            detail = "unfinished: no events yet"
        if v.notes:
            detail += "; " + "; ".join(v.notes)
        return f"OK  {v.path}  ({detail})"
    if v.where == "seq":
        return f"FAIL {v.path}  seq {v.seq}: {v.reason}"
    if v.where == "header":
        return f"FAIL {v.path}  header: {v.reason}"
    if v.where == "deal":
        return f"FAIL {v.path}  deal: {v.reason}"
    return f"FAIL {v.path}  {v.reason}"


def fork_lines(v: Verdict) -> list[str]:
    """The fork's proof: both events, decoded, under the FAIL line."""
    if v.fork is None:
        return []
    seat_of = {fp: (i, name) for i, (name, fp) in enumerate(v.seats)}
    out = []
    for label, signed in (("first: ", v.fork[0]), ("second:", v.fork[1])):
        ev = decode_event(signed)
        fp = fingerprint(ev.author)
        seat, name = seat_of.get(fp, (None, ""))
        author = f"seat {seat} {name} ({fp})" if seat is not None else fp
        out.append(f"    {label} {describe_event(ev, author=author)}")
    return out


def _copies(paths: Sequence[Path]) -> list[int]:
    """For each path, the index of the first path with the same bytes (its own index when
    no earlier path has them). Only regular files whose size another path shares are read
    for this (a copy has its original's size), so most files are never read twice."""
    first = list(range(len(paths)))
    by_size: dict[int, list[int]] = {}
    for i, p in enumerate(paths):
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue  # verify_file names what is wrong with it
        if stat.S_ISREG(st.st_mode):
            by_size.setdefault(st.st_size, []).append(i)
    for same_size in by_size.values():
        if len(same_size) < 2:
            continue
        seen: dict[bytes, int] = {}
        for i in same_size:
            digest = hashlib.blake2b()
            try:
                with open_regular(paths[i]) as f:
                    while chunk := f.read(1 << 20):
                        digest.update(chunk)
            except (FileRefused, OSError):
                continue  # read as it is, by verify_file
            first[i] = seen.setdefault(digest.digest(), i)
    return first


def _as_copy(v: Verdict, path: Path | str) -> Verdict:
    """The verdict of a file with the same bytes, for this path: a verdict depends on the
    bytes alone but for the path it names (a reason never holds the path: verify_file
    takes it off a ReplayError's message)."""
    return replace(v, path=str(path), notes=list(v.notes))


def verify_many(paths: Sequence[Path], jobs: int = 1,
                done: Callable[[int], None] | None = None) -> Iterator[Verdict]:
    """Verdicts in the order of `paths`; with jobs > 1 files are verified in worker processes.

    Files with the same bytes are verified once, and the others given that verdict under
    their own path: a tournament's folder holds every seat's copy of each game (a table of
    four, four copies), and verifying each copy again was a quarter of `tournament check`'s
    time on the end-to-end test's folder (2.7 s, now 2.0 s).

    `done(n)` is told how many files are finished so far (a progress bar),
    which may run ahead of the verdicts yielded, since those keep input order."""
    first = _copies(paths)
    needed = Counter(first)  # the files each verified file's verdict serves (itself and its copies)
    if jobs <= 1 or len(needed) <= 1:
        kept: dict[int, Verdict] = {}
        for i, p in enumerate(paths):
            if first[i] == i:
                v = verify_file(p)
                if needed[i] > 1:
                    kept[i] = v
            else:
                v = _as_copy(kept[first[i]], p)
            if done:
                done(i + 1)
            yield v
        return
    # Worker processes only when asked for: multiprocessing costs a single-file check its start-up.
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    with ProcessPoolExecutor(max_workers=min(jobs, len(needed))) as pool:
        futures: dict[int, Future[Verdict]] = {i: pool.submit(verify_file, paths[i])
                                               for i in range(len(paths)) if first[i] == i}
        pending = set(futures.values())
        nxt = 0
        while nxt < len(paths):
            future = futures[first[nxt]]
            if future.done():
                v = future.result()
                yield v if first[nxt] == nxt else _as_copy(v, paths[nxt])
                nxt += 1
                continue
            _, pending = wait(pending, return_when=FIRST_COMPLETED)
            if done:
                done(sum(needed[i] for i, f in futures.items() if f.done()))


class Progress:
    """A one-line bar on stderr, erased before each result line so the two never mix."""

    WIDTH = 30

    def __init__(self, err: TextIO, total: int, enabled: bool) -> None:
        self.err = err
        self.total = total
        self.enabled = enabled
        self.done = 0
        self.shown = False

    def update(self, done: int) -> None:
        self.done = done
        self.draw()

    def draw(self) -> None:
        if not self.enabled:
            return
        filled = self.WIDTH * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.err.write(f"\r[{bar}] {self.done}/{self.total} files")
        self.err.flush()
        self.shown = True

    def clear(self) -> None:
        if self.enabled and self.shown:
            self.err.write("\r" + " " * (self.WIDTH + 30) + "\r")
            self.err.flush()
            self.shown = False


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run_verify(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Exit 0 if every file is OK, 1 if one read fine but failed a check, 2 if one could
    not be read as a replay at all (named on stderr, one line each) or the arguments are bad."""
    prog = prog_of(args, PROG)
    try:
        paths, jobs = files_and_jobs(args)
    except ToolError as e:
        return usage_error(err, prog, str(e))
    bar = Progress(err, len(paths),
                   bool(getattr(args, "progress", False)) or (len(paths) > PROGRESS_OVER and _is_tty(err)))
    counts = {"ok": 0, "unfinished": 0, "fail": 0, "unreadable": 0}
    bar.draw()
    for v in verify_many(paths, jobs, bar.update):
        bar.clear()
        if unreadable(v):
            err.write(unreadable_line(prog, v) + "\n")
            err.flush()
            counts["unreadable"] += 1
        else:
            out.write(verdict_line(v) + "\n")
            for line in fork_lines(v):
                out.write(line + "\n")
            out.flush()
            counts["ok" if v.ok else "fail"] += 1
            counts["unfinished"] += v.unfinished
        bar.draw()
    bar.clear()
    total = len(paths)
    summary = f"{total} file{'s' if total != 1 else ''}: {counts['ok']} OK"
    if counts["unfinished"]:
        summary += f" ({counts['unfinished']} unfinished)"
    summary += f", {counts['fail']} failed"
    if counts["unreadable"]:
        summary += f", {counts['unreadable']} unreadable"
    out.write(summary + "\n")
    out.flush()
    return 2 if counts["unreadable"] else 1 if counts["fail"] else 0


def unreadable(v: Verdict) -> bool:
    """A file that could not be read as a replay at all (exit status 2), as opposed to one
    that was read and failed a check (exit status 1)."""
    return not v.ok and v.where == "file"


def verify_readable(paths: Sequence[str], jobs: int, prog: str,
                    err: TextIO) -> tuple[list[Verdict], list[Verdict]]:
    """Every file's verdict, split into the files read as replays (OK or failing a check)
    and those that are not replays at all, each of which gets its one line on `err` (and
    means exit status 2) while the others are still used."""
    read: list[Verdict] = []
    unread: list[Verdict] = []
    for v in verify_many(paths, jobs):
        if unreadable(v):
            err.write(unreadable_line(prog, v) + "\n")
            unread.append(v)
        else:
            read.append(v)
    return read, unread


def unreadable_line(prog: str, v: Verdict) -> str:
    """`allegra replay verify: error: PATH: what is wrong`: the one line of an unreadable file."""
    return f"{prog}: error: {v.path}: {v.reason}"


__all__ = [
    "Verdict", "log_tags", "check_header", "read_for_verify", "verify_file", "verdict_line",
    "fork_lines", "verify_many", "Progress", "add_verify_arguments", "run_verify", "jobs_arg",
    "unreadable", "unreadable_line", "verify_readable",
]
