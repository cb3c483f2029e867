"""A signed game whose seats are all played on this machine (bots, or one person and bots).

Every decision becomes an event signed by its seat's key and is folded
through a `Table`, exactly as a networked game would be, so a local game's
replay verifies like any other. The seed ceremony runs too, with each seat's
nonce made here: `simulate` derives the nonces from its --seed so that its
replays are reproducible byte for byte; `play` uses fresh random ones.

Given a `clock` (ms since the epoch, UTC), the game is of the version with signed
results: the genesis carries the start time and, the moment a round ends, every
seat's result is signed and appended here, by the same path for a person's seat
and a bot's (`write_owed`); nobody is asked. Without one (the golden replays, the
tests' fixed logs) the log is of the older version, byte for byte as before.

With `deal="fair"` the game uses the fair deal of network games (docs/fairdeal.md): this
machine plays every seat, so it keeps one table per seat, each holding only that seat's
secret (`deal.game_secret` of its key) and knowing only what that seat may see, plus the
public one (`table`); every deal event is written by the table of the seat that owes it.
A person gains nothing from it against bots on one computer (`play` keeps the seeded
deal); it is how tests, `simulate --deal fair` and the benchmarks make fair-deal logs
with the very code a peer runs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from nacl.signing import SigningKey

from allegra_lan.blake import blake2b

from .deal.cheats import Cheat
from .deal.derive import game_secret
from .deal.events import encode
from .log.results import Owed
from .log.ceremony import Genesis, SeatInfo, commitment, derive_seed
from .log.envelope import Event, sign_event
from .log.identity import Identity, fingerprint
from .log.knock import sign_knock
from .log.replay import ReplayWriter
from .rules import Ruleset, State, to_act
from .rules.rng import seed_from_number
from .rules.moves import Give, Move
from .table import Stage, Table, move_body
from .tags import result_tags


def wall_ms() -> int:
    """This machine's clock in ms since the Unix epoch, UTC: what a local game signs as
    its start and its results' times (`LocalGame(clock=...)`)."""
    return time.time_ns() // 1_000_000


@dataclass(frozen=True)
class Player:
    name: str
    identity: Identity


def derived(label: str, *parts: object) -> bytes:
    """32 bytes derived from a label and parts (tests and benchmarks name their keys so)."""
    text = "/".join(str(p) for p in parts)
    return blake2b(f"allegra-lan/{label}/{text}".encode(), digest_size=32).digest()


@dataclass(frozen=True)
class SimulatedSetup:
    """Everything a simulated game needs to be reproducible: its id, nonces and bot keys."""

    game_id: bytes
    nonces: tuple[bytes, ...]
    identities: tuple[Identity, ...]

    @property
    def seed(self) -> bytes:
        """The game seed the ceremony with these nonces gives (PROTOCOL.md)."""
        return derive_seed(self.game_id, list(self.nonces))


def simulated_setup(number: int, game: int, seats: int) -> SimulatedSetup:
    """Game `game` of `allegra simulate --seed number`: a seed ceremony made from the number.

    The game id and nonces are keyed BLAKE2b under `seed_from_number(number, game)`,
    each seat's bot key under `seed_from_number(number, 0)` so that a seat is one
    player over the series (PROTOCOL.md, "Simulated games"); a simulation and its
    replays are the same byte for byte.
    """
    base = seed_from_number(number, game)
    series = seed_from_number(number, 0)  # a seat's bot keeps its key over the whole series

    def part(key: bytes, label: str, size: int = 32) -> bytes:
        return blake2b(label.encode(), key=key, digest_size=size).digest()

    return SimulatedSetup(
        game_id=part(base, "allegra-lan/simulate/game", 16),
        nonces=tuple(part(base, f"allegra-lan/simulate/nonce/{i}") for i in range(seats)),
        identities=tuple(Identity(SigningKey(part(series, f"allegra-lan/simulate/key/{i}")))
                         for i in range(seats)),
    )


class LocalGame:
    """Runs the setup ceremony, then signs and appends each move by the seat that must make it."""

    def __init__(self, ruleset: Ruleset, players: Sequence[Player], *, game_id: bytes,
                 nonces: Sequence[bytes], table_name: str = "local table",
                 writer: ReplayWriter | None = None,
                 clock: Callable[[], int] | None = None, deal: str = "seeded",
                 cheat: Cheat | None = None) -> None:
        if len(nonces) != len(players):
            raise ValueError("one nonce per seat")
        if deal not in ("seeded", "fair"):
            raise ValueError(f"a deal is seeded or fair, not {deal!r}")
        self.players = list(players)
        self.table = Table()
        # Fair deal: each seat's own table (its secret, its peeks); seeded: only `table`.
        self.seat_tables = [Table(me=i, secret=game_secret(bytes(p.identity.key), game_id, i))
                            for i, p in enumerate(players)] if deal == "fair" else []
        self.writer = writer
        self.clock = clock
        # A dishonest dealer for tests (deal/cheats.py): it rewrites, or withholds, what its
        # seat's table would write; every honest table must catch it and name the seat.
        self.cheat = cheat
        self.withheld: str | None = None
        genesis = Genesis(table_name, ruleset.to_dict(),
                          tuple(SeatInfo(p.name, p.identity.public) for p in players),
                          None if clock is None else clock(), deal)
        self._emit(0, "genesis", genesis.body(), game_id)
        for i in range(len(players)):
            self._emit(i, "accept", {}, game_id)
        for i, nonce in enumerate(nonces):
            self._emit(i, "commit", {"commit": commitment(nonce)}, game_id)
        for i, nonce in enumerate(nonces):
            self._emit(i, "reveal", {"nonce": bytes(nonce)}, game_id)
        self.write_owed()  # the fair deal's keys, escrows and first shuffles

    @property
    def game_id(self) -> bytes:
        game = self.table.game
        assert game is not None
        return game

    @property
    def state(self) -> State:
        assert self.table.state is not None
        return self.table.state

    def seat_state(self, seat: int) -> State:
        """What seat `seat` knows: its own table's state under the fair deal (its peeks),
        the one state otherwise."""
        table = self.seat_tables[seat] if self.seat_tables else self.table
        assert table.state is not None
        return table.state

    def _emit(self, seat: int, kind: str, body: dict, game: bytes) -> Event:
        ev = sign_event(self.players[seat].identity.key, game=game, seq=self.table.seq,
                        prev=self.table.head, kind=kind, body=body)
        self.table.append(ev.signed)
        for t in self.seat_tables:
            t.append(ev.signed)
        if self.writer is not None:
            self.writer.append(ev.signed)
        return ev

    def knock(self, seat: int) -> bytes:
        """Seat `seat`'s signed knock for the deck draw that is the log's last event."""
        return sign_knock(self.players[seat].identity.key, self.game_id, self.table.head)

    def submit(self, move: Move, knock: bytes | None = None) -> Event:
        """Sign `move` by the seat to act and append it; Refused (nothing changes) if illegal."""
        d = to_act(self.state)
        if d is None:
            raise ValueError("the game is over")
        if isinstance(move, Give) and knock is None:
            knock = self.knock(move.to)
        kind, body = move_body(move, knock)
        ev = self._emit(d.seat, kind, body, self.game_id)
        self.write_owed()
        return ev

    def write_owed(self) -> None:
        """Every event the table says a seat owes now (a round's results, the fair deal's
        events), signed at once by that seat, whoever plays it: a person is never asked for
        one, nor is a bot. A deal event is made by the table holding its seat's secret."""
        while True:
            owed = self.table.owed()
            if owed is None and self.seat_tables and self.table.stage() is Stage.DEAL:
                owed = self._deal_event()
            if owed is None:
                return
            now = 0
            if owed.timed:
                assert self.clock is not None  # only a log with a start time owes results
                now = self.clock()
            self._emit(owed.seat, owed.kind, owed.body_at(now), self.game_id)

    def _deal_event(self) -> Owed | None:
        """The deal event the owing seat's own table makes (rewritten by the cheat, if it is
        the cheater's; None when the cheater withholds it: the game waits for ever)."""
        if self.withheld is not None:
            return None
        seat = self.table.next_author()
        assert seat is not None
        table = self.seat_tables[seat]
        owed = table.owed()
        assert owed is not None and table.ledger is not None, \
            f"seat {seat}'s table cannot make the deal event it owes"
        if self.cheat is None:
            return owed
        o, body = table.ledger.owed(), table.ledger.mine()
        assert o is not None and body is not None
        made = self.cheat(table.ledger, o, body)
        if made is None:
            self.withheld = str(o)
            return None
        kind, fields = encode(made)
        return Owed(seat, kind, fields, timed=False)

    @property
    def halted(self) -> bool:
        """The game cannot go on: the fair deal broke (`table.stopped`, the seats' secrets
        then in), or a seat withholds the deal event it owes."""
        return self.table.stopped is not None or self.withheld is not None

    def result_tags(self) -> dict[str, str]:
        """The Result tag: totals per seat and the winners, or `*` while unfinished."""
        return result_tags(self.state)


def seat_tags(players: Sequence[Player]) -> dict[str, str]:
    return {f"Seat{i}": f"{p.name} {fingerprint(p.identity.public)}" for i, p in enumerate(players)}
