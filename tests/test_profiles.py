"""Profile names and the same-key line, fed arbitrary text (hypothesis, bounded).

A profile name becomes a directory under the data directory, so it is hostile input like
a path: whatever the text, `--profile` either takes it as one plain directory name or
refuses it in one line, and `key_dir` never leaves `profiles/`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from allegra_lan.log.identity import Identity, IdentityError, data_dir, key_dir
from allegra_lan.netargs import profile_arg
from allegra_lan.net.handshake import PIN_CODE, SAME_KEY_CODE, _refusal
from allegra_lan.net.peer.data import JoinError
from allegra_lan.tui.net_client import same_key_words

ME = Identity.from_seed(b"profile-tests" * 3)
names = st.one_of(st.text(max_size=40), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,40}", fullmatch=True),
                  st.sampled_from(["..", ".", "a/b", "-x", "bob", "a" * 32, "a" * 33, "ü", "x\n"]))


@settings(max_examples=300, deadline=None)
@given(names)
def test_a_profile_name_is_one_plain_directory_or_a_one_line_refusal(text: str) -> None:
    try:
        taken = profile_arg(text)
    except argparse.ArgumentTypeError as e:
        assert "\n" not in str(e) and str(e).startswith("not a profile name: ")
        try:
            key_dir(text) if text else None
        except IdentityError as err:
            assert "\n" not in str(err)
        else:
            assert not text, f"key_dir took {text!r}, which --profile refuses"
        return
    assert taken == text and 1 <= len(text) <= 32
    where = key_dir(text)
    assert where.parent == data_dir() / "profiles" and where.name == text
    assert ".." not in Path(text).parts and "/" not in text


codes = st.one_of(st.none(), st.text(max_size=20), st.integers(), st.binary(max_size=8),
                  st.lists(st.integers(), max_size=3), st.sampled_from([PIN_CODE, SAME_KEY_CODE, "same_key"]))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), codes)
def test_the_same_key_line_only_for_a_same_key_refusal_and_always_one_line_of_80(
        reason: str, code: object) -> None:
    """A peer's refusal is hostile input: its `code` may be anything. Only the code, never the
    reason's words, makes the same-key line (a reason that mentions our key says nothing)."""
    error = _refusal({"t": "refuse", "reason": f"the peer presents our own key {ME.fingerprint} {reason}",
                      "code": code})
    assert error.by_peer and error.code in (None, PIN_CODE, SAME_KEY_CODE)
    assert error.code == (code if code in (PIN_CODE, SAME_KEY_CODE) else None)
    line = same_key_words(error)
    assert (line is not None) == (code == SAME_KEY_CODE)
    if line is not None:
        assert "\n" not in line and len(line) <= 80 and "--profile NAME" in line
    assert same_key_words(ValueError(f"own key {ME.fingerprint}")) is None
    joined = JoinError(str(error), code=error.code)  # what run_guest raises for the client
    assert same_key_words(joined) == line
