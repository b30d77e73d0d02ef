"""Workloads: jobs and profiles as the engine sees them, the readers of Batsim's and IRMaSim's
workload files, the validation of profiles (files and REGISTER_PROFILE), the trace files of
usage_trace and smpi profiles, storage labels, DAX workflows and external events.

Add a profile type here (`profiles.py` validates it), then how it runs in simulator.models.
May import: joulesim.protocol, joulesim.inputs, simulator.platform.
"""
