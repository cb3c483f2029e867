"""Every file a user names, and every file we write, goes through here.

A path on a command line is hostile input like a frame from a peer: it may
name a FIFO (a plain `open` waits forever for a writer), `/dev/zero` (a
read never ends), a directory, or a file far larger than any replay. So no
command opens a user-given path itself: `open_regular` opens it without
blocking, checks with `fstat` on the open descriptor (no race between the
check and the read) that it is a regular file, and only then hands it out.

Writing has its own hazard: a full disk. `write_atomic` never leaves a
partial file under the real name (temporary name, fsync, rename, fsync of
the directory), and every write failure is one `WriteFailed` whose message
names the file, so a command prints one line instead of a traceback.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


class FileRefused(Exception):
    """A user-given path that cannot be read as a file; the message is one line naming it."""


class WriteFailed(Exception):
    """A file could not be written (a full disk, no permission); one line naming the file."""


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message: `a FIFO`, `a device` ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symlink"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> BinaryIO:
    """Open `path` for reading in binary, only if it is a regular file; FileRefused otherwise.

    O_NONBLOCK makes opening a FIFO return at once instead of waiting for a
    writer; the type is then checked on the open descriptor. `follow=False`
    refuses a symlink (key files, as ssh does)."""
    name = str(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if not follow and e.errno == errno.ELOOP:
            raise FileRefused(f"{name}: is a symlink; refused (put the file itself there)") from None
        raise FileRefused(f"{name}: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = kind_of(st.st_mode)
            raise FileRefused(f"{name}: not a regular file ({what})" if what.startswith("a ")
                              else f"{name}: {what}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int, *, follow: bool = True,
                 what: str = "file") -> bytes:
    """The whole of a small regular file, refused (FileRefused) if it holds more than `limit` bytes;
    never reads more than `limit + 1` bytes, whatever the file claims."""
    with open_regular(path, follow=follow) as f:
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise FileRefused(f"{path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise FileRefused(f"{path}: too large for a {what} (more than {limit} bytes)")
    return data


def read_text(path: str | os.PathLike[str], limit: int, *, what: str = "file",
              encoding: str = "utf-8") -> str:
    """`read_regular`, decoded: a file that is not UTF-8 is refused (FileRefused) naming the
    line where it stops being text, so a person can find the bad byte in an editor."""
    data = read_regular(path, limit, what=what)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise FileRefused(f"{path}: line {line}: not UTF-8 text") from None


def write_failed(path: str | os.PathLike[str], e: OSError) -> WriteFailed:
    """The one line for a failed write: a full disk is named as such."""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(f"the disk is full: could not write {path}")
    return WriteFailed(f"could not write {path}: {e.strerror or e}")


def write_all(fd: int, data: bytes) -> None:
    """os.write until every byte is out (a short write is not an error; the next one says why)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def append_whole(fd: int, data: bytes, size: int, *, fsync: bool = False) -> None:
    """Append `data` to the file open at `fd`, whose whole lines end at byte `size`; if
    any of it cannot be written (or, with `fsync`, synced), cut the file back to `size`
    and raise the OSError: what stays is whole lines, so a reader sees a valid prefix."""
    try:
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
    except OSError:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass  # a part line at the end still reads as cut short
        raise


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename in `directory` durable (POSIX: the directory entry has its own sync)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # not every system lets a directory be opened; the rename still happened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o600,
                 fsync: bool = True, replace: bool = True) -> None:
    """Write `data` as the whole of `path`: to a temporary name beside it, fsynced, then
    renamed in one step, so a reader (or a crash) sees the old file or the new one, never
    a part. `replace=False` refuses to replace an existing file (FileExistsError).
    Any OSError on the way is WriteFailed naming `path`; the temporary file is removed."""
    p = Path(path)
    tmp = p.with_name(f"{p.name}.tmp{os.getpid()}")
    fd = -1
    try:
        try:
            os.unlink(tmp)  # left by a crashed run that had our pid
        except FileNotFoundError:
            pass
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
        write_all(fd, data)
        if fsync:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        if replace:
            os.replace(tmp, p)
        else:
            os.link(tmp, p)  # fails if `path` exists: a key made meanwhile is never overwritten
            os.unlink(tmp)
        if fsync:
            fsync_dir(p.parent)
    except FileExistsError:
        _discard(fd, tmp)
        raise
    except OSError as e:
        _discard(fd, tmp)
        raise write_failed(p, e) from None


def _discard(fd: int, tmp: Path) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        os.unlink(tmp)
    except OSError:
        pass


__all__ = [
    "FileRefused", "WriteFailed", "kind_of", "open_regular", "read_regular", "write_failed", "write_all",
    "append_whole", "fsync_dir", "write_atomic",
]
