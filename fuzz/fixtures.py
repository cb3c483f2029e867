"""Real game state for the fuzz targets: a golden game, tables at chosen points, nodes.

The targets that judge events or messages in context (the table, the gossip
replica, the node) need a game in progress and the private keys of its seats,
so that a fuzzed body can be signed and reach the checks behind the
signature. `replays/golden/allegra-3p-knocks.allegra` is a real 3-seat ALLEGRA
game with knocks, and its seats' keys come from `local.simulated_setup`, as
`allegra simulate` made them (replays/README.md).

Building a table costs milliseconds (every signature is checked), so each
point is folded once per process and copied only when an input changed it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from allegra_lan.local import simulated_setup
from allegra_lan.log.envelope import Event
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import read_replay
from allegra_lan.table import Table

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "replays" / "golden" / "allegra-3p-knocks.allegra"
GOLDEN_SEED, GOLDEN_GAME, GOLDEN_SEATS = 2, 0, 3  # replays/manifest.json

# Points of the golden game a target may stand at (its seq): inside the ceremony, the
# first move of the play, a deck draw that seats may knock for (seat 0 then gives at 21),
# deep in the play, and the finished game.
POINTS: tuple[int, ...] = (5, 10, 21, 120, 250)


@dataclass(frozen=True)
class Golden:
    """The golden game: its signed events and its seats' identities (which sign for them)."""

    events: tuple[bytes, ...]
    identities: tuple[Identity, ...]
    game: bytes

    @property
    def keys(self) -> list[bytes]:
        return [i.public for i in self.identities]


@lru_cache(maxsize=1)
def golden() -> Golden:
    setup = simulated_setup(GOLDEN_SEED, GOLDEN_GAME, GOLDEN_SEATS)
    events = tuple(read_replay(GOLDEN).events)
    return Golden(events, setup.identities, setup.game_id)


@lru_cache(maxsize=None)
def _master(seq: int) -> Table:
    t = Table()
    for raw in golden().events[:seq]:
        t.append(raw)
    return t


class TablePool:
    """A working copy of the table at each point, made again only after an input changed it."""

    def __init__(self) -> None:
        self._work: dict[int, Table] = {}

    def table(self, seq: int) -> Table:
        master = _master(seq)
        t = self._work.get(seq)
        if t is None or t.seq != master.seq or t.head != master.head or len(t.events) != len(master.events):
            t = copy.deepcopy(master)
            self._work[seq] = t
        return t

    def taint(self, seq: int) -> None:
        """Forget the working copy (the caller changed it in a way seq and head do not show)."""
        self._work.pop(seq, None)


def next_events(seq: int, count: int = 3) -> list[Event]:
    """The golden events right after a point (as the table decoded them)."""
    full = _master(len(golden().events))
    return full.events[seq:seq + count]


