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


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.booleans())
def test_the_same_key_line_only_for_our_own_key_and_always_one_line_of_80(text: str, ours: bool) -> None:
    error = f"the peer presents our own key {ME.fingerprint} {text}" if ours else text
    line = same_key_words(error, ME)
    if ours:
        assert line is not None
    elif ME.fingerprint not in text or "own key" not in text:
        assert line is None
    if line is not None:
        assert "\n" not in line and len(line) <= 80 and "--profile NAME" in line
