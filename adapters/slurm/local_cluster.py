"""A real Slurm on this machine: munge, one slurmctld and one slurmd per fake node.

For trying the adapter and for its tests (Debian's slurm-wlm and munge, as root): each fake
node is one CPU on localhost with its own name and port, so that one decider resource is one
Slurm node. See ../shared/reference/slurm-localhost.md for what was verified.

    with LocalSlurm("/tmp/slurm", nodes=4) as cluster:
        print(cluster.conf)          # SLURM_CONF for sbatch, squeue, ... and the adapter

What it starts it stops, by process id, on a normal end, an error or Ctrl-C: its own munged
(its own key and socket, so that it neither depends on nor disturbs a munged of the machine),
slurmctld and the slurmd, after cancelling the jobs left on the cluster and waiting for them
to end (a slurmd stopping leaves its jobs running, by Slurm's design). The daemons run in
their own session: a Ctrl-C on the terminal reaches joulesim, which stops them in order.
Ports are free ones unless given, so that two local Slurms (two test runs) can coexist.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from joulesim.protocol.errors import JoulesimError

CONF = """ClusterName=local
SlurmctldHost=localhost
SlurmctldPort={ctld_port}
SlurmdPort={node_ports[0]}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool/%n
SlurmctldPidFile={dir}/run/slurmctld.pid
SlurmdPidFile={dir}/run/slurmd-%n.pid
SlurmctldLogFile={dir}/log/slurmctld.log
SlurmdLogFile={dir}/log/slurmd-%n.log
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/pgid
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
{node_lines}PartitionName=main Nodes=n[1-{nodes}] Default=YES MaxTime=INFINITE State=UP
"""


def slurm_available() -> str | None:
    """None when a local Slurm can be started here, else why not."""
    missing = [cmd for cmd in ("slurmctld", "slurmd", "sbatch", "munged", "munge") if shutil.which(cmd) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian: apt-get install slurm-wlm munge)"
    if os.geteuid() != 0:
        return "munge and slurmd need root"
    return None


#: Seconds each daemon has to stop on SIGTERM before it is killed; and the jobs to end once cancelled.
STOP_TIMEOUT_S = 10.0
#: Job states of a job that still holds a node (its slurmstepd and processes are alive).
LIVE_STATES = "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING"


def free_ports(count: int) -> list[int]:
    """Ports on loopback that nothing listens on now (held open together, so all distinct)."""
    sockets = []
    try:
        for _ in range(count):
            held = socket.socket()
            sockets.append(held)
            held.bind(("127.0.0.1", 0))
        return [held.getsockname()[1] for held in sockets]
    finally:
        for held in sockets:
            held.close()


class LocalSlurm:
    def __init__(self, directory: str | os.PathLike, nodes: int = 4, ctld_port: int | None = None,
                 first_node_port: int | None = None):
        self.dir = Path(directory)
        self.nodes = nodes
        self.node_names = [f"n{i}" for i in range(1, nodes + 1)]
        self.conf = str(self.dir / "slurm.conf")
        self.env = {**os.environ, "SLURM_CONF": self.conf}
        ports = free_ports(1 + nodes)
        self.ctld_port = ctld_port if ctld_port is not None else ports[0]
        self.node_ports = (list(range(first_node_port, first_node_port + nodes)) if first_node_port is not None
                           else ports[1:])
        self._processes: list[subprocess.Popen] = []  # in start order: munged, slurmctld, the slurmd
        self._munge_dir: Path | None = None

    @property
    def pids(self) -> list[int]:
        """The process ids of the daemons this cluster started (munged, slurmctld, the slurmd)."""
        return [process.pid for process in self._processes]

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
        munge_socket = self._start_munge()
        node_lines = "".join(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs=1 "
                             "State=UNKNOWN\n" for name, port in zip(self.node_names, self.node_ports))
        Path(self.conf).write_text(CONF.format(dir=self.dir, nodes=self.nodes, ctld_port=self.ctld_port,
                                               node_ports=self.node_ports, node_lines=node_lines,
                                               munge_socket=munge_socket))
        self._spawn(["slurmctld", "-D", "-i", "-f", self.conf])
        for name in self.node_names:
            self._spawn(["slurmd", "-D", "-N", name, "-f", self.conf])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the nodes register within about a second
            out = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.env, capture_output=True, text=True)
            states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
            if len(states) == self.nodes and all(s == "idle" for s in states.values()):
                return
            self._check_alive()
            time.sleep(0.2)  # polling the daemons' registration, bounded by the deadline
        raise JoulesimError(f"local Slurm: the nodes did not become idle within 60 s; see {self.dir / 'log'}")

    def _start_munge(self) -> str:
        """A munged of this cluster's own: a fresh key, a socket in a folder of its own. munged
        refuses a socket below a folder that not everyone may traverse (a pytest or mkdtemp folder
        is private): that folder is made in the system's temporary folder, mode 711."""
        self._munge_dir = Path(tempfile.mkdtemp(prefix="joulesim-munge-"))
        self._munge_dir.chmod(0o711)
        key = self._munge_dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        sock = str(self._munge_dir / "munge.socket")
        self._spawn(["munged", "--foreground", f"--socket={sock}", f"--key-file={key}",
                     f"--log-file={self.dir / 'log' / 'munged.log'}", f"--pid-file={self._munge_dir / 'munged.pid'}",
                     f"--seed-file={self._munge_dir / 'munged.seed'}"])
        deadline = time.monotonic() + 10
        check = f"munge -S {shlex.quote(sock)} -n | unmunge -S {shlex.quote(sock)}"
        while subprocess.run(check, shell=True, capture_output=True).returncode:
            self._check_alive()
            if time.monotonic() > deadline:
                raise JoulesimError(f"local Slurm: munged did not answer within 10 s; see {self.dir / 'log'}")
            time.sleep(0.1)  # polling munged's socket, bounded by the deadline
        return sock

    def _check_alive(self) -> None:
        for process in self._processes:
            if process.poll() is not None:
                raise JoulesimError(f"local Slurm: {' '.join(process.args)} exited with status "
                                    f"{process.returncode}; see {self.dir / 'log'}")

    def _spawn(self, command: list[str]) -> None:
        # A session of its own: Ctrl-C on a terminal goes to joulesim only, which stops the
        # daemons in order (a slurmctld gone first would leave the jobs uncancelled).
        self._processes.append(subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                                start_new_session=True))

    def stop(self) -> None:
        """Cancel the cluster's jobs, wait for them to end, stop the slurmd and slurmctld, then
        munged. A second Ctrl-C while stopping kills what is left rather than leaving it."""
        try:
            if len(self._processes) > 1 and self._processes[1].poll() is None:  # slurmctld answers
                self._cancel_jobs()
            daemons, munged = self._processes[1:], self._processes[:1]
            _terminate(daemons)
            _terminate(munged)
        finally:
            for process in self._processes:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            self._processes = []
            if self._munge_dir is not None:
                shutil.rmtree(self._munge_dir, ignore_errors=True)
                self._munge_dir = None

    def _cancel_jobs(self) -> None:
        def live() -> list[str]:
            out = subprocess.run(["squeue", "-h", "-t", LIVE_STATES, "-o", "%i"], env=self.env,
                                 capture_output=True, text=True, timeout=STOP_TIMEOUT_S)
            return out.stdout.split() if out.returncode == 0 else []

        try:
            if not live():
                return
            subprocess.run(["scancel", *live()], env=self.env, capture_output=True, timeout=STOP_TIMEOUT_S)
            deadline = time.monotonic() + STOP_TIMEOUT_S
            while live() and time.monotonic() < deadline:
                time.sleep(0.1)  # polling the cancelled jobs' ends, bounded by the deadline
        except subprocess.TimeoutExpired:
            pass  # slurmctld does not answer: the daemons are stopped all the same


def _terminate(processes: list[subprocess.Popen]) -> None:
    """SIGTERM to each, then wait; whatever has not stopped within STOP_TIMEOUT_S is killed."""
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for process in processes:
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
