"""A whole fair-deal game between bots in one process: one partial engine per seat, the
real cryptography of allegra_lan/deal/ for every card that is shown.

Why it exists: it is the fair deal's engine side proven end to end before the log
carries shares (docs/fairdeal.md, "The engine's partial knowledge"). Each seat's engine
has its own PartialCards and learns a value only the way a peer will: a public reveal
opens with every seat's checked share, a private one (a peek) with the others' shares
plus the peeker's own, and the other engines learn only that it happened. A bot sees its
own seat's engine and nothing else. `OneProcessDeal` holds every seat's secret, as
deal/whole.py does, because one process plays all seats; a peer holds only its own.

Two deals serve the engines: `OneProcessDeal` calls the cryptography directly (the
engine side proven alone), `LedgerDeal` (`play_ledger_game`) goes through the deal's
log events: each seat's ledger (deal/ledger.py) makes what its seat owes, the events are
signed and decoded from their bytes by one ledger per peer, and each engine learns only
its own peer's ledger's answers, as a network game's peers will.

The driver moves all engines in lockstep: a move is applied to every engine; while one
waits (NeedValues) they must all wait for the same requests, which the deal then serves;
after every move every engine's state hash (public knowledge only) must be equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from allegra_lan.blake import blake2b
from nacl.signing import SigningKey

from allegra_lan.deal.cards import Pile
from allegra_lan.deal.cheats import Cheat
from allegra_lan.deal.events import encode
from allegra_lan.deal.ledger import Ledger, Owed
from allegra_lan.log.envelope import NO_PREV, Event, decode_event, sign_event
from allegra_lan.deal.keys import SeatKeys, seat_keys
from allegra_lan.deal.reveal import check_share, make_share, open_card
from allegra_lan.deal.passes import check_shuffle
from allegra_lan.deal.whole import Dealt, Tamper, deal
from allegra_lan.rules.cards import NeedValues, PartialCards, PileInfo, RevealRequest, ValueConflict
from allegra_lan.rules.engine import apply, new_game, to_act, winners
from allegra_lan.rules.moves import Move, describe_move
from allegra_lan.rules.ruleset import Ruleset
from allegra_lan.rules.state import State, state_hash
from allegra_lan.rules.view import SeatView, view

from .base import Bot
from .driver import MAX_MOVES, BotError, GameStats, _count, make_bots, offered_moves

MAX_BATCHES = 4
"""A move waits for at most two batches of values (the cards it shows, then the round's
end); more means the engines and the deal disagree, and the driver stops."""


class FairError(RuntimeError):
    """The engines of one game disagree (a public hash, or what a move waits for), or a
    share or an opening failed: a bug or a tampered deal, never a state to go on from."""


@dataclass
class Engine:
    """One seat's engine: its partial source and its state (seat None: a spectator)."""

    seat: int | None
    source: PartialCards
    state: State


class OneProcessDeal:
    """Every seat's side of the deal's cryptography, in one process.

    A pile is dealt (every seat's shuffle pass, deal/whole.py) the first time one of its
    cards must open; each reveal makes the shares the request says are owed, checks every
    one against its seat's deal key as a receiving peer does, and opens the card."""

    def __init__(self, game: bytes, secrets: Sequence[bytes], tamper: Tamper | None = None) -> None:
        self.game = bytes(game)
        self.secrets = tuple(bytes(s) for s in secrets)
        self.tamper = tamper  # a dishonest seat's shuffle (deal/whole.py), for tests
        self.keys: tuple[SeatKeys, ...] = tuple(
            seat_keys(secret, self.game, seat) for seat, secret in enumerate(self.secrets))
        self.dealt: dict[tuple[int, int], Dealt] = {}
        self.shares = 0  # shares made and checked, for figures

    def pile(self, info: PileInfo) -> Dealt:
        key = (info.round_no, info.pile)
        dealt = self.dealt.get(key)
        if dealt is None:
            dealt = deal(Pile(self.game, info.round_no, info.pile, len(info.values)), self.secrets,
                         self.tamper)
            for made in dealt.shuffles:  # the checks every peer makes when a shuffle arrives
                fault = check_shuffle(dealt.pile, made)
                if fault is not None:
                    raise FairError(f"seat {fault.seat}'s shuffle of round {info.round_no}'s pile "
                                    f"{info.pile} is refused: {fault.reason}")
            self.dealt[key] = dealt
        return dealt

    def _share(self, dealt: Dealt, seat: int, place: int) -> bytes:
        ct = dealt.final[place]
        msg = make_share(self.secrets[seat], dealt.pile, seat, place, ct)
        self.shares += 1
        return check_share(dealt.pile, msg, self.keys[seat].deal_key, ct)

    def open(self, info: PileInfo, request: RevealRequest) -> tuple[tuple[bytes, ...], int]:
        """The checked shares of every seat that owes one (all but the peeker), and the
        place the card opens to with them plus, for a peek, the peeker's own share."""
        dealt = self.pile(info)
        place = request.card - info.first
        owed = request.owed_by(len(self.secrets))
        shown = tuple(self._share(dealt, s, place) for s in owed)
        every = shown if request.to is None else shown + (self._share(dealt, request.to, place),)
        j = open_card(dealt.final[place], every, dealt.cards)
        if j is None:
            raise FairError(f"card #{request.card} of round {request.round_no} opens to no card")
        return shown, j

    def serve(self, engines: Sequence[Engine], requests: Sequence[RevealRequest]) -> None:
        """Open every request and tell each engine what its seat may learn of it."""
        for req in requests:
            info = engines[0].source.pile_of(req.round_no, req.card)
            _, j = self.open(info, req)
            for e in engines:
                mine = req.to is None or req.to == e.seat
                e.source.learn(req, j if mine else None)


class Dealer(Protocol):
    """Whatever serves the values engines wait for (the deal in one process, or a test's)."""

    def serve(self, engines: Sequence[Engine], requests: Sequence[RevealRequest]) -> None: ...


def fair_engines(ruleset: Ruleset, players: int, spectator: bool = True) -> list[Engine]:
    """A new game's engines: one per seat, and a spectator's (public knowledge only)."""
    seats: list[int | None] = list(range(players)) + ([None] if spectator else [])
    out = []
    for seat in seats:
        source = PartialCards(ruleset, seat)
        out.append(Engine(seat, source, new_game(ruleset, players, source=source)))
    return out


def step(engines: Sequence[Engine], move: Move, dealer: Dealer) -> int:
    """Apply `move` to every engine, serving the values it waits for; returns the number
    of batches it waited for. FairError when the engines disagree."""
    for batch in range(MAX_BATCHES):
        waits: list[tuple[RevealRequest, ...]] = []
        after: list[State] = []
        for e in engines:
            try:
                after.append(apply(e.state, move))
            except NeedValues as x:
                waits.append(x.requests)
        if not waits:
            for e, s in zip(engines, after):
                e.state = s
            hashes = {state_hash(e.state) for e in engines}
            if len(hashes) != 1:
                raise FairError(f"after {describe_move(move)} the engines' public states differ")
            return batch
        asked = set(waits)
        if len(waits) != len(engines) or len(asked) != 1:
            raise FairError(f"the engines disagree on what {describe_move(move)} waits for: {waits}")
        dealer.serve(engines, asked.pop())
    raise FairError(f"{describe_move(move)} still waits after {MAX_BATCHES} batches")


@dataclass
class FairGame:
    """A fair-deal game's end: every engine, its statistics and how long moves waited."""

    engines: list[Engine]
    stats: GameStats
    waits: dict[int, int] = field(default_factory=dict)  # batches waited -> moves


def play_moves(engines: Sequence[Engine], seats: Sequence[Bot], stats: GameStats, dealer: Dealer,
               after_move: Callable[[Sequence[Engine], Move], None] | None = None) -> dict[int, int]:
    """Play the game out between the seats' bots, each deciding from its own seat's engine,
    every move stepped on every engine with `dealer` serving the values it waits for; the
    number of moves that waited for each number of batches. The one loop of both drivers."""
    waits: dict[int, int] = {}

    def seat_view(seat: int) -> SeatView:
        return view(engines[seat].state, seat)

    while (decision := to_act(engines[0].state)) is not None:
        if stats.moves >= MAX_MOVES:
            raise BotError(f"the game did not end within {MAX_MOVES} moves")
        offered = offered_moves(engines[decision.seat].state, seats, stats, views=seat_view)
        if not offered:
            raise BotError(f"the engine offers no move to {decision}")
        move = seats[decision.seat].choose(seat_view(decision.seat), offered)
        if move not in offered:
            raise BotError(f"bot at seat {decision.seat} chose a move it was not offered: "
                           f"{describe_move(move)} ({decision})")
        before = engines[-1].state
        waited = step(engines, move, dealer)
        waits[waited] = waits.get(waited, 0) + 1
        stats.moves += 1
        _count(stats, before, engines[-1].state)
        if after_move is not None:
            after_move(engines, move)
    return waits


def play_fair_game(
    ruleset: Ruleset, players: int, seed: bytes, bots: Sequence[Bot | str],
    game: bytes, secrets: Sequence[bytes],
    after_move: Callable[[Sequence[Engine], Move], None] | None = None,
    tamper: Tamper | None = None,
) -> FairGame:
    """A whole game under the fair deal: `seed` seeds the bots only (the cards come from
    the seats' `secrets` through the deal), each bot decides from its own seat's engine.
    `after_move(engines, move)` is called after every move (tests check them there)."""
    if len(bots) != players or len(secrets) != players:
        raise ValueError(f"{len(bots)} bots and {len(secrets)} secrets for {players} players")
    seats = make_bots(bots, seed)
    engines = fair_engines(ruleset, players)
    dealer = OneProcessDeal(game, secrets, tamper)
    stats = GameStats(players=players, variant=ruleset.variant)
    result = FairGame(engines, stats)
    result.waits.update(play_moves(engines, seats, stats, dealer, after_move))
    final = engines[-1].state
    stats.totals = tuple(final.totals)
    stats.winners = winners(final)
    stats.turns = tuple(r.turns for r in final.results)
    stats.cleared = tuple(r.cleared for r in final.results)
    return result


# ---------------------------------------------------------------- through the ledger and the log


class DealStopped(FairError):
    """The deal is broken (a fault named on arrival, or a card that opened wrong): the
    game stops there and the seats owe their secrets, so that the verdict names the seat."""


def identity(game: bytes, seat: int) -> SigningKey:
    """A seat's Ed25519 identity in the one-process game (a peer has its own from its profile)."""
    return SigningKey(blake2b(b"allegra-lan/fair-driver/identity" + game + bytes([seat]), digest_size=32).digest())


class LedgerDeal:
    """Every peer's side of the deal through signed events and one ledger per peer.

    Unlike OneProcessDeal, no engine is told anything by the cryptography directly: each
    seat's ledger makes the events its seat owes (`Ledger.mine`), a cheat may rewrite them,
    they are signed (log/envelope.py), appended to one log and decoded from their signed
    bytes by every peer's ledger, which checks them; each engine learns only the answers
    of its own peer's ledger. The ledgers must agree after every event on what is owed
    next and on whether the deal is broken (else FairError)."""

    def __init__(self, game: bytes, secrets: Sequence[bytes], cheat: Cheat | None = None) -> None:
        if len(game) != 16:
            raise ValueError("a game id of the log is 16 bytes")
        self.game = bytes(game)
        self.players = len(secrets)
        self.cheat = cheat
        self.ids = [identity(self.game, s) for s in range(self.players)]
        self.seat_of = {bytes(k.verify_key): s for s, k in enumerate(self.ids)}
        self.ledgers = [Ledger(self.game, self.players, s, secret) for s, secret in enumerate(secrets)]
        self.ledgers.append(Ledger(self.game, self.players))  # the spectator's
        self.log: list[Event] = []
        self.withheld: Owed | None = None

    def run(self) -> None:
        """Write and fold every deal event owed now, until none is or a seat withholds one."""
        while self.withheld is None:
            owed = {str(l.owed()) for l in self.ledgers}
            if len(owed) != 1:
                raise FairError(f"the ledgers disagree on what is owed: {sorted(owed)}")
            o = self.ledgers[0].owed()
            if o is None:
                return
            body = self.ledgers[o.seat].mine()
            if body is None:
                raise FairError(f"seat {o.seat}'s ledger cannot make {o}")
            if self.cheat is not None:
                body = self.cheat(self.ledgers[o.seat], o, body)
                if body is None:
                    self.withheld = o
                    return
            kind, fields = encode(body)
            prev = self.log[-1].id if self.log else NO_PREV
            self.log.append(sign_event(self.ids[o.seat], game=self.game, seq=len(self.log), prev=prev,
                                       kind=kind, body=fields))
            event = decode_event(self.log[-1].signed)
            for l in self.ledgers:
                l.take(self.seat_of[event.author], event.kind, event.body)
            if len({l.broken is None for l in self.ledgers}) != 1:
                raise FairError("the ledgers disagree on whether the deal is broken")

    def serve(self, engines: Sequence[Engine], requests: Sequence[RevealRequest]) -> None:
        """Each peer's ledger is told the batch by its own engine; the events owed are
        written; each engine learns its own ledger's answers."""
        self.run()
        for e, l in zip(engines, self.ledgers):
            l.open_piles(e.source.piles(requests[0].round_no))
            l.need(requests, e.source)
        self.run()
        broken = self.ledgers[0].broken
        if broken is not None or self.withheld is not None:
            raise DealStopped(f"the deal stopped: {broken or self.withheld}")
        for l in self.ledgers:  # a copy only the peeker can see: its peer cannot go on
            if l.private_broken:
                raise DealStopped(f"the deal stopped at seat {l.seat}: {l.private_broken[0]}")
        for e, l in zip(engines, self.ledgers):
            try:
                for request, place in l.answers():
                    e.source.learn(request, place)
            except ValueConflict as x:  # a copy only this peer could see (its own peek's place)
                raise DealStopped(f"the deal stopped at seat {e.seat}: {x}") from None

    def finish(self) -> None:
        """The game is over (or stopped): every seat owes its secret; write them."""
        for l in self.ledgers:
            l.end()
        self.run()


@dataclass
class LedgerGame:
    """A game played through the ledger: its engines, its deal (log, ledgers), and where it
    stopped (None: it ended)."""

    engines: list[Engine]
    deal: LedgerDeal
    stats: GameStats
    stopped: str | None = None


def play_ledger_game(
    ruleset: Ruleset, players: int, seed: bytes, bots: Sequence[Bot | str],
    game: bytes, secrets: Sequence[bytes], cheat: Cheat | None = None,
    after_move: Callable[[Sequence[Engine], Move], None] | None = None,
) -> LedgerGame:
    """A whole fair-deal game whose values come only from each peer's ledger folding the
    signed deal events; at its end (or where a broken deal stops it) every seat owes its
    secret, and `result.deal.ledgers[s].verdict()` is peer s's game-end verification."""
    if len(bots) != players or len(secrets) != players:
        raise ValueError(f"{len(bots)} bots and {len(secrets)} secrets for {players} players")
    seats = make_bots(bots, seed)
    engines = fair_engines(ruleset, players)
    deal_ = LedgerDeal(game, secrets, cheat)
    stats = GameStats(players=players, variant=ruleset.variant)
    result = LedgerGame(engines, deal_, stats)
    deal_.run()  # the keys and the escrow, before the first move
    try:
        play_moves(engines, seats, stats, deal_, after_move)
    except DealStopped as x:
        result.stopped = str(x)
    deal_.finish()
    final = engines[-1].state
    stats.totals = tuple(final.totals)
    stats.winners = winners(final)
    return result


__all__ = ["Dealer", "DealStopped", "Engine", "FairError", "FairGame", "LedgerDeal", "LedgerGame",
           "OneProcessDeal", "fair_engines", "identity", "play_fair_game", "play_ledger_game", "play_moves", "step"]
