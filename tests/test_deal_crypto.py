"""The fair deal's cryptography (allegra_lan/deal/): each piece alone, then whole deals
with every kind of cheat the issue names, each found and attributed to its seat.

Real libsodium throughout; the only stand-in is a ByteStream fed fixed bytes, to force
the rejection branch of the unbiased draw that honest streams reach once in 2^60.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings, strategies as st

from allegra_lan.deal import (
    CardPoints, DealError, EscrowShare, Fault, Pile, PileRecord, SeatRecord, box_keypair, check_lock,
    check_point, check_private_reveal, check_release, check_reveal, check_scalar, check_secrets, check_shuffle,
    combine, commitment, lock_key, make_escrow, open_card, open_escrow, open_private_reveal, permutation,
    public_reveal, redo_shuffle, share, shuffle_key, shuffle_pass, split, verify_escrow, verify_pile,
)
from allegra_lan.deal import group
from allegra_lan.deal.derive import ByteStream, frame, scalar
from allegra_lan.deal.reveal import seal, unseal
from allegra_lan.deal.whole import deal, reveal_all, reveal_to

GAME = hashlib.blake2b(b"test_deal_crypto game", digest_size=16).digest()
PILE = Pile(GAME, 1, 0, 12)


def secret_of(seat: int, text: str = "") -> bytes:
    return hashlib.blake2b(f"test_deal_crypto seat {seat} {text}".encode(), digest_size=32).digest()


SECRETS = [secret_of(s) for s in range(3)]


def seats_of(secrets: list[bytes | None], published: list[bytes | None] | None = None) -> list[SeatRecord]:
    """Seat records made from the true secrets; `published` says what each seat published
    at the end (default: its true secret)."""
    pub = secrets if published is None else published
    return [SeatRecord(s, commitment(GAME, s, sec), box_keypair(sec, GAME)[1], pub[s])  # type: ignore[arg-type]
            for s, sec in enumerate(secrets)]


# ------------------------------------------------------------------------- points

SMALL_ORDER = [bytes.fromhex(h) for h in (
    "0100000000000000000000000000000000000000000000000000000000000000",  # identity
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
    "0000000000000000000000000000000000000000000000000000000000000080",  # order 4 (x=0, sign 1: non-canonical)
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
)]


def test_card_points_are_valid_distinct_and_fresh_for_every_pile() -> None:
    cards = CardPoints.of(PILE)
    assert len(set(cards.points)) == 12 and all(check_point(p) == p for p in cards.points)
    assert [cards.card_index(p) for p in cards.points] == list(range(12))
    assert cards.card_index(group.BASE) is None
    others = [CardPoints.of(Pile(GAME, 2, 0, 12)), CardPoints.of(Pile(GAME, 1, 1, 12)),
              CardPoints.of(Pile(bytes(16), 1, 0, 12))]
    for other in others:  # a reshuffle or another round or game shares no point: ids tell nothing
        assert not set(other.points) & set(cards.points)
    assert CardPoints.of(PILE).points == cards.points


@pytest.mark.parametrize("bad", SMALL_ORDER + [
    bytes.fromhex("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f"),  # y = p: not canonical
    bytes(31) + b"\x80",
    b"\x02" + bytes(31),  # y = 2 is on no point of the curve
])
def test_check_point_refuses_small_order_non_canonical_and_off_curve(bad: bytes) -> None:
    with pytest.raises(DealError) as e:
        check_point(bad, "a hostile point")
    assert "\n" not in str(e.value) and str(e.value).startswith("a hostile point")


def test_check_point_refuses_a_point_outside_the_main_subgroup() -> None:
    mixed = group.add(CardPoints.of(PILE).points[0], SMALL_ORDER[3])  # a card point plus an order-8 point
    with pytest.raises(DealError, match="main subgroup"):
        check_point(mixed)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(min_size=0, max_size=40), st.binary(min_size=32, max_size=32), st.integers(), st.none()))
def test_check_point_on_arbitrary_values_gives_a_point_or_a_one_line_error(data: object) -> None:
    try:
        out = check_point(data)
    except DealError as e:
        assert "\n" not in str(e) and str(e)
    else:
        assert isinstance(out, bytes) and group.mul(group.L, out) == group.IDENTITY and out != group.IDENTITY


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0, max_size=40))
def test_check_scalar_on_arbitrary_bytes(data: bytes) -> None:
    try:
        x = check_scalar(data, nonzero=True)
    except DealError as e:
        assert "\n" not in str(e)
        assert len(data) != 32 or int.from_bytes(data, "little") >= group.L or not any(data)
    else:
        assert 0 < x < group.L and group.sc(x) == data


def test_mul_gives_the_identity_for_a_zero_scalar_where_libsodium_raises() -> None:
    p = CardPoints.of(PILE).points[0]
    assert group.mul(0, p) == group.IDENTITY and group.mul(group.L, p) == group.IDENTITY
    assert group.mul(group.L + 1, p) == p and group.mul_base(0) == group.IDENTITY


# ------------------------------------------------------------------------- derivation

def test_frame_is_length_prefixed_so_no_two_part_lists_collide() -> None:
    assert frame("x", b"ab", b"c") != frame("x", b"a", b"bc")
    assert frame("x", 1) == frame("x", (1).to_bytes(8, "big"))
    assert frame("x", b"a") != frame("y", b"a")
    with pytest.raises(DealError):
        frame("x", -1)


def test_scalars_are_nonzero_below_l_deterministic_and_separated_by_label() -> None:
    s = SECRETS[0]
    keys = {shuffle_key(s, GAME, 1, 0), shuffle_key(s, GAME, 2, 0), shuffle_key(s, GAME, 1, 1),
            *(lock_key(s, GAME, 1, 0, i) for i in range(12)), shuffle_key(SECRETS[1], GAME, 1, 0)}
    assert len(keys) == 16 and all(0 < k < group.L for k in keys)
    assert shuffle_key(s, GAME, 1, 0) == shuffle_key(bytes(s), GAME, 1, 0)
    with pytest.raises(DealError, match="32 bytes"):
        scalar(b"short", "shuffle-key", GAME)


class FixedStream(ByteStream):
    """A ByteStream that reads given bytes: the draws the rejection rule must throw away."""

    def __init__(self, data: bytes) -> None:
        super().__init__(bytes(32), "test")
        self._data = data

    def take(self, n: int) -> bytes:
        out, self._data = self._data[:n], self._data[n:]
        assert len(out) == n
        return out


def test_below_throws_away_draws_above_the_largest_multiple_of_the_bound() -> None:
    limit = 2**64 - 2**64 % 3
    stream = FixedStream(limit.to_bytes(8, "little") + (2**64 - 1).to_bytes(8, "little") + (7).to_bytes(8, "little"))
    assert stream.below(3) == 7 % 3  # the first two draws are at or above the limit
    assert FixedStream((limit - 1).to_bytes(8, "little")).below(3) == (limit - 1) % 3


def test_permutations_are_permutations_and_uniform_over_three_cards() -> None:
    counts = Counter(tuple(permutation(secret_of(n, "perm"), GAME, 1, 0, 3)) for n in range(3000))
    assert len(counts) == 6 and all(400 < c < 600 for c in counts.values()), counts
    p = permutation(SECRETS[0], GAME, 1, 0, 160)
    assert sorted(p) == list(range(160)) and p != list(range(160))
    assert permutation(SECRETS[0], GAME, 1, 0, 160) == p != permutation(SECRETS[0], GAME, 1, 1, 160)


def test_commitment_binds_game_seat_and_secret() -> None:
    c = commitment(GAME, 0, SECRETS[0])
    assert len(c) == 32
    assert len({c, commitment(GAME, 1, SECRETS[0]), commitment(bytes(16), 0, SECRETS[0]),
                commitment(GAME, 0, SECRETS[1])}) == 4


# ------------------------------------------------------------------------- passes and reveals

def test_an_honest_deal_opens_to_a_permutation_of_the_pile_and_verifies() -> None:
    dealt = deal(PILE, SECRETS)
    for msg in dealt.shuffles:
        assert check_shuffle(PILE, msg) is None
    for msg in dealt.locks:
        assert check_lock(PILE, msg) is None
    opened = []
    for i in range(12):
        shares = [check_reveal(PILE, r, dealt.shuffles[r.seat].key, *dealt.lock_io(r.seat, i))
                  for r in reveal_all(dealt, SECRETS, i)]
        opened.append(open_card(dealt.final[i], shares, dealt.cards))
    assert sorted(opened) == list(range(12)) and opened != list(range(12))
    record = dealt.record([r for i in range(12) for r in reveal_all(dealt, SECRETS, i)], reveal_to(dealt, SECRETS, 5, 1))
    assert check_secrets(GAME, seats_of(SECRETS)) == () and verify_pile(record, seats_of(SECRETS)) == ()


def test_no_card_opens_without_every_seat_s_share() -> None:
    dealt = deal(PILE, SECRETS)
    for i in range(12):
        shares = [lock_key(s, GAME, 1, 0, i) for s in SECRETS]
        assert open_card(dealt.final[i], shares, dealt.cards) is not None
        for left_out in range(3):
            assert open_card(dealt.final[i], shares[:left_out] + shares[left_out + 1:], dealt.cards) is None


def test_a_shuffle_is_redone_byte_for_byte_from_its_secret() -> None:
    dealt = deal(PILE, SECRETS)
    assert redo_shuffle(SECRETS[1], PILE, 1, dealt.shuffles[0].points) == dealt.shuffles[1]
    assert redo_shuffle(SECRETS[2], PILE, 1, dealt.shuffles[0].points) != dealt.shuffles[1]


def test_a_duplicated_card_is_caught_as_the_shuffle_arrives() -> None:
    def dup(step: str, seat: int, points: tuple[bytes, ...]) -> list[bytes]:
        return [points[0], *points[1:4], points[0], *points[5:]] if (step, seat) == ("shuffle", 1) else list(points)
    dealt = deal(PILE, SECRETS, dup)
    assert check_shuffle(PILE, dealt.shuffles[1]) == Fault(1, "shuffle", 4, "shuffled point 4 repeats point 0")
    assert verify_pile(dealt.record(), seats_of(SECRETS))[0] == Fault(1, "shuffle", 4, "shuffled point 4 repeats point 0")


def test_a_swapped_in_point_opens_to_no_card_and_is_named_at_game_end() -> None:
    def swap(step: str, seat: int, points: tuple[bytes, ...]) -> list[bytes]:
        if (step, seat) != ("shuffle", 2):
            return list(points)
        return [*points[:7], group.mul(2, points[7]), *points[8:]]
    dealt = deal(PILE, SECRETS, swap)
    assert all(check_shuffle(PILE, m) is None for m in dealt.shuffles)  # invisible on arrival
    shares = [check_reveal(PILE, r, dealt.shuffles[r.seat].key, *dealt.lock_io(r.seat, i))
              for i in range(12) for r in reveal_all(dealt, SECRETS, i)]
    opened = [open_card(dealt.final[i], shares[3 * i:3 * i + 3], dealt.cards) for i in range(12)]
    assert opened.count(None) == 1  # the shares are all good: the deal itself is broken
    faults = verify_pile(dealt.record(), seats_of(SECRETS))
    assert faults and faults[0].seat == 2 and faults[0].step == "shuffle" and faults[0].card == 7


def test_a_tampered_lock_cannot_prove_its_share_and_is_named_at_game_end() -> None:
    def bad_lock(step: str, seat: int, points: tuple[bytes, ...]) -> list[bytes]:
        if (step, seat) != ("lock", 0):
            return list(points)
        return [*points[:3], points[4], *points[4:]]  # card 3 replaced by card 4's lock
    dealt = deal(PILE, SECRETS, bad_lock)
    assert all(check_lock(PILE, m) is None for m in dealt.locks)
    r = public_reveal(SECRETS[0], PILE, 0, 3, *dealt.lock_io(0, 3))
    with pytest.raises(DealError, match="seat 0 for card 3 fails its proof"):
        check_reveal(PILE, r, dealt.shuffles[0].key, *dealt.lock_io(0, 3))
    faults = verify_pile(dealt.record(), seats_of(SECRETS))
    assert faults[0] == Fault(0, "lock", 3, "its lock differs from the one its secret makes")


def test_a_wrong_public_share_is_refused_at_once_and_attributed() -> None:
    dealt = deal(PILE, SECRETS)
    good = public_reveal(SECRETS[1], PILE, 1, 2, *dealt.lock_io(1, 2))
    key = dealt.shuffles[1].key
    wrong = [replace(good, share=share(SECRETS[1], PILE, 3)),           # another card's key
             replace(good, share=group.sc(int.from_bytes(good.share, "little") + 1)),
             replace(good, proof=public_reveal(SECRETS[1], PILE, 1, 3, *dealt.lock_io(1, 3)).proof),  # moved proof
             replace(good, proof=bytes(64)), replace(good, share=bytes(32)), replace(good, card=3)]
    for bad in wrong:
        with pytest.raises(DealError):
            check_reveal(PILE, bad, key, *dealt.lock_io(1, bad.card))
    record = dealt.record([wrong[0]])
    assert verify_pile(record, seats_of(SECRETS)) == (
        Fault(1, "share", 2, "the share of seat 1 for card 2 fails its proof"),)
    with pytest.raises(DealError):  # a proof for seat 1 does not pass as seat 2's
        check_reveal(PILE, replace(good, seat=2), dealt.shuffles[2].key, *dealt.lock_io(2, 2))


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=40), st.binary(min_size=0, max_size=70))
def test_check_reveal_on_arbitrary_share_and_proof_bytes_refuses_in_one_line(share_b: bytes, proof: bytes) -> None:
    dealt = DEALT_FOR_PROPERTIES
    good = public_reveal(SECRETS[0], PILE, 0, 1, *dealt.lock_io(0, 1))
    try:
        k = check_reveal(PILE, replace(good, share=share_b, proof=proof), dealt.shuffles[0].key, *dealt.lock_io(0, 1))
    except DealError as e:
        assert "\n" not in str(e)
    else:
        assert group.sc(k) == good.share == share_b


DEALT_FOR_PROPERTIES = deal(PILE, SECRETS)


def test_a_private_reveal_opens_for_the_peeker_alone() -> None:
    dealt = deal(PILE, SECRETS)
    peeks = reveal_to(dealt, SECRETS, 6, 2)
    sk, pk = box_keypair(SECRETS[2], GAME)
    shares = [lock_key(SECRETS[2], GAME, 1, 0, 6)]
    for p in peeks:
        check_private_reveal(PILE, p, dealt.shuffles[p.seat].key, dealt.lock_io(p.seat, 6)[0])
        shares.append(open_private_reveal(p, sk, pk, dealt.lock_io(p.seat, 6)[1]))
    assert open_card(dealt.final[6], shares, dealt.cards) == open_card(
        dealt.final[6], [lock_key(s, GAME, 1, 0, 6) for s in SECRETS], dealt.cards)
    other_sk, other_pk = box_keypair(SECRETS[0], GAME)
    with pytest.raises(DealError, match="does not open"):
        open_private_reveal(peeks[1], other_sk, other_pk, dealt.lock_io(1, 6)[1])


def test_a_wrong_sealed_share_is_found_by_the_peeker_and_named_at_game_end() -> None:
    dealt = deal(PILE, SECRETS)
    peeks = reveal_to(dealt, SECRETS, 6, 2)
    sk, pk = box_keypair(SECRETS[2], GAME)
    liar = replace(peeks[0], sealed=seal(SECRETS[0], (b"lie",), pk, share(SECRETS[0], PILE, 7)))
    check_private_reveal(PILE, liar, dealt.shuffles[0].key, dealt.lock_io(0, 6)[0])  # looks fine to everyone
    with pytest.raises(DealError, match="sealed share of seat 0 for card 6 is not its key"):
        open_private_reveal(liar, sk, pk, dealt.lock_io(0, 6)[1])
    faults = verify_pile(dealt.record((), [liar, peeks[1]]), seats_of(SECRETS))
    assert faults == (Fault(0, "sealed", 6, "its sealed share to seat 2 is not the one its secret makes"),)
    bad_w = replace(peeks[1], point=SMALL_ORDER[3])
    with pytest.raises(DealError, match="not a valid"):
        check_private_reveal(PILE, bad_w, dealt.shuffles[1].key, dealt.lock_io(1, 6)[0])


def test_sealing_is_deterministic_and_libsodium_sealed_box_compatible() -> None:
    sk, pk = box_keypair(SECRETS[1], GAME)
    a = seal(SECRETS[0], (b"ctx", 1), pk, b"m" * 32)
    assert a == seal(SECRETS[0], (b"ctx", 1), pk, b"m" * 32) != seal(SECRETS[0], (b"ctx", 2), pk, b"m" * 32)
    assert unseal(a, sk, pk) == b"m" * 32
    for bad in (a[:-1], a[:40] + bytes([a[40] ^ 1]) + a[41:], "text"):
        with pytest.raises(DealError):
            unseal(bad, sk, pk)


# ------------------------------------------------------------------------- escrow

def test_escrow_comes_back_only_from_every_holder_and_checks_each_piece() -> None:
    secrets = [secret_of(s, "escrow") for s in range(4)]
    boxes = {s: box_keypair(secrets[s], GAME) for s in range(4)}
    items = make_escrow(secrets[0], GAME, 0, {h: boxes[h][1] for h in (1, 2, 3)})
    pieces = [open_escrow(GAME, it, *boxes[it.holder]) for it in items]
    assert [it.holder for it in items] == [1, 2, 3] and pieces == list(split(secrets[0], GAME, 0, [1, 2, 3]).values())
    assert all(check_release(GAME, it, p) is None for it, p in zip(items, pieces))
    c = commitment(GAME, 0, secrets[0])
    assert combine(GAME, 0, pieces, c) == secrets[0]
    assert isinstance(combine(GAME, 0, pieces[:2], c), Fault)  # two of three holders learn nothing usable
    assert check_release(GAME, items[1], bytes(32)) == Fault(2, "escrow", None,
                                                              "the released share for seat 0 misses its commitment")
    lie = replace(items[2], sealed=seal(secrets[0], (b"x",), boxes[3][1], bytes(32)))
    with pytest.raises(DealError, match="misses its commitment"):
        open_escrow(GAME, lie, *boxes[3])
    recs = [SeatRecord(s, commitment(GAME, s, secrets[s]), boxes[s][1], secrets[s]) for s in range(4)]
    honest = {s: make_escrow(secrets[s], GAME, s, {h: boxes[h][1] for h in range(4) if h != s}) for s in range(4)}
    assert verify_escrow(GAME, recs, honest) == ()
    assert verify_escrow(GAME, recs, {**honest, 0: (items[0], items[1], lie)}) == (
        Fault(0, "escrow", None, "its escrow is not the one its secret makes"),)
    bad_dealer = (items[0], items[1], EscrowShare(0, 3, c, items[2].sealed))
    assert check_release(GAME, bad_dealer[2], pieces[2]) is not None


# ------------------------------------------------------------------------- game end

def test_a_withheld_or_false_secret_is_named_and_its_passes_go_unchecked() -> None:
    dealt = deal(PILE, SECRETS)
    withheld = seats_of(SECRETS, [SECRETS[0], None, SECRETS[2]])
    assert check_secrets(GAME, withheld) == (Fault(1, "secret", None, "withheld its secret: its deal is unverified"),)
    false = seats_of(SECRETS, [SECRETS[0], SECRETS[1], secret_of(9)])
    assert check_secrets(GAME, false) == (Fault(2, "secret", None, "its published secret misses its commitment"),)
    assert verify_pile(dealt.record(), withheld) == ()  # the seat's passes cannot be judged: check_secrets says so
    wrong_box = [replace(r, box_key=bytes(32)) if r.seat == 0 else r for r in seats_of(SECRETS)]
    assert check_secrets(GAME, wrong_box)[0].seat == 0


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["shuffle", "lock"]), st.integers(0, 2), st.integers(0, 11), st.binary(min_size=0, max_size=33))
def test_verify_pile_on_hostile_published_points_names_a_seat_and_never_raises(
        step: str, seat: int, card: int, junk: bytes) -> None:
    honest = DEALT_FOR_PROPERTIES
    passes = list(getattr(honest, step + "s"))
    pts = list(passes[seat].points)
    pts[card] = junk
    passes[seat] = replace(passes[seat], points=tuple(pts))
    record = replace(honest.record(), **{step + "s": tuple(passes)})
    faults = verify_pile(record, seats_of(SECRETS))
    assert faults and faults[0].seat == seat and faults[0].step == step and faults[0].card == card


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2), st.integers(0, 11), st.binary(min_size=32, max_size=32), st.binary(min_size=64, max_size=64))
def test_verify_pile_on_hostile_shares_attributes_them(seat: int, card: int, share_b: bytes, proof: bytes) -> None:
    honest = DEALT_FOR_PROPERTIES
    good = public_reveal(SECRETS[seat], PILE, seat, card, *honest.lock_io(seat, card))
    bad = replace(good, share=share_b, proof=proof)
    faults = verify_pile(honest.record([bad]), seats_of(SECRETS))
    assert faults == () if bad == good else faults[0].seat == seat and faults[0].step == "share"


def test_a_pile_of_one_card_and_the_limits_of_a_pile() -> None:
    one = Pile(GAME, 1, 3, 1)
    dealt = deal(one, SECRETS)
    shares = [lock_key(s, GAME, 1, 3, 0) for s in SECRETS]
    assert open_card(dealt.final[0], shares, dealt.cards) == 0
    for bad in ({"size": 0}, {"game": b""}, {"round_no": -1}, {"pile": 2**32}, {"size": True}):
        with pytest.raises(DealError):
            replace(PILE, **bad)
    with pytest.raises(DealError, match="the pile has 12"):
        shuffle_pass(SECRETS[0], PILE, 0, dealt.cards.points * 11)
