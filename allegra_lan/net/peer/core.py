"""One peer of a networked game as a pure state machine (sans-I/O, like h11).

A `Peer` makes every decision of the mesh: who may send what, the lobby, the
seed ceremony, gossip and catch-up (through `sync.Replica`), knocks, seat
takeovers, pause notes, forks, when to ping, whom to dial, when a link is
dead, when the game is over. It holds no socket, no clock, no file and no
randomness of its own: time comes in as `now`, randomness from the
`entropy` it is given, and every effect goes out as an action
(net/actions.py) for a shell to carry out. Two shells do: the trio `Node`
(net/node.py) over real sockets and files, and the simulator
(allegra_lan/sim/), which runs several peers in one process on a virtual
clock and a seeded network. So the protocol is tested the way it runs.

Inputs, each returning the actions to carry out in order:
  listening(now, host, port)         where this peer accepts connections
  connected(now, key, dialled_by=, remote=)   a handshake finished
  disconnected(now, key, why)        a link went away
  dial_failed(now, key, host, port, reason)   a Dial did not give a link
  handle(now, key, msg)              one decoded frame from a linked peer
  refused_frame(now, key, reason)    a frame from that link that did not decode
  tick(now)                          after every batch of inputs, and at each Timer
  play_move / answer_knock / set_ready / add_bot   the person's commands

A bot's randomness derives from (its seat's secret key, the game, the seq or
draw it decides for), so a bot resumed from its log re-signs exactly the event
it signed before the crash; that is why its events may go out before they are
on disk (`Persist.sync`, docs/architecture.md "What a crash loses").

Owed events (a round's signed results, log/results.py) are written by the peer
the moment the table says one of its seats owes one, for a person's seat as for
a bot's, never asked of either. They carry the wall clock (`epoch_ms` + `now`,
the shell sets `epoch_ms`), so they are fsynced before they go out: a resumed
peer would sign another time, and two results of one seat at one seq are a fork.
Deal events (a fair-deal game, issue 12) are owed too and written the same way, at once,
by the peer that holds the seat's secret (net/peer/deal.py); they are a function of that
secret and the log, like a bot's moves, so they go out before their fsync.
A signed result our engine refuses (`Disagreement`) stops the game as a fork does:
the signed event is the proof, sent to every peer, and every honest peer stops
naming the seat and both state hashes.
"""

from __future__ import annotations

from typing import Any, Callable

from nacl.signing import SigningKey

from ...bots.base import Bot
from ...bots.registry import make_bot
from ...log.codec import encode
from ...log.envelope import Event, EventError, decode_event
from ...log.identity import Identity, fingerprint
from ...rules import Decision, Move, Variant, ruleset_with
from ...log.results import RESULT, Owed
from ...table import CEREMONY_STAGES, TAKEOVER, Fork, Refused, Table
from ...text import one_line
from ..actions import (
    Action, Changed, Close, Dial, Done, KeepDisagreement, KeepFork, Note, Persist, Rewrite, Send,
    Timer,
)
from ..gate import MAX_WATCHERS
from ..lobby import Claim, Lobby
from ..messages import MessageError, MessageType, Sender, message_type
from ..seats_file import SeatsFile
from ..sync import Replica
from ..takeover import TAKEOVER_STAGES, Promise, Proposal, fair_block, runners
from . import config
from .deal import DEAL_KINDS, SeatTables, seat_secret
from .data import Entropy, Joining, LinkState, Recent, ResumeError, SeatPlayer, SeatSpec, bot_name
from .lobby import Lobbying
from .play import Playing
from .takeover import TakingOver

UNCONFIRMED = "the end was never confirmed"  # how a stop for lack of confirmation begins

# Message type -> the Peer method that handles it (its schema: net/messages.py).
HANDLERS: dict[str, str] = {
    "have": "_on_gossip", "events": "_on_gossip", "refused": "_on_gossip", "links": "_on_gossip",
    "lobby": "_on_lobby", "sit": "_on_request", "ready": "_on_request",
    "lobby_error": "_on_lobby_error", "knock": "_on_knock", "ping": "_on_ping",
    "takeover_ask": "_on_takeover", "takeover_yes": "_on_takeover",
    "takeover_no": "_on_takeover", "takeover_off": "_on_takeover", "fork": "_on_fork",
    "disagree": "_on_disagree",
}


class Peer(Lobbying, Playing, TakingOver):
    """A peer's protocol. Build it with `host`, `guest`, `watcher` or `resume`."""

    def __init__(self, identity: Identity, *, table_id: bytes, entropy: Entropy,
                 pin: str | None = None, pace: float = 0.0) -> None:
        self.identity = identity
        self.me = identity.public
        self.table_id = table_id
        self.pin = pin  # kept only to be written in the .seats file (the shell checks PINs)
        self.entropy = entropy
        self.pace = pace  # seconds each of our bots waits before it moves
        # The wall clock, in ms since the Unix epoch, at `now` 0: what the signed start and
        # result times are read from (`wall_ms`). The trio Node sets it from the machine's clock.
        self.epoch_ms = config.DEFAULT_EPOCH_MS
        self.make_bot: Callable[[str, bytes], Bot] = make_bot  # a test may play its own bots
        # The simulator's dishonest dealer (sim/adversary.py `Dealer`): rewrites, or withholds
        # (None), a fair-deal event our table made; None for every honest peer.
        self.deal_cheat: Callable[[Table, Owed], Owed | None] | None = None
        self.replica = Replica(Table())  # our own seat's deal secret: `_hold_deal_secret`
        self.seat_tables = SeatTables()  # the fair deal's tables of our further seats
        self.lobby: Lobby | None = None
        self.links: dict[bytes, LinkState] = {}
        self.players: dict[int, SeatPlayer] = {}
        self.local: dict[bytes, tuple[Identity, str | None]] = {}  # seat keys played here
        self.address: tuple[str, int] | None = None  # where we accept connections
        self.knocks: dict[bytes, dict[int, bytes | None]] = {}  # draw id -> seat -> knock or None
        # Answers to a draw we do not hold yet (it may be on its way), unchecked, so at most
        # one per sender and seat, judged when that draw becomes the head (`_on_knock`).
        self.early_knocks: dict[tuple[bytes, int], dict[str, Any]] = {}
        self.faults: list[str] = Recent(config.MAX_FAULTS)  # the latest refusals, for the players
        self.fault_count = 0  # every refusal ever
        self.spectator = False  # watches only: holds no seat, dials only the host
        self.dial_everyone = False  # a resumed peer may listen on a new port: it dials all
        self.heard: dict[bytes, float] = {}  # peer -> when its last frame arrived (any link)
        self.proposal: Proposal | None = None  # our takeover ask, while it gathers consents
        self.promises: dict[int, Promise] = {}  # seq -> the takeover we consented to there
        self.retry_at = 0.0  # no new takeover ask before this
        self.joining: Joining | None = None
        self.join_error: str | None = None  # why joining failed (the command says it)
        self.over = False  # the game ended or stopped: nothing more is written
        self.stopped: str | None = None  # why the game stopped before its end
        self.gone = False  # Done was given: the shell may close everything
        self._leave_at: float | None = None
        self._over_at: float | None = None  # when the game ended here (LINGER counts from it)
        self._dialling: dict[bytes | None, float] = {}  # a Dial out, not yet answered: since when
        self._tried: dict[bytes, float] = {}  # peer -> when we last dialled it
        self._head_at: float | None = None  # when the log last grew (or we started)
        self._noted = 0.0  # seconds of the current pause already noted
        self._now = 0.0
        self._out: list[Action] = []
        self._wake: float | None = None
        self._resume_notes: list[Action] = []
        self._decided_in_knock_window = False  # the bot move being published chose from knocks
        self._window: tuple[bytes, Decision | None] | None = None  # knock_window of the head

    # ------------------------------------------------------------ construction

    @classmethod
    def host(cls, identity: Identity, *, variant: Variant, players: int, table_name: str,
             seats: list[SeatSpec], table_id: bytes, entropy: Entropy, pin: str | None = None,
             spectators: bool = False, takeover: int = 0, pace: float = 0.0,
             options: dict[str, Any] | None = None, deal: str = "seeded") -> "Peer":
        """Open a table; this peer plays `seats` (seat 0 first, with the node's own key);
        `takeover`: seconds a seat's peer may be away before the others may let a bot play
        it (0: never); `options`: ruleset fields other than the variant's defaults (e.g.
        {"rounds": 1}); `deal`: "fair" or "seeded", the deal the genesis names (the
        commands choose fair unless told; the simulator and most tests stay seeded).
        RulesetError / UnknownBot / LobbyError name a bad variant, option, size, bot or deal."""
        ruleset = ruleset_with(variant, options)
        ruleset.check_players(players)
        peer = cls(identity, table_id=table_id, entropy=entropy, pin=pin, pace=pace)
        lobby = Lobby(table_id, table_name, ruleset.to_dict(), players, host=identity.public,
                      pin=pin is not None, spectators=spectators, takeover=takeover, deal=deal)
        peer.lobby = lobby
        for seat, spec in enumerate(seats):
            ident = identity if seat == 0 else peer._new_identity()
            peer.local[ident.public] = (ident, bot_name(spec.bot))
            lobby.sit(seat, Claim(spec.name, ident.public, identity.public, spec.bot,
                                  spec.bot is not None))
        peer._hold_deal_secret()
        return peer

    @classmethod
    def guest(cls, identity: Identity, *, host: tuple[str, int], table_id: bytes,
              seats: list[SeatSpec], entropy: Entropy, want_seat: int | None = None,
              pin: str | None = None, pace: float = 0.0) -> "Peer":
        """Join the table whose host listens at `host` and play `seats` there (the first
        with the node's own key)."""
        peer = cls(identity, table_id=table_id, entropy=entropy, pin=pin, pace=pace)
        claims = [(spec, identity if i == 0 else peer._new_identity()) for i, spec in enumerate(seats)]
        for spec, _ in claims:
            bot_name(spec.bot)
        peer.joining = Joining(host, claims, want_seat, watch=False)
        return peer

    @classmethod
    def watcher(cls, identity: Identity, *, host: tuple[str, int], table_id: bytes,
                entropy: Entropy, pin: str | None = None) -> "Peer":
        """Follow a table whose host allows spectators, read-only, checking every event."""
        peer = cls(identity, table_id=table_id, entropy=entropy, pin=pin)
        peer.spectator = True
        peer.joining = Joining(host, [], None, watch=True)
        return peer

    @classmethod
    def resume(cls, stored: SeatsFile, events: list[bytes], *, entropy: Entropy,
               pace: float = 0.0, person_bot: str | None = None, person: bool = False,
               seats_name: str = "the seats file", replay_name: str = "the replay") -> "Peer":
        """Go on with a game this peer played before it stopped, from its replay's events
        and its .seats file. A seat a person played is played by `person_bot` from now on,
        or (`person`) by the person again. ResumeError says why it cannot."""
        identity = Identity(SigningKey(stored.node))
        lobby = stored.lobby
        if identity.public not in lobby.owners():
            raise ResumeError(f"{seats_name}: this peer's key holds no seat in the game")
        peer = cls(identity, table_id=lobby.table_id, entropy=entropy, pin=stored.pin, pace=pace)
        peer.lobby = lobby
        seat0 = lobby.claims.get(0)
        peer.replica.genesis_by = seat0.key if seat0 is not None else None
        peer._hold_deal_secret()  # before the log is folded: its deal needs our secret
        for signed in events:
            try:
                peer.table.append(signed)
            except Refused as e:
                raise ResumeError(f"{replay_name}: {e}") from None
        for s in stored.seats:
            ident = Identity(SigningKey(s.seed))
            if not s.bot and person_bot is None and not person:
                raise ResumeError(f"seat {s.seat} was played by a person here: resume in a "
                                  "terminal, or with --bot NAME to let a bot play it from now on")
            name = s.bot or person_bot or None
            peer.local[ident.public] = (ident, name)
            peer.players[s.seat] = SeatPlayer(s.seat, ident, name, s.nonce)
        peer._sync_seats()  # a seat the others gave to a bot before we stopped is no longer ours
        peer._resume_notes, peer._out = peer._out, []  # its notes come with the first tick's
        peer.replica.resumed({sp.identity.public for sp in peer.players.values()})
        peer.dial_everyone = True
        return peer

    # ------------------------------------------------------------ state

    @property
    def table(self) -> Table:
        return self.replica.table

    def deal_secret(self, seat: int) -> bytes | None:
        """The fair deal's secret of `seat` if this peer holds it from the genesis on (the
        terminal client folds its own copy of the log with it, to see its seat's peeks)."""
        if seat == self.table.me:
            return self.table.secret
        sp = self.players.get(seat)
        g = self.table.genesis
        if sp is None or g is None or g.seats[seat].key != sp.identity.public:
            return None
        return seat_secret(sp.identity, self.table.game or self.table_id, seat)

    def _hold_deal_secret(self) -> None:
        """Our own seat's deal secret goes into the replica's table (`Table.me`, `secret`),
        so that table makes that seat's deal events and its engine knows the seat's peeks.
        The table reads them when the ceremony ends and the deal starts, so they are set
        (again, if the host moved our seat in the lobby) only before that: by `host`, at
        every lobby a guest gets, and by `resume` before it folds the log. Our own seat is
        the one played with this node's key; a spectator holds none."""
        t = self.table
        if t.state is not None or self.spectator or self.lobby is None:
            return
        seat = next((s for s, c in self.lobby.claims.items() if c.key == self.me), None)
        if seat is None or (t.me == seat and t.secret is not None):
            return
        t.me, t.secret = seat, seat_secret(self.identity, self.table_id, seat)

    def _further_seats(self) -> dict[int, Identity]:
        """Our seats besides our own that still hold their genesis key (net/peer/deal.py):
        the seats whose deal events this peer makes through `seat_tables`."""
        g = self.table.genesis
        if g is None:
            return {}
        return {s: sp.identity for s, sp in self.players.items()
                if s != self.table.me and g.seats[s].key == sp.identity.public}

    def seat_state(self, seat: int) -> Any:
        """The game as `seat` may know it: in a fair-deal game the table holding that seat's
        secret knows its peeks (ours, or a further seat's); otherwise the replica's."""
        t = self.table
        if not t.fair or seat == t.me:
            return t.state
        self.seat_tables.follow(t, self._further_seats())
        state = self.seat_tables.state(seat)
        return t.state if state is None else state

    def runners(self) -> dict[int, bytes]:
        """seat -> the peer that writes for it."""
        return {} if self.lobby is None else runners(self.lobby, self.table)

    def finished(self) -> bool:
        """The game reached its end (every round played and, in a log with signed results,
        every seat's result of the last round taken)."""
        return self.table.over

    def wall_ms(self) -> int:
        """The wall clock now, ms since the Unix epoch (UTC): signed into the genesis and
        into our seats' results."""
        return self.epoch_ms + int(self._now * 1000)

    def refusal(self, key: bytes) -> dict[str, Any] | None:
        """The message that turns away a link with `key` before it opens (the shell sends it
        and closes), or None: it may open."""
        if self.may_link(key):
            return None
        return {"t": "lobby_error", "reason": "too many peers without a seat are connected to "
                "this table: try again later"}

    def may_link(self, key: bytes) -> bool:
        """Whether a link with `key` may open: always for a key that holds a seat; for any
        other (lobby browsers, spectators) only while fewer than MAX_WATCHERS are linked."""
        seated = self.lobby.owners() | {self.lobby.host} if self.lobby is not None else set()
        if key in seated or key in self.links:
            return True
        return sum(1 for k in self.links if k not in seated) < MAX_WATCHERS

    def expected_keys(self) -> set[bytes] | None:
        """Who may connect: anyone while the lobby is open; once it started, the seated
        peers, and anyone at a table whose host allowed (read-only) spectators. The seated
        peers are the lobby's owners and the genesis's seat keys (a peer plays its first seat
        with its own key): a peer resumed from a .seats file saved before the host's last
        lobby reached it lacks some owners, and must not turn them away for good (simulator
        seed 655064: the host gone, a resumed peer refused a seated one, so neither could
        agree to a takeover and the game waited for ever)."""
        if self.table.genesis is None or self.lobby is None or self.lobby.spectators:
            return None
        return self.lobby.owners() | {s.key for s in self.table.genesis.seats}

    @staticmethod
    def keeps_new_link(me: bytes, key: bytes, old_dialled_by: bytes, new_dialled_by: bytes) -> bool:
        """Two connections to one peer (both dialled at once): both sides keep the one the
        smaller key opened, so they agree without talking about it."""
        keeper = min(key, me)
        return not (old_dialled_by == keeper or new_dialled_by != keeper)

    def seats_file(self) -> bytes:
        """What this peer needs to resume the game: the lobby, its seats' keys, bots and
        nonces, its port and the PIN (the shell writes it private, whole, then renames)."""
        assert self.lobby is not None
        return encode({
            "lobby": self.lobby.to_msg(), "port": self.address[1] if self.address else 0,
            "pin": self.pin or "", "node": bytes(self.identity.key),
            "seats": [[seat, bytes(sp.identity.key), sp.bot or "", sp.nonce]
                      for seat, sp in sorted(self.players.items())],
        })

    # ------------------------------------------------------------ inputs

    def listening(self, now: float, host: str, port: int) -> list[Action]:
        self._begin(now)
        self.address = (host, port)
        if self.lobby is not None and self.me in self.lobby.owners():
            self.lobby.addresses[self.me] = (host, port)
        return self._end()

    def connected(self, now: float, key: bytes, *, dialled_by: bytes,
                  remote: tuple[str, int] | None) -> list[Action]:
        """A handshake with `key` finished (a second link to a linked key replaces the
        first: the shell asked `keeps_new_link`)."""
        self._begin(now)
        self._dialling.pop(key, None)
        if dialled_by == self.me and self.joining is not None and self.lobby is None:
            self._dialling.pop(None, None)
        if self.refusal(key) is not None:  # the shell asks first; this is the belt
            self._out.append(Close(key, "too many peers without a seat"))
            return self._end()
        replaced = key in self.links
        self.links[key] = LinkState(dialled_by, remote, heard=now, pinged=now, last=now)
        if not replaced:
            self._say(f"connected to {fingerprint(key)}")
        self._deliver(self.replica.connected(key, now))
        self._linger_for(key)
        if self.lobby is not None and self.lobby.host == self.me:
            self._send(key, self.lobby.to_msg())
        if self.replica.fork is not None:  # a peer back while we stop for a fork hears of it
            self._send(key, self._fork_message())  # (seed 210150: it came back and never did)
        self._changed()
        return self._end()

    def disconnected(self, now: float, key: bytes, why: str) -> list[Action]:
        self._begin(now)
        if self.links.pop(key, None) is None or self.gone:
            return self._end()  # (once we are gone, the shell closes every link: no news)
        self._deliver(self.replica.disconnected(key, now))
        if self.lobby is None or key not in self.lobby.owners():
            self.heard.pop(key, None)  # nothing of a stranger is kept for good
            self.replica.confirmed.pop(key, None)
        self._say(f"lost {fingerprint(key)}: {why or 'closed'}")
        lobby = self.lobby
        if lobby is not None and lobby.host == self.me and self.table.genesis is None:
            if lobby.leave(key):
                self._broadcast(lobby.to_msg())
        self._changed()
        return self._end()

    def dial_failed(self, now: float, key: bytes | None, host: str, port: int,
                    reason: str | None) -> list[Action]:
        """A Dial gave no link: `reason` is the handshake's refusal (None: nobody answered)."""
        self._begin(now)
        self._dialling.pop(key, None)
        if key is None and self.joining is not None and self.lobby is None:
            self._fail_join(reason or f"no table answers at {host}:{port}")
        elif reason is not None and key is not None:
            self._say(f"could not connect to {fingerprint(key)} at {host}:{port}: {reason}")
        return self._end()

    def handle(self, now: float, key: bytes, msg: Any) -> list[Action]:
        """One frame from a linked peer. Never raises: whatever it holds, it is taken,
        or refused by name (and a link that keeps sending refusals, or floods, is closed)."""
        self._begin(now)
        link = self.links.get(key)
        if link is None or link.closing:
            return self._end()
        link.heard = self.heard[key] = now
        if not link.spoke:
            link.spoke = True
            self._peer_back(key)  # its first word on this link: it is back
        link.allowance = min(config.BURST, link.allowance + (now - link.last) * config.RATE) - 1
        link.last = now
        if link.allowance < 0:
            self._close(key, f"more than {config.BURST:g} messages at once ({config.RATE:g} a second allowed)",
                        blame=True)
            return self._end()
        blamed = self.fault_count
        self._dispatch(key, msg)
        link.faults += self.fault_count - blamed
        if link.faults >= config.MAX_LINK_FAULTS and not link.closing:
            self._close(key, f"{link.faults} refused messages on one connection", blame=True,
                        more=": link closed (it may connect again)")
        return self._end()

    def refused_frame(self, now: float, key: bytes, reason: str) -> list[Action]:
        """A frame from `key` that did not decode (net/framing.py): named, and the link goes."""
        self._begin(now)
        if key in self.links:
            self._close(key, reason, blame=True)
        return self._end()

    def tick(self, now: float) -> list[Action]:
        """Everything that is due: links' pings and silences, dials, our seats' events, the
        end of the game, takeovers, pause notes. Ends with a Timer for the next look."""
        self._begin(now)
        if self._head_at is None:
            self._head_at = now
            self._out.extend(self._resume_notes)
            self._resume_notes = []
        self._keepalive()
        if self.gone:
            return self._end()
        self._deliver(self.replica.tick(now))  # a gap that waited in vain, an idle `have`
        if self._leave_at is not None:
            self._dial()  # a peer that lacks our end is dialled again (`_wanted`)
            self._linger()
            return self._end()
        self._dial()
        if self.joining is not None and self.lobby is None:
            self._wait_for_host()
            return self._end()
        if self.replica.fork is not None:
            self._stop_for_fork()
            return self._end()
        if self.replica.disagreement is not None:
            self._stop_for_disagreement()
            return self._end()
        for _ in range(config.MAX_ACTS):
            if not self._act():
                break
        if self.finished():
            self._finish(self.table.stopped)  # None, unless the fair deal broke
            return self._end()
        self._consider_takeover()
        self._pause_notes()
        return self._end()

    # ------------------------------------------------------------ the person's commands

    def play_move(self, now: float, seat: int, move: Move) -> list[Action]:
        """A person's move for our seat (the terminal client): signed, taken, sent to all.
        Refused (nothing changes) if it is not that seat's to make or not legal; a give
        carries the receiver's knock for this draw."""
        self._begin(now)
        self._move(seat, move)
        return self._end()

    def answer_knock(self, now: float, seat: int, wants: bool) -> list[Action]:
        """Our seat's signed knock (or pass) for the deck draw that is the log's head."""
        self._begin(now)
        self._knock(seat, wants)
        return self._end()

    def set_ready(self, now: float, ready: bool) -> list[Action]:
        """This peer's person is (not) ready to start: the host marks its own seats, a
        guest asks the host to."""
        self._begin(now)
        lobby = self.lobby
        if lobby is not None and self.table.genesis is None:
            if lobby.host == self.me:
                lobby.set_ready(self.me, ready)
                self._broadcast(lobby.to_msg())
            else:
                self._send(lobby.host, {"t": "ready", "ready": ready})
            self._changed()
        return self._end()

    def add_bot(self, now: float, name: str) -> tuple[int | None, list[Action]]:
        """The host seats one of its own bots in the first free seat (the client's `b`);
        the seat it took, or None when the table is full or has started."""
        self._begin(now)
        lobby = self.lobby
        if lobby is None or lobby.host != self.me or self.table.genesis is not None:
            return None, self._end()
        free = lobby.free_seats()
        if not free:
            return None, self._end()
        ident = self._new_identity()
        self.local[ident.public] = (ident, bot_name(name))
        lobby.sit(free[0], Claim(f"{name} {free[0]}", ident.public, self.me, name, True))
        self._broadcast(lobby.to_msg())
        self._changed()
        return free[0], self._end()

    # ------------------------------------------------------------ plumbing

    def _begin(self, now: float) -> None:
        self._now = now
        self._out = []
        self._wake = None

    def _end(self) -> list[Action]:
        self._timer(self.replica.next_deadline())
        out = self._out
        if self._wake is not None:
            out.append(Timer(self._wake))
        self._out = []
        self._wake = None
        return out

    def _timer(self, at: float | None) -> None:
        """Ask to be ticked at `at`. Only a time to come counts: what is due now was done
        by this tick (and the shell ticks after every input), so a Timer at or before now
        would only make the shell spin (issue 10, finding C)."""
        if at is not None and at > self._now and (self._wake is None or at < self._wake):
            self._wake = at

    def _say(self, text: str) -> None:
        self._out.append(Note(one_line(text)))

    def _changed(self) -> None:
        if not self._out or not isinstance(self._out[-1], Changed):
            self._out.append(Changed())

    def _send(self, key: bytes, msg: dict[str, Any]) -> None:
        link = self.links.get(key)
        if link is not None and not link.closing:
            self._out.append(Send(key, msg))

    def _broadcast(self, msg: dict[str, Any], *, but: bytes | None = None) -> None:
        for key in self.links:
            if key != but:
                self._send(key, msg)

    def _close(self, key: bytes, why: str, *, blame: bool = False, more: str = "") -> None:
        link = self.links.get(key)
        if link is None or link.closing:
            return
        link.closing = True
        if blame:
            self._blame(f"refused from {fingerprint(key)}: {why}{more}")
        self._out.append(Close(key, why))

    def _blame(self, text: str) -> None:
        """A refusal the players should know of. `faults` keeps the latest MAX_FAULTS (a
        peer that keeps sending garbage must not grow our memory); `fault_count` counts all."""
        self.fault_count += 1
        text = one_line(text)
        self.faults.append(text)
        self._out.append(Note(text))

    def _new_identity(self) -> Identity:
        return Identity(SigningKey(self.entropy(32)))

    def _deliver(self, sends: list[tuple[Any, dict[str, Any]]]) -> None:
        """Carry out what the replica decided: the events it took go to disk first (a
        person's move must be there before any peer holds it), then its messages, then
        what the new events change here."""
        r = self.replica
        for f in r.faults:
            who = fingerprint(f.peer) if isinstance(f.peer, bytes) else str(f.peer)
            self._blame(f"refused from {who}: " + (f"seq {f.seq}: " if f.seq is not None else "")
                        + f.reason)
        if r.faults or r.fork is not None:
            self._changed()
        r.faults.clear()
        new = r.accepted[:]
        r.accepted.clear()
        if r.superseded:
            dropped = r.superseded[:]
            r.superseded.clear()
            self._out.append(Rewrite(tuple(e.signed for e in self.table.events),
                                     tuple(e.signed for e in dropped)))
        else:
            for ev in new:
                self._out.append(Persist(ev, self._must_sync(ev)))
        for key, msg in sends:
            self._send(key, msg)
        if new:
            self._head_at, self._noted = self._now, 0.0
            if any(ev.kind == TAKEOVER for ev in new):
                self._sync_seats()
            self._forget_promises()
            self._changed()

    def _must_sync(self, ev: Event) -> bool:
        """Whether this event must be on disk before it goes out: every event of a person's
        seat here (a person may decide otherwise after a crash, and two different events of
        one seat at one seq are a fork), our takeovers (their keys and consents are not
        derived), and our bots' moves that depended on the knocks that came in time. A bot's
        other events, and any seat's deal events (a person's too: nobody chooses them), are
        a function of its seat's key and the log before them, and other
        peers' events are held by their authors: neither needs our fsync."""
        sp = next((p for p in self.players.values() if p.identity.public == ev.author), None)
        if sp is None:
            return False
        if ev.kind in DEAL_KINDS:
            return False  # a function of the seat's secret (derived from its key) and the log
        if sp.bot is None or ev.kind in (TAKEOVER, "genesis", RESULT):
            return True  # (a result carries our clock: a resumed peer would sign another)
        return self._decided_in_knock_window

    def _sync_seats(self) -> None:
        """After a takeover: drop the seats we no longer write for (a bot elsewhere does)."""
        for seat in [s for s, sp in self.players.items() if self.table.keys[s] != sp.identity.public]:
            del self.players[seat]
            runner = self.runners().get(seat)
            by = "this peer" if runner == self.me else fingerprint(runner) if runner else "?"
            self._say(f"seat {seat} is played by a bot on {by} from now on: the other seats "
                      "agreed while its player was away")

    def _forget_promises(self) -> None:
        """The log moved on: what was kept for an earlier seq goes (takeover promises, and
        knocks for any draw but the head), so no table a peer can fill outlives its seq."""
        head = self.table.head
        for draw in [d for d in self.knocks if d != head]:
            del self.knocks[draw]
        early, self.early_knocks = self.early_knocks, {}
        for (sender, _), msg in early.items():
            if msg["draw"] == head:
                self._on_knock(sender, msg)
            elif not self.table.holds(msg["draw"]):
                self.early_knocks[(sender, msg["seat"])] = msg  # still ahead of us
        seq = self.table.seq
        for n in [n for n in self.promises if n < seq]:
            del self.promises[n]
        for n in [n for n in self.replica.barred if n < seq]:
            del self.replica.barred[n]
        if self.proposal is not None and self.proposal.seq < seq:
            self.proposal = None

    # ------------------------------------------------------------ links and dials

    def _keepalive(self) -> None:
        """Ping every link each PING_EVERY, and close one that said nothing for SILENCE."""
        now = self._now
        for key, link in list(self.links.items()):
            if link.closing:
                continue
            if now - link.heard > config.SILENCE:
                self._close(key, f"no word from the peer for {config.SILENCE:g} s")
                continue
            if now >= link.pinged + config.PING_EVERY:
                link.pinged = now
                self._send(key, {"t": "ping"})
            self._timer(min(link.pinged + config.PING_EVERY, link.heard + config.SILENCE + 0.001))

    def _wanted(self) -> list[tuple[bytes, str, int]]:
        """The seated peers we should hold a link to and dial ourselves: the smaller key
        dials; guests always dial the host; a spectator only the host. Only the address of
        a key that holds a seat is ever dialled (the lobby admits no other, and the host
        records a guest's address from its connection, not from its word). Once the game is
        over, only the peers that have not said they hold its end: a guest whose link
        dropped just after its last move must bring the end to the host, which does not dial
        it (simulator seed 206692: the host waited for ever for the move it never got)."""
        lobby = self.lobby
        if lobby is None or self.gone:
            return []
        seated = lobby.owners()
        final = self.table.seq
        out = []
        for owner, (host, port) in lobby.addresses.items():
            if owner == self.me or owner not in seated:
                continue
            if self.over and self.replica.confirmed.get(owner, -1) >= final:
                continue
            if self.spectator and owner != lobby.host:
                continue
            if owner != lobby.host and self.me > owner and not self.dial_everyone:
                continue  # the other side dials us
            out.append((owner, host, port))
        return out

    def _dial(self) -> None:
        now = self._now
        for owner, host, port in self._wanted():
            # A Dial the shell never answered (a duplicate link it dropped) counts for
            # DIAL_PENDING at most, so a link that drops later is always dialled again.
            pending = self._dialling.get(owner)
            if owner in self.links:
                continue
            if pending is not None and now < pending + config.DIAL_PENDING:
                self._timer(pending + config.DIAL_PENDING)
                continue
            at = self._tried.get(owner, -config.REDIAL_EVERY) + config.REDIAL_EVERY
            if now >= at:
                self._tried[owner] = now
                self._dialling[owner] = now
                self._out.append(Dial(owner, host, port))
                at = now + config.REDIAL_EVERY
            self._timer(at)

    # ------------------------------------------------------------ messages

    def dispatch(self, key: bytes, msg: Any, now: float = 0.0) -> list[Action]:
        """One message as if from `key`, without the link's accounting (rate, faults,
        silence) that `handle` adds: what the tests and the fuzzers feed the handlers."""
        self._begin(now)
        self._dispatch(key, msg)
        return self._end()

    def _dispatch(self, key: bytes, msg: Any) -> None:
        """Hand a peer's message to its handler: first the type (net/messages.py), then
        whether this peer may send it at all (before anything inside it is read), then
        its schema. Each refusal names the peer and what was wrong; the handlers behind
        this are total on messages of their schema (tests/test_hostile_messages.py)."""
        try:
            mt = message_type(msg)
        except MessageError as e:
            self._blame(f"refused from {fingerprint(key)}: {e}")
            return
        why = self._may_not_send(key, mt)
        if why is not None:
            self._blame(f"refused from {fingerprint(key)}: a {mt.name} message {why}")
            return
        try:
            mt.check(msg)
        except MessageError as e:
            self._blame(f"refused from {fingerprint(key)}: {e}")
            return
        getattr(self, HANDLERS[mt.name])(key, msg)

    def _may_not_send(self, key: bytes, mt: MessageType) -> str | None:
        """Why `key` may not send a message of this type to us (None: it may)."""
        lobby = self.lobby
        if mt.sender is Sender.ANYONE:
            return None
        if mt.sender is Sender.SEATED:
            if lobby is None or key not in lobby.owners():
                return "from a peer that holds no seat"
            return None
        if mt.sender is Sender.GUEST:
            return None if lobby is not None and lobby.host == self.me else "is for the host"
        # Sender.HOST: the lobby's host; before we hold a lobby, the peer we dialled for it.
        if lobby is not None:
            return None if key == lobby.host and key != self.me else "from a peer that is not the host"
        link = self.links.get(key)
        if link is None or link.dialled_by != self.me:
            return "from a peer that is not the host"
        return None

    def _on_gossip(self, key: bytes, msg: dict[str, Any]) -> None:
        self._deliver(self.replica.received(key, msg, self._now))
        if msg["t"] == "have":
            self._changed()

    def _on_ping(self, key: bytes, msg: dict[str, Any]) -> None:
        pass  # its arrival is all it says (`handle` notes when a peer was heard)

    # ------------------------------------------------------------ the end

    def _finish(self, stopped: str | None) -> None:
        """The game is over for us: say so, tell everyone what we hold, and stay until every
        seated peer has said it holds the whole log (or LINGER)."""
        if self.over:
            return
        self.over = True
        self.stopped = stopped
        self._broadcast(self.replica.have())
        self._over_at = self._now
        self._leave_at = self._now + (config.LINGER if stopped is None else 1.0)
        self._changed()
        self._linger()

    def _linger_for(self, key: bytes) -> None:
        """A seated peer that does not hold our end linked again while we linger: stay a
        moment more, so that catch-up can give it the end (seed 631998: a partition healed
        0.16 s before LINGER ran out; both sides linked again and the finished peers left
        1.4 ms later, before the `have` of the peer that had been cut off was answered, and it
        kept 120 of the 126 events for good). Bounded: never past twice LINGER after the end."""
        if self._leave_at is None or self._over_at is None or self.stopped is not None or self.lobby is None:
            return
        if key not in self.lobby.owners() or self.replica.confirmed.get(key, -1) >= self.table.seq:
            return
        latest = self._over_at + 2 * config.LINGER
        self._leave_at = max(self._leave_at, min(self._now + config.LINGER_GRACE, latest))
        self._timer(self._leave_at)

    def _linger(self) -> None:
        assert self._leave_at is not None
        final = self.table.seq
        others = (self.lobby.owners() if self.lobby and not self.spectator else set()) - {self.me}
        # A stopped game (a fork, an aborted start) has a peer that will never confirm.
        unconfirmed = {k for k in others if self.replica.confirmed.get(k, -1) < final}
        confirmed = self.stopped is None and not unconfirmed
        if confirmed or self._now >= self._leave_at:
            if self.stopped is None and unconfirmed:
                self._doubt_the_end(unconfirmed)
            self.gone = True
            self._out.append(Done(self.stopped))
        else:
            self._timer(self._leave_at)

    def _doubt_the_end(self, unconfirmed: set[bytes]) -> None:
        """LINGER ran out with peers that never said they hold our end. If they run more than
        half the seats they may have given ours to bots meanwhile (a partition: simulator seed
        102136) and finished another game: ours is then not the end, and we must not say it
        is. Fewer can take no seat over (net/takeover.py), so our end stands."""
        run = self.runners()
        theirs = sum(1 for k in run.values() if k in unconfirmed)
        if 2 * theirs <= self.table.players:
            return
        names = ", ".join(sorted(fingerprint(k) for k in unconfirmed))
        runs = "who runs" if len(unconfirmed) == 1 else "who run"
        self.stopped = (f"{UNCONFIRMED} by {names}, {runs} {theirs} of {self.table.players} "
                        "seats: enough to give this peer's to bots while it was cut off")
        self._say(f"the game ended here, but {self.stopped} (so this result is in doubt)")

    def _stop_for_fork(self) -> None:
        """DESIGN.md: keep both events as the proof, show it, stop the game."""
        fork = self.replica.fork
        assert fork is not None
        msg = self._fork_message()
        self._out.append(KeepFork(fork.seq, fork.first.author, msg["first"], msg["second"]))
        # Every peer must stop, not only those that happened to hold both events (with
        # relays over missing links only, most peers hold one twin each: issue 10, finding D).
        self._broadcast(msg)
        self._finish("fork")

    def _fork_message(self) -> dict[str, Any]:
        fork = self.replica.fork
        assert fork is not None
        first, second = sorted((fork.first.signed, fork.second.signed))  # one proof everywhere
        return {"t": "fork", "first": first, "second": second}

    def _on_fork(self, key: bytes, msg: dict[str, Any]) -> None:
        """Another peer's proof of a fork: two valid events one seat's key signed for one seq
        of this game. Checked like any event, then it stops our game as our own finding would."""
        if self.replica.fork is not None or self.table.genesis is None:
            return
        who, t = fingerprint(key), self.table
        try:
            a, b = decode_event(msg["first"]), decode_event(msg["second"])
        except EventError as e:
            self._blame(f"refused from {who}: a fork proof with an event that is not valid: {e}")
            return
        seat_keys = set(t.keys) | {s.key for s in t.genesis.seats}
        if a.signed == b.signed or (a.game, a.seq, a.author) != (b.game, b.seq, b.author) \
                or a.game != t.game or a.author not in seat_keys:
            self._blame(f"refused from {who}: a fork proof that proves no fork of this game")
            return
        self.replica.fork = Fork(a, b)
        self._changed()

    def _stop_for_disagreement(self) -> None:
        """A seat signed a result our engine does not compute: keep the signed event (the
        proof anyone holding the log can recheck), send it to every peer so that each
        rechecks it and stops as we do, and stop naming the seat and both hashes."""
        d = self.replica.disagreement
        assert d is not None
        if self.over:
            return
        self._out.append(KeepDisagreement(d.seq if d.seq is not None else self.table.seq,
                                          d.event.author, d.event.signed, d.reason))
        self._broadcast({"t": "disagree", "event": d.event.signed})
        self._finish(d.reason)

    def _on_disagree(self, key: bytes, msg: dict[str, Any]) -> None:
        """Another peer's proof that a seat signed a result its engine refused: taken as if
        the event came over the link, so our own table judges it. A proof for a seq we do
        not hold yet waits as any early event does; a valid result is simply taken; one our
        engine refuses too stops us (`Replica.disagreement`)."""
        if self.replica.disagreement is not None or self.replica.fork is not None \
                or self.table.genesis is None:
            return
        try:
            ev = decode_event(msg["event"])
        except EventError as e:
            self._blame(f"refused from {fingerprint(key)}: a disagreement proof that is not an "
                        f"event: {e}")
            return
        if ev.game != self.table.game or ev.kind != RESULT:
            self._blame(f"refused from {fingerprint(key)}: a disagreement proof that is no "
                        "result of this game")
            return
        self._deliver(self.replica.received(key, {"t": "events", "from": ev.seq,
                                                  "items": [msg["event"]]}, self._now))
        self._changed()

    def _pause_notes(self) -> None:
        """Nothing happened for a while: say who the game waits for, and abort a stuck start."""
        assert self._head_at is not None
        note_at = self._head_at + self._noted + config.PAUSE_NOTE_EVERY
        if self._now < note_at:
            self._timer(note_at)
            return
        self._noted = self._now - self._head_at
        self._timer(self._head_at + self._noted + config.PAUSE_NOTE_EVERY)
        self._note_pause(self._noted)

    def _note_pause(self, waited: float) -> None:
        if self.lobby is None:
            return
        if self.table.genesis is None:
            lobby = self.lobby
            self._say(f"waiting for players: {lobby.taken} of {lobby.seats} seats taken, "
                      f"{sum(c.ready for c in lobby.claims.values())} ready")
            return
        seat = self.table.next_author()
        if seat is None or seat in self.players:
            return
        claim = self.lobby.claims.get(seat)
        if claim is not None and claim.owner == self.me:
            return  # one of ours, still being set up
        name = claim.name if claim else f"seat {seat}"
        stage = self.table.stage()
        if stage in CEREMONY_STAGES and waited >= config.SETUP_TIMEOUT:
            self._say(f"the game cannot start: {name} (seat {seat}) did not send its {stage} "
                      f"within {config.SETUP_TIMEOUT:g} s")
            self._finish(f"{name} did not send its {stage}")
            return
        run = self.runners()
        connected = run.get(seat) in self.links
        later = ""
        if not connected and self.lobby.takeover and stage in TAKEOVER_STAGES:
            present = self._present()
            away = sum(1 for owner in run.values() if owner not in present)
            blocked = fair_block(self.table, [s for s, owner in run.items() if owner not in present])
            if blocked is not None:
                later = f"; no bot can take it: {blocked}: the game waits for its player"
            elif 2 * (self.table.players - away) > self.table.players:  # net/takeover.py
                later = f"; the others may let a bot take the seat after {self.lobby.takeover} s away"
            else:
                later = ("; too few seats are here to let a bot take it (more than half must "
                         "stay): the game waits for its player")
        self._say(f"waiting for {name} (seat {seat}): "
                  + ("thinking" if connected else "disconnected")
                  + f" for {waited:.0f} s{later}")
