"""The command answers at once: what `allegra --help`, `allegra id` and `allegra replay verify`
import, and the import graph that keeps it so (issue 11, found 8).

Not a timing test (benchmarks/startup.py prints the figures): each command runs as a real
subprocess under `python -X importtime`, which names every module it imported, and the
test checks that trio, zeroconf and prompt_toolkit are not among them. The layering
checks read the source: the terminal client (tui/) imports neither the command line
(cli) nor the replay tools (tools/), so no command drags in the others.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "replays" / "golden" / "allegra-2p.allegra"
HEAVY = ("trio", "zeroconf", "prompt_toolkit")
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|( *)(\S+)$", re.M)


def imported_by(tmp: Path, *args: str) -> set[str]:
    """Every module `python -m allegra_lan ARGS` imported (a fresh process, own XDG homes)."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp / "config"), XDG_DATA_HOME=str(tmp / "data"))
    env.pop("ALLEGRA_PROFILE", None)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "allegra_lan", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    found = {m.group(2) for m in IMPORTED.finditer(done.stderr)}
    assert "allegra_lan.cli" in found, done.stderr[-2000:]  # the listing is real
    return found


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


@pytest.mark.parametrize("args", [("--help",), ("id",), ("replay", "verify", str(GOLDEN))],
                         ids=["help", "id", "replay-verify"])
def test_quick_commands_import_neither_trio_nor_zeroconf_nor_prompt_toolkit(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    modules = imported_by(tmp_path, *args)
    assert heavy(modules) == [], f"allegra {' '.join(args)} imported {heavy(modules)[:8]}"
    assert "allegra_lan.netcli" not in modules and "allegra_lan.bots.greedy" not in modules


def test_each_subcommand_help_builds_without_the_network_or_the_screen(tmp_path: Path) -> None:
    """argparse definitions need none of them: `allegra host --help` lists its options."""
    modules = imported_by(tmp_path, "host", "--help")
    assert heavy(modules) == []


def test_the_network_commands_still_import_trio_when_they_run(tmp_path: Path) -> None:
    """The lazy handler really runs netcli: a bad table id is netcli's own one-line error."""
    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    done = subprocess.run([sys.executable, "-m", "allegra_lan", "watch", "--interface", "127.0.0.1",
                           "--address", "127.0.0.1:9", "--table-id", "zz"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == "allegra watch: error: --table-id must be 32 hex digits, not 'zz'\n"


def _imports(path: Path) -> set[str]:
    """The modules a source file imports, absolute names (relative ones resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def test_the_terminal_client_imports_neither_the_command_line_nor_the_tools() -> None:
    """tui -> cli was a circle (cli -> tui/play -> cli); tui -> tools pulled the commands in."""
    bad = {}
    for path in sorted((ROOT / "allegra_lan" / "tui").glob("*.py")):
        wrong = sorted(m for m in _imports(path)
                       if m == "allegra_lan.cli" or m.startswith("allegra_lan.cli.")
                       or m == "allegra_lan.tools" or m.startswith("allegra_lan.tools."))
        if wrong:
            bad[path.name] = wrong
    assert bad == {}


def test_usage_error_lives_in_its_own_small_module() -> None:
    from allegra_lan import cli, usage

    assert cli.UsageError is usage.UsageError  # one class, whichever name a caller uses
    assert "class UsageError" not in (ROOT / "allegra_lan" / "cli.py").read_text(encoding="utf-8")
    assert _imports(ROOT / "allegra_lan" / "usage.py") <= {"__future__", "__future__.annotations"}


def test_the_parser_knows_the_bots_the_registry_has() -> None:
    """netargs names the bots as text (the registry imports every bot); they must agree."""
    from allegra_lan.bots.registry import bot_names
    from allegra_lan.netargs import BOT_NAMES

    assert list(BOT_NAMES) == bot_names()
