"""Peer text on our screens (allegra_lan/text.py): one inert line, whatever was sent."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings, strategies as st

from allegra_lan.log.identity import Identity
from allegra_lan.net.node import Node
from allegra_lan.net.peer import Peer
from allegra_lan.text import MAX_NOTE, one_line


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_becomes_one_printable_line_of_bounded_length(text: str) -> None:
    shown = one_line(text)
    assert shown.isprintable() and len(shown) <= MAX_NOTE
    if text.isprintable() and len(text) <= MAX_NOTE:
        assert shown == text


def test_a_peers_reason_with_escapes_and_line_breaks_reaches_no_screen_as_such(tmp_path: Path) -> None:
    """Found by the fuzzers (fuzz/, issue 9): a `lobby_error` from the host, whose reason the
    node quotes, carried an escape sequence that clears the screen and a line break that
    forged a note of ours."""
    said: list[str] = []
    peer = Peer(Identity.generate(), table_id=b"\x07" * 16, entropy=os.urandom)
    node = Node(peer, "127.0.0.1", pin=None, games_dir=tmp_path, say=said.append)
    host = Identity.generate().public  # a peer we dialled: it may speak for the host
    node._carry_out(peer.connected(0.0, host, dialled_by=peer.me, remote=None))
    said.clear()
    node._carry_out(peer.handle(0.0, host, {
        "t": "lobby_error", "reason": "\x1b[2J\x1b]0;pwned\x07\nconnected to AAAA-BBBB"}))
    node._carry_out(peer.handle(0.0, host, {"t": "\x1b[31mred"}))
    assert all(line.isprintable() for line in said), said
    assert node.faults == [said[-1]] and "red" in said[-1]
    assert "\x1b" not in "".join(said) and len(said) == 2
