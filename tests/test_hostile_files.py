"""Files and commands as hostile as frames (issue 9, findings 8 to 11).

Every test runs the real `allegra` command (`python -m allegra_lan` of the
running interpreter) on real files: huge ones, FIFOs, /dev/zero, directories,
damaged `.seats` and key files, and a REAL full disk: a tiny tmpfs mounted in
a private mount namespace (`unshare --mount`, which this machine and CI allow
as root), so nothing of it is seen outside the test. Outcomes are checked, not
timings: exit status, one stderr line naming the file, no traceback, and the
peak memory of the command (measured by a small parent process of its own, so
no other test's children count).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allegra_lan.files import FileRefused, read_regular, read_text
from allegra_lan.log.codec import encode
from allegra_lan.log.identity import Identity
from allegra_lan.log.replay import (
    MAX_HEADER, MAX_LINE, Replay, ReplayError, ReplayStream, parse_replay, read_replay,
)
from allegra_lan.net.lobby import Claim, Lobby
from allegra_lan.net.seats_file import SeatsFile, SeatsFileError, check_seats

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "replays" / "golden"
GAME = GOLDEN / "allegra-2p.allegra"
MB = 1024 * 1024
MEMORY_LIMIT_KB = 150 * 1024  # a command's peak resident memory, whatever the input


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(home / "config")
    env["XDG_DATA_HOME"] = str(home / "data")
    env["HOME"] = str(home)
    return env


def allegra(home: Path, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "allegra_lan", *map(str, args)], cwd=home,
                          env=environment(home), capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


# The measuring parent: runs the command under a 2 GB address-space cap (a runaway reader
# dies of MemoryError instead of taking the machine) and prints its exit status, peak
# memory and output as JSON.
MEASURE = r"""
import json, resource, subprocess, sys
cap = 2 * 1024 ** 3
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
p = subprocess.run(sys.argv[1:], capture_output=True, text=True, preexec_fn=limit,
                   stdin=subprocess.DEVNULL)
print(json.dumps({"rc": p.returncode, "out": p.stdout[-4000:], "err": p.stderr[-4000:],
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def measured(home: Path, *args: str | Path, timeout: float = 120) -> dict[str, object]:
    p = subprocess.run([sys.executable, "-c", MEASURE, sys.executable, "-m", "allegra_lan",
                        *map(str, args)], cwd=home, env=environment(home), capture_output=True,
                       text=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def one_error_line(p: subprocess.CompletedProcess[str] | dict[str, object], prog: str) -> str:
    """The one stderr line of a refused command (exit status 2), without a traceback."""
    rc, err = (p.returncode, p.stderr) if isinstance(p, subprocess.CompletedProcess) else (p["rc"], p["err"])
    assert isinstance(err, str)
    assert rc == 2, (rc, err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


HEADER = b'[Format "allegra-replay/1"]\n[Result "*"]\n\n'


# ------------------------------------------------------------------ finding 8: huge files


def test_a_50_mb_header_line_is_refused_at_once_in_little_memory(tmp_path: Path) -> None:
    """Today: 30 s and 8.9 GB (verify), MemoryError at 200 MB. The reader stops at the
    header's limit and names the line."""
    big = tmp_path / "long-tag.allegra"
    with open(big, "wb") as f:
        f.write(b'[Format "allegra-replay/1"]\n[Event "')
        chunk = b"A" * MB
        for _ in range(50):
            f.write(chunk)
        f.write(b'"]\n[Result "*"]\n\n')
    for args, prog in ((("replay", "verify"), "allegra replay verify"),
                       (("replay", "show"), "allegra replay show"),
                       (("replay", "export"), "allegra replay export")):
        m = measured(tmp_path, *args, big)
        line = one_error_line(m, prog)
        assert str(big) in line and "line 2" in line and "header is longer" in line, line
        assert m["maxrss_kb"] < MEMORY_LIMIT_KB, m["maxrss_kb"]


def test_a_50_mb_event_line_is_refused_by_its_number(tmp_path: Path) -> None:
    big = tmp_path / "long-line.allegra"
    data = GAME.read_bytes()
    body = data.index(b"\n\n") + 2
    with open(big, "wb") as f:
        f.write(data[:body])
        f.write(data[body:].split(b"\n", 3)[0] + b"\n")  # seq 0, whole
        for _ in range(50):
            f.write(b"QUFB" * (MB // 4))
        f.write(b"\n")
    line_no = data[:body].count(b"\n") + 2
    m = measured(tmp_path, "replay", "verify", big)
    line = one_error_line(m, "allegra replay verify")
    assert f"line {line_no}: longer than an event line can be ({MAX_LINE} bytes)" in line, line
    assert m["maxrss_kb"] < MEMORY_LIMIT_KB, m["maxrss_kb"]


def test_20_mb_of_empty_lines_stop_at_the_first(tmp_path: Path) -> None:
    """Today: every line base64-decoded (21 s, 450 MB) before the first is checked; now the
    first empty line is the fault, named by seq and line, and nothing after it is read."""
    empty = tmp_path / "empty-lines.allegra"
    with open(empty, "wb") as f:
        f.write(HEADER)
        for _ in range(20):
            f.write(b"\n" * MB)
    m = measured(tmp_path, "replay", "verify", empty)
    assert m["rc"] == 1, m
    assert str(m["out"]).splitlines()[0] == f"FAIL {empty}  seq 0: line 4 is empty, not a signed event"
    assert m["err"] == ""
    assert m["maxrss_kb"] < MEMORY_LIMIT_KB, m["maxrss_kb"]
    # The same after whole events: the first empty line is named, the events before it kept.
    data = GAME.read_bytes()
    body = data.index(b"\n\n") + 2
    lines = data[body:].split(b"\n")
    mixed = tmp_path / "mixed.allegra"
    mixed.write_bytes(data[:body] + b"\n".join(lines[:5]) + b"\n" + b"\n" * 1000)
    r = read_replay(mixed)
    line_no = data[:body].count(b"\n") + 6
    assert len(r.events) == 5 and r.fault == (5, f"line {line_no} is empty, not a signed event")


# ------------------------------------------------------------------ finding 8: not a regular file


COMMANDS = {
    "verify": (("replay", "verify"), "allegra replay verify"),
    "show": (("replay", "show"), "allegra replay show"),
    "export": (("replay", "export"), "allegra replay export"),
    "standings": (("replay", "standings"), "allegra replay standings"),
    "view": (("replay", "view"), "allegra replay view"),
    "diff-a": (("diff",), "allegra diff"),
    "diff-b": (("diff", str(GAME)), "allegra diff"),
}


@pytest.mark.parametrize("what", ["fifo", "zero", "directory"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_refuses_what_is_not_a_regular_file(tmp_path: Path, command: str, what: str) -> None:
    """Today show, export, diff and view hang on a FIFO and fill memory on /dev/zero."""
    args, prog = COMMANDS[command]
    if what == "fifo":
        target = tmp_path / "pipe.allegra"
        os.mkfifo(target)
        kind = "a FIFO"
    elif what == "zero":
        target = Path("/dev/zero")
        kind = "a device"
    else:
        target = tmp_path / "dir.allegra"
        target.mkdir()
        (target / "x.allegra").mkdir()  # even a directory of "replays" holds no replay file
        kind = "a directory"
    extra = (str(GAME),) if command == "diff-a" else ()
    try:
        p = allegra(tmp_path, *args, target, *extra, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} hung on {what}")
    line = one_error_line(p, prog)
    if what == "directory" and command in ("verify", "standings"):
        assert f"no .allegra files in the directory {target}" in line, line
    else:
        assert f"{target}: not a regular file" in line and kind in line, line


def test_resume_refuses_a_fifo_at_once(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe.allegra"
    os.mkfifo(pipe)
    p = allegra(tmp_path, "resume", pipe, "--interface", "127.0.0.1", "--bot", "greedy", timeout=60)
    one_error_line(p, "allegra resume")
    assert "not a regular file (a FIFO)" in p.stderr, p.stderr  # not "no such file"


def test_a_fifo_inside_a_directory_is_passed_over(tmp_path: Path) -> None:
    d = tmp_path / "night"
    d.mkdir()
    shutil.copy(GAME, d / "a.allegra")
    os.mkfifo(d / "b.allegra")
    p = allegra(tmp_path, "replay", "verify", d, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.splitlines()[-1] == "1 file: 1 OK, 0 failed"


# ------------------------------------------------------------------ finding 9: show says where


def broken_at(dst: Path, seq: int) -> Path:
    """A copy of the game with a `*` in the line of `seq` (not base64: a line fault)."""
    data = GAME.read_bytes()
    body = data.index(b"\n\n") + 2
    lines = data[body:].split(b"\n")
    lines[seq] = lines[seq][:10] + b"*" + lines[seq][11:]
    dst.write_bytes(data[:body] + b"\n".join(lines))
    return dst


def test_show_without_at_names_where_the_file_breaks(tmp_path: Path) -> None:
    """Today `replay show` stops silently at a broken line and exits 0."""
    bad = broken_at(tmp_path / "broken.allegra", 30)
    p = allegra(tmp_path, "replay", "show", bad)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert p.stderr == ("allegra replay show: the file breaks at seq 30: the line is not base64 of "
                        "a signed event; showing the table after seq 29\n")
    assert p.stdout.startswith("after seq 29 by ")
    v = allegra(tmp_path, "replay", "verify", bad)
    assert v.returncode == 1 and "seq 30: the line is not base64 of a signed event" in v.stdout
    # Before the break the file is fine: --at 29 is a plain table.
    at = allegra(tmp_path, "replay", "show", bad, "--at", "29")
    assert (at.returncode, at.stderr) == (0, "")
    # A break at seq 0: nothing to show but the setup, and the break named.
    first = allegra(tmp_path, "replay", "show", broken_at(tmp_path / "b0.allegra", 0))
    assert first.returncode == 1 and "the file breaks at seq 0" in first.stderr
    assert len(first.stderr.splitlines()) == 1


# ------------------------------------------------------------------ finding 11: one exit rule


def test_verify_and_standings_exit_2_with_one_stderr_line_for_a_file_that_is_not_a_replay(
        tmp_path: Path) -> None:
    """Today they print FAIL on stdout and exit 1, where show, export and diff exit 2."""
    junk = tmp_path / "junk.allegra"
    junk.write_text("hello\n", encoding="utf-8")
    for tool in ("verify", "standings", "show", "export"):
        p = allegra(tmp_path, "replay", tool, junk)
        line = one_error_line(p, f"allegra replay {tool}")
        assert f"{junk}: line 1 is not a [Tag \"value\"] line" in line, line
        assert "FAIL" not in p.stdout
    line = one_error_line(allegra(tmp_path, "diff", GAME, junk), "allegra diff")
    assert str(junk) in line
    # With a good file beside it: the good one is judged, the junk named, and exit 2.
    p = allegra(tmp_path, "replay", "verify", GAME, junk)
    assert p.returncode == 2
    assert p.stdout.splitlines() == [p.stdout.splitlines()[0], "2 files: 1 OK, 0 failed, 1 unreadable"]
    assert p.stdout.startswith(f"OK  {GAME}  (")
    assert p.stderr.splitlines() == [f"allegra replay verify: error: {junk}: line 1 is not a "
                                     "[Tag \"value\"] line"]
    s = allegra(tmp_path, "replay", "standings", GAME, junk)
    assert s.returncode == 2 and "1 game counted, 0 left out" in s.stdout
    assert len(s.stderr.splitlines()) == 1 and str(junk) in s.stderr
    # Read fine but failed a check: 1, on stdout, as before.
    bad = broken_at(tmp_path / "broken.allegra", 12)
    p = allegra(tmp_path, "replay", "verify", bad)
    assert (p.returncode, p.stderr) == (1, "") and p.stdout.startswith(f"FAIL {bad}  seq 12: ")


def test_a_duplicate_header_tag_is_refused_as_the_spec_says(tmp_path: Path) -> None:
    dup = tmp_path / "dup.allegra"
    data = GAME.read_bytes()
    dup.write_bytes(data.replace(b'[Site "', b'[Event "again"]\n[Site "', 1))
    line = one_error_line(allegra(tmp_path, "replay", "verify", dup), "allegra replay verify")
    assert "the tag Event appears twice" in line
    spec = " ".join((ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8").split())
    assert "keeps the last one" not in spec
    assert "A tag that appears twice makes the file not a replay" in spec


# ------------------------------------------------------------------ finding 10: a full disk


def _can_mount() -> str | None:
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    p = subprocess.run(["unshare", "--mount", "--", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                       capture_output=True, text=True, timeout=30)
    return None if p.returncode == 0 else f"a private tmpfs cannot be mounted here: {p.stderr.strip()}"


NO_MOUNT = _can_mount()
full_disk = pytest.mark.skipif(NO_MOUNT is not None, reason=str(NO_MOUNT))


def in_tiny_disk(tmp_path: Path, size: str, script: str, timeout: float = 180) -> None:
    """Run `script` (sh) with a fresh tmpfs of `size` mounted on $D in a private mount
    namespace; the script copies out what the test reads (the tmpfs vanishes with it)."""
    d = tmp_path / "disk"
    d.mkdir()
    env = {**os.environ, "D": str(d), "PY": sys.executable, "T": str(tmp_path)}
    p = subprocess.run(["unshare", "--mount", "--", "sh", "-c",
                        f'mount -t tmpfs -o size={size} tmpfs "$D" && {{ {script} ; }}'],
                       env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert not any(d.iterdir()), "the tmpfs leaked out of its namespace"


@full_disk
def test_simulate_on_a_full_disk_is_one_line_and_every_file_a_valid_prefix(tmp_path: Path) -> None:
    """Today: an `OSError: [Errno 28]` traceback."""
    in_tiny_disk(tmp_path, "256k",
                 '"$PY" -m allegra_lan simulate --variant allegra --players 2 --games 8 --out "$D/g" '
                 '> "$T/out" 2> "$T/err"; echo $? > "$T/rc"; cp -a "$D/g" "$T/copy"')
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "2", err
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith(f"allegra simulate: error: the disk is full: could not write {tmp_path / 'disk' / 'g'}/")
    copy = tmp_path / "copy"
    left = sorted(p.name for p in copy.iterdir())
    assert left and all(n.endswith(".allegra") for n in left), left  # no temporary file left
    v = allegra(tmp_path, "replay", "verify", copy)
    assert v.returncode == 0, v.stdout
    assert "unfinished" in v.stdout.splitlines()[-2], v.stdout  # the last game was cut off


@full_disk
def test_id_on_a_full_disk_leaves_no_key_file(tmp_path: Path) -> None:
    """Today a 0-byte identity.key stays, and every later run fails until it is deleted."""
    in_tiny_disk(tmp_path, "64k",
                 'mkdir -p "$D/allegra-lan" && (dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null; true) && '
                 'XDG_CONFIG_HOME="$D" "$PY" -m allegra_lan id > "$T/out1" 2> "$T/err1"; echo $? > "$T/rc1"; '
                 'ls -A "$D/allegra-lan" > "$T/ls1"; rm "$D/fill"; '
                 'XDG_CONFIG_HOME="$D" "$PY" -m allegra_lan id > "$T/out2" 2> "$T/err2"; echo $? > "$T/rc2"; '
                 'rm -r "$D/allegra-lan"')
    err = (tmp_path / "err1").read_text()
    assert (tmp_path / "rc1").read_text().strip() == "2", err
    key = tmp_path / "disk" / "allegra-lan" / "identity.key"
    assert err == f"allegra id: error: the disk is full: could not write {key}\n"
    assert (tmp_path / "ls1").read_text() == ""  # no identity.key, no temporary file
    assert (tmp_path / "rc2").read_text().strip() == "0", (tmp_path / "err2").read_text()
    assert (tmp_path / "err2").read_text().startswith("made a new key pair in ")


@full_disk
def test_a_host_on_a_full_disk_stops_with_one_line_and_a_valid_prefix(tmp_path: Path) -> None:
    """Today the host dies with an `OSError: [Errno 28]` traceback."""
    table = f"full-{os.getpid()}"
    guest_home = tmp_path / "guest"
    guest_home.mkdir()
    host_script = ('XDG_DATA_HOME="$D" XDG_CONFIG_HOME="$T/hc" "$PY" -m allegra_lan host --interface 127.0.0.1 '
                   f'--bot greedy --players 2 --variant allegra --table {table} --pace 0.01 '
                   '> "$T/out" 2> "$T/err"; echo $? > "$T/rc"; cp -a "$D/allegra-lan/games" "$T/games"')
    d = tmp_path / "disk"
    d.mkdir()
    env = {**os.environ, "D": str(d), "PY": sys.executable, "T": str(tmp_path)}
    host = subprocess.Popen(["unshare", "--mount", "--", "sh", "-c",
                             f'mount -t tmpfs -o size=32k tmpfs "$D" && {{ {host_script} ; }}'],
                            env=env, cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    guest = None
    try:
        deadline = time.monotonic() + 60
        log = tmp_path / "err"
        while time.monotonic() < deadline and not (log.exists() and "open on" in log.read_text()):
            time.sleep(0.1)
        guest = subprocess.Popen([sys.executable, "-m", "allegra_lan", "join", table, "--interface",
                                  "127.0.0.1", "--bot", "random"], env=environment(guest_home),
                                 cwd=guest_home, start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        host.wait(timeout=120)
    finally:
        for p in (guest, host):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=30)
    err = (tmp_path / "err").read_text()
    assert (tmp_path / "rc").read_text().strip() == "2", err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error" in line]
    assert len(errors) == 1, err
    assert errors[0].startswith(f"allegra host: error: the disk is full: could not write {d}/"), errors[0]
    games = tmp_path / "games"
    replays = sorted(games.glob("*.allegra"))
    assert len(replays) == 1 and not list(games.glob("*.tmp*")), sorted(games.iterdir())
    v = allegra(tmp_path, "replay", "verify", replays[0])
    assert v.returncode == 0 and "unfinished after seq" in v.stdout, v.stdout


# ------------------------------------------------------------------ finding 10: the key file


def test_a_key_file_open_to_others_or_a_symlink_is_refused(tmp_path: Path) -> None:
    """Today a key file of mode 0644, or a symlink, is used without a word."""
    first = allegra(tmp_path, "id")
    assert first.returncode == 0
    key = tmp_path / "config" / "allegra-lan" / "identity.key"
    os.chmod(key, 0o644)
    line = one_error_line(allegra(tmp_path, "id"), "allegra id")
    assert line == (f"allegra id: error: {key}: the key file is readable by others (mode 0644): "
                    f"chmod 600 {key}")
    os.chmod(key, 0o620)
    assert "writable by others (mode 0620)" in one_error_line(allegra(tmp_path, "id"), "allegra id")
    os.chmod(key, 0o600)
    assert allegra(tmp_path, "id").stdout == first.stdout
    elsewhere = tmp_path / "elsewhere.key"
    key.rename(elsewhere)
    key.symlink_to(elsewhere)
    assert "the key file is a symlink" in one_error_line(allegra(tmp_path, "id"), "allegra id")
    key.unlink()
    key.write_bytes(b"")
    os.chmod(key, 0o600)
    assert "the key file is empty" in one_error_line(allegra(tmp_path, "id"), "allegra id")
    key.unlink()
    os.mkfifo(key, 0o600)
    assert "not a regular file" in one_error_line(allegra(tmp_path, "id", timeout=30), "allegra id")


# ------------------------------------------------------------------ finding 10: a damaged .seats


def seats_data(key: bytes) -> dict[str, object]:
    """What node.save_seats writes, for a 2-seat ALLEGRA table this key hosts."""
    from allegra_lan.rules import ruleset_for

    host = Identity.from_seed(key)
    seat_key = Identity.from_seed(key + b"seat")
    lobby = Lobby(os.urandom(16), "t", ruleset_for("allegra").to_dict(), 2, host.public)
    lobby.claims[0] = Claim("ann", seat_key.public, host.public, "greedy", True)
    lobby.addresses[host.public] = ("127.0.0.1", 4000)
    return {"lobby": lobby.to_msg(), "port": 4000, "pin": "", "node": bytes(host.key),
            "seats": [[0, bytes(seat_key.key), "greedy", os.urandom(32)]]}


def test_the_seats_schema_takes_what_save_seats_writes() -> None:
    s = check_seats(seats_data(b"k"))
    assert isinstance(s, SeatsFile) and s.port == 4000 and s.pin is None and s.seats[0].bot == "greedy"


def _damaged() -> dict[str, bytes]:
    good = seats_data(b"k")
    whole = encode(good)

    def changed(**kw: object) -> bytes:
        return encode({**good, **kw})

    seat = good["seats"][0]  # type: ignore[index]
    return {
        "truncated": whole[: len(whole) // 2],
        "empty": b"",
        "garbage": os.urandom(300),
        "a list": encode([1, 2, 3]),
        "no node": encode({k: v for k, v in good.items() if k != "node"}),
        "node of 31 bytes": changed(node=b"x" * 31),
        "port as text": changed(port="4000"),
        "port too big": changed(port=1 << 20),
        "lobby a number": changed(lobby=5),
        "seats a map": changed(seats={"a": 1}),
        "seat 99": changed(seats=[[99, seat[1], "greedy", seat[3]]]),
        "key of 3 bytes": changed(seats=[[0, b"abc", "greedy", seat[3]]]),
        "unknown bot": changed(seats=[[0, seat[1], "nobody", seat[3]]]),
        "nonce of 5 bytes": changed(seats=[[0, seat[1], "greedy", b"12345"]]),
        "a seat of 3 fields": changed(seats=[[0, seat[1], "greedy"]]),
    }


DAMAGED = _damaged()


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_resume_with_a_damaged_seats_file_is_one_line(tmp_path: Path, case: str) -> None:
    """Today a damaged `.seats` file gives a traceback in 3 of 5 cases."""
    replay = tmp_path / "game.allegra"
    shutil.copy(GAME, replay)
    seats = replay.with_suffix(".seats")
    seats.write_bytes(DAMAGED[case])
    p = allegra(tmp_path, "resume", replay, "--interface", "127.0.0.1", "--bot", "greedy", timeout=60)
    line = one_error_line(p, "allegra resume")
    assert f"{seats}: " in line, line


# ------------------------------------------------------------------ properties


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_any_bytes_are_a_replay_or_a_named_refusal(data: bytes) -> None:
    try:
        r = parse_replay(data, "x")
    except ReplayError as e:
        assert str(e).startswith("x: ") and "\n" not in str(e)
    else:
        assert isinstance(r, Replay)
        assert all(isinstance(e, bytes) and e for e in r.events)


LINES = st.one_of(
    st.just(b""), st.binary(max_size=60).filter(lambda b: b"\n" not in b),
    st.builds(lambda b: base64.b64encode(b), st.binary(max_size=60)),
    st.sampled_from([b'[Event "x"]', b'[Format "allegra-replay/1"]', b"\xff\xfe", b"A" * (MAX_LINE + 1)]),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, max_size=12), st.booleans(), st.booleans())
def test_a_header_and_any_lines_read_as_a_prefix_or_a_refusal(lines: list[bytes], end: bool,
                                                            canonical: bool) -> None:
    data = HEADER + b"\n".join(lines) + (b"\n" if end else b"")
    try:
        with ReplayStream(data=data, name="x", canonical=canonical) as s:
            events = list(s)
            r = s.replay
    except ReplayError as e:
        assert "\n" not in str(e) and str(e).startswith("x: line ")
        return
    assert r.tags == {"Format": "allegra-replay/1", "Result": "*"}
    # Every event read is the decoding of its line, in order, and stops at the first fault.
    for i, ev in enumerate(events):
        assert base64.b64decode(lines[i]) == ev
    if r.fault is not None:
        assert r.fault[0] == len(events)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=MAX_HEADER * 2))
def test_the_header_limit_holds_for_any_header_size(size: int) -> None:
    data = b'[Format "allegra-replay/1"]\n[Event "' + b"e" * size + b'"]\n\n'
    try:
        r = parse_replay(data, "x")
    except ReplayError as e:
        assert len(data) > MAX_HEADER and "the header is longer than" in str(e)
    else:
        assert len(data) <= MAX_HEADER and r.tags["Event"] == "e" * size


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 63), max_value=2 ** 64 - 1)
    | st.text(max_size=20) | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VALUES, st.sampled_from(["lobby", "port", "pin", "node", "seats", None]))
def test_any_value_is_a_seats_file_or_a_named_refusal(value: object, field: str | None) -> None:
    """Anything in a field of an otherwise good `.seats` file (or as the whole file)."""
    data: object = value if field is None else {**seats_data(b"p"), field: value}
    try:
        s = check_seats(data)
    except SeatsFileError as e:
        assert "\n" not in str(e)
    else:
        assert isinstance(s, SeatsFile)


def test_read_regular_never_reads_past_its_limit(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 100)
    assert read_regular(f, 100) == b"x" * 100
    with pytest.raises(FileRefused, match="more than 99 bytes"):
        read_regular(f, 99)
    with pytest.raises(FileRefused, match="not a regular file"):
        read_regular("/dev/zero", 10)
    link = tmp_path / "link"
    link.symlink_to(f)
    assert read_regular(link, 100) == b"x" * 100
    with pytest.raises(FileRefused, match="symlink"):
        read_regular(link, 100, follow=False)
    assert stat.S_ISREG(os.stat(f).st_mode)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["utf-8", "utf-8-sig"]))
def test_read_text_gives_the_text_or_names_the_line_that_is_not(data: bytes, encoding: str) -> None:
    """The one reader of small text files (players files, player lists, plans): any bytes are
    the decoded text or one line naming the file and the line where UTF-8 stops."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "t.txt"
        f.write_bytes(data)
        try:
            text = read_text(f, 100, encoding=encoding)
        except FileRefused as e:
            assert "\n" not in str(e) and str(e).startswith(str(f))
            if len(data) <= 100:
                with pytest.raises(UnicodeDecodeError):
                    data.decode(encoding)
                line = int(str(e).split(": line ")[1].split(":")[0])
                assert 1 <= line <= data.count(b"\n") + 1
            else:
                assert "more than 100 bytes" in str(e)
        else:
            assert len(data) <= 100 and text == data.decode(encoding)


# ------------------------------------------------------------------ the class, not the instance

READERS = ["log/replay.py", "log/identity.py", "tools/__init__.py", "tools/verify.py", "tools/render.py",
           "tools/export.py", "tools/standings.py", "tools/diff.py", "tui/stepper.py", "tui/replay_view.py",
           "tui/play.py", "net/session.py", "net/seats_file.py", "simulate.py", "local.py", "cli.py"]


@pytest.mark.parametrize("module", READERS)
def test_no_command_opens_a_user_given_file_but_through_files_py(module: str) -> None:
    """Every read of a path a user names goes through files.open_regular (via read_replay,
    ReplayStream or read_regular), so no command can forget the regular-file check."""
    text = (ROOT / "allegra_lan" / module).read_text(encoding="utf-8")
    for call in (".read_bytes(", ".read_text(", " open(", "(open(", "io.open("):
        assert call not in text, f"{module} calls {call.strip('( ')} itself"


PLAY_ON_A_FULL_DISK = r"""
import json, sys
from pathlib import Path
from allegra_lan.bots.driver import play_game
from allegra_lan.tags import log_tags
from allegra_lan.log.identity import Identity
from allegra_lan.rules import ruleset_for
from allegra_lan.tui.play import PlayArgs, start_game
game, bots, writer, path = start_game(PlayArgs(variant="allegra", players=2, seed=3, name="ann"),
                                      Identity.from_seed(b"me"), Path(sys.argv[1]))
play_game(ruleset_for("allegra"), 2, game.table.seed, ["greedy", "greedy"], record=game)
writer.finish(log_tags(game.table))  # what the screen does at the end: no exception
print(json.dumps({"failed": str(writer.failed), "events": game.table.seq, "path": path.name}))
"""


@full_disk
def test_the_play_screen_goes_on_when_the_disk_fills_and_keeps_a_valid_prefix(tmp_path: Path) -> None:
    (tmp_path / "play.py").write_text(PLAY_ON_A_FULL_DISK, encoding="utf-8")
    in_tiny_disk(tmp_path, "32k", '"$PY" "$T/play.py" "$D/games" > "$T/out" 2> "$T/err"; '
                                  'echo $? > "$T/rc"; cp -a "$D/games" "$T/games"')
    assert (tmp_path / "rc").read_text().strip() == "0", (tmp_path / "err").read_text()
    done = json.loads((tmp_path / "out").read_text())
    games = tmp_path / "games"
    assert done["failed"] == f"the disk is full: could not write {tmp_path / 'disk' / 'games' / done['path']}"
    v = allegra(tmp_path, "replay", "verify", games / done["path"])
    assert v.returncode == 0 and "unfinished after seq" in v.stdout, v.stdout
    assert int(v.stdout.split("unfinished after seq ")[1].split(")")[0]) < done["events"] - 1
