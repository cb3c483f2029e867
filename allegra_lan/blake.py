"""BLAKE2b, the project's one hash (event ids, the seed, state hashes, fingerprints, the deal).

`import hashlib` loads OpenSSL's `_hashlib` (2.5 to 7 ms on the 2-core machine) for
algorithms this package never asks for, and every command that reads a log paid it
before its first line (issue 11: `allegra replay verify` within 3x of a bare import).
`hashlib.blake2b` is CPython's own `_blake2.blake2b` (hashlib never takes BLAKE2 from
OpenSSL), so importing it from there is the same function; the fallback covers an
interpreter that builds hashlib some other way. The tests and protocol/'s vector
generators keep `hashlib`: they are the independent check of what this module gives.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python without CPython's _blake2 module
    from hashlib import blake2b

__all__ = ["blake2b"]
