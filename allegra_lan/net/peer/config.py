"""The peer's timers and limits, in one place (tests shorten some for one game)."""

from __future__ import annotations

KNOCK_WINDOW = 3.0  # seconds the active seat waits for knocks (ALLEGRA R16)
SETUP_TIMEOUT = 30.0  # seconds the ceremony waits for a seat before the start is aborted
PAUSE_NOTE_EVERY = 5.0  # seconds between "waiting for ..." notes while the game is paused
REDIAL_EVERY = 0.5  # seconds between attempts to reach a seated peer we have no link to
DIAL_PENDING = 6.0  # seconds after which a Dial with no answer is taken as failed (the trio
# shell gives one attempt DIAL_TIMEOUT = 5 s)
HOST_TIMEOUT = 30.0  # seconds a joining peer waits for the host's lobby
LINGER = 10.0  # at most this long a finished peer waits for its peers to hold the whole log
LINGER_GRACE = 2.0  # ... and this long after a peer that lacks the end links again (at most 2 x LINGER)
PING_EVERY = 2.0  # seconds between pings on a link
SILENCE = 10.0  # seconds without a frame after which a link is taken for dead (a pulled cable
# or a machine switched off sends no FIN: without this its seat would never count as away)
MAX_LINK_FAULTS = 20  # refused messages after which a connection is closed (a peer that only
# sends garbage would otherwise fill every screen with lines; an honest peer sends none)
TAKEOVER_BOT = "greedy"  # plays a taken seat that was a person's (a bot's seat keeps its bot)
RATE = 2000.0  # messages a second a peer may send on average (a busy bot table sends ~500)
BURST = 4000.0  # and at once; more, and the link is dropped and the peer named
MAX_FAULTS = 1000  # refusals kept for the players to read (the oldest go first)
DEFAULT_EPOCH_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: the wall clock at `now` 0 of a
# peer whose shell gives it none (the simulator, the tests: their logs stay deterministic);
# the trio Node sets `Peer.epoch_ms` from the machine's clock
MAX_ACTS = 64  # events one tick may write (a peer playing every seat of a ceremony writes 3n)

