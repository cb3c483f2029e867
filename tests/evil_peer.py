"""A misbehaving peer for the fault tests: a real `Node` on real TCP that cheats on purpose.

The evil peer joins a table like any guest (handshake, lobby, seat, mesh, gossip) and
plays its seat with a bot through the node's own code, so everything it sends is the
real protocol. An `Attack` picks one moment (usually the evil seat's first move of the
play) and sends something bad to the honest peers there: before its honest event, or
instead of it. The honest peers are untouched `run_host` / `run_guest` nodes; the tests
look at what they refused, what they wrote to disk and whether they finished.

Bad events are sent as `events` messages that start with the last few events the evil
peer holds. An honest peer that already holds them skips them (same bytes), one that
lags takes them first; either way it judges the bad event against the very seq it was
made for, so the reason it gives does not depend on which packet won a race.

Everything binds to 127.0.0.1; nothing is advertised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import trio

from allegra_lan.bots.base import Bot
from allegra_lan.log.envelope import Event, decode_event, sign_event
from allegra_lan.log.identity import Identity, fingerprint
from allegra_lan.log.knock import sign_knock
from allegra_lan.net.framing import (
    HEADER, MAX_FRAME, encode_frame,
)
from allegra_lan.net.actions import Action, Send
from allegra_lan.net.lobby import Claim, Lobby
from allegra_lan.net.node import Node
from allegra_lan.net.peer import Peer as Protocol
from allegra_lan.net.peer import SeatSpec
from allegra_lan.net.session import run_guest, run_host
from allegra_lan.rules import (
    DrawFromDeck, Give, IllegalMove, Move, State, apply, legal_moves, move_from_dict, to_act,
)
from allegra_lan.rules.moves import Discard, PeekCard, Place, Slot, TurnUp
from allegra_lan.table import SETUP_KINDS, move_body
from allegra_lan.tools.verify import Verdict, verify_file

LOOPBACK = "127.0.0.1"
CONTEXT = 8  # held events sent ahead of a bad one, so a lagging peer judges it at its own seq
EVIL_GRACE = 0.5  # seconds the evil peer may take to wind down once the honest peers are done


@dataclass
class Sent:
    """One bad thing the evil peer sent: what, and the signed event when it was one."""

    label: str
    signed: bytes | None = None


class Attack:
    """One misbehaviour. `before` runs when the evil node is about to publish one of its own
    events and says whether the honest event still goes out; `after` runs once it went out;
    `knock` may replace the evil seats' knocks. `done` stops the attack after one strike."""

    def __init__(self) -> None:
        self.done = False
        self.sent: list[Sent] = []
        self.struck_at: int | None = None  # the seq the evil peer stood at when it first struck
        self.struck_time: float | None = None  # and when (trio clock)

    def strike(self, seq: int) -> None:
        if self.struck_at is None:
            self.struck_at = seq
            self.struck_time = trio.current_time()

    holds_sit = False  # whether `before_sit` runs before the honest sit goes out

    def before(self, node: "EvilPeer", ev: Event) -> bool:
        return True

    def after(self, node: "EvilPeer", ev: Event) -> None:
        return None

    def knock(self, node: "EvilPeer", active: int, seat: int, draw: bytes) -> bytes | None:
        """A forged knock to send for `seat` instead of its answer to `draw` (a deck draw by
        seat `active`), or None to answer honestly."""
        return None

    async def before_sit(self, shell: "EvilNode") -> None:
        """Runs in the lobby (when `holds_sit`), before the evil guest's honest sit and ready."""
        return None

    def bad_events(self) -> list[bytes]:
        return [s.signed for s in self.sent if s.signed is not None]


def meshed(node: Protocol) -> bool:
    """The peer holds a link to every other seated peer. The play may begin before the mesh
    is whole, and a strike must reach every honest peer straight from the evil one."""
    return node.lobby is not None and all(
        owner in node.links for owner in node.lobby.owners() - {node.me})


def is_play_event(node: Protocol, ev: Event) -> bool:
    """A move of the play (not the genesis or the ceremony) by one of the peer's seats, sent
    while the mesh is whole."""
    return ev.kind not in SETUP_KINDS and node.table.stage() == "play" and meshed(node)


class EvilPeer(Protocol):
    """The evil guest's protocol object: the real `Peer`, with the attack's hooks where it
    publishes its events and answers knocks. What it sends goes out through its shell's
    actions like any peer's; raw bytes through the shell's `send_raw` hook."""

    attack: Attack
    shell: "EvilNode | None" = None
    held: Lobby | None = None  # the lobby whose honest sit waits for `before_sit`

    # ------------------------------------------------------------ sending bad things

    def seat(self) -> int:
        (seat,) = self.players  # the evil peer plays exactly one seat
        return seat

    def sign_as(self, *, seq: int, prev: bytes, kind: str, body: dict[str, Any],
                identity: Identity | None = None) -> bytes:
        """An event validly signed by the evil seat (or `identity`), with any seq and prev."""
        ident = identity or self.players[self.seat()].identity
        game = self.table.game or self.table_id
        return sign_event(ident.key, game=game, seq=seq, prev=prev, kind=kind, body=body).signed

    def inject(self, label: str, signed: bytes, *, also: Sequence[bytes] = ()) -> None:
        """Send `signed` to every peer, after the last CONTEXT events this peer holds and
        `also` (its own next events, not yet published)."""
        start = max(0, self.table.seq - CONTEXT)
        items = [e.signed for e in self.table.events[start:]] + list(also) + [signed]
        self.attack.sent.append(Sent(label, signed))
        self.send_all({"t": "events", "from": start, "items": items})

    def send_all(self, msg: dict[str, Any]) -> None:
        self._broadcast(msg)

    def send_raw(self, label: str, data: bytes) -> None:
        """Bytes written to every link's socket as they are (a header that lies, a body that
        is not msgpack), through the shell's hook, ahead of what this input still sends."""
        self.attack.sent.append(Sent(label))
        assert self.shell is not None
        for key in self.links:
            self.shell.send_raw(key, data)

    @property
    def silent(self) -> bool:
        return self.shell is not None and self.shell.silent

    @silent.setter
    def silent(self, value: bool) -> None:
        assert self.shell is not None
        self.shell.silent = value

    # ------------------------------------------------------------ the protocol's hooks

    def _publish(self, signed: bytes) -> None:
        ev = decode_event(signed)
        attack = self.attack
        if not attack.done and not attack.before(self, ev):
            return
        super()._publish(signed)
        if not attack.done:
            attack.after(self, ev)

    def _act(self) -> bool:
        # Once the genesis exists, write nothing until linked to every seated peer, so that
        # a strike in the ceremony reaches every honest peer from the evil one itself.
        if self.table.genesis is not None and not meshed(self):
            return False
        return super()._act()

    def _answer_knocks(self) -> None:
        """Let the attack answer a draw with a forged knock instead of the honest answer."""
        state = self.table.state
        d = to_act(state) if state is not None and not self.attack.done else None
        if state is not None and d is not None and d.kind == "play" \
                and any(isinstance(m, Give) for m in legal_moves(state)):
            draw = self.table.head
            answered = self.knocks.setdefault(draw, {})
            for seat in self.players:
                if seat == d.seat or seat in answered:
                    continue
                forged = self.attack.knock(self, d.seat, seat, draw)
                if forged is not None:
                    answered[seat] = forged
                    self._broadcast({"t": "knock", "seat": seat, "draw": draw, "k": forged})
        super()._answer_knocks()

    def _join(self, lobby: Lobby) -> None:
        if self.attack.holds_sit and self.held is None:
            self.held = lobby  # `run_evil_guest` runs before_sit, then `sit_now`
            assert self.joining is not None
            self.joining.requested = True
            return
        super()._join(lobby)

    def sit_now(self, now: float) -> list[Action]:
        """The honest sit and ready that `before_sit` held back."""
        self._begin(now)
        assert self.held is not None and self.lobby is not None
        assert self.joining is not None and self.address is not None
        (spec, ident), = self.joining.claims
        self.local[ident.public] = (ident, spec.bot)
        claim = Claim(spec.name, ident.public, self.me, spec.bot, True)
        self._send(self.lobby.host, {"t": "sit", "claims": [[self.joining.want_seat, claim.to_msg()]],
                                     "address": [LOOPBACK, self.address[1]]})
        self._send(self.lobby.host, {"t": "ready", "ready": True})
        return self._end()


class EvilNode(Node):
    """The evil peer's shell: a plain Node, but once `silent` nothing more goes out."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope = trio.CancelScope()
        self.silent = False  # once set, nothing more goes out (Silent)

    def _carry_out(self, actions: list[Action]) -> None:
        if self.silent:  # read and dropped: the sockets stay open, and quiet
            actions = [a for a in actions if not isinstance(a, Send)]
        super()._carry_out(actions)

    def send_raw(self, key: bytes, frame: bytes) -> None:
        if not self.silent:
            super().send_raw(key, frame)


# ---------------------------------------------------------------- the attacks


def decode_move(ev: Event) -> Move:
    """The move an event of the play carries (a give's knock is proof, not part of the move)."""
    body = dict(ev.body)
    body.pop("knock", None)
    return move_from_dict({"move": ev.kind, **body})


def other_legal_move(state: State, not_this: Move | None = None) -> Move:
    """A legal move of the seat that must act now, other than `not_this` when there is one."""
    moves = legal_moves(state)
    others = [m for m in moves if m != not_this and not isinstance(m, Give)]
    return (others or moves)[0]


def an_illegal_move(state: State) -> Move:
    """A well-formed move the rules forbid now: at another seat's display, or a card that is
    not in hand, or a draw when the decision is not a draw."""
    d = to_act(state)
    assert d is not None
    other = (d.seat + 1) % state.players
    legal = legal_moves(state)
    for move in (Place(0, Slot(other, 0, 0)), TurnUp(Slot(other, 0, 0)), PeekCard(Slot(other, 0, 0)),
                 Discard(10_000), DrawFromDeck()):
        if move in legal:
            continue
        try:
            apply(state, move)
        except IllegalMove:
            return move
    raise AssertionError(f"no illegal move found for {d}")


class ForgedSignature(Attack):
    """(a) Its own event with one byte of the signature flipped, then the honest one."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        forged = bytes([ev.signed[0] ^ 0x01]) + ev.signed[1:]
        self.strike(ev.seq)
        node.inject("forged signature", forged)
        self.done = True
        return True


class WrongAuthor(Attack):
    """(b) When its own move hands the turn to another seat: that seat's next move signed by
    the evil seat, sent in one message right after its own move (so every honest peer judges
    it at the seq it was made for, before the rightful author can have answered); at the next
    such moment the same with a key that holds no seat. Its own moves go out as usual."""

    def __init__(self) -> None:
        super().__init__()
        self.signers: list[Identity | None] = [None, Identity.generate()]  # None: the evil seat

    def before(self, node: EvilPeer, ev: Event) -> bool:
        t = node.table
        if not is_play_event(node, ev):
            return True
        assert t.state is not None
        after = apply(t.state, decode_move(ev))
        d = to_act(after)
        if d is None or d.seat in node.players:
            return True
        kind, body = move_body(other_legal_move(after))
        signer = self.signers.pop(0)
        bad = node.sign_as(seq=ev.seq + 1, prev=ev.id, kind=kind, body=body, identity=signer)
        self.strike(ev.seq + 1)
        node.inject("wrong author" if signer is None else "no seat", bad, also=[ev.signed])
        self.done = not self.signers
        return True


class WrongSeqAndPrev(Attack):
    """(c) On its turn at seq N: an event for a seq another seat already wrote, one for N
    whose prev is not the id of event N-1; then the honest event."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        t = node.table
        mine = node.players[node.seat()].identity.public
        others = [e.seq for e in t.events if e.author != mine and e.kind not in SETUP_KINDS]
        if not others:
            return True  # no move by another seat yet: strike on a later turn
        held = t.events[max(others)]
        taken = held.seq
        self.strike(ev.seq)
        node.inject("seq taken", node.sign_as(seq=taken, prev=held.prev, kind=ev.kind, body=ev.body))
        node.inject("wrong prev", node.sign_as(seq=ev.seq, prev=os.urandom(32), kind=ev.kind, body=ev.body))
        self.done = True
        return True


class SeqAhead(Attack):
    """(c) On its turn at seq N: its own move signed for seq N+3 (a seq it cannot have),
    then, a moment later, the honest event."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        node.inject("seq ahead", node.sign_as(seq=ev.seq + 3, prev=ev.prev, kind=ev.kind, body=ev.body))
        self.done = True
        return True


class IllegalMoves(Attack):
    """(d) On its turn: a well-formed move the rules forbid now and a move kind that does
    not exist, both validly signed for the right seq and prev; then the honest event."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        t = node.table
        assert t.state is not None
        kind, body = move_body(an_illegal_move(t.state))
        self.strike(ev.seq)
        node.inject("illegal move", node.sign_as(seq=ev.seq, prev=ev.prev, kind=kind, body=body))
        node.inject("no such move", node.sign_as(seq=ev.seq, prev=ev.prev, kind="teleport", body={}))
        self.done = True
        return True


class Fork(Attack):
    """(e) On its turn: another legal move validly signed for the same seq, sent first; then
    the honest event. Every honest peer takes one and meets the other: a fork."""

    def __init__(self) -> None:
        super().__init__()
        self.first = b""  # the twin, which every honest peer takes first
        self.second = b""  # the evil peer's own (honest) event, the second of the pair

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        state = node.table.state
        assert state is not None
        mine = decode_move(ev)
        kind, body = move_body(other_legal_move(state, mine))
        twin = node.sign_as(seq=ev.seq, prev=ev.prev, kind=kind, body=body)
        assert twin != ev.signed
        self.strike(ev.seq)
        node.inject("fork", twin)
        self.first, self.second = twin, ev.signed
        self.done = True
        return True


class WrongResult(Attack):
    """(issue 13) Its seat's result of the first round signed over a state hash of 16 zero
    bytes, in place of the honest one, which never goes out: an engine that disagrees."""

    def __init__(self) -> None:
        super().__init__()
        self.forged = b""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if ev.kind != "result":
            return True
        if not self.forged:
            body = {**ev.body, "hash": bytes(16)}
            self.forged = node.sign_as(seq=ev.seq, prev=ev.prev, kind="result", body=body)
            self.strike(ev.seq)
            node.inject("wrong result", self.forged)
        return False  # its honest result is never sent (nor taken: it owes it for ever)


class BadFrame(Attack):
    """(f) On its turn: raw bytes that break the framing (`data`), then the honest event."""

    def __init__(self, label: str, data: bytes) -> None:
        super().__init__()
        self.label = label
        self.data = data

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        node.send_raw(self.label, self.data)
        self.done = True
        return True


def not_msgpack() -> bytes:
    """A frame whose length is right and whose body is not msgpack (0xc1 is never used)."""
    body = b"\xc1\xc1\xc1\xc1"
    return HEADER.pack(len(body)) + body


def oversize_header() -> bytes:
    """A header that announces one byte more than MAX_FRAME (the body never comes)."""
    return HEADER.pack(MAX_FRAME + 1) + b"\x80" * 16


class BadMessages(Attack):
    """(g) On its turn: well-framed messages the protocol does not have or cannot read,
    then the honest event."""

    MESSAGES: tuple[dict[str, Any], ...] = (
        {"t": "gossip_v9", "items": [1, 2, 3]},
        {"t": "events", "from": "zero", "items": 5},
        {"t": "have", "seq": -4, "head": "nothing"},
    )

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        for msg in self.MESSAGES:
            self.sent.append(Sent(str(msg["t"])))
            node.send_all(dict(msg))
        self.done = True
        return True


class GarbageFlood(Attack):
    """On its turn: 200 well-framed messages the protocol has not, at once (under the rate
    limit, so only the count of refusals can stop it; and within the evil node's own send
    queue), then the honest event. Before issue 9 every honest peer said one line per
    message and kept every refusal in memory."""

    COUNT = 200

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        for i in range(self.COUNT):
            node.send_all({"t": f"junk{i % 7}", "n": i})
        self.sent.append(Sent(f"{self.COUNT} unknown messages"))
        self.done = True
        return True


class Silent(Attack):
    """(h) On its turn: says nothing more, ever (no move, no ping, no `have`), yet keeps its
    connections open and keeps reading, as a machine whose cable was pulled (no FIN)."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        node.silent = True
        self.done = True
        return True  # its move is written at home and goes nowhere


class NeverReveal(Attack):
    """Commits to a nonce and never reveals it: the seed can never be made."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if ev.kind != "reveal":
            return True
        if self.struck_at is None:
            self.strike(ev.seq)
            self.sent.append(Sent("withheld reveal", ev.signed))
        return False  # never sent; the node asks again on every change and is refused again


class WrongReveal(Attack):
    """Reveals another nonce than the one it committed to (to choose the deal), then the right one."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if ev.kind != "reveal":
            return True
        self.strike(ev.seq)
        node.inject("wrong reveal", node.sign_as(seq=ev.seq, prev=ev.prev, kind="reveal",
                                                 body={"nonce": os.urandom(32)}))
        self.done = True
        return True


class ForgedKnocks(Attack):
    """ALLEGRA: on the first deck draw of seat `victim` (once meshed), instead of its answer, a
    knock for the evil seat that is not a valid knock (the right shape, validly signed by the
    evil seat, but for another draw). Later it answers honestly, so a peer that drops the
    forged knock waits one knock window for the answer that never came, and no more."""

    def __init__(self, victim: int = 0) -> None:
        super().__init__()
        self.victim = victim

    def knock(self, node: EvilPeer, active: int, seat: int, draw: bytes) -> bytes | None:
        if active != self.victim or not meshed(node):
            return None
        game = node.table.game or node.table_id
        self.strike(node.table.seq)
        self.sent.append(Sent("forged knock"))
        self.done = True
        return sign_knock(node.players[seat].identity.key, game, os.urandom(32))


class GiveFirst(Bot):
    """An honest bot that always draws from the deck and gives the card to a knocker when
    it can: the player a forged knock would fool first."""

    name = "give-first"

    def choose(self, v: Any, legal: Sequence[Move]) -> Move:
        for kind in (Give, DrawFromDeck):
            for m in legal:
                if isinstance(m, kind):
                    return m
        return self.pick(legal)

    def knocks(self, v: Any) -> bool:
        return False


# ---------------------------------------------------------------- a table with one evil peer


@dataclass
class Peer:
    """One peer of the table and everything it said (the notes its player would read)."""

    label: str
    seat_name: str
    bot: str
    games_dir: Path
    identity: Identity = field(default_factory=Identity.generate)
    notes: list[tuple[float, str]] = field(default_factory=list)
    node: Node | None = None
    returned_at: float | None = None

    def say(self, text: str) -> None:
        self.notes.append((trio.current_time(), text))

    @property
    def fp(self) -> str:
        return fingerprint(self.identity.public)

    def said(self) -> list[str]:
        return [text for _, text in self.notes]

    def replays(self) -> list[Path]:
        return sorted(self.games_dir.glob("*.allegra")) if self.games_dir.exists() else []

    def verdict(self) -> Verdict:
        files = self.replays()
        assert len(files) == 1, f"{self.label} wrote replay files {files}"
        return verify_file(files[0])

    def progress(self) -> str:
        state = ""
        if self.node is not None:
            t = self.node.table
            d = to_act(t.state) if t.state is not None else None
            state = (f"seq {t.seq} stage {t.stage() if t.genesis else '-'} next {d}, links "
                     f"{len(self.node.links)}, stopped {self.node.stopped!r}, faults {self.node.faults}")
        last = " | ".join(self.said()[-8:])
        return f"{self.label} ({self.fp}): {state}; last notes: {last}"


@dataclass
class Outcome:
    """A table after its honest peers returned: the peers, the attack, when it began (trio clock)."""

    host: Peer
    guest: Peer
    evil: Peer
    attack: Attack
    began: float
    evil_seat: int

    @property
    def honest(self) -> list[Peer]:
        return [self.host, self.guest]

    def report(self) -> str:
        return "\n  ".join(p.progress() for p in (self.host, self.guest, self.evil))


async def run_evil_guest(peer: Peer, attack: Attack, *, address: tuple[str, int], table_id: bytes,
                         want_seat: int) -> EvilNode:
    """`run_guest` with an EvilPeer in an EvilNode: join, sit at `want_seat`, then play (and
    cheat)."""
    evil = EvilPeer.guest(peer.identity, host=address, table_id=table_id,
                          seats=[SeatSpec(peer.seat_name, peer.bot)], entropy=os.urandom,
                          want_seat=want_seat)
    evil.attack = attack
    node = EvilNode(evil, LOOPBACK, pin=None, games_dir=peer.games_dir, say=peer.say)
    evil.shell = node
    peer.node = node
    with node.scope:
        async with trio.open_nursery() as n:
            n.start_soon(node.run)
            if attack.holds_sit:
                with trio.fail_after(10):
                    while evil.held is None:
                        changed = node.changed
                        await changed.wait()
                await attack.before_sit(node)
                node._input(evil.sit_now(trio.current_time()))
    return node


async def play_with_evil(tmp: Path, attack: Attack, *, variant: str = "grande", limit: float,
                         host_bot: str | Bot = "greedy", guest_bot: str = "random",
                         evil_bot: str = "random", evil_seat: int = 1, takeover: int = 0,
                         evil_identity: Identity | None = None) -> Outcome:
    """Three peers on 127.0.0.1: an honest host (seat 0), an honest guest and the evil guest
    at `evil_seat`. Returns once both honest peers returned (the evil peer gets EVIL_GRACE
    to finish, then is cancelled). Fails with every peer's progress after `limit` seconds."""
    # A Bot instance replaces the host's registry bot once the host node exists.
    host = Peer("host", "host", host_bot if isinstance(host_bot, str) else "greedy", tmp / "host")
    guest = Peer("guest", "guest", guest_bot, tmp / "guest")
    evil = Peer("evil", "evil", evil_bot, tmp / "evil")
    if evil_identity is not None:
        evil.identity = evil_identity
    guest_seat = 3 - evil_seat
    listening = trio.Event()

    def on_listening(node: Node) -> None:
        host.node = node
        if isinstance(host_bot, Bot):
            node.peer.make_bot = lambda name, seed: type(host_bot)(seed)
        listening.set()

    async def the_host() -> None:
        host.node = await run_host(host.identity, LOOPBACK, variant=variant, players=3,
                                   table_name="faults", seats=[SeatSpec(host.seat_name, host.bot)],
                                   pin=None, games_dir=host.games_dir, say=host.say, advertise=False,
                                   on_listening=on_listening, takeover=takeover)
        host.returned_at = trio.current_time()

    async def the_guest(address: tuple[str, int], table_id: bytes) -> None:
        guest.node = await run_guest(guest.identity, LOOPBACK, address=address, table_id=table_id,
                                     seats=[SeatSpec(guest.seat_name, guest.bot)], pin=None,
                                     games_dir=guest.games_dir, say=guest.say, want_seat=guest_seat)
        guest.returned_at = trio.current_time()

    evil_done = trio.Event()

    async def the_evil(address: tuple[str, int], table_id: bytes) -> None:
        try:
            await run_evil_guest(evil, attack, address=address, table_id=table_id, want_seat=evil_seat)
        finally:
            evil_done.set()

    began = trio.current_time()
    try:
        with trio.fail_after(limit):
            async with trio.open_nursery() as outer:
                async with trio.open_nursery() as honest:
                    honest.start_soon(the_host)
                    await listening.wait()
                    assert host.node is not None
                    address = (LOOPBACK, host.node.port)
                    outer.start_soon(the_evil, address, host.node.table_id)
                    honest.start_soon(the_guest, address, host.node.table_id)
                with trio.move_on_after(EVIL_GRACE):
                    await evil_done.wait()
                if isinstance(evil.node, EvilNode):
                    evil.node.scope.cancel()
    except trio.TooSlowError:
        raise AssertionError(f"the table did not end within {limit:g} s:\n  "
                             + "\n  ".join(p.progress() for p in (host, guest, evil))) from None
    return Outcome(host, guest, evil, attack, began, evil_seat)


# ---------------------------------------------------------------- hostile messages (issue 9)


ARRAY_KNOCK = bytes(64) + b"\x90"  # 64 "signature" bytes, then an empty array where a map belongs


class ArrayKnock(Attack):
    """Issue 9, finding 1: on the first deck draw of seat `victim` (once meshed), the evil
    seat's answer is 64 zero bytes and an empty msgpack array (a knock message must be a
    map). Every honest peer used to die of an AttributeError on it."""

    def __init__(self, victim: int = 0) -> None:
        super().__init__()
        self.victim = victim

    def knock(self, node: EvilPeer, active: int, seat: int, draw: bytes) -> bytes | None:
        if active != self.victim or not meshed(node):
            return None
        self.strike(node.table.seq)
        self.sent.append(Sent("array knock"))
        self.done = True
        return ARRAY_KNOCK


class ArrayKnockGive(Attack):
    """Issue 9, finding 2: right after its own deck draw (ALLEGRA, once meshed), the evil
    seat sends, with the draw, a validly signed give of the card whose knock is
    ARRAY_KNOCK; then it plays on honestly. `Table.append` used to raise AttributeError
    on it instead of refusing it, in every honest peer."""

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if ev.kind != "draw_deck" or not is_play_event(node, ev):
            return True
        state = node.table.state
        assert state is not None
        after = apply(state, decode_move(ev))
        gives = [m for m in legal_moves(after) if isinstance(m, Give)]
        if not gives:
            return True
        kind, body = move_body(gives[0], ARRAY_KNOCK)
        bad = node.sign_as(seq=ev.seq + 1, prev=ev.id, kind=kind, body=body)
        self.strike(ev.seq + 1)
        node.inject("give with an array knock", bad, also=[ev.signed])
        self.done = True
        return True


class SitLies(Attack):
    """Issue 9, finding 3: in the lobby, once the honest guest sits, the evil guest first
    sends a sit for its seat with each of `addresses` in turn (a port no socket can have,
    another machine's address), waiting after each for what the host's lobby then says,
    and gives the dialers time to act on it; then it sits honestly. `seen` holds the
    address the host's lobby gave the evil peer after each lie (None: none)."""

    def __init__(self, addresses: Sequence[list[Any]], seat: int = 1) -> None:
        super().__init__()
        self.addresses = list(addresses)
        self.seat = seat
        self.seen: list[tuple[str, int] | None] = []

    holds_sit = True

    async def before_sit(self, shell: EvilNode) -> None:
        with trio.fail_after(10):
            while shell.lobby is None or shell.lobby.taken < 2:  # the host and the honest guest
                changed = shell.changed
                await changed.wait()
        me = shell.me
        claim = Claim("evil", me, me, "random", False).to_msg()
        for address in self.addresses:
            self.strike(shell.table.seq)
            self.sent.append(Sent(f"sit at {address}"))
            shell.links[shell.lobby.host].send({"t": "sit", "claims": [[self.seat, claim]],
                                                "address": address})
            with trio.move_on_after(2.0):
                while shell.lobby is None or me not in shell.lobby.addresses:
                    changed = shell.changed
                    await changed.wait()
            assert shell.lobby is not None
            self.seen.append(shell.lobby.addresses.get(me))
            await trio.sleep(1.5)  # the honest peers' dials (every 0.5 s) act on the lobby
        self.done = True


class KnockFlood(Attack):
    """Issue 9, finding 4: at its first move of the play, `count` knock messages for draws
    nobody made (well formed, validly shaped, random bytes), in one burst of frames below
    the rate limit, and `oversize` knocks whose draw is 60 KiB. A peer used to keep every
    one of them, for good."""

    def __init__(self, count: int = 3000, oversize: int = 3) -> None:
        super().__init__()
        self.count = count
        self.oversize = oversize

    def before(self, node: EvilPeer, ev: Event) -> bool:
        if not is_play_event(node, ev):
            return True
        self.strike(ev.seq)
        seat = node.seat()
        frames = [encode_frame({"t": "knock", "seat": seat, "draw": os.urandom(32),
                                "k": os.urandom(134)}) for _ in range(self.count)]
        frames += [encode_frame({"t": "knock", "seat": seat, "draw": os.urandom(60 * 1024),
                                 "k": os.urandom(134)}) for _ in range(self.oversize)]
        node.send_raw("knock flood", b"".join(frames))
        self.done = True
        return True


@dataclass
class StrangerOutcome:
    """A --spectators table of three honest seats and a stranger who joined after the start."""

    honest: list[Peer]
    stranger: Peer
    knocked: list[bytes]  # the draws the stranger answered with a bad knock


async def run_stranger(peer: Peer, *, address: tuple[str, int], table_id: bytes, seat: int,
                       knocks: int, knocked: list[bytes]) -> Node:
    """Issue 9, finding 1 from a stranger: a key that holds no seat connects to a table
    that allows spectators, follows the log like `allegra watch`, and answers the first
    `knocks` deck draws it sees with ARRAY_KNOCK for `seat`, sent to the host."""
    node = Node(Protocol.watcher(peer.identity, host=address, table_id=table_id, entropy=os.urandom),
                LOOPBACK, pin=None, games_dir=peer.games_dir, say=peer.say)
    peer.node = node
    async with trio.open_nursery() as n:
        n.start_soon(node.run)
        while len(knocked) < knocks and not node.done.is_set():
            changed = node.changed
            t, lobby = node.table, node.lobby
            if (t.events and t.events[-1].kind == "draw_deck" and t.head not in knocked
                    and lobby is not None and lobby.host in node.links):
                knocked.append(t.head)
                node.links[lobby.host].send({"t": "knock", "seat": seat, "draw": t.head,
                                             "k": ARRAY_KNOCK})
            await changed.wait()
    return node


async def play_with_stranger(tmp: Path, *, limit: float, knocks: int = 3) -> StrangerOutcome:
    """An ALLEGRA table whose host allows spectators: the host and two guests (greedy bots)
    play; once the genesis exists, a stranger connects and sends bad knocks (run_stranger).
    Returns when every honest peer returned; the stranger is cancelled after EVIL_GRACE."""
    host = Peer("host", "host", "greedy", tmp / "host")
    guests = [Peer(f"guest{i}", f"guest{i}", "greedy", tmp / f"guest{i}") for i in (1, 2)]
    stranger = Peer("stranger", "stranger", "-", tmp / "stranger")
    listening = trio.Event()
    knocked: list[bytes] = []

    def on_listening(node: Node) -> None:
        host.node = node
        listening.set()

    async def the_host() -> None:
        host.node = await run_host(host.identity, LOOPBACK, variant="allegra", players=3,
                                   table_name="strangers", seats=[SeatSpec("host", "greedy")],
                                   pin=None, games_dir=host.games_dir, say=host.say,
                                   advertise=False, on_listening=on_listening, spectators=True)
        host.returned_at = trio.current_time()

    async def a_guest(peer: Peer, address: tuple[str, int], table_id: bytes) -> None:
        peer.node = await run_guest(peer.identity, LOOPBACK, address=address, table_id=table_id,
                                    seats=[SeatSpec(peer.seat_name, peer.bot)], pin=None,
                                    games_dir=peer.games_dir, say=peer.say)
        peer.returned_at = trio.current_time()

    async def the_stranger(address: tuple[str, int], table_id: bytes, scope: trio.CancelScope) -> None:
        assert host.node is not None
        while host.node.table.genesis is None:  # "after the start"
            changed = host.node.changed
            await changed.wait()
        with scope:
            await run_stranger(stranger, address=address, table_id=table_id, seat=1,
                               knocks=knocks, knocked=knocked)

    try:
        with trio.fail_after(limit):
            async with trio.open_nursery() as outer:
                scope = trio.CancelScope()
                async with trio.open_nursery() as honest:
                    honest.start_soon(the_host)
                    await listening.wait()
                    assert host.node is not None
                    address = (LOOPBACK, host.node.port)
                    for g in guests:
                        honest.start_soon(a_guest, g, address, host.node.table_id)
                    outer.start_soon(the_stranger, address, host.node.table_id, scope)
                await trio.sleep(EVIL_GRACE)
                scope.cancel()
    except trio.TooSlowError:
        raise AssertionError(f"the table did not end within {limit:g} s:\n  "
                             + "\n  ".join(p.progress() for p in (host, *guests, stranger))) from None
    return StrangerOutcome([host, *guests], stranger, knocked)


__all__ = [
    "Attack", "EvilNode", "EvilPeer", "Outcome", "Peer", "Sent", "play_with_evil", "run_evil_guest",
    "ForgedSignature", "WrongAuthor", "WrongSeqAndPrev", "SeqAhead", "IllegalMoves", "Fork",
    "BadFrame", "BadMessages", "NeverReveal", "WrongReveal", "ForgedKnocks", "GiveFirst",
    "not_msgpack", "oversize_header", "LOOPBACK",
    "ARRAY_KNOCK", "ArrayKnock", "ArrayKnockGive", "SitLies", "KnockFlood", "StrangerOutcome", "run_stranger",
    "play_with_stranger",
]
