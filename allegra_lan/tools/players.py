"""An organiser's players file: who is who, by key fingerprint.

Names in a log are whatever each peer typed, and a bot or a fresh profile
makes a new key every game, so results are only as readable as the mapping
an organiser writes once: one person, one name, one or more keys (a laptop
and a phone are two keys). Two forms are read, chosen by the file's suffix:

    # players.csv: name, fingerprint (a header line `name,fingerprint` is allowed)
    Ann,MNXN-IPYC-JI2C-SOQV
    Ann,2VJH-UTFG-GKSN-REWG

    # players.toml: name = fingerprint, or a list of them
    [players]
    Ann = ["MNXN-IPYC-JI2C-SOQV", "2VJH-UTFG-GKSN-REWG"]
    "Bob B." = "THSV-AFOE-J3S4-6BXE"

Anything wrong is one `PlayersError` line naming the line it is on, since an
organiser fixes the file by hand.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_BYTES = 1 << 20  # a club's list is a few kilobytes; a bigger file is a wrong file
MAX_NAME = 64
FINGERPRINT = re.compile(r"[A-Z2-7]{4}(?:-[A-Z2-7]{4}){3}")


class PlayersError(ValueError):
    """A players file that cannot be used: one line, naming the file and the line."""


@dataclass
class Players:
    """Fingerprint -> name, and the order names were first given (for stable listings)."""

    by_key: dict[str, str] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)

    def name_of(self, fp: str) -> str | None:
        return self.by_key.get(fp)

    def add(self, name: Any, fp: Any, where: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise PlayersError(f"{where}: the name is empty")
        name = name.strip()
        if len(name) > MAX_NAME or not name.isprintable():
            raise PlayersError(f"{where}: the name must be 1 to {MAX_NAME} printable characters")
        if not isinstance(fp, str):
            raise PlayersError(f"{where}: {name}'s key must be a fingerprint in quotes, "
                               f"like \"MNXN-IPYC-JI2C-SOQV\"")
        key = fp.strip().upper()
        if not FINGERPRINT.fullmatch(key):
            shown = fp.strip()[:40]
            raise PlayersError(f"{where}: {shown!r} is not a key fingerprint "
                               f"(four groups of four letters A-Z or digits 2-7, like MNXN-IPYC-JI2C-SOQV)")
        held = self.by_key.get(key)
        if held is not None and held != name:
            raise PlayersError(f"{where}: the key {key} is already {held}'s")
        self.by_key[key] = name
        if name not in self.names:
            self.names.append(name)


def _csv(text: str, label: str) -> Players:
    out = Players()
    for no, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{label}: line {no}"
        try:
            row = next(csv.reader(io.StringIO(line)))
        except csv.Error as e:
            raise PlayersError(f"{where}: {e}") from None
        cells = [c.strip() for c in row]
        if [c.lower() for c in cells] == ["name", "fingerprint"]:
            continue
        if len(cells) != 2:
            raise PlayersError(f"{where}: want two fields, name and fingerprint, not {len(cells)}")
        out.add(cells[0], cells[1], where)
    return out


def _line_of(text: str, needle: str) -> str:
    """`line N` of the first line holding `needle` (tomllib gives values without places)."""
    for no, line in enumerate(text.splitlines(), 1):
        if needle and needle in line:
            return f"line {no}"
    return "the [players] table"


def _toml(text: str, label: str) -> Players:
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise PlayersError(f"{label}: {e}") from None
    table = data.get("players")
    if set(data) != {"players"} or not isinstance(table, dict):
        raise PlayersError(f"{label}: want one [players] table of name = \"FINGERPRINT\" lines")
    out = Players()
    for name, value in table.items():
        keys = value if isinstance(value, list) else [value]
        if not keys:
            raise PlayersError(f"{label}: {_line_of(text, name)}: {name!r} has no key")
        for fp in keys:
            out.add(name, fp, f"{label}: {_line_of(text, fp if isinstance(fp, str) else name)}")
    return out


def parse_players(text: str, suffix: str, label: str = "players file") -> Players:
    """The players of a file's text; `suffix` (".csv" or ".toml") says which form it is."""
    if suffix == ".csv":
        return _csv(text, label)
    if suffix == ".toml":
        return _toml(text, label)
    raise PlayersError(f"{label}: name the file .csv or .toml, so its form is known")


def read_players(path: str | Path) -> Players:
    """The players file at `path`; a PlayersError (one line) for anything wrong with it."""
    from allegra_lan.files import FileRefused, read_text

    p = Path(path)
    try:
        # read_text: a FIFO or device named as the file is refused at once, never waited on.
        text = read_text(p, MAX_BYTES, what="players file", encoding="utf-8-sig")
    except FileRefused as e:
        raise PlayersError(str(e)) from None
    return parse_players(text, p.suffix.lower(), str(path))


def players_option(args: Any, unnamed: str = "the players file") -> tuple[Players | None, str]:
    """The players file a command's `--players` names (None without it), and how its lines
    name it (its path; `unnamed` without one); PlayersError for a file that cannot be used.
    Every command that takes `--players` reads it so."""
    path = getattr(args, "players", None)
    if path is None:
        return None, unnamed
    return read_players(path), str(path)


__all__ = ["Players", "PlayersError", "parse_players", "read_players", "players_option", "FINGERPRINT"]
