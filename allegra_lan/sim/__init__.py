"""A deterministic network simulator for the mesh (issue 10).

Real `Peer` protocol objects (net/peer.py) play whole games in one process on
a virtual clock and a seeded network: latency and jitter per link, reordering
across links, link resets and stalls, partitions that heal, peers killed and
restarted from their simulated disks, peers that never come back, and the
adversaries of the hostile-input catalogue. After each run the invariants of
invariants.py are checked; a failing seed replays exactly with
`python -m allegra_lan.sim --seed S -v` (docs/simulation.md).

Modules: wire (frames as bytes), net (clock, connections, partitions), disk
(what a crash keeps), scenario (seed -> game and faults), adversary, world
(the shell that runs Peers), invariants, run (one seed judged), cli.
"""
