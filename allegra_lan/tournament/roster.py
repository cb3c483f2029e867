"""The players a plan seats: an organiser's players file, or a plain list of names.

A tournament is often planned before anyone has a key (people arrive with
laptops on the night), so besides the players file the standings read
(`tools/players.py`: `.csv` of name,fingerprint or `.toml`, where one person
may hold several keys), a plain `.txt` list of one name a line is accepted.
The order of the file is the order of the plan's player list; seats come from
the search, not from it.
"""

from __future__ import annotations

from pathlib import Path

from allegra_lan.tournament.plan import MAX_NAME, MAX_PLAYERS, PlanPlayer

MAX_BYTES = 1 << 20
LIST_SUFFIXES = (".txt", "")


class RosterError(ValueError):
    """A players file or list that cannot be used: one line naming the file and the line."""


def parse_name_list(text: str, label: str = "players list") -> tuple[PlanPlayer, ...]:
    """One name a line; blank lines and lines starting with # are skipped."""
    out: list[PlanPlayer] = []
    seen: dict[str, int] = {}
    for no, line in enumerate(text.splitlines(), 1):
        name = line.strip()
        if not name or name.startswith("#"):
            continue
        where = f"{label}: line {no}"
        if len(name) > MAX_NAME or not name.isprintable():
            raise RosterError(f"{where}: a name must be 1 to {MAX_NAME} printable characters")
        if name in seen:
            raise RosterError(f"{where}: {name!r} is already on line {seen[name]}")
        seen[name] = no
        out.append(PlanPlayer(name))
        if len(out) > MAX_PLAYERS:
            raise RosterError(f"{label}: more than {MAX_PLAYERS} players")
    return tuple(out)


def from_players_file(by_key: dict[str, str], names: list[str]) -> tuple[PlanPlayer, ...]:
    """tools.players.Players as plan players: each name once, in the file's order, with its
    keys in the order the file gave them."""
    keys: dict[str, list[str]] = {n: [] for n in names}
    for key, name in by_key.items():
        keys[name].append(key)
    return tuple(PlanPlayer(n, tuple(keys[n])) for n in names)


def read_roster(path: str | Path) -> tuple[PlanPlayer, ...]:
    """The players in `path`: `.csv` or `.toml` as a players file, `.txt` (or no suffix) as
    a list of names. RosterError (one line) for anything wrong."""
    from allegra_lan.files import FileRefused, read_text
    from allegra_lan.tools.players import PlayersError, read_players

    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".csv", ".toml"):
        try:
            players = read_players(p)
        except PlayersError as e:
            raise RosterError(str(e)) from None
        return from_players_file(players.by_key, players.names)
    if suffix not in LIST_SUFFIXES:
        raise RosterError(f"{path}: name the players file .csv or .toml (name and key), "
                          f"or .txt (one name a line), so its form is known")
    try:
        text = read_text(p, MAX_BYTES, what="players list", encoding="utf-8-sig")
    except FileRefused as e:
        raise RosterError(str(e)) from None
    return parse_name_list(text, str(path))


__all__ = ["RosterError", "parse_name_list", "from_players_file", "read_roster"]
