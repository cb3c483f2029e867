"""The two errors every command may raise for one line on stderr and exit status 2.

They live apart from `cli.py` so that the modules a command runs (the table
client, the network commands, the tools) can raise them without importing the
command line itself: `cli` imports those modules lazily, and an import of `cli`
back from them made a circle (cli -> tui/play -> cli).
"""

from __future__ import annotations


class UsageError(Exception):
    """A command line that cannot be run; printed as `prog: error: message`, exit status 2."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog
        self.message = message


class CommandError(Exception):
    """A one-line error of a command that knows no `prog` (the network commands): exit 2,
    printed under the name of the command that raised it."""


__all__ = ["UsageError", "CommandError"]
