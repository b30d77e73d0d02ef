"""Execution models: how long a job's profile runs on its hosts, and how running jobs share
CPUs, links and memory bandwidth (delay and Batsim's profiles; on the network runner, job models
that start activities under SimGrid's fair-bottleneck sharing: leaf sequences with I/O to
storages, usage traces, SMPI trace replay; IRMaSim's core/memory-contention model).

May import: joulesim.protocol, joulesim.inputs, simulator.platform, simulator.workload,
simulator.energy (a running task tells the meter its power).
"""
