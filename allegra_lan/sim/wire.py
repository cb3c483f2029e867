"""Frames as bytes: what goes over a simulated connection is what goes over a real one.

Every message a simulated peer sends is encoded by `framing.encode_frame` (the
canonical codec) and decoded on arrival by the trio shell's own frame parser
(`framing.take_frame`, through `framing.decode_frame`), so a value the codec would
refuse, an oversize header or a body that is not msgpack reaches
`Peer.refused_frame` with the very reason the real shell gives. Adversaries
build raw bytes here too (a header that lies, a body that is not a map).
"""

from __future__ import annotations

from typing import Any

from ..log.codec import encode
from ..net import framing
from ..net.framing import HEADER, MAX_FRAME, FrameError, encode_frame

__all__ = ["FrameError", "encode_message", "decode_frame", "raw_frame", "oversize_header",
           "MAX_FRAME"]


def encode_message(msg: dict[str, Any]) -> bytes:
    """The frame an honest shell sends for `msg` (ValueError if it may not be sent)."""
    return encode_frame(msg)


def decode_frame(frame: bytes) -> dict[str, Any]:
    """The message in one frame's bytes, or FrameError exactly as the trio shell raises it."""
    return framing.decode_frame(frame, MAX_FRAME)


def raw_frame(value: Any) -> bytes:
    """A frame around any value the canonical codec can carry (not necessarily a message:
    a list, a map without `t` ...), so the receiver's frame reader judges it."""
    body = encode(value)
    return HEADER.pack(len(body)) + body


def oversize_header(size: int = MAX_FRAME + 1) -> bytes:
    """A header announcing more than the limit (the reader refuses it from the header)."""
    return HEADER.pack(size) + b"\x00" * 16
