"""References for the `smpi` job model (simulator/models/smpi_replay.py).

- `smpirun_time`: SimGrid 3.32's own `smpirun -replay` (Debian's simgrid package) on a platform,
  a host file and a listing of rank traces, with `--cfg=host/model:ptask_L07`: Batsim's host
  model, under which smpirun gives the times Batsim gives (the 4-rank ring of
  ../shared/reference/batsim-job-models.md: 2.425000 s both). The end time is read from a Paje
  trace written with 15 decimals (smpirun's own "Simulation time" line has 6).
  smpirun differs from Batsim in two ways the model knows: its rank actors are SimGrid's first
  actors, so trace `wait`/`test` actions find their requests (SmpiReplay(...,
  smpirun_request_keys=True)), and there is no job actor to tell (launcher_host=None).
- `batsim_like_time`: SimGrid 3.32 running the traces as Batsim 4.2.1 does (a job actor on the
  first allocated host starts one actor per rank after other actors exist, each runs
  smpi_replay_run then sends 4 bytes to the job actor), through a 40-line C++ program written
  here and compiled against the installed libsimgrid (needs g++ and libsimgrid-dev).
- `MiniRunner`: a tiny evaluator of the ActivityContext contract (fair-bottleneck sharing from
  ptask_sharing over a platform's NetworkTopology, latencies first, surf/precision), to drive
  the model without joulesim's engine.

Every function returns None when its tool is absent; `smpirun_missing_reason()` says why.
"""

from __future__ import annotations

import heapq
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

SMPIRUN = shutil.which("smpirun")


def smpirun_missing_reason() -> str | None:
    """None when smpirun can run; else why not (for pytest.skip)."""
    if SMPIRUN is None:
        return "smpirun is not installed (Debian: apt-get install simgrid libsimgrid-dev)"
    return None


def write_traces(directory: Path, traces: Sequence[Sequence[str]], name: str = "traces") -> Path:
    """Rank r's actions (lines without the rank prefix) into DIR/NAME_r.txt, and the listing
    DIR/NAME.txt naming them relative to itself (as Batsim reads it; smpirun runs there)."""
    directory.mkdir(parents=True, exist_ok=True)
    names = []
    for rank, lines in enumerate(traces):
        file = directory / f"{name}_{rank}.txt"
        file.write_text("".join(f"{rank} {line}\n" for line in lines))
        names.append(file.name)
    listing = directory / f"{name}.txt"
    listing.write_text("".join(f"{n}\n" for n in names))
    return listing


def paje_end_time(trace: Path) -> float:
    """The latest timestamp of a Paje trace (events whose first field is a date)."""
    dated: set[str] = set()
    latest = 0.0
    current: str | None = None
    with open(trace) as handle:
        for line in handle:
            if line.startswith("%"):
                fields = line[1:].split()
                if fields and fields[0] == "EventDef":
                    current = fields[2]
                elif fields and fields[0] == "Time" and current is not None:
                    dated.add(current)
                    current = None
                elif fields and fields[0] != "EndEventDef":
                    current = None  # a field before Time: not a dated event
                continue
            fields = line.split()
            if len(fields) > 1 and fields[0] in dated:
                latest = max(latest, float(fields[1]))
    return latest


def smpirun_time(platform: Path, hosts: Sequence[str], listing: Path, extra_cfg: Sequence[str] = ()) -> float | None:
    """Simulated end of the replay (seconds) under smpirun -replay with ptask_L07, rank r on
    hosts[r]; None if smpirun is absent. Raises RuntimeError with smpirun's output if it fails."""
    if SMPIRUN is None:
        return None
    listing = Path(listing).resolve()
    nb_ranks = sum(1 for line in listing.read_text().splitlines() if line.strip())
    with tempfile.TemporaryDirectory(prefix="smpirun-") as work:
        hostfile = Path(work) / "hosts"
        hostfile.write_text("".join(f"{h}\n" for h in hosts))
        paje = Path(work) / "out.trace"
        command = [SMPIRUN, "-platform", str(Path(platform).resolve()), "-hostfile", str(hostfile),
                   "-np", str(nb_ranks), "--cfg=host/model:ptask_L07", "--cfg=tracing:yes",
                   "--cfg=tracing/smpi:yes", f"--cfg=tracing/filename:{paje}", "--cfg=tracing/precision:15",
                   "--log=root.thres:critical", "--log=smpi_replay.thres:info", *extra_cfg, "-replay", listing.name]
        done = subprocess.run(command, cwd=listing.parent, capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not paje.exists():
            raise RuntimeError(f"smpirun failed ({done.returncode}): {done.stdout}\n{done.stderr}")
        end = paje_end_time(paje)
        # smpirun's own figure (6 decimals, from the last rank's init): the Paje end must agree
        printed = [float(line.rsplit(None, 1)[1]) for line in (done.stdout + done.stderr).splitlines()
                   if "Simulation time" in line]
        if not printed or abs(printed[-1] - end) > 6e-7:
            raise RuntimeError(f"smpirun printed {printed} but its Paje trace ends at {end}")
        return end


# ---------------------------------------------------------------------- Batsim-like harness
_HARNESS = r"""
// Runs SMPI traces the way Batsim 4.2.1 does (src/jobs_execution.cpp), for joulesim's tests.
#include <simgrid/s4u.hpp>
#include <smpi/smpi.h>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
namespace sg4 = simgrid::s4u;
static std::vector<std::string> files, rank_hosts;
static std::string launcher_host;
static int nb_other_actors = 0;
static void rank_actor(int rank) {
  try {
    smpi_replay_run("job", rank, 0, files[rank].c_str());
    sg4::Mailbox::by_name("termination")->put(new unsigned(rank), 4);
  } catch (const simgrid::NetworkFailureException&) {  // as Batsim's smpi_replay_process
    std::printf("FAILED %d %.17g\n", rank, sg4::Engine::get_clock());
    std::fflush(stdout);
  }
}
static void job_actor() {
  double start = sg4::Engine::get_clock();
  for (size_t r = 0; r < files.size(); r++)
    sg4::Actor::create("rank" + std::to_string(r), sg4::Host::by_name(rank_hosts[r]), rank_actor, (int)r);
  for (size_t r = 0; r < files.size(); r++)
    delete sg4::Mailbox::by_name("termination")->get<unsigned>();
  std::printf("JOB %.17g %.17g\n", start, sg4::Engine::get_clock());
}
static void other_actor() {}
static void server() {
  for (int i = 0; i < nb_other_actors; i++)
    sg4::Actor::create("other", sg4::Host::by_name(launcher_host), other_actor);
  sg4::Actor::create("job", sg4::Host::by_name(launcher_host), job_actor);
}
int main(int argc, char** argv) {  // platform nb_other_actors launcher_host (rank_host trace)...
  sg4::Engine e(&argc, argv);
  e.set_config("host/model:ptask_L07");
  e.load_platform(argv[1]);
  nb_other_actors = std::atoi(argv[2]);
  launcher_host = argv[3];
  for (int i = 4; i + 1 < argc; i += 2) {
    rank_hosts.push_back(argv[i]);
    files.push_back(argv[i + 1]);
  }
  SMPI_app_instance_register("job", nullptr, (int)files.size());
  SMPI_init();
  sg4::Actor::create("server", sg4::Host::by_name(launcher_host), server);
  e.run();
  SMPI_finalize();
  return 0;
}
"""

_harness_binary: list[str | None] = []


class RankFailed(RuntimeError):
    """Under SimGrid run as Batsim runs it, a rank's replay failed: Batsim never ends the job."""


class Deadlock(RuntimeError):
    """SimGrid stopped: ranks wait for messages that will never come."""


def _harness() -> str | None:
    if _harness_binary:
        return _harness_binary[0]
    compiler = shutil.which("g++")
    binary = None
    if compiler and Path("/usr/include/smpi/smpi.h").exists():
        directory = Path(tempfile.mkdtemp(prefix="smpi-batsim-harness-"))
        (directory / "harness.cpp").write_text(_HARNESS)
        done = subprocess.run([compiler, "-O1", "-o", str(directory / "harness"), str(directory / "harness.cpp"),
                               "-lsimgrid"], capture_output=True, text=True, timeout=300)
        if done.returncode == 0:
            binary = str(directory / "harness")
    _harness_binary.append(binary)
    return binary


def batsim_like_missing_reason() -> str | None:
    if _harness() is None:
        return "cannot build the Batsim-like SimGrid harness (needs g++ and libsimgrid-dev)"
    return None


def batsim_like_time(platform: Path, rank_hosts: Sequence[str], listing: Path, launcher_host: str,
                     other_actors: int = 3) -> float | None:
    """The job's duration under SimGrid 3.32 run as Batsim runs an smpi job (rank r on
    rank_hosts[r], job actor on `launcher_host`); None when the harness cannot be built."""
    binary = _harness()
    if binary is None:
        return None
    listing = Path(listing).resolve()
    files = [str(listing.parent / line.rstrip()) for line in listing.read_text().splitlines() if line.strip()]
    command = [binary, str(Path(platform).resolve()), str(other_actors), launcher_host, "--log=root.thres:critical"]
    for host, file in zip(rank_hosts, files):
        command += [host, file]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    for line in done.stdout.splitlines():
        if line.startswith("JOB "):
            start, end = map(float, line.split()[1:])
            return end - start
    failed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("FAILED ")]
    if failed:
        raise RankFailed(f"the replay of rank(s) {', '.join(failed)} failed (NetworkFailureException): "
                         "Batsim would never end this job")
    if "Deadlock detected" in done.stderr:
        raise Deadlock(f"SimGrid reports a deadlock: {done.stderr.strip().splitlines()[0]}")
    raise RuntimeError(f"the harness failed ({done.returncode}): {done.stdout}\n{done.stderr}")


# ---------------------------------------------------------------------- a tiny evaluator
class _Activity:
    __slots__ = ("resources", "amounts", "own", "latency", "remaining", "period", "end", "then", "sharing",
                 "cancelled", "runner")

    def progress(self) -> float:
        return 1.0 - self.remaining

    def cancel(self) -> None:
        self.cancelled = True
        if self in self.runner.sharing:
            self.runner.sharing.remove(self)


class MiniRunner:
    """Runs one job model on an ActivityContext of its own: activities pay their route latency,
    then share CPUs and links by ptask_sharing's fair-bottleneck rule (what joulesim's runner
    does); completions within 1e-9 s (surf/precision) of the earliest end happen together."""

    def __init__(self, speeds: Sequence[float], capacity: np.ndarray, route: Callable[[int, int], tuple],
                 hosts: Sequence[int]):
        from joulesim.simulator.models.ptask_sharing import fair_bottleneck_periods

        self._solve = fair_bottleneck_periods
        self.speeds = np.asarray(speeds, dtype=float)
        self.capacity = np.concatenate([self.speeds, np.asarray(capacity, dtype=float)])
        self.nb_hosts = len(speeds)
        self.route = route
        self.hosts = list(hosts)
        self.clock = 0.0
        self.sharing: list[_Activity] = []
        self.latent: list[tuple[float, int, _Activity]] = []
        self.sleeping: list[tuple[float, int, Callable[[], None]]] = []
        self.counter = 0
        self.finished_at: float | None = None
        self.started = 0  # activities started, for tests

    @classmethod
    def on_platform(cls, platform_path: str | Path, host_names: Sequence[str]) -> "MiniRunner":
        from joulesim.simulator.platform.platform_loader import load_platform

        platform = load_platform(str(platform_path))
        ids = {h.name: h.id for h in platform.compute_hosts}
        speeds = [h.speeds[h.pstate] for h in platform.compute_hosts]
        network = platform.network

        def route(src: int, dst: int) -> tuple:
            if src != dst:
                return network.route(src, dst)
            # SimGrid routes a host's transfer to itself (a cluster host: up its link and down)
            name = network.host_names[src]
            return network.message_route(name, name)

        return cls(speeds, network.capacity, route, [ids[name] for name in host_names])

    # ActivityContext
    def now(self) -> float:
        return self.clock

    def execute(self, cpu, flows, then) -> _Activity:
        usage: dict[int, float] = {}
        elements: list[tuple[int, float]] = [(host, flops) for host, flops in cpu if flops > 0]
        latency = 0.0
        for src, dst, amount in flows:
            if amount <= 0:
                continue
            links, route_latency = self.route(src, dst)
            latency = max(latency, route_latency)
            for link in links:
                usage[self.nb_hosts + link] = usage.get(self.nb_hosts + link, 0.0) + amount
        elements += list(usage.items())
        return self._start(np.array([r for r, _ in elements], dtype=np.int64),
                           np.array([a for _, a in elements], dtype=float), 0.0, latency, then)

    def sleep(self, seconds, then) -> _Activity:
        return self._start(np.empty(0, dtype=np.int64), np.empty(0), float(seconds), 0.0, then)

    def _start(self, resources, amounts, own: float, latency: float, then) -> _Activity:
        self.started += 1
        activity = _Activity()
        activity.resources, activity.amounts, activity.own, activity.latency = resources, amounts, own, latency
        activity.remaining, activity.period, activity.then, activity.sharing = 1.0, 0.0, then, False
        self._launch(activity)
        return activity

    def finish(self) -> None:
        self.finished_at = self.clock

    # engine
    def _launch(self, activity: _Activity) -> None:
        activity.cancelled = False
        activity.runner = self
        self.counter += 1
        if activity.latency > 0:
            heapq.heappush(self.latent, (self.clock + activity.latency, self.counter, activity))
        else:
            activity.sharing = True
            self.sharing.append(activity)

    def _resolve(self) -> None:
        if not self.sharing:
            return
        counts = [a.resources.size for a in self.sharing]
        task_index = np.repeat(np.arange(len(self.sharing)), counts)
        periods = self._solve(task_index, np.concatenate([a.resources for a in self.sharing]),
                              np.concatenate([a.amounts for a in self.sharing]), self.capacity,
                              np.array([a.own for a in self.sharing]))
        for activity, period in zip(self.sharing, periods.tolist()):
            activity.period = period
            activity.end = self.clock + activity.remaining * period

    def run(self, model, limit: float = 1e12) -> float:
        """Start `model` at time 0 on this runner's hosts; run to its finish; its end time."""
        model.start(self)
        while self.finished_at is None:
            self._resolve()
            next_end = min((a.end for a in self.sharing), default=float("inf"))
            next_latency = self.latent[0][0] if self.latent else float("inf")
            when = min(next_end, next_latency)
            if when == float("inf") or when > limit:
                raise RuntimeError(f"the job never finishes (stuck at {self.clock})")
            for activity in self.sharing:
                if activity.period > 0:
                    activity.remaining -= (when - self.clock) / activity.period
            self.clock = when
            done = [a for a in self.sharing if a.end <= when + 1e-9]
            self.sharing = [a for a in self.sharing if a.end > when + 1e-9]
            while self.latent and self.latent[0][0] <= when:
                activity = heapq.heappop(self.latent)[2]
                if not activity.cancelled:
                    activity.sharing = True
                    self.sharing.append(activity)
            for activity in done:
                activity.then()
        return self.finished_at

