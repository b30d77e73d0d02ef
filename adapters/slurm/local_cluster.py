"""A real Slurm on this machine: munge, one slurmctld and one slurmd per fake node.

For trying the adapter and for its tests (Debian's slurm-wlm and munge, as root): each fake
node is one CPU on localhost with its own name and port, so that one decider resource is one
Slurm node. See ../shared/reference/slurm-localhost.md for what was verified.

    with LocalSlurm("/tmp/slurm", nodes=4) as cluster:
        print(cluster.conf)          # SLURM_CONF for sbatch, squeue, ... and the adapter
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from joulesim.protocol.errors import JoulesimError

CONF = """ClusterName=local
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/run/slurmctld.pid
SlurmdPidFile={dir}/run/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=300
NodeName=n[1-{nodes}] NodeHostname=localhost NodeAddr=127.0.0.1 Port={first_port}-{last_port} CPUs=1 State=UNKNOWN
PartitionName=main Nodes=n[1-{nodes}] Default=YES MaxTime=INFINITE State=UP
"""


def slurm_available() -> str | None:
    """None when a local Slurm can be started here, else why not."""
    missing = [cmd for cmd in ("slurmctld", "slurmd", "sbatch", "munged") if shutil.which(cmd) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian: apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "munge and slurmd need root"
    return None


class LocalSlurm:
    def __init__(self, directory: str | os.PathLike, nodes: int = 4, ctld_port: int = 16817,
                 first_node_port: int = 17001):
        self.dir = Path(directory)
        self.nodes = nodes
        self.node_names = [f"n{i}" for i in range(1, nodes + 1)]
        self.conf = str(self.dir / "slurm.conf")
        self.env = {**os.environ, "SLURM_CONF": self.conf}
        self._ports = (ctld_port, ctld_port + 1, first_node_port)
        self._processes: list[subprocess.Popen] = []

    def __enter__(self) -> "LocalSlurm":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _start(self) -> None:
        for sub in ("state", "spool", "run", "log"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        ctld, slurmd, first = self._ports
        Path(self.conf).write_text(CONF.format(dir=self.dir, nodes=self.nodes, ctld_port=ctld, slurmd_port=slurmd,
                                               first_port=first, last_port=first + self.nodes - 1))
        _start_munge()
        self._spawn(["slurmctld", "-D", "-i", "-f", self.conf])
        for name in self.node_names:
            self._spawn(["slurmd", "-D", "-N", name, "-f", self.conf])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the nodes register within about a second
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.env, capture_output=True, text=True)
            states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
            if len(states) == self.nodes and all(s == "idle" for s in states.values()):
                return
            for process in self._processes:
                if process.poll() is not None:
                    raise JoulesimError(f"local Slurm: {' '.join(process.args)} exited with status "
                                        f"{process.returncode}; see {self.dir / 'log'}")
            time.sleep(0.2)  # polling the daemons' registration, bounded by the deadline
        raise JoulesimError(f"local Slurm: the nodes did not become idle within 60 s; see {self.dir / 'log'}")

    def _spawn(self, command: list[str]) -> None:
        self._processes.append(subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop(self) -> None:
        subprocess.run(["scancel", "--user=root"], env=self.env, capture_output=True)
        for process in reversed(self._processes):
            if process.poll() is None:
                process.terminate()
        for process in self._processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes = []


def _start_munge() -> None:
    """munged with a key of its own, unless one already answers."""
    if subprocess.run(["sh", "-c", "munge -n | unmunge"], capture_output=True).returncode == 0:
        return
    key = Path("/etc/munge/munge.key")
    if not key.exists():
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_bytes(os.urandom(1024))
    for path in (Path("/etc/munge"), Path("/var/run/munge"), Path("/run/munge"), Path("/var/log/munge"),
                 Path("/var/lib/munge")):
        path.mkdir(parents=True, exist_ok=True)
        shutil.chown(path, "munge", "munge")
    shutil.chown(key, "munge", "munge")
    key.chmod(0o400)
    Path("/etc/munge").chmod(0o700)
    subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True, capture_output=True)
    deadline = time.monotonic() + 10
    while subprocess.run(["sh", "-c", "munge -n | unmunge"], capture_output=True).returncode != 0:
        if time.monotonic() > deadline:
            raise JoulesimError("local Slurm: munged did not answer within 10 s")
        time.sleep(0.1)
