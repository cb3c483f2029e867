"""ReplayWriter: append without fsync, fsync later (issue 10, point 4).

The fsyncs are counted by a spy around the real `os.fsync` (it still syncs):
whether a line reached the disk's platter is not visible from a test, how many
fsyncs were asked for is."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Callable

import pytest

from allegra_lan.files import WriteFailed
from allegra_lan.local import LocalGame, Player, derived
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import ReplayWriter, read_replay
from allegra_lan.rules import ruleset_for

TAGS = {"Event": "writer test", "Variant": "grande"}


def events(n: int = 6) -> list[bytes]:
    players = [Player(f"p{i}", Identity.from_seed(derived("writer-key", i))) for i in range(3)]
    g = LocalGame(ruleset_for("grande"), players, game_id=derived("writer-game")[:16],
                  nonces=[derived("writer-nonce", i) for i in range(3)])
    return [e.signed for e in g.table.events[:n]]


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The descriptors fsynced during the test, in order (each one really synced)."""
    calls: list[int] = []
    real: Callable[[int], None] = os.fsync

    def spy(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", spy)
    return calls


def test_append_without_sync_writes_the_line_and_leaves_the_fsync_for_later(
        tmp_path: Path, fsyncs: list[int]) -> None:
    ev = events()
    w = ReplayWriter(tmp_path / "g.allegra", TAGS)
    assert len(fsyncs) == 1  # the header
    for e in ev[:3]:
        w.append(e, sync=False)
    assert len(fsyncs) == 1 and w.unsynced == 3
    # Written, not held in a buffer: another reader (or this process after a crash) has them.
    assert read_replay(tmp_path / "g.allegra").events == ev[:3]
    w.sync()
    assert len(fsyncs) == 2 and w.unsynced == 0
    w.sync()  # nothing waits: no fsync
    assert len(fsyncs) == 2
    w.append(ev[3], sync=False)
    w.append(ev[4])  # a person's own move: fsynced before append returns, with what came before
    assert len(fsyncs) == 3 and w.unsynced == 0
    w.append(ev[5], sync=False)
    w.finish({"Result": "*"})
    assert fsyncs[3] == fsyncs[0]  # finish synced the appended line before the rewrite
    assert read_replay(tmp_path / "g.allegra").events == ev


def test_a_writer_without_fsync_never_syncs(tmp_path: Path, fsyncs: list[int]) -> None:
    ev = events(3)
    w = ReplayWriter(tmp_path / "g.allegra", TAGS, fsync=False)
    w.append(ev[0], sync=False)
    w.append(ev[1])
    w.sync()
    assert fsyncs == [] and w.unsynced == 0
    w.append(ev[2], sync=False)
    w.finish({})
    assert fsyncs == [] and read_replay(tmp_path / "g.allegra").events == ev


def test_a_failed_sync_is_one_line_naming_the_file_and_the_writer_stops(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A disk that fails an fsync (EIO) cannot be made here without root: this one fault is
    injected, everything else is the real file."""
    ev = events(2)
    path = tmp_path / "g.allegra"
    w = ReplayWriter(path, TAGS)
    w.append(ev[0], sync=False)

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", eio)
    with pytest.raises(WriteFailed) as e:
        w.sync()
    assert str(e.value) == f"could not write {path}: {os.strerror(errno.EIO)}"
    monkeypatch.undo()
    with pytest.raises(WriteFailed):
        w.append(ev[1])
    assert read_replay(path).events == ev[:1]
