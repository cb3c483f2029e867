"""A peer's part in a seat takeover: proposing, consenting, calling off (a part of `Peer`:
its methods run on a Peer; the pure rules are net/takeover.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...log.envelope import sign_event
from ...log.identity import fingerprint
from ...deal.escrow import check_release
from ...log.takeover import ConsentError, check_consent, sign_consent
from ...table import TAKEOVER
from ..actions import SaveSeats
from ..takeover import (
    ASK_AGAIN, GIVE_UP, RELEASE_AFTER, TAKEOVER_STAGES, Promise, Proposal, parse_ask, proposer,
    seats_to_take, why_not,
)
from . import config
from .data import SeatPlayer

if TYPE_CHECKING:
    from .core import Peer


class TakingOver:
    """Bots for the seats of a peer that stays away, by every remaining seat's consent."""

    # ------------------------------------------------------------ takeovers

    def _present(self: Peer) -> set[bytes]:
        """The peers at the table: linked and heard from within SILENCE (a peer that
        connects and then says nothing is as good as away)."""
        now = self._now
        return {self.me} | {k for k in self.links if now - self.heard.get(k, -config.SILENCE) <= config.SILENCE}

    def _consider_takeover(self: Peer) -> None:
        """Propose, ask again or give up a takeover as its time comes."""
        self._release_promises()
        lobby, table = self.lobby, self.table
        if lobby is None or not lobby.takeover or self.spectator or table.stage() not in TAKEOVER_STAGES:
            return
        now = self._now
        p = self.proposal
        if p is not None:
            if now >= p.started + GIVE_UP:
                self._call_off(f"not every seat answered within {GIVE_UP:g} s")
                self._timer(self.retry_at)
                return
            if now >= p.asked + ASK_AGAIN:
                p.asked = now
                self._broadcast(p.ask())
            self._timer(min(p.asked + ASK_AGAIN, p.started + GIVE_UP))
            return
        run = self.runners()
        taken = seats_to_take(table, run, self._present())
        if not taken or proposer(table.players, taken, run) != self.me:
            # A seat's peer still linked may fall silent: look again when it would count as away.
            silent = [self.heard[k] + config.SILENCE + 0.001 for k in self.links if k in self.heard]
            self._timer(min((t for t in silent if t > now), default=None))
            return
        since = max(self.heard.setdefault(run[s], now) for s in taken)  # their last word
        due = max(since + lobby.takeover, self.retry_at)
        if now < due:
            self._timer(due)
            return
        self._propose(taken, now)
        self._timer(now + ASK_AGAIN)

    def _release_promises(self: Peer) -> None:
        """Release a consent whose proposer has been away RELEASE_AFTER (see `Promise`)."""
        now, present = self._now, self._present()
        for seq, promise in list(self.promises.items()):
            if promise.proposer in present:
                continue
            due = self.heard.get(promise.proposer, now) + RELEASE_AFTER
            if now < due:
                self._timer(due)
                continue
            self._release(seq)
            self._say(f"released the consent to let bots play "
                      f"{self._seat_names([s for s, _ in promise.seats])}: "
                      f"{fingerprint(promise.proposer)}, who asked, has been away for "
                      f"{RELEASE_AFTER:g} s")

    def _release(self: Peer, seq: int) -> None:
        del self.promises[seq]
        self.replica.barred.pop(seq, None)
        self._broadcast(self.replica.have())  # a move we held back may come again

    def _propose(self: Peer, taken: list[int], now: float) -> None:
        table = self.table
        assert table.game is not None and self.lobby is not None
        idents = {s: self._new_identity() for s in taken}
        seats = [(s, idents[s].public) for s in taken]
        stay = [s for s in range(table.players) if s not in taken]
        p = Proposal(table.seq, table.head, seats, idents, stay, started=now, asked=now)
        ledger = table.ledger
        if ledger is not None:  # fair deal: one seat taken (seats_to_take), its escrow released
            p.holders = frozenset(s for s in stay if s not in ledger.adopted)
            p.pieces.update(self._my_pieces(taken))
        for s in stay:
            sp = self.players.get(s)
            if sp is not None and table.keys[s] == sp.identity.public:
                p.signs[s] = sign_consent(sp.identity.key, table.game, p.seq, p.prev, seats)
        self.proposal = p
        self.replica.barred[p.seq] = frozenset(table.keys[s] for s in taken)
        self._say(f"{self._seat_names(taken)} away for {self.lobby.takeover} s or more: asking the "
                  "other seats to let bots play for them")
        self._broadcast(p.ask())
        self._complete_takeover()

    def _seat_names(self: Peer, seats: list[int]) -> str:
        g = self.table.genesis
        return ", ".join(f"{g.seats[s].name} (seat {s})" if g else f"seat {s}" for s in seats)

    def _complete_takeover(self: Peer) -> None:
        """Every seat that stays consented: run the new bots here, keep their keys on disk,
        then write the takeover event."""
        p, table, lobby = self.proposal, self.table, self.lobby
        if p is None or not p.complete() or lobby is None or table.game is None:
            return
        self.proposal = None
        self.replica.barred.pop(p.seq, None)
        if p.seq != table.seq or p.prev != table.head:
            self._call_off("the log moved on meanwhile", p)
            return
        ours = [s for s in p.stay if s in self.players]
        if not ours:  # our own seats were given away meanwhile: we may not write it
            self._call_off("this peer no longer runs a seat that stays", p)
            return
        author = ours[0]
        for seat, ident in p.idents.items():
            claim = lobby.claims.get(seat)
            bot = claim.bot if claim is not None and claim.bot else config.TAKEOVER_BOT
            self.local[ident.public] = (ident, bot)
            self.players[seat] = SeatPlayer(seat, ident, bot, self.entropy(32))
        self._out.append(SaveSeats(self.seats_file()))  # the new keys are on disk first
        signed = sign_event(self.players[author].identity.key, game=table.game, seq=p.seq,
                            prev=p.prev, kind=TAKEOVER, body=p.body()).signed
        self._publish(signed)

    def _take_pieces(self: Peer, key: bytes, p: Proposal, pieces: list[list[Any]]) -> None:
        """Fair deal: keep each escrow piece a consenting peer handed in for the taken seat,
        if it is that peer's own seat's and matches the commitment the dealer published
        (a wrong one is blamed and left out, so the takeover never carries it)."""
        ledger, run = self.table.ledger, self.runners()
        if ledger is None:
            return
        for holder, dealer, piece in pieces:
            item = next((e for e in ledger.escrow.get(dealer, ()) if e.holder == holder), None)
            fault = None if item is None else check_release(ledger.game, item, piece)
            if holder not in p.holders or run.get(holder) != key or [dealer] != [s for s, _ in p.seats] \
                    or item is None or fault is not None:
                self._blame(f"refused from {fingerprint(key)}: an escrow piece of seat {holder} for "
                            f"seat {dealer} that does not belong in this takeover or misses its commitment")
                continue
            p.pieces[holder] = piece

    def _call_off(self: Peer, why: str, p: Proposal | None = None) -> None:
        p = p or self.proposal
        if p is None:
            return
        self.proposal = None
        self.replica.barred.pop(p.seq, None)
        self._broadcast({"t": "takeover_off", "seq": p.seq})
        # While the proposal stood, the taken seats' own events at its seq were refused here
        # as promised (sync.Replica._check_barred), silently: ask for them again, as a
        # released consent does (seed 574353).
        self._broadcast(self.replica.have())
        self.retry_at = self._now + (self.lobby.takeover if self.lobby else 0)
        self._say(f"no takeover of {self._seat_names([s for s, _ in p.seats])}: {why}")

    def _peer_back(self: Peer, key: bytes) -> None:
        """A peer spoke on a new link: it is no longer away; a takeover of its seats is off;
        a proposer that restarted hears our consent again."""
        p = self.proposal
        if p is not None:
            if any(self.runners().get(s) == key for s, _ in p.seats):
                self._call_off(f"{fingerprint(key)} is back")
            else:
                self._send(key, p.ask())
        for promise in self.promises.values():
            if promise.proposer == key:
                self._send_consent(key, promise)

    def _my_pieces(self: Peer, taken: list[int]) -> dict[int, bytes]:
        """The escrow pieces of the taken seats that our own seat holds (its ledger opened
        them from their `deal_escrow`): holder -> piece, for the takeover's release."""
        ledger = self.table.ledger
        if ledger is None or ledger.seat is None:
            return {}
        return {ledger.seat: ledger.held[d] for d in taken if d in ledger.held}

    def _send_consent(self: Peer, key: bytes, promise: Promise) -> None:
        table = self.table
        taken = {s for s, _ in promise.seats}
        assert table.game is not None
        signs = [[s, sign_consent(sp.identity.key, table.game, promise.seq, promise.prev,
                                  list(promise.seats))]
                 for s, sp in sorted(self.players.items())
                 if s not in taken and table.keys[s] == sp.identity.public]
        msg: dict[str, Any] = {"t": "takeover_yes", "seq": promise.seq, "signs": signs}
        pieces = self._my_pieces(sorted(taken))
        if pieces:
            (dealer,) = taken
            msg["pieces"] = [[h, dealer, piece] for h, piece in pieces.items()]
        self._send(key, msg)

    def _on_takeover(self: Peer, key: bytes, msg: dict[str, Any]) -> None:
        t, seq, table = msg.get("t"), msg.get("seq"), self.table
        who = fingerprint(key)
        if table.genesis is None or self.lobby is None or self.spectator:
            return
        linked = key in self.links
        if t == "takeover_ask":
            try:
                seq, prev, seats = parse_ask(msg, table.players)
            except ConsentError as e:
                self._blame(f"refused from {who}: {e}")
                return
            if seq > table.seq or not linked:
                return  # we are still catching up: the proposer asks again
            run = self.runners()
            taken = {s for s, _ in seats}
            reason = why_not(table, run, self._present(), seq, prev, seats)
            if reason is None and proposer(table.players, taken, run) != key:
                reason = "that peer is not the one to propose it"
            held = self.promises.get(seq)
            if reason is None and held is not None and (held.proposer, held.seats) != (key, tuple(seats)):
                reason = "this peer consented to another takeover at that seq"
            if reason is not None:
                self._send(key, {"t": "takeover_no", "seq": seq, "reason": reason})
                return
            if held is None:
                self.promises[seq] = Promise(key, seq, prev, tuple(seats))
                self.replica.barred[seq] = frozenset(table.keys[s] for s in taken)
                self._say(f"agreed to let bots play {self._seat_names(sorted(taken))}: "
                          "their player is away")
            self._send_consent(key, self.promises[seq])
        elif t == "takeover_yes":
            p = self.proposal
            if p is None or p.seq != seq:
                if linked and seq >= table.seq:
                    self._send(key, {"t": "takeover_off", "seq": seq})  # we no longer ask: release it
                return
            run = self.runners()
            for item in msg["signs"]:
                ok = item[0] in p.stay and run.get(item[0]) == key
                try:
                    if not ok:
                        raise ConsentError("a consent for a seat that peer does not run")
                    check_consent(item[1], key=table.keys[item[0]], game=table.game or b"",
                                  seq=p.seq, prev=p.prev, seats=p.seats)
                except ConsentError as e:
                    self._blame(f"refused from {who}: {e}")
                    continue
                p.signs[item[0]] = item[1]
            self._take_pieces(key, p, msg.get("pieces", []))
            self._complete_takeover()
        elif t == "takeover_no":
            if self.proposal is not None and self.proposal.seq == seq:
                self._call_off(f"{who} said no: {msg['reason'][:120]}")
        elif t == "takeover_off":
            promise = self.promises.get(seq)
            if promise is not None and promise.proposer == key:
                self._release(seq)
