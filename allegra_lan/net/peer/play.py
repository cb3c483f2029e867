"""A peer's part in the play: its seats' events (genesis, ceremony, bots' moves), knocks
and their windows (a part of `Peer`: its methods run on a Peer)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from allegra_lan.blake import blake2b

from ...bots.base import Bot
from ...log.ceremony import commitment
from ...log.envelope import sign_event
from ...log.identity import fingerprint
from ...log.knock import KnockError, check_answer, sign_knock
from ...rules import Decision, DecisionKind, Give, Move, State, legal_moves, to_act, view
from ...table import Refused, Stage, move_body
from ..actions import SaveSeats
from . import config
from .data import SeatPlayer

if TYPE_CHECKING:
    from .core import Peer


class Playing:
    """The events this peer writes for its seats, and the knocks of ALLEGRA R16."""

    def _on_knock(self: Peer, key: bytes, msg: dict[str, Any]) -> None:
        """A seat's signed knock or pass for a draw. The signature proves the seat, so any
        seated peer may relay it: each new answer goes on to the links its sender does not
        reach itself (a missing link must not cost a knocker its chance, and a full mesh
        need not carry each answer once from every peer); the first answer of a seat counts.

        Only an answer to the draw that is the log's head is checked and kept: one for an
        older draw came too late and is dropped; one for a draw we do not hold yet waits
        in `early_knocks`, one per sender and seat (a peer could send thousands), until
        that draw is the head. Nothing else is stored before the answer proved itself, so
        the knock table holds at most one answer per seat, for one draw."""
        seat, draw, k = msg["seat"], msg["draw"], msg["k"]
        t = self.table
        if draw != t.head:
            if not t.holds(draw):
                self.early_knocks[(key, seat)] = msg
            return
        if t.state is None:
            return
        who = fingerprint(key)
        d = self._knock_window()
        if d is None:
            self._blame(f"refused from {who}: a knock for seat {seat}: no card is open for knocks")
            return
        if not seat < t.players or seat == d.seat:
            self._blame(f"refused from {who}: a knock for seat {seat}: that seat cannot knock "
                        "for this card")
            return
        answers = self.knocks.get(draw, {})
        if seat in answers:
            return
        try:
            knocked = check_answer(k, key=t.keys[seat], game=t.game or self.table_id, draw_id=draw)
        except KnockError as e:
            self._blame(f"refused from {who}: a knock for seat {seat}: {e}")
            return
        self.knocks.setdefault(draw, {})[seat] = k if knocked else None
        # On to the peers its sender does not reach itself, as events go (net/sync.py): each
        # answer reaches each peer once in a full mesh, not once from every other peer.
        for p in self.replica.relay_targets(key):
            self._send(p, msg)
        self._changed()

    # ------------------------------------------------------------ playing

    def _sign(self: Peer, seat: int, kind: str, body: dict[str, Any]) -> bytes:
        t = self.table
        game = self.table_id if t.game is None else t.game
        return sign_event(self.players[seat].identity.key, game=game, seq=t.seq, prev=t.head,
                          kind=kind, body=body).signed

    def _publish(self: Peer, signed: bytes) -> None:
        self._deliver(self.replica.publish(signed, self._now))

    def _bot(self: Peer, sp: SeatPlayer, purpose: str, at: bytes) -> Bot:
        """The seat's bot for one decision, seeded from the seat's secret key, the game and
        the decision (`at`: the seq or draw), so the same log gives the same choice after
        a restart."""
        assert sp.bot is not None
        game = self.table.game or self.table_id
        seed = blake2b(purpose.encode() + b"\0" + game + at, key=bytes(sp.identity.key),
                               digest_size=32, person=b"allegra-lan-bot").digest()
        return self.make_bot(sp.bot, seed)

    def _act(self: Peer) -> bool:
        """Write the next event of one of our seats if it is theirs to write now; whether
        one was written (the caller looks again: our next seat may follow at once)."""
        t = self.table
        if t.genesis is None:
            lobby = self.lobby
            if lobby is not None and lobby.host == self.me and lobby.all_ready():
                self._claim_seats()
                genesis = replace(lobby.genesis(), started=self.wall_ms())  # signed results
                self._publish(self._sign(0, "genesis", genesis.body()))
                return True
            return False
        if not self.players:
            self._claim_seats()
        self._answer_knocks()
        seat = t.next_author()
        if seat is None or seat not in self.players:
            return False
        stage = t.stage()
        sp = self.players[seat]
        if self._write_owed():
            return True
        if stage is Stage.PLAY and sp.bot is None:
            return False  # a person's move: the terminal client calls `play_move`
        if stage is Stage.ACCEPT:
            self._publish(self._sign(seat, "accept", {}))
        elif stage is Stage.COMMIT:
            self._publish(self._sign(seat, "commit", {"commit": commitment(sp.nonce)}))
        elif stage is Stage.REVEAL:
            self._publish(self._sign(seat, "reveal", {"nonce": sp.nonce}))
        elif stage is Stage.PLAY:
            return self._play(seat)
        else:
            return False
        return True

    def _write_owed(self: Peer) -> bool:
        """The event the table says one of our seats owes now (log/results.py `Owed`: a
        round's result, or a fair-deal event: keys, escrow, a pass, shares, the secret),
        signed and sent at once: for a person's seat as for a bot's, neither asked, and no
        pace, since the log waits for it. A deal event of our own seat comes from the
        replica's table, one of a further seat of ours from that seat's table
        (net/peer/deal.py). Whether one was written."""
        t = self.table
        owed = t.owed()
        if (owed is None or owed.seat not in self.players) and t.dealing:
            seat = t.next_author()
            if seat is not None and seat != t.me and seat in self.players:
                self.seat_tables.follow(t, self._further_seats())
                owed = self.seat_tables.owed(seat)
        if owed is None or owed.seat not in self.players:
            return False
        if self.deal_cheat is not None and not owed.timed:  # a fair-deal event: the adversary's
            owed = self.deal_cheat(self.table, owed)
            if owed is None:
                return False
        self._publish(self._sign(owed.seat, owed.kind, owed.body_at(self.wall_ms())))
        return True

    def _play(self: Peer, seat: int) -> bool:
        """Our bot's move, once `pace` has passed since the log last grew and, while the
        card it drew is open for knocks, every other seat answered or KNOCK_WINDOW passed."""
        state = self.seat_state(seat)  # in a fair deal only the seat's own table knows its peeks
        assert state is not None and self._head_at is not None
        ready_at = self._head_at + self.pace  # a headless game people can follow
        if self._now < ready_at:
            self._timer(ready_at)
            return False
        legal = legal_moves(state)
        offered = legal
        if any(isinstance(m, Give) for m in legal):
            draw = self.table.head
            knocks = self.knocks.get(draw, {})
            others = [s for s in range(state.players) if s != seat]
            deadline = ready_at + config.KNOCK_WINDOW
            if not all(s in knocks for s in others) and self._now < deadline:
                self._timer(deadline)
                return False
            offered = [m for m in legal if not isinstance(m, Give) or knocks.get(m.to)]
        sp = self.players[seat]
        at = self.table.seq.to_bytes(8, "big") + self.table.head
        move = self._bot(sp, "move", at).choose(view(state, seat), offered)
        self._move(seat, move, in_window=offered is not legal)
        return True

    def _move(self: Peer, seat: int, move: Move, *, in_window: bool = False) -> None:
        knock = None
        if isinstance(move, Give):
            knock = self.knocks.get(self.table.head, {}).get(move.to)
            if knock is None:
                raise Refused(self.table.seq, f"seat {move.to} did not knock for this card",
                              fault="illegal")
        if seat not in self.players:
            raise Refused(self.table.seq, f"seat {seat} is not played here", fault="author")
        kind, body = move_body(move, knock)
        signed = self._sign(seat, kind, body)
        self._decided_in_knock_window = in_window
        try:
            self._publish(signed)
        finally:
            self._decided_in_knock_window = False

    def _knock_window(self: Peer) -> Decision | None:
        """`knock_window` of the log's head, worked out once per head: it runs the rules'
        legal moves, and a peer asks on every tick and every knock."""
        head = self.table.head
        if self._window is None or self._window[0] != head:
            state = self.table.state
            self._window = (head, None if state is None else knock_window(state))
        return self._window[1]

    def _answer_knocks(self: Peer) -> None:
        """ALLEGRA R16: after another seat's deck draw, each of our bots knocks or passes."""
        state = self.table.state
        if state is None:
            return
        d = self._knock_window()
        if d is None:
            return
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        for seat, sp in self.players.items():
            if seat == d.seat or seat in answered or sp.bot is None:
                continue
            self._knock(seat, self._bot(sp, "knock", draw).knocks(view(self.seat_state(seat), seat)))

    def _knock(self: Peer, seat: int, wants: bool) -> None:
        sp = self.players[seat]
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        if seat in answered:
            return
        k = sign_knock(sp.identity.key, self.table.game or self.table_id, draw, wants)
        answered[seat] = k if wants else None
        self._broadcast({"t": "knock", "seat": seat, "draw": draw, "k": k})
        self._changed()

    def _claim_seats(self: Peer) -> None:
        """Seats this peer runs, from the lobby's claims (owner = this peer); saved before
        any of their events is written, so `allegra resume` can go on with them."""
        if self.lobby is None:
            return
        added = False
        for seat, c in self.lobby.claims.items():
            given_away = bool(self.table.keys) and self.table.keys[seat] != c.key  # a takeover
            if c.owner == self.me and c.key in self.local and seat not in self.players and not given_away:
                ident, bot = self.local[c.key]
                self.players[seat] = SeatPlayer(seat, ident, bot, self.entropy(32))
                added = True
        if added:
            self._out.append(SaveSeats(self.seats_file()))


def knock_window(state: State) -> Decision | None:
    """The active seat's decision while the card it drew from the deck is open for knocks
    (ALLEGRA R16: it may give that card away), else None."""
    d = to_act(state)
    if d is None or d.kind is not DecisionKind.PLAY or not any(isinstance(m, Give) for m in legal_moves(state)):
        return None
    return d
