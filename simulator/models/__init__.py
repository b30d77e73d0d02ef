"""Execution models: how long a job's profile runs on its hosts, and how running jobs share
CPUs, links and memory bandwidth (delay and Batsim's profiles, parallel tasks over the network
with SimGrid's fair-bottleneck sharing, IRMaSim's core/memory-contention model).

May import: joulesim.protocol, joulesim.inputs, simulator.platform, simulator.workload,
simulator.energy (a running task tells the meter its power).
"""
