"""Batsim's --enable-compute-sharing: the jobs running on each compute host.

Without sharing a host runs one job (`Simulation.host_job`). With it, several jobs may run on
one host at once: they share its CPU, links and storages under the fair-bottleneck rule of the
network runner (simulator/models/ptask_runner.py), and `host_job[h]` keeps the host's oldest
running job, so that everything that asks "is this host busy?" still asks it there.

Energy of shared hosts: a job's dynamic power is its own activities' load (exact); a host's
static (idle) power is split equally among the jobs running on it, re-split whenever one starts
or ends, so the jobs' energies add up to what their hosts drew while busy (Batsim instead gives
each job the whole energy of its hosts over its run, counting a shared host once per job).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from joulesim.simulator.energy.energy_meter import EnergyMeter
    from joulesim.simulator.workload.job_record import JobRecord


class SharedHosts:
    def __init__(self, host_job: list["JobRecord | None"]):
        self.host_job = host_job  # the simulation's list, kept to each host's oldest job
        self.jobs: list[list["JobRecord"]] = [[] for _ in host_job]

    def add(self, record: "JobRecord", runs: list[tuple[int, int]]) -> int:
        """The job runs on these hosts now; how many of them were idle."""
        newly_busy = 0
        for a, b in runs:
            for host in range(a, b + 1):
                running = self.jobs[host]
                if not running:
                    newly_busy += 1
                    self.host_job[host] = record
                running.append(record)
        return newly_busy

    def remove(self, record: "JobRecord") -> list[int]:
        """The job left its hosts; the hosts it leaves idle."""
        idle = []
        for a, b in record.alloc:
            for host in range(a, b + 1):
                running = self.jobs[host]
                running.remove(record)
                self.host_job[host] = running[0] if running else None
                if not running:
                    idle.append(host)
        return idle

    def share_static_power(self, now: float, runs: list[tuple[int, int]], energy: "EnergyMeter") -> None:
        """Re-split the static power of the jobs running on these hosts."""
        affected: dict[int, "JobRecord"] = {}
        for a, b in runs:
            for host in range(a, b + 1):
                for record in self.jobs[host]:
                    affected[id(record)] = record
        static = energy.static_watts
        for record in affected.values():
            share = 0.0
            for a, b in record.alloc:
                for host in range(a, b + 1):
                    share += static[host] / len(self.jobs[host])
            energy.set_static_power(now, record, share)
