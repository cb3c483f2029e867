"""Fixtures shared by the test modules (instead of one module importing another's)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

from net_helpers import CliPool
from tmux_pane import pane_factory  # noqa: F401 (a fixture, for the tmux tests)


@pytest.fixture
def clis(tmp_path: Path) -> Iterator[CliPool]:
    """`allegra` subprocesses, each with a home of its own; whichever still runs at the end
    of the test is killed."""
    pool = CliPool(tmp_path)
    try:
        yield pool
    finally:
        pool.close()


# The tests that take longest, by the clock rather than by CPU: whole games typed into a
# terminal, the simulator's 250 seeds on two processes, the tournament played by 21 peer
# processes, the network namespaces. Collected first, pytest-xdist hands them out first, so
# they run beside the many short tests instead of trailing alone at the end of the run
# (a quiet run ended with one worker on a 24 s terminal test while the others were idle).
# That needs `--dist loadgroup` (pyproject.toml), which hands out one test at a time: the
# default `load` sends each worker a first chunk of a quarter of its share, so one worker
# got all of these, one after another, for the first three minutes.
START_FIRST = (
    "tests/test_tui_tmux_games.py::",
    "tests/test_sim.py::test_250_seeded_games_hold_every_invariant",
    "tests/test_tournament_e2e.py::",
    "tests/test_net_netns.py::",
    "tests/test_tui_tmux_table.py::",
)


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package's bytecode once, before any worker starts: the suite runs some
    hundreds of `allegra` subprocesses, and where PYTHONDONTWRITEBYTECODE is set (this
    machine sets it), each one compiled every module it imports again, a tenth of a
    second apiece: 37 s of CPU in all. (`compileall` writes the files whatever that
    variable says; they are in .gitignore.)"""
    if hasattr(config, "workerinput") or os.environ.get(AHEAD):  # a worker, or a helper below
        return
    import compileall

    # quiet=2: a tree it cannot write (read-only) only makes the subprocesses slower, as before.
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "allegra_lan", quiet=2)
    _rewrite_ahead(config)


AHEAD = "ALLEGRA_TESTS_REWRITE_AHEAD"


def _rewrite_ahead(config: pytest.Config) -> None:
    """Rewrite the test modules' asserts once, before the xdist workers start, instead of
    once in every worker. Each worker collects every module it may run, and pytest rewrites
    a module's asserts on import (4.5 s of CPU for this suite), caching the result as a pyc
    only where bytecode may be written; with PYTHONDONTWRITEBYTECODE set (this machine sets
    it) four workers spent 24 s of CPU and 13 s before the first test, and even where it is
    not set, a fresh clone's workers all rewrite at once. So two helper processes, with
    bytecode allowed, collect half the modules each (pytest writes the rewritten pycs, which
    the workers then read: it reads them whatever that variable says): 16 s of CPU and 9 s
    before the first test. Only with workers, only for the modules this run names, and only
    when some module's rewritten pyc is missing or older than its source
    (`_rewritten_is_current`); any failure is left to the real collection to report."""
    workers = getattr(config.option, "numprocesses", None)
    if not workers or config.option.collectonly:
        return
    here = Path(__file__).resolve().parent
    modules: list[Path] = []
    for arg in config.args or [str(here)]:
        path = Path(arg.split("::")[0]).resolve()
        if path.is_dir():
            modules += sorted(path.rglob("test_*.py"))
        elif path.name.startswith("test_") and path.suffix == ".py":
            modules.append(path)
    if len(modules) < 8:  # a few modules: the workers rewrite them as fast
        return
    if all(_rewritten_is_current(m) for m in [*modules, here / "conftest.py"]):
        return  # an earlier run's helpers wrote them all, from these very sources
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env[AHEAD] = "1"
    helpers = [subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist",
                                 "-p", "no:cacheprovider", "-o", "addopts=", *map(str, half)],
                                cwd=here.parent, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for half in (modules[0::2], modules[1::2])]
    for h in helpers:
        try:
            h.wait(timeout=120)
        except subprocess.TimeoutExpired:
            h.kill()
            h.wait()


def _rewritten_is_current(module: Path) -> bool:
    """Whether pytest's cached pyc of `module`, asserts rewritten, was made from the module
    as it is now: pytest's own check (`_read_pyc`: the magic number, a header that checks
    the source by hash, a code object), the one it makes before using a pyc. With every
    module current, the helpers of `_rewrite_ahead` would only write the same files again:
    two processes and 3 s of CPU. Anything unexpected (another pytest) counts as not current."""
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc

        return _read_pyc(module, module.parent / "__pycache__" / (module.stem + PYC_TAIL)) is not None
    except Exception:
        return False


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, which names the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the START_FIRST tests to the front, each group in its order (the same order on
    every worker, as xdist requires: a stable sort by a fixed key), and keep each
    `xdist_group` on one worker (`_name_xdist_groups`)."""
    def rank(item: pytest.Item) -> int:
        nodeid = item.nodeid if item.nodeid.startswith("tests/") else "tests/" + item.nodeid
        for i, prefix in enumerate(START_FIRST):
            if nodeid.startswith(prefix):
                return i
        return len(START_FIRST)

    _name_xdist_groups(items)
    items.sort(key=rank)


def _name_xdist_groups(items: list[pytest.Item]) -> None:
    """`--dist loadgroup` sends the tests whose node ids end in the same `@GROUP` to one
    worker, and each worker's pytest-xdist appends that suffix by setting `item._nodeid`.
    Under pytest 9.2 a node keeps its id in `item._id`, so that did nothing (pytest-xdist
    issue #1386, open with a fix proposed, pull request #1388, in 2026-09): the
    tournament's three tests ran on three workers, two of them blocked on its lock while
    the first played it, and each worker then read the games again (12 more `allegra`
    subprocesses, about 6.5 s of CPU). Here the id xdist meant (the `_nodeid` it left on the
    item, its own group naming) is stored the way pytest stores ids; where xdist's renaming
    works, or no group is asked for, there is nothing to do."""
    for item in items:
        meant = item.__dict__.get("_nodeid")
        node_id = getattr(item, "_id", None)
        if not isinstance(meant, str) or meant == item.nodeid or not hasattr(type(node_id), "parse"):
            continue  # no group, xdist's renaming worked, or another pytest: nothing known to set
        item._id = type(node_id).parse(meant)  # type: ignore[attr-defined]
