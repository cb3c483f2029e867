"""Frames over real TCP sockets on 127.0.0.1: whole messages in, whole messages out, hostile bytes refused."""

from __future__ import annotations

import hashlib
from typing import Any, Awaitable, Callable

import msgpack
import pytest
import trio
from hypothesis import given, settings, strategies as st

from allegra_lan.log.codec import encode
from allegra_lan.log.envelope import MAX_EVENT
from allegra_lan.net.framing import (
    HEADER,
    MAX_FRAME,
    ConnectionClosed,
    FramedStream,
    FrameError,
    FrameTimeout,
    FrameTruncated,
    decode_frame,
    encode_frame,
)

LOOPBACK = "127.0.0.1"


def run(test: Callable[[], Awaitable[None]], limit: float = 10.0) -> None:
    """Run one async test under trio, never for longer than `limit` seconds."""
    async def main() -> None:
        with trio.fail_after(limit):
            await test()
    trio.run(main)


async def tcp_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    """Two ends of a real TCP connection on loopback."""
    listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
    listener = listeners[0]
    port = listener.socket.getsockname()[1]
    client = await trio.open_tcp_stream(LOOPBACK, port)
    server = await listener.accept()
    await listener.aclose()
    return client, server


def payload(tag: str, n: int) -> bytes:
    """n bytes that depend on the tag, so a byte from another frame cannot pass for one of these."""
    out = b""
    counter = 0
    while len(out) < n:
        out += hashlib.blake2b(f"{tag}/{counter}".encode(), digest_size=64).digest()
        counter += 1
    return out[:n]


def nested(depth: int) -> Any:
    """A message map with lists nested `depth` deep inside it."""
    value: Any = "deep"
    for _ in range(depth):
        value = [value]
    return {"t": "x", "v": value}


def message_of_size(size: int) -> dict[str, Any]:
    """A message whose encoding is exactly `size` bytes (size >= 300)."""
    base = len(encode({"t": "blob", "b": b""}))  # the empty bin is 2 bytes; 256..65535 bytes take 3
    n = size - base - 1
    msg = {"t": "blob", "b": payload("exact", n)}
    assert len(encode(msg)) == size
    return msg


def test_frames_round_trip_at_many_sizes() -> None:
    sizes = list(range(0, 40)) + [127, 128, 255, 256, 1000, 4095, 4096, MAX_EVENT, 40_000, 60_000]
    messages: list[dict[str, Any]] = [
        {"t": "data", "i": i, "b": payload(f"m{i}", n), "s": "é" * (n % 7), "l": [1, -1, True, None, -(2 ** 63)],
         "m": {"k": [b"x", "y"], "z": 2 ** 64 - 1}}
        for i, n in enumerate(sizes)
    ]
    messages.append(message_of_size(MAX_FRAME))

    async def test() -> None:
        client, server = await tcp_pair()
        sender, receiver = FramedStream(client), FramedStream(server)
        got: list[dict[str, Any]] = []

        async def send_all() -> None:
            for m in messages:
                await sender.send(m)
            await sender.aclose()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(send_all)
            for _ in messages:
                got.append(await receiver.receive())
            with pytest.raises(ConnectionClosed, match="closed the connection"):
                await receiver.receive()
        assert got == messages
        await receiver.aclose()

    run(test)


def test_a_message_over_the_limit_is_refused_before_anything_is_sent() -> None:
    too_big = message_of_size(MAX_FRAME + 1)
    with pytest.raises(ValueError, match=f"message of {MAX_FRAME + 1} bytes is over the {MAX_FRAME} limit"):
        encode_frame(too_big)

    async def test() -> None:
        client, server = await tcp_pair()
        sender, receiver = FramedStream(client), FramedStream(server)
        with pytest.raises(ValueError, match="over the"):
            await sender.send(too_big)
        await sender.send({"t": "after"})  # nothing of the refused message went out
        assert await receiver.receive() == {"t": "after"}
        await sender.aclose()
        await receiver.aclose()

    run(test)


@pytest.mark.parametrize("bad, why", [
    ({"b": 1}, "message type"),
    ({"t": 7}, "message type"),
    ({"t": ""}, "message type"),
    ([1, 2], "must be a map"),
    ({"t": "x", "f": 1.5}, "floats"),
    ({"t": "x", 3: "int key"}, "not a string"),
])
def test_encode_frame_refuses_what_a_peer_would_refuse(bad: Any, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        encode_frame(bad)


def test_send_frame_refuses_bytes_that_are_not_one_frame() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        sender = FramedStream(client)
        frame = encode_frame({"t": "x"})
        for bad in (frame[:-1], frame + b"\x00", b"\x00\x00"):
            with pytest.raises(ValueError, match="not a frame"):
                await sender.send_frame(bad)
        await sender.send_frame(frame)
        assert await FramedStream(server).receive() == {"t": "x"}
        await client.aclose()
        await server.aclose()

    run(test)


def test_concurrent_senders_never_interleave_their_bytes() -> None:
    senders, per_sender = 8, 30

    def msg(s: int, i: int) -> dict[str, Any]:
        n = (s * 7919 + i * 104_729) % 40_000  # up to 40 KB: big enough that send_all blocks part way
        return {"t": "data", "s": s, "i": i, "b": payload(f"{s}/{i}", n)}

    async def test() -> None:
        client, server = await tcp_pair()
        sender, receiver = FramedStream(client), FramedStream(server)

        async def one_sender(s: int) -> None:
            for i in range(per_sender):
                await sender.send(msg(s, i))
                if i % 5 == 0:
                    await trio.sleep(0)

        got: list[dict[str, Any]] = []

        async def receive_all() -> None:
            for _ in range(senders * per_sender):
                got.append(await receiver.receive())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(receive_all)
            for s in range(senders):
                nursery.start_soon(one_sender, s)
        for m in got:
            assert m == msg(m["s"], m["i"])
        for s in range(senders):
            assert [m["i"] for m in got if m["s"] == s] == list(range(per_sender))
        await client.aclose()
        await server.aclose()

    run(test, limit=30)


def test_many_frames_in_one_write_and_one_frame_in_many_writes() -> None:
    messages = [{"t": "n", "i": i} for i in range(50)]

    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        await client.send_all(b"".join(encode_frame(m) for m in messages))
        for m in messages:
            assert await receiver.receive() == m
        frame = encode_frame({"t": "slow", "b": payload("slow", 300)})
        for i in range(0, len(frame), 37):
            await client.send_all(frame[i:i + 37])
            await trio.sleep(0.001)
        assert await receiver.receive() == {"t": "slow", "b": payload("slow", 300)}
        await client.aclose()
        await server.aclose()

    run(test)


@pytest.mark.parametrize("size", [MAX_FRAME + 1, 2 ** 32 - 1])
def test_an_oversize_frame_is_refused_from_its_header_alone(size: int) -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, frame_timeout=None)  # so only the header check can end the wait
        await client.send_all(HEADER.pack(size) + b"\x81")  # the header and one body byte; the rest never comes
        start = trio.current_time()
        with pytest.raises(FrameError, match=f"frame of {size} bytes is over the {MAX_FRAME} limit") as info:
            await receiver.receive()
        assert info.value.fault
        assert trio.current_time() - start < 1.0
        with pytest.raises(FrameError, match="over the"):  # the stream stays failed
            await receiver.receive()
        await client.aclose()
        await server.aclose()

    run(test)


def test_a_smaller_limit_is_enforced_at_its_exact_boundary() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, max_frame=1000)
        await client.send_all(encode_frame(message_of_size(1000)))
        assert await receiver.receive() == message_of_size(1000)
        await client.send_all(encode_frame(message_of_size(1001)))
        with pytest.raises(FrameError, match="frame of 1001 bytes is over the 1000 limit"):
            await receiver.receive()
        await client.aclose()
        await server.aclose()

    run(test)


@pytest.mark.parametrize("body, why", [
    (b"\xc1", "not msgpack"),                                   # a byte msgpack never uses
    (b"\x92\x01", "not msgpack"),                               # an array of 2 with one element
    (encode({"t": "x"}) + b"\x00", "left over"),
    (msgpack.packb({"f": 1.5, "t": "x"}), "floats"),
    (msgpack.packb({"t": "x", "e": msgpack.ExtType(5, b"zz")}), "extension type"),
    (msgpack.packb({"z": 1, "t": "x"}), "ascending order"),     # keys out of canonical order
    (msgpack.packb({1: 2, "t": "x"}, strict_types=False), "not a string|not msgpack"),
    (b"\x81\xa1t\xa2\xff\xfe", "UTF-8"),
    (b"\x81\xa1t\xda\x00\x01x", "another encoding"),            # str16 where a fixstr fits
    (msgpack.packb(nested(11)), "deeper"),
    (b"", "empty frame"),
])
def test_malformed_bodies_are_refused_with_the_reason(body: bytes, why: str) -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        await client.send_all(HEADER.pack(len(body)) + body)
        with pytest.raises(FrameError, match=why) as info:
            await receiver.receive()
        assert info.value.fault
        await client.aclose()
        await server.aclose()

    run(test)


@pytest.mark.parametrize("value, why", [
    ([1, 2], "a message must be a map, not a list"),
    (5, "a message must be a map, not an integer"),
    (b"raw", "a message must be a map, not a byte string"),
    ({"x": 1}, "message type"),
    ({"t": 3}, "message type"),
    ({"t": ""}, "message type"),
])
def test_a_message_must_be_a_map_with_a_type(value: Any, why: str) -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        body = encode(value)
        await client.send_all(HEADER.pack(len(body)) + body)
        with pytest.raises(FrameError, match=why):
            await receiver.receive()
        await client.aclose()
        await server.aclose()

    run(test)


@pytest.mark.parametrize("sent, progress", [
    (HEADER.pack(100) + b"0123456789", "after 10 of 100 bytes"),
    (HEADER.pack(100)[:2], "after 2 of the 4 header bytes"),
])
def test_a_peer_that_closes_mid_frame_is_named(sent: bytes, progress: str) -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        await client.send_all(encode_frame({"t": "whole"}) + sent)
        await client.aclose()
        assert await receiver.receive() == {"t": "whole"}
        with pytest.raises(FrameTruncated, match=f"closed the connection mid-frame {progress}") as info:
            await receiver.receive()
        assert not info.value.fault  # a killed process looks the same: a drop, not proof of malice
        await server.aclose()

    run(test)


def test_a_clean_close_between_frames_is_connection_closed_not_a_frame_error() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        await client.send_all(encode_frame({"t": "a"}) + encode_frame({"t": "b"}))
        await client.aclose()
        assert await receiver.receive() == {"t": "a"}
        assert await receiver.receive() == {"t": "b"}
        for _ in range(2):
            with pytest.raises(ConnectionClosed):
                await receiver.receive()
        await server.aclose()

    run(test)


def test_closing_the_stream_under_a_waiting_receiver_is_connection_closed() -> None:
    """A newer link replaces an old one and closes it while its receiver waits: the
    receiver ends with ConnectionClosed, never a ClosedResourceError that would take
    the whole node down."""
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        got: list[BaseException] = []

        async def receive() -> None:
            try:
                await receiver.receive()
            except ConnectionClosed as e:
                got.append(e)

        async with trio.open_nursery() as n:
            n.start_soon(receive)
            await trio.sleep(0.05)
            await receiver.aclose()
        assert len(got) == 1 and "closed here" in str(got[0])
        await client.aclose()

    run(test)


def test_a_peer_that_stalls_mid_frame_times_out() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, frame_timeout=0.3)
        await client.send_all(HEADER.pack(100) + b"0123456789")
        start = trio.current_time()
        with pytest.raises(FrameTimeout, match=r"stalled mid-frame: 10 of 100 bytes in 0.3 s") as info:
            await receiver.receive()
        assert 0.25 <= trio.current_time() - start < 2.0
        assert not info.value.fault
        await client.send_all(b"x" * 90)  # too late: the stream stays failed
        with pytest.raises(FrameTimeout):
            await receiver.receive()
        await client.aclose()
        await server.aclose()

    run(test)


def test_waiting_between_frames_is_not_a_stall() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, frame_timeout=0.2)

        async def slow_sender() -> None:
            await trio.sleep(0.5)  # idle: longer than the frame timeout
            frame = encode_frame({"t": "late", "b": payload("late", 500)})
            await client.send_all(frame[:100])
            await trio.sleep(0.1)  # mid-frame, but within the limit
            await client.send_all(frame[100:])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(slow_sender)
            assert await receiver.receive() == {"t": "late", "b": payload("late", 500)}
        await client.aclose()
        await server.aclose()

    run(test)


def test_a_cancelled_receive_keeps_the_half_frame_and_its_deadline() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, frame_timeout=1.0)
        frame = encode_frame({"t": "split", "b": payload("split", 1000)})
        await client.send_all(frame[:500])
        with trio.move_on_after(0.1) as scope:
            await receiver.receive()
        assert scope.cancelled_caught
        await client.send_all(frame[500:])
        assert await receiver.receive() == {"t": "split", "b": payload("split", 1000)}

        # The deadline runs from the frame's first byte, not from the latest call.
        await client.send_all(frame[:500])
        first_byte = trio.current_time()
        with trio.move_on_after(0.6):
            await receiver.receive()
        with pytest.raises(FrameTimeout):
            await receiver.receive()
        assert trio.current_time() - first_byte < 1.5
        await client.aclose()
        await server.aclose()

    run(test)


def test_a_frame_that_begins_in_the_same_read_as_the_last_one_ends_gets_its_own_deadline() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server, frame_timeout=0.4)
        one = encode_frame({"t": "one", "b": payload("one", 200)})
        two = encode_frame({"t": "two", "b": payload("two", 200)})

        async def sender() -> None:
            await client.send_all(one[:100])
            await trio.sleep(0.3)  # frame one takes 0.3 s: within its limit
            await client.send_all(one[100:] + two[:100])  # frame two begins now
            await trio.sleep(0.3)  # 0.6 s after frame one began, 0.3 s after frame two did
            await client.send_all(two[100:])

        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender)
            assert (await receiver.receive())["t"] == "one"
            assert (await receiver.receive())["t"] == "two"
        await client.aclose()
        await server.aclose()

    run(test)


def test_only_one_task_may_receive() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        receiver = FramedStream(server)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(receiver.receive)
            await trio.sleep(0.05)
            with pytest.raises(trio.BusyResourceError):
                await receiver.receive()
            nursery.cancel_scope.cancel()
        await client.aclose()
        await server.aclose()

    run(test)


def test_sending_to_a_closed_peer_ends_in_connection_closed() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        sender = FramedStream(client)
        await server.aclose()
        big = {"t": "x", "b": payload("x", 60_000)}
        with pytest.raises(ConnectionClosed, match="broke"):
            for _ in range(100):  # the first writes may still be buffered by the kernel
                await sender.send(big)
                await trio.sleep(0.01)
        with pytest.raises(ConnectionClosed):  # and every later send says so at once
            await sender.send({"t": "again"})
        await client.aclose()

    run(test)


def test_a_send_cancelled_mid_frame_leaves_the_stream_refusing_sends() -> None:
    async def test() -> None:
        client, server = await tcp_pair()
        sender = FramedStream(client)
        big = {"t": "x", "b": payload("x", 60_000)}
        with trio.move_on_after(0.3) as scope:  # nobody reads: the socket buffers fill and send_all blocks
            for _ in range(200):
                await sender.send(big)
        assert scope.cancelled_caught
        with pytest.raises(ConnectionClosed, match="stopped mid-frame"):
            await sender.send({"t": "after"})
        await client.aclose()
        await server.aclose()

    run(test)


# ---------------------------------------------------------------- one frame, no stream


def test_one_frame_decodes_as_the_stream_reads_it() -> None:
    """The one-frame decoder (the simulator's) is the stream's parser: same message, and the
    same reasons for a frame it refuses."""
    msg = {"t": "have", "seq": 3, "head": b"\x01" * 32}
    assert decode_frame(encode_frame(msg)) == msg
    with pytest.raises(FrameError, match="over the 65536 limit"):
        decode_frame(HEADER.pack(MAX_FRAME + 1))
    with pytest.raises(FrameError, match="empty frame"):
        decode_frame(HEADER.pack(0))
    with pytest.raises(FrameError, match="ended before its length said"):
        decode_frame(encode_frame(msg)[:-1])
    with pytest.raises(FrameError, match="2 bytes after the end of the frame"):
        decode_frame(encode_frame(msg) + b"\x00\x00")


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.builds(lambda b: HEADER.pack(len(b)) + b, st.binary(max_size=200)))
def test_one_frame_decoder_refuses_anything_with_a_frame_error(data: bytes) -> None:
    """Arbitrary bytes (and arbitrary bodies behind a true length): a message map, or a
    FrameError naming what is wrong; nothing else escapes."""
    try:
        msg = decode_frame(data)
    except FrameError as e:
        assert str(e)
    else:
        assert isinstance(msg, dict) and isinstance(msg.get("t"), str)
