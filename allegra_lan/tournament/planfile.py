"""The plan file: a tournament plan as JSON, written by `tournament plan`, read back by the
tools that come after it (`tournament check` matches collected replays to it).

JSON because the standard library both writes and reads it (TOML it only reads), and a
plan is data a program reads more often than a person edits. The text is made byte for
byte the same for the same plan (fixed key order, two-space indent, UTF-8, a final
newline), so two runs of one command line can be compared with `cmp`.

    {
      "format": "allegra-lan tournament plan",
      "version": 1,
      "variant": "grande",
      "seed": 7,
      "table_sizes": {"allowed": [2, 3, 4, 5], "preferred": 4},
      "players": [{"name": "Ann", "keys": ["MNXN-IPYC-JI2C-SOQV"]}, ...],
      "rounds": [
        {"round": 1, "tables": [{"table": 1, "seats": ["Ann", "Cid", "Eve", "Gus"]}, ...]},
        ...
      ]
    }

A file is hostile input like any other: `parse_plan` checks every field against this
schema and the plan's own rules (every player once in every round, every table of an
allowed size, the allowed sizes the variant's) and says what is wrong in one line,
never with a traceback, whatever the bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NoReturn

from allegra_lan.tournament.plan import (
    MAX_NAME, MAX_PLAYERS, MAX_ROUNDS, MAX_SEED, Plan, PlanPlayer, allowed_sizes,
)

FORMAT = "allegra-lan tournament plan"
VERSION = 1
MAX_BYTES = 4 << 20  # 128 players over 30 rounds is well under 1 MiB
MAX_KEYS = 16  # keys one player may hold
VARIANTS = ("allegra", "grande")
_TOP = ("format", "version", "variant", "seed", "table_sizes", "players", "rounds")


class PlanFileError(ValueError):
    """A plan file that cannot be used: one line naming the file and what is wrong."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _shown(value: Any) -> str:
    """A value for a message: a short repr of a number or a text, else only its kind (a
    hostile list could be megabytes, or nested deep enough that repr itself fails)."""
    if _is_int(value) or isinstance(value, (str, float)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    return {dict: "an object", list: "a list", bool: "true/false"}.get(type(value), "null")


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "variant": plan.variant,
        "seed": plan.seed,
        "table_sizes": {"allowed": list(plan.allowed), "preferred": plan.preferred},
        "players": [{"name": p.name, "keys": list(p.keys)} for p in plan.players],
        "rounds": [
            {"round": r, "tables": [{"table": t, "seats": list(seats)}
                                    for t, seats in enumerate(tables, 1)]}
            for r, tables in enumerate(plan.rounds, 1)
        ],
    }


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def plan_to_json(plan: Plan) -> str:
    """The plan file's text: the same plan, the same bytes. A player or a table to a line,
    so that the file reads like the printed plan (and `diff` of two plans says which
    tables changed)."""
    d = plan_to_dict(plan)
    lines = ["{"]
    for key in ("format", "version", "variant", "seed", "table_sizes"):
        lines.append(f"  {_j(key)}: {_j(d[key])},")
    lines.append('  "players": [')
    lines += [f"    {_j(p)}," for p in d["players"]]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  ],", '  "rounds": [']
    for r in d["rounds"]:
        lines.append(f'    {{"round": {r["round"]}, "tables": [')
        lines += [f"      {_j(t)}," for t in r["tables"]]
        lines[-1] = lines[-1].rstrip(",")
        lines.append("    ]},")
    lines[-1] = lines[-1].rstrip(",")
    lines += ["  ]", "}"]
    return "\n".join(lines) + "\n"


class _Reader:
    """The schema check, with the file's label in every message."""

    def __init__(self, label: str) -> None:
        self.label = label

    def fail(self, message: str) -> NoReturn:
        raise PlanFileError(f"{self.label}: {message}")

    def obj(self, value: Any, where: str, keys: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(f"{where} must be an object with {', '.join(keys)}")
        missing = [k for k in keys if k not in value]
        if missing:
            self.fail(f"{where} has no {missing[0]!r}")
        extra = sorted(str(k) for k in value if k not in keys)
        if extra:
            self.fail(f"{where} has an unknown field {_shown(extra[0])}")
        return value

    def int_(self, value: Any, where: str, lo: int, hi: int) -> int:
        if not _is_int(value) or not lo <= value <= hi:
            self.fail(f"{where} must be a whole number from {lo} to {hi}")
        return value

    def list_(self, value: Any, where: str, most: int) -> list[Any]:
        if not isinstance(value, list):
            self.fail(f"{where} must be a list")
        if len(value) > most:
            self.fail(f"{where} has {len(value)} entries, more than {most}")
        return value

    def name(self, value: Any, where: str) -> str:
        if (not isinstance(value, str) or not value.strip() or value != value.strip()
                or len(value) > MAX_NAME or not value.isprintable()):
            self.fail(f"{where} must be a name of 1 to {MAX_NAME} printable characters")
        return value


def _players(rd: _Reader, value: Any) -> tuple[PlanPlayer, ...]:
    from allegra_lan.tools.players import FINGERPRINT

    out: list[PlanPlayer] = []
    names: set[str] = set()
    owner: dict[str, str] = {}
    for k, item in enumerate(rd.list_(value, "players", MAX_PLAYERS), 1):
        where = f"player {k}"
        d = rd.obj(item, where, ("name", "keys"))
        name = rd.name(d["name"], f"{where}'s name")
        if name in names:
            rd.fail(f"the name {name!r} is given to two players")
        names.add(name)
        keys = []
        for key in rd.list_(d["keys"], f"{name}'s keys", MAX_KEYS):
            if not isinstance(key, str) or not FINGERPRINT.fullmatch(key):
                rd.fail(f"{name}'s keys must be key fingerprints like MNXN-IPYC-JI2C-SOQV")
            if key in owner:
                rd.fail(f"the key {key} is given to {owner[key]} and {name}")
            owner[key] = name
            keys.append(key)
        out.append(PlanPlayer(name, tuple(keys)))
    if len(out) < 2:
        rd.fail("players must name at least two players")
    return tuple(out)


def _rounds(rd: _Reader, value: Any, players: tuple[PlanPlayer, ...],
            allowed: tuple[int, ...]) -> tuple[tuple[tuple[str, ...], ...], ...]:
    names = {p.name for p in players}
    out = []
    sizes: list[int] | None = None
    rounds = rd.list_(value, "rounds", MAX_ROUNDS)
    if not rounds:
        rd.fail("rounds is empty")
    for r, item in enumerate(rounds, 1):
        d = rd.obj(item, f"round {r}", ("round", "tables"))
        if not _is_int(d["round"]) or d["round"] != r:
            rd.fail(f"round {r} is numbered {_shown(d['round'])}; rounds are numbered 1, 2, ... in order")
        seen: set[str] = set()
        tables = []
        for t, titem in enumerate(rd.list_(d["tables"], f"round {r}'s tables", MAX_PLAYERS), 1):
            where = f"round {r} table {t}"
            td = rd.obj(titem, where, ("table", "seats"))
            if not _is_int(td["table"]) or td["table"] != t:
                rd.fail(f"{where} is numbered {_shown(td['table'])}; tables are numbered 1, 2, ... in order")
            seats = rd.list_(td["seats"], f"{where}'s seats", max(allowed))
            for s in seats:
                if not isinstance(s, str) or s not in names:
                    rd.fail(f"{where} seats {_shown(s)}, who is not among the players")
                if s in seen:
                    rd.fail(f"round {r} seats {s} twice")
                seen.add(s)
            if len(seats) not in allowed:
                rd.fail(f"{where} seats {len(seats)}; the plan's tables seat "
                        f"{', '.join(map(str, allowed))}")
            tables.append(tuple(seats))
        if seen != names:
            absent = sorted(names - seen)[0]
            rd.fail(f"round {r} does not seat {absent}")
        row = [len(t) for t in tables]
        if sizes is not None and row != sizes:
            rd.fail(f"round {r}'s tables seat {row}, not {sizes} as round 1's")
        sizes = row
        out.append(tuple(tables))
    return tuple(out)


def plan_from_data(data: Any, label: str = "plan file") -> Plan:
    """A Plan from decoded JSON, every field checked; PlanFileError (one line) if not one."""
    rd = _Reader(label)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        rd.fail(f"not a tournament plan (no \"format\": \"{FORMAT}\")")
    d = rd.obj(data, "the plan", _TOP)
    if not _is_int(d["version"]) or d["version"] != VERSION:
        rd.fail(f"version {_shown(d['version'])} is not one this allegra reads (it reads {VERSION})")
    variant = d["variant"]
    if variant not in VARIANTS:
        rd.fail(f"variant must be one of {', '.join(VARIANTS)}")
    seed = rd.int_(d["seed"], "seed", 0, MAX_SEED)
    ts = rd.obj(d["table_sizes"], "table_sizes", ("allowed", "preferred"))
    can = allowed_sizes(variant)
    allowed = tuple(rd.int_(s, "table_sizes.allowed", can[0], can[-1])
                    for s in rd.list_(ts["allowed"], "table_sizes.allowed", len(can)))
    if not allowed or list(allowed) != sorted(set(allowed)):
        rd.fail("table_sizes.allowed must list table sizes once each, smallest first")
    preferred = rd.int_(ts["preferred"], "table_sizes.preferred", can[0], can[-1])
    if preferred not in allowed:
        rd.fail(f"table_sizes.preferred ({preferred}) is not among the allowed sizes")
    players = _players(rd, d["players"])
    rounds = _rounds(rd, d["rounds"], players, allowed)
    return Plan(variant=variant, seed=seed, allowed=allowed, preferred=preferred,
                players=players, rounds=rounds)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def parse_plan(text: str, label: str = "plan file") -> Plan:
    """The plan in a plan file's text; PlanFileError (one line) for anything wrong."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise PlanFileError(f"{label}: not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except (ValueError, RecursionError) as e:  # NaN, a 5000-digit number, [[[[...]]]]
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e).splitlines()[0][:80]
        raise PlanFileError(f"{label}: not a plan: {why}") from None
    return plan_from_data(data, label)


def read_plan(path: str | Path) -> Plan:
    """The plan file at `path` (a regular file of at most MAX_BYTES, UTF-8 JSON)."""
    from allegra_lan.files import FileRefused, read_text

    try:
        text = read_text(path, MAX_BYTES, what="plan file")
    except FileRefused as e:
        raise PlanFileError(str(e)) from None
    return parse_plan(text, str(path))


__all__ = [
    "FORMAT", "VERSION", "PlanFileError", "plan_to_dict", "plan_to_json", "plan_from_data",
    "parse_plan", "read_plan",
]
