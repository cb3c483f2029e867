"""Canonical msgpack: one byte string for one value, so a signature covers exactly it.

Allowed values: nil, booleans, integers, UTF-8 strings, byte strings, arrays
and maps with string keys; never floats or extension types. Every value has
one encoding: the shortest msgpack form (what msgpack-python writes), and map
keys in ascending order of their UTF-8 bytes, except where a caller fixes a
key order itself (the event envelope). Decoding re-encodes and compares, so
any other encoding of the same value is refused, and names why.

A decoder hands back only the type its caller asked for (`expect`, or a map
whenever a key order is given; `decode_map` for short): a list where a map
was expected is a CodecError here, not an AttributeError three calls later
in code that trusted the shape (issue 9, finding 1).
"""

from __future__ import annotations

from typing import Any, Sequence

import msgpack

MAX_DEPTH = 8


class CodecError(ValueError):
    """Bytes that are not one canonical msgpack value, or a value that cannot be encoded."""


class CodecTypeError(CodecError):
    """Canonical bytes of a value of another type than the caller asked for; `found` names
    it ("an array"), so a caller can word the refusal in its own terms."""

    def __init__(self, message: str, found: str) -> None:
        super().__init__(message)
        self.found = found


def _canon(obj: Any, depth: int, where: str) -> Any:
    """The value with every map's keys sorted; refuses what canonical msgpack does not allow."""
    if depth > MAX_DEPTH:
        raise CodecError(f"{where}: nested deeper than {MAX_DEPTH}")
    if obj is None or isinstance(obj, (bool, str, bytes)):
        return obj
    if isinstance(obj, int):
        if not -(1 << 63) <= obj < (1 << 64):
            raise CodecError(f"{where}: integer out of the 64-bit range")
        return obj
    if isinstance(obj, (list, tuple)):
        return [_canon(x, depth + 1, f"{where}[{i}]") for i, x in enumerate(obj)]
    if isinstance(obj, dict):
        for k in obj:
            if not isinstance(k, str):
                raise CodecError(f"{where}: map key {k!r} is not a string")
        return {k: _canon(obj[k], depth + 1, f"{where}.{k}")
                for k in sorted(obj, key=lambda k: k.encode("utf-8"))}
    if isinstance(obj, float):
        raise CodecError(f"{where}: floats are not allowed")
    raise CodecError(f"{where}: a {type(obj).__name__} cannot be encoded")


def encode(obj: Any, *, key_order: Sequence[str] | None = None) -> bytes:
    """The canonical encoding of `obj`; a top-level map may have its key order fixed."""
    if key_order is not None:
        if not isinstance(obj, dict) or list(obj) != list(key_order):
            raise CodecError(f"the map must have exactly the keys {list(key_order)} in that order")
        value = {k: _canon(obj[k], 1, k) for k in key_order}
    else:
        value = _canon(obj, 0, "value")
    return msgpack.packb(value, use_bin_type=True)


def _pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, v in pairs:
        if not isinstance(k, str):
            raise CodecError(f"map key {k!r} is not a string")
        if k in out:
            raise CodecError(f"map key {k!r} appears twice")
        out[k] = v
    return out


def _no_ext(code: int, data: bytes) -> Any:
    raise CodecError(f"extension type {code} is not allowed")


def _tree_ok(obj: Any, depth: int) -> bool:
    """The fast check of `_check_tree` for nested values (no messages; True if all is well)."""
    if depth > MAX_DEPTH:
        return False
    t = type(obj)
    if t is list:
        return all(_tree_ok(x, depth + 1) for x in obj)
    if t is dict:
        keys = list(obj)
        for k in keys:
            if type(k) is not str:
                return False
        if len(keys) > 1 and keys != sorted(keys, key=_utf8):
            return False
        return all(_tree_ok(x, depth + 1) for x in obj.values())
    return t in _SCALARS


_SCALARS = (int, str, bytes, bool, type(None))


def _utf8(key: str) -> bytes:
    return key.encode("utf-8")


def _check_tree(obj: Any, where: str, depth: int, order: Sequence[str] | None) -> None:
    """Refuse floats, too deep nesting and maps whose keys are not in canonical order."""
    if isinstance(obj, float):
        raise CodecError(f"{where}: floats are not allowed")
    if type(obj) not in _SCALARS and not isinstance(obj, (list, dict)):
        raise CodecError(f"{where}: a {type(obj).__name__} (an extension type) is not allowed")
    if depth > MAX_DEPTH:
        raise CodecError(f"{where}: nested deeper than {MAX_DEPTH}")
    if isinstance(obj, list):
        for i, x in enumerate(obj):
            _check_tree(x, f"{where}[{i}]", depth + 1, None)
    elif isinstance(obj, dict):
        keys = list(obj)
        if order is not None:
            if keys != list(order):
                raise CodecError(f"the map must have exactly the keys {list(order)} in that order")
        elif keys != sorted(keys, key=lambda k: k.encode("utf-8")):
            raise CodecError(f"not canonical: {where}: map keys are not in ascending order")
        for k, x in obj.items():
            _check_tree(x, f"{where}.{k}", depth + 1, None)


_TYPE_NAMES: dict[type, str] = {
    dict: "a map", list: "an array", str: "a text string", bytes: "a byte string",
    int: "an integer", bool: "a boolean", type(None): "nil",
}


def type_name(value: Any) -> str:
    """How an error names the type of a decoded value ("an array", "nil", ...)."""
    return _TYPE_NAMES.get(type(value), f"a {type(value).__name__}")


def decode(data: bytes, *, max_size: int, key_order: Sequence[str] | None = None,
           expect: type | None = None) -> Any:
    """Read exactly one canonical value from `data`; CodecError says what is wrong.

    With `expect` (dict, list, bytes, str, int, bool) the value must be of exactly that
    type (`type(v) is expect`: a boolean is no integer); a `key_order` implies a map."""
    if key_order is not None:
        if expect not in (None, dict):
            raise ValueError("a key order is for maps only")
        expect = dict
    obj = _decode(data, max_size=max_size, key_order=key_order)
    if expect is not None and type(obj) is not expect:
        raise CodecTypeError(f"expected {_TYPE_NAMES.get(expect, expect.__name__)}, "
                             f"not {type_name(obj)}", type_name(obj))
    return obj


def decode_map(data: bytes, *, max_size: int,
               key_order: Sequence[str] | None = None) -> dict[str, Any]:
    """`decode` of a value that must be a map (with exactly `key_order`'s keys, if given)."""
    obj: dict[str, Any] = decode(data, max_size=max_size, key_order=key_order, expect=dict)
    return obj


def _decode(data: bytes, *, max_size: int, key_order: Sequence[str] | None) -> Any:
    if not isinstance(data, (bytes, bytearray)):
        raise CodecError("expected bytes")
    if len(data) > max_size:
        raise CodecError(f"{len(data)} bytes is more than the {max_size} allowed")
    data = bytes(data)
    # The fast path takes what is canonical (nearly everything a peer sends); anything
    # else is read again by the careful path below, which names the fault.
    try:
        obj = msgpack.unpackb(data, raw=False, use_list=True, strict_map_key=True,
                              ext_hook=_no_ext, max_str_len=max_size, max_bin_len=max_size,
                              max_array_len=max_size, max_map_len=max_size)
    except Exception:
        pass
    else:
        if key_order is not None:
            ok = (type(obj) is dict and list(obj) == list(key_order)
                  and all(_tree_ok(x, 1) for x in obj.values()))
        else:
            ok = _tree_ok(obj, 0)
        if ok and msgpack.packb(obj, use_bin_type=True) == data:
            return obj
    return _decode_carefully(data, max_size=max_size, key_order=key_order)


def _decode_carefully(data: bytes, *, max_size: int, key_order: Sequence[str] | None) -> Any:
    try:
        obj = msgpack.unpackb(
            bytes(data), raw=False, use_list=True, strict_map_key=True,
            object_pairs_hook=_pairs, ext_hook=_no_ext,
            max_str_len=max_size, max_bin_len=max_size, max_array_len=max_size,
            max_map_len=max_size,
        )
    except CodecError:
        raise
    except msgpack.ExtraData:
        raise CodecError("bytes left over after the value") from None
    except UnicodeDecodeError:
        raise CodecError("a string is not valid UTF-8") from None
    except (ValueError, msgpack.UnpackException, TypeError) as e:
        raise CodecError(f"not msgpack: {str(e) or type(e).__name__}") from None
    if key_order is not None and not isinstance(obj, dict):
        raise CodecTypeError(f"expected a map of {list(key_order)}, not {type_name(obj)}",
                             type_name(obj))
    try:
        if key_order is not None and isinstance(obj, dict) and list(obj) == list(key_order):
            if not all(_tree_ok(x, 1) for x in obj.values()):
                _check_tree(obj, "value", 0, key_order)  # to name the fault
        elif key_order is not None or not _tree_ok(obj, 0):
            _check_tree(obj, "value", 0, key_order)
    except CodecError as e:
        raise CodecError(f"not canonical: {e}" if not str(e).startswith("not canonical") else str(e)) from None
    # Keys are in order and no value is foreign, so re-packing as is gives the canonical
    # form: any difference is a longer-than-needed encoding.
    if msgpack.packb(obj, use_bin_type=True) != bytes(data):
        raise CodecError("not canonical msgpack (another encoding of the same value)")
    return obj
