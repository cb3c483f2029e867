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
    CardPoints, DealError, EscrowShare, Fault, Pile, box_keypair, check_release, check_scalar,
    check_seat_keys, check_secrets, check_share, check_shuffle, check_point, combine, commitment, deal_key,
    joint_key, make_escrow, make_share, open_card, open_escrow, open_point, permutation, redo_shuffle,
    rerandomizer, seal, seat_keys, shuffle_pass, split, unseal, verify_escrow, verify_pile,
)
from allegra_lan.deal import group
from allegra_lan.deal.derive import ByteStream, frame, scalar
from allegra_lan.deal.passes import initial
from allegra_lan.deal.whole import Dealt, deal, shares_of

GAME = hashlib.blake2b(b"test_deal_crypto game", digest_size=16).digest()
PILE = Pile(GAME, 1, 0, 12)


def secret_of(seat: int, text: str = "") -> bytes:
    return hashlib.blake2b(f"test_deal_crypto seat {seat} {text}".encode(), digest_size=32).digest()


SECRETS = [secret_of(s) for s in range(3)]


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
    keys = {deal_key(s, GAME), deal_key(s, bytes(16)), deal_key(SECRETS[1], GAME), rerandomizer(s, GAME, 2, 0, 0),
            rerandomizer(s, GAME, 1, 1, 0), *(rerandomizer(s, GAME, 1, 0, i) for i in range(12))}
    assert len(keys) == 17 and all(0 < k < group.L for k in keys)
    assert deal_key(s, GAME) == deal_key(bytes(s), GAME)
    with pytest.raises(DealError, match="32 bytes"):
        scalar(b"short", "deal-key", GAME)


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


# ------------------------------------------------------------------------- keys, shuffles, shares

def open_with(dealt: Dealt, secrets: list[bytes], card: int, but: int | None = None) -> list[bytes]:
    """Every share of one card place, each checked as on arrival."""
    return [check_share(PILE if dealt.pile == PILE else dealt.pile, sh, dealt.keys[sh.seat].deal_key,
                        dealt.final[card]) for sh in shares_of(dealt, secrets, card, but)]


def test_seat_keys_are_checked_on_arrival_and_a_rogue_key_cannot_be_proven() -> None:
    keys = [seat_keys(s, GAME, n) for n, s in enumerate(SECRETS)]
    assert all(check_seat_keys(GAME, k) is None for k in keys)
    # the last seat picks X = x*G - (X_0 + X_1) so that the joint key is x*G, its own
    rogue_point = group.sub(group.mul_base(12345), group.add(keys[0].deal_key, keys[1].deal_key))
    rogue = replace(keys[2], deal_key=rogue_point)
    assert check_seat_keys(GAME, rogue) == Fault(2, "key", None, "the proof of its deal key does not verify")
    assert check_seat_keys(GAME, replace(keys[1], seat=2)) is not None  # a proof is bound to its seat
    assert check_seat_keys(GAME, replace(keys[0], deal_key=SMALL_ORDER[3])).reason.endswith("main subgroup")
    assert check_seat_keys(GAME, replace(keys[0], box_key=b"")).reason == "its box key is not 32 bytes"
    assert joint_key([k.deal_key for k in keys]) == group.mul_base(sum(deal_key(s, GAME) for s in SECRETS))


def test_an_honest_deal_opens_to_a_permutation_of_the_pile_and_verifies() -> None:
    dealt = deal(PILE, SECRETS)
    assert all(check_shuffle(PILE, m) is None for m in dealt.shuffles)
    opened = [open_card(dealt.final[i], open_with(dealt, SECRETS, i), dealt.cards) for i in range(12)]
    assert sorted(opened) == list(range(12)) and opened != list(range(12))
    record = dealt.record([sh for i in range(12) for sh in shares_of(dealt, SECRETS, i)])
    assert check_secrets(GAME, dealt.seats(SECRETS)) == () and verify_pile(record, dealt.seats(SECRETS)) == ()


def test_no_card_opens_without_every_seat_s_share_and_a_peek_leaves_the_peeker_s_key_on() -> None:
    dealt = deal(PILE, SECRETS)
    for i in range(12):
        for peeker in range(3):
            others = open_with(dealt, SECRETS, i, but=peeker)
            assert open_card(dealt.final[i], others, dealt.cards) is None
            own = make_share(SECRETS[peeker], PILE, peeker, i, dealt.final[i]).point  # the peeker's own, unpublished
            assert open_card(dealt.final[i], [*others, own], dealt.cards) is not None


def test_a_shuffle_is_redone_byte_for_byte_from_its_secret() -> None:
    dealt = deal(PILE, SECRETS)
    assert redo_shuffle(SECRETS[1], PILE, 1, dealt.joint, dealt.input_of(1)) == dealt.shuffles[1]
    assert redo_shuffle(SECRETS[2], PILE, 1, dealt.joint, dealt.input_of(1)) != dealt.shuffles[1]
    with pytest.raises(DealError, match="the pile has 12"):
        shuffle_pass(SECRETS[0], PILE, 0, dealt.joint, dealt.final[:11])


def double(card: bytes) -> bytes:
    return group.add(card[:32], card[:32]) + group.add(card[32:], card[32:])


def test_a_relation_planted_before_an_honest_shuffle_cannot_be_found_after_it() -> None:
    """The flaw of the blueprint's commutative keys (passes.py): seat 0 and seat 2 pool
    everything; seat 0, before honest seat 1, makes card 5 twice card 3. With one key per
    seat multiplying every point, the pair (P, 2P) would survive seat 1's shuffle and tell
    the coalition where card 3 went. Re-encryption leaves no pair related by 2, even after
    the coalition strips its own parts of the key."""
    def plant(seat: int, cards: tuple[bytes, ...]) -> list[bytes]:
        return [*cards[:5], double(cards[3]), *cards[6:]] if seat == 0 else list(cards)
    dealt = deal(PILE, SECRETS, plant)
    coalition = (0, 2)
    after_honest = dealt.shuffles[1].cards
    stripped = []  # what the coalition sees of each card once its own key parts are off: (C1, M + x_1*C1)
    for c in after_honest:
        c2 = c[32:]
        for s in coalition:
            c2 = group.sub(c2, group.mul(deal_key(SECRETS[s], GAME), c[:32]))
        stripped.append((c[:32], c2))
    pairs = [(a, b) for a in range(12) for b in range(12) if a != b
             and group.add(stripped[a][0], stripped[a][0]) == stripped[b][0]
             or a != b and group.add(stripped[a][1], stripped[a][1]) == stripped[b][1]]
    assert pairs == []
    before = dealt.shuffles[0].cards  # the planted pair is there before the honest shuffle
    assert double(before[3]) == before[5]
    faults = verify_pile(dealt.record(), dealt.seats(SECRETS))
    assert faults[0] == Fault(0, "shuffle", 5, "its shuffle differs from the one its secret makes")


def test_a_copied_card_is_caught_as_the_shuffle_arrives() -> None:
    dealt = deal(PILE, SECRETS, lambda seat, c: [*c[:4], c[0], *c[5:]] if seat == 1 else list(c))
    fault = Fault(1, "shuffle", 4, "shuffled card 4 repeats card 0")
    assert check_shuffle(PILE, dealt.shuffles[1]) == fault and verify_pile(dealt.record(), dealt.seats(SECRETS))[0] == fault


def test_a_swapped_in_card_opens_to_a_duplicate_and_is_named_at_game_end() -> None:
    """The last seat swaps in a fresh encryption of card point 0 at place 7 (a dishonest
    dealer giving itself a card it likes): invisible on arrival, a duplicate on opening."""
    def swap(seat: int, cards: tuple[bytes, ...]) -> list[bytes]:
        if seat != 2:
            return list(cards)
        y = joint_key([seat_keys(s, GAME, n).deal_key for n, s in enumerate(SECRETS)])
        fresh = group.mul_base(99) + group.add(CardPoints.of(PILE).points[0], group.mul(99, y))
        return [*cards[:7], fresh, *cards[8:]]
    dealt = deal(PILE, SECRETS, swap)
    assert all(check_shuffle(PILE, m) is None for m in dealt.shuffles)
    opened = [open_card(dealt.final[i], open_with(dealt, SECRETS, i), dealt.cards) for i in range(12)]
    assert opened[7] == 0 and opened.count(0) == 2  # every share good: the deal itself is broken
    assert verify_pile(dealt.record(), dealt.seats(SECRETS))[0] == Fault(
        2, "shuffle", 7, "its shuffle differs from the one its secret makes")


def test_a_wrong_share_is_refused_at_once_and_attributed() -> None:
    dealt = deal(PILE, SECRETS)
    good = make_share(SECRETS[1], PILE, 1, 2, dealt.final[2])
    key = dealt.keys[1].deal_key
    wrong = [replace(good, point=make_share(SECRETS[1], PILE, 1, 3, dealt.final[3]).point),  # another card's
             replace(good, point=group.add(good.point, group.BASE)),
             replace(good, proof=make_share(SECRETS[1], PILE, 1, 3, dealt.final[3]).proof),  # a moved proof
             replace(good, proof=bytes(64)), replace(good, point=SMALL_ORDER[0]), replace(good, card=3)]
    for bad in wrong:
        with pytest.raises(DealError) as e:
            check_share(PILE, bad, key, dealt.final[bad.card])
        assert "\n" not in str(e.value)
    with pytest.raises(DealError):  # seat 1's share does not pass as seat 2's
        check_share(PILE, replace(good, seat=2), dealt.keys[2].deal_key, dealt.final[2])
    assert verify_pile(dealt.record([wrong[0]]), dealt.seats(SECRETS)) == (
        Fault(1, "share", 2, "the share of seat 1 for card 2 fails its proof"),)


def test_a_share_and_a_pile_checked_once_are_remembered_and_a_changed_byte_is_still_refused() -> None:
    """dleq.py and verify.py remember what they checked last (a tournament folder holds a
    copy of each game per seat); the memory is keyed by every byte, so nothing near a good
    share or pile passes for it."""
    dealt = deal(PILE, SECRETS)
    good = make_share(SECRETS[1], PILE, 1, 2, dealt.final[2])
    key = dealt.keys[1].deal_key
    for _ in range(2):  # the second time from memory
        assert check_share(PILE, good, key, dealt.final[2]) == good.point
    for i in range(len(good.proof)):
        bad = bytearray(good.proof)
        bad[i] ^= 0x01
        with pytest.raises(DealError):
            check_share(PILE, replace(good, proof=bytes(bad)), key, dealt.final[2])
    record, seats = dealt.record([good]), dealt.seats(SECRETS)
    assert verify_pile(record, seats) == verify_pile(record, seats) == ()
    other = make_share(SECRETS[1], PILE, 1, 3, dealt.final[3])
    assert verify_pile(dealt.record([replace(good, point=other.point)]), seats) == (
        Fault(1, "share", 2, "the share of seat 1 for card 2 fails its proof"),)


DEALT_FOR_PROPERTIES = deal(PILE, SECRETS)


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=40), st.binary(min_size=0, max_size=70))
def test_check_share_on_arbitrary_bytes_refuses_in_one_line(point: bytes, proof: bytes) -> None:
    dealt = DEALT_FOR_PROPERTIES
    good = make_share(SECRETS[0], PILE, 0, 1, dealt.final[1])
    try:
        d = check_share(PILE, replace(good, point=point, proof=proof), dealt.keys[0].deal_key, dealt.final[1])
    except DealError as e:
        assert "\n" not in str(e)
    else:
        assert d == good.point == point


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
    assert isinstance(combine(GAME, 0, pieces[:2], c), Fault)  # two of three holders do not have it
    assert check_release(GAME, items[1], bytes(32)) == Fault(2, "escrow", None,
                                                              "the released share for seat 0 misses its commitment")
    lie = replace(items[2], sealed=seal(secrets[0], (b"x",), boxes[3][1], bytes(32)))
    with pytest.raises(DealError, match="misses its commitment"):
        open_escrow(GAME, lie, *boxes[3])
    dealt = deal(PILE, secrets)
    recs = dealt.seats(secrets)
    honest = {s: make_escrow(secrets[s], GAME, s, {h: boxes[h][1] for h in range(4) if h != s}) for s in range(4)}
    assert verify_escrow(GAME, recs, honest) == ()
    assert verify_escrow(GAME, recs, {**honest, 0: (items[0], items[1], lie)}) == (
        Fault(0, "escrow", None, "its escrow is not the one its secret makes"),)
    inconsistent = [bytes(32), *pieces[1:]]  # the dealer sealed a piece that does not add up
    assert combine(GAME, 0, inconsistent, c) == Fault(
        0, "escrow", None, "the escrow shares combine to a secret that misses the commitment")
    assert check_release(GAME, EscrowShare(0, 3, c, items[2].sealed), pieces[2]) is not None


# ------------------------------------------------------------------------- game end

def test_a_withheld_or_false_secret_is_named_and_its_shuffle_goes_unchecked() -> None:
    dealt = deal(PILE, SECRETS)
    withheld = dealt.seats([SECRETS[0], None, SECRETS[2]])
    assert check_secrets(GAME, withheld) == (Fault(1, "secret", None, "withheld its secret: its deal is unverified"),)
    false = dealt.seats([SECRETS[0], SECRETS[1], secret_of(9)])
    assert check_secrets(GAME, false) == (Fault(2, "secret", None, "its published secret misses its commitment"),)
    assert verify_pile(dealt.record(), withheld) == ()  # its shuffle cannot be judged: check_secrets says so
    other_box = replace(dealt.keys[0], box_key=bytes(32))
    assert check_secrets(GAME, [dealt.seats(SECRETS)[0].__class__(other_box, SECRETS[0])]) == (
        Fault(0, "key", None, "its keys are not the ones its secret makes"),)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2), st.integers(0, 11), st.binary(min_size=0, max_size=65))
def test_verify_pile_on_hostile_published_cards_names_the_seat_and_never_raises(seat: int, card: int, junk: bytes) -> None:
    honest = DEALT_FOR_PROPERTIES
    passes = list(honest.shuffles)
    cards = list(passes[seat].cards)
    cards[card] = junk
    passes[seat] = replace(passes[seat], cards=tuple(cards))
    faults = verify_pile(replace(honest.record(), shuffles=tuple(passes)), honest.seats(SECRETS))
    assert faults and (faults[0].seat, faults[0].step, faults[0].card) == (seat, "shuffle", card)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2), st.integers(0, 11), st.binary(min_size=32, max_size=32), st.binary(min_size=64, max_size=64))
def test_verify_pile_on_hostile_shares_attributes_them(seat: int, card: int, point: bytes, proof: bytes) -> None:
    honest = DEALT_FOR_PROPERTIES
    bad = replace(make_share(SECRETS[seat], PILE, seat, card, honest.final[card]), point=point, proof=proof)
    faults = verify_pile(honest.record([bad]), honest.seats(SECRETS))
    assert faults and (faults[0].seat, faults[0].step, faults[0].card) == (seat, "share", card)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["commitment", "box_key", "deal_key", "key_proof"]),
                          st.binary(max_size=70)), min_size=1, max_size=3))
def test_check_secrets_on_hostile_seat_keys_never_raises(edits: list[tuple[int, str, bytes]]) -> None:
    seats = DEALT_FOR_PROPERTIES.seats(SECRETS)
    for seat, name, value in edits:
        seats[seat] = replace(seats[seat], keys=replace(seats[seat].keys, **{name: value}))
    faults = check_secrets(GAME, seats)
    changed = {s for s, _, _ in edits if seats[s].keys != DEALT_FOR_PROPERTIES.keys[s]}
    assert {f.seat for f in faults} == changed
    verify_pile(DEALT_FOR_PROPERTIES.record(), seats)  # returns faults, never raises


def test_a_pile_of_one_card_and_the_limits_of_a_pile() -> None:
    one = Pile(GAME, 1, 3, 1)
    dealt = deal(one, SECRETS)
    assert open_card(dealt.final[0], [make_share(s, one, n, 0, dealt.final[0]).point for n, s in enumerate(SECRETS)],
                     dealt.cards) == 0
    for bad in ({"size": 0}, {"game": b""}, {"round_no": -1}, {"pile": 2**32}, {"size": True}):
        with pytest.raises(DealError):
            replace(PILE, **bad)
    assert open_point(initial(dealt.cards, dealt.joint)[0], [dealt.joint]) == dealt.cards.points[0]


def test_keys_that_cancel_and_cards_given_as_bytearrays_are_faults_not_exceptions() -> None:
    from allegra_lan.deal import dleq
    dealt = DEALT_FOR_PROPERTIES
    x0 = deal_key(SECRETS[0], GAME)
    # seats 1 and 2 together cancel seat 0's key and each proves its own: the joint key is the identity
    x1 = 777
    x2 = (-x0 - x1) % group.L
    keys = list(dealt.keys)
    for seat, x in ((1, x1), (2, x2)):
        point = group.mul_base(x)
        keys[seat] = replace(keys[seat], deal_key=point, key_proof=dleq.prove_key(SECRETS[seat], GAME, seat, x, point))
        assert check_seat_keys(GAME, keys[seat]) is None
    seats = [replace(r, keys=k) for r, k in zip(dealt.seats(SECRETS), keys)]
    assert verify_pile(dealt.record(), seats) == (Fault(2, "key", None, "the seats' deal keys add up to the identity"),)
    loose = replace(dealt.shuffles[0], cards=tuple(bytearray(c) for c in dealt.shuffles[0].cards))
    assert check_shuffle(PILE, loose) is None


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(min_size=0, max_size=100), st.binary(min_size=80, max_size=80)), st.binary(max_size=40))
def test_escrow_decoders_on_arbitrary_bytes_refuse_in_one_line(sealed: bytes, piece: bytes) -> None:
    """unseal, open_escrow and check_release are decoders of what other seats publish."""
    sk, pk = box_keypair(SECRETS[1], GAME)
    item = make_escrow(SECRETS[0], GAME, 0, {1: pk, 2: box_keypair(SECRETS[2], GAME)[1]})[0]
    try:
        open_escrow(GAME, replace(item, sealed=sealed), sk, pk)
    except DealError as e:
        assert "\n" not in str(e)
    else:
        assert sealed == item.sealed
    fault = check_release(GAME, item, piece)
    assert fault is None or (fault.seat == 1 and fault.step == "escrow")


def test_a_coalition_of_all_seats_but_one_opens_no_card_it_was_not_shown() -> None:
    """Seats 0 and 2 pool their secrets (every key, permutation and re-encryption they
    made) and everything published; without seat 1's share, no card opens, and what is
    left of each card is a different point, none of them a card point."""
    secrets = [secret_of(s, "coalition") for s in range(3)]
    dealt = deal(PILE, secrets)
    left = []
    for i in range(12):
        pooled = [make_share(secrets[s], PILE, s, i, dealt.final[i]).point for s in (0, 2)]
        assert open_card(dealt.final[i], pooled, dealt.cards) is None
        left.append(open_point(dealt.final[i], pooled))
    assert len(set(left)) == 12 and not set(left) & set(dealt.cards.points)


def test_the_limit_a_copy_by_the_last_seat_leaks_its_twin_and_is_named_at_game_end() -> None:
    """What no check on arrival can stop without a verifiable shuffle (PROTOCOL.md, "What
    is protected"): the last seat, with seat 0, re-encrypts card 4 into place 9. When place
    9 is shown to everyone, honest seat 1's share of it gives the coalition seat 1's share
    of card 4 too, so it reads card 4 (say, in seat 1's hand). The deck is broken by it:
    the twins open to one value, and game-end verification names the last seat."""
    t = 4242
    def copy(seat: int, cards: tuple[bytes, ...]) -> list[bytes]:
        if seat != 2:
            return list(cards)
        y = joint_key([seat_keys(s, GAME, n).deal_key for n, s in enumerate(SECRETS)])
        twin = group.add(cards[4][:32], group.mul_base(t)) + group.add(cards[4][32:], group.mul(t, y))
        return [*cards[:9], twin, *cards[10:]]
    dealt = deal(PILE, SECRETS, copy)
    assert all(check_shuffle(PILE, m) is None for m in dealt.shuffles)  # a re-encrypted copy looks new
    shown = shares_of(dealt, SECRETS, 9)
    honest_on_9 = check_share(PILE, shown[1], dealt.keys[1].deal_key, dealt.final[9])
    honest_on_4 = group.sub(honest_on_9, group.mul(t, dealt.keys[1].deal_key))
    coalition_on_4 = [make_share(SECRETS[s], PILE, s, 4, dealt.final[4]).point for s in (0, 2)]
    read = open_card(dealt.final[4], [*coalition_on_4, honest_on_4], dealt.cards)
    assert read is not None and read == open_card(dealt.final[9], [s.point for s in shown], dealt.cards)
    assert verify_pile(dealt.record(shown), dealt.seats(SECRETS))[0] == Fault(
        2, "shuffle", 9, "its shuffle differs from the one its secret makes")


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=70), st.text(max_size=3)), st.one_of(st.integers(), st.booleans(), st.none()),
       st.one_of(st.integers(), st.booleans()), st.one_of(st.integers(-2, 5000), st.booleans(), st.floats()))
def test_a_pile_from_arbitrary_values_is_one_or_a_one_line_error(game: object, round_no: object, pile: object,
                                                               size: object) -> None:
    """Pile is built from what the log says; bad values never pass silently."""
    try:
        made = Pile(game, round_no, pile, size)  # type: ignore[arg-type]
    except DealError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(made.game, bytes) and 1 <= len(made.game) <= 64 and 1 <= made.size <= 4096


@settings(max_examples=150, deadline=None)
@given(st.one_of(st.binary(max_size=70), st.binary(min_size=64, max_size=64)))
def test_check_card_on_arbitrary_bytes(data: bytes) -> None:
    from allegra_lan.deal import check_card
    try:
        c1, c2 = check_card(data, "a card")
    except DealError as e:
        assert "\n" not in str(e) and str(e).startswith("a card")
    else:
        assert c1 + c2 == data
