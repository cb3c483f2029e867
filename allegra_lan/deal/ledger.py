"""The deal ledger: a pure fold of a fair-deal game's deal events, one per peer.

Why a fold: every peer of a network game must agree, at every seq of the log, on who owes
the next deal event, on whether the deal is still sound, and on what the engine may learn;
so all of it is a function of the events in log order (each taken as (author seat, kind,
body)) and of the engine's requests, which are themselves a function of the public log.
Nothing here touches a socket, a file or the clock; the table puts the events at their
seqs and the peer signs what `mine()` makes.

What is owed, in this order (`owed()` names one event at a time, so every seq has one
author, and every peer computes the same author from the same log):

1. `deal_keys` of every seat, seat 0 first (the game's start);
2. `deal_escrow` of every seat, seat 0 first (it seals to the others' box keys, so it
   comes after all of them);
3. then the work the engine raised, in the order it raised it: a pile's shuffle passes
   (`open_piles`, or the first request for one of its cards), seat 0 first, each in
   parts of MAX_PASS_CARDS; a batch of requests (`need`, from one NeedValues): one
   `deal_shares` event per owing seat, in seat order, carrying all its shares of the batch
   in request order (in parts of MAX_PART_SHARES for a batch that big);
4. once the game is over (`end()`) or the deal is broken: `deal_secret` of every seat,
   seat 0 first.

Why one seat at a time even for shares, which need no order: a log seq has one author, and
letting every owing seat write "the next seq" would fork it. Seat order costs a batch one
hop per seat on a home network (a few ms each), which is far below the 2 s budget, and
keeps the table's rule "the seat `owed()` names writes the next seq" as simple as the
rule for moves.

What is refused (LedgerError, one line: the table must not take the event): an event that
is not owed (wrong author, kind, pile, part or batch), a body that fails its schema, shares
of other cards than the owed ones. What is taken and judged (a Fault of its author, in
`faults`, the same on every peer): a seat's keys that fail their checks, an escrow of the
wrong size, a shuffle that fails `check_shuffle`, a share that fails `check_share`, a
secret that misses its commitment. A card that opens to no card point or to a place of its
pile already opened publicly (a copy: `ValueConflict`) is provable too, but not whose it
is: `broken` says so, and the game-end verification (`verdict()`) names the seat. Any of
these stops the deal: no more work is owed, only the secrets.

A ledger holds its own seat's secret (`Ledger(..., seat=s, secret=...)`) to make its own
events and to add its own share to a peek; a spectator's ledger (`seat=None`) never holds
one. What only this ledger can see is kept apart, so public state stays equal: its escrow
piece that does not open (`private_faults`, the dealer named), a card it peeked that opens
to no card or to a place another card opened (`private_broken`: its peer cannot go on).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence

from allegra_lan.rules.cards import PileInfo, RevealRequest

from .cards import CardPoints, Pile
from .derive import check_secret, commitment
from .escrow import EscrowShare, check_release, combine, make_escrow, open_escrow
from .events import (
    ESCROW, KEYS, MAX_PART_SHARES, MAX_PASS_CARDS, SECRET, SHARES, SHUFFLE, Body, EscrowBody,
    EventBodyError, KeysBody, SecretBody, SharesBody, ShuffleBody, decode, escrow_body,
)
from .group import DealError
from .keys import SeatKeys, check_seat_keys, joint_key, seat_keys
from .passes import ShufflePass, check_shuffle, initial, shuffle_pass
from .reveal import Share, check_share, make_share, open_card
from .seal import box_keypair, seal

_PROBE = bytes(range(32))
"""A public sealer's secret, only to try a box key on arrival."""
from .verdict import Fault
from .verify import PileRecord, SeatRecord, check_secrets, verify_escrow, verify_pile


class LedgerError(ValueError):
    """An event the ledger refuses (not owed, or not of its schema); one line."""


class PileSource(Protocol):
    """Where a card id lies (rules/cards.py PartialCards)."""

    def pile_of(self, round_no: int, card: int) -> PileInfo: ...


@dataclass(frozen=True)
class Owed:
    """The one deal event owed next: its author `seat`, its `kind`, and where it goes."""

    seat: int
    kind: str
    round_no: int | None = None
    pile: int | None = None
    batch: int | None = None
    part: int = 0

    def __str__(self) -> str:
        where = {SHUFFLE: f" of round {self.round_no}'s pile {self.pile}, part {self.part}",
                 SHARES: f" of batch {self.batch}, part {self.part}"}.get(self.kind, "")
        return f"seat {self.seat}'s {self.kind}{where}"


def _parts(n: int, size: int) -> int:
    return (n + size - 1) // size


@dataclass
class _Pile:
    info: PileInfo
    pile: Pile
    cards: CardPoints | None = None
    got: dict[int, list[bytes]] = field(default_factory=dict)  # seat -> cards so far
    passes: list[ShufflePass] = field(default_factory=list)
    shares: list[Share] = field(default_factory=list)
    opened: dict[int, int] = field(default_factory=dict)  # place -> card, public openings
    peeked: dict[int, int] = field(default_factory=dict)  # place -> card, this peer's own peeks

    @property
    def done(self) -> bool:
        return len(self.passes) == self.seats

    seats: int = 0

    @property
    def final(self) -> tuple[bytes, ...]:
        return self.passes[-1].cards

    def points(self) -> CardPoints:
        if self.cards is None:
            self.cards = CardPoints.of(self.pile)
        return self.cards


@dataclass
class _Batch:
    number: int
    requests: tuple[RevealRequest, ...]
    where: tuple[tuple[tuple[int, int], int], ...]  # per request: (pile key, place)
    owing: dict[int, tuple[int, ...]]  # seat -> indexes of the requests it owes
    got: dict[int, list[bytes]] = field(default_factory=dict)  # seat -> its checked D, in order
    parts: dict[int, int] = field(default_factory=dict)

    def owed_part(self, seat: int) -> int | None:
        need = _parts(len(self.owing[seat]), MAX_PART_SHARES)
        have = self.parts.get(seat, 0)
        return have if have < need else None


class Ledger:
    """One peer's fold of the deal events (module docstring). `seat` None: a spectator."""

    def __init__(self, game: bytes, players: int, seat: int | None = None, secret: bytes | None = None) -> None:
        if not isinstance(game, bytes) or not 1 <= len(game) <= 64:
            raise ValueError("a game id is not 1 to 64 bytes")
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 16:
            raise ValueError("a fair deal needs 2 to 16 seats")
        if seat is None:
            if secret is not None:
                raise ValueError("a spectator's ledger holds no secret")
        elif isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
            raise ValueError(f"seat {seat!r} is not a seat of {players}")
        self.game = game
        self.players = players
        self.seat = seat
        self.secret = None if secret is None else check_secret(secret)
        self.keys: list[SeatKeys | None] = [None] * players
        self.joint: bytes | None = None
        self.escrow: dict[int, tuple[EscrowShare, ...]] = {}
        self.held: dict[int, bytes] = {}  # dealer -> the piece this seat holds
        self.secrets: dict[int, bytes] = {}
        self.piles: dict[tuple[int, int], _Pile] = {}
        self.batches: list[_Batch] = []
        self._work: list[tuple[str, Any]] = []  # ("pile", key) or ("batch", number), in order
        self._answers: list[tuple[RevealRequest, int | None]] = []
        self._own_pass: dict[tuple[int, int, int], tuple[bytes, ...]] = {}  # (seat, round, pile)
        self.adopted: dict[int, bytes] = {}
        """Secrets released by a takeover (`adopt`): public from then on, so every ledger
        makes those seats' events as it makes its own (the takeover's author writes them)."""
        self.faults: list[Fault] = []
        self.private_faults: list[Fault] = []
        self.private_broken: list[str] = []
        """What breaks the deal for this peer alone (its own peek opens to no card, or to a
        place another card opened): it cannot go on, and no answer is given for that card;
        whose shuffle it was is named at game end."""
        self.broken: str | None = None
        self.ended = False

    # ------------------------------------------------------------------ what is owed

    def owed(self) -> Owed | None:
        """The next deal event and its author, or None when the deal owes nothing now."""
        for s in range(self.players):
            if self.keys[s] is None:
                return Owed(s, KEYS)
        if self.broken is not None or self.ended:
            for s in range(self.players):
                if s not in self.secrets:
                    return Owed(s, SECRET)
            return None
        for s in range(self.players):
            if s not in self.escrow:
                return Owed(s, ESCROW)
        while self._work:
            what, key = self._work[0]
            if what == "pile":
                p = self.piles[key]
                if not p.done:
                    s = len(p.passes)
                    return Owed(s, SHUFFLE, key[0], key[1], part=len(p.got.get(s, ())) // MAX_PASS_CARDS)
            else:
                b = self.batches[key]
                for s in sorted(b.owing):
                    part = b.owed_part(s)
                    if part is not None:
                        return Owed(s, SHARES, batch=b.number, part=part)
            self._work.pop(0)
        return None

    @property
    def dealing(self) -> bool:
        """True while the game waits for the deal (the client shows "dealing...")."""
        return self.owed() is not None

    # ------------------------------------------------------------------ what the engine raised

    def open_piles(self, piles: Sequence[PileInfo]) -> None:
        """Owe the shuffles of every pile not seen before (a round's deck, a reshuffle's
        pile the moment the engine made it: PartialCards.piles(round))."""
        for info in piles:
            self._pile(info)

    def _pile(self, info: PileInfo) -> _Pile:
        key = (info.round_no, info.pile)
        p = self.piles.get(key)
        if p is None:
            if self.broken is not None or self.ended:
                raise LedgerError("the deal is over: no pile is dealt now")
            p = _Pile(info, Pile(self.game, info.round_no, info.pile, len(info.values)), seats=self.players)
            self.piles[key] = p
            self._work.append(("pile", key))
        elif p.info != info:
            raise LedgerError(f"round {info.round_no}'s pile {info.pile} was made twice differently")
        return p

    def need(self, requests: Sequence[RevealRequest], source: PileSource) -> int:
        """A batch: the requests of one NeedValues, whose cards lie where `source` (the
        engine's PartialCards) says. Owes their piles' shuffles if not yet dealt, then the
        shares of every seat in their `owed_by`. The batch's number, also when the same
        requests are still pending (a move applied again before its shares are in)."""
        requests = tuple(requests)
        if not requests:
            raise LedgerError("an empty batch")
        if self.batches and self.batches[-1].requests == requests and not self._complete(self.batches[-1]):
            return self.batches[-1].number
        if self.broken is not None or self.ended:
            raise LedgerError("the deal is over: no card opens now")
        where = []
        for r in requests:
            info = source.pile_of(r.round_no, r.card)
            self._pile(info)
            where.append(((info.round_no, info.pile), r.card - info.first))
        owing: dict[int, list[int]] = {}
        for i, r in enumerate(requests):
            for s in r.owed_by(self.players):
                owing.setdefault(s, []).append(i)
        b = _Batch(len(self.batches), requests, tuple(where), {s: tuple(v) for s, v in owing.items()})
        self.batches.append(b)
        self._work.append(("batch", b.number))
        return b.number

    def end(self) -> None:
        """The game is over: every seat owes its secret."""
        self.ended = True

    def answers(self) -> list[tuple[RevealRequest, int | None]]:
        """The `PartialCards.learn(request, place)` calls this peer's engine must make
        now (taken out: each is given once), in request order."""
        out, self._answers = self._answers, []
        return out

    # ------------------------------------------------------------------ taking an event

    def take(self, author: int, kind: str, body: Any) -> None:
        """Fold one event of the log (its author's seat, its kind, its raw body)."""
        if type(author) is not int:
            raise LedgerError("an event's author is not a seat number")
        o = self.owed()
        if o is None:
            raise LedgerError(f"a {str(kind)[:32]} event when no deal event is owed")
        if author != o.seat or kind != o.kind:
            raise LedgerError(f"a {str(kind)[:32]} event of seat {author} when {o} is owed")
        try:
            b = decode(kind, body)
        except EventBodyError as e:
            raise LedgerError(str(e)) from None
        if isinstance(b, KeysBody):
            self._take_keys(author, b)
        elif isinstance(b, EscrowBody):
            self._take_escrow(author, b)
        elif isinstance(b, ShuffleBody):
            if (b.round_no, b.pile, b.part) != (o.round_no, o.pile, o.part):
                raise LedgerError(f"a shuffle of round {b.round_no}'s pile {b.pile}, part {b.part}, when {o} is owed")
            self._take_shuffle(author, b)
        elif isinstance(b, SharesBody):
            if (b.batch, b.part) != (o.batch, o.part):
                raise LedgerError(f"shares of batch {b.batch}, part {b.part}, when {o} is owed")
            self._take_shares(author, b)
        elif isinstance(b, SecretBody):
            self._take_secret(author, b)

    def _fault(self, fault: Fault) -> None:
        self.faults.append(fault)
        if self.broken is None:
            self.broken = str(fault)
        self._answers = []

    def _take_keys(self, author: int, b: KeysBody) -> None:
        keys = SeatKeys(author, b.commitment, b.box_key, b.deal_key, b.key_proof)
        self.keys[author] = keys
        fault = check_seat_keys(self.game, keys)
        if fault is None:
            try:  # a box key every seat can seal its escrow to (libsodium refuses low-order keys)
                seal(_PROBE, (b"probe",), keys.box_key, bytes(32))
            except DealError:
                fault = Fault(author, "key", None, "its box key is not a usable X25519 key")
        if fault is not None:
            self._fault(fault)
        if author == self.seat and self.secret is not None and seat_keys(self.secret, self.game, author) != keys:
            self.private_faults.append(Fault(author, "key", None, "this peer's secret does not make its seat's keys"))
            self.secret = None
        if all(k is not None for k in self.keys) and self.broken is None:
            try:
                self.joint = joint_key([k.deal_key for k in self.keys])  # type: ignore[union-attr]
            except DealError:
                self._fault(Fault(self.players - 1, "key", None, "the seats' deal keys add up to the identity"))

    def _holders(self, dealer: int) -> list[int]:
        return [h for h in range(self.players) if h != dealer]

    def _take_escrow(self, author: int, b: EscrowBody) -> None:
        holders = self._holders(author)
        self.escrow[author] = tuple(EscrowShare(author, h, c, s) for h, (c, s) in zip(holders, b.pieces))
        if len(b.pieces) != len(holders):
            self._fault(Fault(author, "escrow", None, f"its escrow has {len(b.pieces)} pieces, not one per other seat"))
            return
        if self.seat is not None and self.seat != author and self.secret is not None:
            item = self.escrow[author][holders.index(self.seat)]
            try:
                self.held[author] = open_escrow(self.game, item, *box_keypair(self.secret, self.game))
            except DealError as e:
                self.private_faults.append(Fault(author, "escrow", None, str(e)))

    def _take_shuffle(self, author: int, b: ShuffleBody) -> None:
        p = self.piles[(b.round_no, b.pile)]
        got = p.got.setdefault(author, [])
        got.extend(b.cards)
        if len(got) < p.pile.size and len(b.cards) == MAX_PASS_CARDS:
            return  # more parts to come
        msg = ShufflePass(author, tuple(got))
        p.passes.append(msg)
        fault = check_shuffle(p.pile, msg)
        if fault is not None:
            self._fault(fault)

    def _take_shares(self, author: int, b: SharesBody) -> None:
        batch = self.batches[b.batch]
        mine = batch.owing[author]
        lo = b.part * MAX_PART_SHARES
        owed = mine[lo:lo + MAX_PART_SHARES]
        cards = [batch.requests[i].card for i in owed]
        if [c for c, _, _ in b.shares] != cards:
            raise LedgerError(f"seat {author}'s shares of batch {b.batch} are not of the cards it owes")
        keys = self.keys[author]
        assert keys is not None
        got = batch.got.setdefault(author, [])
        for i, (card, point, proof) in zip(owed, b.shares):
            key, place = batch.where[i]
            p = self.piles[key]
            share = Share(author, place, point, proof)
            try:
                got.append(check_share(p.pile, share, keys.deal_key, p.final[place]))
            except DealError as e:
                self._fault(Fault(author, "share", place, f"round {key[0]}'s pile {key[1]}: {e}"))
                return
            p.shares.append(share)
        batch.parts[author] = batch.parts.get(author, 0) + 1
        if self._complete(batch):
            self._open(batch)

    def _complete(self, batch: _Batch) -> bool:
        return all(batch.owed_part(s) is None for s in batch.owing)

    def _open(self, batch: _Batch) -> None:
        """Every owed share of the batch is in: open the cards this peer may open."""
        answers: list[tuple[RevealRequest, int | None]] = []
        for i, r in enumerate(batch.requests):
            key, place = batch.where[i]
            p = self.piles[key]
            shares = [batch.got[s][batch.owing[s].index(i)] for s in r.owed_by(self.players)]
            if r.to is None:
                j = open_card(p.final[place], shares, p.points())
                if j is None:
                    self._broken(f"card #{r.card} of round {r.round_no} opens to no card of its pile: "
                                 "a shuffle was tampered with")
                    return
                twin = p.opened.setdefault(j, r.card)
                if twin != r.card:
                    self._broken(f"card #{r.card} of round {r.round_no} opens to the place card #{twin} "
                                 "opened to: the deal holds a copied card")
                    return
                if p.peeked.get(j, r.card) != r.card:  # a copy only this peer can see: its own peek's place
                    self.private_broken.append(f"card #{r.card} of round {r.round_no} opens to the place "
                                               f"of card #{p.peeked[j]}, which this seat peeked")
                    continue
                answers.append((r, j))
            elif r.to != self.seat:
                answers.append((r, None))
            elif self.secret is None:
                self.private_broken.append(f"card #{r.card} of round {r.round_no} is this seat's peek, and "
                                           "this peer holds no secret to add its own share")
            else:
                own = make_share(self.secret, p.pile, r.to, place, p.final[place])
                k = open_card(p.final[place], shares + [own.point], p.points())
                other = p.opened.get(k, p.peeked.get(k, r.card)) if k is not None else None
                if k is None or other != r.card:
                    why = "to no card" if k is None else f"to the place of card #{other}"
                    self.private_broken.append(f"card #{r.card} of round {r.round_no}, peeked, opens {why}")
                else:
                    p.peeked[k] = r.card
                    answers.append((r, k))
        self._answers.extend(answers)

    def _broken(self, reason: str) -> None:
        if self.broken is None:
            self.broken = reason
        self._answers = []

    def _take_secret(self, author: int, b: SecretBody) -> None:
        self.secrets[author] = b.secret
        keys = self.keys[author]
        if keys is not None and commitment(self.game, author, b.secret) != keys.commitment:
            self.faults.append(Fault(author, "secret", None, "its published secret misses its commitment"))

    # ------------------------------------------------------------------ this seat's events

    def secret_of(self, seat: int) -> bytes | None:
        """The secret this ledger holds for `seat`: its own, or one a takeover released."""
        if seat == self.seat and self.secret is not None:
            return self.secret
        return self.adopted.get(seat)

    def mine(self) -> Body | None:
        """The body of the event owed now if this ledger holds its seat's secret (its own
        seat's, or a released one), else None. Deterministic from the secret and the log."""
        o = self.owed()
        secret = None if o is None else self.secret_of(o.seat)
        if o is None or secret is None:
            return None
        seat = o.seat
        if o.kind == KEYS:
            k = seat_keys(secret, self.game, seat)
            return KeysBody(k.commitment, k.box_key, k.deal_key, k.key_proof)
        if o.kind == ESCROW:
            boxes = {h: self.keys[h].box_key for h in self._holders(seat)}  # type: ignore[union-attr]
            return escrow_body(make_escrow(secret, self.game, seat, boxes))
        if o.kind == SHUFFLE:
            assert o.round_no is not None and o.pile is not None and self.joint is not None
            p = self.piles[(o.round_no, o.pile)]
            made = self._own_pass.get((seat, o.round_no, o.pile))
            if made is None:
                inputs = initial(p.points(), self.joint) if seat == 0 else p.passes[seat - 1].cards
                made = shuffle_pass(secret, p.pile, seat, self.joint, inputs).cards
                self._own_pass[(seat, o.round_no, o.pile)] = made
            lo = o.part * MAX_PASS_CARDS
            return ShuffleBody(o.round_no, o.pile, o.part, made[lo:lo + MAX_PASS_CARDS])
        if o.kind == SHARES:
            assert o.batch is not None
            b = self.batches[o.batch]
            lo = o.part * MAX_PART_SHARES
            out = []
            for i in b.owing[seat][lo:lo + MAX_PART_SHARES]:
                key, place = b.where[i]
                p = self.piles[key]
                sh = make_share(secret, p.pile, seat, place, p.final[place])
                out.append((b.requests[i].card, sh.point, sh.proof))
            return SharesBody(o.batch, o.part, tuple(out))
        return SecretBody(secret)

    # ------------------------------------------------------------------ a takeover's release

    def release(self, dealer: int, pieces: Mapping[int, object]) -> bytes | Fault:
        """Seat `dealer`'s secret from the escrow pieces every other seat handed in for its
        takeover (holder -> piece, as `held[dealer]` of each holder's ledger), or the Fault
        of the first holder whose piece misses its commitment (or is missing), or of the
        dealer when the pieces combine to a secret that misses its commitment. Pure: the
        table decides when the consent is unanimous; every peer computes the same answer."""
        items = self.escrow.get(dealer)
        if items is None:
            return Fault(dealer, "escrow", None, "published no escrow")
        for item in items:
            if item.holder not in pieces:
                return Fault(item.holder, "escrow", None, f"handed in no escrow share for seat {dealer}")
            fault = check_release(self.game, item, pieces[item.holder])
            if fault is not None:
                return fault
        keys = self.keys[dealer]
        assert keys is not None
        return combine(self.game, dealer, [pieces[i.holder] for i in items], keys.commitment)  # type: ignore[misc]

    def release_pieces(self, dealer: int, handed: Mapping[int, bytes]) -> dict[int, bytes]:
        """Every holder's piece of `dealer`'s escrow for its release: those `handed` in by
        the seats that stay, and those of holders whose own secret a takeover released
        before (their sealed piece opens with the released secret's box key: anyone can)."""
        pieces = dict(handed)
        for item in self.escrow.get(dealer, ()):
            secret = self.adopted.get(item.holder)
            if item.holder not in pieces and secret is not None:
                try:
                    pieces[item.holder] = open_escrow(self.game, item, *box_keypair(secret, self.game))
                except DealError:
                    pass  # a piece that does not open: release() names the dealer's fault
        return pieces

    def adopt(self, seat: int, secret: bytes) -> None:
        """Hold seat `seat`'s released secret (checked by `release`) from now on."""
        if not 0 <= seat < self.players:
            raise LedgerError(f"there is no seat {seat}")
        self.adopted[seat] = check_secret(secret)

    # ------------------------------------------------------------------ game end

    def verdict(self) -> tuple[Fault, ...]:
        """Every fault of the game: those found on arrival, then the game-end verification
        from the published secrets (verify.py): a seat whose keys never came, a withheld
        secret (named, the game unverified), every pass and share its secret does not make,
        every escrow it does not make. Empty: the deal is verified."""
        out: list[Fault] = list(self.faults)
        if any(k is None for k in self.keys):
            out += [Fault(s, "key", None, "never published its keys") for s, k in enumerate(self.keys) if k is None]
            return tuple(dict.fromkeys(out))
        seats = [SeatRecord(k, self.secrets.get(s)) for s, k in enumerate(self.keys)]  # type: ignore[arg-type]
        # Secrets are owed in seat order, so only the first seat without one withheld it; the
        # seats after it were never asked (their steps are unchecked: `verified` is False).
        first = min((s for s in range(self.players) if s not in self.secrets), default=None)
        out += [f for f in check_secrets(self.game, seats)
                if not (f.step == "secret" and f.seat != first and f.seat not in self.secrets)]
        for p in self.piles.values():
            if p.done:
                out += verify_pile(PileRecord(p.pile, tuple(p.passes), tuple(p.shares)), seats,
                                   proofs_checked=True)  # the ledger took each share only checked
        out += verify_escrow(self.game, seats, self.escrow)
        return tuple(dict.fromkeys(out))

    @property
    def verified(self) -> bool:
        """Every secret is in and the verification found nothing."""
        return len(self.secrets) == self.players and not self.verdict()


__all__ = ["Ledger", "LedgerError", "Owed", "PileSource"]
