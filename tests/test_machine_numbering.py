"""Machine numbering as Batsim 4.2.1 does it (issue 44).

Batsim numbers its compute machines in SimGrid 3.32's order of hosts, which is the order of
their names as C++ strings compare them (byte by byte), whatever their order in the file; then
its storage machines, in the same order; the master gets no id. `--mmax N` keeps the first N
compute machines of that order. Each expectation below was measured with real Batsim 4.2.1
(built from tag v4.2.1, SimGrid 3.32) driven by `joulesim decide fcfs`:

- NAMES: the SIMULATION_BEGINS of a platform of 13 hosts declared in the file in another order;
- the FCFS runs of HETERO12, twelve hosts h1..h12 of speeds 1..12 Gflop/s (string order h1,
  h10, h11, h12, h2...: a job on machines 1-3 runs on the three fastest hosts) and two storage
  hosts s9 and s10, on the workload of `hetero_workload()`, with and without `--mmax 7`: Batsim's
  out_jobs.csv (BATSIM_JOBS) and its 126 messages, which joulesim gives identically (compared
  through a digest of every message; their one difference, not numbering's, is told below).
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from joulesim.simulator.platform.platform_loader import load_platform

from conftest import write_json

# Declared in this order; Batsim 4.2.1's machines 0..12 are SORTED_NAMES (its SIMULATION_BEGINS).
NAMES = ["n10", "n-1", "n.1", "n1", "N2", "n\u00e9", "n_1", "nz", "n2", "n01", "n 1", "Z", "a"]
SORTED_NAMES = ["N2", "Z", "a", "n 1", "n-1", "n.1", "n01", "n1", "n10", "n2", "n_1", "nz", "n\u00e9"]

HETERO12 = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS0" routing="Full">
    <host id="master_host" speed="1Gf"/>
{hosts}
    <host id="s9" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="s10" speed="1Gf"><prop id="role" value="storage"/></host>
  </zone>
</platform>
"""

# The workload's 30 jobs: (nb_res, Gflop per host); job i is submitted at i*3 + 0.0173*(i % 7) s
# (so that no submission falls on a job's end).
JOBS = [(2, 36), (1, 60), (4, 24), (1, 12), (1, 60), (5, 36), (1, 24), (5, 120), (3, 36), (2, 12), (3, 24), (1, 36),
        (3, 24), (2, 36), (3, 36), (1, 120), (3, 60), (5, 24), (2, 24), (4, 36), (1, 120), (3, 12), (3, 120), (6, 36),
        (5, 24), (4, 60), (5, 36), (4, 60), (2, 24), (3, 36)]

# Batsim 4.2.1's out_jobs.csv, job by job: starting_time, finish_time, allocated_resources.
BATSIM_JOBS = {
    "": """0:0.000000:36.000000:0-1 1:3.017300:8.471845:2 2:6.034600:18.034600:3-6 3:9.051900:10.142809:2
        4:12.069200:17.523745:2 5:15.086500:22.286500:7-11 6:18.103800:20.285618:2 7:21.000000:81.000000:2-6
        8:24.017300:31.217300:7-9 9:27.034600:28.534600:10-11 10:31.217300:36.017300:7-9 11:33.069200:37.569200:10
        12:36.086500:60.086500:0-1+7 13:39.103800:45.103800:8-9 14:45.103800:51.103800:8-10 15:45.103800:58.437133:11
        16:51.103800:61.103800:8-10 17:61.103800:85.103800:0-1+7-9 18:61.103800:64.103800:10-11
        19:81.000000:99.000000:2-5 20:81.000000:111.000000:6 21:85.103800:97.103800:0-1+7 22:85.103800:105.103800:8-10
        23:99.000000:135.000000:0-5 24:105.103800:109.903800:7-11 25:109.903800:121.903800:7-10
        26:121.903800:130.903800:6-10 27:130.903800:145.903800:6-9 28:130.903800:133.903800:10-11
        29:135.000000:171.000000:0-2""",
    "--mmax 7": """0:0.000000:36.000000:0-1 1:3.017300:8.471845:2 2:6.034600:18.034600:3-6 3:9.051900:10.142809:2
        4:12.069200:17.523745:2 5:18.034600:36.034600:2-6 6:36.000000:60.000000:0 7:36.034600:96.034600:1-5
        8:96.034600:132.034600:0-2 9:96.034600:102.034600:3-4 10:102.034600:114.034600:3-5 11:102.034600:111.034600:6
        12:114.034600:126.034600:3-5 13:126.034600:144.034600:3-4 14:132.034600:168.034600:0-2
        15:132.034600:172.034600:5 16:144.034600:174.034600:3-4+6 17:174.034600:198.034600:0-4
        18:174.034600:182.034600:5-6 19:198.034600:234.034600:0-3 20:198.034600:258.034600:4
        21:234.034600:246.034600:0-2 22:234.034600:274.034600:3+5-6 23:274.034600:310.034600:0-5
        24:310.034600:334.034600:0-4 25:334.034600:394.034600:0-3 26:394.034600:430.034600:0-4
        27:430.034600:490.034600:0-3 28:430.034600:442.034600:4-5 29:442.034600:460.034600:4-6""",
}
# SIMULATION_BEGINS' machines (id, name): compute, then storage.
BATSIM_MACHINES = {
    "": ([(0, "h1"), (1, "h10"), (2, "h11"), (3, "h12"), (4, "h2"), (5, "h3"), (6, "h4"), (7, "h5"), (8, "h6"), (9, "h7"),
          (10, "h8"), (11, "h9")], [(12, "s10"), (13, "s9")]),
    "--mmax 7": ([(0, "h1"), (1, "h10"), (2, "h11"), (3, "h12"), (4, "h2"), (5, "h3"), (6, "h4")], [(7, "s10"), (8, "s9")]),
}
# Batsim's 126 messages (both directions, in order), through message_digest.
BATSIM_DIGESTS = {
    "": "9d588a17854364f57d2b32a9555ea2b64f9be461cc2bcb179947761dca8cec1c",
    "--mmax 7": "bcd5438ed68677e4dceb55ef21cd73049d462dea1e311e8623eb85ec0e07644f",
}


def names_platform(tmp_path: Path) -> str:
    hosts = "\n".join(f'    <host id="{name}" speed="{i + 1}Gf"/>' for i, name in enumerate(NAMES))
    path = tmp_path / "names13.xml"
    path.write_text(HETERO12.replace("{hosts}", hosts).replace('\n    <host id="s9" speed="1Gf"><prop id="role" value="storage"/></host>\n'
                                                               '    <host id="s10" speed="1Gf"><prop id="role" value="storage"/></host>', ""),
                    encoding="utf-8")
    return str(path)


def hetero_platform(tmp_path: Path) -> str:
    path = tmp_path / "hetero12.xml"
    path.write_text(HETERO12.replace("{hosts}", "\n".join(f'    <host id="h{k}" speed="{k}Gf"/>' for k in range(1, 13))))
    return str(path)


def hetero_workload(tmp_path: Path) -> str:
    jobs, profiles = [], {}
    for i, (res, gflop) in enumerate(JOBS):
        profiles[f"ph{gflop}"] = {"type": "parallel_homogeneous", "cpu": gflop * 1e9, "com": 0}
        jobs.append({"id": i, "subtime": round(i * 3 + 0.0173 * (i % 7), 4), "res": res, "walltime": 1000, "profile": f"ph{gflop}"})
    return write_json(tmp_path, {"nb_res": 12, "jobs": jobs, "profiles": profiles}, name="hetero12b.json")


def message_digest(messages: list[tuple[str, dict]]) -> str:
    """SHA-256 of every message (direction and content, keys sorted), workload paths cut to their
    file name. `now` and timestamps count as floats: joulesim writes SIMULATION_BEGINS' timestamp
    0, Batsim 0.000000 (the only difference between the two logs)."""
    canonical = []
    for direction, message in messages:
        message = json.loads(json.dumps(message))
        message["now"] = float(message["now"])
        for event in message["events"]:
            event["timestamp"] = float(event["timestamp"])
            if event["type"] == "SIMULATION_BEGINS":
                event["data"]["workloads"] = {name: Path(path).name for name, path in event["data"]["workloads"].items()}
        canonical.append([direction, message])
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def sent_and_received(log: str) -> list[tuple[str, dict]]:
    found = []
    for line in log.splitlines():
        for prefix, direction in (("joulesim: sent: ", "to_decider"), ("joulesim: received: ", "from_decider")):
            if line.startswith(prefix):
                found.append((direction, json.loads(line[len(prefix):])))
    return found


def test_hosts_are_numbered_in_the_string_order_of_their_names(tmp_path):
    platform = load_platform(names_platform(tmp_path))
    assert [(h.id, h.name) for h in platform.compute_hosts] == list(enumerate(SORTED_NAMES))
    assert platform.master.name == "master_host" and platform.master.id == -1


def test_json_platforms_are_numbered_as_xml_ones(tmp_path):
    """joulesim's JSON platforms follow the same order, so that a JSON platform and the XML that
    `joulesim platform export-xml` writes of it for Batsim number their hosts alike."""
    hosts = [{"name": name, "speed": f"{i + 1}Gf"} for i, name in enumerate(NAMES)]
    path = write_json(tmp_path, {"master": {"name": "master_host"}, "hosts": hosts,
                                 "clusters": [{"id": "c", "prefix": "c-", "count": 12, "speed": "1Gf"}]}, name="p.json")
    platform = load_platform(path)
    cluster = ["c-0", "c-1", "c-10", "c-11", *(f"c-{i}" for i in range(2, 10))]
    assert [h.name for h in platform.compute_hosts] == SORTED_NAMES[:3] + cluster + SORTED_NAMES[3:]
    assert [h.id for h in platform.compute_hosts] == list(range(25))


def test_storage_hosts_come_after_the_compute_hosts_by_name(tmp_path):
    platform = load_platform(hetero_platform(tmp_path))
    compute, storage = BATSIM_MACHINES[""]
    assert [(h.id, h.name) for h in platform.compute_hosts] == compute
    assert [(h.id, h.name) for h in platform.storage_hosts] == storage
    # speeds follow the names: machine 1 is h10
    assert [h.speed for h in platform.compute_hosts[:5]] == [1e9, 10e9, 11e9, 12e9, 2e9]


@pytest.mark.parametrize("flags", sorted(BATSIM_JOBS))
def test_fcfs_on_a_heterogeneous_platform_gives_batsims_jobs_and_messages(tmp_path, flags):
    platform, workload = hetero_platform(tmp_path), hetero_workload(tmp_path)
    run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-d", "fcfs", "-p", platform,
                          "-w", workload, "-e", str(tmp_path / "out"), "-v", "network-only", *flags.split()],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    messages = sent_and_received(run.stderr)
    begins = messages[0][1]["events"][0]["data"]
    compute, storage = BATSIM_MACHINES[flags]
    assert [(r["id"], r["name"]) for r in begins["compute_resources"]] == compute
    assert [(r["id"], r["name"]) for r in begins["storage_resources"]] == storage
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        jobs = {int(row["job_id"]): (row["starting_time"], row["finish_time"], row["allocated_resources"].replace(" ", "+"))
                for row in csv.DictReader(f)}
    expected = {int(job): (start, finish, alloc) for job, start, finish, alloc in
                (entry.split(":") for entry in BATSIM_JOBS[flags].split())}
    assert jobs == expected
    assert len(messages) == 126
    assert message_digest(messages) == BATSIM_DIGESTS[flags]


def test_irmasim_platforms_keep_their_own_order(tmp_path):
    """IRMaSim numbers its cores in the order of its platform (Batsim never reads these files):
    they keep it, node2 before node10."""
    processor = {"cores": 2, "clock_rate": 1.0, "dpflops_per_cycle": 1, "dynamic_power": 1.0, "static_power": 1.0,
                 "min_power": 0.5, "b": -1.85e-05, "c": 21000, "da": 1.0, "db": 100, "dc": 25000, "dd": 10}
    path = write_json(tmp_path, {"platform": {"p": {"id": "p", "model_name": "modelV1",
                                                    "clusters": [{"id": "c0", "nodes": [{"type": "n", "number": 12}]}]}},
                                 "node": {"n": {"id": "n", "processors": [{"type": "cpu", "number": 1}]}},
                                 "processor": {"cpu": processor}}, name="irmasim.json")
    platform = load_platform(path)
    assert [h.name for h in platform.compute_hosts] == [f"node{n}.processor0.core{c}" for n in range(12) for c in range(2)]
    assert [h.id for h in platform.compute_hosts] == list(range(24))
