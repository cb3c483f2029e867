"""Gossip and catch-up as a pure state machine (sans-I/O, like h11).

A `Replica` holds one peer's `Table` and what it knows of each connected peer.
Messages in, messages out: `connected`, `received` and `publish` return the
sends they call for, as (peer, message) pairs; the trio layer only moves
bytes. So the rules of the mesh can be tested without a socket, and every
peer forwards, catches up and refuses in exactly the same way.

Messages (maps with a "t" field):
  have    {t, seq, head}        how many events I hold and the id of the last
  events  {t, from, items}      signed events from seq `from` on, in order
  refused {t, seq, reason, fault}  why I did not take an event you sent
Each accepted event is forwarded to every other connected peer that may lack
it, so a missing link does not stall the game (DESIGN.md, "Network").

Seat takeovers (PROTOCOL.md): while this peer has consented to a takeover at
seq n, `barred[n]` holds the keys of the seats being taken, and their events
at n are refused, so the takeover cannot race them into two histories. A peer
that went on writing its own seats' moves with nobody connected (`alone_from`)
and then meets a history that parts from its own asks again from where it went
alone (a `have` at that seq); a valid takeover there supersedes that run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Hashable

from ..log.envelope import Event, EventError, decode_event
from ..text import one_line
from ..table import TAKEOVER, Fork, Refused, Table, _peek_seq
from .messages import MAX_BATCH, MessageError, check_message

MAX_REASON = 200  # characters of a refusal's reason we send (a peer's schema allows more)
MAX_EARLY = 8  # events ahead of our log kept per peer, to be judged once we hold their seq
MAX_BATCH_BYTES = 48 * 1024  # and bytes of events, so a message always fits one 64 KiB frame

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
    alone_from: int | None = None  # the first event we wrote that no peer is known to hold
    barred: dict[int, frozenset[bytes]] = field(default_factory=dict)  # seq -> keys refused there
    # The only key whose genesis we take (the host's seat 0, from the lobby): a genesis is
    # valid on its own, so without this a seated guest's genesis naming itself seat 0 could
    # reach the others first and start another game in place of the host's.
    genesis_by: bytes | None = None
    superseded: list[Event] = field(default_factory=list)  # our events a takeover replaced
    _rewound: dict[Peer, int] = field(default_factory=dict)  # where we last asked a peer from
    _early: dict[Peer, dict[int, bytes]] = field(default_factory=dict)  # events ahead of our seq

    def have(self) -> dict[str, Any]:
        return {"t": "have", "seq": self.table.seq, "head": self.table.head}

    def connected(self, peer: Peer) -> list[Send]:
        """A peer (re)connected: say what we hold; it answers with what we lack."""
        self.peers[peer] = 0
        return [(peer, self.have())]

    def disconnected(self, peer: Peer) -> None:
        self.peers.pop(peer, None)
        self._early.pop(peer, None)
        self._rewound.pop(peer, None)

    def publish(self, signed: bytes) -> list[Send]:
        """Our own new event: take it (Refused propagates: our own move must be legal)."""
        ev = self.table.append(signed)
        if ev is None:
            return []
        self.accepted.append(ev)
        if not self.peers and self.alone_from is None:
            self.alone_from = ev.seq
        return self._forward(None, ev.seq) + self._judge_early()

    def resumed(self, own: set[bytes]) -> None:
        """After a restart nobody is known to hold the trailing run of our own events."""
        events = self.table.events
        start = len(events)
        while start > 0 and events[start - 1].author in own:
            start -= 1
        if start < len(events):
            self.alone_from = start

    def received(self, peer: Peer, msg: Any) -> list[Send]:
        """Handle a gossip message; any other value is a fault of class `protocol` (named by
        its schema, net/messages.py), never an exception."""
        try:
            t = check_message(msg).name
        except MessageError as e:
            self._fault(peer, None, str(e), "protocol")
            return []
        if t == "have":
            return self._on_have(peer, msg)
        if t == "events":
            return self._on_events(peer, msg)
        if t == "refused":
            self.faults.append(Fault(peer, msg["seq"],
                                     f"peer refused our event: {one_line(msg['reason'], 200)}",
                                     one_line(msg["fault"], 20)))
            return []
        self._fault(peer, None, f"a {t} message is not gossip", "protocol")
        return []

    # ------------------------------------------------------------ internals

    def _fault(self, peer: Peer, seq: int | None, reason: str, fault: str,
               fork: tuple[bytes, bytes] | None = None) -> Fault:
        f = Fault(peer, seq, reason, fault, fork)
        self.faults.append(f)
        return f

    def _batch(self, start: int) -> list[dict[str, Any]]:
        """Events from `start` on, in messages of at most MAX_BATCH events and MAX_BATCH_BYTES."""
        out: list[dict[str, Any]] = []
        items: list[bytes] = []
        size = 0
        first = start
        for e in self.table.events[start:]:
            if items and (len(items) == MAX_BATCH or size + len(e.signed) > MAX_BATCH_BYTES):
                out.append({"t": "events", "from": first, "items": items})
                first += len(items)
                items, size = [], 0
            items.append(e.signed)
            size += len(e.signed)
        if items:
            out.append({"t": "events", "from": first, "items": items})
        return out

    def _on_have(self, peer: Peer, msg: dict[str, Any]) -> list[Send]:
        seq, head = msg["seq"], msg["head"]  # of the form of net/messages.py
        mine = self.table.seq
        self.confirmed[peer] = seq
        if seq == mine and head == self.table.head:
            self.alone_from = None  # it holds all we wrote
        if seq <= mine and seq > 0 and self.table.events[seq - 1].id != head:
            # Same seq, different history: if we went on alone, ask from there (a
            # takeover may stand in our place); else it is a fault.
            rewind = self._rewind(peer)
            if rewind is not None:
                return rewind
            self._fault(peer, seq - 1, f"peer's log differs from ours at or before seq {seq - 1}",
                        "diverged")
        self.peers[peer] = min(seq, mine)
        if seq < mine:
            self.peers[peer] = mine
            return [(peer, m) for m in self._batch(seq)]
        if seq > mine:
            return [(peer, self.have())]  # it holds more: tell it where we are
        return []

    def _on_events(self, peer: Peer, msg: dict[str, Any]) -> list[Send]:
        start, items = msg["from"], msg["items"]  # of the form of net/messages.py
        out: list[Send] = []
        first_new: int | None = None
        for offset, signed in enumerate(items):
            if self.fork is not None:
                break
            try:
                self._check_genesis_author(signed)
                self._check_barred(signed)
                ev = self._take(signed)
            except Fork as f:
                self.fork = f
                self._fault(peer, f.seq, f.reason, "fork", (f.first.signed, f.second.signed))
                out.append((peer, _refusal(f.seq, f.reason, "fork")))
                break
            except Refused as r:
                if r.fault == "seq" and r.seq is not None and r.seq > self.table.seq:
                    # A gap: we lack events before it; ask for them, and judge this one
                    # once we hold its seq (a peer cannot hold an event before its time).
                    early = self._early.setdefault(peer, {})
                    if len(early) < MAX_EARLY:
                        early.setdefault(r.seq, signed)
                    out.append((peer, self.have()))
                    break
                if r.fault in ("seq", "prev"):
                    rewind = self._rewind(peer)
                    if rewind:  # the peer's history parts from ours where we went alone
                        out.extend(rewind)
                        break
                if r.fault == "promised":
                    # Honest relaying, not the sender's fault: we ask for it again with a
                    # `have` if the takeover is called off.
                    break
                self._fault(peer, r.seq if r.seq is not None else start + offset, r.reason, r.fault)
                out.append((peer, _refusal(r.seq, r.reason, r.fault)))
                break
            if ev is not None:
                self.accepted.append(ev)
                if first_new is None:
                    first_new = ev.seq
        self.peers[peer] = max(self.peers.get(peer, 0), min(start + len(items), self.table.seq))
        if first_new is not None:
            out.extend(self._forward(peer, first_new))
            out.extend(self._judge_early())
        return out

    def _judge_early(self) -> list[Send]:
        """Events that came ahead of their time, now that we hold their seq: a copy of the
        held event was an honest gap; anything else names its sender (a seq it could not
        have written then: taken by another author, or a fork)."""
        out: list[Send] = []
        for peer, early in list(self._early.items()):
            for seq in sorted(s for s in early if s < self.table.seq):
                signed = early.pop(seq)
                try:
                    self.table.append(signed)
                except Fork as f:
                    if self.fork is None:
                        self.fork = f
                    self._fault(peer, f.seq, f.reason, "fork", (f.first.signed, f.second.signed))
                except Refused as r:
                    self._fault(peer, seq, f"sent ahead of its time: {r.reason}", r.fault)
                    out.append((peer, _refusal(seq, r.reason, r.fault)))
            if not early:
                del self._early[peer]
        return out

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

    def _rewind(self, peer: Peer) -> list[Send] | None:
        """Ask `peer` again from where we went on alone: a takeover may stand there in its
        history. [] while that question is open; None if we never went alone."""
        start = self.alone_from
        if start is None or not 0 < start < self.table.seq:
            return None
        if self._rewound.get(peer) == start:
            return []
        self._rewound[peer] = start
        return [(peer, {"t": "have", "seq": start, "head": self.table.events[start - 1].id})]

    def _forward(self, source: Peer | None, first: int) -> list[Send]:
        """Send events from `first` on to every peer but their source."""
        out: list[Send] = []
        for p, known in self.peers.items():
            if p == source:
                continue
            start = min(first, known)
            for m in self._batch(start):
                out.append((p, m))
            self.peers[p] = self.table.seq
        return out
