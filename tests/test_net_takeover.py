"""A peer that does not come back: the other seats agree, a bot plays its seat, the game ends.

Real `allegra` processes on 127.0.0.1: the host sets `--takeover-after 1`; a guest is
killed with SIGKILL mid-game; the two others agree (each signs) and a bot on the host
plays the dead seat. The killed peer, resumed with `allegra resume`, learns of the takeover,
follows the game to its end as a watcher of its old seat, and every log ends identical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from allegra_lan.tools.verify import verify_file

from net_helpers import (
    LOOPBACK, MID_GAME_PACE, START_LIMIT, CliPool, check_same_ending, kill_a_guest_mid_game, kinds_in,
    start_allegra, unique_table, wait_for,
)


@pytest.mark.parametrize("deal", ["fair", "seeded"])
def test_the_others_let_a_bot_take_a_dead_peers_seat_and_it_follows_on_resume(clis: CliPool, deal: str) -> None:
    """Under the fair deal the takeover also carries the two staying seats' escrow pieces of
    the dead seat, so the bot on the host writes that seat's deal events, its secret at the
    end too, and the game's deal verifies (PROTOCOL.md, "Seat takeovers")."""
    table = unique_table(f"takeover-{deal}")
    net = ["--interface", LOOPBACK, "--pace", MID_GAME_PACE]
    host, other, victim, mine = kill_a_guest_mid_game(clis, table, net, "--takeover-after", "1",
                                                      "--deal", deal)
    # Without the dead peer, the others agree and go on: a takeover lands in the host's log.
    host_file = wait_for("the host's replay", lambda: (host.replays() or [None])[0], START_LIMIT)
    wait_for("a takeover in the host's log", lambda: "takeover" in kinds_in(host_file), START_LIMIT)
    resumed = clis.start("resumed", ["resume", str(mine), "--interface", LOOPBACK], home=victim.home)
    final = check_same_ending([host, other, resumed])
    assert kinds_in(final).count("takeover") == 1
    assert "asking the other seats to let bots play" in host.stderr()
    assert "agreed to let bots play" in other.stderr()
    assert "is played by a bot on" in resumed.stderr() and "from now on" in resumed.stderr()
    secrets = kinds_in(final).count("deal_secret")
    assert secrets == (3 if deal == "fair" else 0)
    if deal == "fair":
        from allegra_lan.log.replay import read_replay
        from allegra_lan.log.envelope import decode_event
        taken = [decode_event(e) for e in read_replay(final).events if decode_event(e).kind == "takeover"]
        assert len(taken[0].body["release"]) == 2  # a piece from each seat that stays
        v = verify_file(final)
        assert v.ok and v.finished and v.deal == "fair", v.reason


def test_takeover_after_must_be_whole_seconds(tmp_path: Path) -> None:
    p = start_allegra(tmp_path, "host", "--interface", "127.0.0.1", "--bot", "greedy", "--takeover-after", "soon")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2 and len(err.strip().splitlines()) == 1
    assert "--takeover-after" in err and "not a whole number of seconds" in err
