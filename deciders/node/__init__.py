"""Deciders on IRMaSim's node model (cores of processors of nodes): the platform and jobs as
they see them, IRMaSim's Heuristic grid (seed 002) and PCBE (seed 000).

May import: deciders.common, joulesim.protocol, joulesim.inputs.
"""
