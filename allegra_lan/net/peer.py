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
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable

from nacl.signing import SigningKey

from ..bots.base import Bot
from ..bots.registry import make_bot
from ..log.ceremony import commitment
from ..log.codec import encode
from ..log.envelope import Event, sign_event
from ..log.identity import Identity, fingerprint
from ..log.knock import KnockError, check_answer, sign_knock
from ..log.takeover import ConsentError, check_consent, sign_consent
from ..rules import (
    Decision, Give, Move, State, legal_moves, ruleset_for, ruleset_from_dict, to_act, view,
)
from ..table import TAKEOVER, Refused, Table, move_body
from ..text import one_line
from .actions import (
    Action, Changed, Close, Dial, Done, KeepFork, Note, Persist, Rewrite, SaveSeats, Send, Timer,
)
from .gate import MAX_WATCHERS
from .lobby import Claim, Lobby, LobbyError
from .messages import MessageError, MessageType, Sender, message_type
from .seats_file import SeatsFile
from .sync import Replica
from .takeover import (
    ASK_AGAIN, GIVE_UP, Promise, Proposal, parse_ask, proposer, runners, seats_to_take, why_not,
)

KNOCK_WINDOW = 3.0  # seconds the active seat waits for knocks (ALLEGRA R16)
SETUP_TIMEOUT = 30.0  # seconds the ceremony waits for a seat before the start is aborted
PAUSE_NOTE_EVERY = 5.0  # seconds between "waiting for ..." notes while the game is paused
REDIAL_EVERY = 0.5  # seconds between attempts to reach a seated peer we have no link to
HOST_TIMEOUT = 30.0  # seconds a joining peer waits for the host's lobby
LINGER = 10.0  # at most this long a finished peer waits for its peers to hold the whole log
PING_EVERY = 2.0  # seconds between pings on a link
SILENCE = 10.0  # seconds without a frame after which a link is taken for dead (a pulled cable
# or a machine switched off sends no FIN: without this its seat would never count as away)
MAX_LINK_FAULTS = 20  # refused messages after which a connection is closed (a peer that only
# sends garbage would otherwise fill every screen with lines; an honest peer sends none)
TAKEOVER_BOT = "greedy"  # plays a taken seat that was a person's (a bot's seat keeps its bot)
RATE = 2000.0  # messages a second a peer may send on average (a busy bot table sends ~500)
BURST = 4000.0  # and at once; more, and the link is dropped and the peer named
MAX_FAULTS = 1000  # refusals kept for the players to read (the oldest go first)
MAX_ACTS = 64  # events one tick may write (a peer playing every seat of a ceremony writes 3n)

Entropy = Callable[[int], bytes]


class JoinError(Exception):
    """Joining failed; the message is one line for the player."""


class ResumeError(Exception):
    """A game that cannot be resumed from this file; the message says why."""


@dataclass(frozen=True)
class SeatSpec:
    """A seat a process will play: the player's name, and a bot's name (its key is made
    here) or None for the person at this process's terminal (who plays with its own key,
    and says when they are ready)."""

    name: str
    bot: str | None


@dataclass
class SeatPlayer:
    """A seat this peer writes for: its key, its bot's name (None: the person at this
    peer's terminal client decides), and its seed nonce for the ceremony."""

    seat: int
    identity: Identity
    bot: str | None
    nonce: bytes


@dataclass
class LinkState:
    """What the protocol knows of one authenticated connection."""

    dialled_by: bytes  # the key of the side that opened the connection
    # Where the connection comes from (the socket's peer address): the host seats a guest
    # at this IP, never at one the guest names (a stranger could name any).
    remote: tuple[str, int] | None
    opened: float
    heard: float  # when its last frame arrived (or the link opened)
    pinged: float
    spoke: bool = False  # whether any frame came yet
    faults: int = 0  # messages of this connection we refused
    allowance: float = BURST  # a token bucket: no peer floods us
    last: float = 0.0
    closing: bool = False  # a Close was asked for: nothing more from it is read


@dataclass
class Joining:
    """A guest (or a watcher) on its way to a table: the host's address, the seats it asks
    for, and how far it got."""

    host: tuple[str, int]
    claims: list[tuple[SeatSpec, Identity]]
    want_seat: int | None
    watch: bool
    dialled: float | None = None
    requested: bool = False


class Recent(list[str]):
    """A list that keeps only its last `cap` items: what peers can make us note (refusals)
    must not grow without end, while the players still read the latest."""

    def __init__(self, cap: int) -> None:
        super().__init__()
        self.cap = cap

    def append(self, item: str) -> None:
        super().append(item)
        if len(self) > self.cap:
            del self[: len(self) - self.cap]


# Message type -> the Peer method that handles it (its schema: net/messages.py).
HANDLERS: dict[str, str] = {
    "have": "_on_gossip", "events": "_on_gossip", "refused": "_on_gossip",
    "lobby": "_on_lobby", "sit": "_on_request", "ready": "_on_request",
    "lobby_error": "_on_lobby_error", "knock": "_on_knock", "ping": "_on_ping",
    "takeover_ask": "_on_takeover", "takeover_yes": "_on_takeover",
    "takeover_no": "_on_takeover", "takeover_off": "_on_takeover",
}


class Peer:
    """A peer's protocol. Build it with `host`, `guest`, `watcher` or `resume`."""

    def __init__(self, identity: Identity, *, table_id: bytes, entropy: Entropy,
                 pin: str | None = None, pace: float = 0.0) -> None:
        self.identity = identity
        self.me = identity.public
        self.table_id = table_id
        self.pin = pin  # kept only to be written in the .seats file (the shell checks PINs)
        self.entropy = entropy
        self.pace = pace  # seconds each of our bots waits before it moves
        self.make_bot: Callable[[str, bytes], Bot] = make_bot  # a test may play its own bots
        self.replica = Replica(Table())
        self.lobby: Lobby | None = None
        self.links: dict[bytes, LinkState] = {}
        self.players: dict[int, SeatPlayer] = {}
        self.local: dict[bytes, tuple[Identity, str | None]] = {}  # seat keys played here
        self.address: tuple[str, int] | None = None  # where we accept connections
        self.knocks: dict[bytes, dict[int, bytes | None]] = {}  # draw id -> seat -> knock or None
        # Answers to a draw we do not hold yet (it may be on its way), unchecked, so at most
        # one per sender and seat, judged when that draw becomes the head (`_on_knock`).
        self.early_knocks: dict[tuple[bytes, int], dict[str, Any]] = {}
        self.faults: list[str] = Recent(MAX_FAULTS)  # the latest refusals, for the players
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
        self._dialling: set[bytes | None] = set()
        self._tried: dict[bytes, float] = {}  # peer -> when we last dialled it
        self._head_at: float | None = None  # when the log last grew (or we started)
        self._noted = 0.0  # seconds of the current pause already noted
        self._now = 0.0
        self._out: list[Action] = []
        self._wake: float | None = None
        self._resume_notes: list[Action] = []
        self._decided_in_knock_window = False  # the bot move being published chose from knocks

    # ------------------------------------------------------------ construction

    @classmethod
    def host(cls, identity: Identity, *, variant: str, players: int, table_name: str,
             seats: list[SeatSpec], table_id: bytes, entropy: Entropy, pin: str | None = None,
             spectators: bool = False, takeover: int = 0, pace: float = 0.0,
             options: dict[str, Any] | None = None) -> "Peer":
        """Open a table; this peer plays `seats` (seat 0 first, with the node's own key);
        `takeover`: seconds a seat's peer may be away before the others may let a bot play
        it (0: never); `options`: ruleset fields other than the variant's defaults (e.g.
        {"rounds": 1}). RulesetError / UnknownBot name a bad variant, option, size or bot."""
        ruleset = ruleset_from_dict({**ruleset_for(variant).to_dict(), **(options or {})})
        ruleset.check_players(players)
        peer = cls(identity, table_id=table_id, entropy=entropy, pin=pin, pace=pace)
        lobby = Lobby(table_id, table_name, ruleset.to_dict(), players, host=identity.public,
                      pin=pin is not None, spectators=spectators, takeover=takeover)
        peer.lobby = lobby
        for seat, spec in enumerate(seats):
            ident = identity if seat == 0 else peer._new_identity()
            peer.local[ident.public] = (ident, _bot_name(spec.bot))
            lobby.sit(seat, Claim(spec.name, ident.public, identity.public, spec.bot,
                                  spec.bot is not None))
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
            _bot_name(spec.bot)
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

    def runners(self) -> dict[int, bytes]:
        """seat -> the peer that writes for it."""
        return {} if self.lobby is None else runners(self.lobby, self.table)

    def finished(self) -> bool:
        """The game reached its end (every round played)."""
        state = self.table.state
        return state is not None and to_act(state) is None

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
        peers, and anyone at a table whose host allowed (read-only) spectators."""
        if self.table.genesis is None or self.lobby is None or self.lobby.spectators:
            return None
        return self.lobby.owners()

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
        self._dialling.discard(key)
        if dialled_by == self.me and self.joining is not None and self.lobby is None:
            self._dialling.discard(None)
        if self.refusal(key) is not None:  # the shell asks first; this is the belt
            self._out.append(Close(key, "too many peers without a seat"))
            return self._end()
        replaced = key in self.links
        self.links[key] = LinkState(dialled_by, remote, opened=now, heard=now, pinged=now, last=now)
        if not replaced:
            self._say(f"connected to {fingerprint(key)}")
        self._deliver(self.replica.connected(key))
        if self.lobby is not None and self.lobby.host == self.me:
            self._send(key, self.lobby.to_msg())
        self._changed()
        return self._end()

    def disconnected(self, now: float, key: bytes, why: str) -> list[Action]:
        self._begin(now)
        if self.links.pop(key, None) is None:
            return self._end()
        self.replica.disconnected(key)
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
        self._dialling.discard(key)
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
        link.allowance = min(BURST, link.allowance + (now - link.last) * RATE) - 1
        link.last = now
        if link.allowance < 0:
            self._close(key, f"more than {BURST:g} messages at once ({RATE:g} a second allowed)",
                        blame=True)
            return self._end()
        blamed = self.fault_count
        self._dispatch(key, msg)
        link.faults += self.fault_count - blamed
        if link.faults >= MAX_LINK_FAULTS and not link.closing:
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
        if self._leave_at is not None:
            self._linger()
            return self._end()
        self._dial()
        if self.joining is not None and self.lobby is None:
            self._wait_for_host()
            return self._end()
        if self.replica.fork is not None:
            self._stop_for_fork()
            return self._end()
        for _ in range(MAX_ACTS):
            if not self._act():
                break
        if self.finished():
            self._finish(None)
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
        self.local[ident.public] = (ident, _bot_name(name))
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
        out = self._out
        if self._wake is not None:
            out.append(Timer(self._wake))
        self._out = []
        self._wake = None
        return out

    def _timer(self, at: float | None) -> None:
        if at is not None and (self._wake is None or at < self._wake):
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
        other events are a function of its seat's key and the log before them, and other
        peers' events are held by their authors: neither needs our fsync."""
        sp = next((p for p in self.players.values() if p.identity.public == ev.author), None)
        if sp is None:
            return False
        if sp.bot is None or ev.kind in (TAKEOVER, "genesis"):
            return True
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
            if now - link.heard > SILENCE:
                self._close(key, f"no word from the peer for {SILENCE:g} s")
                continue
            if now >= link.pinged + PING_EVERY:
                link.pinged = now
                self._send(key, {"t": "ping"})
            self._timer(min(link.pinged + PING_EVERY, link.heard + SILENCE + 0.001))

    def _wanted(self) -> list[tuple[bytes, str, int]]:
        """The seated peers we should hold a link to and dial ourselves: the smaller key
        dials; guests always dial the host; a spectator only the host. Only the address of
        a key that holds a seat is ever dialled (the lobby admits no other, and the host
        records a guest's address from its connection, not from its word)."""
        lobby = self.lobby
        if lobby is None or self.over:
            return []
        seated = lobby.owners()
        out = []
        for owner, (host, port) in lobby.addresses.items():
            if owner == self.me or owner not in seated:
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
            if owner in self.links or owner in self._dialling:
                continue
            at = self._tried.get(owner, -REDIAL_EVERY) + REDIAL_EVERY
            if now >= at:
                self._tried[owner] = now
                self._dialling.add(owner)
                self._out.append(Dial(owner, host, port))
                at = now + REDIAL_EVERY
            self._timer(at)

    def _wait_for_host(self) -> None:
        j = self.joining
        assert j is not None
        if j.dialled is None:
            j.dialled = self._now
            self._dialling.add(None)
            self._out.append(Dial(None, *j.host))
        if self._now >= j.dialled + HOST_TIMEOUT:
            self._fail_join(f"the host at {j.host[0]}:{j.host[1]} sent no lobby within "
                            f"{HOST_TIMEOUT:g} s")
        else:
            self._timer(j.dialled + HOST_TIMEOUT)

    def _fail_join(self, why: str) -> None:
        self.join_error = why
        self.stopped = why
        self.over = self.gone = True
        self._out.append(Done(why))

    def _join(self, lobby: Lobby) -> None:
        """The host's lobby came: ask for our seats (or, watching, check we may)."""
        j = self.joining
        assert j is not None
        j.requested = True
        if j.watch:
            if not lobby.spectators:
                self._fail_join("this table's host does not allow spectators")
            else:
                self._say("watching; every event is checked as it arrives")
            return
        free = lobby.free_seats()
        if j.want_seat is not None and j.want_seat not in free:
            self._fail_join(f"seat {j.want_seat} is not free (free: "
                            f"{', '.join(map(str, free)) or 'none'})")
            return
        if len(free) < len(j.claims):
            self._fail_join(f"the table has {len(free)} free seats, not {len(j.claims)}")
            return
        request = []
        for i, (spec, ident) in enumerate(j.claims):
            self.local[ident.public] = (ident, spec.bot)
            # The host gives the first free seat to a claim without a seat number.
            seat = j.want_seat if i == 0 else None
            request.append([seat, Claim(spec.name, ident.public, self.me, spec.bot,
                                        spec.bot is not None).to_msg()])
        address = self.address or ("0.0.0.0", 0)
        self._send(lobby.host, {"t": "sit", "claims": request, "address": list(address)})
        if all(spec.bot for spec, _ in j.claims):
            self._send(lobby.host, {"t": "ready", "ready": True})  # a person says so in the client
        self._say(f"joining {lobby.name!r} ({lobby.taken} of {lobby.seats} seats taken)")

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
        who = fingerprint(key)
        try:
            mt = message_type(msg)
        except MessageError as e:
            self._blame(f"refused from {who}: {e}")
            return
        why = self._may_not_send(key, mt)
        if why is not None:
            self._blame(f"refused from {who}: a {mt.name} message {why}")
            return
        try:
            mt.check(msg)
        except MessageError as e:
            self._blame(f"refused from {who}: {e}")
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
        self._deliver(self.replica.received(key, msg))
        if msg["t"] == "have":
            self._changed()

    def _on_lobby_error(self, key: bytes, msg: dict[str, Any]) -> None:
        self._say(f"the host refused our request: {msg['reason'][:200]}")

    def _on_ping(self, key: bytes, msg: dict[str, Any]) -> None:
        pass  # its arrival is all it says (`handle` notes when a peer was heard)

    def _on_lobby(self, key: bytes, msg: dict[str, Any]) -> None:
        """The host's lobby (a guest's only source of seats and addresses). Once the game
        started, its seats are the log's: a lobby that changes them is refused."""
        who = fingerprint(key)
        try:
            lobby = Lobby.from_msg(msg)
        except LobbyError as e:
            self._blame(f"refused from {who}: {e}")
            return
        if lobby.table_id != self.table_id:
            self._blame(f"refused from {who}: a lobby of another table")
            return
        if lobby.host != key:
            self._blame(f"refused from {who}: a lobby whose host is another peer")
            return
        if self.table.genesis is not None and self.lobby is not None and \
                _seating(lobby) != _seating(self.lobby):
            self._blame(f"refused from {who}: a lobby that changes the seats after the start")
            return
        self.lobby = lobby
        seat0 = lobby.claims.get(0)
        self.replica.genesis_by = seat0.key if seat0 is not None else None
        if self.joining is not None and not self.joining.requested:
            self._join(lobby)
        self._changed()

    def _on_request(self, key: bytes, msg: dict[str, Any]) -> None:
        """A guest's `sit` or `ready` (to us, the host). A sit is taken whole or not at
        all, and the guest is seated at the IP address its connection comes from."""
        lobby = self.lobby
        assert lobby is not None  # Sender.GUEST: we are the host
        if self.table.genesis is not None:
            if msg["t"] == "sit":
                self._send(key, {"t": "lobby_error", "reason": "the game has started: you may only watch"})
            return
        try:
            if msg["t"] == "sit":
                self._sit(lobby, key, msg)
            else:
                lobby.set_ready(key, msg["ready"])
        except LobbyError as e:
            self._send(key, {"t": "lobby_error", "reason": str(e)[:200]})
            self._say(f"lobby request from {fingerprint(key)} refused: {e}")
            return
        self._broadcast(lobby.to_msg())
        self._changed()

    def _sit(self, lobby: Lobby, key: bytes, msg: dict[str, Any]) -> None:
        link = self.links.get(key)
        if link is None or link.remote is None:
            raise LobbyError("the host cannot tell which address this peer connects from")
        before = dict(lobby.claims)
        try:
            for seat, c in msg["claims"]:
                claim = Claim.from_msg(c)
                if claim.owner != key:
                    raise LobbyError("a peer may only claim seats for itself")
                if seat is None:
                    free = lobby.free_seats()
                    if not free:
                        raise LobbyError("the table is full")
                    seat = free[0]
                lobby.sit(seat, claim)
        except LobbyError:
            lobby.claims = before
            raise
        lobby.addresses[key] = (link.remote[0], msg["address"][1])

    def _on_knock(self, key: bytes, msg: dict[str, Any]) -> None:
        """A seat's signed knock or pass for a draw. The signature proves the seat, so any
        seated peer may relay it: each new answer goes on to every other link (a missing
        link must not cost a knocker its chance); the first answer of a seat counts.

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
        d = knock_window(t.state)
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
        self._broadcast(msg, but=key)
        self._changed()

    # ------------------------------------------------------------ playing

    def _sign(self, seat: int, kind: str, body: dict[str, Any]) -> bytes:
        t = self.table
        game = self.table_id if t.game is None else t.game
        return sign_event(self.players[seat].identity.key, game=game, seq=t.seq, prev=t.head,
                          kind=kind, body=body).signed

    def _publish(self, signed: bytes) -> None:
        self._deliver(self.replica.publish(signed))

    def _bot(self, sp: SeatPlayer, purpose: str, at: bytes) -> Bot:
        """The seat's bot for one decision, seeded from the seat's secret key, the game and
        the decision (`at`: the seq or draw), so the same log gives the same choice after
        a restart."""
        assert sp.bot is not None
        game = self.table.game or self.table_id
        seed = hashlib.blake2b(purpose.encode() + b"\0" + game + at, key=bytes(sp.identity.key),
                               digest_size=32, person=b"allegra-lan-bot").digest()
        return self.make_bot(sp.bot, seed)

    def _act(self) -> bool:
        """Write the next event of one of our seats if it is theirs to write now; whether
        one was written (the caller looks again: our next seat may follow at once)."""
        t = self.table
        self._decided_in_knock_window = False
        if t.genesis is None:
            lobby = self.lobby
            if lobby is not None and lobby.host == self.me and lobby.all_ready():
                self._claim_seats()
                self._publish(self._sign(0, "genesis", lobby.genesis().body()))
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
        if stage == "play" and sp.bot is None:
            return False  # a person's move: the terminal client calls `play_move`
        if stage == "accept":
            self._publish(self._sign(seat, "accept", {}))
        elif stage == "commit":
            self._publish(self._sign(seat, "commit", {"commit": commitment(sp.nonce)}))
        elif stage == "reveal":
            self._publish(self._sign(seat, "reveal", {"nonce": sp.nonce}))
        elif stage == "play":
            return self._play(seat)
        else:
            return False
        return True

    def _play(self, seat: int) -> bool:
        """Our bot's move, once `pace` has passed since the log last grew and, while the
        card it drew is open for knocks, every other seat answered or KNOCK_WINDOW passed."""
        state = self.table.state
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
            deadline = ready_at + KNOCK_WINDOW
            if not all(s in knocks for s in others) and self._now < deadline:
                self._timer(deadline)
                return False
            offered = [m for m in legal if not isinstance(m, Give) or knocks.get(m.to)]
        sp = self.players[seat]
        at = self.table.seq.to_bytes(8, "big") + self.table.head
        move = self._bot(sp, "move", at).choose(view(state, seat), offered)
        self._move(seat, move, in_window=offered is not legal)
        return True

    def _move(self, seat: int, move: Move, *, in_window: bool = False) -> None:
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

    def _answer_knocks(self) -> None:
        """ALLEGRA R16: after another seat's deck draw, each of our bots knocks or passes."""
        state = self.table.state
        if state is None:
            return
        d = knock_window(state)
        if d is None:
            return
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        for seat, sp in self.players.items():
            if seat == d.seat or seat in answered or sp.bot is None:
                continue
            self._knock(seat, self._bot(sp, "knock", draw).knocks(view(state, seat)))

    def _knock(self, seat: int, wants: bool) -> None:
        sp = self.players[seat]
        draw = self.table.head
        answered = self.knocks.setdefault(draw, {})
        if seat in answered:
            return
        k = sign_knock(sp.identity.key, self.table.game or self.table_id, draw, wants)
        answered[seat] = k if wants else None
        self._broadcast({"t": "knock", "seat": seat, "draw": draw, "k": k})
        self._changed()

    def _claim_seats(self) -> None:
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

    # ------------------------------------------------------------ the end

    def _finish(self, stopped: str | None) -> None:
        """The game is over for us: say so, tell everyone what we hold, and stay until every
        seated peer has said it holds the whole log (or LINGER)."""
        if self.over:
            return
        self.over = True
        self.stopped = stopped
        self._broadcast(self.replica.have())
        self._leave_at = self._now + (LINGER if stopped is None else 1.0)
        self._changed()
        self._linger()

    def _linger(self) -> None:
        assert self._leave_at is not None
        final = self.table.seq
        others = (self.lobby.owners() if self.lobby and not self.spectator else set()) - {self.me}
        # A stopped game (a fork, an aborted start) has a peer that will never confirm.
        confirmed = self.stopped is None and all(
            self.replica.confirmed.get(k, -1) >= final for k in others)
        if confirmed or self._now >= self._leave_at:
            self.gone = True
            self._out.append(Done(self.stopped))
        else:
            self._timer(self._leave_at)

    def _stop_for_fork(self) -> None:
        """DESIGN.md: keep both events as the proof, show it, stop the game."""
        fork = self.replica.fork
        assert fork is not None
        self._out.append(KeepFork(fork.seq, fork.first.author, fork.first.signed, fork.second.signed))
        self._finish("fork")

    def _pause_notes(self) -> None:
        """Nothing happened for a while: say who the game waits for, and abort a stuck start."""
        assert self._head_at is not None
        note_at = self._head_at + self._noted + PAUSE_NOTE_EVERY
        if self._now < note_at:
            self._timer(note_at)
            return
        self._noted = self._now - self._head_at
        self._timer(self._head_at + self._noted + PAUSE_NOTE_EVERY)
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
        if stage in ("accept", "commit", "reveal") and waited >= SETUP_TIMEOUT:
            self._say(f"the game cannot start: {name} (seat {seat}) did not send its {stage} "
                      f"within {SETUP_TIMEOUT:g} s")
            self._finish(f"{name} did not send its {stage}")
            return
        connected = self.runners().get(seat) in self.links
        later = ""
        if not connected and self.lobby.takeover and stage == "play":
            later = f"; the others may let a bot take the seat after {self.lobby.takeover} s away"
        self._say(f"waiting for {name} (seat {seat}): "
                  + ("thinking" if connected else "disconnected")
                  + f" for {waited:.0f} s{later}")

    # ------------------------------------------------------------ takeovers

    def _present(self) -> set[bytes]:
        """The peers at the table: linked and heard from within SILENCE (a peer that
        connects and then says nothing is as good as away)."""
        now = self._now
        return {self.me} | {k for k in self.links if now - self.heard.get(k, -SILENCE) <= SILENCE}

    def _consider_takeover(self) -> None:
        """Propose, ask again or give up a takeover as its time comes."""
        lobby, table = self.lobby, self.table
        if lobby is None or not lobby.takeover or self.spectator or table.stage() != "play":
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
            silent = [self.heard[k] + SILENCE for k in self.links if k in self.heard]
            if silent:
                self._timer(min(silent) + 0.001)
            return
        since = max(self.heard.setdefault(run[s], now) for s in taken)  # their last word
        due = max(since + lobby.takeover, self.retry_at)
        if now < due:
            self._timer(due)
            return
        self._propose(taken, now)
        self._timer(now + ASK_AGAIN)

    def _propose(self, taken: list[int], now: float) -> None:
        table = self.table
        assert table.game is not None and self.lobby is not None
        idents = {s: self._new_identity() for s in taken}
        seats = [(s, idents[s].public) for s in taken]
        stay = [s for s in range(table.players) if s not in taken]
        p = Proposal(table.seq, table.head, seats, idents, stay, started=now, asked=now)
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

    def _seat_names(self, seats: list[int]) -> str:
        g = self.table.genesis
        return ", ".join(f"{g.seats[s].name} (seat {s})" if g else f"seat {s}" for s in seats)

    def _complete_takeover(self) -> None:
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
            bot = claim.bot if claim is not None and claim.bot else TAKEOVER_BOT
            self.local[ident.public] = (ident, bot)
            self.players[seat] = SeatPlayer(seat, ident, bot, self.entropy(32))
        self._out.append(SaveSeats(self.seats_file()))  # the new keys are on disk first
        signed = sign_event(self.players[author].identity.key, game=table.game, seq=p.seq,
                            prev=p.prev, kind=TAKEOVER, body=p.body()).signed
        self._publish(signed)

    def _call_off(self, why: str, p: Proposal | None = None) -> None:
        p = p or self.proposal
        if p is None:
            return
        self.proposal = None
        self.replica.barred.pop(p.seq, None)
        self._broadcast({"t": "takeover_off", "seq": p.seq})
        self.retry_at = self._now + (self.lobby.takeover if self.lobby else 0)
        self._say(f"no takeover of {self._seat_names([s for s, _ in p.seats])}: {why}")

    def _peer_back(self, key: bytes) -> None:
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

    def _send_consent(self, key: bytes, promise: Promise) -> None:
        table = self.table
        taken = {s for s, _ in promise.seats}
        assert table.game is not None
        signs = [[s, sign_consent(sp.identity.key, table.game, promise.seq, promise.prev,
                                  list(promise.seats))]
                 for s, sp in sorted(self.players.items())
                 if s not in taken and table.keys[s] == sp.identity.public]
        self._send(key, {"t": "takeover_yes", "seq": promise.seq, "signs": signs})

    def _on_takeover(self, key: bytes, msg: dict[str, Any]) -> None:
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
            self._complete_takeover()
        elif t == "takeover_no":
            if self.proposal is not None and self.proposal.seq == seq:
                self._call_off(f"{who} said no: {msg['reason'][:120]}")
        elif t == "takeover_off":
            promise = self.promises.get(seq)
            if promise is not None and promise.proposer == key:
                del self.promises[seq]
                self.replica.barred.pop(seq, None)
                self._broadcast(self.replica.have())  # a move we held back may come again


def knock_window(state: State) -> Decision | None:
    """The active seat's decision while the card it drew from the deck is open for knocks
    (ALLEGRA R16: it may give that card away), else None."""
    d = to_act(state)
    if d is None or d.kind != "play" or not any(isinstance(m, Give) for m in legal_moves(state)):
        return None
    return d


def _seating(lobby: Lobby) -> tuple[Any, ...]:
    """What of a lobby the game's log fixes at the start: the table, the rules, the seats."""
    return (lobby.table_id, lobby.name, lobby.seats, lobby.host, lobby.spectators, lobby.takeover,
            sorted((s, c.name, c.key, c.owner, c.bot) for s, c in lobby.claims.items()))


def _bot_name(name: str | None) -> str | None:
    """A bot's name, checked (UnknownBot lists the names there are), or None: a person."""
    if name is not None:
        make_bot(name, bytes(32))
    return name


__all__ = ["Peer", "SeatSpec", "SeatPlayer", "LinkState", "JoinError", "ResumeError", "HANDLERS",
           "KNOCK_WINDOW", "REDIAL_EVERY", "knock_window"]
