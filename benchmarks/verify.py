"""Verify speed: raw Ed25519 verifications vs. full `replay verify`, in one run.

Prints, on one core: PyNaCl signature verifications per second over the
very events of the replays, full verification throughput in events per
second (read, decode, canonical check, signature, chain, seed ceremony,
every move through the engine, header), and their ratio (target >= 0.5);
then `--jobs 2` against one job over many files (target: close to 2x), and
the time to open and verify one finished 6-player game (target < 0.2 s).

    python benchmarks/verify.py [--games 24]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from nacl.signing import VerifyKey

from allegra_lan.local import LocalGame, Player, derived, seat_tags
from allegra_lan.tags import log_tags, result_tags
from allegra_lan.log.envelope import decode_event
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import ReplayWriter, read_replay
from allegra_lan.rules import legal_moves, ruleset_for, to_act
from allegra_lan.rules.rng import Stream
from allegra_lan.tools.verify import verify_file, verify_many


def make_game(directory: Path, g: int, variant: str = "allegra", n: int = 6) -> Path:
    """One finished signed game between random players, written as a replay file."""
    players = [Player(f"bot{i}", Identity.from_seed(derived("bench-key", g, i))) for i in range(n)]
    game = LocalGame(ruleset_for(variant), players, game_id=derived("bench-game", g)[:16],
                     nonces=[derived("bench-nonce", g, i) for i in range(n)], table_name="bench")
    rng = Stream(derived("bench-moves", g), "moves")
    while to_act(game.state) is not None:
        moves = legal_moves(game.state)
        game.submit(moves[rng.below(len(moves))])
    path = directory / f"game-{g:03d}.allegra"
    writer = ReplayWriter(path, {**log_tags(game.table), **seat_tags(players)}, fsync=False)
    for ev in game.table.events:
        writer.append(ev.signed)
    writer.finish(result_tags(game.state))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=24)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        paths = [make_game(d, g) for g in range(args.games)]
        events = [e for p in paths for e in read_replay(p).events]
        # Raw: each event's signature checked with its author's key (keys made beforehand).
        authors = [VerifyKey(decode_event(e).author) for e in events]
        # Raw and full alternate, best of three each, so a burst of load on the shared
        # machine does not land on one side of the ratio only.
        raw_times, full_times = [], []
        for _ in range(3):
            t = time.perf_counter()
            for k, e in zip(authors, events):
                k.verify(e)
            raw_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            verdicts = [verify_file(p) for p in paths]
            full_times.append(time.perf_counter() - t)
            assert all(v.ok and v.finished for v in verdicts), [v.reason for v in verdicts if not v.ok]
        raw = len(events) / min(raw_times)
        full = len(events) / min(full_times)

        singles = []
        for p in paths[:5]:
            t = time.perf_counter()
            verify_file(p)
            singles.append(time.perf_counter() - t)
        one = statistics.median(singles)

        j1s, j2s = [], []
        for _ in range(2):
            t = time.perf_counter()
            list(verify_many(paths, jobs=1))
            j1s.append(time.perf_counter() - t)
            t = time.perf_counter()
            list(verify_many(paths, jobs=2))
            j2s.append(time.perf_counter() - t)
        j1, j2 = min(j1s), min(j2s)

    print(f"replays: {len(paths)} finished 6-player ALLEGRA games, {len(events)} events")
    print(f"raw Ed25519 verify (PyNaCl):   {raw:10.0f} signatures/s   (best of 3)")
    print(f"full replay verify, one core:  {full:10.0f} events/s        (best of 3)")
    print(f"ratio full/raw:                {full / raw:10.2f}   (target >= 0.50)")
    print(f"--jobs 1 over all files:       {j1:10.3f} s")
    print(f"--jobs 2 over all files:       {j2:10.3f} s   speed-up {j1 / j2:.2f}x (target close to 2x)")
    print(f"open + verify one game:        {one:10.3f} s   (target < 0.200 s, median of 5)")


if __name__ == "__main__":
    main()
