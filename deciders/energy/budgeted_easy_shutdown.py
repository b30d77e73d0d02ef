"""energyBud, reducePC and the power-capped EASY with opportunistic shutdown (seed 001 §6.5.2).

Served when a shutdown option (`t_idle`, `compute_pstate`, `sleep_pstate`) is given to
`energybud`, `reducepc` or `powercap` (deciders/__init__.py, OPTION_VARIANTS). §6.4.3, "Interactions
with opportunistic shutdown": "The proposed algorithm can be used without any modification
to work with opportunistic shutdown, as off nodes consume less power than idle ones", so
only the machines change: they are those of `ShutdownMixin` (deciders/energy/shutdown_machinery.py).
A machine idle for `t_idle` seconds is switched off (the evaluation uses t_idle=0, "as soon
as they become idle"); off machines are usable, idle ones chosen first; a job placed on off
machines holds them while they switch on and starts once all are on.

In the estimates, a machine held by such a job counts as computing from the moment it is
chosen (switching on draws less than computing: an overestimate, as §6.4.3 wants), and
sleeping or switching machines count as idle. Monitoring stages then measure the lower
consumption and make the saved energy available (energyBud, reducePC); the power cap
cannot use it (§6.5.4).
"""

from __future__ import annotations

import heapq
import math
from operator import itemgetter
from typing import Iterator

from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown
from joulesim.deciders.energy.energy_budget import EnergyBudget, ReducePC
from joulesim.deciders.energy.power_capped_easy import PowerCappedEasy
from joulesim.protocol.decider import SubmittedJob

__all__ = ["EnergyBudgetWithShutdown", "PowerCappedEasyWithShutdown", "ReducePCWithShutdown",
           "ShutdownMachineHooks"]


class ShutdownMachineHooks:
    """`BudgetedEasy`'s machine hooks over `ShutdownMixin`'s machines; mix in first."""

    def pool_mask(self) -> int:
        return self.usable_mask()

    def waiting_jobs(self) -> Iterator[SubmittedJob]:
        return self.jobs_without_machines()

    def place(self, job: SubmittedJob, pool: int) -> int:
        mask = self.launch_on(job, pool)
        self._plan = None  # a job awaiting its machines counts as computing
        return mask

    def releases(self) -> Iterator[tuple[float, int]]:
        # As ShutdownMixin.shadow_with_power: awaited jobs end at chosen time + walltime, and
        # machines reserved off or unavailable are not given back.
        keep = ~self.unavailable_mask & ~self.off_reserved
        running = ((end, record.mask & keep) for end, _, record in self._by_end)
        awaited = sorted((start.estimated_end, start.mask & keep) for start in self.awaited.values()
                         if start.estimated_end != math.inf)
        return heapq.merge(running, awaited, key=itemgetter(0))

    def computations(self) -> Iterator[tuple[float, int]]:
        yield from super().computations()
        for start in self.awaited.values():
            yield start.estimated_end, start.size

    def computing_machines(self) -> int:
        return (self.busy_mask | self.awaited_mask).bit_count()

    def wake_up_at(self, t: float) -> None:
        self.request_call(t)


class EnergyBudgetWithShutdown(ShutdownMachineHooks, EnergyBudget, EasyWithShutdown):
    """energyBud with opportunistic shutdown (seed 001 §6.4.3, §6.5.2)."""


class ReducePCWithShutdown(ShutdownMachineHooks, ReducePC, EasyWithShutdown):
    """reducePC with opportunistic shutdown (seed 001 §6.4.4, §6.5.2)."""


class PowerCappedEasyWithShutdown(ShutdownMachineHooks, PowerCappedEasy, EasyWithShutdown):
    """Power-capped EASY with opportunistic shutdown ("PC_SHUT", seed 001 §6.5.2, §6.5.4)."""
