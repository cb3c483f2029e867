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
    as it is now: the test pytest itself makes before using it (the header of a pyc that
    checks its source by hash, flags 3, holds the first 8 bytes of the source's hash). With
    every module current, the helpers of `_rewrite_ahead` would only write the same files
    again: two processes and 3 s of CPU. Anything unexpected counts as not current."""
    import importlib.util

    pyc = module.parent / "__pycache__" / f"{module.stem}.{sys.implementation.cache_tag}-pytest-{pytest.__version__}.pyc"
    try:
        with open(pyc, "rb") as f:
            head = f.read(16)
        source = module.read_bytes()
    except OSError:
        return False
    return (len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == b"\x03\x00\x00\x00"
            and head[8:16] == importlib.util.source_hash(source)[:8])


@pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook, which names the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Move the START_FIRST tests to the front, each group in its order (the same order on
    every worker, as xdist requires: a stable sort by a fixed key), and keep each
    `xdist_group` on one worker (`_name_xdist_groups`)."""
    def rank(item: pytest.Item) -> int:
        nodeid = item.nodeid if item.nodeid.startswith("tests/") else "tests/" + item.nodeid
        for i, prefix in enumerate(START_FIRST):
            if nodeid.startswith(prefix):
                return i
        return len(START_FIRST)

    _name_xdist_groups(config, items)
    items.sort(key=rank)


def _name_xdist_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`--dist loadgroup` sends the tests whose node ids end in the same `@GROUP` to one
    worker, and each worker's pytest-xdist appends that suffix by setting `item._nodeid`.
    Under pytest 9.2 a node keeps its id in `item._id`, so that did nothing (pytest-xdist
    issue #1386, open with a fix proposed, pull request #1388, in 2026-09): the
    tournament's three tests ran on three workers, two of them blocked on its lock while
    the first played it, and each worker then read the games again (12 more `allegra`
    subprocesses, about 6.5 s of CPU). Here, on a worker of a loadgroup run, a grouped test
    whose id still lacks its suffix is given it the way pytest stores ids; where xdist's own
    renaming works this finds nothing to do."""
    if not getattr(config.option, "loadgroup", False):  # set on the workers of a loadgroup run only
        return
    for item in items:
        names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                        for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(names)
        if not names or item.nodeid.endswith(suffix):
            continue
        node_id = getattr(item, "_id", None)
        if node_id is None or not hasattr(type(node_id), "parse"):
            continue  # another pytest: nothing known to set
        item._id = type(node_id).parse(item.nodeid + suffix)  # type: ignore[attr-defined]
