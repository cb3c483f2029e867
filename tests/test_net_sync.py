"""The gossip state machine, wired by an in-memory bus on a virtual clock (tests/bus.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from allegra_lan.local import LocalGame, Player, derived
from allegra_lan.log.envelope import sign_event
from allegra_lan.log.identity import Identity
from allegra_lan.net.sync import GAP_WAIT, IDLE_HAVE, Replica
from allegra_lan.rules import legal_moves, move_from_dict, ruleset_for, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.table import Table, move_body
from bus import Bus, key_of


def a_game(n: int = 3, variant: str = "grande", seed: bytes = b"s" * 32) -> LocalGame:
    players = [Player(f"p{i}", Identity.from_seed(derived("sync-key", i))) for i in range(n)]
    g = LocalGame(ruleset_for(variant), players, game_id=derived("sync-game")[:16],
                  nonces=[derived("sync-nonce", i) for i in range(n)])
    rng = Stream(seed, "sync")
    while to_act(g.state) is not None:
        lm = legal_moves(g.state)
        g.submit(lm[rng.below(len(lm))])
    return g


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
    assert b.faults and b.faults[0].peer == bus.key("a") and "bad signature" in b.faults[0].reason
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


# ---------------------------------------------------------------- relaying over missing links only


def mesh(names: list[str]) -> list[tuple[str, str]]:
    return [(x, y) for i, x in enumerate(names) for y in names[i + 1:]]


def author(g: LocalGame, signed_author: bytes) -> int:
    """The seat whose key signed an event (the genesis is seat 0's)."""
    return g.table.keys.index(signed_author)


def play(bus: Bus, g: LocalGame, owners: list[str], count: int, *, start: int = 0,
         within: float = 0.2) -> None:
    """Events `start` to `start + count` of `g`, each published by the replica of its seat,
    then `within` seconds of the bus (less than IDLE_HAVE: no timer rescues a lost relay)."""
    assert within < IDLE_HAVE
    for ev in g.table.events[start:start + count]:
        bus.publish(owners[author(g, ev.author)], ev.signed)
        bus.run(for_seconds=within)


def same_log(bus: Bus, names: list[str], seq: int) -> None:
    heads = {n: (bus.r[n].table.seq, bus.r[n].table.head) for n in names}
    assert len(set(heads.values())) == 1 and bus.r[names[0]].table.seq == seq, heads
    assert all(not bus.r[n].faults for n in names), {n: bus.r[n].faults for n in names}


@pytest.mark.parametrize("n, variant", [(4, "grande"), (6, "allegra")])
def test_each_event_is_copied_n_minus_1_times_in_a_full_mesh(n: int, variant: str) -> None:
    """Issue 10, point 4: the author sends to every linked peer and nobody relays (every peer
    said it is linked to every other), so n-1 copies per event, not (n-1)^2."""
    g = a_game(n, variant)
    names = [f"p{i}" for i in range(n)]
    bus = Bus(names, jitter=0.0005, seed=n)
    for x, y in mesh(names):
        bus.link(x, y)
    bus.run()
    before = bus.copies
    play(bus, g, names, 120)
    assert bus.copies - before == (n - 1) * 120
    assert sum(r.copies for r in bus.r.values()) == bus.copies  # the counter the benchmark reads
    assert sum(r.relayed for r in bus.r.values()) == 0
    same_log(bus, names, 120)


@pytest.mark.parametrize("links", [
    (("a", "b"), ("a", "c"), ("b", "c"), ("b", "d")),  # d hangs off b only
    (("a", "b"), ("b", "c"), ("c", "d")),  # a line: a's events take three hops to d
])
def test_an_event_reaches_a_peer_that_only_one_other_links_to(links: tuple[tuple[str, str], ...]) -> None:
    """Every event reaches d at once (within 0.2 s of virtual time, before any timer could
    catch it up), each copied n-1 = 3 times: a peer relays only to the peers its source is
    not linked to."""
    g = a_game(3)
    names = ["a", "b", "c", "d"]
    bus = Bus(names)
    for x, y in links:
        bus.link(x, y)
    bus.run()
    before = bus.copies
    for ev in g.table.events[:120]:
        bus.publish("abc"[author(g, ev.author)], ev.signed)
        bus.run(for_seconds=0.2)
        assert bus.r["d"].table.seq == ev.seq + 1
    assert bus.copies - before == 3 * 120
    same_log(bus, names, 120)


def two_linked_at_seq_10(events: list[Any]) -> tuple[bytes, bytes, Replica]:
    """A replica holding the first 10 events, linked to x and y, with no idle `have`."""
    x, y = key_of("x"), key_of("y")
    r = Replica(Table(), idle_have=60.0)
    for e in events[:10]:
        r.table.append(e.signed)
    r.connected(x, 0.0)
    r.connected(y, 0.0)
    return x, y, r


def test_a_gap_waits_for_the_in_flight_predecessor_then_asks() -> None:
    """An event one ahead of our log comes from x while its predecessor is on its way from y:
    no `have` goes out; once the predecessor is there both are taken and relayed. If it does
    not come within GAP_WAIT, x is asked with a `have` and sends what we lack."""
    events = a_game().table.events
    x, y, r = two_linked_at_seq_10(events)
    assert r.received(x, {"t": "events", "from": 11, "items": [events[11].signed]}, 1.0) == []
    assert r.table.seq == 10 and r.next_deadline() == pytest.approx(1.0 + GAP_WAIT)
    assert r.tick(1.0 + GAP_WAIT / 2) == []
    sends = r.received(y, {"t": "events", "from": 10, "items": [events[10].signed]}, 1.0 + GAP_WAIT / 2)
    assert r.table.seq == 12 and [e.seq for e in r.accepted] == [10, 11]
    assert not any(m["t"] == "have" for _, m in sends)
    # Each is relayed to the peer it did not come from (neither said what it is linked to).
    relayed = {(p, m["from"]) for p, m in sends if m["t"] == "events"}
    assert relayed == {(x, 10), (y, 11)}
    assert r.tick(1.0 + GAP_WAIT) == []  # the gap is closed: nothing to ask
    # The predecessor never comes.
    assert r.received(x, {"t": "events", "from": 13, "items": [events[13].signed]}, 2.0) == []
    assert r.tick(2.0 + GAP_WAIT * 0.9) == []
    assert r.tick(2.0 + GAP_WAIT) == [(x, {"t": "have", "seq": 12, "head": events[11].id})]
    r.received(x, {"t": "events", "from": 12, "items": [events[12].signed, events[13].signed]}, 2.1)
    assert r.table.seq == 14 and not r.faults and r.next_deadline() == pytest.approx(2.1 + 60.0)


def test_a_link_that_drops_mid_event_is_bridged_at_once_and_filled_once_back() -> None:
    """A full mesh copies each event n-1 times. The author's copy to v is lost with their
    link: u, which took the event assuming the two were linked, fills v as soon as the
    loss is known, before any timer. Then x loses every link while an event is on its way
    to it, and catches up when one link comes back."""
    g = a_game()
    events = g.table.events
    names = ["a", "b", "c"]
    bus = Bus(names, jitter=0.0005, seed=3)
    for x, y in mesh(names):
        bus.link(x, y)
    bus.run()
    before = bus.copies
    play(bus, g, names, 20)
    assert bus.copies - before == 2 * 20
    # Bridged: w's copy to v goes down with the w-v link.
    w = names[author(g, events[20].author)]
    v, u = [n for n in names if n != w]
    bus.publish(w, events[20].signed)
    bus.cut(w, v)
    bus.run(for_seconds=0.2)
    same_log(bus, names, 21)
    assert any(src == u and dst == v and m["t"] == "events" for src, dst, m in bus.delivered)
    # Back: x is cut off from both with an event on its way, then one link returns.
    bus.link(w, v)
    bus.run(for_seconds=0.2)
    w = names[author(g, events[21].author)]
    x, y = [n for n in names if n != w]
    bus.publish(w, events[21].signed)
    bus.cut(w, x)
    bus.cut(y, x)
    bus.run(for_seconds=0.2)
    assert bus.r[x].table.seq == 21 and bus.r[y].table.seq == 22
    bus.link(x, y)
    bus.run(for_seconds=0.2)
    same_log(bus, names, 22)


# ---------------------------------------------------------------- any links, one log

GAME = a_game(3, seed=b"p" * 32)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(2, 6), seed=st.integers(0, 2**32 - 1),
       steps=st.lists(st.tuples(st.sampled_from(["up", "down", "publish", "publish", "publish", "wait"]),
                                st.integers(0, 5), st.integers(0, 5)), min_size=40, max_size=200))
def test_replicas_that_end_connected_end_with_one_log(n: int, seed: int,
                                                     steps: list[tuple[str, int, int]]) -> None:
    """Links go up and down at any moment among 2-6 replicas, messages in flight over
    links with jitter (so copies overtake each other); seat s's events are published by
    replica s mod n when it holds their predecessors (else by one that does). Once the bus is quiet, the replicas
    of each connected part of the final links hold one log, and nobody was blamed."""
    names = [f"r{i}" for i in range(n)]
    bus = Bus(names, latency=0.001, jitter=0.003, seed=seed)
    for x, y in mesh(names):
        bus.link(x, y)
    events = GAME.table.events
    k = 0
    for what, i, j in steps:
        a, b = names[i % n], names[j % n]
        if what == "up" and a != b:
            bus.link(a, b)
        elif what == "down" and a != b:
            bus.cut(a, b)
        elif what == "publish" and k < len(events):
            # Its seat's replica, or (standing in for it) one that holds its predecessors.
            owner = names[author(GAME, events[k].author) % n]
            for _ in range(j % 3 + 1):  # a burst: one to three events back to back
                ready = [m for m in [owner] + names[i % n:] + names if bus.r[m].table.seq == k]
                if not ready or k == len(events):
                    break
                bus.publish(ready[0], events[k].signed)
                k += 1
                owner = names[author(GAME, events[k].author) % n] if k < len(events) else owner
        elif what == "wait":
            bus.run(for_seconds=0.001 * (i + 1))
        bus.run(for_seconds=0.0015)  # some of what was sent is still on its way
    bus.run()
    parts: list[set[str]] = []
    for name in names:
        joined = [p for p in parts if any(bus.linked(name, q) for q in p)]
        merged = {name}.union(*joined)
        parts = [p for p in parts if p not in joined] + [merged]
    event(f"{k // 10 * 10}+ events of {len(steps) // 25 * 25}+ steps, {len(parts)} parts")
    for part in parts:
        logs = {(bus.r[m].table.seq, bus.r[m].table.head) for m in part}
        assert len(logs) == 1, {m: bus.r[m].table.seq for m in part}
    assert all(not r.faults for r in bus.r.values()), {m: r.faults for m, r in bus.r.items()}


# ---------------------------------------------------------------- hostile gossip

anything = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2**33) | st.binary(max_size=40) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)
KEYS = [key_of(n) for n in ("x", "y", "z", "w")]
some_key = st.sampled_from(KEYS) | st.binary(min_size=32, max_size=32)
gossip = st.one_of(
    st.fixed_dictionaries({"t": st.just("links"), "peers": st.lists(some_key, max_size=70)}),
    st.fixed_dictionaries({"t": st.just("links")}, optional={"peers": anything, "x": anything}),
    st.fixed_dictionaries({"t": st.sampled_from(["have", "events", "refused", "links", "ping"])},
                          optional={"seq": anything, "head": anything, "from": anything,
                                    "items": anything, "peers": anything}),
    anything,
)


@settings(max_examples=300, deadline=None)
@given(msgs=st.lists(st.tuples(st.sampled_from(KEYS[:3]), gossip, st.floats(0, 5)), max_size=12))
def test_any_gossip_from_linked_peers_is_taken_or_one_protocol_fault(
        msgs: list[tuple[bytes, Any, float]]) -> None:
    """links (the new handler) and the rest: never an exception, a malformed message is one
    `protocol` fault, sends go only to linked peers and are of their schema, and what is
    kept of each peer is bounded (its last links, at most MAX_LINKS keys)."""
    from allegra_lan.net.messages import MAX_LINKS, MessageError, check_message

    events = GAME.table.events
    r = Replica(Table())
    for e in events[:5]:
        r.table.append(e.signed)
    linked = set(KEYS[:3])
    for k in KEYS[:3]:
        r.connected(k, 0.0)
    t = 0.0
    for peer, msg, dt in msgs:
        t += dt
        faults = len(r.faults)
        try:
            check_message(msg)
            valid = True
        except MessageError:
            valid = False
        sends = r.received(peer, msg, t) + r.tick(t)
        if not valid:
            assert [f.fault for f in r.faults[faults:]] == ["protocol"]
        for to, out in sends:
            assert to in linked
            check_message(out)
        assert all(len(v) <= MAX_LINKS for v in r._links.values())
        assert set(r._links) <= linked
    r.disconnected(KEYS[0], t)
    assert KEYS[0] not in r._links and KEYS[0] not in r.peers


def test_links_are_announced_and_a_lost_one_gets_the_far_end_one_have() -> None:
    """Each (re)connection and loss is announced to every link. x relays nothing to y, whom
    x says it is linked to; when x stops naming y, y gets our `have` (it may have lost an
    event on the x-y link), once per state of our log however often x flaps."""
    events = GAME.table.events
    x, y, z = (key_of(n) for n in "xyz")
    r = Replica(Table())
    for e in events[:5]:
        r.table.append(e.signed)
    r.connected(x, 0.0)
    sends = r.connected(y, 0.0)
    assert sends[1:] == [(p, {"t": "links", "peers": sorted([x, y])}) for p in (x, y)]
    r.received(x, {"t": "links", "peers": [y, z]}, 0.1)
    assert r.received(y, {"t": "links", "peers": [x]}, 0.1) == []
    assert r.received(x, {"t": "events", "from": 5, "items": [events[5].signed]}, 0.15) == []
    assert r.received(x, {"t": "links", "peers": [z]}, 0.2) == [(y, r.have())]
    r.received(x, {"t": "links", "peers": [y, z]}, 0.3)
    assert r.received(x, {"t": "links", "peers": []}, 0.4) == []  # y was told already
    sends = r.disconnected(x, 0.5)
    assert sends == [(y, {"t": "links", "peers": [y]}), (y, r.have())]
    assert r.table.seq == 6 and not r.faults


def test_a_kept_event_that_does_not_fit_when_its_seq_comes_is_named() -> None:
    """An event signed for a seq ahead (a peer cannot hold it yet) waits for its seq like an
    honest gap; once due, one that does not follow the log is refused, named as sent ahead
    of its time, and the sender is told."""
    g = a_game()
    events = g.table.events
    x, y, r = two_linked_at_seq_10(events)
    late = events[12]
    seat = g.table.seat_of(late.author)
    assert seat is not None
    wrong = sign_event(g.players[seat].identity.key, game=late.game, seq=12, prev=events[10].prev,
                       kind=late.kind, body=late.body).signed
    assert r.received(x, {"t": "events", "from": 12, "items": [wrong]}, 1.0) == []
    sends = r.received(y, {"t": "events", "from": 10, "items": [e.signed for e in events[10:12]]}, 1.01)
    assert r.table.seq == 12
    assert [(f.peer, f.seq, f.fault) for f in r.faults] == [(x, 12, "prev")]
    assert r.faults[0].reason.startswith("sent ahead of its time (seq 12 was not due yet): prev ")
    assert (x, {"t": "refused", "seq": 12, "reason": "prev is not the id of the event before",
                "fault": "prev"}) in sends


def test_relay_targets_are_the_peers_the_source_does_not_reach() -> None:
    """What _relay uses for events, public for other signed messages (knock answers)."""
    x, y, z = (key_of(n) for n in "xyz")
    r = Replica(Table())
    for k in (x, y, z):
        r.connected(k, 0.0)
    assert r.relay_targets(None) == [x, y, z]
    assert r.relay_targets(x) == [y, z]  # nobody said what it is linked to: all but the source
    r.received(x, {"t": "links", "peers": [y]}, 0.1)
    assert r.relay_targets(x) == [y, z]  # y has not said so: the link does not count yet
    r.received(y, {"t": "links", "peers": [x, z]}, 0.1)
    assert r.relay_targets(x) == [z] and r.relay_targets(y) == [z]  # z has said nothing
    r.relay = False
    assert r.relay_targets(x) == [y, z]


def test_a_peer_back_with_its_run_unconfirmed_still_shows_twins_before_the_run() -> None:
    """Seed 661167 of the long run: a forker showed each side one twin of its event while
    a peer was down; that peer came back with its own bots' events after the twin not yet
    confirmed by anyone (`alone_from`), and the other side, one event short of that run,
    said `have` at the twin. Asking from the run's start could not mend a log that parts
    before it: the other side answered with its `have` again, each waited for the other,
    and the twins were never compared. Now the twin ahead of the run is sent at once."""
    g = a_game()
    events = g.table.events
    # Event k is by one seat, k + 1 by another: k will have a twin, k + 1 is b's own run.
    k = next(i for i in range(30, len(events) - 1)
             if events[i].author != events[i + 1].author and events[i].kind == "place")
    before = Table()
    for ev in events[:k]:
        before.append(ev.signed)
    assert before.state is not None
    mine = move_from_dict({"move": events[k].kind, **events[k].body})
    other = next(m for m in legal_moves(before.state) if m != mine)
    seat = g.table.seat_of(events[k].author)
    assert seat is not None
    kind, body = move_body(other)
    twin = sign_event(g.players[seat].identity.key, game=events[k].game, seq=k,
                      prev=events[k].prev, kind=kind, body=body)
    assert twin.seq == k and twin.author == events[k].author and twin.signed != events[k].signed

    bus = Bus(["a", "b"])
    for ev in events[:k]:
        bus.r["a"].publish(ev.signed)
    bus.r["a"].publish(twin.signed)
    for ev in events[:k + 2]:
        bus.r["b"].publish(ev.signed)
    bus.r["b"].resumed({events[k + 1].author})
    assert bus.r["b"].alone_from == k + 1
    bus.link("a", "b")
    bus.run()
    a = bus.r["a"]
    assert a.fork is not None and {a.fork.first.signed, a.fork.second.signed} == {
        twin.signed, events[k].signed}
