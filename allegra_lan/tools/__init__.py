"""The organisers' and testers' tools over replay files: verify, show, export, standings, diff.

Each tool is a library first (functions that return data) and a command
second: `add_<tool>_arguments(parser)` fills an argparse parser and
`run_<tool>(args, out, err)` runs it and returns the exit status, so the
`allegra` command wires them in a few lines and the tests call them with
real files and string buffers. The helpers here are what every tool shares:
the same fold (so every tool names a fault the same way), the same list of
replay files for FILE|DIR arguments, and the same one-line error.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any, Sequence, TextIO

from allegra_lan.files import kind_of
from allegra_lan.fold import Folded, fold_log
from allegra_lan.log.envelope import Event
from allegra_lan.log.identity import fingerprint
from allegra_lan.log.replay import SUFFIX
from allegra_lan.table import Table


class ToolError(Exception):
    """Arguments a tool cannot run with (a missing file, a bad number): one line, exit status 2."""


def usage_error(err: TextIO, prog: str, message: str) -> int:
    """Print `prog: error: message` as the `allegra` command does for every bad argument; 2."""
    err.write(f"{prog}: error: {message}\n")
    err.flush()
    return 2


def prog_of(args: Any, default: str) -> str:
    """The command's name for messages (set by the CLI; a test's Namespace may lack it)."""
    prog = getattr(args, "prog", None)
    return prog if isinstance(prog, str) and prog else default


def replay_paths(items: Sequence[str]) -> list[Path]:
    """FILE|DIR arguments as replay files: files as given, every *.allegra under a directory,
    recursively and sorted, so one command line always lists the same files in the same order."""
    if not items:
        raise ToolError("give at least one replay file or directory")
    out: list[Path] = []
    for item in items:
        p = Path(item)
        try:
            mode = p.stat().st_mode
        except FileNotFoundError:
            raise ToolError(f"no such file or directory: {item}") from None
        except OSError as e:
            raise ToolError(f"{item}: {e.strerror or e}") from None
        if stat.S_ISDIR(mode):
            # A FIFO or device named *.allegra inside is passed over, like any other non-file.
            found = sorted(f for f in p.rglob(f"*{SUFFIX}") if f.is_file())
            if not found:
                raise ToolError(f"no {SUFFIX} files in the directory {item}")
            out.extend(found)
        elif stat.S_ISREG(mode):
            out.append(p)
        else:
            raise ToolError(f"{item}: not a regular file or directory ({kind_of(mode)})")
    return out


def files_and_jobs(args: Any) -> tuple[list[Path], int]:
    """The replay files and worker count of a many-file tool (verify, standings)."""
    jobs = getattr(args, "jobs", 1)
    if not isinstance(jobs, int) or jobs < 1:
        raise ToolError(f"--jobs must be 1 or more, not {jobs}")
    return replay_paths(args.paths), jobs


def plain(value: Any, *, short: bool = False) -> Any:
    """A decoded msgpack value as JSON data: bytes become hex strings (cut to 8 bytes if `short`)."""
    if isinstance(value, bytes):
        text = value.hex()
        return text[:16] + "..." if short and len(value) > 8 else text
    if isinstance(value, dict):
        return {k: plain(v, short=short) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v, short=short) for v in value]
    return value


def who(table: Table, key: bytes) -> str:
    """`seat 1 bob (FP)`: an author as people know them (the key decides, the name helps)."""
    seat = table.seat_of(key)
    fp = fingerprint(key)
    if seat is None or table.genesis is None:
        return f"a key that holds no seat ({fp})"
    return f"seat {seat} {table.genesis.seats[seat].name} ({fp})"


def _author(ev: Event, table: Table | None) -> str:
    if table is not None and table.genesis is not None:
        return who(table, ev.author)
    if ev.kind == "genesis":  # the genesis names its own author: seat 0
        seats = ev.body.get("seats")
        first = seats[0] if isinstance(seats, list) and seats else None
        name = first.get("name") if isinstance(first, dict) else None
        if isinstance(name, str):
            return f"seat 0 {name} ({fingerprint(ev.author)})"
    return fingerprint(ev.author)


def describe_event(ev: Event, table: Table | None = None, author: str | None = None) -> str:
    """One line for an event: seq, author, kind, body and id (for fork proofs and headings).

    The author is named as given, else from `table`'s genesis, else by fingerprint."""
    body = json.dumps(plain(ev.body, short=True), ensure_ascii=False, sort_keys=True)
    return f"seq {ev.seq} by {author or _author(ev, table)}: {ev.kind} {body} id {ev.id.hex()[:16]}"


__all__ = [
    "ToolError", "usage_error", "prog_of", "replay_paths", "Folded", "fold_log", "plain", "who",
    "describe_event",
]
