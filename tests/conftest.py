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
