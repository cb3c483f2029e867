"""Start-up: `allegra --help`, `allegra id` and `allegra replay verify FILE` against the bare
`python -c "import msgpack, nacl.signing"`, in one run.

Each command runs as a fresh subprocess (the `allegra` script beside this interpreter), interleaved round by round with the bare import so that
a burst of load on a shared machine falls on every side alike. Bytecode caches are on
(in a temporary directory), as for any installed command. Prints the median wall
time of each and the three ratios to the bare import (target: each <= 3).

    python benchmarks/startup.py [--runs 21] [--file REPLAY]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "replays" / "golden" / "allegra-2p.allegra"
TARGET = 3.0


def timed(argv: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one subprocess run; it must succeed (a failing command is no figure)."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: "
                         f"{done.stderr.decode(errors='replace').strip()}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21, help="runs of each command (default: 21)")
    ap.add_argument("--file", type=Path, default=GOLDEN, help="the replay verify checks")
    args = ap.parse_args()
    py = sys.executable
    script = Path(py).with_name("allegra")  # the command a person types; -m if it is not there
    allegra = [str(script)] if script.exists() else [py, "-m", "allegra_lan"]
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, XDG_CONFIG_HOME=f"{home}/config", XDG_DATA_HOME=f"{home}/data")
        env.pop("ALLEGRA_PROFILE", None)
        # As an installed command runs: from bytecode caches (written on the warm-up run, to a
        # directory of this run's own, so nothing lands in the tree). With
        # PYTHONDONTWRITEBYTECODE set every run would compile every module from source.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = f"{home}/pycache"
        commands = {
            "bare import": [py, "-c", "import msgpack, nacl.signing"],
            "allegra --help": [*allegra, "--help"],
            "allegra id": [*allegra, "id"],
            "allegra replay verify": [*allegra, "replay", "verify", str(args.file)],
        }
        for argv in commands.values():  # warm: .pyc files written, the key made once
            timed(argv, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv, env))
    medians = {name: statistics.median(t) for name, t in times.items()}
    base = medians["bare import"]
    print(f"{args.runs} runs each, medians (file: {args.file.name}):")
    for name, m in medians.items():
        print(f"  {name:<24} {m * 1000:7.1f} ms")
    print("ratios to the bare import (target <= 3):")
    worst = 0.0
    for name in list(commands)[1:]:
        ratio = medians[name] / base
        worst = max(worst, ratio)
        print(f"  {name:<24} {ratio:5.2f}x {'ok' if ratio <= TARGET else 'OVER'}")
    print(f"worst: {worst:.2f}x")


if __name__ == "__main__":
    main()
