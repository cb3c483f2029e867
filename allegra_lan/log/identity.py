"""Identities: a player's Ed25519 key pair, made on first use and kept private (0600).

The key lives in `$XDG_CONFIG_HOME/allegra-lan/identity.key` (default
`~/.config/allegra-lan/`). People compare keys by their fingerprint: the first
10 bytes of BLAKE2b of the public key, as four groups of four base32 letters.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from nacl.signing import SigningKey

KEY_FILE = "identity.key"


class IdentityError(OSError):
    """The key file cannot be read or written; the message names the file."""


def config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "allegra-lan"


def data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "allegra-lan"


def fingerprint(public_key: bytes) -> str:
    """A short, readable name for a public key: 16 base32 letters in four groups, e.g. `HSXE-DL7C-VDBV-BFWU`."""
    digest = hashlib.blake2b(public_key, digest_size=10).digest()
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
        return cls(SigningKey(hashlib.blake2b(seed, digest_size=32).digest()))


def load_or_create(directory: Path | None = None) -> tuple[Identity, bool]:
    """The key pair kept in `directory` (made, with mode 0600, if absent); True if made now."""
    directory = directory or config_dir()
    path = directory / KEY_FILE
    try:
        if path.exists():
            text = path.read_text(encoding="ascii").strip()
            try:
                seed = bytes.fromhex(text)
            except ValueError:
                raise IdentityError(f"{path}: not a key file (expected 64 hex digits)") from None
            if len(seed) != 32:
                raise IdentityError(f"{path}: not a key file (expected 64 hex digits)")
            return Identity(SigningKey(seed)), False
        directory.mkdir(parents=True, exist_ok=True)
        key = SigningKey.generate()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(bytes(key).hex() + "\n")
        return Identity(key), True
    except UnicodeDecodeError:
        raise IdentityError(f"{path}: not a key file (expected 64 hex digits)") from None
    except IdentityError:
        raise
    except OSError as e:
        raise IdentityError(f"{path}: {e.strerror or e}") from None
