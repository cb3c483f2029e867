"""A headless peer stopped mid-game says the exact command that goes on with it
(issue 11, found 7: "leaving prints the exact `allegra resume FILE --interface ADDR`").

Real `allegra` processes on 127.0.0.1: a 3-seat ALLEGRA table of bots; once the victim
holds 20 events and is linked to both others it is stopped with SIGTERM (as Ctrl-C
would), which must name the resume command in its one line; that very command, run in
the victim's home, finishes the game with logs identical to the others'.
"""

from __future__ import annotations

import re
import shlex
import signal
import time

from net_helpers import (
    LOOPBACK, MID_GAME_PACE, START_LIMIT, CliPool, check_same_ending, kinds_in, replay_events,
    unique_table,
)


def test_a_stopped_peer_names_the_resume_command_and_it_finishes_the_game(clis: CliPool) -> None:
    table = unique_table("stopped")
    net = ["--interface", LOOPBACK, "--pace", MID_GAME_PACE]
    host = clis.start("host", ["host", *net, "--bot", "greedy", "--players", "3", "--variant", "allegra",
                               "--table", table, "--rounds", "2"])
    host.wait_for_stderr(rf"table '{re.escape(table)}' open on ", START_LIMIT)
    joining = ["join", table, *net, "--bot", "random", "--wait", str(START_LIMIT)]
    victim = clis.start("victim", joining)
    other = clis.start("other", joining)
    deadline = time.monotonic() + START_LIMIT + 30
    while True:
        found = victim.replays()
        linked = set(re.findall(r"^connected to (\S+)$", victim.stderr(), re.M))
        if found and replay_events(found[0]) > 20 and len(linked) >= 2:
            break
        assert victim.proc.poll() is None and time.monotonic() < deadline, victim.stderr()
        time.sleep(0.05)
    victim.proc.send_signal(signal.SIGTERM)
    assert victim.wait(30) == 2
    last = victim.stderr().strip().splitlines()[-1]
    said = re.fullmatch(r"allegra join: error: stopped before the game ended; to go on with it: "
                        r"(allegra resume .+)", last)
    assert said, victim.stderr()
    words = shlex.split(said.group(1))
    assert words == ["allegra", "resume", str(found[0]), "--interface", LOOPBACK]
    resumed = clis.start("resumed", words[1:], home=victim.home)
    ended = check_same_ending([host, other, resumed])
    # A fair deal (the default): the resumed peer made its seat's deal events again, the
    # very bytes it had made before it stopped (the three logs are one), and the game ended.
    kinds = kinds_in(ended)
    assert kinds.count("deal_secret") == 3 and "deal_shares" in kinds, sorted(set(kinds))
    assert "to go on with this game" not in resumed.stdout()  # it ended: nothing to go on with
