"""`allegra rules [--variant]`: the rules in plain words, from allegra_lan.rules_text.

The command prints what the client's rules page shows; the arguments are checked like any
other command's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def allegra(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp / "c"), XDG_DATA_HOME=str(tmp / "d"))
    return subprocess.run([sys.executable, "-m", "allegra_lan", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("variant", ["allegra", "grande"])
def test_rules_prints_the_variant_s_rules_text(tmp_path: Path, variant: str) -> None:
    from allegra_lan.rules_text import rules_text

    done = allegra(tmp_path, "rules", "--variant", variant)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    want = rules_text(variant, width=78)  # not a terminal: the default width
    assert done.stdout.rstrip("\n") == want.rstrip("\n")
    narrow = allegra(tmp_path, "rules", "--variant", variant, "--width", "50")
    assert narrow.stdout.rstrip("\n") == rules_text(variant, width=50).rstrip("\n")


def test_rules_default_to_grande_like_play(tmp_path: Path) -> None:
    assert allegra(tmp_path, "rules").stdout == allegra(tmp_path, "rules", "--variant", "grande").stdout


def test_bad_rules_arguments_are_one_line_and_status_2(tmp_path: Path) -> None:
    for args, said in ((["--variant", "golf"], "invalid choice: 'golf'"),
                       (["--width", "10"], "must be 40 to 200 columns"),
                       (["--width", "wide"], "not a whole number of columns: 'wide'")):
        done = allegra(tmp_path, "rules", *args)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("allegra rules: error: ") and said in done.stderr, done.stderr
