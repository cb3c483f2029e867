"""Replay files (`.allegra`): a readable tag header, then the signed events as they were.

    [Format "allegra-replay/1"]
    [Event "Friday night"]
    ...
    [Result "*"]
    <blank line>
    <one event per line: the signed bytes in base64>

Like PGN's tag roster, the header is plain text a person can read. Events are
appended and flushed (and fsynced) one line at a time as the game goes, so a
file cut short by a crash is a valid prefix: the reader keeps every whole
line, says the rest was cut short, and a Result of `*` says the game is
unfinished. When the game ends, the file is rewritten whole (write to a
temporary file, then rename) with the final Result.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from .identity import fingerprint

FORMAT = "allegra-replay/1"
SUFFIX = ".allegra"
MAX_LINE = 32 * 1024
_TAG = re.compile(r'\[([A-Za-z][A-Za-z0-9_]*) "((?:[^"\\]|\\.)*)"\]')
TAG_ORDER = ("Format", "Event", "Site", "Date", "Variant", "Table", "Players", "Game")


class ReplayError(ValueError):
    """A file that is not a replay at all (not a cut-short one: that is still read)."""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def format_header(tags: dict[str, str]) -> str:
    """Tags in the usual order (Format first, Result last), one per line, then a blank line."""
    keys = [k for k in TAG_ORDER if k in tags]
    keys += sorted(k for k in tags if k not in TAG_ORDER and k != "Result")
    keys.append("Result")
    lines = [f'[{k} "{_escape(tags.get(k, "*"))}"]' for k in keys]
    return "\n".join(lines) + "\n\n"


@dataclass
class Replay:
    """What a replay file holds: its tags, whole events, and what was wrong with the rest."""

    path: str
    tags: dict[str, str]
    events: list[bytes]
    cut_short: bool = False  # the last line was incomplete (a crash while writing)
    fault: tuple[int, str] | None = None  # (seq, reason) of a line that is not an event
    notes: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.tags.get("Result", "*") != "*"


def read_replay(path: str | os.PathLike[str]) -> Replay:
    """Read a replay file, keeping every whole event; raise ReplayError if it is not one."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise ReplayError(f"{p}: {e.strerror or e}") from None
    return parse_replay(data, str(p))


def parse_replay(data: bytes, name: str = "<replay>") -> Replay:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ReplayError(f"{name}: not a replay file (not UTF-8 text)") from None
    head, sep, rest = text.partition("\n\n")
    tags: dict[str, str] = {}
    head_lines = head.split("\n")
    for n, line in enumerate(head_lines, 1):
        m = _TAG.fullmatch(line)
        if not m:
            if not sep and n == len(head_lines) and n > 1:
                break  # cut short inside the header
            raise ReplayError(f"{name}: line {n} is not a [Tag \"value\"] line")
        if m.group(1) in tags:
            raise ReplayError(f"{name}: line {n}: the tag {m.group(1)} appears twice")
        tags[m.group(1)] = _unescape(m.group(2))
    if tags.get("Format") != FORMAT:
        raise ReplayError(f"{name}: not an {FORMAT} file (Format tag is {tags.get('Format')!r})")
    r = Replay(name, tags, [])
    if not sep:
        r.cut_short = True
        r.notes.append("the file ends inside its header")
        return r
    lines = rest.split("\n")
    last_whole = rest.endswith("\n")
    if not last_whole:
        tail = lines.pop()
        if tail:
            r.cut_short = True
            r.notes.append(f"the event at seq {len(lines)} is cut short")
    elif lines and lines[-1] == "":
        lines.pop()
    for seq, line in enumerate(lines):
        if len(line) > MAX_LINE:
            r.fault = (seq, "the line is too long to be an event")
            break
        try:
            r.events.append(base64.b64decode(line, validate=True))
        except (binascii.Error, ValueError):
            r.fault = (seq, "the line is not base64 of a signed event")
            break
    return r


class ReplayWriter:
    """Writes a replay as the game goes: header first, then one flushed line per event."""

    def __init__(self, path: str | os.PathLike[str], tags: dict[str, str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.tags = dict(tags)
        self.tags["Format"] = FORMAT
        self.tags.setdefault("Result", "*")
        self.fsync = fsync
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lines: list[str] = []
        self._f: IO[str] | None = open(self.path, "w", encoding="utf-8", newline="\n")
        self._f.write(format_header(self.tags))
        self._sync()

    def _sync(self) -> None:
        assert self._f is not None
        self._f.flush()
        if self.fsync:
            os.fsync(self._f.fileno())

    def append(self, signed: bytes) -> None:
        if self._f is None:
            raise ValueError("the replay is closed")
        line = base64.b64encode(signed).decode("ascii")
        self._lines.append(line)
        self._f.write(line + "\n")
        self._sync()

    def finish(self, tags: dict[str, str]) -> None:
        """Rewrite the file whole with final tags (e.g. Result), atomically."""
        self.close()
        self.tags.update(tags)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(format_header(self.tags))
            f.writelines(line + "\n" for line in self._lines)
            f.flush()
            if self.fsync:
                os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def replace(self, events: list[bytes]) -> None:
        """Rewrite the file whole with these events, atomically, and go on appending
        (a takeover replaced events this peer wrote while it was cut off)."""
        self._lines = [base64.b64encode(e).decode("ascii") for e in events]
        self.finish({})
        self._f = open(self.path, "a", encoding="utf-8", newline="\n")

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


def game_stem(games_dir: Path, game_id: bytes, key: bytes) -> Path:
    """A player's files of one game, without suffix: the game id and the player's key, so
    players sharing one data directory (several on one machine) never share a file."""
    return games_dir / f"{game_id.hex()[:16]}-{fingerprint(key)[:9]}"


def write_replay(path: str | os.PathLike[str], tags: dict[str, str], events: list[bytes]) -> None:
    """A whole replay at once (tools that rebuild or trim logs)."""
    w = ReplayWriter(path, tags, fsync=False)
    for e in events:
        w.append(e)
    w.finish({})
