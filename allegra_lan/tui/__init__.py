"""The terminal client (prompt_toolkit on asyncio): the table screen, `allegra play`, and
the tools built on the same screen (the replay viewer, network play)."""
