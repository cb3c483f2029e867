"""A game as the fold of its event log: who may write next, and accept-or-refuse.

`Table.append(signed_bytes)` takes the next event or raises `Refused` with the
reason every honest peer gives for it (bad signature, wrong author, wrong
prev or seq, illegal move, fork ...). A refused event changes nothing. The
net layer, the replay tools and local games all go through here, so they all
judge a log the same way.

Every body is checked against its kind's schema (log/bodies.py) before any
reader looks inside it, so whatever bytes a validly signed event carries,
`append` returns or raises `Refused`: nothing else (issue 9, finding 2).

A log whose genesis carries `started` (issue 13) also holds, after each round's
last move, every seat's signed `result` of that round (log/results.py): the
table knows what each must say (`owed`), takes only the very result its own
engine computed, and refuses any other as a `Disagreement`, the proof that the
signer's engine (or its honesty) parts from ours. An older log has no results
and folds exactly as it always did.

A log whose genesis names the fair deal (`"deal": "fair"`, docs/fairdeal.md) holds the
deal's events too (deal/events.py): the table folds them through a `Ledger` (deal/ledger.py)
and its engine works on a `PartialCards`, so it knows only what the log showed everyone,
and, when the table holds a seat's secret (`Table(me=seat, secret=...)`, a peer's table),
what that seat alone may see. A deal event is an owed event like a result: the ledger
names its author (`next_author`, `owed`), and that seat's peer writes it at once. A move
that shows a card is taken when it arrives (it is legal: the rules check it first) but
is *pending* until the shares open its cards; meanwhile the next events are the shares
(`Stage.DEAL`), and the state moves on at the event that completes them, on every peer at
the same seq.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Iterable

import msgpack

from .deal.ledger import Ledger, LedgerError
from .log.bodies import MOVE_BODIES, SETUP_WORDS, check_body
from .log.ceremony import (
    Genesis, SetupError, commitment, derive_seed, read_commit, read_genesis, read_reveal,
)
from .log.envelope import MAX_SEQ, NO_PREV, Event, EventError, decode_event, event_id
from .log.knock import KnockError, check_knock
from .log.results import CLOCK_SKEW, RESULT, Owed, RoundClaim
from .log.schema import SchemaError
from .log.takeover import ConsentError, check_consent, read_seats
from .names import name_of as seat_name
from .rules import (
    Give, IllegalMove, MoveError, RulesetError, State, apply, describe_move, legal_moves, move_from_dict,
    move_name, move_to_dict, new_game, ruleset_from_dict, state_hash, to_act,
)
from .rules.cards import NeedValues, PartialCards, ValueConflict
from .rules.moves import Move
from .deal.events import encode as encode_deal_body

SETUP_KINDS = ("genesis", "accept", "commit", "reveal")
TAKEOVER = "takeover"  # remaining seats hand missing seats to bots (log/takeover.py)


class Stage(StrEnum):
    """Where a table's log stands (`Table.stage()`): the genesis, the three rounds of the seed
    ceremony, the play, the end. A StrEnum, so a member is the word it always was: a setup
    stage equals the kind of the event it waits for ("accept", "commit", "reveal"), and
    messages that name it ("did not send its commit") read as before."""

    GENESIS = "genesis"
    ACCEPT = "accept"
    COMMIT = "commit"
    REVEAL = "reveal"
    PLAY = "play"
    RESULT = "result"  # every seat signs the round that just ended (log/results.py)
    DEAL = "dealing"  # the fair deal owes an event: keys, escrow, a shuffle, shares, a secret
    OVER = "over"


CEREMONY_STAGES = (Stage.ACCEPT, Stage.COMMIT, Stage.REVEAL)
"""The ceremony's stages after the genesis: each seat in turn writes the event of that kind."""


class Refused(ValueError):
    """An event the table does not take: `seq` (where known) and a one-line `reason`."""

    def __init__(self, seq: int | None, reason: str, *, fault: str = "refused") -> None:
        self.seq = seq
        self.reason = reason
        self.fault = fault
        super().__init__(f"seq {seq}: {reason}" if seq is not None else reason)


class Disagreement(Refused):
    """A signed result, by the seat that owes it, that is not the one our engine computed:
    the signer's engine (or its honesty) parts from ours. The signed `event` is the proof
    anyone holding the log before it can recheck; `ours` and `theirs` are the two state
    hashes (hex). The game cannot go on: the seat's result is owed and it signed another."""

    def __init__(self, event: Event, seat: int, reason: str, ours: str, theirs: str) -> None:
        super().__init__(event.seq, reason, fault="result")
        self.event = event
        self.seat = seat
        self.ours = ours
        self.theirs = theirs


class Fork(Refused):
    """Two different events signed by one author for one seq: both kept as the proof."""

    def __init__(self, first: Event, second: Event) -> None:
        super().__init__(first.seq, f"fork: two different events by one author at seq {first.seq}",
                         fault="fork")
        self.first = first
        self.second = second


@dataclass
class Table:
    """The fold of one game's log."""

    events: list[Event] = field(default_factory=list)
    genesis: Genesis | None = None
    commits: list[bytes] = field(default_factory=list)
    nonces: list[bytes] = field(default_factory=list)
    seed: bytes | None = None
    state: State | None = None
    keys: list[bytes] = field(default_factory=list)  # each seat's key now (a takeover changes it)
    played_by: list[int] = field(default_factory=list)  # the seat whose player writes for each seat
    # Signed results (logs whose genesis has `started`): the round whose results are being
    # signed now and the events taken for it, and every round's results once all are in.
    claim: RoundClaim | None = None
    signing: list[Event] = field(default_factory=list)
    results: list[tuple[Event, ...]] = field(default_factory=list)
    # The fair deal (a genesis with "deal": "fair"): the seat whose secret this table holds
    # (None: it sees what a spectator sees), the ledger of the deal's events, the move that
    # was taken but waits for its cards' shares, and why this peer cannot go on when the
    # deal broke in a way only it can see (its own peek opened wrong).
    me: int | None = None
    secret: bytes | None = field(default=None, repr=False)
    ledger: Ledger | None = None
    pending: Move | None = None
    stuck: str | None = None
    _ids: set[bytes] = field(default_factory=set, repr=False)  # ids of the events held
    _owed: tuple[int, Owed | None] | None = field(default=None, repr=False)  # (seq, owed) made once

    # ------------------------------------------------------------ reading

    @property
    def seq(self) -> int:
        """The seq the next event must have."""
        return len(self.events)

    @property
    def head(self) -> bytes:
        """The id of the last event (what the next one's prev must be)."""
        return self.events[-1].id if self.events else NO_PREV

    @property
    def game(self) -> bytes | None:
        return self.events[0].game if self.events else None

    @property
    def players(self) -> int:
        return len(self.genesis.seats) if self.genesis else 0

    def stage(self) -> Stage:
        """genesis, accept, commit, reveal, play or over."""
        if self.genesis is None:
            return Stage.GENESIS
        n = self.players
        if self.seq <= n:
            return Stage.ACCEPT
        if self.seq <= 2 * n:
            return Stage.COMMIT
        if self.seq <= 3 * n:
            return Stage.REVEAL
        assert self.state is not None
        if self.claim is not None:
            return Stage.RESULT
        if self.ledger is not None:
            if self.stuck is not None:
                return Stage.OVER
            if self.ledger.owed() is not None:
                return Stage.DEAL
            if self.ledger.broken is not None:
                return Stage.OVER  # the deal broke: the game stops, every secret is in
        return Stage.OVER if to_act(self.state) is None else Stage.PLAY

    @property
    def over(self) -> bool:
        """The log reaches the game's end: every round played (and, in a log with signed
        results, every seat's result of the last round taken)."""
        return self.genesis is not None and self.stage() is Stage.OVER

    @property
    def fair(self) -> bool:
        """Whether this game uses the fair deal (its genesis says so)."""
        return self.genesis is not None and self.genesis.fair

    @property
    def stopped(self) -> str | None:
        """Why a fair-deal game stopped before its end: the deal broke (named in `ledger`:
        a fault on arrival, or a card that opened wrong), or it broke for this peer alone
        (`stuck`). None while it plays and after a normal end."""
        if self.ledger is None:
            return None
        return self.stuck or self.ledger.broken

    @property
    def dealing(self) -> bool:
        """Whether the log now waits for the deal (the client says "dealing...")."""
        return self.genesis is not None and self.state is not None and self.stage() is Stage.DEAL

    @property
    def signs_results(self) -> bool:
        """Whether this log is of the version with signed results (its genesis has `started`)."""
        return self.genesis is not None and self.genesis.started is not None

    def next_author(self) -> int | None:
        """The seat that must write the next event (None before the genesis and at the end)."""
        st = self.stage()
        if st is Stage.GENESIS or st is Stage.OVER:
            return None if st is Stage.OVER else 0
        n = self.players
        if st in CEREMONY_STAGES:
            return (self.seq - 1) % n
        if st is Stage.RESULT:
            return len(self.signing)
        if st is Stage.DEAL:
            o = self.ledger.owed()  # type: ignore[union-attr]
            assert o is not None
            return o.seat
        d = to_act(self.state)  # type: ignore[arg-type]
        return None if d is None else d.seat

    def owed(self) -> Owed | None:
        """The event the log needs next if it is one a seat *owes*: one its peer writes at
        once, itself, without asking the seat's player or bot (a round's result, a fair-deal
        event). None when the next event is a decision or setup, and for a deal event this
        table cannot make (another seat's: only the seat's secret makes it)."""
        if self.genesis is None:
            return None
        if self.claim is not None and self.genesis.started is not None:
            return Owed(len(self.signing), RESULT, self.claim.body(), self.genesis.started)
        if self.ledger is None or self.stage() is not Stage.DEAL:
            return None
        if self._owed is None or self._owed[0] != self.seq:  # shares cost scalar products: once per seq
            body = self.ledger.mine()
            made = None
            if body is not None:
                o = self.ledger.owed()
                assert o is not None
                kind, fields = encode_deal_body(body)
                made = Owed(o.seat, kind, fields, timed=False)
            self._owed = (self.seq, made)
        return self._owed[1]

    def times(self) -> tuple[int | None, int | None]:
        """(started, ended) in ms since the epoch: the genesis's start, and the latest clock of
        the last round's results once the game is over (None where the log has none)."""
        started = self.genesis.started if self.genesis is not None else None
        ended = None
        if self.over and self.results:
            ended = max(ev.body["at"] for ev in self.results[-1])
        return started, ended

    def holds(self, event_id: bytes) -> bool:
        """Whether the log holds the event with this id."""
        return event_id in self._ids

    def seat_of(self, key: bytes) -> int | None:
        """The seat `key` writes for now (or wrote for, before a takeover gave it a new key)."""
        if self.genesis is None:
            return None
        for keys in (self.keys, [s.key for s in self.genesis.seats]):
            if key in keys:
                return keys.index(key)
        return None

    def name_of(self, key: bytes) -> str:
        """The name of the seat `key` writes for, as every screen names it (names.name_of);
        `?` for a key that holds no seat."""
        seat = self.seat_of(key)
        if seat is None or self.genesis is None:
            return "?"
        return seat_name([s.name for s in self.genesis.seats], seat)

    def state_hash(self) -> str:
        """The engine's state hash once the game is seeded, else '-'."""
        return state_hash(self.state) if self.state is not None else "-"

    # ------------------------------------------------------------ appending

    def append(self, signed: bytes) -> Event | None:
        """Take the next event; None if it is one already held (same bytes), Refused otherwise."""
        if isinstance(signed, (bytes, bytearray)) and event_id(bytes(signed)) in self._ids:
            return None  # a copy gossip brought again: known by its id, no need to decode it
        try:
            ev = decode_event(signed)
        except EventError as e:
            raise Refused(_peek_seq(signed), str(e), fault="format") from None
        if self.events and ev.game != self.game:
            raise Refused(ev.seq, "the event belongs to another game", fault="game")
        if ev.seq < self.seq:
            held = self.events[ev.seq]
            if held.signed == ev.signed:
                return None
            if held.author == ev.author:
                raise Fork(held, ev)
            raise Refused(ev.seq, f"seq {ev.seq} is already taken by another author", fault="seq")
        if ev.seq > self.seq:
            raise Refused(ev.seq, f"seq {ev.seq} comes too early: the next seq is {self.seq}", fault="seq")
        if ev.prev != self.head:
            raise Refused(ev.seq, "prev is not the id of the event before", fault="prev")
        self._take(ev)
        self.events.append(ev)
        self._ids.add(ev.id)
        return ev

    def _check_body(self, ev: Event, fault: str, prefix: str = "") -> None:
        """Refused (of class `fault`) unless the body has its kind's form (log/bodies.py)."""
        try:
            check_body(ev.kind, ev.body)
        except SchemaError as e:
            words = SETUP_WORDS.get(ev.kind, f"a malformed {ev.kind} body")
            raise Refused(ev.seq, f"{prefix}{words}: {e}", fault=fault) from None

    def _expect_author(self, ev: Event, seat: int, what: str) -> None:
        if ev.author != self.keys[seat]:
            who = self.seat_of(ev.author)
            by = "a key that holds no seat" if who is None else f"seat {who}"
            raise Refused(ev.seq, f"wrong author: {what} is seat {seat}'s to write, not {by}'s",
                          fault="author")

    def _take(self, ev: Event) -> None:
        """Check `ev` against the game so far and fold it in; raise Refused without changes."""
        st = self.stage()
        try:
            if st is Stage.GENESIS:
                if ev.kind != "genesis":
                    raise Refused(ev.seq, f"a log starts with a genesis, not {ev.kind}", fault="setup")
                self._check_body(ev, "setup")
                g = read_genesis(ev.body)
                rs = ruleset_from_dict(g.ruleset)
                if not set(rs.to_dict()) - set(rs.LEGACY) <= set(g.ruleset):
                    # A default may change in a later version; a log must not. Only a field
                    # added after logs were written may be missing: it means the old rule.
                    raise Refused(ev.seq, "the genesis ruleset must name every field of its variant",
                                  fault="setup")
                rs.check_players(len(g.seats))
                if ev.author != g.seats[0].key:
                    raise Refused(ev.seq, "wrong author: the genesis is seat 0's to write", fault="author")
                self.genesis = g
                self.keys = [s.key for s in g.seats]
                self.played_by = list(range(len(g.seats)))
                return
            n = self.players
            if st in CEREMONY_STAGES:
                seat = (ev.seq - 1) % n
                if ev.kind != st:
                    raise Refused(ev.seq, f"expected seat {seat}'s {st}, got {ev.kind}", fault="setup")
                self._expect_author(ev, seat, f"the {st} at seq {ev.seq}")
                self._check_body(ev, "setup")
                if st is Stage.ACCEPT:
                    if ev.body:
                        raise SetupError("an accept body is empty")
                elif st is Stage.COMMIT:
                    self.commits.append(read_commit(ev.body))
                else:
                    nonce = read_reveal(ev.body)
                    if commitment(nonce) != self.commits[seat]:
                        raise Refused(ev.seq, f"seat {seat}'s reveal does not match its commitment",
                                      fault="reveal")
                    self.nonces.append(nonce)
                    if len(self.nonces) == n:
                        self._start()
                return
            if st is Stage.OVER:
                raise Refused(ev.seq, "the game is over", fault="over")
            if ev.kind == TAKEOVER:
                self._takeover(ev)
            elif st is Stage.RESULT:
                self._result(ev)
            elif st is Stage.DEAL:
                self._deal(ev)
            else:
                self._move(ev)
        except (SetupError, RulesetError) as e:
            raise Refused(ev.seq, str(e), fault="setup") from None

    def _start(self) -> None:
        assert self.genesis is not None
        self.seed = derive_seed(self.events[0].game, self.nonces)
        rs = ruleset_from_dict(self.genesis.ruleset)
        if not self.genesis.fair:
            self.state = new_game(rs, self.players, self.seed)
            return
        # The seed still closes the ceremony (every seat took part), but no card comes
        # from it: the cards exist only as the seats' shuffled points (docs/fairdeal.md).
        source = PartialCards(rs, self.me)
        self.state = new_game(rs, self.players, source=source)
        self.ledger = Ledger(self.events[0].game, self.players, self.me, self.secret)
        self.ledger.open_piles(source.piles(self.state.round_no))  # dealt before the first move

    def _deal(self, ev: Event) -> None:
        """The deal event the ledger owes now, by its seat's key; then what it opened is
        learned, and a pending move whose cards are all open is applied."""
        ledger = self.ledger
        assert ledger is not None and self.state is not None
        o = ledger.owed()
        assert o is not None
        self._expect_author(ev, o.seat, f"{o} at seq {ev.seq}")
        try:
            ledger.take(o.seat, ev.kind, ev.body)
        except LedgerError as e:
            raise Refused(ev.seq, f"deal: {e}", fault="deal") from None
        source: PartialCards = self.state.source  # type: ignore[assignment]
        try:
            for request, place in ledger.answers():
                source.learn(request, place)
        except ValueConflict as e:  # a copy only this seat sees (its own peek's place)
            self.stuck = f"the deal is broken for this seat: {e}"
        if ledger.private_broken and self.stuck is None:
            self.stuck = f"the deal is broken for this seat: {ledger.private_broken[0]}"
        if self.pending is not None and self.stuck is None and ledger.broken is None \
                and ledger.owed() is None:
            self._advance(self.pending)

    def _move(self, ev: Event) -> None:
        assert self.state is not None and self.genesis is not None
        d = to_act(self.state)
        assert d is not None
        self._expect_author(ev, d.seat, f"the {d.kind} decision")
        body = dict(ev.body)
        if "move" in body:
            raise Refused(ev.seq, "illegal move: a move's body has no field 'move' (the kind names it)",
                          fault="illegal")
        if ev.kind in MOVE_BODIES:  # an unknown kind is named by move_from_dict below
            self._check_body(ev, "illegal", "illegal move: ")
        knock = body.pop("knock", None) if ev.kind == "give" else None
        try:
            move = move_from_dict({"move": ev.kind, **body})
        except MoveError as e:
            raise Refused(ev.seq, f"illegal move: {e}", fault="illegal") from None
        if isinstance(move, Give):
            if not 0 <= move.to < self.players:
                raise Refused(ev.seq, f"illegal move: there is no seat {move.to}", fault="illegal")
            try:
                check_knock(knock, key=self.keys[move.to], game=ev.game,
                            draw_id=self.head)
            except KnockError as e:
                raise Refused(ev.seq, f"illegal move: {e}", fault="illegal") from None
        try:
            self._advance(move)
        except IllegalMove as e:
            raise Refused(ev.seq, f"illegal move ({describe_move(move)}): {e}", fault="illegal") from None

    def _advance(self, move: Move) -> None:
        """Apply `move` (IllegalMove: nothing changes), or, under the fair deal, keep it
        pending while its cards' shares are owed; then what a new state owes: the round's
        results, the next round's shuffles, at the end every seat's secret."""
        assert self.state is not None
        rounds = len(self.state.results)
        try:
            state = apply(self.state, move)
        except NeedValues as x:
            ledger = self.ledger
            assert ledger is not None, "only a partial source waits for values"
            if self.pending is None and move not in legal_moves(self.state):
                # The rules check a move before it shows a card; this keeps an illegal
                # move from ever owing shares, whatever order a handler checks in.
                raise IllegalMove("it is not one of the moves the rules allow now") from None
            source: PartialCards = self.state.source  # type: ignore[assignment]
            ledger.open_piles(source.piles(x.requests[0].round_no))  # a reshuffle's new pile
            ledger.need(x.requests, source)
            self.pending = move
            return
        self.pending = None
        self.state = state
        if self.signs_results and len(state.results) > rounds:
            r = state.results[-1]
            self.claim = RoundClaim(r.round_no, bytes.fromhex(state_hash(state)), r.scores, r.totals)
        if self.ledger is not None:
            if to_act(state) is None:
                self.ledger.end()
            elif len(state.results) > rounds:
                self.ledger.open_piles(state.source.piles(state.round_no))  # type: ignore[union-attr]


    def _result(self, ev: Event) -> None:
        """The next seat's signed result of the round that just ended: exactly what our
        engine computed (else a Disagreement), at a sane time not before the start."""
        assert self.claim is not None and self.genesis is not None and self.genesis.started is not None
        seat = len(self.signing)
        c = self.claim
        self._expect_author(ev, seat, f"the result of round {c.round + 1} at seq {ev.seq}")
        if ev.kind != RESULT:
            raise Refused(ev.seq, f"seat {seat}'s result of round {c.round + 1} is due here, "
                                  f"not a {ev.kind}", fault="result")
        self._check_body(ev, "result", "result: ")
        b = ev.body
        ours, theirs = c.hash.hex(), b["hash"].hex()
        if (b["round"], b["hash"], tuple(b["scores"]), tuple(b["totals"])) != \
                (c.round, c.hash, c.scores, c.totals):
            who = f"seat {seat} ({self.name_of(ev.author)})"
            diff = []
            if b["round"] != c.round:
                diff.append(f"round {b['round'] + 1} for {c.round + 1}")
            if tuple(b["scores"]) != c.scores:
                diff.append(f"scores {_nums(b['scores'])} for {_nums(c.scores)}")
            if tuple(b["totals"]) != c.totals:
                diff.append(f"totals {_nums(b['totals'])} for {_nums(c.totals)}")
            more = f"; it signed {', '.join(diff)}" if diff else ""
            raise Disagreement(ev, seat, f"result: {who} signed round {c.round + 1} with state "
                                         f"hash {theirs}, this engine's is {ours}{more}",
                               ours, theirs)
        if b["at"] < self.genesis.started - CLOCK_SKEW:
            raise Refused(ev.seq, f"result: seat {seat}'s clock ({b['at']}) is more than "
                                  f"{CLOCK_SKEW // 1000} s before the game's start "
                                  f"({self.genesis.started})", fault="result")
        self.signing.append(ev)
        if len(self.signing) == self.players:
            self.results.append(tuple(self.signing))
            self.signing = []
            self.claim = None

    def _takeover(self, ev: Event) -> None:
        """Every seat not taken signed its consent to give the taken seats these new keys,
        here and nowhere else; the seat that must act now is one of them (so the only
        event a takeover can stand against is that seat's own, see `supersede`)."""
        assert self.state is not None
        self._check_body(ev, "takeover", "takeover: ")
        try:
            seats = read_seats(ev.body["seats"], self.players)
        except ConsentError as e:
            raise Refused(ev.seq, f"takeover: {e}", fault="takeover") from None
        taken = {s for s, _ in seats}
        due = self.next_author()  # the seat to decide, or to sign its result
        assert due is not None
        if due not in taken:
            raise Refused(ev.seq, f"takeover: seat {due}, which must act now, is not among the "
                                  "taken seats", fault="takeover")
        author = self.keys.index(ev.author) if ev.author in self.keys else None
        if author is None or author in taken:
            raise Refused(ev.seq, "wrong author: a takeover is written by a seat that stays",
                          fault="author")
        new_keys = [k for _, k in seats]
        if len(set(new_keys)) != len(new_keys) or any(k in self.keys for k in new_keys):
            raise Refused(ev.seq, "takeover: each taken seat needs a key of its own, new to the game",
                          fault="takeover")
        signs = ev.body["signs"]
        stay = [s for s in range(self.players) if s not in taken]
        if (not isinstance(signs, list) or len(signs) != len(stay)
                or any(not isinstance(x, list) or len(x) != 2 for x in signs)
                or [x[0] for x in signs] != stay):
            raise Refused(ev.seq, "takeover: it needs the consent of every seat that stays, "
                                  f"in seat order ({', '.join(map(str, stay))})", fault="takeover")
        for seat, sig in signs:
            try:
                check_consent(sig, key=self.keys[seat], game=ev.game, seq=ev.seq, prev=ev.prev,
                              seats=seats)
            except ConsentError as e:
                raise Refused(ev.seq, f"takeover: seat {seat}: {e}", fault="takeover") from None
        released = self._released(ev, taken, stay)
        for seat, key in seats:
            self.keys[seat] = key
            self.played_by[seat] = self.played_by[author]  # the takeover's author runs the bot
        if self.ledger is not None:
            for dealer, secret in released.items():
                self.ledger.adopt(dealer, secret)
            self._owed = None  # the taken seat's deal events are now made here too

    def _released(self, ev: Event, taken: set[int], stay: list[int]) -> dict[int, bytes]:
        """Fair deal: the taken seat's secret, from the escrow pieces the takeover carries
        (one from every seat that stays), checked against their commitments; a seat that
        left for good must not lock the deck (docs/fairdeal.md). One seat at a time: a
        taken seat's pieces are held by the others, so two taken at once would hold each
        other's. A seeded game's takeover carries no pieces."""
        given = ev.body.get("release")
        if self.ledger is None:
            if given is not None:
                raise Refused(ev.seq, "takeover: a seeded game's takeover carries no escrow pieces",
                              fault="takeover")
            return {}
        if len(taken) != 1:
            raise Refused(ev.seq, "takeover: under the fair deal a takeover takes one seat at a time "
                                  "(the taken seats hold each other's escrow pieces)", fault="takeover")
        (dealer,) = taken
        handed: dict[int, bytes] = {}
        for holder, of, piece in given or []:
            if of != dealer or holder not in stay or holder in handed:
                raise Refused(ev.seq, f"takeover: an escrow piece of seat {holder} for seat {of} "
                                      f"does not belong in the release of seat {dealer}", fault="takeover")
            handed[holder] = piece
        pieces = self.ledger.release_pieces(dealer, handed)
        got = self.ledger.release(dealer, pieces)
        if not isinstance(got, bytes):
            raise Refused(ev.seq, f"takeover: seat {dealer}'s secret does not come back: {got}",
                          fault="takeover")
        return {dealer: got}

    def supersede(self, signed: bytes) -> list[Event]:
        """Take a takeover at a seq this table already holds, dropping what it replaces.

        A seat that was cut off may have gone on writing its own moves while the others
        agreed to hand it to a bot. Every remaining seat signed the takeover for that
        very seq and prev, so none of them built on the cut-off seat's events: the
        takeover wins, and only events by the taken seats are dropped (returned, to be
        kept as evidence). Refused if `signed` is anything else."""
        try:
            ev = decode_event(signed)
        except EventError as e:
            raise Refused(_peek_seq(signed), str(e), fault="format") from None
        if ev.kind != TAKEOVER or not 0 < ev.seq < self.seq or ev.game != self.game:
            raise Refused(ev.seq, "only a takeover may stand in place of events already held",
                          fault="seq")
        before, _ = fold((e.signed for e in self.events[:ev.seq]), me=self.me, secret=self.secret)
        old = list(before.keys)
        before.append(signed)  # Refused here if the takeover is not valid at that place
        dropped = self.events[ev.seq:]
        replaced = {k for k, new in zip(old, before.keys) if k != new}
        if any(e.author not in replaced for e in dropped):
            raise Refused(ev.seq, "a takeover may only stand in place of the taken seats' own events",
                          fault="seq")
        self.__dict__.update(before.__dict__)
        return dropped


def move_body(move: Move, knock: bytes | None = None) -> tuple[str, dict[str, Any]]:
    """The event kind and body that carry `move` (a give also carries its knock)."""
    d = move_to_dict(move)
    del d["move"]
    if isinstance(move, Give):
        if knock is None:
            raise ValueError("a give event carries the receiver's signed knock")
        d["knock"] = knock
    return move_name(move), d


def _nums(xs: Iterable[int]) -> str:
    return " ".join(map(str, xs))


def _peek_seq(signed: Any) -> int | None:
    """The seq an undecodable event claims, when it can be read at all (to name the fault);
    None unless it is a seq a log can have (so a refusal never echoes a wild number)."""
    if not isinstance(signed, (bytes, bytearray)):
        return None
    try:
        env = msgpack.unpackb(bytes(signed)[64:], raw=False, strict_map_key=False)
        seq = env.get("seq") if isinstance(env, dict) else None
        return seq if type(seq) is int and 0 <= seq <= MAX_SEQ else None
    except Exception:
        return None


def fold(events: Iterable[bytes], *, me: int | None = None,
         secret: bytes | None = None) -> tuple[Table, Refused | None]:
    """The table of a log, up to its first fault (returned, not raised); with `me` and
    `secret`, as that seat's peer folds a fair-deal game (its own peeks known)."""
    t = Table(me=me, secret=secret)
    for raw in events:
        try:
            t.append(raw)
        except Refused as e:
            return t, e
    return t, None
