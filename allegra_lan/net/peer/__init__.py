"""One peer's protocol as a pure state machine (sans-I/O, like h11): see core.py.

The package splits `Peer` by sub-protocol: core.py (inputs, links, dispatch,
gossip, the end of the game), lobby.py (joining and the lobby's messages),
play.py (our seats' events and knocks), takeover.py (seat takeovers);
data.py holds what a peer keeps, config.py its timers and limits.
"""

from .config import (
    BURST, HOST_TIMEOUT, KNOCK_WINDOW, LINGER, MAX_FAULTS, MAX_LINK_FAULTS, PAUSE_NOTE_EVERY,
    PING_EVERY, RATE, REDIAL_EVERY, SETUP_TIMEOUT, SILENCE,
)
from .core import HANDLERS, Peer
from .data import Entropy, JoinError, LinkState, ResumeError, SeatPlayer, SeatSpec
from .play import knock_window

__all__ = [
    "Peer", "HANDLERS", "Entropy", "JoinError", "LinkState", "ResumeError", "SeatPlayer", "SeatSpec",
    "knock_window", "BURST", "HOST_TIMEOUT", "KNOCK_WINDOW", "LINGER", "MAX_FAULTS", "MAX_LINK_FAULTS",
    "PAUSE_NOTE_EVERY", "PING_EVERY", "RATE", "REDIAL_EVERY", "SETUP_TIMEOUT", "SILENCE",
]
