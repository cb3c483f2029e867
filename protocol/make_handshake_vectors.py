"""Regenerate the handshake test vectors of PROTOCOL.md (protocol/vectors/handshake.json), or check them.

    python protocol/make_handshake_vectors.py            # write protocol/vectors/handshake.json
    python protocol/make_handshake_vectors.py --check    # exit 1 if the committed file differs

Keys, nonces and CPace scalars come from fixed texts, and Ed25519 signing is
deterministic, so the same package always writes the same bytes: every frame
body of a handshake with the right PIN, with a wrong PIN, and with no PIN, in
the order they cross the wire, with who sent it. Another implementation that
plays one side with the same inputs must send the same bytes. Regenerate only
on a deliberate, versioned change of the protocol.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from allegra_lan.log.codec import encode
from allegra_lan.log.identity import Identity
from allegra_lan.net.handshake import INITIATOR, PROTOCOL_VERSION, RESPONDER, Handshake, HandshakeError

import one_vector_file  # noqa: E402 (this directory: run as a script)

OUT = Path(__file__).parent / "vectors" / "handshake.json"
TABLE = hashlib.blake2b(b"allegra-lan handshake vector table", digest_size=16).digest()


def derive(text: str, size: int = 32) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=size).digest()


def side(role: str) -> dict[str, str]:
    return {"identity_seed": f"handshake vector {role}", "nonce": derive(f"nonce {role}").hex(),
            "cpace_scalar": derive(f"cpace scalar {role}").hex()}


def play(name: str, pin_i: str | None, pin_r: str | None) -> dict[str, Any]:
    """Run both state machines against each other with fixed inputs; every message in order."""
    inputs = {INITIATOR: side(INITIATOR), RESPONDER: side(RESPONDER)}
    pins = {INITIATOR: pin_i, RESPONDER: pin_r}
    sides = {role: Handshake(Identity.from_seed(inp["identity_seed"].encode()), initiator=role == INITIATOR,
                             table_id=TABLE, nonce=bytes.fromhex(inp["nonce"]), pin=pins[role],
                             scalar=bytes.fromhex(inp["cpace_scalar"]))
             for role, inp in inputs.items()}
    wire: list[dict[str, str]] = []
    queue: dict[str, list[dict[str, Any]]] = {INITIATOR: [], RESPONDER: []}

    def send(role: str, msg: dict[str, Any]) -> None:
        wire.append({"from": role, "t": msg["t"], "frame_body": encode(msg).hex()})
        queue[RESPONDER if role == INITIATOR else INITIATOR].append(msg)

    send(INITIATOR, sides[INITIATOR].hello_message())
    send(RESPONDER, sides[RESPONDER].hello_message())
    outcome = "both accept"
    while queue[INITIATOR] or queue[RESPONDER]:
        for role in (INITIATOR, RESPONDER):
            if queue[role]:
                msg = queue[role].pop(0)
                if msg["t"] == "refuse":
                    queue = {INITIATOR: [], RESPONDER: []}
                    break
                try:
                    for out in sides[role].receive(msg):
                        send(role, out)
                except HandshakeError as e:
                    outcome = f"the {role} refuses: {e.reason}"
                    send(role, {"t": "refuse", "reason": e.reason, **({"code": e.code} if e.code else {})})
    peer = sides[INITIATOR].peer
    return {"name": name, "pin": {INITIATOR: pin_i, RESPONDER: pin_r}, **{role: inputs[role] for role in inputs},
            "messages": wire, "outcome": outcome,
            "session": None if peer is None or not sides[RESPONDER].done else peer.session.hex()}


def vectors() -> dict[str, Any]:
    return {
        "about": "PROTOCOL.md, Handshake: protocol 2, CPace CPACE-X25519-SHA512 (draft-irtf-cfrg-cpace-21). "
                 "Identities are Identity.from_seed(identity_seed as UTF-8): the Ed25519 seed is "
                 "BLAKE2b-256 of it. frame_body is the canonical msgpack of one message (a frame is its "
                 "4-byte big-endian length, then this).",
        "proto": PROTOCOL_VERSION,
        "table": TABLE.hex(),
        "cases": [play("right PIN", "4711", "4711"), play("wrong PIN", "1234", "4711"),
                  play("no PIN", None, None)],
    }


def main() -> int:
    return one_vector_file.main(__doc__ or "", OUT, vectors)


if __name__ == "__main__":
    sys.exit(main())
