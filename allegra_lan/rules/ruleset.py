"""Rulesets as data: one frozen dataclass per variant.

Every *(option)* of RULINGS.md is a field here with its ruling's default, and a
ruleset travels in a game's genesis event as a plain dict, so a replay is
always rebuilt under the rules it was played with, whatever later defaults are.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import StrEnum
from typing import Any, ClassVar, Union

JOKER = 100
"""The internal value of a Joker (R25); it scores `joker_value`, never 100."""



class Variant(StrEnum):
    """The two games. A StrEnum, so a member *is* the string the logs have always carried
    ("allegra", "grande"): it equals and hashes as that string, formats as it and is packed
    by msgpack and json as it, so a genesis, a replay's tags, an mDNS ad and every hash keep
    their bytes, while the code compares members, not strings a typo could break. (`repr`
    differs: `to_dict` writes `.value`, because the state hash reprs the ruleset dict.)"""

    ALLEGRA = "allegra"
    GRANDE = "grande"

    @property
    def title(self) -> str:
        """The game's name as a person reads it."""
        return "ALLEGRA" if self is Variant.ALLEGRA else "ALLEGRA Grande"

# R12: our own split of ALLEGRA's 120 cards -1..11 (the published one is unknown).
ALLEGRA_COUNTS: tuple[tuple[int, int], ...] = (
    (-1, 5), (0, 7), (1, 8), (2, 9), (3, 10), (4, 11), (5, 12),
    (6, 12), (7, 11), (8, 10), (9, 9), (10, 8), (11, 8),
)
# R18: ALLEGRA Grande's 157 numbers -2..13 (-2 x4, 5 x16, 13 x10 published).
GRANDE_COUNTS: tuple[tuple[int, int], ...] = (
    (-2, 4), (-1, 8), (0, 9), (1, 10), (2, 10), (3, 10), (4, 10), (5, 16),
    (6, 10), (7, 10), (8, 10), (9, 10), (10, 10), (11, 10), (12, 10), (13, 10),
)


class RulesetError(ValueError):
    """A ruleset dict that cannot be read: names the field that is wrong."""


@dataclass(frozen=True)
class _Common:
    rounds: int = 3  # R11
    double_ender: bool = True  # R10
    double_only_positive: bool = True  # R10
    cleared_to_discard: bool = False  # R7

    variant: ClassVar[Variant]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    LEGACY: ClassVar[dict[str, Any]] = {}

    @property
    def deck_size(self) -> int:
        return sum(c for _, c in self.card_counts) + self.joker_count  # type: ignore[attr-defined]

    @property
    def joker_count(self) -> int:
        return 0

    def deck_values(self) -> list[int]:
        """The unshuffled deck: every value as often as its count, ascending, Jokers last (PROTOCOL.md)."""
        out: list[int] = []
        for value, count in self.card_counts:  # type: ignore[attr-defined]
            out.extend([value] * count)
        out.extend([JOKER] * self.joker_count)
        return out

    def score_of(self, value: int) -> int:
        return value

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (str keys; ints, bools and lists only) for the genesis event."""
        d: dict[str, Any] = {"variant": self.variant.value}  # plain str: state_hash reprs it
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in self.LEGACY and self.LEGACY[f.name] == v:
                continue  # absent means this (a log older than the field): so it keeps its bytes
            if f.name == "card_counts":
                v = [[a, b] for a, b in v]
            d[f.name] = v
        return d

    def check_players(self, players: int) -> None:
        if not self.min_players <= players <= self.max_players:
            raise RulesetError(
                f"{self.title} is for {self.min_players} to {self.max_players} players, not {players}"
            )
        rows, cols = self.dims(players)  # type: ignore[attr-defined]
        need = rows * cols * players + 2  # the deal, the first discard and a card to draw
        if self.deck_size < need:
            raise RulesetError(f"a deck of {self.deck_size} cards cannot deal {players} players "
                               f"(it needs at least {need})")

    @property
    def title(self) -> str:
        return self.variant.title

    def _validate(self) -> None:
        if not 1 <= self.rounds <= 99:
            raise RulesetError("rounds must be 1 to 99")
        counts = self.card_counts  # type: ignore[attr-defined]
        for value, count in counts:
            if not -99 <= value <= 99 or not 0 <= count <= 999:
                raise RulesetError(f"card_counts has a bad entry for value {value}")
        values = [v for v, _ in counts]
        if values != sorted(set(values)):
            # One deck, one description: the unshuffled deck lists values in this order.
            raise RulesetError("card_counts must list each value once, in ascending order")


@dataclass(frozen=True)
class AllegraRuleset(_Common):
    """ALLEGRA: 2-6 players, 3x4 displays, areas with the left neighbour's column, knocking."""

    card_counts: tuple[tuple[int, int], ...] = ALLEGRA_COUNTS  # R12 (option)
    knock_min_players: int = 2  # R16 (option; revised: it was 3, and old logs say 3)

    variant: ClassVar[Variant] = Variant.ALLEGRA
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 6

    def __post_init__(self) -> None:
        self._validate()
        if not 2 <= self.knock_min_players <= 99:
            raise RulesetError("knock_min_players must be 2 to 99")

    def dims(self, players: int) -> tuple[int, int]:
        """Rows and columns of a display (R13)."""
        return 3, 4


@dataclass(frozen=True)
class GrandeRuleset(_Common):
    """ALLEGRA Grande: 2-5 players, 4x4 (4x5 with two) displays, two draws, actions, Jokers."""

    card_counts: tuple[tuple[int, int], ...] = GRANDE_COUNTS  # R18 (option)
    jokers: int = 3  # R18
    joker_value: int = 0  # R25 (option)
    turn_up_after_13: bool = False  # R24 (revised): a log written before this field says True

    # Fields added after logs were already written, with the value their absence means (the
    # rule those logs were played under): a ruleset map without one reads as that value, and
    # `to_dict` leaves it out at that value, so an old game is rebuilt, folds and hashes as before.
    LEGACY: ClassVar[dict[str, Any]] = {"turn_up_after_13": True}

    variant: ClassVar[Variant] = Variant.GRANDE
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 5

    def __post_init__(self) -> None:
        self._validate()
        if not 0 <= self.jokers <= 99:
            raise RulesetError("jokers must be 0 to 99")
        if not -99 <= self.joker_value <= 99:
            raise RulesetError("joker_value must be -99 to 99")

    @property
    def joker_count(self) -> int:
        return self.jokers

    def score_of(self, value: int) -> int:
        return self.joker_value if value == JOKER else value

    def dims(self, players: int) -> tuple[int, int]:
        """Rows and columns of a display (R19)."""
        return (4, 5) if players == 2 else (4, 4)


Ruleset = Union[AllegraRuleset, GrandeRuleset]

_BY_VARIANT: dict[Variant, type[AllegraRuleset] | type[GrandeRuleset]] = {
    Variant.ALLEGRA: AllegraRuleset,
    Variant.GRANDE: GrandeRuleset,
}


def ruleset_for(variant: str) -> Ruleset:
    """The default ruleset of a variant (a Variant, or its text "allegra" or "grande": this is
    a border, where text from a command line or an ad is read)."""
    try:
        return _BY_VARIANT[Variant(variant)]()
    except ValueError:
        raise RulesetError(f"unknown variant {variant!r}: choose allegra or grande") from None


def ruleset_from_dict(d: Any) -> Ruleset:
    """Read a ruleset dict (as `to_dict` writes it); refuses unknown or ill-typed fields."""
    if not isinstance(d, dict):
        raise RulesetError("a ruleset is a map")
    variant = d.get("variant")
    if not isinstance(variant, str) or variant not in _BY_VARIANT:
        raise RulesetError(f"unknown variant {variant!r}")
    cls = _BY_VARIANT[Variant(variant)]  # the border: a decoded log's text becomes a Variant
    known = {f.name: f for f in fields(cls)}
    kwargs: dict[str, Any] = dict(cls.LEGACY)  # absent: the rule of a log older than the field
    for key, value in d.items():
        if key == "variant":
            continue
        if key not in known:
            raise RulesetError(f"unknown ruleset field {key!r} for {variant}")
        default = getattr(cls(), key)
        if key == "card_counts":
            if not isinstance(value, (list, tuple)) or not all(
                isinstance(p, (list, tuple)) and len(p) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in p)
                for p in value
            ):
                raise RulesetError("card_counts must be a list of [value, count] pairs of integers")
            value = tuple((int(a), int(b)) for a, b in value)
        elif isinstance(default, bool):
            if not isinstance(value, bool):
                raise RulesetError(f"ruleset field {key!r} must be true or false")
        elif isinstance(default, int):
            if not isinstance(value, int) or isinstance(value, bool):
                raise RulesetError(f"ruleset field {key!r} must be an integer")
        kwargs[key] = value
    return cls(**kwargs)


def ruleset_with(variant: str, options: dict[str, Any] | None) -> Ruleset:
    """A variant's default ruleset with some fields set otherwise (a host's or a player's
    `--rounds`), checked field by field as a ruleset read from a log is."""
    return ruleset_from_dict({**ruleset_for(variant).to_dict(), **(options or {})})


__all__ = [
    "JOKER", "ALLEGRA_COUNTS", "GRANDE_COUNTS", "AllegraRuleset", "GrandeRuleset",
    "Ruleset", "RulesetError", "Variant", "ruleset_for", "ruleset_from_dict", "ruleset_with",
]
