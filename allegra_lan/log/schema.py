"""Schemas: the exact shape of a decoded value (a message, an event body), checked once.

The codec guarantees only canonical msgpack; every place that then reads a
field would otherwise have to guess its type, and each guess it forgets is a
crash a peer can trigger (issue 9: a list where a map was expected took every
honest peer down). So each message type and each event body kind has one
schema, a small tree of the specs below, and a value is checked against it
before any handler sees it. A handler may then index fields without a
second thought: the check is total (any value in, None or SchemaError out)
and the error names the field path and what was wrong, in one line.

Specs are frozen dataclasses with `check(value, where)` and `describe()`; the
latter writes the field tables of PROTOCOL.md's message section, so the
documentation says what the code checks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Mapping

from .codec import type_name


class SchemaError(ValueError):
    """A value that does not fit its schema: `where` is the field path ("claims[0][1].key",
    empty for the value itself) and `what` says what is wrong with it."""

    def __init__(self, where: str, what: str) -> None:
        self.where = where
        self.what = what
        super().__init__(f"field {where}: {what}" if where else what)


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


class Spec(ABC):
    """One node of a schema: every kind of node checks a value and says what it wants."""

    @abstractmethod
    def check(self, value: Any, where: str = "") -> None:
        """Return if `value` has this form; SchemaError naming `where` otherwise."""

    @abstractmethod
    def describe(self) -> str:
        """The form in a few words, for PROTOCOL.md's message table."""


@dataclass(frozen=True)
class Int(Spec):
    """An integer (never a boolean: `type(x) is int`) from `lo` to `hi`."""

    lo: int
    hi: int

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not int:
            raise SchemaError(where, f"must be an integer, not {type_name(value)}")
        if not self.lo <= value <= self.hi:
            raise SchemaError(where, f"must be {self.lo} to {self.hi}, not {_short(value)}")

    def describe(self) -> str:
        return f"int {self.lo}..{self.hi}"


@dataclass(frozen=True)
class Bool(Spec):
    """true or false (never 0 or 1)."""

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not bool:
            raise SchemaError(where, f"must be true or false, not {type_name(value)}")

    def describe(self) -> str:
        return "bool"


@dataclass(frozen=True)
class Bytes(Spec):
    """A byte string of `lo` to `hi` bytes (exactly `lo` when `hi` is None)."""

    lo: int
    hi: int | None = None

    def check(self, value: Any, where: str = "") -> None:
        hi = self.lo if self.hi is None else self.hi
        if type(value) is not bytes:
            raise SchemaError(where, f"must be {self.describe()}, not {type_name(value)}")
        if not self.lo <= len(value) <= hi:
            raise SchemaError(where, f"must be {self.describe()}, not {len(value)} bytes")

    def describe(self) -> str:
        if self.hi is None:
            return f"{self.lo} bytes"
        return f"bytes of {self.lo} to {self.hi}"


@dataclass(frozen=True)
class Text(Spec):
    """A text string of `lo` to `hi` bytes of UTF-8; with `line`, one printable line (no
    control characters) that is not only blanks, as a name shown to players must be."""

    hi: int
    lo: int = 0
    line: bool = False

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not str:
            raise SchemaError(where, f"must be a text string, not {type_name(value)}")
        size = len(value.encode("utf-8"))
        if not self.lo <= size <= self.hi:
            raise SchemaError(where, f"must be text of {self.lo} to {self.hi} bytes, not {size}")
        if self.line and (any(ord(ch) < 32 or ord(ch) == 127 for ch in value)
                          or (self.lo > 0 and not value.strip())):
            raise SchemaError(where, "must be one line of printable text")

    def describe(self) -> str:
        return f"{'name' if self.line else 'text'} of {self.lo}..{self.hi} bytes"


@dataclass(frozen=True)
class OneOf(Spec):
    """One of a few values (of the same type as given: "1" is not 1)."""

    values: tuple[Any, ...]

    def check(self, value: Any, where: str = "") -> None:
        if not any(type(value) is type(v) and value == v for v in self.values):
            raise SchemaError(where, f"must be one of {', '.join(map(repr, self.values))}, "
                                     f"not {_short(value)}")

    def describe(self) -> str:
        return " or ".join(map(repr, self.values))


@dataclass(frozen=True)
class Maybe(Spec):
    """nil, or a value of `spec`."""

    spec: Spec

    def check(self, value: Any, where: str = "") -> None:
        if value is not None:
            self.spec.check(value, where)

    def describe(self) -> str:
        return f"nil or {self.spec.describe()}"


@dataclass(frozen=True)
class Array(Spec):
    """An array of `lo` to `hi` items, each of `item`."""

    item: Spec
    hi: int
    lo: int = 0

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not list:
            raise SchemaError(where, f"must be an array, not {type_name(value)}")
        if not self.lo <= len(value) <= self.hi:
            raise SchemaError(where, f"must have {self.lo} to {self.hi} items, not {len(value)}")
        for i, x in enumerate(value):
            self.item.check(x, f"{where}[{i}]")

    def describe(self) -> str:
        return f"[{self.item.describe()}, ...] ({self.lo}..{self.hi})"


@dataclass(frozen=True)
class Tuple(Spec):
    """An array of exactly these items, in this order ([seat, row, col], ...)."""

    items: tuple[Spec, ...]

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not list or len(value) != len(self.items):
            got = type_name(value) if type(value) is not list else f"{len(value)} items"
            raise SchemaError(where, f"must be an array of {len(self.items)} items, not {got}")
        for i, (spec, x) in enumerate(zip(self.items, value)):
            spec.check(x, f"{where}[{i}]")

    def describe(self) -> str:
        return "[" + ", ".join(s.describe() for s in self.items) + "]"


@dataclass(frozen=True)
class Map(Spec):
    """A map with exactly these fields (those in `optional` may be missing); no others."""

    fields: Mapping[str, Spec]
    optional: frozenset[str] = field(default_factory=frozenset)

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not dict:
            raise SchemaError(where, f"must be a map, not {type_name(value)}")
        for name in value:
            if name not in self.fields:
                raise SchemaError(where, f"unexpected field {_short(name, 40)}")
        for name, spec in self.fields.items():
            if name not in value:
                if name in self.optional:
                    continue
                raise SchemaError(_at(where, name), "is missing")
            spec.check(value[name], _at(where, name))

    def describe(self) -> str:
        return "{" + ", ".join(self.fields) + "}"


@dataclass(frozen=True)
class AnyMap(Spec):
    """A map of at most `hi` entries whose values this schema leaves to its reader (a
    ruleset, read by `ruleset_from_dict`); the codec already bounds its depth."""

    hi: int

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not dict:
            raise SchemaError(where, f"must be a map, not {type_name(value)}")
        if len(value) > self.hi:
            raise SchemaError(where, f"must have at most {self.hi} entries, not {len(value)}")

    def describe(self) -> str:
        return f"map (at most {self.hi} entries)"


@dataclass(frozen=True)
class IPv4(Spec):
    """An IPv4 address in its one dotted-quad form ("192.168.1.20", not "192.168.001.020",
    not a host name: a peer never resolves or dials a name a stranger gave it)."""

    def check(self, value: Any, where: str = "") -> None:
        if type(value) is not str:
            raise SchemaError(where, f"must be an IPv4 address, not {type_name(value)}")
        try:
            ok = len(value) <= 15 and str(ipaddress.IPv4Address(value)) == value
        except ValueError:
            ok = False
        if not ok:
            raise SchemaError(where, f"must be an IPv4 address, not {_short(value)}")

    def describe(self) -> str:
        return "IPv4 address"


def _short(value: Any, limit: int = 24) -> str:
    """A value in an error line: never more than `limit` characters of what a peer sent."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


PORT = Int(1, 65535)
KEY = Bytes(32)
EVENT_ID = Bytes(32)
SEQ_MAX = (1 << 32) - 1
SEQ = Int(0, SEQ_MAX)
SEAT = Int(0, 15)  # a genesis has at most 16 seats (log/ceremony.py)

__all__ = [
    "SchemaError", "Spec", "Int", "Bool", "Bytes", "Text", "OneOf", "Maybe", "Array", "Tuple",
    "Map", "AnyMap", "IPv4", "PORT", "KEY", "EVENT_ID", "SEQ", "SEQ_MAX", "SEAT",
]
