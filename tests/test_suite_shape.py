"""The test suite's own shape: test modules share helpers through tests/helpers.py and
tests/net_helpers.py, never by importing one another; and those helpers do what the
tests rely on.

Why: a test module imported by another is collected twice over (its import side effects,
its fixtures and module-level state run in a module that is not under test there), a
rename or a deleted test breaks an unrelated file, and `pytest tests/test_a.py` silently
depends on test_b. The check parses every module under tests/ with `ast` (nothing is
imported or run), so it also sees imports inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

from net_helpers import kinds_in

TESTS = Path(__file__).resolve().parent


def is_test_module(dotted: str) -> bool:
    """`test_x`, `test_x.y`, `tests.test_x`: what pytest collects as a test file (test_*.py)."""
    parts = dotted.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    return bool(parts) and parts[0].startswith("test_")


def imports_of_test_modules(source: str, filename: str = "<source>") -> list[str]:
    """Every place `source` imports a test module, as `file:line: what`: import statements
    anywhere (module level or inside a function), `from . import test_x`, and
    importlib.import_module / __import__ of a literal name."""
    found: list[str] = []

    def hit(node: ast.AST, what: str) -> None:
        found.append(f"{filename}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_test_module(alias.name):
                    hit(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.module and is_test_module(node.module):
                hit(node, f"from {node.module} import {', '.join(a.name for a in node.names)}")
            elif node.module in (None, "tests"):
                for alias in node.names:
                    if is_test_module(alias.name):
                        hit(node, f"from {'.' * node.level}{node.module or ''} import {alias.name}")
        elif isinstance(node, ast.Call) and node.args:
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            arg = node.args[0]
            if (name in ("import_module", "__import__") and isinstance(arg, ast.Constant)
                    and isinstance(arg.value, str) and is_test_module(arg.value)):
                hit(node, f"{name}({arg.value!r})")
    return found


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    modules = sorted(TESTS.glob("*.py"))
    assert len([m for m in modules if m.name.startswith("test_")]) > 30  # the glob saw the suite
    found = [line for path in modules
             for line in imports_of_test_modules(path.read_text(encoding="utf-8"), path.name)]
    assert not found, (
        "test modules import other test modules; move the shared helper to tests/helpers.py "
        "(no network) or tests/net_helpers.py (peers, sockets, subprocesses) and import it "
        "from there:\n  " + "\n  ".join(found))


def test_the_check_sees_every_way_of_importing_a_test_module() -> None:
    """The check above can fail: each form of import below is reported, at its line, and
    the helper modules and look-alike names are not."""
    source = "\n".join([
        "from test_table import local",              # 1
        "import test_net_sync",                      # 2
        "import tests.test_takeover as t",           # 3
        "def f():",                                  # 4
        "    from test_net_sync import Bus",         # 5
        "from . import test_tui_play",               # 6
        "from tests import test_bots, helpers",      # 7
        "import importlib",                          # 8
        "m = importlib.import_module('test_golden')",  # 9
        "n = __import__('test_text')",               # 10
        "from helpers import local, takeover",       # 11
        "from net_helpers import start_allegra",     # 12
        "import testing, pytest_timeout, tests",     # 13
        "from allegra_lan.tools import test_vectors_gen",  # 14: not a tests/ module
    ])
    lines = sorted(int(x.split(":")[1]) for x in imports_of_test_modules(source))
    assert lines == [1, 2, 3, 5, 6, 7, 9, 10], lines


# ---------------------------------------------------------------- the shared helpers themselves


def test_kinds_in_reads_only_the_whole_lines_of_a_replay_still_being_written(tmp_path: Path) -> None:
    """Tests poll the replay a running peer appends to (e.g. for a takeover); a line caught
    half-written must be left for the next poll, not fail the test with a decoding error."""
    golden = (TESTS.parent / "replays" / "golden" / "allegra-2p.allegra").read_text("ascii")
    head, _, body = golden.partition("\n\n")
    lines = body.split("\n")
    whole = f"{head}\n\n" + "\n".join(lines[:12]) + "\n"
    path = tmp_path / "growing.allegra"
    path.write_text(whole, "ascii")
    kinds = kinds_in(path)
    assert len(kinds) == 12 and kinds[0] == "genesis", kinds
    path.write_text(whole + lines[12][: len(lines[12]) // 2 + 1], "ascii")
    assert kinds_in(path) == kinds
    path.write_text(f"{head}\n", "ascii")  # not even the header's end yet
    assert kinds_in(path) == []
