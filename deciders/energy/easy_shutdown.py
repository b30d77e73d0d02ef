"""EASY backfilling with opportunistic shutdown (seed 001 §7.3.2, §7.4.1, §7.4.4): EASY's pass
(batch/easy.py) over the machines of `ShutdownMixin` (shutdown_machinery.py).

`EasyWithShutdown` (served for `easy --option t_idle=SECONDS`): a machine that stays idle
for `t_idle` seconds is switched off (t_idle=0: at once; 'inf' or absent: never). EASY uses
the switched-off machines "quite directly": its reservation and backfilling count sleeping
and switching machines as usable, idle ones being chosen first, then machines switching on,
sleeping, switching off. A job chosen on machines that are not all on holds them
("awaited" start) while they are switched on (a machine still switching off is switched on
once its switch-off is announced complete), and is executed when every one of them is on.
No machine is switched in the SIMULATION_BEGINS message (it comes alone, the jobs of t=0
in the next one: with t_idle=0 the machines those jobs need would be switched off), so
t_idle=0 acts from the next message on. While nothing is left to do (no job to come, none
waiting or running) no machine is switched any more, so that the simulation ends with the
last job (a CALL_ME_LATER already asked for cannot be withdrawn, though).

Planning ignores switch durations, which the protocol does not give: an awaited job is
taken to end at (time chosen + walltime) in the reservation, an off machine to be usable at
once. This is the thesis's direct use of the off machines.
"""

from __future__ import annotations

from joulesim.deciders.batch.easy import EasyBackfilling
from joulesim.deciders.energy.shutdown_machinery import ShutdownMixin

__all__ = ["EasyWithShutdown"]


class EasyWithShutdown(ShutdownMixin, EasyBackfilling):
    """EASY backfilling with opportunistic shutdown (seed 001 §7.3.2): option t_idle."""

    OPTIONS = dict(ShutdownMixin.SHUTDOWN_OPTIONS)

    def schedule(self) -> None:
        """EASY (§7.4.1) over the usable machines, off ones included (§7.3.2)."""
        self.pooled_pass(self.usable_mask(), self.jobs_without_machines, self.launch_on, self.reserve_with_power,
                         room_for=self.release_for_priority)
