"""Seat takeovers in the log: the remaining seats' consent, checked by every Table alike."""

from __future__ import annotations

import pytest

from allegra_lan.log.envelope import Event, sign_event
from allegra_lan.log.takeover import sign_consent
from allegra_lan.rules import legal_moves, to_act
from allegra_lan.table import Refused, Table, fold, move_body

from helpers import local, new_key, play_random, takeover


def _refused(t: Table, signed: bytes, fault: str) -> str:
    with pytest.raises(Refused) as info:
        t.append(signed)
    assert info.value.fault == fault, info.value
    return info.value.reason


def test_a_takeover_gives_the_seat_to_act_a_new_key_and_the_game_goes_on() -> None:
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    bot = new_key("bot")
    ev = g.table.append(takeover(g, g.table, [d.seat], keys=[bot]))
    assert isinstance(ev, Event) and g.table.keys[d.seat] == bot.public
    author = min(s for s in range(3) if s != d.seat)  # takeover() has the first seat that stays write it
    assert g.table.played_by[d.seat] == author  # whose peer runs the bot: the author's
    # The seat's old key may no longer write; the new one may.
    move = legal_moves(g.state)[0]
    kind, body = move_body(move)
    old = sign_event(g.players[d.seat].identity.key, game=g.game_id, seq=g.table.seq,
                     prev=g.table.head, kind=kind, body=body).signed
    assert "wrong author" in _refused(g.table, old, "author")
    g.table.append(sign_event(bot.key, game=g.game_id, seq=g.table.seq, prev=g.table.head,
                              kind=kind, body=body).signed)
    # A replay tool folds the log with the takeover to the same state.
    t, fault = fold(e.signed for e in g.table.events)
    assert fault is None and t.state_hash() == g.table.state_hash() and t.keys == g.table.keys
    assert t.played_by == g.table.played_by


def test_every_remaining_seat_must_consent() -> None:
    g = local("grande", 4)
    play_random(g, 9)
    d = to_act(g.state)
    assert d is not None
    stay = [s for s in range(4) if s != d.seat]
    reason = _refused(g.table, takeover(g, g.table, [d.seat], signers=stay[:-1]), "takeover")
    assert "consent of every seat that stays" in reason
    # A consent by the wrong seat's key, in the right place, is named.
    wrong = takeover(g, g.table, [d.seat], signers=stay)
    t2 = Table()
    for e in g.table.events:
        t2.append(e.signed)
    seats = [[d.seat, new_key(f"bot{d.seat}").public]]
    signs = [[s, sign_consent(g.players[stay[0]].identity.key, g.game_id, g.table.seq, g.table.head,
                              [(d.seat, seats[0][1])])] for s in stay]
    forged = sign_event(g.players[stay[0]].identity.key, game=g.game_id, seq=g.table.seq,
                        prev=g.table.head, kind="takeover", body={"seats": seats, "signs": signs}).signed
    assert f"seat {stay[1]}" in _refused(t2, forged, "takeover")
    assert t2.append(wrong) is not None


def test_a_takeover_only_where_a_taken_seat_must_act() -> None:
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    other = (d.seat + 1) % 3
    reason = _refused(g.table, takeover(g, g.table, [other]), "takeover")
    assert f"seat {d.seat}, which must act now" in reason


def test_the_taken_seat_cannot_write_its_own_takeover_nor_take_every_seat() -> None:
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    assert "wrong author" in _refused(g.table, takeover(g, g.table, [d.seat], author=d.seat), "author")
    everyone = takeover(g, g.table, [0, 1], author=2)
    assert g.table.append(everyone) is not None  # two of three taken: seat 2 consents alone
    g2 = local("grande", 2)
    play_random(g2, 12)
    d2 = to_act(g2.state)
    assert d2 is not None
    body = {"seats": [[0, new_key("a").public], [1, new_key("b").public]], "signs": []}
    ev = sign_event(g2.players[0].identity.key, game=g2.game_id, seq=g2.table.seq,
                    prev=g2.table.head, kind="takeover", body=body).signed
    assert "at least one seat" in _refused(g2.table, ev, "takeover")


def test_a_consent_is_for_one_place_in_one_log() -> None:
    """A consent signed for seq n cannot be replayed at seq n+1, nor a new key swapped in."""
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    bot = new_key("bot")
    seats = [(d.seat, bot.public)]
    stay = [s for s in range(3) if s != d.seat]
    stale = [[s, sign_consent(g.players[s].identity.key, g.game_id, g.table.seq - 1, g.table.head,
                              seats)] for s in stay]
    ev = sign_event(g.players[stay[0]].identity.key, game=g.game_id, seq=g.table.seq,
                    prev=g.table.head, kind="takeover",
                    body={"seats": [[d.seat, bot.public]], "signs": stale}).signed
    assert "not that seat's signature" in _refused(g.table, ev, "takeover")
    mine = new_key("thief")
    good = [[s, sign_consent(g.players[s].identity.key, g.game_id, g.table.seq, g.table.head,
                             seats)] for s in stay]
    swapped = sign_event(g.players[stay[0]].identity.key, game=g.game_id, seq=g.table.seq,
                         prev=g.table.head, kind="takeover",
                         body={"seats": [[d.seat, mine.public]], "signs": good}).signed
    assert "not that seat's signature" in _refused(g.table, swapped, "takeover")
    reused = takeover(g, g.table, [d.seat], keys=[g.players[stay[0]].identity])
    assert "new to the game" in _refused(g.table, reused, "takeover")


def test_a_takeover_supersedes_the_cut_off_seats_own_moves_and_nothing_else() -> None:
    """The cut-off seat went on alone; the others agreed at the seq it wrote first."""
    g = local("grande", 3)
    play_random(g, 12)
    d = to_act(g.state)
    assert d is not None
    agreed = Table()
    for e in g.table.events:
        agreed.append(e.signed)
    over = takeover(g, agreed, [d.seat])
    agreed.append(over)
    # Meanwhile the cut-off seat writes its own moves (as many as are its to write).
    cut_off = g.table
    n = cut_off.seq
    while to_act(g.state) is not None and to_act(g.state).seat == d.seat:  # type: ignore[union-attr]
        g.submit(legal_moves(g.state)[0])
    wrote = cut_off.seq - n
    assert wrote >= 1
    dropped = cut_off.supersede(over)
    assert [e.seq for e in dropped] == list(range(n, n + wrote))
    assert cut_off.seq == n + 1 and cut_off.head == agreed.head
    assert cut_off.state_hash() == agreed.state_hash()
    # Once another seat has built on them, the events are not the taken seat's alone.
    g2 = local("grande", 3)
    play_random(g2, 12)
    d2 = to_act(g2.state)
    assert d2 is not None
    base = Table()
    for e in g2.table.events:
        base.append(e.signed)
    over2 = takeover(g2, base, [d2.seat])
    while to_act(g2.state) is not None and to_act(g2.state).seat == d2.seat:  # type: ignore[union-attr]
        g2.submit(legal_moves(g2.state)[0])
    g2.submit(legal_moves(g2.state)[0])  # the next seat's move, on top of the taken seat's
    with pytest.raises(Refused, match="taken seats' own events"):
        g2.table.supersede(over2)
    # Anything but a valid takeover is no reason to drop events.
    with pytest.raises(Refused, match="only a takeover"):
        g2.table.supersede(g2.table.events[-1].signed)


# ---------------------------------------------------------------- gossip with a takeover


def test_a_cut_off_seat_that_wrote_alone_adopts_the_takeover_on_reconnect() -> None:
    """S is cut off on its turn, writes its moves alone; A and B consent (barring S's
    events at that seq), A writes the takeover; when S is back it asks from where it went
    alone, the takeover supersedes its run, and all three hold one log."""
    from bus import Bus

    g = local("grande", 3)
    play_random(g, 12)
    s_seat = to_act(g.state).seat  # type: ignore[union-attr]
    a_seat, b_seat = [x for x in range(3) if x != s_seat]
    names = {s_seat: "S", a_seat: "A", b_seat: "B"}
    bus = Bus(["A", "B", "S"])
    for name in "ABS":
        for ev in g.table.events:
            bus.r[name].table.append(ev.signed)
    bus.link("A", "B")
    bus.link("A", "S")
    bus.link("B", "S")
    bus.run()
    bus.cut("A", "S")
    bus.cut("B", "S")
    n = g.table.seq
    agreed = Table()
    for ev in g.table.events:
        agreed.append(ev.signed)
    over = takeover(g, agreed, [s_seat], author=a_seat)
    barred = frozenset({g.players[s_seat].identity.public})
    bus.r["A"].barred[n] = barred
    bus.r["B"].barred[n] = barred
    # S writes alone (its table is g's: the LocalGame signs for S's seat).
    first = None
    while to_act(g.state) is not None and to_act(g.state).seat == s_seat:  # type: ignore[union-attr]
        ev = g.submit(legal_moves(g.state)[0])
        sends = bus.r["S"].publish(ev.signed)
        assert sends == []  # nobody to send to
        first = first if first is not None else ev.seq
    assert bus.r["S"].alone_from == n == first
    bus.push("A", bus.r["A"].publish(over))
    bus.run()
    assert bus.r["B"].table.head == bus.r["A"].table.head
    # S's late move, relayed to B while its consent stands, is not taken.
    bus.r["A"].barred.clear()
    bus.r["B"].barred.clear()
    bus.link("A", "S")
    bus.link("B", "S")
    bus.run()
    heads = {name: bus.r[name].table.head for name in "ABS"}
    assert len(set(heads.values())) == 1, heads
    assert bus.r["S"].table.keys[s_seat] != g.players[s_seat].identity.public
    assert [e.seq for e in bus.r["S"].superseded] == list(range(n, first + (g.table.seq - n)))
    assert all(not r.faults for r in bus.r.values()), {k: r.faults for k, r in bus.r.items()}
    assert names  # (names document which replica runs which seat)


def test_a_consenting_peer_holds_back_the_seats_move_until_the_takeover_is_called_off() -> None:
    from bus import Bus

    g = local("grande", 3)
    play_random(g, 12)
    s_seat = to_act(g.state).seat  # type: ignore[union-attr]
    bus = Bus(["A", "S"])
    for name in "AS":
        for ev in g.table.events:
            bus.r[name].table.append(ev.signed)
    bus.link("A", "S")
    bus.run()
    n = g.table.seq
    bus.r["A"].barred[n] = frozenset({g.players[s_seat].identity.public})
    ev = g.submit(legal_moves(g.state)[0])
    bus.push("S", bus.r["S"].publish(ev.signed))
    bus.run()
    assert bus.r["A"].table.seq == n and not bus.r["A"].faults  # held back, nobody blamed
    del bus.r["A"].barred[n]  # called off: A asks again with a `have`
    bus.push("A", [("S", bus.r["A"].have())])
    bus.run()
    assert bus.r["A"].table.head == bus.r["S"].table.head == ev.id


# ---------------------------------------------------------------- issue 9, finding 6


def test_a_peer_whose_seats_were_all_given_away_and_that_is_cut_off_proposes_nothing() -> None:
    """Issue 9 finding 6: a peer cut off from everyone after the others let a bot take its
    seat runs no seat itself, so every seat looks missing from where it stands. `proposer()`
    raised `ValueError: min() arg is an empty sequence` there and took the node down; now no
    seat is to be taken (there is nobody to agree with) and nobody may propose."""
    from allegra_lan.net.takeover import proposer, seats_to_take, why_not

    g = local("grande", 3)
    play_random(g, 12)
    me, other = b"\x01" * 32, b"\x02" * 32
    run = {0: other, 1: other, 2: other}  # our seat 1 was given to a bot on `other`
    assert seats_to_take(g.table, run, present={me}) == []
    assert proposer(3, [0, 1, 2], run) is None
    assert proposer(3, [1], run) == other
    # An ask that names every seat is refused with a reason, never a crash.
    d = to_act(g.state)
    assert d is not None
    every = [(s, new_key(f"all{s}").public) for s in range(3)]
    reason = why_not(g.table, run, {me}, g.table.seq, g.table.head, every)
    assert reason is not None


def test_only_more_than_half_of_the_table_may_take_seats_over() -> None:
    """Issue 10, finding A (the simulator, seed 18): two peers split by the network each saw
    the other's seats away, and each side's seats were "every seat that stays", so both wrote
    a takeover and played two games on. Now the seats that stay must be more than half the
    table: at most one side of any split can take seats over."""
    from allegra_lan.net.takeover import seats_to_take

    for players, away, takes in ((2, 1, False), (3, 1, True), (3, 2, False), (4, 1, True),
                                 (4, 2, False), (5, 2, True), (6, 2, True), (6, 3, False)):
        g = local("grande" if players <= 4 else "allegra", players)
        while True:  # until the seat to act is one of the `away` last seats
            play_random(g, 1)
            d = to_act(g.state)
            assert d is not None
            if d.seat >= players - away and g.table.stage() == "play":
                break
        peers = [bytes([s + 1]) * 32 for s in range(players)]
        run = dict(enumerate(peers))
        present = set(peers[: players - away])
        taken = seats_to_take(g.table, run, present)
        assert (taken == list(range(players - away, players))) is takes, (players, away, taken)
