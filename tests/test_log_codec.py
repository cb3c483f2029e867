"""Canonical msgpack and the signed envelope: one encoding per value, precise refusals."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st
from nacl.signing import SigningKey

from allegra_lan.log.codec import CodecError, decode, encode
from allegra_lan.log.envelope import (
    MAX_EVENT, NO_PREV, EventError, decode_event, event_id, sign_event,
)

KEY = SigningKey(bytes(range(32)))
GAME = bytes(16)


def test_encode_sorts_keys_and_round_trips() -> None:
    raw = encode({"b": 1, "a": [1, b"x", "s", None, True, -5]})
    assert raw.hex() == "82a16196" + "01c40178a173c0c3fb" + "a16201"
    assert decode(raw, max_size=100) == {"a": [1, b"x", "s", None, True, -5], "b": 1}


@pytest.mark.parametrize(
    "raw, reason",
    [
        (bytes.fromhex("82a16201a16102"), "not canonical"),  # keys out of order
        (bytes.fromhex("cc05"), "not canonical"),  # 5 as uint8 instead of a fixint
        (bytes.fromhex("cb3ff0000000000000"), "floats are not allowed"),
        (bytes.fromhex("0102"), "bytes left over"),
        (bytes.fromhex("c1"), "not msgpack"),
        (bytes.fromhex("a2fffe"), "not valid UTF-8"),
        (bytes.fromhex("82a16101a16102"), "appears twice"),
        (bytes.fromhex("d40100"), "extension type"),
        (bytes.fromhex("8101a161"), "map key"),
    ],
)
def test_decode_refuses_non_canonical_bytes(raw: bytes, reason: str) -> None:
    with pytest.raises(CodecError, match=reason):
        decode(raw, max_size=100)


def test_encode_refuses_floats_and_foreign_types() -> None:
    with pytest.raises(CodecError, match="floats"):
        encode({"x": 1.5})
    with pytest.raises(CodecError, match="set"):
        encode({"x": {1, 2}})
    with pytest.raises(CodecError, match="deeper"):
        encode([[[[[[[[[[1]]]]]]]]]])


def test_decode_refuses_oversize() -> None:
    with pytest.raises(CodecError, match="more than"):
        decode(encode(b"x" * 200), max_size=100)


def _event(**kw: object) -> bytes:
    args = dict(game=GAME, seq=0, prev=NO_PREV, kind="genesis", body={"a": 1})
    args.update(kw)
    return sign_event(KEY, **args).signed  # type: ignore[arg-type]


def test_signed_event_round_trip_and_id() -> None:
    signed = _event()
    ev = decode_event(signed)
    assert (ev.seq, ev.kind, ev.body, ev.author) == (0, "genesis", {"a": 1}, bytes(KEY.verify_key))
    assert ev.id == event_id(signed) and len(ev.id) == 32
    # Ed25519 is deterministic: the same event signs to the same bytes.
    assert _event() == signed


def test_every_flipped_byte_is_refused() -> None:
    """Also once the event itself was decoded, so its signature check is remembered
    (envelope.py `_signed_by`): a copy with one byte changed is another key there."""
    signed = _event()
    assert decode_event(signed) == decode_event(signed)
    for i in range(len(signed)):
        bad = bytearray(signed)
        bad[i] ^= 0x01
        with pytest.raises(EventError):
            decode_event(bytes(bad))


def test_flipped_signature_names_the_signature() -> None:
    bad = bytearray(_event())
    bad[5] ^= 0x40
    with pytest.raises(EventError, match="bad signature"):
        decode_event(bytes(bad))


def test_unknown_version_and_wrong_types_are_named() -> None:
    from allegra_lan.log.codec import encode as enc
    from allegra_lan.log.envelope import KEYS

    def forged(env: dict) -> bytes:
        return bytes(KEY.sign(enc(env, key_order=KEYS)))

    base = {"v": 1, "game": GAME, "seq": 0, "prev": NO_PREV, "author": bytes(KEY.verify_key),
            "kind": "genesis", "body": {}}
    with pytest.raises(EventError, match="unknown version 2"):
        decode_event(forged({**base, "v": 2}))
    with pytest.raises(EventError, match="game must be 16 bytes"):
        decode_event(forged({**base, "game": b"short"}))
    with pytest.raises(EventError, match="seq must be"):
        decode_event(forged({**base, "seq": -1}))
    with pytest.raises(EventError, match="kind must be"):
        decode_event(forged({**base, "kind": "Not A Kind"}))
    with pytest.raises(EventError, match="body must be a map"):
        decode_event(forged({**base, "body": [1]}))


def test_oversize_event_is_refused() -> None:
    with pytest.raises(EventError, match="more than"):
        _event(body={"x": b"y" * MAX_EVENT})
    with pytest.raises(EventError, match="more than"):
        decode_event(b"\0" * (MAX_EVENT + 1))


def _outcome(raw: object) -> object:
    try:
        return decode_event(raw)  # type: ignore[arg-type]
    except EventError as e:
        assert "\n" not in str(e)
        return str(e)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.lists(st.tuples(st.integers(0, 400), st.integers(0, 255)), max_size=4),  # edits of a good event
    st.binary(max_size=300),
    st.integers(), st.none(), st.text(max_size=20),
))
def test_decode_event_on_arbitrary_values_answers_alike_every_time_and_takes_only_true_signatures(
        data: object) -> None:
    """decode_event is total: an Event or one EventError line, for any value. It gives the
    same answer again once it remembers the signature check (envelope.py `_signed_by`),
    and an Event only for bytes whose author's key really signed them."""
    from nacl.signing import VerifyKey

    if isinstance(data, list):
        raw = bytearray(_event(seq=3, kind="move", body={"x": 7}))
        for at, value in data:
            raw[at % len(raw)] = value
        data = bytes(raw)
    first, second = _outcome(data), _outcome(data)
    assert first == second
    if not isinstance(first, str):
        VerifyKey(first.author).verify(data)  # type: ignore[attr-defined]  # raises if it was not signed so
