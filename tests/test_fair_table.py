"""The fair deal in the log (issue 12): the table places the deal's events at their seqs, a
move that shows a card waits (pending) for its shares, each seat's table knows only what
that seat may see, and a dishonest dealer is caught and named by every table.

The games here are `LocalGame(deal="fair")`: one table per seat, each holding only its
own seat's secret, plus the public one, fed the same signed bytes, as the peers of a
network game are."""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allegra_lan.deal.cheats import CopyCard, SwapIn, WithholdSecret, WrongSealedShare, WrongShare
from allegra_lan.deal.events import KINDS, SECRET, SHARES
from allegra_lan.local import LocalGame
from allegra_lan.log.ceremony import SetupError, read_genesis
from allegra_lan.log.envelope import sign_event
from allegra_lan.rules import legal_moves, ruleset_for, ruleset_from_dict, state_hash, to_act
from allegra_lan.rules.cards import HIDDEN
from allegra_lan.table import Refused, Stage, Table, fold

from helpers import TestClock, derived, fair_game, players

@pytest.fixture(scope="module")
def allegra2() -> LocalGame:
    return fair_game("allegra", 2)


@pytest.fixture(scope="module")
def grande2() -> LocalGame:
    return fair_game("grande", 2, rounds=3, tag="fair-peeks")


def kinds(g: LocalGame) -> list[str]:
    return [e.kind for e in g.table.events]


@pytest.mark.parametrize("which", ["allegra2", "grande2"])
def test_a_fair_game_ends_verified_and_every_table_agrees(which: str, request: pytest.FixtureRequest) -> None:
    g: LocalGame = request.getfixturevalue(which)
    tables = [g.table, *g.seat_tables]
    assert {t.stage() for t in tables} == {Stage.OVER}
    assert len({state_hash(t.state) for t in tables}) == 1  # type: ignore[arg-type]
    assert g.table.stopped is None and all(t.ledger.verified for t in tables)  # type: ignore[union-attr]
    k = kinds(g)
    # The deal's events sit where the ledger owes them: keys and escrows right after the
    # ceremony, the deck's shuffle passes before the first move, secrets at the very end.
    n = g.table.players
    assert k[3 * n + 1:5 * n + 1] == ["deal_keys"] * n + ["deal_escrow"] * n
    assert k[5 * n + 1:6 * n + 1] == ["deal_shuffle"] * n
    assert k[-n:] == [SECRET] * n and SHARES in k and "result" in k
    # The public fold of the file (a spectator, as every replay tool) reaches the same end.
    t, fault = fold(e.signed for e in g.table.events)
    assert fault is None and t.over and state_hash(t.state) == state_hash(g.table.state)  # type: ignore[arg-type]


def test_every_seq_has_one_author_and_one_public_state_on_every_table(allegra2: LocalGame) -> None:
    """Folded event by event, the spectator's table and each seat's agree at every seq on
    the stage, the next author and the public state hash (so signed results compare)."""
    n = allegra2.table.players
    tables = [Table()] + [Table(me=s, secret=allegra2.seat_tables[s].secret) for s in range(n)]
    pending = 0
    for ev in allegra2.table.events:
        for t in tables:
            t.append(ev.signed)
        assert len({(t.stage(), t.next_author(), t.state_hash()) for t in tables}) == 1, ev.seq
        pending += tables[0].pending is not None
    assert pending > 0  # moves did wait for their shares


def test_a_peek_is_known_to_the_peeker_alone(grande2: LocalGame) -> None:
    """Grande's peeks (R23) are private reveals: the peeker's table holds the value, every
    other seat's and the spectator's learn only that the shares are in."""
    private = [r for b in grande2.table.ledger.batches for r in b.requests if r.to is not None]  # type: ignore[union-attr]
    assert private, "the game had no peek"
    for r in private:
        for t in [grande2.table, *grande2.seat_tables]:
            got = t.state.source.reveal(r)  # type: ignore[union-attr]
            if t.me == r.to:
                assert isinstance(got, int)
            else:
                assert got is HIDDEN


def test_a_seat_table_makes_only_its_own_deal_events(allegra2: LocalGame) -> None:
    g = allegra2
    first = 3 * g.table.players + 1  # the first deal event: seat 0's keys
    for me in range(g.table.players):
        t, _ = fold((e.signed for e in g.table.events[:first]), me=me, secret=g.seat_tables[me].secret)
        assert t.stage() is Stage.DEAL and t.next_author() == 0
        owed = t.owed()
        if me == 0:
            assert owed is not None and owed.kind == "deal_keys" and not owed.timed
            assert owed.body_at(123) == owed.body  # a deal event carries no clock
        else:
            assert owed is None
    assert Table().owed() is None


def prefix_table(g: LocalGame, kind: str, nth: int = 0) -> tuple[Table, int]:
    """A spectator's table of `g`'s log up to its `nth` event of `kind`, and that seq."""
    seqs = [i for i, e in enumerate(g.table.events) if e.kind == kind]
    seq = seqs[nth]
    t, fault = fold(e.signed for e in g.table.events[:seq])
    assert fault is None
    return t, seq


def signed(g: LocalGame, t: Table, seat: int, kind: str, body: dict[str, Any]) -> bytes:
    assert t.game is not None
    return sign_event(g.players[seat].identity.key, game=t.game, seq=t.seq, prev=t.head,
                      kind=kind, body=body).signed


def test_a_move_while_shares_are_owed_is_refused(allegra2: LocalGame) -> None:
    t, seq = prefix_table(allegra2, SHARES)
    assert t.stage() is Stage.DEAL and t.pending is not None
    seat = to_act(t.state).seat  # type: ignore[arg-type, union-attr]
    with pytest.raises(Refused) as e:
        t.append(signed(allegra2, t, seat, "draw_deck", {}))
    assert e.value.fault in ("deal", "author") and t.seq == seq


def test_a_deal_event_by_the_wrong_seat_or_of_the_wrong_form_is_refused(allegra2: LocalGame) -> None:
    g = allegra2
    t, seq = prefix_table(g, SHARES)
    owing = t.next_author()
    other = 1 - owing  # type: ignore[operator]
    real = g.table.events[seq]
    with pytest.raises(Refused) as e:
        t.append(signed(g, t, other, real.kind, real.body))
    assert e.value.fault == "author" and "wrong author" in e.value.reason
    with pytest.raises(Refused) as e:
        t.append(signed(g, t, owing, real.kind, {**real.body, "shares": "no"}))  # type: ignore[arg-type]
    assert e.value.fault == "deal" and "shares" in e.value.reason
    with pytest.raises(Refused) as e:
        t.append(signed(g, t, owing, "deal_secret", {"secret": bytes(32)}))
    assert e.value.fault == "deal"
    assert t.seq == seq
    t.append(real.signed)  # the real one is still taken after all that
    assert t.seq == seq + 1


def test_the_genesis_names_the_fair_deal_or_nothing() -> None:
    body = {"table": "t", "ruleset": ruleset_for("allegra").to_dict(),
            "seats": [{"name": "a", "key": bytes(32)}, {"name": "b", "key": bytes([1] * 32)}]}
    assert read_genesis(body).deal == "seeded"
    assert read_genesis({**body, "deal": "fair"}).fair
    for wrong in ("seeded", "FAIR", 1):
        with pytest.raises(SetupError):
            read_genesis({**body, "deal": wrong})


def test_a_seeded_game_has_no_ledger_and_owes_no_deal_event() -> None:
    rs = ruleset_from_dict({**ruleset_for("allegra").to_dict(), "rounds": 1})
    g = LocalGame(rs, players(2), game_id=derived("seeded", 2)[:16],
                  nonces=[derived("seeded-nonce", i) for i in range(2)], clock=TestClock())
    assert g.table.ledger is None and not g.table.fair and g.seat_tables == []
    assert "deal" not in g.table.events[0].body
    assert g.table.stage() is Stage.PLAY


# ---------------------------------------------------------------- a dishonest dealer


def stopped_on_every_table(g: LocalGame) -> str:
    tables = [g.table, *g.seat_tables]
    reasons = {t.stopped for t in tables}
    assert len(reasons) == 1 and None not in reasons, reasons
    assert {t.stage() for t in tables} == {Stage.OVER}
    assert all(e.kind != SECRET for e in g.table.events[:-g.table.players])
    assert kinds(g)[-g.table.players:] == [SECRET] * g.table.players  # the secrets came anyway
    return reasons.pop()  # type: ignore[return-value]


def named(g: LocalGame, seat: int) -> set[str]:
    """The steps every table's game-end verdict blames `seat` for (all tables agree)."""
    verdicts = {t.ledger.verdict() for t in [g.table, *g.seat_tables]}  # type: ignore[union-attr]
    assert len(verdicts) == 1
    return {f.step for f in verdicts.pop() if f.seat == seat}


def test_a_wrong_share_stops_the_game_and_names_its_seat() -> None:
    g = fair_game("allegra", 3, cheat=WrongShare(seat=1, batch=0), tag="cheat-share")
    reason = stopped_on_every_table(g)
    assert "seat 1" in reason and "share" in reason
    assert "share" in named(g, 1) and named(g, 0) == named(g, 2) == set()


@pytest.mark.parametrize("cheat", [CopyCard(seat=1, into=0, of=1), SwapIn(seat=0, into=3, place=7)],
                         ids=["copy", "swap-in"])
def test_a_tampered_shuffle_is_named_at_the_end(cheat: Any) -> None:
    """A copied or swapped-in card passes the shuffle's checks on arrival; the game goes on
    until the broken cards open (or to its end), and the verdict from the published
    secrets names the cheater's shuffle."""
    g = fair_game("grande", 2, cheat=cheat, tag=f"cheat-{type(cheat).__name__}")
    assert g.table.stage() is Stage.OVER
    assert "shuffle" in named(g, cheat.seat)
    assert named(g, 1 - cheat.seat) == set()
    assert not g.table.ledger.verified  # type: ignore[union-attr]


def test_a_wrong_sealed_escrow_piece_is_named_at_the_end() -> None:
    g = fair_game("allegra", 3, cheat=WrongSealedShare(seat=2, holder=0), tag="cheat-escrow")
    assert g.table.stopped is None and g.table.over  # the game itself is not stopped
    holder = g.seat_tables[0].ledger
    assert holder is not None and any(f.seat == 2 for f in holder.private_faults)
    assert "escrow" in named(g, 2)


def test_a_withheld_secret_leaves_the_game_unverified_naming_the_seat() -> None:
    g = fair_game("allegra", 2, cheat=WithholdSecret(seat=1), tag="cheat-secret")
    assert g.withheld is not None and g.halted
    t = g.table
    assert t.stage() is Stage.DEAL and t.next_author() == 1 and to_act(t.state) is None  # type: ignore[arg-type]
    assert not t.over and not t.ledger.verified  # type: ignore[union-attr]
    assert "secret" in named(g, 1)


# ---------------------------------------------------------------- hostile deal events


@pytest.fixture(scope="module")
def at_keys() -> tuple[LocalGame, list[bytes]]:
    """A 2-seat fair game just past its ceremony (seat 0's keys owed), and that prefix."""
    g = fair_game("allegra", 2, tag="hostile")
    n = g.table.players
    return g, [e.signed for e in g.table.events[:3 * n + 1]]


values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.binary(max_size=80) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS + ("turn_up", "result")), seat=st.integers(0, 1),
       body=st.dictionaries(st.sampled_from(["commitment", "box_key", "deal_key", "key_proof", "pieces",
                                             "round", "pile", "part", "cards", "batch", "shares",
                                             "secret", "x"]), values, max_size=6))
def test_any_deal_event_body_is_taken_or_refused_never_raises(
        at_keys: tuple[LocalGame, list[bytes]], kind: str, seat: int, body: dict[str, Any]) -> None:
    g, prefix = at_keys
    t, fault = fold(prefix)
    assert fault is None and t.stage() is Stage.DEAL
    try:
        t.append(signed(g, t, seat, kind, body))
    except Refused as e:
        assert t.seq == len(prefix) and e.reason and "\n" not in e.reason
    else:
        assert t.seq == len(prefix) + 1  # a body of the right form: taken (and judged)
    t.stage(), t.next_author(), t.owed()  # and the table still answers


def test_legal_moves_are_offered_while_a_fair_game_plays(allegra2: LocalGame) -> None:
    """After the deal's first events the first decision is a turn-up, as in a seeded game."""
    n = allegra2.table.players
    t, _ = fold(e.signed for e in allegra2.table.events[:6 * n + 1])
    assert t.stage() is Stage.PLAY and legal_moves(t.state)  # type: ignore[arg-type]


# ---------------------------------------------------------------- a takeover releases the escrow


def fair_takeover(g: LocalGame, taken: list[int], *, release: list[list[Any]] | None = None,
                  tag: str = "bot") -> tuple[bytes, Any]:
    """The signed takeover of `taken` at the log's head, consented by every other seat, with
    the escrow pieces their own tables hold for the taken seat (or `release` as given)."""
    from allegra_lan.log.takeover import sign_consent

    from helpers import new_key

    t = g.table
    keys = [new_key(f"{tag}{s}") for s in taken]
    seats = [(s, k.public) for s, k in zip(taken, keys)]
    stay = [s for s in range(t.players) if s not in taken]
    signs = [[s, sign_consent(g.players[s].identity.key, t.game, t.seq, t.head, seats)] for s in stay]
    if release is None:
        release = [[h, d, g.seat_tables[h].ledger.held[d]] for d in taken for h in stay]  # type: ignore[union-attr]
    body = {"seats": [[s, k] for s, k in seats], "signs": signs, "release": release}
    ev = sign_event(g.players[stay[0]].identity.key, game=t.game, seq=t.seq, prev=t.head,  # type: ignore[arg-type]
                    kind="takeover", body=body)
    return ev.signed, keys


def gone_at_shares(n: int, seat: int, tag: str) -> LocalGame:
    """A fair ALLEGRA game of `n` seats whose seat `seat` left for good: it never wrote its
    shares of the first batch (the first move's turn-up), so the log waits for them."""
    rs = ruleset_from_dict({**ruleset_for("allegra").to_dict(), "rounds": 1})

    def gone(ledger: Any, owed: Any, body: Any) -> Any:
        return None if owed.seat == seat and owed.kind == SHARES else body

    g = LocalGame(rs, players(n), game_id=derived(tag, n)[:16],
                  nonces=[derived(f"{tag}-nonce", i) for i in range(n)], clock=TestClock(), deal="fair",
                  cheat=gone)
    g.submit(legal_moves(g.state)[0])
    t = g.table
    assert g.withheld is not None and t.stage() is Stage.DEAL and t.next_author() == seat
    return g


@lru_cache(maxsize=None)
def _gone_at_shares_once(n: int, seat: int, tag: str) -> LocalGame:
    """`gone_at_shares`, made once: the game is the same every time (its ids, nonces, clock
    and moves are fixed), and the property test above takes a deep copy of it per example
    instead of dealing it again (a tenth of a second each, most of that test's time)."""
    return gone_at_shares(n, seat, tag)


def test_a_takeover_releases_the_taken_seats_secret_and_the_game_goes_on() -> None:
    """A seat that leaves for good while it owes shares does not lock the deck: the seats
    that stay hand in their escrow pieces in the takeover, every table recovers the seat's
    secret, and the takeover's author writes the taken seat's deal events from then on."""
    from allegra_lan.bots.driver import play_game
    from allegra_lan.local import Player

    g = gone_at_shares(3, 2, "release")
    rs = g.table.state.ruleset  # type: ignore[union-attr]
    signed, keys = fair_takeover(g, [2])
    for t in [g.table, *g.seat_tables]:
        t.append(signed)
    secret = g.seat_tables[2].secret
    assert all(t.ledger.adopted == {2: secret} for t in [g.table, *g.seat_tables])  # type: ignore[union-attr]
    made = g.table.owed()  # even a spectator's table can make the taken seat's events now
    assert made is not None and made.seat == 2 and made == g.seat_tables[0].owed() == g.seat_tables[2].owed()
    g.players[2] = Player("bot", keys[0])  # the taker signs with the new key
    g.cheat, g.withheld = None, None
    g.write_owed()
    play_game(rs, 3, g.table.seed, ["greedy"] * 3, record=g)  # type: ignore[arg-type]
    assert g.table.over and g.table.stopped is None and g.table.ledger.verified  # type: ignore[union-attr]
    last = [e for e in g.table.events if e.kind == SECRET]
    assert [g.table.seat_of(e.author) for e in last] == [0, 1, 2] and last[2].author == keys[0].public


def test_a_fair_takeover_needs_every_piece_right_and_one_seat_at_a_time() -> None:
    g = gone_at_shares(4, 3, "release-bad")
    seq = g.table.seq
    cases = {
        "without the pieces": fair_takeover(g, [3], release=[])[0],
        "a wrong piece": fair_takeover(g, [3], release=[[0, 3, bytes(32)], [1, 3, g.seat_tables[1].ledger.held[3]],  # type: ignore[union-attr]
                                                        [2, 3, g.seat_tables[2].ledger.held[3]]])[0],  # type: ignore[union-attr]
        "two seats": fair_takeover(g, [2, 3], release=[])[0],
    }
    words = {"without the pieces": "seat 0", "a wrong piece": "seat 0", "two seats": "one seat at a time"}
    for name, signed in cases.items():
        with pytest.raises(Refused) as e:
            g.table.append(signed)
        assert e.value.fault == "takeover" and words[name] in e.value.reason, (name, e.value.reason)
        assert g.table.seq == seq
    g.table.append(fair_takeover(g, [3])[0])  # the right one is taken
    assert g.table.seq == seq + 1


def test_a_seeded_takeover_carries_no_pieces() -> None:
    rs = ruleset_from_dict({**ruleset_for("allegra").to_dict(), "rounds": 1})
    g = LocalGame(rs, players(3), game_id=derived("release-seeded")[:16],
                  nonces=[derived("release-seeded-nonce", i) for i in range(3)], clock=TestClock())
    from helpers import quick_move

    g.submit(quick_move(g.state))
    d = to_act(g.state)
    assert d is not None
    other = (d.seat + 1) % 3
    signed, _ = fair_takeover(g, [d.seat], release=[[other, d.seat, bytes(32)]])
    t = g.table
    with pytest.raises(Refused) as e:
        t.append(signed)
    assert "seeded game" in e.value.reason


@settings(max_examples=60, deadline=None)
@given(release=st.lists(st.one_of(
    st.tuples(st.integers(0, 3), st.integers(0, 3), st.binary(min_size=32, max_size=32)).map(list),
    values), max_size=4))
def test_any_release_of_a_fair_takeover_is_taken_or_refused_never_raises(release: list[Any]) -> None:
    """The takeover's `release` pieces, arbitrary (of the right shape or of none): the table
    takes the takeover only with every staying seat's right piece, refuses it in one line
    otherwise, and raises nothing else."""
    g = copy.deepcopy(_gone_at_shares_once(3, 2, "release-any"))  # every example from the same game
    seq = g.table.seq
    signed, _ = fair_takeover(g, [2], release=release)
    try:
        g.table.append(signed)
    except Refused as e:
        assert g.table.seq == seq and e.reason and "\n" not in e.reason
    else:
        assert g.table.ledger.adopted == {2: g.seat_tables[2].secret}  # type: ignore[union-attr]
