"""Fixtures shared by the test modules (instead of one module importing another's)."""

from __future__ import annotations

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
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    import compileall

    # quiet=2: a tree it cannot write (read-only) only makes the subprocesses slower, as before.
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "allegra_lan", quiet=2)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move the START_FIRST tests to the front, each group in its order (the same order on
    every worker, as xdist requires: a stable sort by a fixed key)."""
    def rank(item: pytest.Item) -> int:
        nodeid = item.nodeid if item.nodeid.startswith("tests/") else "tests/" + item.nodeid
        for i, prefix in enumerate(START_FIRST):
            if nodeid.startswith(prefix):
                return i
        return len(START_FIRST)

    items.sort(key=rank)
