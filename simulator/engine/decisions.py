"""Apply one decision of the decider to the simulation, or explain why it cannot be applied.

The shape of every decision was validated already (protocol.validation); what is checked
here needs the simulation's state: which jobs exist, which hosts are free, and so on. A
decision that cannot be applied ends the run with a DecisionError naming the decision,
the job or host, and the fix.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from joulesim.inputs.input_error import InputError
from joulesim.protocol.errors import DecisionError
from joulesim.protocol.interval_set import canonical_runs, expand_runs
from joulesim.simulator.workload.job_record import COMPLETED_STATES, NOT_SUBMITTED, RUNNING, SUBMITTED, JobRecord
from joulesim.simulator.workload.profiles import check_profile_references, validate_profile
from joulesim.simulator.workload.storage_labels import resolve_storages
from joulesim.simulator.workload.workload_loader import parse_job

if TYPE_CHECKING:
    from joulesim.simulator.engine.simulation import Simulation


# Batsim's waiter (jobs_execution.cpp waiter_process) sleeps at least this long when it sleeps
# at all: "found on trial-error". Used with Batsim's actors (the per-time calendar ignores it).
WAITER_MIN_SLEEP = 1e-5


class DecisionContext(tuple):
    """Where a decision came from, `DecisionContext((call time, index in the reply, decision))`,
    for error messages; formatted only when one is raised. A plain tuple underneath: made once
    per decision, at C speed."""

    __slots__ = ()

    def __str__(self) -> str:
        call_now, index, decision = self
        return (f"decider reply to the call at t={call_now:g}, events[{index}] "
                f"({decision['type']} at t={decision['timestamp']:g})")


class DecisionApplier:
    def __init__(self, sim: "Simulation"):
        self.sim = sim
        self._handlers = {
            "EXECUTE_JOB": self._execute_job,
            "REJECT_JOB": self._reject_job,
            "KILL_JOB": self._kill_job,
            "CALL_ME_LATER": self._call_me_later,
            "SET_RESOURCE_STATE": self._set_resource_state,
            "QUERY": self._query,
            "REGISTER_PROFILE": self._register_profile,
            "REGISTER_JOB": self._register_job,
            "NOTIFY": self._notify,
            "SET_JOB_METADATA": self._set_job_metadata,
            "CHANGE_JOB_STATE": self._change_job_state,
        }

    def apply(self, decision: dict[str, Any], context: DecisionContext) -> None:
        self._handlers[decision["type"]](decision["data"], context)

    # ------------------------------------------------------------------ jobs
    def _waiting_record(self, job_id: str, context: DecisionContext, what: str) -> JobRecord:
        record = self.sim.record_of(job_id, context)
        if record.state != SUBMITTED:
            raise DecisionError(f"{context}: cannot {what} job {job_id}: it is {record.describe_state()} "
                                "(only submitted, waiting jobs can be)")
        return record

    def _execute_job(self, data: dict[str, Any], context: DecisionContext) -> None:
        sim = self.sim
        job_id = data["job_id"]
        record = sim.records.get(job_id)
        if record is None or record.state != SUBMITTED:
            record = self._waiting_record(job_id, context, "execute")  # raises, explaining why
        job = record.job
        runs, alloc_str, size = canonical_runs(data["alloc"])  # the reply's validation bounded its length
        if not runs:
            raise DecisionError(f"{context}: job {job_id}: alloc is empty: give the {job.res} host(s) "
                                "the job runs on, e.g. \"0-3\"")
        if runs[-1][1] >= sim.nb_hosts:
            raise DecisionError(f"{context}: job {job_id}: alloc '{data['alloc']}' names hosts outside "
                                f"0-{sim.nb_hosts - 1} (the platform has {sim.nb_hosts} compute hosts)")
        storage_mapping = data.get("storage_mapping")
        if storage_mapping:
            self._check_storage_mapping(storage_mapping, job_id, context)
        storages, problem = resolve_storages(job.profile, record.profiles, storage_mapping, sim.storage_ids)
        if storages or problem:  # (most jobs name no storage: nothing to check, no call)
            self._check_storages(record, storages, problem, context)
        mapping = data.get("mapping")
        executors = None  # one host per executor, in alloc order, unless a mapping says otherwise
        if mapping is None:
            if size != job.res:
                raise DecisionError(f"{context}: job {job_id} requests {job.res} host(s) but alloc "
                                    f"'{data['alloc']}' has {size}: give exactly {job.res} hosts, "
                                    "or a mapping of its executors onto the alloc")
        else:
            executors = self._map_executors(mapping, expand_runs(runs), job.res, job_id, context)
        # Whole intervals are checked at C speed (a search of host_busy, slices of the others); the
        # slow loop only explains a refusal.
        busy, unavailable, off, switching = sim.host_busy, sim.host_unavailable, sim.switching.host_off, sim.switching
        exclusive = sim.host_running is None  # without compute sharing, one job per host
        for a, b in runs:
            if ((exclusive and busy.find(1, a, b + 1) >= 0) or (sim.nb_unavailable and any(unavailable[a:b + 1]))
                    or (switching.nb_off and any(off[a:b + 1]))):
                self._explain_unusable_hosts(expand_runs(runs), job_id, context)
        sim.start_job(record, runs, size, alloc_str, executors, storages)

    def _explain_unusable_hosts(self, alloc: list[int], job_id: str, context: DecisionContext) -> None:
        sim = self.sim
        for host in alloc:
            running = sim.host_job[host]
            if running is not None and sim.host_running is None:
                raise DecisionError(f"{context}: job {job_id}: host {host} is busy running job "
                                    f"{running.job.id} (started at t={running.start:g}): choose idle hosts "
                                    "(or run with --enable-compute-sharing)")
            if sim.host_unavailable[host]:
                raise DecisionError(f"{context}: job {job_id}: host {host} is unavailable (an external "
                                    "event took it away): choose available hosts")
            if sim.switching.host_off[host]:
                raise DecisionError(f"{context}: job {job_id}: host {host} is {sim.switching.describe(host)}: "
                                    "switch it on (SET_RESOURCE_STATE to a computation pstate) and wait "
                                    "for RESOURCE_STATE_CHANGED before executing jobs on it")

    def _check_storages(self, record: JobRecord, storages: dict[str, int], problem: Any, context: DecisionContext) -> None:
        """DecisionError when the storage hosts of the job's profile's labels (Batsim's rules,
        storage_labels.resolve_storages: `storages`, or the `problem` that keeps it from them)
        cannot serve it now."""
        sim = self.sim
        if problem:
            raise DecisionError(f"{context}: job {record.job.id}: {problem.problem}: {problem.fix}")
        if not sim.config.storage_sharing:
            for label, storage in storages.items():
                holder = sim.storage_job.get(storage)
                if holder is not None:
                    raise DecisionError(f"{context}: job {record.job.id}: storage {label!r} is resource {storage}, which "
                                        f"job {holder.job.id} is using, and --disable-storage-sharing lets a storage "
                                        "host serve one job at a time: start this job after that one completes")
        if storages and sim.config.platform.network is None:
            raise DecisionError(f"{context}: job {record.job.id}: its profile moves data to or from a storage host, "
                                f"which needs a network: {sim.config.platform.source} describes no links "
                                "(use a platform with links and routes)")

    def _check_storage_mapping(self, storage_mapping: dict[str, Any], job_id: str, context: DecisionContext) -> None:
        """Each storage label must name one of the platform's storage resources (ids after the
        compute hosts, as SIMULATION_BEGINS lists them)."""
        ids = self.sim.storage_ids
        for label, target in storage_mapping.items():
            if int(target) not in ids:  # an int or ASCII digits (schema)
                where = f"ids {ids[0]}-{ids[-1]}" if ids else "none: the platform has no storage host"
                raise DecisionError(f"{context}: job {job_id}: storage_mapping sends {label!r} to resource "
                                    f"{target!r}, which is not a storage resource of the platform (storage "
                                    f"resources: {where}): map it to a storage resource's id")

    @staticmethod
    def _map_executors(mapping: dict[str, Any], alloc: list[int], res: int, job_id: str, context: DecisionContext) -> list[int]:
        if len(mapping) != res:
            raise DecisionError(f"{context}: job {job_id} requests {res} executor(s) but the mapping has "
                                f"{len(mapping)}: map each executor 0..{res - 1} onto an index of the alloc")
        executors = []
        for executor in range(res):
            target = mapping.get(str(executor), mapping.get(executor))  # keys may be int or str
            if target is None:
                raise DecisionError(f"{context}: job {job_id}: mapping has no entry for executor {executor}")
            target = int(target)  # an int or ASCII digits (schema)
            if not 0 <= target < len(alloc):
                raise DecisionError(f"{context}: job {job_id}: mapping sends executor {executor} to alloc "
                                    f"index {target}, outside 0..{len(alloc) - 1}")
            executors.append(alloc[target])
        return executors

    def _reject_job(self, data: dict[str, Any], context: DecisionContext) -> None:
        record = self._waiting_record(data["job_id"], context, "reject")
        self.sim.reject_job(record)

    def _kill_job(self, data: dict[str, Any], context: DecisionContext) -> None:
        """Batsim 4.2.1's kills: each job named is running, or ended without its end told yet
        (nothing to kill then); a job named again while its kill is under way is left out. The
        jobs really killed get a JOB_COMPLETED (COMPLETED_KILLED, return code -1) each, then one
        JOB_KILLED names all, in one message, once the killer is done (with Batsim's actors, an
        actor of its own: batsim_actors.kill_jobs)."""
        sim = self.sim
        records = []
        for job_id in data["job_ids"]:
            record = sim.record_of(job_id, context)
            if record.state in (NOT_SUBMITTED, SUBMITTED):
                raise DecisionError(f"{context}: cannot kill job {job_id}: it is {record.describe_state()}, "
                                    "not running (use REJECT_JOB for a job that has not started)")
            if record.end_sent:
                raise DecisionError(f"{context}: cannot kill job {job_id}: it is {record.describe_state()}, "
                                    "and that end was already sent to the decider (Batsim 4.2.1 forgets a job "
                                    "then, and aborts on such a kill); kill only running jobs")
            if not record.kill_requested:
                record.kill_requested = True
                records.append(record)
        if not records:  # (Batsim starts no killer, and says nothing)
            return
        if sim.actors is not None:
            sim.actors.kill_jobs(records, sim.kill_job, self._kills_done)
            return
        progress = {r.job.id: sim.kill_job(r) for r in records if r.state == RUNNING}
        self._kills_done(records, progress)

    def _kills_done(self, records: list[Any], progress: dict[str, Any]) -> None:
        """server_on_killing_done: a JOB_COMPLETED for each job really killed, then JOB_KILLED."""
        sim = self.sim
        for record in records:
            if record.state == "COMPLETED_KILLED":
                sim.emit("JOB_COMPLETED", {"job_id": record.job.id, "job_state": "COMPLETED_KILLED",
                                           "return_code": -1, "alloc": record.alloc_str})
        sim.emit("JOB_KILLED", {"job_ids": [r.job.id for r in records], "job_progress": progress})

    def _set_job_metadata(self, data: dict[str, Any], context: DecisionContext) -> None:
        record = self.sim.record_of(data["job_id"], context)
        if record.finish >= 0:
            # Its row of the jobs output was written when it finished (joulesim streams that file).
            raise DecisionError(f"{context}: SET_JOB_METADATA on job {record.job.id}: it is "
                                f"{record.describe_state()} and its row of the jobs output is written; "
                                "set a job's metadata before it finishes")
        record.metadata = data["metadata"]

    def _change_job_state(self, data: dict[str, Any], context: DecisionContext) -> None:
        record = self.sim.record_of(data["job_id"], context)
        state = data["job_state"]
        if record.state != SUBMITTED:
            raise DecisionError(f"{context}: CHANGE_JOB_STATE on job {record.job.id}: it is "
                                f"{record.describe_state()}; only waiting jobs can change state this way "
                                "(use KILL_JOB for running ones)")
        if state not in COMPLETED_STATES and state != "REJECTED":
            raise DecisionError(f"{context}: CHANGE_JOB_STATE to {state!r}: a waiting job can only be "
                                f"moved to a final state: {', '.join(COMPLETED_STATES)} or REJECTED")
        self.sim.reject_job(record, state)

    # ------------------------------------------------------------------ time and machines
    def _call_me_later(self, data: dict[str, Any], context: DecisionContext) -> None:
        sim = self.sim
        sim.pending_calls += 1
        # Later than the decision's own timestamp (validated), but that may have been before
        # the clock (a late decision applies at the clock): then the call comes at once.
        sim.at(max(float(data["timestamp"]), sim.env._now), self._requested_call, floor=WAITER_MIN_SLEEP)

    def _requested_call(self, _: Any) -> None:
        self.sim.pending_calls -= 1
        self.sim.emit("REQUESTED_CALL", {})

    def _set_resource_state(self, data: dict[str, Any], context: DecisionContext) -> None:
        if self.sim.hierarchy is not None:
            raise DecisionError(f"{context}: the platform is an IRMaSim node model, whose cores have no power "
                                "states (processors draw min power when idle): do not send SET_RESOURCE_STATE")
        if not self.sim.config.energy:  # Batsim 4.2.1 aborts (server_on_pstate_modification's assert)
            raise DecisionError(f"{context}: SET_RESOURCE_STATE needs energy accounting, as in Batsim (which "
                                "aborts: 'Batsim has not been launched with energy support'): run with -E "
                                "(--energy), or drop the decider's power-state options (e.g. t_idle)")
        self.sim.switching.request(data, context)

    def _query(self, data: dict[str, Any], context: DecisionContext) -> None:
        sim = self.sim
        if sim.energy is None:
            raise DecisionError(f"{context}: QUERY consumed_energy needs energy accounting: run the "
                                "simulator with -E/--energy")
        if sim.actors is not None:  # server_on_sched_tell_me_energy reads every machine's joules
            sim.actors.read_energy()
        sim.emit("ANSWER", {"consumed_energy": sim.energy.energy_at(sim.env.now)})

    # ------------------------------------------------------------------ dynamic jobs
    def _require_registration(self, context: DecisionContext) -> None:
        if not self.sim.config.dynamic_jobs:
            raise DecisionError(f"{context}: dynamic job registration is disabled: run the simulator with "
                                "--enable-dynamic-jobs")
        if not self.sim.registration_open:
            raise DecisionError(f"{context}: registration was finished (NOTIFY registration_finished); "
                                "send NOTIFY continue_registration first")

    def _register_profile(self, data: dict[str, Any], context: DecisionContext) -> None:
        self._require_registration(context)
        sim = self.sim
        workload, name = data["workload_name"], data["profile_name"]
        profiles = sim.profiles.setdefault(workload, {})
        collected = sim.collected_profiles.get(workload, ())
        if name in collected:  # Batsim removed it: the name is free again
            collected.discard(name)
        elif name in profiles:
            raise DecisionError(f"{context}: profile {name!r} already exists in workload {workload!r}: "
                                "give the new profile another name")
        try:
            validate_profile(name, data["profile"], f"profile {name!r}", context)
            # Only what the new profile reaches: the others were checked when they came, and
            # none of them can name the newcomer (checking all would cost O(P^2) per session).
            check_profile_references(_reachable(profiles, name, data["profile"]), context)
        except InputError as exc:
            raise DecisionError(f"REGISTER_PROFILE rejected: {exc}") from None
        profiles[name] = data["profile"]

    def _register_job(self, data: dict[str, Any], context: DecisionContext) -> None:
        self._require_registration(context)
        sim = self.sim
        job_id = data["job_id"]
        workload, _, local_id = job_id.partition("!")
        if job_id in sim.records:
            raise DecisionError(f"{context}: job {job_id} already exists: give the new job another id")
        profiles = sim.profiles.get(workload)
        raw = dict(data["job"])
        # A profile named "workload!name" that the job's workload lacks is that workload's
        # profile (Batsim 5's rule: profiles are global; batprotocol EDCs use it).
        owner = workload
        reference = raw.get("profile")
        if isinstance(reference, str) and "!" in reference and reference not in (profiles or {}):
            owner, _, name = reference.partition("!")
            if owner in sim.profiles:
                profiles, raw["profile"] = sim.profiles[owner], name
        if profiles is None:
            raise DecisionError(f"{context}: job {job_id}: workload {workload!r} has no profiles; "
                                "REGISTER_PROFILE one first")
        if raw.get("profile") in sim.collected_profiles.get(owner, ()):
            raise DecisionError(f"{context}: job {job_id}: profile {raw['profile']!r} of workload {owner!r} was removed "
                                "when a job of it ended (Batsim removes a job's profile once its end is reported): "
                                "run with --enable-profile-reuse, or REGISTER_PROFILE it again first")
        raw["id"] = local_id
        raw.setdefault("subtime", sim.env.now)
        try:
            # (the context as text: parse_job is compiled, and a compiled function checks that its
            # arguments are of their declared types)
            job = parse_job(raw, 0, workload, profiles, str(context))
        except InputError as exc:
            raise DecisionError(f"REGISTER_JOB rejected: {exc}") from None
        job.subtime = sim.env.now  # a registered job is submitted when registered
        job.json["subtime"] = sim.env.now
        record = JobRecord(job, profiles)
        sim.records[job_id] = record
        sim.submit(record, announce=sim.config.acknowledge_dynamic_jobs)

    def _notify(self, data: dict[str, Any], context: DecisionContext) -> None:
        kind = data["type"]
        if kind == "registration_finished":
            self._require_registration(context)
            self.sim.registration_open = False
        elif kind == "continue_registration":
            if not self.sim.config.dynamic_jobs:
                raise DecisionError(f"{context}: continue_registration needs --enable-dynamic-jobs")
            self.sim.registration_open = True
        elif kind == "force_simulation_stop":
            self.sim.force_stop(context)



def _reachable(profiles: dict[str, dict], name: str, profile: dict) -> dict[str, dict]:
    """`profile` (named `name`) and every existing profile its composed sequences reach."""
    found = {name: profile}
    stack = [profile]
    while stack:
        current = stack.pop()
        if current.get("type") != "composed":
            continue
        for item in current.get("seq", ()):
            if item not in found and item in profiles:
                found[item] = profiles[item]
                stack.append(profiles[item])
    return found
