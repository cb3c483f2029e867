"""Issue 9, finding 7: a listening `allegra host` under a flood of connections that never
finish their handshake, and at its file-descriptor limit. Real subprocesses, real TCP on
127.0.0.1; the flood comes from other loopback addresses (127.0.0.2 and up, all loopback on
Linux) so it is told apart from the honest guest, as another machine on a LAN would be.

Outcomes, not timings: the host's memory stays bounded, it says what happens in a few lines
(never a traceback), and a guest that joins during or after the flood plays the game to the
end with a replay identical to the host's."""

from __future__ import annotations

import re
import socket
import struct
import time
from pathlib import Path



from allegra_lan.tools.verify import verify_file
from net_helpers import LOOPBACK, CliPool, CliRun, unique_table

PROCESS_LIMIT = 90.0
OPEN_LIMIT = 30.0



def _rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    assert found, status
    return int(found.group(1)) / 1024


def _host(clis: CliPool, table: str, *, wrap: list[str] | None = None) -> tuple[CliRun, int]:
    clis.wrap = wrap or []  # e.g. prlimit, for the host alone
    host = clis.start("host", ["host", "--interface", LOOPBACK, "--bot", "greedy", "--players", "2",
                               "--variant", "grande", "--table", table, "--rounds", "1"])
    clis.wrap = []
    found = host.wait_for_stderr(rf"table '{table}' open on 127\.0\.0\.1:(\d+)", OPEN_LIMIT)
    return host, int(found.group(1))


def _flood(port: int, count: int, sources: list[str], body: bytes) -> list[socket.socket]:
    """`count` connections, spread over `sources`, each sending `body` and then idling."""
    socks: list[socket.socket] = []
    for i in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5.0)
        try:
            s.bind((sources[i % len(sources)], 0))
            s.connect((LOOPBACK, port))
            s.sendall(body)
        except OSError:
            s.close()
            continue
        socks.append(s)
    return socks


def _join_and_finish(clis: CliPool, host: CliRun, table: str) -> None:
    guest = clis.start("guest", ["join", table, "--interface", LOOPBACK, "--bot", "random"])
    codes = [r.wait(PROCESS_LIMIT) for r in (host, guest)]
    detail = f"host:\n{host.stdout()}{host.stderr()[-3000:]}\nguest:\n{guest.stdout()}{guest.stderr()[-2000:]}"
    assert codes == [0, 0], detail
    paths = [r.replay_path() for r in (host, guest)]
    assert paths[0].read_bytes() == paths[1].read_bytes(), detail
    verdict = verify_file(paths[0])
    assert verdict.ok and verdict.finished, verdict
    for run in (host, guest):
        assert "Traceback" not in run.stderr(), run.stderr()


def test_thousands_of_unfinished_handshakes_cost_the_host_little_and_a_guest_still_joins(
        clis: CliPool) -> None:
    """3,000 connections from 200 addresses, each holding the start of a large frame (today:
    +230 MB, for as long as the sockets stay open). Now at most 64 are in their handshake at
    once (8 per address), a stranger's frame may be at most 4 KiB, and a newcomer takes the
    place of the oldest handshake of the biggest crowd, so the guest gets in mid-flood."""
    table = unique_table("flood")
    host, port = _host(clis, table)
    before = _rss_mb(host.proc.pid)
    sources = [f"127.0.{1 + i // 250}.{2 + i % 250}" for i in range(200)]
    big = struct.pack(">I", 60_000) + b"\x81" * 30_000  # half of a 60 kB frame
    small = struct.pack(">I", 4000) + b"\x81" * 3000  # under the handshake limit, unfinished
    socks = _flood(port, 1500, sources, big) + _flood(port, 1500, sources, small)
    try:
        assert len(socks) >= 2500, f"only {len(socks)} flood connections opened"
        time.sleep(1.0)  # let the host read what it was sent
        grown = _rss_mb(host.proc.pid) - before
        assert grown < 40, f"the host grew by {grown:.0f} MB under the flood"
        host.wait_for_stderr(r"refused or cut off \d+ unfinished connection\(s\)", OPEN_LIMIT)
        _join_and_finish(clis, host, table)  # the flood's sockets are still open
    finally:
        for s in socks:
            s.close()
    lines = host.stderr().splitlines()
    notes = [line for line in lines if "unfinished connection" in line]
    assert 1 <= len(notes) <= 20, notes  # one line per few seconds, not one per connection
    refused = [line for line in lines if line.startswith("refused a connection")]
    assert 1 <= len(refused) <= 20, refused[:5]  # 1,500 frames over the limit, a few lines


def test_a_host_out_of_file_descriptors_backs_off_in_one_line_and_recovers(clis: CliPool) -> None:
    """At the descriptor limit accept() fails with EMFILE; trio's own loop logged a traceback
    every 0.1 s. Now the host says it once per burst, waits, and takes connections again
    when descriptors are free: the guest that comes after the flood plays to the end."""
    table = unique_table("emfile")
    host, port = _host(clis, table, wrap=["prlimit", "--nofile=64:64", "--"])
    socks = _flood(port, 200, [f"127.0.0.{i}" for i in range(2, 12)], b"")
    try:
        host.wait_for_stderr(r"cannot accept connections: out of file descriptors \(EMFILE\)",
                             OPEN_LIMIT)
        time.sleep(1.0)
    finally:
        for s in socks:
            s.close()
    _join_and_finish(clis, host, table)
    lines = host.stderr().splitlines()
    emfile = [line for line in lines if "out of file descriptors" in line]
    assert 1 <= len(emfile) <= 20, emfile
