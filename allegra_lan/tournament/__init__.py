"""Tournaments: plan who sits at which table in each round (`allegra tournament plan`).

Kept apart from the replay tools because a plan is made before any game is
played: it knows players, rounds and table sizes, not logs. This package's
`__init__` imports nothing, so that building the `allegra` parser (which reads
`tournament.args`) costs no more than argparse; the scheduler (`plan`), the
plan file (`planfile`) and the command (`command`) are imported when they run.
"""
