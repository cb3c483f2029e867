"""The listening peer's door (net/gate.py): how many strangers may be half-way in at once,
who makes room when the door is crowded, and how accept() backs off when out of
descriptors. Pure rules here; tests/test_net_resources.py floods a real `allegra host`."""

from __future__ import annotations

import os

import errno

from hypothesis import given, settings, strategies as st

from allegra_lan.net.gate import BACKOFF_MAX, NOTE_EVERY, AcceptBackoff, Gate, Throttle


def test_one_address_may_hold_only_so_many_handshakes() -> None:
    gate = Gate(max_pending=10, max_per_source=3)
    tickets = [gate.enter("10.9.9.9").ticket for _ in range(3)]
    assert None not in tickets
    fourth = gate.enter("10.9.9.9")
    assert fourth.ticket is None and "3 connections from 10.9.9.9" in (fourth.why or "")
    assert gate.enter("10.9.9.8").ticket is not None  # another address is not held up
    gate.leave("10.9.9.9", tickets[0])  # type: ignore[arg-type]
    assert gate.enter("10.9.9.9").ticket is not None


def test_a_crowded_door_makes_the_biggest_crowd_give_up_its_oldest() -> None:
    """A flood from many addresses fills every place; a player who then joins gets in, and
    the place comes from the address with the most unfinished handshakes, oldest first."""
    gate = Gate(max_pending=6, max_per_source=4)
    flood = [gate.enter("10.0.0.2") for _ in range(4)] + [gate.enter("10.0.0.3") for _ in range(2)]
    assert all(a.evict is None for a in flood) and gate.total == 6
    honest = gate.enter("127.0.0.1")
    assert honest.ticket is not None and honest.evict == flood[0].ticket
    assert gate.total == 6 and len(gate.pending["10.0.0.2"]) == 3


def test_notes_about_refusals_come_at_most_once_per_interval_with_counts() -> None:
    gate = Gate(max_pending=64, max_per_source=1)
    gate.enter("10.0.0.2")
    for _ in range(500):
        gate.enter("10.0.0.2")
    first = gate.note(100.0, "why")
    assert first is not None and first.startswith("refused or cut off 500 unfinished connection(s) from 10.0.0.2 (500)")
    gate.enter("10.0.0.2")
    assert gate.note(100.0 + NOTE_EVERY / 2, "why") is None
    assert gate.note(100.0 + NOTE_EVERY, "why") is not None


def test_accept_backs_off_doubling_and_says_so_once_per_burst() -> None:
    b = AcceptBackoff()
    delay, note = b.failed(OSError(errno.EMFILE, "Too many open files"))
    assert note is not None and "out of file descriptors (EMFILE)" in note
    delays = [delay] + [b.failed(OSError(errno.EMFILE, "x"))[0] for _ in range(10)]
    assert delays == sorted(delays) and delays[-1] == BACKOFF_MAX
    assert all(b.failed(OSError(errno.EMFILE, "x"))[1] is None for _ in range(3))
    back = b.succeeded()
    assert back is not None and "14 time(s)" in back  # 1 + 10 + 3
    assert b.succeeded() is None
    assert b.failed(OSError(errno.ENFILE, "x"))[1] is not None  # a new burst is named again


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 9)), max_size=300),
       st.integers(1, 12), st.integers(1, 5))
def test_the_gate_never_holds_more_than_its_limits(steps: list[tuple[bool, int]], cap: int,
                                                   per: int) -> None:
    """Any sequence of arrivals and departures: never more than `cap` in all, `per` from one
    address, every eviction names a ticket that was pending, and counts stay consistent."""
    gate = Gate(max_pending=cap, max_per_source=per)
    live: dict[int, str] = {}
    for arrive, who in steps:
        source = f"10.0.0.{who}"
        if arrive:
            a = gate.enter(source)
            if a.evict is not None:
                assert a.evict in live
                del live[a.evict]
            if a.ticket is not None:
                live[a.ticket] = source
            else:
                assert a.why
        elif live:
            ticket = min(live)
            gate.leave(live.pop(ticket), ticket)
        assert gate.total == len(live) <= cap
        assert all(len(t) <= per for t in gate.pending.values())
        assert len(gate.refused) <= cap


def test_refused_handshakes_are_said_once_per_interval_with_a_count() -> None:
    t = Throttle()
    assert t.note(10.0, "refused a connection: bad frame") == "refused a connection: bad frame"
    assert all(t.note(10.0 + i / 100, "x") is None for i in range(300))
    later = t.note(10.0 + NOTE_EVERY, "refused a connection: wrong PIN")
    assert later == "refused a connection: wrong PIN (and 300 more like it in the last 5 s)"


def test_nothing_of_a_stranger_is_kept_once_its_link_is_gone(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Each key that connects leaves no entry behind when it leaves (issue 9: every per-peer
    table bounded): 30 strangers that say `have` and go leave `heard`, `confirmed` and the
    replica's peers empty, and at most MAX_WATCHERS of them were ever linked at once."""
    import trio

    from allegra_lan.log.identity import Identity
    from allegra_lan.net.framing import FramedStream
    from allegra_lan.net.gate import MAX_WATCHERS
    from allegra_lan.net.framing import ConnectionClosed
    from allegra_lan.net.handshake import HandshakeError, handshake
    from allegra_lan.net.node import Node
    from allegra_lan.net.peer import Peer

    table_id = b"\x05" * 16
    host = Node(Peer(Identity.generate(), table_id=table_id, entropy=os.urandom), "127.0.0.1",
                pin=None, games_dir=tmp_path, say=lambda _: None)
    most = 0

    async def stranger(port: int) -> None:
        for _ in range(100):  # 30 at once from one address: the gate lets 8 in at a time
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            fs = FramedStream(stream)
            try:
                await handshake(fs, Identity.generate(), initiator=True, table_id=table_id,
                                pin=None, expect_keys=None)
                await fs.send({"t": "have", "seq": 0, "head": b"\x00" * 32})
                await trio.sleep(0.2)
                return
            except (HandshakeError, ConnectionClosed):
                await trio.sleep(0.05)
            finally:
                await fs.aclose()
        raise AssertionError("a stranger never got in")

    async def main() -> None:
        nonlocal most
        async with trio.open_nursery() as n:
            listening = trio.Event()
            n.start_soon(lambda: host.run(on_listening=lambda _: listening.set()))
            await listening.wait()
            port = host.port
            with trio.fail_after(60):
                async with trio.open_nursery() as crowd:
                    for _ in range(30):
                        crowd.start_soon(stranger, port)
                    while True:
                        most = max(most, len(host.links))
                        await trio.sleep(0.01)
                        if not crowd.child_tasks:
                            break
                while host.links:
                    await trio.sleep(0.05)
            n.cancel_scope.cancel()

    trio.run(main)
    assert 1 <= most <= MAX_WATCHERS
    assert host.peer.heard == {} and host.replica.confirmed == {} and host.replica.peers == {}
