"""The peer protocol object in fair-deal games (issue 12): the deal events a peer writes for
its seats, at once and without asking; a resumed peer re-making them byte for byte; a
missing one pausing the game with the notes of a missing move; a guest following the
host's genesis.

Real peers (net/peer), real tables and ledgers; the other seat of a two-peer game is a
table of its own, fed the host's log, as another peer would be (tests/test_peer.py has
the seeded-deal counterparts)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from allegra_lan.deal.derive import game_secret
from allegra_lan.deal.events import KINDS as DEAL_KINDS
from allegra_lan.log.ceremony import commitment
from allegra_lan.log.envelope import decode_event, sign_event
from allegra_lan.net.actions import Note
from allegra_lan.net.lobby import Claim, Lobby, LobbyError
from allegra_lan.net.peer import Peer, SeatSpec
from allegra_lan.net.peer.config import PAUSE_NOTE_EVERY
from allegra_lan.rules import legal_moves, ruleset_for
from allegra_lan.table import Stage, Table, fold, move_body
from peer_helpers import TABLE, Disk, entropy, ident, run, seats_of, timeless, two_seats_one_person


def fair_alone(variant: str, players: int, seed: str = "fair") -> Peer:
    """A host that plays every seat of a fair-deal table with bots: its own seat through
    its table, the others through their seat tables (net/peer/deal.py)."""
    seats = [SeatSpec(f"greedy {i}", "greedy") for i in range(players)]
    return Peer.host(ident(f"{seed}/host"), variant=variant, players=players, table_name="alone",
                     seats=seats, table_id=TABLE, entropy=entropy(seed), options={"rounds": 1},
                     deal="fair")


@pytest.mark.parametrize("variant,players", [("grande", 2), ("allegra", 3)])
def test_a_peer_deals_a_fair_game_for_every_seat_it_plays_and_it_verifies(variant: str, players: int) -> None:
    peer, disk = fair_alone(variant, players), Disk()
    run(peer, disk)
    t = peer.table
    assert peer.finished() and peer.stopped is None and t.fair and t.me == 0
    kinds = [e.kind for e in t.events]
    for kind in DEAL_KINDS:
        assert kinds.count(kind) >= (players if kind != "deal_shuffle" else 1), kind
    assert sum(k == "deal_secret" for k in kinds) == players
    # A reader of the file alone (no secret) folds the same game and finds no fault.
    public, fault = fold([e for e, _ in disk.events])
    assert fault is None and public.over and public.state_hash() == t.state_hash()
    assert public.ledger is not None and public.ledger.verdict() == ()
    # Deal events are a function of their seat's secret and the log: never fsynced first.
    synced = {t.events[i].kind for i, (_, sync) in enumerate(disk.events) if sync}
    assert not synced & set(DEAL_KINDS)


def unchained(signed: bytes) -> Any:
    """An event as two runs compare it when a round's result (which carries its signer's
    clock) came before it: its seq, author, kind and body, the result's without its clock
    (the ids chained after such a result differ; the deal secrets after the last do not)."""
    ev = decode_event(signed)
    return (ev.seq, ev.author, ev.kind, {k: v for k, v in ev.body.items() if k != "at"}
            if ev.kind == "result" else ev.body)


def test_a_fair_peer_killed_anywhere_and_resumed_re_makes_the_same_deal_events() -> None:
    """Each seat's deal secret derives from its key (deal/derive.py), so a peer resumed from
    what a crash left on disk writes the very same keys, passes and shares again."""
    whole = Disk()
    run(fair_alone("grande", 2), whole)
    total = len(whole.events)
    for k in (14, total // 3, total - 10):
        disk = Disk()
        run(fair_alone("grande", 2), disk, stop_after=k)
        last_sync = max(i for i, (_, sync) in enumerate(disk.events) if sync)
        kept = [e for e, _ in disk.events[: max(last_sync + 1, k - 3)]]
        assert disk.seats is not None
        back = Peer.resume(seats_of(disk.seats), kept, entropy=entropy("other"))
        assert back.table.me == 0 and back.table.secret is not None
        again = Disk(events=[(e, True) for e in kept])
        run(back, again, now=100.0)
        assert [timeless(e) for e, _ in again.events[:k - 3]] == [e for e, _ in whole.events[:k - 3]]
        assert [unchained(e) for e, _ in again.events] == [unchained(e) for e, _ in whole.events], \
            f"cut at {k}"


def test_the_seeded_deal_is_the_default_of_the_protocol_object_and_names_no_deal() -> None:
    seats = [SeatSpec("a", "greedy"), SeatSpec("b", "greedy")]
    peer = Peer.host(ident("seeded"), variant="grande", players=2, table_name="t", seats=seats,
                     table_id=TABLE, entropy=entropy("seeded"), options={"rounds": 1})
    assert peer.lobby is not None and "deal" not in peer.lobby.to_msg()
    run(peer, Disk())
    assert not peer.table.fair and not any(e.kind in DEAL_KINDS for e in peer.table.events)


def test_a_lobby_carries_the_fair_deal_into_its_genesis_and_refuses_another() -> None:
    rs = ruleset_for("allegra").to_dict()
    lobby = Lobby(TABLE, "t", rs, 2, ident("h").public, deal="fair")
    again = Lobby.from_msg(lobby.to_msg())
    assert again.deal == "fair"
    for seat, name in enumerate("ab"):
        key = ident(name).public if seat else ident("h").public
        again.sit(seat, Claim(name, key, key, "greedy", True))
    assert again.genesis().fair
    with pytest.raises(LobbyError, match="deal"):
        Lobby.from_msg({**lobby.to_msg(), "deal": "marked"})
    with pytest.raises(LobbyError, match="deal is one of"):
        Lobby(TABLE, "t", rs, 2, ident("h").public, deal="marked")


class Guest:
    """Seat 1 of a two-peer fair game, played by hand: its own table (with its secret)
    folds the host's log; it writes the ceremony, its deal events and random moves."""

    def __init__(self, peer: Peer) -> None:
        self.peer = peer
        self.id = ident("guest")
        self.table = Table(me=1, secret=game_secret(bytes(self.id.key), TABLE, 1))
        self.rng = random.Random(7)
        self.nonce = bytes(32)

    def catch_up(self) -> None:
        for e in self.peer.table.events[self.table.seq:]:
            self.table.append(e.signed)

    def send(self, now: float, kind: str, body: dict[str, Any]) -> None:
        t = self.peer.table
        signed = sign_event(self.id.key, game=t.game or TABLE, seq=t.seq, prev=t.head, kind=kind,
                            body=body).signed
        self.peer.handle(now, self.id.public, {"t": "events", "from": t.seq, "items": [signed]})

    def act(self, now: float) -> None:
        """Seat 1's next event, if the log waits for it."""
        self.catch_up()
        t = self.table
        if t.next_author() != 1:
            return
        stage = t.stage()
        owed = t.owed()
        if owed is not None:
            self.send(now, owed.kind, owed.body_at(0))
        elif stage is Stage.ACCEPT:
            self.send(now, "accept", {})
        elif stage is Stage.COMMIT:
            self.send(now, "commit", {"commit": commitment(self.nonce)})
        elif stage is Stage.REVEAL:
            self.send(now, "reveal", {"nonce": self.nonce})
        elif stage is Stage.PLAY:
            self.send(now, *move_body(self.rng.choice(legal_moves(t.state))))  # type: ignore[arg-type]


def person_and_guest() -> tuple[Peer, Guest]:
    """A fair-deal host whose seat 0 is its person, seat 1 a guest's (linked), ready."""
    peer, _ = two_seats_one_person(deal="fair")
    return peer, Guest(peer)


def test_a_persons_deal_events_are_written_at_once_and_a_missing_share_pauses_the_game() -> None:
    """The person is asked for moves only: every deal event of its seat is written by its
    peer the moment the ledger owes it (not fsynced first: nobody chooses it). When, in
    play, the guest's seat owes its shares and sends nothing, the person is told who the
    game waits for, in the words of a missing move."""
    peer, guest = person_and_guest()
    disk = Disk()
    now, asked, moves = 0.0, 0, 0
    rng = random.Random(3)
    for _ in range(20_000):
        disk.take(peer.tick(now))
        t = peer.table
        if t.stage() is Stage.PLAY and t.next_author() == 0:
            disk.take(peer.play_move(now, 0, rng.choice(legal_moves(t.state))))  # type: ignore[arg-type]
            asked += 1
            disk.take(peer.tick(now))  # our shares of the cards the move shows
        moves = sum(1 for e in t.events if e.seq > 6 and e.kind not in DEAL_KINDS)
        if moves >= 3 and t.pending is not None and t.next_author() == 1:
            break  # the guest owes its shares for a card a move showed: it stays silent
        guest.act(now)
        now += 0.01
    t = peer.table
    assert t.dealing and t.pending is not None and t.next_author() == 1 and moves >= 3
    mine = [e for e in t.events if e.author == ident("person").public]
    assert asked == sum(1 for e in mine if e.kind not in DEAL_KINDS and
                        e.kind not in ("genesis", "accept", "commit", "reveal"))
    assert any(e.kind == "deal_shares" for e in mine) and any(e.kind == "deal_keys" for e in mine)
    ours = {e.signed for e in mine if e.kind in DEAL_KINDS}
    assert all(not sync for e, sync in disk.events if e in ours)
    notes: list[str] = []
    seq, start = t.seq, now
    while now < start + 2 * PAUSE_NOTE_EVERY + 0.5:
        now += 0.5
        peer.handle(now, guest.id.public, {"t": "ping"})  # the guest's peer is there, silent
        notes += [a.text for a in peer.tick(now) if isinstance(a, Note)]
    assert f"waiting for bob (seat 1): thinking for {PAUSE_NOTE_EVERY:.0f} s" in notes, notes
    assert peer.table.seq == seq
    # Once the shares come the game goes on, and ends.
    for _ in range(20_000):
        if peer.finished():
            break
        peer.tick(now)
        t = peer.table
        if t.stage() is Stage.PLAY and t.next_author() == 0:
            peer.play_move(now, 0, rng.choice(legal_moves(t.state)))  # type: ignore[arg-type]
        guest.act(now)
        now += 0.01
    assert peer.finished() and peer.table.stopped is None
    guest.catch_up()
    assert guest.table.state_hash() == peer.table.state_hash()


def test_a_guest_takes_its_seats_secret_from_the_lobby_before_the_deal_starts() -> None:
    """A guest learns its seat from the host's lobby; its table holds that seat's secret
    before the ceremony ends (the table reads it when the deal starts)."""
    host = ident("host")
    g = Peer.guest(ident("guest"), host=("10.0.0.1", 4000), table_id=TABLE,
                   seats=[SeatSpec("bob", "greedy")], entropy=entropy("g"))
    lobby = Lobby(TABLE, "t", ruleset_for("grande").to_dict(), 2, host.public, deal="fair")
    lobby.sit(0, Claim("ann", host.public, host.public, "greedy", True))
    lobby.sit(1, Claim("bob", ident("guest").public, ident("guest").public, "greedy", True))
    g.connected(0.0, host.public, dialled_by=ident("guest").public, remote=("10.0.0.1", 4000))
    g.handle(0.0, host.public, lobby.to_msg())
    assert g.table.me == 1
    assert g.table.secret == game_secret(bytes(ident("guest").key), TABLE, 1)
    assert g.deal_secret(1) == g.table.secret and g.deal_secret(0) is None
