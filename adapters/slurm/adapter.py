"""A real Slurm cluster behind the protocol: any decider schedules it, unchanged.

The adapter takes the simulator's place. Its clock is wall time (seconds since it started).
It submits the workload's jobs to Slurm, held, at their submission times, and tells the
decider (JOB_SUBMITTED); an EXECUTE_JOB pins the job to the chosen nodes (decider resource i
is Slurm node i, in `sinfo` order) and releases it; REJECT_JOB and KILL_JOB cancel it;
completions, polled from `squeue`, come back as JOB_COMPLETED. Jobs run `sleep DELAY` for
`delay` profiles, so that the same workload can be simulated and run. On any error every job
the adapter submitted and that is not over is cancelled: no held job is left behind.
With progress on, jobs ended so far show on stderr: a bar on a terminal, in a log a line every
5 s once the run has lasted 5 s (joulesim.console.progress_bar), also while no job ends.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from joulesim.adapters.slurm.slurm_commands import FINAL_STATES, SlurmCommands, SlurmError
from joulesim.console.progress_bar import progress_bar
from joulesim.protocol.interval_set import expand_runs, format_interval_set, parse_runs
from joulesim.protocol.simulation_begins import batsim_config
from joulesim.simulator.engine.decider_link import DeciderLink
from joulesim.simulator.workload.workload_model import Workload

POLL_S = 0.2  # squeue polling period while waiting for completions


@dataclass
class RealJob:
    """What happened to one job on the cluster (wall-clock seconds from the adapter's start)."""

    id: str
    slurm_id: str
    submitted: float
    released: float | None = None  # when the decider's EXECUTE_JOB released it
    started: float | None = None  # first seen running in squeue
    finished: float | None = None
    nodes: list[str] = field(default_factory=list)  # as Slurm ran it
    alloc: str = ""  # as the decider chose it
    state: str = "SUBMITTED"


class SlurmAdapter:
    def __init__(self, workload: Workload, link: DeciderLink, slurm: SlurmCommands, progress: bool = False):
        for job in workload.jobs:
            profile = workload.profiles[job.profile]
            if profile["type"] != "delay":
                raise SlurmError(f"{workload.path}: job {job.local_id}: profile {job.profile!r} is of type "
                                 f"{profile['type']}; the Slurm adapter runs delay profiles (as `sleep DELAY`)")
        self.workload = workload
        self._specs = {job.id: job for job in workload.jobs}
        self.link = link
        self.slurm = slurm
        self.jobs: dict[str, RealJob] = {}
        self._by_slurm: dict[str, RealJob] = {}
        self._events: list[dict[str, Any]] = []
        self._calls: list[float] = []  # pending CALL_ME_LATER times
        self._t0 = 0.0
        self._progress = progress

    def now(self) -> float:
        return time.monotonic() - self._t0

    def _emit(self, kind: str, data: dict[str, Any]) -> None:
        self._events.append({"timestamp": self.now(), "type": kind, "data": data})

    def run(self) -> dict[str, RealJob]:
        self._bar = progress_bar(len(self.workload.jobs), "slurm", "job") if self._progress else None
        self._postfix = ""
        try:
            self._run()
        except BaseException:
            self._cancel_unfinished()
            raise
        finally:
            if self._bar is not None:
                self._bar.close()
        return self.jobs

    def _show_progress(self) -> None:
        """Called at every turn of the loop: tqdm prints at its own pace, and an update of 0
        still prints a line when the last one is older than the interval (jobs lasting long)."""
        if self._bar is not None:
            ended = running = 0
            for job in self.jobs.values():
                if job.finished is not None:
                    ended += 1
                elif job.started is not None:
                    running += 1
            # (jobs last minutes: the bar says what runs meanwhile, not only what ended)
            waiting = len(self.jobs) - ended - running
            postfix = f"{running} running, {waiting} submitted and waiting"
            if postfix != self._postfix:
                self._postfix = postfix
                self._bar.set_postfix_str(postfix, refresh=False)
            self._bar.update(ended - self._bar.n)

    def _run(self) -> None:
        self.nodes = self.slurm.node_names()
        too_big = [j for j in self.workload.jobs if j.res > len(self.nodes)]
        if too_big:  # Slurm would keep it pending forever
            raise SlurmError(f"job {too_big[0].local_id} needs {too_big[0].res} nodes; the cluster has "
                             f"{len(self.nodes)} ({', '.join(self.nodes)})")
        self.link.nb_resources = len(self.nodes)
        self._t0 = time.monotonic()
        self._call([{"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": self._begins()}])
        queue = deque(self.workload.jobs)  # by submission time
        while True:
            while queue and queue[0].subtime <= self.now():
                self._submit(queue.popleft())
                if not queue:
                    self._emit("NOTIFY", {"type": "no_more_static_job_to_submit"})
            self._poll()
            self._show_progress()
            while self._calls and self._calls[0] <= self.now():
                self._calls.pop(0)
                self._emit("REQUESTED_CALL", {})
            if self._events:
                self._call(self._events)
                continue
            if not queue and all(j.finished is not None for j in self.jobs.values()) and not self._calls:
                break
            if not queue and not self._calls and not any(j.released is not None for j in self.jobs.values()
                                                         if j.finished is None):
                waiting = [j.id for j in self.jobs.values() if j.finished is None]
                raise SlurmError(f"the decider left {len(waiting)} job(s) waiting ({', '.join(waiting[:5])}) and "
                                 "nothing else can happen: it must EXECUTE_JOB or REJECT_JOB each of them")
            time.sleep(POLL_S)  # the cluster's clock is real: wait for the next submission or completion
        self._call([{"timestamp": self.now(), "type": "SIMULATION_ENDS", "data": {}}], final=True)

    def _begins(self) -> dict[str, Any]:
        resources = [{"id": i, "name": name, "state": "idle", "properties": {}, "zone_properties": {}}
                     for i, name in enumerate(self.nodes)]
        return {"nb_resources": len(self.nodes), "nb_compute_resources": len(self.nodes), "nb_storage_resources": 0,
                "allow_compute_sharing": False, "allow_storage_sharing": True,
                "config": batsim_config(),
                "compute_resources": resources, "storage_resources": [],
                "workloads": {self.workload.name: self.workload.path},
                "profiles": {self.workload.name: self.workload.profiles}}

    def _submit(self, job) -> None:
        delay = float(self.workload.profiles[job.profile]["delay"])
        slurm_id = self.slurm.submit_held(job.id, job.res, job.walltime, f"sleep {delay:.3f}")
        real = RealJob(job.id, slurm_id, self.now())
        self.jobs[job.id] = self._by_slurm[slurm_id] = real
        self._emit("JOB_SUBMITTED", {"job_id": job.id, "job": dict(job.json, subtime=real.submitted)})

    def _call(self, events: list[dict[str, Any]], final: bool = False) -> None:
        self._events = []
        reply = self.link.call({"now": self.now(), "events": events})
        if final:
            return
        for decision in reply["events"]:
            self._apply(decision)

    def _apply(self, decision: dict[str, Any]) -> None:
        kind, data = decision["type"], decision["data"]
        if kind == "EXECUTE_JOB":
            job = self._job(data["job_id"], kind)
            ids = expand_runs(parse_runs(data["alloc"]))
            if ids and ids[-1] >= len(self.nodes):
                raise SlurmError(f"EXECUTE_JOB {job.id}: alloc {data['alloc']!r} names resource {ids[-1]}, but the "
                                 f"cluster has {len(self.nodes)} nodes (resources 0-{len(self.nodes) - 1})")
            if len(ids) != self.workload_job(job.id).res:
                raise SlurmError(f"EXECUTE_JOB {job.id}: alloc {data['alloc']!r} has {len(ids)} nodes, the job asks "
                                 f"for {self.workload_job(job.id).res}")
            job.alloc = format_interval_set(ids)
            self.slurm.pin_and_release(job.slurm_id, [self.nodes[i] for i in ids], self.nodes)
            job.state = "RELEASED"
            job.released = self.now()
        elif kind == "REJECT_JOB":
            job = self._job(data["job_id"], kind)
            self.slurm.cancel([job.slurm_id])
            job.state, job.finished = "REJECTED", self.now()
        elif kind == "KILL_JOB":  # as Batsim 4.2.1 answers it: a JOB_COMPLETED (COMPLETED_KILLED)
            progress = {}         # per job really killed, then JOB_KILLED, with their progress
            for job_id in data["job_ids"]:
                job = self._job(job_id, kind)
                if job.finished is not None:
                    continue  # it ended first: its JOB_COMPLETED was sent
                self.slurm.cancel([job.slurm_id])
                job.state, job.finished = "COMPLETED_KILLED", self.now()
                self._emit("JOB_COMPLETED", {"job_id": job_id, "job_state": "COMPLETED_KILLED",
                                             "return_code": -1, "alloc": job.alloc})
                if job.released is not None:
                    spec = self.workload_job(job_id)
                    delay = float(self.workload.profiles[spec.profile]["delay"])
                    ran = job.finished - (job.started if job.started is not None else job.released)
                    progress[job_id] = {"profile_name": spec.profile, "progress": min(1.0, ran / delay) if delay else 1.0}
            self._emit("JOB_KILLED", {"job_ids": list(data["job_ids"]), "job_progress": progress})
        elif kind == "CALL_ME_LATER":
            self._calls = sorted(self._calls + [float(data["timestamp"])])
        else:
            print(f"joulesim slurm: warning: {kind} is not supported on a real cluster; ignored", file=sys.stderr)

    def workload_job(self, job_id: str):
        return self._specs[job_id]

    def _job(self, job_id: str, kind: str) -> RealJob:
        job = self.jobs.get(job_id)
        if job is None:
            raise SlurmError(f"{kind}: unknown job {job_id!r} (not submitted yet, or not of this workload)")
        return job

    def _poll(self) -> None:
        live = [j for j in self.jobs.values() if j.released is not None and j.finished is None]
        if not live:
            return
        states = self.slurm.jobs()
        for job in live:
            slurm_job = states.get(job.slurm_id)
            if slurm_job is None:
                continue
            if job.started is None and slurm_job.state in ("RUNNING", *FINAL_STATES):
                job.started = self.now()
            if slurm_job.state not in FINAL_STATES:
                continue
            job.finished = self.now()
            job.nodes = self.slurm.expand(slurm_job.nodelist) if slurm_job.nodelist else []
            job.state = FINAL_STATES[slurm_job.state]
            self._emit("JOB_COMPLETED", {"job_id": job.id, "job_state": job.state,
                                         "return_code": slurm_job.exit_code, "alloc": job.alloc})

    def _cancel_unfinished(self) -> None:
        left = [j.slurm_id for j in self.jobs.values() if j.finished is None]
        try:
            self.slurm.cancel(left)
        except SlurmError as exc:
            print(f"joulesim slurm: could not cancel jobs {', '.join(left)}: {exc}", file=sys.stderr)
