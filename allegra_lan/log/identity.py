"""Identities: a player's Ed25519 key pair, made on first use and kept private (0600).

The key lives in `$XDG_CONFIG_HOME/allegra-lan/identity.key` (default
`~/.config/allegra-lan/`). A second identity on the same machine (a second
terminal of the same person, who would otherwise show the host the key that
already sits at the table) is a profile: `--profile NAME`, or ALLEGRA_PROFILE=NAME,
keeps its own key in `$XDG_DATA_HOME/allegra-lan/profiles/NAME/identity.key`. People compare keys by their fingerprint: the first
10 bytes of BLAKE2b of the public key, as four groups of four base32 letters.
"""

from __future__ import annotations

import base64
from allegra_lan.blake import blake2b
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from nacl.signing import SigningKey

from ..files import FileRefused, WriteFailed, read_regular, write_atomic

KEY_FILE = "identity.key"
PROFILE_ENV = "ALLEGRA_PROFILE"
_PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")


class IdentityError(OSError):
    """The key file cannot be read or written; the message names the file."""


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "allegra-lan"


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "allegra-lan"


def profile_name() -> str | None:
    """The profile this process plays as (ALLEGRA_PROFILE; `--profile` sets it), or None."""
    return os.environ.get(PROFILE_ENV) or None


def key_dir(profile: str | None = None) -> Path:
    """Where the key of `profile` (default: this process's profile) is kept: the config
    directory for the default identity, the data directory's profiles/NAME/ for another."""
    name = profile if profile is not None else profile_name()
    if not name:
        return config_dir()
    if not _PROFILE_NAME.fullmatch(name):
        raise IdentityError(f"not a profile name: {name!r} (1 to 32 letters, digits, - or _)")
    return data_dir() / "profiles" / name


def fingerprint(public_key: bytes) -> str:
    """A short, readable name for a public key: 16 base32 letters in four groups, e.g. `HSXE-DL7C-VDBV-BFWU`."""
    digest = blake2b(public_key, digest_size=10).digest()
    text = base64.b32encode(digest).decode("ascii")
    return "-".join(text[i:i + 4] for i in range(0, 16, 4))


@dataclass(frozen=True)
class Identity:
    key: SigningKey

    @property
    def public(self) -> bytes:
        return bytes(self.key.verify_key)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)

    @classmethod
    def generate(cls) -> "Identity":
        return cls(SigningKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> "Identity":
        """A key derived from 32 bytes: bots in simulated games, tests."""
        return cls(SigningKey(blake2b(seed, digest_size=32).digest()))


KEY_TEXT = 65  # 64 hex digits and a line break; a few more bytes are tolerated, not kilobytes


def _check_private(path: Path) -> None:
    """Refuse a key file that is a symlink, not a regular file, or open to others, as ssh
    does: a key readable by others is no longer this player's alone, and a symlink may
    point where someone else can write."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise IdentityError(f"{path}: the key file is a symlink; refused (put the key file itself there)")
    if not stat.S_ISREG(st.st_mode):
        raise IdentityError(f"{path}: the key file is not a regular file")
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o077:
        how = "readable" if mode & 0o044 else "writable" if mode & 0o022 else "open"
        raise IdentityError(f"{path}: the key file is {how} by others (mode {mode:04o}): "
                            f"chmod 600 {path}")


def _read_key(path: Path) -> SigningKey:
    _check_private(path)
    try:
        data = read_regular(path, 4 * KEY_TEXT, follow=False, what="key file")
    except FileRefused as e:
        raise IdentityError(str(e)) from None
    if not data:
        raise IdentityError(f"{path}: the key file is empty (an interrupted write?); "
                            "delete it to make a new key")
    try:
        seed = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        raise IdentityError(f"{path}: not a key file (expected 64 hex digits)") from None
    if len(seed) != 32:
        raise IdentityError(f"{path}: not a key file (expected 64 hex digits)")
    return SigningKey(seed)


def load_or_create(directory: Path | None = None) -> tuple[Identity, bool]:
    """The key pair kept in `directory` (default: key_dir(), this process's profile) (made,
    with mode 0600, if absent); True if made now.

    A new key is written whole or not at all (temporary name, fsync, then linked
    to its name, which never replaces a key another process made meanwhile), so
    a full disk or a crash cannot leave an empty or partial key file behind."""
    directory = directory or key_dir()
    path = directory / KEY_FILE
    try:
        if os.path.lexists(path):
            return Identity(_read_key(path)), False
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        key = SigningKey.generate()
        try:
            write_atomic(path, (bytes(key).hex() + "\n").encode("ascii"), mode=0o600, replace=False)
        except FileExistsError:  # made by another process just now: use that one
            return Identity(_read_key(path)), False
        except WriteFailed as e:
            raise IdentityError(str(e)) from None
        return Identity(key), True
    except IdentityError:
        raise
    except OSError as e:
        raise IdentityError(f"{path}: {e.strerror or e}") from None
