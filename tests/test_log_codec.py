"""Canonical msgpack and the signed envelope: one encoding per value, precise refusals."""

from __future__ import annotations

import pytest
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
