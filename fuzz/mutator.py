"""A msgpack-aware mutator: change one value inside a message instead of one byte of it.

libFuzzer's byte mutations rarely keep msgpack well formed, and the canonical
codec refuses the rest before any handler runs, so most mutated messages
die in the codec. This mutator decodes the input, changes one node of the
value tree (a boundary integer, a byte string of a telling length, a map
where a list was, a dropped or added field, 64 bytes and a msgpack value
where a signed blob was) and encodes it again canonically. A fifth of the
time it leaves the bytes to libFuzzer's own mutations, so byte-level
faults are still tried. `offset` bytes before the value (a target's choice
byte, a signature) are kept or mutated as bytes.
"""

from __future__ import annotations

import random
from typing import Any, Callable

import msgpack

from allegra_lan.log.codec import CodecError, encode

FIELDS = ("t", "seq", "head", "from", "items", "reason", "fault", "seat", "draw", "k", "claims",
          "address", "ready", "prev", "seats", "signs", "table", "name", "ruleset", "host", "pin",
          "spectators", "takeover", "addresses", "proto", "key", "nonce", "sig", "knock", "to", "at",
          "card", "game", "v", "author", "kind", "body", "owner", "bot")
TYPES = ("have", "events", "refused", "lobby", "sit", "ready", "knock", "lobby_error", "ping",
         "takeover_ask", "takeover_yes", "takeover_no", "takeover_off", "hello", "proof", "ok", "refuse")
INTERESTING: tuple[Any, ...] = (
    0, 1, 2, 3, -1, -3, 30, 127, 128, 255, 256, 65535, 65536, 2 ** 31, 2 ** 32, 2 ** 63, 2 ** 64 - 1,
    -(2 ** 63), True, False, None, "", "127.0.0.1", "0.0.0.0", "255.255.255.255", "::1", "localhost",
    "a" * 65, "\x1b[2J\nrefused from x", "\u202e", b"", bytes(16), bytes(32), bytes(64), bytes(64) + b"\x90", bytes(64) + b"\x80",
    bytes(64) + b"\x00", [], {}, [[]], [[0, bytes(32)]], ["127.0.0.1", 0], ["127.0.0.1", 2 ** 64 - 1],
)
ByteMutate = Callable[[bytes, int], bytes]


MAX_DEPTH = 12  # nodes deeper than this are left alone (the codec refuses them anyway)


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if len(path) >= MAX_DEPTH:
        return out
    if isinstance(value, list):
        for i, x in enumerate(value):
            out += _nodes(x, path + (i,))
    elif isinstance(value, dict):
        for k, x in value.items():
            out += _nodes(x, path + (k,))
    return out


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def _set(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = _get(root, path[:-1])
    parent[path[-1]] = new
    return root


def _changed(rng: random.Random, old: Any) -> Any:
    """A new value for one node: related to the old one about half the time."""
    roll = rng.random()
    if roll < 0.35:
        return rng.choice(INTERESTING)
    if isinstance(old, bool) or old is None:
        return rng.choice((True, False, None, 0, 1))
    if isinstance(old, int):
        return rng.choice((old + 1, old - 1, -old, old * 2, old ^ (1 << rng.randrange(64)), old + 30))
    if isinstance(old, bytes):
        b = bytearray(old)
        op = rng.randrange(5)
        if op == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 1:
            del b[rng.randrange(len(b) + 1):]
        elif op == 2:
            b += bytes(rng.randrange(1, 40))
        elif op == 3:  # a signed-looking blob: 64 bytes, then some msgpack value
            return bytes(b[:64]).ljust(64, b"\0") + encode(rng.choice(INTERESTING))
        else:
            return bytes(rng.randrange(256) for _ in range(len(b)))
        return bytes(b)
    if isinstance(old, str):
        return rng.choice((old + "x", old[:-1], old.upper(), rng.choice(TYPES), rng.choice(FIELDS), "é" * 40))
    if isinstance(old, list):
        items = list(old)
        op = rng.randrange(5)
        if op == 0 and items:
            del items[rng.randrange(len(items))]
        elif op == 1 and items:
            items.append(items[rng.randrange(len(items))])
        elif op == 2:
            return {str(i): x for i, x in enumerate(items)}  # a map where a list was
        elif op == 3:
            items.insert(rng.randrange(len(items) + 1), rng.choice(INTERESTING))
        else:
            rng.shuffle(items)
        return items
    if isinstance(old, dict):
        d = dict(old)
        op = rng.randrange(4)
        if op == 0 and d:
            del d[rng.choice(list(d))]
        elif op == 1:
            d[rng.choice(FIELDS)] = rng.choice(INTERESTING)
        elif op == 2:
            return list(d.values())  # a list where a map was
        else:
            d["t"] = rng.choice(TYPES)
        return d
    return rng.choice(INTERESTING)


def mutate_value(value: Any, rng: random.Random) -> Any:
    """The value with one to three nodes changed."""
    for _ in range(rng.randrange(1, 4)):
        path = rng.choice(_nodes(value))
        value = _set(value, path, _changed(rng, _get(value, path)))
    return value


def mutate(data: bytes, max_size: int, seed: int, offset: int, byte_mutate: ByteMutate) -> bytes:
    """One mutation of `data`, whose msgpack value starts at `offset` (never raises: a
    mutator that fails would end the fuzzing run, so it falls back to libFuzzer's own)."""
    try:
        return _mutate(data, max_size, seed, offset, byte_mutate)
    except Exception:
        return byte_mutate(data, max_size)


def _mutate(data: bytes, max_size: int, seed: int, offset: int, byte_mutate: ByteMutate) -> bytes:
    rng = random.Random(seed)
    if rng.random() < 0.2 or len(data) <= offset:
        return byte_mutate(data, max_size)
    head, body = data[:offset], data[offset:]
    if head and rng.random() < 0.1:
        head = byte_mutate(head, len(head))[:offset].ljust(offset, b"\0")
    try:
        value = msgpack.unpackb(body, raw=False, strict_map_key=False)
    except Exception:  # not msgpack: libFuzzer's byte mutations may yet make it so
        return byte_mutate(data, max_size)
    value = mutate_value(value, rng)
    try:
        out = head + encode(value)
    except (CodecError, RecursionError):
        try:
            out = head + msgpack.packb(value, use_bin_type=True)
        except Exception:
            return byte_mutate(data, max_size)
    return out[:max_size]
