"""Client speed: keystroke to redrawn screen, and the CPU an idle client uses.

    /tmp/venv/bin/python benchmarks/tui.py [--keys 200] [--idle 10]

1. Keystroke to redraw (target: median under 30 ms). The real Application of
   `allegra play` (a 4-player Grande game, seed 1, waiting for the person's
   first decision) and of `allegra replay view` (the 6-player golden replay)
   run on this process's asyncio loop with a pipe input and a VT100 output of
   80x24 that writes its escape codes to /dev/null. Each keystroke is the
   bytes a terminal sends for an arrow key; the time runs from writing them
   to the pipe until prompt_toolkit has drawn the new screen (its
   after_render event): reading and parsing the key, the key handler,
   building the view and the screen's formatted text, layout, the screen diff
   and writing it out. Arrow keys alternate (the play client's cursor goes
   right then left, the viewer one move forward then back), so every key
   changes the screen. Baseline: a bare prompt_toolkit Application whose
   screen is one line counting the keys, timed the same way.

2. Idle CPU (target: under 2% of one core over 10 s). `allegra play --seed
   1` runs as its own process on a pseudo-terminal of 80x24, with its data and
   config in a temporary directory; once its output has been quiet for 2 s it
   is waiting for the person, and the CPU time it uses over the next 10 s is
   read from /proc/PID/stat (user + system). Baseline: the bare Application
   above, as a process on a pty, measured the same way. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import asyncio
import fcntl
import json
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prompt_toolkit.application import Application  # noqa: E402
from prompt_toolkit.data_structures import Size  # noqa: E402
from prompt_toolkit.input import create_pipe_input  # noqa: E402
from prompt_toolkit.output.vt100 import Vt100_Output  # noqa: E402

TARGET_REDRAW_MS = 30.0
TARGET_IDLE_PCT = 2.0
RIGHT, LEFT = "\x1b[C", "\x1b[D"
GOLDEN_6P = ROOT / "replays" / "golden" / "allegra-6p.allegra"

# The baseline: a bare full-screen Application that counts keys (also run as a process).
BARE_APP = """
from prompt_toolkit.application import Application
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl

def make(input=None, output=None):
    n = [0]
    kb = KeyBindings()

    @kb.add(Keys.Any)
    @kb.add("left")
    @kb.add("right")
    def _(event):
        n[0] += 1

    @kb.add("q")
    def _(event):
        event.app.exit(result=0)

    control = FormattedTextControl(lambda: [("", f"keys: {n[0]}")], focusable=True)
    return Application(layout=Layout(Window(control)), key_bindings=kb, full_screen=True,
                       input=input, output=output)

if __name__ == "__main__":
    make().run()
"""


# ------------------------------------------------------------------ keystroke to redraw


def _output(sink: Any) -> Vt100_Output:
    return Vt100_Output(sink, lambda: Size(rows=24, columns=80), term="xterm-256color")


async def _time_keys(app: Application[Any], inp: Any, keys: int,
                     ready: Callable[[], bool] = lambda: True) -> list[float]:
    """Milliseconds from each key's bytes to the end of the redraw it caused."""
    drawn = asyncio.Event()
    app.after_render += lambda _app: drawn.set()
    task = asyncio.ensure_future(app.run_async())
    await asyncio.wait_for(drawn.wait(), 30)
    deadline = time.monotonic() + 60
    while not ready():
        assert time.monotonic() < deadline, "the client never became ready for keys"
        drawn.clear()
        await asyncio.wait_for(drawn.wait(), 30)
    await asyncio.sleep(0.2)  # let anything pending settle
    times = []
    for i in range(keys):
        drawn.clear()
        t0 = time.perf_counter()
        inp.send_text(RIGHT if i % 2 == 0 else LEFT)
        await asyncio.wait_for(drawn.wait(), 10)
        times.append((time.perf_counter() - t0) * 1000)
    app.exit(result=0)
    await task
    return times


def redraw_bare(keys: int) -> list[float]:
    namespace: dict[str, Any] = {"__name__": "bare"}
    exec(BARE_APP, namespace)
    with create_pipe_input() as inp, open(os.devnull, "w") as sink:
        app = namespace["make"](input=inp, output=_output(sink))
        return asyncio.run(_time_keys(app, inp, keys))


def redraw_play(keys: int, home: Path) -> list[float]:
    from allegra_lan.log.identity import Identity
    from allegra_lan.tui.app import Pace, PlayClient, make_application
    from allegra_lan.tui.play import PlayArgs, start_game

    game, bots, writer, path = start_game(PlayArgs(seed=1, name="bench"), Identity.generate(),
                                          home / "games")

    async def go() -> list[float]:
        with create_pipe_input() as inp, open(os.devnull, "w") as sink:
            client = PlayClient(game, bots, 0, writer=writer, pace=Pace(bot=0.0), replay_path=path)
            app = make_application(client, input=inp, output=_output(sink))
            try:
                return await _time_keys(app, inp, keys, ready=client.idle.is_set)
            finally:
                client.close()

    return asyncio.run(go())


def redraw_viewer(keys: int) -> list[float]:
    from allegra_lan.tui.replay_view import make_app, open_viewer

    viewer = open_viewer(str(GOLDEN_6P), 0, False)
    viewer.stepper.goto_seq(200)  # mid-game, in the middle of a round
    with create_pipe_input() as inp, open(os.devnull, "w") as sink:
        app = make_app(viewer, input=inp, output=_output(sink))
        return asyncio.run(_time_keys(app, inp, keys))


# ------------------------------------------------------------------ idle CPU


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")


def idle_cpu(command: list[str], env: dict[str, str], idle: float, quit_keys: bytes) -> tuple[float, str]:
    """Percent of one core used by `command` on an 80x24 pty over `idle` seconds, once its
    output has been quiet for 2 s; and the last screen bytes (for a failure message)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env,
                            start_new_session=True, close_fds=True)
    os.close(slave)
    last_output = [time.monotonic()]
    seen = bytearray()
    stop = threading.Event()

    def drain() -> None:  # the terminal's side: read everything, answer cursor-position queries
        while not stop.is_set():
            r, _, _ = select.select([master], [], [], 0.1)
            if not r:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            if b"\x1b[6n" in data:
                os.write(master, b"\x1b[1;1R")
            seen.extend(data)
            del seen[:-4096]
            last_output[0] = time.monotonic()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() - last_output[0] < 2.0:
            if proc.poll() is not None:
                raise RuntimeError(f"{command} ended early: {bytes(seen)[-500:]!r}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command} never went quiet")
            time.sleep(0.1)
        c0, t0 = _cpu_seconds(proc.pid), time.monotonic()
        time.sleep(idle)
        c1, t1 = _cpu_seconds(proc.pid), time.monotonic()
        assert proc.poll() is None, "the client ended while idle"
        os.write(master, quit_keys)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    finally:
        stop.set()
        reader.join(timeout=2)
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return (c1 - c0) / (t1 - t0) * 100, bytes(seen).decode("utf-8", "replace")


# ------------------------------------------------------------------ report


def _row(name: str, ms: list[float], baseline: float | None) -> str:
    med = statistics.median(ms)
    p90 = sorted(ms)[int(len(ms) * 0.9) - 1]
    ratio = f"{med / TARGET_REDRAW_MS:.2f}"
    vs = f"{med / baseline:.1f}x baseline" if baseline else "baseline"
    return (f"  {name:<28} median {med:6.2f} ms  p90 {p90:6.2f} ms  max {max(ms):6.2f} ms   "
            f"ratio to the {TARGET_REDRAW_MS:.0f} ms target {ratio}  ({vs})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=200, help="keystrokes per figure (default 200)")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of idle measured (default 10)")
    ap.add_argument("--json", action="store_true", help="also print the figures as one JSON line")
    args = ap.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="allegra-bench-") as tmp:
        home = Path(tmp)
        print(f"keystroke to redrawn screen, 80x24, median of {args.keys} arrow keys "
              f"(target < {TARGET_REDRAW_MS:.0f} ms):")
        bare = redraw_bare(args.keys)
        play = redraw_play(args.keys, home)
        viewer = redraw_viewer(args.keys)
        base = statistics.median(bare)
        print(_row("bare prompt_toolkit app", bare, None))
        print(_row("allegra play (4p Grande)", play, base))
        print(_row("allegra replay view (6p)", viewer, base))
        figures["redraw_ms"] = {"bare": base, "play": statistics.median(play),
                                "viewer": statistics.median(viewer)}

        env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR",)}
        env.update(XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
                   TERM="xterm-256color")
        print(f"\nCPU of an idle client over {args.idle:.0f} s, a process on an 80x24 pty "
              f"(target < {TARGET_IDLE_PCT:.0f}% of one core):")
        bare_script = home / "bare_app.py"
        bare_script.write_text(BARE_APP, "utf-8")
        runs = [
            ("bare prompt_toolkit app", [sys.executable, str(bare_script)], b"q"),
            ("allegra play --seed 1", [sys.executable, "-m", "allegra_lan", "play", "--seed", "1"], b"qy"),
            ("allegra replay view (6p)", [sys.executable, "-m", "allegra_lan", "replay", "view",
                                          str(GOLDEN_6P)], b"q"),
        ]
        idle: dict[str, float] = {}
        for name, cmd, quit_keys in runs:
            pct, _screen = idle_cpu(cmd, env, args.idle, quit_keys)
            idle[name] = pct
            ratio = f"ratio to the target {pct / TARGET_IDLE_PCT:.2f}"
            print(f"  {name:<28} {pct:5.2f}% of one core   {ratio}")
        figures["idle_pct"] = idle
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
