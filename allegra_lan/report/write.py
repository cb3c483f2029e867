"""Writing a site into its folder: made if missing, only the report's own files replaced.

A SITE that exists and is not a folder is refused before anything is read.
Each page is written whole (a temporary name, then a rename), so a reader of a
published folder never sees half a page, and a symlink where a page goes is
replaced, never followed out of the folder. Files the report does not write
(an old game's page, the organiser's own notes) are left alone.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Mapping

from allegra_lan.files import kind_of, write_atomic


class SiteError(Exception):
    """The site folder cannot be used: one line."""


def check_site(folder: str) -> None:
    """Refuse a SITE that exists and is not a folder (following a symlink to one is fine)."""
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        if os.path.islink(folder):  # mkdir would say only "File exists"
            raise SiteError(f"--out {folder}: a symlink to {os.readlink(folder)}, which does not "
                            "exist; make that folder or give another") from None
        return
    except OSError as e:
        raise SiteError(f"--out {folder}: {e.strerror or e}") from None
    if not stat.S_ISDIR(mode):
        kind = "a regular file" if stat.S_ISREG(mode) else kind_of(mode)
        raise SiteError(f"--out {folder}: not a folder ({kind}); give a folder for the site")


def write_site(folder: str, files: Mapping[str, bytes]) -> list[Path]:
    """Write `files` (plain names) into `folder`, made if missing; the paths written.
    WriteFailed (from write_atomic) names a page that could not be written."""
    check_site(folder)
    root = Path(folder)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SiteError(f"--out {folder}: cannot make the folder: {e.strerror or e}") from None
    written = []
    for name, data in files.items():
        if not name or os.sep in name or name in (".", "..") or (os.altsep and os.altsep in name):
            raise SiteError(f"a page name {name!r} is not a plain file name")  # never from render_site
        path = root / name
        write_atomic(path, data, mode=0o644, fsync=False)
        written.append(path)
    return written


__all__ = ["SiteError", "check_site", "write_site"]
