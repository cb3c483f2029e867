"""The README's commands work as written after its quick start (issue 11, found 7).

The quick start leaves `allegra` in `.venv/bin/`, so the README says once how to put it
on the PATH (`. .venv/bin/activate`) before its first bare `allegra ...`; this test
checks that it does, that the quick start's two commands are untouched (CI runs them),
that the activation really gives a shell the command (a real bash, a PATH without this
venv), and that every `allegra` command line in the README names a real subcommand
and only options that subcommand takes.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from allegra_lan.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
QUICK_START = (
    "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/allegra play",
    "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q",
)
ACTIVATE = "`. .venv/bin/activate`"


def blocks() -> list[tuple[int, str]]:
    """(offset, text) of every fenced code block."""
    return [(m.start(), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", README, re.S)]


def command_lines() -> list[tuple[int, str]]:
    """Every `allegra ...` command in the README: code-block lines and inline code, with
    where it stands; continuation lines of the synopsis are joined to their command."""
    out: list[tuple[int, str]] = []
    for at, text in blocks():
        current: str | None = None
        for line in text.splitlines():
            stripped = line.split("  #")[0].rstrip().rstrip("&").strip()
            if stripped.startswith("allegra "):
                if current:
                    out.append((at, current))
                current = stripped
            elif current is not None and line.startswith(" ") and stripped.startswith("["):
                current += " " + stripped
            else:
                if current:
                    out.append((at, current))
                current = None
        if current:
            out.append((at, current))
    out += [(m.start(), m.group(1)) for m in re.finditer(r"`(allegra [^`]+)`", README)]
    return out


def test_the_quick_start_is_untouched() -> None:
    first = blocks()[0][1].splitlines()
    assert tuple(first) == QUICK_START


def test_the_readme_says_how_to_run_allegra_before_its_first_bare_allegra() -> None:
    quick_end = README.index("```", README.index("```sh") + 5) + 3
    said = README.find(ACTIVATE)
    assert said != -1, "the README never says how to put .venv/bin on the PATH"
    first_bare = min(at for at, line in command_lines() if at > quick_end and line != "allegra ...")
    assert quick_end < said < first_bare, (said, first_bare)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash to source the venv's activate")
def test_the_activation_the_readme_gives_puts_allegra_on_the_path(tmp_path: Path) -> None:
    venv = Path(sys.executable).parent.parent
    if not (venv / "bin" / "activate").is_file() or not (venv / "bin" / "allegra").is_file():
        pytest.skip(f"{sys.executable} is not a venv's python with the allegra script")
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if Path(p).resolve() != (venv / "bin").resolve())
    env = dict(os.environ, PATH=path, XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    env.pop("VIRTUAL_ENV", None)
    env.pop("ALLEGRA_PROFILE", None)
    # cwd: the venv's parent, so `.venv/bin/activate` is the README's relative path if it is one
    where = venv.parent if venv.name == ".venv" else tmp_path
    activate = ". .venv/bin/activate" if venv.name == ".venv" else f". {shlex.quote(str(venv))}/bin/activate"
    before = subprocess.run(["bash", "-c", "command -v allegra || true"], env=env, capture_output=True,
                            text=True, timeout=30, cwd=where)
    assert Path(before.stdout.strip() or "/nowhere").resolve() != (venv / "bin" / "allegra").resolve()
    done = subprocess.run(["bash", "-c", f"{activate} && allegra id && allegra stats"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=where)
    assert done.returncode == 0, done.stderr
    assert re.match(r"[A-Z2-7]{4}(-[A-Z2-7]{4}){3}\n", done.stdout), done.stdout


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_allegra_command_in_the_readme_is_one_the_command_takes() -> None:
    parser = build_parser()
    checked = 0
    for _, line in command_lines():
        words = [w for w in re.split(r"[\s\[\]|]+", line) if w]
        assert words[0] == "allegra"
        if words[1:] == ["..."]:  # the README speaking of "allegra ..." commands in general
            continue
        p = parser
        for w in words[1:]:
            subs = _subparsers(p)
            if not subs or w.startswith("-"):
                break
            assert w in subs, f"README: `{line}`: no command {w!r}"
            p = subs[w]
        known = {o for a in p._actions for o in a.option_strings}
        for w in words[1:]:
            if w.startswith("-") and len(w) > 1:
                option = w.split("=")[0].rstrip(",.;:")
                if option in ("--", "-"):
                    continue
                assert option in known, f"README: `{line}`: {p.prog} has no option {option}"
        checked += 1
    assert checked >= 30, checked
