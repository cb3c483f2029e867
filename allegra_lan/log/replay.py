"""Replay files (`.allegra`): a readable tag header, then the signed events as they were.

    [Format "allegra-replay/1"]
    [Event "Friday night"]
    ...
    [Result "*"]
    <blank line>
    <one event per line: the signed bytes in base64>

Like PGN's tag roster, the header is plain text a person can read. Events are
appended one line at a time as the game goes (written at once, fsynced at once
or, for events another peer also holds, a little later), so a file cut short
by a crash is a valid prefix: the reader keeps every whole
line, says the rest was cut short, and a Result of `*` says the game is
unfinished. When the game ends, the file is rewritten whole (write to a
temporary file, then rename) with the final Result.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Iterator

from ..files import FileRefused, WriteFailed, append_whole, open_regular, write_atomic, write_failed
from .identity import fingerprint

FORMAT = "allegra-replay/1"
SUFFIX = ".allegra"
MAX_LINE = 32 * 1024  # characters of an event line (an event of 16 KiB signed takes 21848)
MAX_HEADER = 16 * 1024  # bytes of the whole header, its empty line included (a few hundred in use)
MAX_LOG = 32 * 1024 * 1024  # bytes of event lines: 200 times the longest game seen (160 KB)
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


class ReplayStream:
    """A replay read as it is used: the header at once, the events one line at a time.

    Nothing is read that a check has not yet asked for, and no line is held
    whole before its length is known: `readline(limit)` stops at the limit, so
    a 50 MB line costs one limit's worth of memory and is refused by number.
    Iterating yields each event's signed bytes; `replay` gathers the tags
    (read on opening) and, as the lines go by, what was wrong with the rest.
    A ReplayError (the file is not a replay) may come from the constructor or
    from the iteration: a line too long, a log too large, a read error."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, data: bytes | None = None,
                 name: str | None = None, canonical: bool = False) -> None:
        self.name = name if name is not None else str(path)
        self.canonical = canonical
        if data is not None:
            self._f: BinaryIO | None = io.BytesIO(data)
        else:
            assert path is not None
            try:
                self._f = open_regular(path)
            except FileRefused as e:
                raise ReplayError(str(e)) from None
        self.line = 0  # number of the last line read (1 = the first line of the file)
        self._size = 0  # bytes of event lines read so far
        try:
            self.replay = self._header()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None

    def __enter__(self) -> "ReplayStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _readline(self, limit: int, too_long: str) -> bytes:
        """The next line, its LF included (none at the end of a file cut short); b"" at the end.
        A line of more than `limit` bytes before its LF is refused (`too_long` says why)
        after reading `limit + 1` bytes of it, never more."""
        assert self._f is not None
        try:
            raw = self._f.readline(limit + 1)
        except OSError as e:
            raise ReplayError(f"{self.name}: {e.strerror or e}") from None
        if raw:
            self.line += 1
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise ReplayError(f"{self.name}: line {self.line}: {too_long}: not a replay file")
        return raw

    def _header(self) -> Replay:
        name = self.name
        tags: dict[str, str] = {}
        budget = MAX_HEADER
        ended = False  # the empty line after the header was read
        while True:
            raw = self._readline(budget, f"the header is longer than {MAX_HEADER} bytes")
            budget -= len(raw)
            if not raw:
                break
            whole = raw.endswith(b"\n")
            body = raw[:-1] if whole else raw
            if whole and not body:
                ended = True
                break
            try:
                line = body.decode("utf-8")
            except UnicodeDecodeError:
                raise ReplayError(f"{name}: not a replay file (not UTF-8 text)") from None
            m = _TAG.fullmatch(line)
            if not m:
                if not whole and self.line > 1:
                    break  # cut short inside the header
                raise ReplayError(f"{name}: line {self.line} is not a [Tag \"value\"] line")
            if m.group(1) in tags:
                raise ReplayError(f"{name}: line {self.line}: the tag {m.group(1)} appears twice")
            tags[m.group(1)] = _unescape(m.group(2))
            if not whole:
                break
            if budget <= 0:
                raise ReplayError(f"{name}: line {self.line}: the header is longer than "
                                  f"{MAX_HEADER} bytes: not a replay file")
        if not tags and not ended:
            raise ReplayError(f"{name}: line 1 is not a [Tag \"value\"] line")
        if tags.get("Format") != FORMAT:
            raise ReplayError(f"{name}: not an {FORMAT} file (Format tag is {tags.get('Format')!r})")
        r = Replay(name, tags, [])
        if not ended:
            r.cut_short = True
            r.notes.append("the file ends inside its header")
            self.close()
        self._first_event_line = self.line + 1
        return r

    def __iter__(self) -> Iterator[bytes]:
        r = self.replay
        seq = 0
        try:
            while self._f is not None:
                raw = self._readline(MAX_LINE, f"longer than an event line can be ({MAX_LINE} bytes)")
                if not raw:
                    return
                if not raw.endswith(b"\n"):
                    r.cut_short = True
                    r.notes.append(f"the event at seq {seq} is cut short")
                    return
                self._size += len(raw)
                if self._size > MAX_LOG:
                    raise ReplayError(f"{self.name}: line {self.line}: more than {MAX_LOG} bytes of "
                                      "events, more than any game holds: not a replay file")
                event = self._event(raw[:-1])
                if event is None:
                    return
                yield event
                seq += 1
        finally:
            self.close()

    def _event(self, body: bytes) -> bytes | None:
        """The signed bytes of one event line, or None after noting the line's fault."""
        seq = self.line - self._first_event_line
        fault = None
        if not body:
            fault = f"line {self.line} is empty, not a signed event"
        else:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                fault = "the line is not base64 of a signed event (it holds a byte that is not text)"
            else:
                try:
                    event = base64.b64decode(text, validate=True)
                except (binascii.Error, ValueError):
                    fault = "the line is not base64 of a signed event"
                else:
                    if self.canonical and base64.b64encode(event) != body:
                        fault = "the line is not the canonical base64 of its event"
                    else:
                        return event
        self.replay.fault = (seq, fault)
        self.close()
        return None


def read_replay(path: str | os.PathLike[str], *, canonical: bool = False) -> Replay:
    """Read a replay file, keeping every whole event; raise ReplayError if it is not one.

    `canonical`: a line whose base64 is not the one encoding of its bytes is
    a fault (base64 ignores a character's unused low bits, so a flipped bit
    there changes the file but no event); verify asks for it."""
    with ReplayStream(path, canonical=canonical) as s:
        s.replay.events = list(s)
        return s.replay


def parse_replay(data: bytes, name: str = "<replay>", *, canonical: bool = False) -> Replay:
    """A replay held in memory, read as `read_replay` reads a file."""
    with ReplayStream(data=data, name=name, canonical=canonical) as s:
        s.replay.events = list(s)
        return s.replay


class ReplayWriter:
    """Writes a replay as the game goes: header first, then one flushed line per event.

    Writes go straight to the descriptor (no buffer that could fail later, at
    close or exit). A write that fails (a full disk) cuts the file back to its
    last whole line, so what stays is a valid prefix, and raises WriteFailed
    naming the file; the writer then refuses to write more.

    Each line is fsynced by default. `append(signed, sync=False)` leaves that
    for later (`sync()`, the next `append` with sync, or `finish`): the shell
    does so for other peers' events and for bot events, which another peer
    holds or a resumed bot signs again byte for byte, and fsyncs a person's own
    move before it is sent (docs/architecture.md, "What a crash loses")."""

    def __init__(self, path: str | os.PathLike[str], tags: dict[str, str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.tags = dict(tags)
        self.tags["Format"] = FORMAT
        self.tags.setdefault("Result", "*")
        self.fsync = fsync
        self._lines: list[str] = []
        self._fd: int | None = None
        self._good = 0  # bytes of the file that are whole lines
        self.unsynced = 0  # lines written since the last fsync (0 with fsync off: nothing to do)
        self.failed: WriteFailed | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND
                               | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError as e:
            raise write_failed(self.path, e) from None
        self._written_result = self.tags["Result"]  # the Result of the header on disk
        try:
            self._write(format_header(self.tags).encode("utf-8"))
        except WriteFailed:
            try:  # not even the header is there: no file rather than an empty one
                os.unlink(self.path)
            except OSError:
                pass
            raise

    def _write(self, data: bytes, *, sync: bool = True) -> None:
        if self.failed is not None:
            raise self.failed
        if self._fd is None:
            raise ValueError("the replay is closed")
        try:  # back to the last whole line on failure: a reader sees an unfinished game
            append_whole(self._fd, data, self._good, fsync=self.fsync and sync)
        except OSError as e:
            self.failed = write_failed(self.path, e)
            self.close()
            raise self.failed from None
        self._good += len(data)
        self.unsynced = 0 if sync or not self.fsync else self.unsynced + 1

    def append(self, signed: bytes, *, sync: bool = True) -> None:
        """Write one event's line; `sync`: fsync it (and every line before it) before
        returning. Without, the line is written (a crash of this process keeps it; one of
        the machine may not) and waits for `sync()`."""
        line = base64.b64encode(signed).decode("ascii")
        self._write(line.encode("ascii") + b"\n", sync=sync)
        self._lines.append(line)

    def sync(self) -> None:
        """fsync every line written so far (nothing to do if none waits). A failure is
        WriteFailed naming the file; the writer then refuses to write more."""
        if self.failed is not None:
            raise self.failed
        if not self.unsynced or self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError as e:
            self.failed = write_failed(self.path, e)
            self.close()
            raise self.failed from None
        self.unsynced = 0

    def finish(self, tags: dict[str, str]) -> None:
        """Rewrite the file whole with final tags (e.g. Result), atomically. If that fails (a
        full disk: the rewrite needs room for a second copy), WriteFailed, and the file stays a
        valid prefix: an unfinished game whose Result is "*". The whole file is fsynced
        (with the writer's fsync on), the lines appended without sync among it."""
        if self.failed is None and self._fd is not None:
            self.sync()  # so that a rewrite that fails leaves every line on disk
        self.close()
        if self.failed is not None:
            raise self.failed
        self.tags.update(tags)
        text = format_header(self.tags) + "".join(line + "\n" for line in self._lines)
        try:
            write_atomic(self.path, text.encode("utf-8"), mode=0o644, fsync=self.fsync)
        except WriteFailed as e:
            self.failed = e
            if self._written_result == "*" and self.tags["Result"] != "*" and self._lines:
                # The file on disk says "unfinished" but holds the event that ended the
                # game; without it, it is the unfinished game its header says it is.
                try:
                    os.truncate(self.path, self._good - len(self._lines[-1]) - 1)
                except OSError:
                    pass
            raise
        self._written_result = self.tags["Result"]
        self.unsynced = 0

    def replace(self, events: list[bytes]) -> None:
        """Rewrite the file whole with these events, atomically, and go on appending
        (a takeover replaced events this peer wrote while it was cut off)."""
        self._lines = [base64.b64encode(e).decode("ascii") for e in events]
        self.finish({})
        try:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
            self._good = os.fstat(self._fd).st_size
        except OSError as e:
            self.failed = write_failed(self.path, e)
            self.close()
            raise self.failed from None

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


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
