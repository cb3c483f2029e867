"""Gossip and catch-up as a pure state machine (sans-I/O, like h11).

A `Replica` holds one peer's `Table` and what it knows of each connected peer.
Messages in, messages out: `connected`, `disconnected`, `received`, `publish`
and `tick` return the sends they call for, as (peer, message) pairs; the
shell only moves bytes and calls `tick` by `next_deadline()`. Time is an
argument (`now`, seconds on the caller's clock), never read here, so the rules
of the mesh run the same on trio's clock and on a simulator's.

Messages (maps with a "t" field):
  have    {t, seq, head}        how many events I hold and the id of the last
  events  {t, from, items}      signed events from seq `from` on, in order
  refused {t, seq, reason, fault}  why I did not take an event you sent
  links   {t, peers}            the keys of the peers I am linked to now

Relaying (docs/architecture.md, "Propagation"). The author of an event sends
it to every peer it is linked to. A peer that takes an event from `source`
forwards it only to the peers that `source` is not linked to: a link counts
when both its ends said so in their last `links` (an end we have not heard
from counts as not linked, so we forward). In a full mesh that is n-1 copies
of each event, not (n-1)^2; a peer that only one other reaches still gets
every event, by induction on the path the event took: each peer's links hold
everything it holds, at its first copy or at the `have` of a link that came up
later. What a stale view of the links misses, three things fill: a peer that
loses a link says so (`links`) and asks the others with `have`; a peer that
hears that another lost a link sends its `have` to the peer on the far end;
and a replica that took no event for IDLE_HAVE seconds sends `have` to every
peer whose last `have` differs from its own. So whatever the links do, every
event reaches every peer it is linked to, directly or through others.

An event that comes with a gap (its seq ahead of our log: its predecessor is
on its way over another link) is kept (MAX_EARLY per peer) and waits GAP_WAIT
for the predecessor; once it is there the kept events are taken and relayed,
and only if it is not do we ask the sender with `have`. A caller that gives
no `now` gets no timers: a gap is asked about at once.

Seat takeovers (PROTOCOL.md): while this peer has consented to a takeover at
seq n, `barred[n]` holds the keys of the seats being taken, and their events
at n are refused, so the takeover cannot race them into two histories. A peer
that went on writing its own seats' moves with nobody connected (`alone_from`)
and then meets a history that parts from its own asks again from where it went
alone (a `have` at that seq); a valid takeover there supersedes that run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Hashable

from ..log.envelope import Event, EventError, decode_event
from ..text import one_line
from ..table import TAKEOVER, Disagreement, Fork, Refused, Table, _peek_seq
from .messages import MAX_BATCH, MAX_LINKS, MessageError, check_message

MAX_REASON = 200  # characters of a refusal's reason we send (a peer's schema allows more)
MAX_EARLY = 8  # events ahead of our log kept per peer, to be taken once we hold their seq
MAX_BATCH_BYTES = 48 * 1024  # and bytes of events, so a message always fits one 64 KiB frame
GAP_WAIT = 0.05  # seconds an event with a gap waits for its predecessor before we ask for it
IDLE_HAVE = 1.0  # seconds without a new event or link after which peers compare their logs
KEY_LEN = 32  # a peer named in `links` is a node key (other peer names are not announced)

Peer = Hashable
Send = tuple[Peer, dict[str, Any]]


@dataclass
class Fault:
    """Something a peer sent that we refused: shown to the players, never fatal to us."""

    peer: Peer
    seq: int | None
    reason: str
    fault: str
    fork: tuple[bytes, bytes] | None = None


def _refusal(seq: int | None, reason: str, fault: str) -> dict[str, Any]:
    """A `refused` message, always of its schema's form (a reason can quote an attacker's
    event at length: it is cut to MAX_REASON characters)."""
    return {"t": "refused", "seq": seq, "reason": reason[:MAX_REASON], "fault": fault[:20]}


@dataclass
class Replica:
    table: Table
    peers: dict[Peer, int] = field(default_factory=dict)  # peer -> events we know it holds
    confirmed: dict[Peer, int] = field(default_factory=dict)  # peer -> seq its last `have` said
    faults: list[Fault] = field(default_factory=list)
    accepted: list[Event] = field(default_factory=list)  # new events since the caller last looked
    fork: Fork | None = None  # once set, the game stops (DESIGN.md): nothing more is taken
    # A seat's signed result our engine refuses (log/results.py): once set, the game stops.
    disagreement: Disagreement | None = None
    alone_from: int | None = None  # the first event we wrote that no peer is known to hold
    barred: dict[int, frozenset[bytes]] = field(default_factory=dict)  # seq -> keys refused there
    # The only key whose genesis we take (the host's seat 0, from the lobby): a genesis is
    # valid on its own, so without this a seated guest's genesis naming itself seat 0 could
    # reach the others first and start another game in place of the host's.
    genesis_by: bytes | None = None
    superseded: list[Event] = field(default_factory=list)  # our events a takeover replaced
    # False: forward every event to every other peer and announce no links (the flooding of
    # before, for a shell that cannot carry `links` messages).
    relay: bool = True
    gap_wait: float = GAP_WAIT
    idle_have: float = IDLE_HAVE
    # Counters the benchmark and the simulator read: event copies this replica sent in
    # `events` messages (whatever the reason), and of those the ones relayed for another author.
    copies: int = 0
    relayed: int = 0
    _links: dict[Peer, frozenset[Any]] = field(default_factory=dict)  # peer -> its last `links`
    _rewound: dict[Peer, int] = field(default_factory=dict)  # where we last asked a peer from
    _early: dict[Peer, dict[int, bytes]] = field(default_factory=dict)  # events ahead of our seq
    _ask_at: dict[Peer, float] = field(default_factory=dict)  # peer -> when we ask it about a gap
    _idle_at: float | None = None  # when we compare logs with our peers if nothing happens
    _told: dict[Peer, tuple[int, bytes]] = field(default_factory=dict)  # our last `have` to each

    def _have_to(self, peer: Peer) -> Send:
        """Our `have` for `peer`, noted as told (so we do not tell it twice at one seq)."""
        msg = self.have()
        self._told[peer] = (msg["seq"], msg["head"])
        return (peer, msg)

    def have(self) -> dict[str, Any]:
        return {"t": "have", "seq": self.table.seq, "head": self.table.head}

    def relay_targets(self, source: Peer | None) -> list[Peer]:
        """The linked peers a new signed thing from `source` goes on to (None: our own, to
        all): those `source` is not linked to by both their `links`. The same rule can carry
        other signed messages that every peer needs once (a knock answer), with the same
        proviso: what a stale view of the links misses is filled only by what asks again."""
        return [p for p in self.peers if source is None or (
            p != source and not (self.relay and self._linked(source, p)))]

    def connected(self, peer: Peer, now: float | None = None) -> list[Send]:
        """A peer (re)connected: say what we hold (it answers with what we lack) and, to
        everyone, which peers we are linked to now."""
        self.peers[peer] = 0
        self._stir(now)
        return [self._have_to(peer)] + self._announce()

    def disconnected(self, peer: Peer, now: float | None = None) -> list[Send]:
        """A link went away: forget what that peer told us; tell the others, and ask them with
        `have` for what the lost link would have brought."""
        known = peer in self.peers
        self.peers.pop(peer, None)
        self._early.pop(peer, None)
        self._rewound.pop(peer, None)
        self._links.pop(peer, None)
        self._ask_at.pop(peer, None)
        self._told.pop(peer, None)
        if not known or not self.relay:
            return []
        self._stir(now)
        return self._announce() + [self._have_to(p) for p in self.peers]

    def publish(self, signed: bytes, now: float | None = None) -> list[Send]:
        """Our own new event: take it (Refused propagates: our own move must be legal) and
        send it to every linked peer."""
        ev = self.table.append(signed)
        if ev is None:
            return []
        self.accepted.append(ev)
        self._stir(now)
        if not self.peers and self.alone_from is None:
            self.alone_from = ev.seq
        out: list[Send] = []
        taken = [(None, ev.seq)] + self._take_early(out)
        return self._relay(taken) + out

    def resumed(self, own: set[bytes]) -> None:
        """After a restart nobody is known to hold the trailing run of our own events."""
        events = self.table.events
        start = len(events)
        while start > 0 and events[start - 1].author in own:
            start -= 1
        if start < len(events):
            self.alone_from = start

    def received(self, peer: Peer, msg: Any, now: float | None = None) -> list[Send]:
        """Handle a gossip message; any other value is a fault of class `protocol` (named by
        its schema, net/messages.py), never an exception."""
        try:
            t = check_message(msg).name
        except MessageError as e:
            self._fault(peer, None, str(e), "protocol")
            return []
        handler = _HANDLERS.get(t)
        if handler is None:
            self._fault(peer, None, f"a {t} message is not gossip", "protocol")
            return []
        return handler(self, peer, msg, now)

    def tick(self, now: float) -> list[Send]:
        """Timers that are due: a gap that waited GAP_WAIT in vain is asked about; after
        IDLE_HAVE without news, each peer whose last `have` differs from our log gets our
        `have` (once per state of our log: it answers with its own, or with what we lack)."""
        out: list[Send] = []
        for peer, at in list(self._ask_at.items()):
            if at <= now:
                del self._ask_at[peer]
                if self._early.get(peer) and peer in self.peers:
                    out.append(self._have_to(peer))
        if self._idle_at is not None and self._idle_at <= now:
            self._idle_at = None
            mine = (self.table.seq, self.table.head)
            out.extend(self._have_to(p) for p in self.peers
                       if self.confirmed.get(p) != mine[0] and self._told.get(p) != mine)
        return out

    def next_deadline(self) -> float | None:
        """When `tick` wants to be called next (None: not until another input)."""
        times = list(self._ask_at.values())
        if self._idle_at is not None:
            times.append(self._idle_at)
        return min(times) if times else None

    # ------------------------------------------------------------ internals

    def _stir(self, now: float | None) -> None:
        """Something happened (an event, a link): compare logs once things go quiet."""
        if now is not None:
            self._idle_at = now + self.idle_have

    def _fault(self, peer: Peer, seq: int | None, reason: str, fault: str,
               fork: tuple[bytes, bytes] | None = None) -> Fault:
        f = Fault(peer, seq, reason, fault, fork)
        self.faults.append(f)
        return f

    def _announce(self) -> list[Send]:
        """`links` to every peer: the node keys we are linked to now (at most MAX_LINKS; a
        link left out only makes the others forward more)."""
        if not self.relay:
            return []
        keys = sorted(p for p in self.peers if isinstance(p, bytes) and len(p) == KEY_LEN)
        msg = {"t": "links", "peers": keys[:MAX_LINKS]}
        return [(p, msg) for p in self.peers]

    def _linked(self, a: Peer, b: Peer) -> bool:
        """Whether a and b both said, in their last `links`, that they are linked."""
        return b in self._links.get(a, ()) and a in self._links.get(b, ())

    def _batch(self, start: int, stop: int | None = None) -> list[dict[str, Any]]:
        """Events from `start` to `stop`, in messages of at most MAX_BATCH events and
        MAX_BATCH_BYTES."""
        out: list[dict[str, Any]] = []
        items: list[bytes] = []
        size = 0
        first = start
        for e in self.table.events[start:stop]:
            if items and (len(items) == MAX_BATCH or size + len(e.signed) > MAX_BATCH_BYTES):
                out.append({"t": "events", "from": first, "items": items})
                first += len(items)
                items, size = [], 0
            items.append(e.signed)
            size += len(e.signed)
        if items:
            out.append({"t": "events", "from": first, "items": items})
        self.copies += sum(len(m["items"]) for m in out)
        return out

    def _on_refused(self, peer: Peer, msg: dict[str, Any], now: float | None) -> list[Send]:
        self.faults.append(Fault(peer, msg["seq"],
                                 f"peer refused our event: {one_line(msg['reason'], 200)}",
                                 one_line(msg["fault"], 20)))
        return []

    def _on_have(self, peer: Peer, msg: dict[str, Any], now: float | None) -> list[Send]:
        seq, head = msg["seq"], msg["head"]  # of the form of net/messages.py
        mine = self.table.seq
        self.confirmed[peer] = seq
        if seq == mine and head == self.table.head:
            self.alone_from = None  # it holds all we wrote
        shown: list[Send] = []
        if seq <= mine and seq > 0 and self.table.events[seq - 1].id != head:
            # Same seq, different history. If a takeover stands in ours, the peer may have
            # gone on alone at a seat it took over (say, it came back from a crash and its
            # bot moved before it relinked, or its moves were stalled on the way): it needs
            # our events from the takeover on, which replace its own (finding F of the
            # simulator: both asked, and nobody sent; seed 101671: we went alone only from
            # the move after our takeover, asked from there, and never sent the takeover)...
            k = self._last_takeover(seq)
            if k is not None:
                return [(peer, m) for m in self._batch(k)]
            # ...if we went on alone, ask from there (a takeover may stand in our place)...
            rewind = self._rewind(peer, seq - 1)
            if rewind is not None:
                return rewind
            # ...else it is a fault, and the peer gets the events we hold up to there (a
            # batch's worth): where its log parts from ours, if one author signed both events,
            # it now holds the proof of a fork (and sends it to everyone). The logs may part
            # a few events before the `have`'s seq (seed 100673: the twins at 28, each side's
            # next moves at 29 and 30), so one event is not enough.
            self._fault(peer, seq - 1, f"peer's log differs from ours at or before seq {seq - 1}",
                        "diverged")
            shown = [(peer, m) for m in self._batch(max(0, seq - MAX_BATCH), seq)]
        if peer in self.peers:
            self.peers[peer] = min(seq, mine)
        if seq < mine:
            if peer in self.peers:
                self.peers[peer] = mine
            return shown + [(peer, m) for m in self._batch(seq)]
        if seq > mine:
            return shown + [self._have_to(peer)]  # it holds more: tell it where we are
        if peer in self.peers and self._told.get(peer) != (mine, self.table.head):
            return shown + [self._have_to(peer)]  # the same: say so once, so both know they agree
        return shown

    def _on_links(self, peer: Peer, msg: dict[str, Any], now: float | None) -> list[Send]:
        """A peer's links. One it no longer has may have dropped events on the way: the peer
        on its far end gets our `have`, so it asks us for what it lacks."""
        if peer not in self.peers:
            return []  # nothing of a peer that is not linked is kept
        new = frozenset(k for k in msg["peers"] if k != peer)
        old = self._links.get(peer, frozenset())
        self._links[peer] = new
        mine = (self.table.seq, self.table.head)
        # (Once per state of our log: a peer that flaps its links gets no more out of us.)
        return [self._have_to(q) for q in sorted(old - new)
                if q in self.peers and self._told.get(q) != mine]

    def _on_events(self, peer: Peer, msg: dict[str, Any], now: float | None) -> list[Send]:
        start, items = msg["from"], msg["items"]  # of the form of net/messages.py
        out: list[Send] = []
        taken: list[tuple[Peer | None, int]] = []
        for offset, signed in enumerate(items):
            if self.fork is not None:
                break
            try:
                ev = self._offer(signed)
            except Fork as f:  # (a Fork is a Refused: this comes first)
                self._forked(peer, f, out)
                break
            except Refused as r:
                if r.fault == "seq" and r.seq is not None and r.seq > self.table.seq:
                    # A gap: its predecessor may be on its way over another link. Keep it
                    # and what follows it here, and ask only if the gap stays open.
                    self._keep_early(peer, items[offset:])
                    if now is None:
                        out.append(self._have_to(peer))
                    else:
                        self._ask_at.setdefault(peer, now + self.gap_wait)
                    break
                self._refused(peer, r, start + offset, out)
                break
            if ev is not None:
                self.accepted.append(ev)
                taken.append((peer, ev.seq))
        if peer in self.peers:
            self.peers[peer] = max(self.peers[peer], min(start + len(items), self.table.seq))
        if taken:
            self._stir(now)
        taken.extend(self._take_early(out))
        return self._relay(taken) + out

    def _keep_early(self, peer: Peer, items: list[bytes]) -> None:
        early = self._early.setdefault(peer, {})
        for signed in items:
            seq = _peek_seq(signed)
            if len(early) >= MAX_EARLY or seq is None:
                break
            early.setdefault(seq, signed)

    def _take_early(self, out: list[Send]) -> list[tuple[Peer | None, int]]:
        """Take the kept events that are next now, in order; then judge the copies of what we
        hold: a copy of the held event was an honest gap, anything else names its sender (a
        seq it could not have written then: taken by another author, or a fork)."""
        taken: list[tuple[Peer | None, int]] = []
        while self.fork is None:
            seq = self.table.seq
            source = next((p for p, early in self._early.items() if seq in early), None)
            if source is None:
                break
            signed = self._early[source].pop(seq)
            try:
                ev = self._offer(signed)
            except Fork as f:
                self._forked(source, f, out)
                break
            except Refused as r:
                self._refused(source, r, seq, out, early=True)
                continue
            if ev is not None:
                self.accepted.append(ev)
                taken.append((source, ev.seq))
        for peer, early in list(self._early.items()):
            for seq in sorted(s for s in early if s < self.table.seq):
                signed = early.pop(seq)
                try:
                    self.table.append(signed)
                except Fork as f:
                    self._forked(peer, f, out)
                except Refused as r:
                    self._fault(peer, seq, f"sent ahead of its time: {r.reason}", r.fault)
                    out.append((peer, _refusal(seq, r.reason, r.fault)))
            if not early:
                del self._early[peer]
                self._ask_at.pop(peer, None)
        return taken

    def _offer(self, signed: bytes) -> Event | None:
        """Our checks, then the table's (Refused or Fork when it is not taken)."""
        self._check_genesis_author(signed)
        self._check_barred(signed)
        return self._take(signed)

    def _refused(self, peer: Peer, r: Refused, seq: int, out: list[Send], *,
                 early: bool = False) -> None:
        """An event `peer` sent that we did not take (nothing after it in its message is read;
        `early`: it came ahead of its seq and was kept until now)."""
        if r.fault in ("seq", "prev") and r.seq is not None:
            # (a `prev` refusal: the logs part before r.seq; a seq taken by another: at it)
            rewind = self._rewind(peer, r.seq - 1 if r.fault == "prev" else r.seq)
            if rewind:  # the peer's history parts from ours where we went alone
                out.extend(rewind)
                return
        if r.fault == "promised":
            # Honest relaying, not the sender's fault: we ask for it again with a `have`
            # if the takeover is called off.
            return
        if isinstance(r, Disagreement):
            # The proof: the peer stops the game (Peer.tick), naming the seat that signed it.
            # Not a fault of whoever sent it: an honest peer passes the proof on (`disagree`).
            if self.disagreement is None:
                self.disagreement = r
            out.append((peer, _refusal(r.seq, r.reason, r.fault)))
            return
        reason = f"sent ahead of its time (seq {seq} was not due yet): {r.reason}" if early else r.reason
        self._fault(peer, r.seq if r.seq is not None else seq, reason, r.fault)
        out.append((peer, _refusal(r.seq, r.reason, r.fault)))

    def _forked(self, peer: Peer, f: Fork, out: list[Send]) -> None:
        if self.fork is None:
            self.fork = f
        self._fault(peer, f.seq, f.reason, "fork", (f.first.signed, f.second.signed))
        out.append((peer, _refusal(f.seq, f.reason, "fork")))

    def _take(self, signed: bytes) -> Event | None:
        """Append, or let a takeover stand in place of our own events at its seq."""
        try:
            return self.table.append(signed)
        except Refused as r:
            if r.fault != "seq" or r.seq is None or r.seq >= self.table.seq:
                raise
            try:
                ev = decode_event(signed)
            except EventError:
                raise r from None
            if ev.kind != TAKEOVER:
                raise
            self.superseded.extend(self.table.supersede(signed))
            self._rewound.clear()
            self.alone_from = None
            for p in self.peers:  # what they knew we held is gone from that seq on
                self.peers[p] = min(self.peers[p], ev.seq)
            return self.table.events[ev.seq]

    def _check_genesis_author(self, signed: bytes) -> None:
        """Refuse a genesis by another key than the host's (`genesis_by`)."""
        if self.genesis_by is None or self.table.seq != 0 or _peek_seq(signed) != 0:
            return
        try:
            author = decode_event(signed).author
        except EventError:
            return  # the table names what is wrong with it
        if author != self.genesis_by:
            raise Refused(0, "wrong author: the genesis is the host's to write, by the key "
                             "its lobby seats at seat 0", fault="author")

    def _check_barred(self, signed: bytes) -> None:
        """Refuse an event a takeover we consented to stands against (see the module doc)."""
        if not self.barred:
            return
        seq = _peek_seq(signed)
        if seq is None or seq not in self.barred or seq != self.table.seq:
            return
        try:
            ev = decode_event(signed)
        except EventError:
            return  # the table names what is wrong with it
        if ev.author in self.barred[seq] and ev.kind != TAKEOVER:
            raise Refused(seq, f"seq {seq}: the seats still here are agreeing to let a bot play "
                               "this seat, so its own move there waits", fault="promised")

    def _last_takeover(self, before: int) -> int | None:
        """The seq of the last takeover in our log before `before`, if any."""
        for k in range(min(before, self.table.seq) - 1, -1, -1):
            if self.table.events[k].kind == TAKEOVER:
                return k
        return None

    def _rewind(self, peer: Peer, parts: int) -> list[Send] | None:
        """Ask `peer` again from where we went on alone: a takeover may stand there in its
        history. [] while that question is open; None if we never went alone, if what we
        wrote alone starts with a takeover (then ours is the history that stands), or if the
        logs part at `parts` or before, ahead of our run alone: asking from the run's start
        cannot mend that, and a peer that holds fewer events than the run's start would
        answer only with its `have` again, each side waiting for the other (seed 661167: a
        forker showed each side one twin while we were down; we came back with our bots'
        run unconfirmed, and the twins were never compared)."""
        start = self.alone_from
        if start is None or not 0 < start < self.table.seq or parts < start:
            return None
        if self.table.events[start].kind == TAKEOVER:
            return None
        if self._rewound.get(peer) == start:
            return []
        self._rewound[peer] = start
        return [(peer, {"t": "have", "seq": start, "head": self.table.events[start - 1].id})]

    def _relay(self, taken: list[tuple[Peer | None, int]]) -> list[Send]:
        """Send newly taken events on: our own (source None) to every peer; another's to the
        peers its source is not linked to (every peer, with `relay` off)."""
        out: list[Send] = []
        if not taken:
            return out
        targets = {source: set(self.relay_targets(source)) for source in {s for s, _ in taken}}
        for p in self.peers:
            picked = [(source, seq) for source, seq in taken if p in targets[source]]
            seqs = [seq for _, seq in picked if seq < self.table.seq]
            for a, b in _runs(seqs):
                out.extend((p, m) for m in self._batch(a, b))
            self.relayed += sum(1 for source, seq in picked if source is not None)
            if seqs:
                self.peers[p] = max(self.peers[p], seqs[-1] + 1)
        return out


# What `received` does with each gossip message type.
_HANDLERS: dict[str, Callable[[Replica, Peer, dict[str, Any], float | None], list[Send]]] = {
    "have": Replica._on_have, "events": Replica._on_events, "refused": Replica._on_refused,
    "links": Replica._on_links,
}
GOSSIP: frozenset[str] = frozenset(_HANDLERS)  # the message types a shell hands to `received`


def _runs(seqs: list[int]) -> list[tuple[int, int]]:
    """Consecutive seqs as [start, stop) ranges: [3, 4, 5, 8] -> [(3, 6), (8, 9)]."""
    runs: list[tuple[int, int]] = []
    for s in seqs:
        if runs and runs[-1][1] == s:
            runs[-1] = (runs[-1][0], s + 1)
        else:
            runs.append((s, s + 1))
    return runs
