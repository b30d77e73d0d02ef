"""Power properties are read with -E only, as Batsim 4.2.1 reads them (issue 44).

Batsim's own platforms/energy_platform.xml (hosts with 7 and 9 pstates and 6 wattages) and
platforms/heterogeneous/platform.xml (2 pstates, 5 wattages, sleep_pstates "2:3:4") were
refused by joulesim, whatever the flags. Measured with real Batsim 4.2.1 (SimGrid 3.32):

- without -E Batsim reads no power property: it runs energy_platform.xml to the end (the
  properties are only forwarded to the decider); heterogeneous/platform.xml it starts, then
  aborts on its master, which sits in a routing="None" zone ("There can't be route in an Empty
  zone"), as joulesim refuses it;
- with -E it aborts while loading the platform: SimGrid's energy plugin reads every host's
  wattage_per_state (and wattage_off) as it creates it, in file order, the master and hosts
  beyond --mmax included ("Invalid XML file. Found 6 energetic profiles for 7 pstates", no host
  named); then Batsim reads every host's sleep_pstates, in the order of their names.

The files of PLATFORMS below are joulesim's own small cases of the same kinds, each run on
Batsim 4.2.1 with `joulesim decide fcfs`: without -E, Batsim's messages (BATSIM_DIGESTS) and
jobs (BATSIM_JOBS), which joulesim gives identically; with -E, Batsim's abort (BATSIM_ABORTS),
where joulesim refuses the platform, naming the host, the property and the fix.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import check_energy_properties
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import build_simgrid_program, write_json
from test_machine_numbering import message_digest, sent_and_received


def host(name: str, speed: str, watts: str | None = None, sleep: str | None = None, off: str | None = None) -> str:
    props = "".join(f'<prop id="{key}" value="{value}"/>' for key, value in
                    (("wattage_per_state", watts), ("wattage_off", off), ("sleep_pstates", sleep)) if value is not None)
    return f'    <host id="{name}" speed="{speed}">{props}</host>\n'


MASTER = host("master_host", "1Gf", "10:20")
A = host("a", "1Gf, 500Mf", "100:200, 90:150")
C = host("c", "1Gf, 500Mf, 200Mf", "100:200, 90:150, 80:120")
D = host("d", "1Gf", "100:200")
PLATFORMS = {
    # fewer wattages than pstates on two hosts, c before b in the file (as energy_platform.xml)
    "fewer": MASTER + A + host("c", "1Gf, 500Mf, 200Mf", "100:200, 90:150")
             + host("b", "1Gf, 500Mf, 1e-9Mf, 0.5f, 0.25f", "100:200, 90:150, 5:5", "2:3:4", "5") + D,
    # more wattages than pstates, sleep pstates that do not exist (as heterogeneous/platform.xml)
    "more": MASTER + A + host("b", "1Gf, 900Mf", "4:8, 4:7.2, 1:1, 3:3, 3:3", "2:3:4", "2") + C + D,
    # wattages right, a sleep pstate that does not exist
    "sleep": MASTER + A + host("b", "1Gf, 500Mf, 1e-9Mf, 0.5f, 0.25f", "100:200, 90:150, 5:5, 50:50, 60:60", "2:3:9") + C + D,
    # the master's wattages only
    "master": host("master_host", "1Gf", "10:20, 5:5") + A + C + D + host("e", "1Gf", "1:2"),
    # a host beyond --mmax 3 (machines a, c, d: z is last by name)
    "beyond": MASTER + A + host("z", "1Gf, 2Gf", "1:2") + C + D,
}
FLAGS = {"beyond": ["--mmax", "3"]}

# Batsim 4.2.1 with -E: its last line before the abort (SIGABRT).
BATSIM_ABORTS = {
    "fewer": "Invalid XML file. Found 2 energetic profiles for 3 pstates",
    "more": "Invalid XML file. Found 5 energetic profiles for 2 pstates",
    "sleep": "Invalid platform file 'sleep.xml': host 'b' has an invalid 'sleep_pstates' property: the pstates of the "
             "comma-separated sleep pstate '2:3:9' are invalid: the pstate 9 does not exist",
    "master": "Invalid XML file. Found 2 energetic profiles for 1 pstates",
    "beyond": "Invalid XML file. Found 1 energetic profiles for 2 pstates",
}
# joulesim with -E: the host and property it names first (Batsim's, above), and the counts.
REFUSALS = {
    "fewer": ("host 'c', property 'wattage_per_state'", 2, 3),
    "more": ("host 'b', property 'wattage_per_state'", 5, 2),
    "master": ("host 'master_host', property 'wattage_per_state'", 2, 1),
    "beyond": ("host 'z', property 'wattage_per_state'", 1, 2),
}
# Batsim 4.2.1 without -E: its messages (message_digest) and its out_jobs.csv (start, finish, hosts).
BATSIM_DIGESTS = {
    "fewer": (20, "37f8f58eab8f6d7e44c4697116328133706be4424f3aa9e47434d84ad152a0cd"),
    "more": (20, "c8043279e21d9b94e787dbb706a9660de2cbab7926d02d2819256900243b5ae2"),
    "sleep": (20, "ba0f63f56a1bdd0224bc4414b8f374cf9c5af8d8de8643a3e596c06685c3584f"),
    "master": (20, "ad5d0e401f53cd34d2ae4ca55626a293fad7ab44dfa11ecc40ee41373322c755"),
    "beyond": (22, "6efed495b0a1201a028ab25c31c8f76602ba3e2b7ceea461a8c75515803ca579"),
}
FOUR_HOSTS_JOBS = {"1": ("0.000000", "10.000000", "0-1"), "2": ("1.000000", "21.000000", "2"),
                   "3": ("10.000000", "15.000000", "0-1"), "4": ("10.000000", "15.000000", "3")}
BATSIM_JOBS = {name: FOUR_HOSTS_JOBS for name in PLATFORMS} | {"beyond": {**FOUR_HOSTS_JOBS, "4": ("15.000000", "20.000000", "0")}}


def write_platform(tmp_path: Path, name: str, hosts: str | None = None) -> str:
    path = tmp_path / f"{name}.xml"
    hosts = PLATFORMS[name] if hosts is None else hosts
    path.write_text("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                    f'<platform version="4.1">\n  <zone id="AS0" routing="Full">\n{hosts}  </zone>\n</platform>\n')
    return str(path)


def write_small_workload(tmp_path: Path) -> str:
    jobs = [{"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "d10"},
            {"id": 2, "subtime": 1, "res": 1, "walltime": 100, "profile": "d20"},
            {"id": 3, "subtime": 2, "res": 2, "walltime": 100, "profile": "d5"},
            {"id": 4, "subtime": 3, "res": 1, "walltime": 100, "profile": "d5"}]
    profiles = {"d10": {"type": "delay", "delay": 10}, "d20": {"type": "delay", "delay": 20}, "d5": {"type": "delay", "delay": 5}}
    return write_json(tmp_path, {"nb_res": 2, "jobs": jobs, "profiles": profiles}, name="small2.json")


def run(tmp_path: Path, name: str, *flags: str) -> subprocess.CompletedProcess:
    platform, workload = Path(write_platform(tmp_path, name)), Path(write_small_workload(tmp_path))
    return subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-d", "fcfs",
                           "-p", platform.name, "-w", workload.name, "-e", "out", *FLAGS.get(name, []), *flags],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def count_message(name: str) -> str:
    where, given, pstates = REFUSALS[name]
    return (f"{name}.xml: {where}: gives {given} wattage(s) for {pstates} pstate(s) (speeds): energy accounting (-E/--energy) "
            f"needs one per pstate, and Batsim 4.2.1 with -E aborts there too (SimGrid 3.32: \"{BATSIM_ABORTS[name]}\") "
            f"(give exactly one idle:max pair per speed ({pstates} here), or run without -E (the property is then unused, "
            f"as Batsim 4.2.1 leaves it))")


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_without_energy_the_platform_runs_as_on_batsim(tmp_path, name):
    done = run(tmp_path, name, "-v", "network-only")
    assert done.returncode == 0, done.stderr[-2000:]
    messages = sent_and_received(done.stderr)
    assert (len(messages), message_digest(messages)) == BATSIM_DIGESTS[name]
    with open(tmp_path / "out_jobs.csv", newline="") as f:
        jobs = {row["job_id"]: (row["starting_time"], row["finish_time"], row["allocated_resources"]) for row in csv.DictReader(f)}
    assert jobs == BATSIM_JOBS[name]
    # the properties still reach the decider as the file gives them, as Batsim forwards them
    begins = messages[0][1]["events"][0]["data"]["compute_resources"]
    assert begins[1]["properties"]["wattage_per_state"] == {"fewer": "100:200, 90:150, 5:5", "more": "4:8, 4:7.2, 1:1, 3:3, 3:3",
                                                             "sleep": "100:200, 90:150, 5:5, 50:50, 60:60", "master": "100:200, 90:150, 80:120",
                                                             "beyond": "100:200, 90:150, 80:120"}[name]


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_with_energy_a_wattage_count_is_refused_where_batsim_aborts(tmp_path, name):
    done = run(tmp_path, name, "-E")
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr == f"joulesim: error: {count_message(name)}\n"
    assert not (tmp_path / "out_jobs.csv").exists()


def test_with_energy_a_sleep_pstate_is_refused_where_batsim_aborts(tmp_path):
    done = run(tmp_path, "sleep", "-E")
    assert done.returncode == 2
    assert done.stderr == ("joulesim: error: sleep.xml: host 'b', property 'sleep_pstates': sleep_pstates part '2:3:9' refers to "
                           "pstate 9, but the host has 5 pstate(s) (0..4) (read with -E/--energy only, as Batsim 4.2.1 reads it) "
                           "(use pstate indices of the host's speed list, or add speeds, or run without -E)\n")


def test_the_platform_loads_with_its_refusals_and_a_warning(tmp_path):
    """Loaded without -E: each refused property is left out of its host and kept for -E, in the
    order Batsim stops on them (wattages in file order, then sleep pstates by host name); one
    warning line says so."""
    platform = load_platform(write_platform(tmp_path, "fewer"))
    hosts = {h.name: h for h in platform.compute_hosts}
    assert hosts["c"].wattage_per_state is None and hosts["b"].wattage_per_state is None
    assert hosts["b"].wattage_off == 5.0 and hosts["b"].sleep_pstates[0].sleep == 2  # (read: they are right)
    assert hosts["a"].wattage_per_state == [(100.0, 200.0), (90.0, 150.0)]
    assert [error.where for error in platform.energy_refusals] == ["host 'c', property 'wattage_per_state'",
                                                                   "host 'b', property 'wattage_per_state'"]
    assert platform.warnings == [f"joulesim: warning: {tmp_path}/fewer.xml: host 'c', property 'wattage_per_state': gives 2 "
                                 "wattage(s) for 3 pstate(s) (speeds): energy accounting (-E/--energy) needs one per pstate, and "
                                 "Batsim 4.2.1 with -E aborts there too (SimGrid 3.32: \"Invalid XML file. Found 2 energetic "
                                 "profiles for 3 pstates\") (1 other power property refused alike); without -E the property is "
                                 "unused and the platform runs, as on Batsim 4.2.1"]
    with pytest.raises(InputError) as info:
        check_energy_properties(platform)
    assert str(info.value) == f"{tmp_path}/{count_message('fewer')}"
    with pytest.raises(InputError) as info:
        load_platform(write_platform(tmp_path, "fewer"), energy=True)
    assert str(info.value) == f"{tmp_path}/{count_message('fewer')}"
    # wattages are refused before sleep pstates, sleep pstates by host name
    both = (MASTER + host("b2", "1Gf, 1f, 1f", "1:2, 1:1, 1:1", "1:2:7") + host("b1", "1Gf, 1f, 1f", "1:2, 1:1, 1:1", "1:2:8")
            + host("w", "1Gf", "1:2, 3:4"))
    refusals = load_platform(write_platform(tmp_path, "both", both)).energy_refusals
    assert [error.where.split(",")[0] for error in refusals] == ["host 'w'", "host 'b1'", "host 'b2'"]


def test_the_api_refuses_with_energy_only(tmp_path):
    import joulesim

    platform, workload = write_platform(tmp_path, "more"), write_small_workload(tmp_path)
    result = joulesim.simulate(platform, workload, "fcfs", export=str(tmp_path / "out"))
    assert len(result.jobs) == 4
    with pytest.raises(InputError, match=r"host 'b', property 'wattage_per_state': gives 5 wattage\(s\) for 2 pstate\(s\)"):
        joulesim.simulate(platform, workload, "fcfs", export=str(tmp_path / "out_e"), energy=True)
    with pytest.raises(InputError, match=r"host 'b', property 'wattage_per_state'"):  # a platform loaded already, too
        joulesim.simulate(load_platform(platform), workload, "fcfs", export=str(tmp_path / "out_f"), energy=True)


def test_json_platforms_follow_the_same_rule(tmp_path):
    path = write_json(tmp_path, {"master": {"name": "m"}, "hosts": [
        {"name": "a", "speed": ["1Gf", "500Mf"], "wattage_per_state": [[1, 2]]},
        {"name": "b", "speed": "1Gf", "wattage_per_state": [[1, 2]]}]}, name="p.json")
    platform = load_platform(path)
    assert platform.compute_hosts[0].wattage_per_state is None and platform.compute_hosts[1].wattage_per_state == [(1, 2)]
    with pytest.raises(InputError, match=r"p\.json: \$\.hosts\[0\] \('a'\), property 'wattage_per_state': gives 1 wattage\(s\) for 2"):
        load_platform(path, energy=True)


# SimGrid 3.32 itself, with and without its energy plugin (Batsim loads the plugin with -E).
ENERGY_LOADER = r"""
#include <simgrid/s4u.hpp>
#include <simgrid/plugins/energy.h>
#include <cstdio>
#include <cstring>
int main(int argc, char** argv)
{
  simgrid::s4u::Engine e(&argc, argv);
  if (argc > 2 && std::strcmp(argv[2], "energy") == 0)
    sg_host_energy_plugin_init();
  e.load_platform(argv[1]);
  std::printf("LOADED %zu\n", e.get_host_count());
  return 0;
}
"""


@pytest.fixture(scope="module")
def energy_loader(tmp_path_factory) -> str:
    return build_simgrid_program(tmp_path_factory, ENERGY_LOADER, "simgrid-energy-loader",
                                 header="/usr/include/simgrid/plugins/energy.h")


@pytest.mark.parametrize("name", sorted(PLATFORMS))
def test_simgrid_refuses_the_wattages_joulesim_refuses_with_energy(energy_loader, tmp_path, name):
    """SimGrid loads every case without its energy plugin; with it, it aborts on exactly the
    wattage counts joulesim refuses with -E, with the message joulesim quotes (the sleep
    pstates are Batsim's own check, after SimGrid has loaded the platform)."""
    path = write_platform(tmp_path, name)
    plain = subprocess.run([energy_loader, path, "plain", "--log=root.thres:critical"], capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0 and plain.stdout.startswith("LOADED "), plain.stderr[-1000:]
    energy = subprocess.run([energy_loader, path, "energy"], capture_output=True, text=True, timeout=60)
    if name in REFUSALS:
        assert energy.returncode != 0 and BATSIM_ABORTS[name] in energy.stderr, energy.stderr[-1000:]
        with pytest.raises(InputError) as info:
            load_platform(path, energy=True)
        assert BATSIM_ABORTS[name] in str(info.value)
    else:
        assert energy.returncode == 0, energy.stderr[-1000:]


def test_a_master_in_a_none_zone_is_refused_after_the_wattages_with_energy(tmp_path):
    """As Batsim's heterogeneous/platform.xml: wattages that do not fit and the master in a
    routing="None" zone. With -E Batsim aborts as the hosts are loaded (the wattages); without
    it once its actors send their first message (the master): joulesim names the same."""
    path = tmp_path / "none.xml"
    path.write_text("<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"main\" routing=\"Full\">\n"
                    '  <zone id="m" routing="None"><host id="master_host" speed="1Gf"/></zone>\n'
                    '  <zone id="c" routing="Full">' + host("a", "1Gf, 900Mf", "4:8, 4:7.2, 1:1", "2:3:4").strip()
                    + host("b", "1Gf", "1:2").strip() + '</zone>\n'
                    '  <link id="l" bandwidth="1GBps" latency="1us"/>\n'
                    '  <zoneRoute src="c" dst="m" gw_src="a" gw_dst="master_host"><link_ctn id="l"/></zoneRoute>\n'
                    "</zone>\n</platform>\n")
    with pytest.raises(InputError, match=r"zone 'm' \(routing=\"None\"\), master host 'master_host'"):
        load_platform(str(path))
    with pytest.raises(InputError, match=r"host 'a', property 'wattage_per_state': gives 3 wattage\(s\) for 2 pstate\(s\)"):
        load_platform(str(path), energy=True)
