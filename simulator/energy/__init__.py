"""Energy: exact accounting of the platform's power over time and per job
(`out_consumed_energy.csv`), and what that energy costs under the clusters' tariffs.

May import: joulesim.protocol, joulesim.inputs, simulator.platform, simulator.workload.
"""
