"""Grid-level deciders (seed 004): a broker that sends each job to one of several clusters, each
cluster run by its own EASY (with shutdown), composed in one decider.

May import: deciders.energy, deciders.batch, deciders.common, joulesim.protocol.
"""
