"""The few Slurm commands the adapter needs, each with a timeout and a clear error.

Every command gets `SLURM_CONF` in its environment. Jobs are submitted held, pinned to the
nodes a decider chose (`nodelist` alone means "at least these": the others are excluded),
then released; their states are polled with `squeue --json`.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass

from joulesim.protocol.errors import JoulesimError

COMMAND_TIMEOUT_S = 30.0
#: Slurm job states after which a job is over, and the Batsim state a decider is told.
FINAL_STATES = {"COMPLETED": "COMPLETED_SUCCESSFULLY", "FAILED": "COMPLETED_FAILED",
                "TIMEOUT": "COMPLETED_WALLTIME_REACHED", "CANCELLED": "COMPLETED_KILLED",
                "NODE_FAIL": "COMPLETED_FAILED", "OUT_OF_MEMORY": "COMPLETED_FAILED",
                "PREEMPTED": "COMPLETED_KILLED", "BOOT_FAIL": "COMPLETED_FAILED", "DEADLINE": "COMPLETED_KILLED"}


class SlurmError(JoulesimError):
    exit_code = 8


@dataclass
class SlurmJob:
    state: str
    nodelist: str  # Slurm's compressed form ("n[2,4]"); see SlurmCommands.expand
    exit_code: int


class SlurmCommands:
    def __init__(self, conf: str | None):
        self.env = dict(os.environ)
        if conf is not None:
            if not os.path.isfile(conf):
                raise SlurmError(f"--slurm-conf {conf}: no such file (give the slurm.conf of the cluster to drive)")
            self.env["SLURM_CONF"] = conf

    def output(self, *command: str) -> str:
        """What a Slurm command prints; SlurmError naming the command when it cannot run, does not
        answer in time or fails (slurm_state.py reads sinfo and squeue this way too)."""
        try:
            out = subprocess.run(list(command), env=self.env, capture_output=True, text=True,
                                 timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except FileNotFoundError:
            raise SlurmError(f"{command[0]} not found: install Slurm's client commands (Debian: slurm-client)") from None
        except subprocess.TimeoutExpired:
            raise SlurmError(f"{' '.join(command)} did not answer within {COMMAND_TIMEOUT_S:g} s: is slurmctld "
                             "running and reachable (SLURM_CONF)?") from None
        if out.returncode != 0:
            said = " / ".join(line.strip() for line in out.stderr.splitlines() if line.strip())  # one line
            raise SlurmError(f"{' '.join(command)} failed (status {out.returncode}): {said[:300]}")
        return out.stdout

    def node_names(self) -> list[str]:
        """The cluster's nodes, in the order Slurm lists them (decider resource i is node i)."""
        names = self.output("sinfo", "-h", "-N", "-o", "%N").split()
        return list(dict.fromkeys(names))  # a node in several partitions is listed once per partition

    def submit_held(self, name: str, nodes: int, walltime_s: float, command: str) -> str:
        minutes = max(1, int(-(-walltime_s // 60))) if walltime_s > 0 else "UNLIMITED"
        out = self.output("sbatch", "--parsable", "--hold", "-J", name, "-N", str(nodes), "-n", str(nodes),
                        "-t", str(minutes), "-o", "/dev/null", "--wrap", command)
        return out.strip().split(";")[0]

    def pin_and_release(self, job_id: str, nodes: list[str], all_nodes: list[str]) -> None:
        others = [n for n in all_nodes if n not in set(nodes)]
        update = ["scontrol", "update", f"jobid={job_id}", f"nodelist={','.join(nodes)}"]
        if others:
            update.append(f"excnodelist={','.join(others)}")
        self.output(*update)
        self.output("scontrol", "release", job_id)

    def cancel(self, job_ids: list[str]) -> None:
        if job_ids:
            self.output("scancel", *job_ids)

    def jobs(self) -> dict[str, SlurmJob]:
        """Every job squeue still knows, by Slurm id."""
        data = json.loads(self.output("squeue", "--json", "-t", "all"))
        jobs = {}
        for job in data.get("jobs", []):
            state = job.get("job_state")
            if isinstance(state, list):  # newer Slurm: a list of flags
                state = state[0] if state else ""
            nodes = job.get("nodes") or ""
            exit_code = job.get("exit_code")
            if isinstance(exit_code, dict):  # newer Slurm: {"return_code": ...}
                exit_code = exit_code.get("return_code", {}).get("number", 0) \
                    if isinstance(exit_code.get("return_code"), dict) else exit_code.get("return_code", 0)
            jobs[str(job["job_id"])] = SlurmJob(str(state), str(nodes), int(exit_code or 0))
        return jobs

    def expand(self, nodelist: str) -> list[str]:
        return self.output("scontrol", "show", "hostnames", nodelist).split()
