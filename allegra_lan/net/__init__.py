"""The network edge: frames, the peer handshake, and (on top of them) the mesh.

Nothing here is imported by the rules engine or the log: the network reaches
the game only through `allegra_lan.table.Table` and the log modules, so a bad
peer can at worst be refused, never change how a game is judged.
"""
