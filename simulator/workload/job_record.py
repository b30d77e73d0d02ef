"""The life of one job inside the simulator."""

from __future__ import annotations

from joulesim.simulator.workload.workload_model import Job

# Life cycle: NOT_SUBMITTED -> SUBMITTED -> RUNNING -> one of FINAL_STATES,
# or SUBMITTED -> REJECTED.
NOT_SUBMITTED = "NOT_SUBMITTED"
SUBMITTED = "SUBMITTED"
RUNNING = "RUNNING"
REJECTED = "REJECTED"
COMPLETED_STATES = (
    "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED",
)


class JobRecord:
    __slots__ = ("job", "state", "start", "finish", "alloc", "alloc_str", "speeds", "metadata",
                 "end_state", "return_code", "profiles", "power", "dynamic_power", "energy", "energy_t",
                 "cost", "cost_parts",  # these two: energy cost only (simulator/energy/energy_cost.py)
                 "kill_requested", "end_sent", "exact_energy")

    def __init__(self, job: Job, profiles: dict):
        self.job = job
        self.profiles = profiles  # the profiles of the job's workload
        self.state = NOT_SUBMITTED
        self.start = -1.0
        self.finish = -1.0
        self.alloc: list[tuple[int, int]] = []  # canonical intervals of hosts
        self.alloc_str = ""
        self.speeds: list[float] = []  # speed of each executor's host at start
        self.metadata = ""
        self.end_state = ""  # the state the job will reach at its scheduled end
        self.return_code = 0  # what JOB_COMPLETED will say (-1 when killed at its walltime)
        self.kill_requested = False  # a KILL_JOB named it (Batsim ignores a second one)
        # Its end (completion, kill, rejection) went out in a message to the decider: Batsim has
        # deleted the job then, and aborts on a KILL_JOB naming it.
        self.end_sent = False
        # Energy accounting (only with -E): watts of the job's hosts now, of which dynamic,
        # and joules settled up to energy_t.
        self.power = 0.0
        self.dynamic_power = 0.0
        self.energy = 0.0
        self.energy_t = 0.0
        # With SimGrid's joules (energy_meter.follow_simgrid): its machines' joules at its start,
        # then its energy, in long double (simulator/energy/long_double.py).
        self.exact_energy: int | None = None

    def describe_state(self) -> str:
        if self.state == NOT_SUBMITTED:
            return f"not submitted yet (it is submitted at t={self.job.subtime:g})"
        if self.state == SUBMITTED:
            return "waiting"
        if self.state == RUNNING:
            return f"already running since t={self.start:g} on hosts {self.alloc_str}"
        if self.state == REJECTED:
            return "rejected"
        return f"already finished ({self.state} at t={self.finish:g})"
