"""Adversaries from the catalogue of issue 9 ("every input is hostile"), on the simulated wire.

A seated adversary is a real `Peer` (a guest with a bot seat) whose frames
pass through an `Attack` on their way out: the table has it as a player and it
plays legally, except for its attack. A `Stranger` holds no seat: it only
connects (as a lobby browser or a spectator would) and sends what it likes.
Everything they send is bytes on a connection, judged by the receiver's frame
reader and its Peer exactly as a real socket's bytes would be.

  forged       its own events again, with a flipped signature byte, ahead of the real ones;
               or (forged/result) a round's result signed with a wrong state hash: every
               honest peer must stop with that signed result as the proof, naming its seat
  replayed     frames it sent (or, a stranger, received) earlier, sent again later
  malformed    arbitrary maps with known and unknown types and wrong field types, and
               bytes that are not a message at all (not msgpack, a float, a list, no `t`)
  oversized    a header over the frame limit; an event over the event limit
  flooding     more messages at once than the receiver's rate allows
  forking      two different legal events for one seq, one to each half of the honest peers
  withholding  from some point on, nothing at all ("silent") or none of its moves ("moves")
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from ..log.envelope import MAX_EVENT, Event, decode_event, sign_event
from ..net.messages import MESSAGES
from ..rules import Give, legal_moves, move_from_dict
from ..deal.cheats import Cheat, CopyCard, SwapIn, WithholdSecret, WrongSealedShare, WrongShare
from ..deal.events import encode as encode_deal
from ..log.results import RESULT, Owed
from ..table import SETUP_KINDS, Table, move_body
from .scenario import FORGED_RESULT
from .wire import encode_message, oversize_header, raw_frame

if TYPE_CHECKING:
    from .world import SimNode, World

FLOOD = 4200  # messages in one burst: over the 4000 a peer may send at once (net/node.py BURST)
MAX_REPLAYS = 40
MAX_JUNK = 30

__all__ = ["Attack", "Stranger", "make_attack", "junk_frames", "random_value"]


def random_value(rng: random.Random, depth: int = 0) -> Any:
    """Any value the canonical codec carries, small, of a seeded shape."""
    r = rng.random()
    if depth > 3 or r < 0.2:
        return rng.choice((0, 1, -1, 63, 64, 255, 256, 65535, 2**31, 2**32 - 1, 2**32, 2**63 - 1,
                           -2**63, rng.randint(-1000, 1000)))
    if r < 0.35:
        return rng.randbytes(rng.choice((0, 1, 16, 31, 32, 33, 64, 65, 100)))
    if r < 0.5:
        return rng.choice(("", "x", "have", "events", "\u00e9\u20ac", "a" * 300, "line\nbreak"))
    if r < 0.6:
        return rng.choice((True, False, None))
    if r < 0.8:
        return [random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(("t", "seq", "head", "from", "items", "k", "x", "seat")):
            random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def junk_frames(rng: random.Random, count: int) -> list[bytes]:
    """Malformed input: messages of known types with fields of wrong types or missing,
    unknown types, values that are not messages, and bytes that are not msgpack."""
    out: list[bytes] = []
    names = list(MESSAGES)
    for _ in range(count):
        r = rng.random()
        if r < 0.6:
            t = rng.choice(names + ["hello", "nope", "", "x" * 40])
            fields = list(MESSAGES[t].schema.fields) if t in MESSAGES else []
            msg: dict[str, Any] = {"t": t}
            for f in fields:
                if f != "t" and rng.random() < 0.8:
                    msg[f] = random_value(rng)
            if rng.random() < 0.2:
                msg["extra"] = random_value(rng)
            out.append(raw_frame(msg))
        elif r < 0.75:
            out.append(raw_frame(random_value(rng)))  # not a map, or a map without a good `t`
        else:
            out.append(rng.choice((
                b"\x00\x00\x00\x01\xc1",  # a byte msgpack never uses
                b"\x00\x00\x00\x03\x92\x01",  # an array cut short
                b"\x00\x00\x00\x09\xcb" + b"\x3f\xf0" + bytes(6),  # a float
                b"\x00\x00\x00\x00",  # an empty frame
                b"\x00\x00\x00\x05\x81\xa1t\xa1x\x00",  # trailing bytes after the map
                b"\x00\x00\x00\x07\x82\xa1t\xa1x\xa1t\xa1y",  # a key twice (cut short anyway)
            )))
    return out


class Attack:
    """The outgoing side of a seated adversary; the default is honest."""

    kind = "honest"

    def __init__(self, world: "World", node: "SimNode", rng: random.Random, strike_seq: int,
                 count: int) -> None:
        self.world = world
        self.node = node
        self.rng = rng
        self.strike_seq = strike_seq
        self.count = count
        self.struck = 0
        self.sent: list[tuple[bytes, bytes]] = []  # (to, frame) it sent, for replays

    # hooks the world calls
    def outgoing(self, to: bytes, msg: dict[str, Any], frame: bytes) -> list[bytes]:
        return [frame]

    def on_persist(self, ev: Event) -> None:
        return None

    def after_input(self) -> None:
        return None

    def before_call(self) -> None:
        return None

    # helpers
    def ready(self) -> bool:
        p = self.node.peer
        return p is not None and p.table.seq >= self.strike_seq and self.struck < self.count

    def honest_links(self) -> list[bytes]:
        return sorted(k for k in self.node.conns if k in self.world.by_key
                      and self.world.by_key[k].honest)

    def target(self) -> bytes | None:
        """One honest peer to strike at, when it is time to strike and one is linked."""
        if not self.ready():
            return None
        links = self.honest_links()
        return links[self.rng.randrange(len(links))] if links else None

    def inject(self, to: bytes, frame: bytes) -> None:
        self.world.send_frame(self.node.index, to, frame)

    def mark(self) -> None:
        if self.struck == 0:
            self.world._count(self.kind)
        self.struck += 1

    def own(self, ev: Event) -> bool:
        p = self.node.peer
        return p is not None and any(sp.identity.public == ev.author for sp in p.players.values())


class Forged(Attack):
    kind = "forged"

    def on_persist(self, ev: Event) -> None:
        if not self.ready() or not self.own(ev) or ev.kind in SETUP_KINDS:
            return
        bad = bytearray(ev.signed)
        bad[self.rng.randrange(64)] ^= 1 << self.rng.randrange(8)
        for to in self.honest_links():
            self.inject(to, encode_message({"t": "events", "from": ev.seq, "items": [bytes(bad)]}))
        self.mark()


class ForgedResult(Attack):
    """Its seat's result of a round goes out signed with a wrong state hash (its own table
    keeps the honest one, which nobody else ever sees): every honest peer must refuse it,
    stop, and hold the same signed result as the proof, naming the seat (sim/invariants.py
    `check_disagreements`). It keeps quiet about the fork its own peer then finds."""

    kind = "forged"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.forged: dict[bytes, bytes] = {}  # our honest result -> the forged one sent instead

    def _forge(self, ev: Event) -> bytes:
        p = self.node.peer
        assert p is not None
        if ev.signed not in self.forged:
            key = next(sp.identity.key for sp in p.players.values() if sp.identity.public == ev.author)
            body = dict(ev.body)
            body["hash"] = bytes(b ^ 0xFF for b in body["hash"])  # an engine that disagrees
            self.forged[ev.signed] = sign_event(key, game=ev.game, seq=ev.seq, prev=ev.prev,
                                                kind=ev.kind, body=body).signed
            seat = p.table.seat_of(ev.author)
            if self.world.rec.result_struck is None:
                self.world.rec.result_struck = seat
                self.world.trace(f"adversary {self.node.index} signs a forged result for seat "
                                 f"{seat} at seq {ev.seq}")
                self.mark()
        return self.forged[ev.signed]

    def outgoing(self, to: bytes, msg: dict[str, Any], frame: bytes) -> list[bytes]:
        t = msg.get("t")
        if t == "fork":
            return []  # (its own peer holds both results now: it does not tell)
        if t != "events":
            return [frame]
        items = []
        for item in msg["items"]:
            try:
                ev = decode_event(item)
            except ValueError:
                items.append(item)
                continue
            items.append(self._forge(ev) if ev.kind == RESULT and self.own(ev) else item)
        return [frame] if items == msg["items"] else [encode_message({**msg, "items": items})]


class Replayed(Attack):
    kind = "replayed"

    def outgoing(self, to: bytes, msg: dict[str, Any], frame: bytes) -> list[bytes]:
        if len(self.sent) < 400:
            self.sent.append((to, frame))
        return [frame]

    def after_input(self) -> None:
        p = self.node.peer
        if (p is None or p.table.seq < self.strike_seq or not self.sent
                or self.struck >= MAX_REPLAYS or self.rng.random() > 0.05):
            return
        links = self.honest_links()
        if not links:
            return
        for _ in range(self.rng.randint(1, 5)):
            _, frame = self.sent[self.rng.randrange(len(self.sent))]
            self.inject(links[self.rng.randrange(len(links))], frame)
        self.mark()


class Malformed(Attack):
    kind = "malformed"

    def after_input(self) -> None:
        if not self.ready():
            return
        links = self.honest_links()
        if not links:
            return
        for frame in junk_frames(self.rng, self.rng.randint(1, MAX_JUNK)):
            self.inject(links[self.rng.randrange(len(links))], frame)
        self.mark()


class Oversized(Attack):
    kind = "oversized"

    def after_input(self) -> None:
        to = self.target()
        if to is None:
            return
        p = self.node.peer
        assert p is not None
        if self.rng.random() < 0.5:
            self.inject(to, oversize_header(self.rng.randint(64 * 1024 + 1, 2**32 - 1)))
        else:
            big = bytes(64) + b"\x00" * (MAX_EVENT + 1)
            self.inject(to, encode_message({"t": "events", "from": p.table.seq, "items": [big]}))
        self.mark()


class Flooding(Attack):
    kind = "flooding"

    def after_input(self) -> None:
        to = self.target()
        if to is None:
            return
        p = self.node.peer
        assert p is not None
        frame = encode_message(self.rng.choice(({"t": "ping"}, p.replica.have())))
        for _ in range(FLOOD):
            self.inject(to, frame)
        self.struck = self.count  # once is enough
        self.world._count(self.kind)


class Forking(Attack):
    """Signs a second legal event for the seq of one of its moves; half the honest peers
    get the one, half the other (a sole honest peer gets both)."""

    kind = "forking"

    def __init__(self, *a: Any, **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.snap: tuple[int, Any] | None = None  # (seq, state) before our next event
        self.twin: dict[bytes, bytes] = {}  # original signed -> its twin
        self.side_b: set[bytes] = set()

    def before_call(self) -> None:
        p = self.node.peer
        if p is not None and p.table.state is not None:
            self.snap = (p.table.seq, p.table.state)

    def _strike(self, ev: Event) -> None:
        """Sign the twin of our event `ev` and pick the half of the honest peers it goes to."""
        p = self.node.peer
        if (p is None or self.struck or ev.seq < self.strike_seq or not self.own(ev)
                or ev.kind in SETUP_KINDS or self.snap is None or self.snap[0] != ev.seq):
            return
        state = self.snap[1]
        mine = move_from_dict({"move": ev.kind, **{k: v for k, v in ev.body.items() if k != "knock"}})
        others = [m for m in legal_moves(state) if m != mine and not isinstance(m, Give)]
        links = self.honest_links()
        if not others or not links:
            return
        seat_key = next(sp.identity.key for sp in p.players.values()
                        if sp.identity.public == ev.author)
        kind, body = move_body(others[self.rng.randrange(len(others))])
        twin = sign_event(seat_key, game=ev.game, seq=ev.seq, prev=ev.prev, kind=kind,
                          body=body).signed
        self.twin[ev.signed] = twin
        self.side_b = set(links[len(links) // 2:]) if len(links) > 1 else set()
        if len(links) == 1:  # one honest peer: it gets the twin first, then the original
            self.inject(links[0], encode_message({"t": "events", "from": ev.seq, "items": [twin]}))
        self.mark()
        self.world.rec.fork_struck = True

    def outgoing(self, to: bytes, msg: dict[str, Any], frame: bytes) -> list[bytes]:
        if msg.get("t") != "events":
            return [frame]
        if not self.struck:  # our event goes out before it is persisted: strike here
            for item in msg["items"]:
                try:
                    self._strike(decode_event(item))
                except ValueError:
                    pass
                if self.struck:
                    break
        if not self.twin or to not in self.side_b:
            return [frame]
        items = [self.twin.get(i, i) for i in msg["items"]]
        return [encode_message({**msg, "items": items})]


class Withholding(Attack):
    kind = "withholding"

    def __init__(self, *a: Any, variant: str = "silent", **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.variant = variant
        self.on = False

    def outgoing(self, to: bytes, msg: dict[str, Any], frame: bytes) -> list[bytes]:
        p = self.node.peer
        if not self.on and p is not None and p.table.seq >= self.strike_seq:
            self.on = True
            self.world._count(self.kind)
            self.world.trace(f"adversary {self.node.index} withholds ({self.variant})")
            self.world._absent(self.node)
        if not self.on:
            return [frame]
        if self.variant == "silent":
            return []
        if msg.get("t") == "events" and p is not None:
            keys = {sp.identity.public for sp in p.players.values()}
            for item in msg["items"]:
                try:
                    if decode_event(item).author in keys:
                        return []
                except ValueError:
                    continue
        return [frame]


class Dealer(Attack):
    """A seated adversary that plays honestly but cheats in the fair deal (issue 12): its
    peer's own deal events are rewritten by one cheat of deal/cheats.py (or withheld), through
    the peer's `deal_cheat` hook. Every honest peer must catch it and name its seat alike."""

    kind = "dealer"

    def __init__(self, *a: Any, variant: str = "share", **kw: Any) -> None:
        super().__init__(*a, **kw)
        self.variant = variant
        self.cheat: Cheat | None = None
        self.seat: int | None = None  # the seat it cheats for (known at its first deal event)

    def before_call(self) -> None:
        p = self.node.peer
        if p is not None and p.deal_cheat is None:
            p.deal_cheat = self._rewrite  # a peer restarted from its log is a new Peer

    def _make(self, seat: int, players: int) -> Cheat:
        if self.variant == "copy":
            return CopyCard(seat, into=self.rng.randrange(40), of=40 + self.rng.randrange(40))
        if self.variant == "swap":
            return SwapIn(seat, into=self.rng.randrange(80), place=self.rng.randrange(80))
        if self.variant == "sealed":
            return WrongSealedShare(seat, holder=self.rng.choice([h for h in range(players) if h != seat]))
        if self.variant == "secret":
            return WithholdSecret(seat)
        return WrongShare(seat, batch=self.rng.randrange(3))

    def _rewrite(self, table: Table, owed: Owed) -> Owed | None:
        ledger = table.ledger
        if ledger is None or ledger.seat != owed.seat:
            return owed  # only the seat whose secret it holds cheats
        if self.cheat is None:
            self.seat = owed.seat
            self.cheat = self._make(owed.seat, table.players)
        o, body = ledger.owed(), ledger.mine()
        if o is None or body is None:
            return owed
        made = self.cheat(ledger, o, body)
        if made is body:
            return owed
        if self.struck == 0:
            self.world.trace(f"adversary {self.node.index} deals dishonestly ({self.variant}) at seq {table.seq}")
        self.mark()
        if made is None:
            return None
        kind, fields = encode_deal(made)
        return Owed(owed.seat, kind, fields, timed=False)


_KINDS: dict[str, type[Attack]] = {c.kind: c for c in (
    Forged, Replayed, Malformed, Oversized, Flooding, Forking, Withholding, Dealer)}


def make_attack(kind: str, variant: str, world: "World", node: "SimNode", rng: random.Random,
                strike_seq: int, count: int) -> Attack:
    cls = _KINDS[kind]
    if cls is Withholding:
        return Withholding(world, node, rng, strike_seq, count, variant=variant or "silent")
    if cls is Dealer:
        return Dealer(world, node, rng, strike_seq, count, variant=variant or "share")
    if cls is Forged and variant == FORGED_RESULT:
        return ForgedResult(world, node, rng, strike_seq, count)
    return cls(world, node, rng, strike_seq, count)


class Stranger:
    """A key without a seat that connects to one honest peer and misbehaves there."""

    def __init__(self, kind: str, world: "World", index: int, key: bytes, rng: random.Random,
                 at_seq: int) -> None:
        self.kind = kind
        self.world = world
        self.index = index
        self.key = key
        self.rng = rng
        self.at_seq = at_seq
        self.conns: dict[bytes, Any] = {}
        self.heard: list[bytes] = []
        self.started = False
        self.bursts = 0

    def maybe_start(self) -> None:
        if not self.started and self.world.max_seq >= self.at_seq:
            self.started = True
            self.world.clock.at(self.world.clock.now + self.rng.uniform(0.001, 0.05), self.connect)

    def connect(self) -> None:
        w = self.world
        targets = [n for n in w.nodes if n.honest and n.alive and n.peer is not None]
        if not targets:
            return
        t = targets[self.rng.randrange(len(targets))]
        if not w.net.reachable(self.index, t.index) or not w.admits(t.peer, self.key):  # type: ignore[arg-type]
            w.trace(f"stranger refused by node {t.index}'s handshake")
            return
        if w.connect(self.index, self.key, t, None) is None:
            return
        w.clock.at(w.clock.now + self.rng.uniform(0.001, 0.2), self.strike, t.key)

    def received(self, frame: bytes) -> None:
        if len(self.heard) < 200:
            self.heard.append(frame)

    def strike(self, to: bytes) -> None:
        w = self.world
        if to not in self.conns or w._stop:
            return
        if self.bursts == 0:
            w._count(self.kind)
        self.bursts += 1
        if self.kind == "malformed":
            frames = junk_frames(self.rng, MAX_JUNK)
        elif self.kind == "oversized":
            frames = [oversize_header(self.rng.randint(64 * 1024 + 1, 2**32 - 1))]
        elif self.kind == "flooding":
            frames = [encode_message({"t": "ping"})] * FLOOD
        else:  # replayed: what the honest peers sent it, back at them
            frames = [self.heard[self.rng.randrange(len(self.heard))]
                      for _ in range(min(len(self.heard), 20))]
        for f in frames:
            w.send_frame(self.index, to, f)
        if self.kind in ("malformed", "replayed") and self.bursts < 4:
            w.clock.at(w.clock.now + self.rng.uniform(0.5, 5.0), self.strike, to)
