"""Every crash the fuzzers kept (fuzz/crashes/TARGET/crash-*.bin) is fed to its target again.

fuzz/run.py keeps the shortest input of each distinct crash with a note beside
it (crash-*.txt: the target, the exception's last line, the traceback). Once a
crash is fixed its input must stay harmless, so each one is a test here. A
note whose first lines say `known: ...` names a finding that is being fixed
elsewhere: that test is a strict xfail, so when the
fix lands it fails as XPASS and the `known:` line is to be deleted from the
note. Hangs and leaks (libFuzzer's timeout-*/oom-* files) are not run here:
`fuzz/run.py --check-crashes` reports those under its own time limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from fuzz.targets import TARGETS  # noqa: E402

CRASHES = ROOT / "fuzz" / "crashes"


def _kept() -> list[object]:
    params: list[object] = []
    for data in sorted(CRASHES.glob("*/crash-*.bin")):
        note = data.with_suffix(".txt")
        text = note.read_text(encoding="utf-8") if note.exists() else ""
        known = [ln[len("known: "):] for ln in text.splitlines()[:8] if ln.startswith("known: ")]
        marks = [pytest.mark.xfail(strict=True, reason=known[0])] if known else []
        params.append(pytest.param(data, id=f"{data.parent.name}/{data.stem}", marks=marks))
    return params


KEPT = _kept()


def test_the_crash_folder_is_read() -> None:
    """The regression test below sees the kept crashes (a moved folder would silently skip them)."""
    assert CRASHES.is_dir() and KEPT, f"no kept crash inputs under {CRASHES}"
    assert all(p.values[0].parent.name in TARGETS for p in KEPT)  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", KEPT)
def test_kept_crash_input_is_now_harmless(path: Path) -> None:
    TARGETS[path.parent.name].check(path.read_bytes())
