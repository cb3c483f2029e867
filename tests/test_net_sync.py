"""The gossip state machine, wired by an in-memory bus (the trio layer only moves bytes)."""

from __future__ import annotations

from collections import deque
from typing import Any

from allegra_lan.local import LocalGame, Player, derived
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.net.sync import Replica
from allegra_lan.rules import legal_moves, ruleset_for, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Table


def a_game(n: int = 3, variant: str = "grande") -> LocalGame:
    players = [Player(f"p{i}", Identity.from_seed(derived("sync-key", i))) for i in range(n)]
    g = LocalGame(ruleset_for(variant), players, game_id=derived("sync-game")[:16],
                  nonces=[derived("sync-nonce", i) for i in range(n)])
    rng = Stream(b"s" * 32, "sync")
    while to_act(g.state) is not None:
        lm = legal_moves(g.state)
        g.submit(lm[rng.below(len(lm))])
    return g


class Bus:
    """Delivers sends between replicas in order, with links that can be cut."""

    def __init__(self, names: list[str]) -> None:
        self.r = {n: Replica(Table()) for n in names}
        self.q: deque[tuple[str, str, dict[str, Any]]] = deque()
        self.down: set[frozenset[str]] = set()

    def link(self, a: str, b: str) -> None:
        self.down.discard(frozenset((a, b)))
        self.push(a, self.r[a].connected(b))
        self.push(b, self.r[b].connected(a))

    def cut(self, a: str, b: str) -> None:
        self.down.add(frozenset((a, b)))
        self.r[a].disconnected(b)
        self.r[b].disconnected(a)

    def push(self, src: str, sends: list) -> None:
        for dst, msg in sends:
            self.q.append((src, dst, msg))

    def run(self, limit: int = 100_000) -> None:
        for _ in range(limit):
            if not self.q:
                return
            src, dst, msg = self.q.popleft()
            if frozenset((src, dst)) in self.down:
                continue
            self.push(dst, self.r[dst].received(src, msg))
        raise AssertionError("the bus did not settle")


def test_events_published_at_one_peer_reach_all_in_a_mesh() -> None:
    g = a_game()
    bus = Bus(["a", "b", "c"])
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        bus.link(x, y)
    bus.run()
    for ev in g.table.events:
        bus.push("a", bus.r["a"].publish(ev.signed))
        bus.run()
    for name in "abc":
        assert bus.r[name].table.seq == g.table.seq
        assert bus.r[name].table.state_hash() == g.table.state_hash()
        assert not bus.r[name].faults


def test_a_missing_link_is_bridged_by_forwarding() -> None:
    g = a_game()
    bus = Bus(["a", "b", "c"])
    bus.link("a", "b")
    bus.link("b", "c")  # no a-c link
    bus.run()
    for ev in g.table.events[:50]:
        bus.push("a", bus.r["a"].publish(ev.signed))
    bus.run()
    assert bus.r["c"].table.seq == 50


def test_a_peer_that_was_away_catches_up_on_reconnect() -> None:
    g = a_game()
    bus = Bus(["a", "b"])
    bus.link("a", "b")
    bus.run()
    events = g.table.events
    for ev in events[:10]:
        bus.push("a", bus.r["a"].publish(ev.signed))
    bus.run()
    bus.cut("a", "b")
    for ev in events[10:200]:
        bus.push("a", bus.r["a"].publish(ev.signed))
    bus.run()
    assert bus.r["b"].table.seq == 10
    bus.link("a", "b")
    bus.run()
    assert bus.r["b"].table.seq == 200
    assert bus.r["b"].table.head == bus.r["a"].table.head


def test_a_forged_event_is_refused_named_and_not_forwarded() -> None:
    g = a_game()
    bus = Bus(["a", "b", "c"])
    for x, y in (("a", "b"), ("b", "c")):
        bus.link(x, y)
    for ev in g.table.events[:30]:
        bus.push("a", bus.r["a"].publish(ev.signed))
    bus.run()
    forged = bytearray(g.table.events[30].signed)
    forged[10] ^= 1
    bus.push("a", [("b", {"t": "events", "from": 30, "items": [bytes(forged)]})])
    bus.run()
    b = bus.r["b"]
    assert b.table.seq == 30 and bus.r["c"].table.seq == 30
    assert b.faults and b.faults[0].peer == "a" and "bad signature" in b.faults[0].reason
    # The sender is told why.
    assert any("refused" in f.reason for f in bus.r["a"].faults)


def test_a_fork_is_kept_as_proof_and_stops_taking_events() -> None:
    g = a_game()
    bus = Bus(["a", "b"])
    bus.link("a", "b")
    for ev in g.table.events[:40]:
        bus.push("a", bus.r["a"].publish(ev.signed))
    bus.run()
    last = g.table.events[39]
    seat = g.table.seat_of(last.author)
    assert seat is not None
    twin = sign_event(g.players[seat].identity.key, game=last.game, seq=last.seq, prev=last.prev,
                      kind=last.kind, body={**last.body, "x": 1}).signed
    bus.push("a", [("b", {"t": "events", "from": 39, "items": [twin]})])
    bus.run()
    b = bus.r["b"]
    assert b.fork is not None and b.faults[-1].fault == "fork"
    assert b.faults[-1].fork == (last.signed, twin)


def test_malformed_messages_are_faults_not_crashes() -> None:
    r = Replica(Table())
    r.connected("x")
    for msg in ({"t": "nope"}, {"t": "have", "seq": "1", "head": b""}, {"t": "events", "from": 0, "items": "x"},
                {"t": "events", "from": 0, "items": [1, 2]}):
        assert r.received("x", msg) == []
    assert [f.fault for f in r.faults] == ["protocol"] * 4


def test_only_the_hosts_genesis_is_taken() -> None:
    """Issue 9: a genesis is valid on its own, so a seated guest could sign one naming itself
    seat 0 and send it before the host's: the others would fold another game and refuse the
    real one. A replica that knows the lobby's seat-0 key takes a genesis by that key only."""
    real = a_game()
    # Another, self-consistent game whose seat 0 is a guest's key.
    players = [Player(f"rogue{i}", Identity.from_seed(derived("rogue-key", i))) for i in range(3)]
    rogue = LocalGame(ruleset_for("grande"), players, game_id=derived("sync-game")[:16],
                      nonces=[derived("rogue-nonce", i) for i in range(3)])
    rogue_genesis = rogue.table.events[0].signed
    r = Replica(Table(), genesis_by=real.table.keys[0])
    r.received("guest", {"t": "events", "from": 0, "items": [rogue_genesis]})
    assert r.table.seq == 0
    assert r.faults and "the genesis is the host's to write" in r.faults[0].reason
    r.received("host", {"t": "events", "from": 0, "items": [e.signed for e in real.table.events[:5]]})
    assert r.table.seq == 5 and r.table.head == real.table.events[4].id
