"""Run the atheris fuzz targets of fuzz/targets.py, one at a time, and say what they found.

    .venv/bin/python fuzz/run.py --target codec --seconds 600
    .venv/bin/python fuzz/run.py --all --seconds 600
    .venv/bin/python fuzz/run.py --check-crashes        # replay fuzz/crashes/ (no atheris needed)

Each target runs in a child process of its own (atheris instruments the code
once per process, and libFuzzer ends its process when the time is up), with
its corpus in fuzz/corpus/NAME/ (seeded from fuzz/seeds.py) and its log in
fuzz/logs/NAME.log. The child does not stop at the first crash: it keeps
the shortest input of each distinct crash (exception type and place) in
fuzz/crashes/NAME/ with a .txt beside it (target, last traceback line,
traceback), and goes on, so one known bug does not hide the next. A hang
(libFuzzer -timeout) or runaway memory (-rss_limit_mb) does end the child;
libFuzzer writes that input to fuzz/crashes/NAME/ too, and the runner starts
the target again for the time that is left.

At the end it prints, per target: seconds run, inputs tried, execs/s,
distinct crashes found in this run and crash files kept. Exit status 1 if a
target crashed, else 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CORPUS = HERE / "corpus"
CRASHES = HERE / "crashes"
LOGS = HERE / "logs"


def use_folder(out: Path) -> None:
    """Keep corpus, crashes and logs under `out` (e.g. to fuzz another checkout's code
    without mixing its crashes with the ones kept in git)."""
    global CORPUS, CRASHES, LOGS
    CORPUS, CRASHES, LOGS = out / "corpus", out / "crashes", out / "logs"
TIMEOUT = 10  # seconds one input may take before libFuzzer calls it a hang
RSS_LIMIT_MB = 1024  # memory a fuzzing process may use before libFuzzer calls it a leak
STATS_EVERY = 0.5  # seconds between stats written by the child
MAX_RESTARTS = 20


def signature(e: BaseException) -> str:
    """What makes two crashes the same bug: the exception type and the function it was
    raised in (the innermost one in the package, else the innermost at all); for a broken
    promise, the target's check that names it, as its function and the check's line within
    it, so that editing other functions does not rename a known crash."""
    frames = []
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name != "crash_unless":
            frames.append((code.co_filename, code.co_name, tb.tb_lineno - code.co_firstlineno))
        tb = tb.tb_next
    ours = [f for f in frames if "allegra_lan" in f[0]] or frames
    if not ours:
        return type(e).__name__
    filename, function, offset = ours[-1]
    where = f"{Path(filename).stem}.{function}"
    return f"{type(e).__name__}@{where}+{offset}" if type(e).__name__ == "Crash" else f"{type(e).__name__}@{where}"


def record_crash(name: str, data: bytes, e: BaseException, seen: dict[str, int]) -> bool:
    """Keep the shortest input of each distinct crash; True if the crash is new to this run."""
    sig = signature(e)
    new = sig not in seen
    if not new and seen[sig] <= len(data):
        return False
    seen[sig] = len(data)
    folder = CRASHES / name
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / ("crash-" + hashlib.sha1(sig.encode()).hexdigest()[:12])
    last = f"{type(e).__name__}: {e}".splitlines()[0][:300] if str(e) else type(e).__name__
    note = stem.with_suffix(".txt")
    known = [ln for ln in note.read_text(encoding="utf-8").splitlines()[:8]
             if ln.startswith("known: ")] if note.exists() else []  # a person's note survives
    stem.with_suffix(".bin").write_bytes(data)
    note.write_text(
        "".join(k + "\n" for k in known) +
        f"target: {name}\nsignature: {sig}\nlast line: {last}\ninput: {len(data)} bytes, "
        f"hex {data[:256].hex()}{'...' if len(data) > 256 else ''}\n\n"
        + "".join(traceback.format_exception(e)), encoding="utf-8")
    return new


# ---------------------------------------------------------------- the child (atheris)


def child(name: str, seconds: int, stats_path: Path, max_len: int | None) -> None:
    import atheris  # only the child needs it: --check-crashes runs without

    with atheris.instrument_imports(include=["allegra_lan", "fuzz"]):
        from fuzz.targets import TARGETS
    target = TARGETS[name]
    seen: dict[str, int] = {}
    for old in (CRASHES / name).glob("crash-*.txt") if (CRASHES / name).exists() else []:
        for line in old.read_text(encoding="utf-8").splitlines():
            if line.startswith("signature: "):
                seen[line[len("signature: "):]] = (old.with_suffix(".bin").stat().st_size
                                                   if old.with_suffix(".bin").exists() else 1 << 30)
    known = set(seen)
    state: dict[str, Any] = {"inputs": 0, "new": [], "started": time.monotonic(), "written": 0.0}
    prior = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    base_inputs = int(prior.get("inputs", 0))

    def write_stats() -> None:
        now = time.monotonic()
        stats_path.write_text(json.dumps({
            "inputs": base_inputs + state["inputs"],
            "seconds": float(prior.get("seconds", 0.0)) + now - state["started"],
            "new_crashes": sorted(set(prior.get("new_crashes", [])) | set(state["new"])),
        }))
        state["written"] = now

    def one_input(data: bytes) -> None:
        state["inputs"] += 1
        try:
            target.check(data)
        except Exception as e:  # every escape is a finding: keep it and go on
            if record_crash(name, data, e, seen) and signature(e) not in known:
                state["new"].append(signature(e))
        if time.monotonic() - state["written"] >= STATS_EVERY:
            write_stats()

    corpus = CORPUS / name
    args = [sys.argv[0], f"-max_total_time={seconds}", f"-timeout={TIMEOUT}",
            f"-rss_limit_mb={RSS_LIMIT_MB}", f"-max_len={max_len or target.max_len}",
            f"-artifact_prefix={CRASHES / name}/", "-print_final_stats=1", str(corpus)]
    (CRASHES / name).mkdir(parents=True, exist_ok=True)
    write_stats()
    if target.value_at is None:
        atheris.Setup(args, one_input)
    else:
        from fuzz.mutator import mutate

        offset = target.value_at
        atheris.Setup(args, one_input, custom_mutator=lambda data, max_size, seed:
                      mutate(data, max_size, seed, offset, atheris.Mutate))
    try:
        atheris.Fuzz()
    finally:
        write_stats()


# ---------------------------------------------------------------- the parent


def run_target(name: str, seconds: int, max_len: int | None) -> dict[str, Any]:
    from fuzz.seeds import write_seeds

    seeds = write_seeds(name, CORPUS / name)
    LOGS.mkdir(parents=True, exist_ok=True)
    stats_path = LOGS / f"{name}.stats.json"
    stats_path.unlink(missing_ok=True)
    log = LOGS / f"{name}.log"
    started = time.monotonic()
    restarts, stops = 0, []
    with open(log, "w", encoding="utf-8") as out:
        while True:
            left = int(seconds - (time.monotonic() - started))
            if left < 1:
                break
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--seconds", str(left),
                   "--stats", str(stats_path), "--out", str(CORPUS.parent)]
            cmd += ["--max-len", str(max_len)] if max_len else []
            proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
            if proc.returncode == 0:
                break
            stops.append(_last_libfuzzer_line(log))  # a hang or a leak: libFuzzer stopped the child
            restarts += 1
            if restarts > MAX_RESTARTS:
                break
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {"inputs": 0, "seconds": 0.0}
    kept = sorted((CRASHES / name).glob("*")) if (CRASHES / name).exists() else []
    return {
        "target": name, "seconds": round(time.monotonic() - started, 1), "inputs": stats["inputs"],
        "execs_per_s": round(stats["inputs"] / max(stats["seconds"], 1e-9)),
        "new_crashes": stats.get("new_crashes", []), "stops": stops,
        "crash_files": len([p for p in kept if p.suffix != ".txt"]),
        "corpus": len(list((CORPUS / name).iterdir())), "seeds": seeds,
    }


def _last_libfuzzer_line(log: Path) -> str:
    lines = [ln for ln in log.read_text(encoding="utf-8", errors="replace").splitlines()
             if "ERROR: libFuzzer" in ln or "==ERROR" in ln or "SUMMARY:" in ln]
    return lines[-1].strip() if lines else "the child stopped with an error (see the log)"


def check_crashes(names: list[str]) -> int:
    """Feed every kept crash input to its target again: which still crash (after a fix)."""
    from fuzz.targets import TARGETS

    still = 0
    for name in names:
        folder = CRASHES / name
        if not folder.exists():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix == ".txt":
                continue
            data = path.read_bytes()
            try:
                TARGETS[name].check(data)
            except Exception as e:
                still += 1
                print(f"CRASH {name} {path.name}: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")
            else:
                print(f"ok    {name} {path.name}")
    print(f"{still} kept input(s) still crash")
    return 1 if still else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Run the allegra-lan fuzz targets under atheris.")
    p.add_argument("--target", action="append", help="a target (repeatable; see --list)")
    p.add_argument("--all", action="store_true", help="every target, one after the other")
    p.add_argument("--seconds", type=int, default=60, help="seconds per target (default 60)")
    p.add_argument("--max-len", type=int, default=None, help="longest input (default: the target's)")
    p.add_argument("--check-crashes", action="store_true", help="run the kept crash inputs again")
    p.add_argument("--list", action="store_true", help="list the targets")
    p.add_argument("--out", type=Path, default=HERE,
                   help="where corpus/, crashes/ and logs/ go (default: fuzz/)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--stats", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    use_folder(args.out.resolve())
    if args.child:  # before anything imports the targets: atheris must instrument them first
        child(args.child, args.seconds, Path(args.stats), args.max_len)
        return 0
    from fuzz.targets import TARGETS

    unknown = [t for t in args.target or [] if t not in TARGETS]
    if unknown:
        p.error(f"no target {unknown[0]!r} (targets: {', '.join(sorted(TARGETS))})")
    if args.list:
        for t in TARGETS.values():
            print(f"{t.name:10} {t.what}")
        return 0
    names = sorted(TARGETS) if args.all or (args.check_crashes and not args.target) else (args.target or [])
    if not names:
        p.error("say --target NAME or --all")
    if args.check_crashes:
        return check_crashes(names)
    if args.seconds < 1:
        p.error("--seconds must be at least 1")
    results = []
    for name in names:
        print(f"fuzzing {name} for {args.seconds} s ...", flush=True)
        r = run_target(name, args.seconds, args.max_len)
        results.append(r)
        print(f"  {r['inputs']} inputs, {r['execs_per_s']} execs/s, {len(r['new_crashes'])} new crash(es), "
              f"{r['crash_files']} crash file(s) kept, corpus {r['corpus']}"
              + (f", stopped {len(r['stops'])}x: {r['stops'][-1]}" if r["stops"] else ""), flush=True)
    print(f"\n{'target':10} {'seconds':>8} {'inputs':>10} {'execs/s':>8} {'new':>4} {'kept':>5}  new crash signatures")
    for r in results:
        print(f"{r['target']:10} {r['seconds']:>8} {r['inputs']:>10} {r['execs_per_s']:>8} "
              f"{len(r['new_crashes']):>4} {r['crash_files']:>5}  {', '.join(r['new_crashes']) or '-'}")
    return 1 if any(r["new_crashes"] or r["stops"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
