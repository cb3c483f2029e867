"""Frames: one message is a 4-byte big-endian length, then one canonical msgpack map.

TCP is a byte stream; peers talk in messages. A length prefix lets the
receiver refuse an oversize frame from its header alone, before it waits
for (or buffers) a single byte of the body, so a peer cannot make us hold
more than `max_frame` bytes of its message. The body is read with the same
canonical codec as the signed log (`allegra_lan.log.codec`): maps with string
keys, integers, byte and text strings, arrays, booleans and nil; no floats,
no extension types, bounded nesting; so a message has one encoding and a
hostile one is refused with a reason instead of being half-understood. Every
message is a map with a string field `t`, its type.

A signed event is at most `MAX_EVENT` (16 KiB) bytes; `MAX_FRAME` (64 KiB)
leaves room for an event plus its wrapping, or a few events in one frame.

Failures come in two kinds, and the mesh must tell them apart:

- `ConnectionClosed`: the connection ended between two frames (clean EOF or
  a reset). Nothing was lost; the peer may come back.
- `FrameError`: something broke inside a frame. `fault` is True when the
  bytes themselves prove a broken or hostile peer (oversize, not msgpack,
  not a map, no `t`); it is False for `FrameTruncated` (closed mid-frame)
  and `FrameTimeout` (stalled mid-frame), which an honest peer whose process
  was killed or whose link went down also produces. Either way the stream
  is unusable afterwards: its place in the byte stream is lost.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import trio

from ..log.codec import CodecError, decode, encode

MAX_FRAME = 64 * 1024
FRAME_TIMEOUT = 10.0  # seconds from a frame's first byte to its last
HEADER = struct.Struct(">I")
RECEIVE_CHUNK = 64 * 1024


class ConnectionClosed(Exception):
    """The peer ended the connection between frames: a drop, not a fault."""


class FrameError(Exception):
    """The peer broke the framing rules; the message says how, `fault` says whether it must be blamed."""

    def __init__(self, message: str, *, fault: bool = True) -> None:
        super().__init__(message)
        self.fault = fault


class FrameTruncated(FrameError):
    """The connection ended inside a frame: a crash or a dead link looks the same as malice."""

    def __init__(self, message: str) -> None:
        super().__init__(message, fault=False)


class FrameTimeout(FrameError):
    """A frame began but did not finish in time: without this a stalled peer would hold us forever."""

    def __init__(self, message: str) -> None:
        super().__init__(message, fault=False)


def _kind(value: Any) -> str:
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, (bytes, bytearray)):
        return "a byte string"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a map"
    return f"a {type(value).__name__}"


def _why(e: BaseException) -> str:
    """The OS's words for a broken connection (trio keeps them as the cause)."""
    return str(e.__cause__ or "") or str(e) or "connection reset"


def check_message(msg: Any) -> dict[str, Any]:
    """`msg` itself if it is a message (a map with a string `t`); FrameError otherwise."""
    if not isinstance(msg, dict):
        raise FrameError(f"a message must be a map, not {_kind(msg)}")
    t = msg.get("t")
    if not isinstance(t, str) or not t:
        raise FrameError("a message must have a message type: a non-empty string field t")
    return msg


def encode_frame(msg: dict[str, Any], *, max_frame: int = MAX_FRAME) -> bytes:
    """The bytes of one frame (header and body), so a broadcast encodes once and sends to many.

    Raises ValueError (CodecError for values msgpack may not carry) on a
    message we must not send: sending it would make the peer drop us.
    """
    try:
        check_message(msg)
    except FrameError as e:
        raise ValueError(str(e)) from None
    body = encode(msg)
    if len(body) > max_frame:
        raise ValueError(f"message of {len(body)} bytes is over the {max_frame} limit")
    return HEADER.pack(len(body)) + body


def take_frame(buf: bytearray, max_frame: int = MAX_FRAME) -> dict[str, Any] | None:
    """The first whole message in `buf` (its bytes are removed), or None while it is
    incomplete. The length is judged before the body is waited for. This is the one frame
    parser: the trio stream below and the simulator (sim/wire.py) both read through it, so a
    simulated peer refuses a frame with the very reason a real one gives."""
    if len(buf) < HEADER.size:
        return None
    size = HEADER.unpack_from(buf)[0]
    if size > max_frame:
        raise FrameError(f"frame of {size} bytes is over the {max_frame} limit")
    if size == 0:
        raise FrameError("empty frame (length 0)")
    end = HEADER.size + size
    if len(buf) < end:
        return None
    body = bytes(buf[HEADER.size:end])
    del buf[:end]
    try:
        value = decode(body, max_size=max_frame)
    except CodecError as e:
        raise FrameError(f"malformed frame: {e}") from None
    return check_message(value)


def decode_frame(frame: bytes, max_frame: int = MAX_FRAME) -> dict[str, Any]:
    """The message in exactly one frame's bytes (FrameError if they are not one whole frame)."""
    buf = bytearray(frame)
    msg = take_frame(buf, max_frame)
    if msg is None:
        raise FrameError("the frame ended before its length said")
    if buf:
        raise FrameError(f"{len(buf)} bytes after the end of the frame")
    return msg


class FramedStream:
    """Messages over a trio Stream: `send` whole frames, `receive` whole frames.

    Any number of tasks may send at once: a lock keeps each frame's bytes
    together. One task receives. `receive` is safe to cancel (a timeout around
    it loses nothing: a half-read frame stays buffered for the next call);
    `send` is not, because trio cannot say how much of a cancelled `send_all`
    went out, so a cancelled send leaves the stream refusing further sends.
    """

    def __init__(self, stream: trio.abc.Stream, *, max_frame: int = MAX_FRAME,
                 frame_timeout: float | None = FRAME_TIMEOUT) -> None:
        if max_frame < 1:
            raise ValueError("max_frame must be at least 1")
        self.stream = stream
        self.max_frame = max_frame
        self.frame_timeout = frame_timeout
        self._send_lock = trio.Lock()
        self._send_broken: str | None = None
        self._buffer = bytearray()
        self._frame_started = 0.0  # trio clock time when the buffered partial frame began
        self._last_arrival = 0.0
        self._receiving = False
        self._failed: FrameError | None = None
        self._closed: ConnectionClosed | None = None

    async def send(self, msg: dict[str, Any]) -> None:
        """Send one message; ValueError if it cannot be a frame, ConnectionClosed if the peer is gone."""
        await self.send_frame(encode_frame(msg, max_frame=self.max_frame))

    async def send_frame(self, frame: bytes) -> None:
        """Send a frame made by `encode_frame` (e.g. once for every peer of a broadcast)."""
        if len(frame) < HEADER.size or HEADER.unpack_from(frame)[0] != len(frame) - HEADER.size:
            raise ValueError("not a frame: the length header does not match the body")
        if len(frame) - HEADER.size > self.max_frame:
            raise ValueError(f"message of {len(frame) - HEADER.size} bytes is over the {self.max_frame} limit")
        async with self._send_lock:
            if self._send_broken is not None:
                raise ConnectionClosed(self._send_broken)
            try:
                await self.stream.send_all(frame)
            except trio.BrokenResourceError as e:
                self._send_broken = f"the connection broke ({_why(e)})"
                raise ConnectionClosed(self._send_broken) from e
            except BaseException:
                self._send_broken = "an earlier send stopped mid-frame; the stream cannot be used to send"
                raise

    async def receive(self) -> dict[str, Any]:
        """The next message; ConnectionClosed at a clean end, FrameError for a bad or unfinished frame."""
        if self._failed is not None:
            raise self._failed
        if self._closed is not None:
            raise self._closed
        if self._receiving:
            raise trio.BusyResourceError("another task is already receiving on this stream")
        self._receiving = True
        try:
            while True:
                msg = self._take_frame()
                if msg is not None:
                    return msg
                await self._fill()
        except FrameError as e:
            self._failed = e
            raise
        except ConnectionClosed as e:
            self._closed = e
            raise
        finally:
            self._receiving = False

    async def aclose(self) -> None:
        await self.stream.aclose()

    def _progress(self) -> str:
        if len(self._buffer) < HEADER.size:
            return f"{len(self._buffer)} of the {HEADER.size} header bytes"
        need = HEADER.unpack_from(self._buffer)[0]
        return f"{len(self._buffer) - HEADER.size} of {need} bytes"

    def _take_frame(self) -> dict[str, Any] | None:
        """A whole message out of the buffer, or None while it is incomplete."""
        msg = take_frame(self._buffer, self.max_frame)
        if msg is not None and self._buffer:  # the next frame began in the same chunk
            self._frame_started = self._last_arrival
        return msg

    async def _fill(self) -> None:
        """Read more bytes; a partial frame must finish within `frame_timeout` of its first byte."""
        mid_frame = bool(self._buffer)
        deadline = math.inf
        if mid_frame and self.frame_timeout is not None:
            deadline = self._frame_started + self.frame_timeout
        data = b""
        with trio.move_on_at(deadline) as scope:
            try:
                data = await self.stream.receive_some(RECEIVE_CHUNK)
            except trio.BrokenResourceError as e:
                reason = _why(e)
                if mid_frame:
                    raise FrameTruncated(f"the connection broke mid-frame ({reason}) after {self._progress()}") from e
                raise ConnectionClosed(f"the connection broke ({reason})") from e
            except trio.ClosedResourceError as e:  # our side closed it (a newer link replaced it)
                raise ConnectionClosed("the connection was closed here") from e
        if scope.cancelled_caught:
            raise FrameTimeout(f"the peer stalled mid-frame: {self._progress()} "
                               f"in {self.frame_timeout:g} s")
        if not data:
            if mid_frame:
                raise FrameTruncated(f"the peer closed the connection mid-frame after {self._progress()}")
            raise ConnectionClosed("the peer closed the connection")
        self._last_arrival = trio.current_time()
        if not mid_frame:
            self._frame_started = self._last_arrival
        self._buffer += data
