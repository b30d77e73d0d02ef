"""Platform files as SimGrid 3.32 reads them (issue 30).

- Every shipped XML platform, and the XML that `joulesim platform export-xml` writes for the
  shipped JSON ones, loads in SimGrid itself (a small program against Debian's libsimgrid, built
  here) and routes every pair of hosts there with the links and latencies joulesim computes.
- export-xml gives joulesim the same platform (hosts, properties, routes) and the same outputs.
- What SimGrid's DTD and routing refuse is refused here, one line naming the element; what
  SimGrid loads but Batsim 4.2.1 aborts on (its master) runs with a warning.

The SimGrid comparisons skip, with the reason, only where g++ or libsimgrid-dev is missing
(.ci/run installs them).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_loader import list_shipped_platforms, load_platform, shipped_platform_path
from joulesim.simulator.platform.platform_xml_export import export_xml

from conftest import build_simgrid_program, write_json

ROOT = Path(__file__).resolve().parents[1]

# Loads a platform, seals it, prints its hosts, then each asked route as SimGrid computes it: the
# number of links, the latency (summed in SimGrid's order) and the links' names; a route SimGrid
# refuses with an exception is a NOROUTE line (one it aborts or crashes on ends the process).
LOADER = r"""
#include <simgrid/s4u.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
int main(int argc, char** argv)
{
  simgrid::s4u::Engine e(&argc, argv);
  e.load_platform(argv[1]);
  e.seal_platform();
  auto hosts = e.get_all_hosts();
  std::printf("HOSTS %zu\n", hosts.size());
  for (auto* h : hosts)
    std::printf("HOST %s\n", h->get_cname());
  std::fflush(stdout);
  if (argc < 3)  // "routes": the pairs come on stdin, "SRC>DST" a line
    return 0;
  std::string pair;
  while (std::getline(std::cin, pair)) {
    auto* a = e.host_by_name(pair.substr(0, pair.find('>')));
    auto* b = e.host_by_name(pair.substr(pair.find('>') + 1));
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    try {
      a->route_to(b, links, &latency);
    } catch (std::exception const& error) {
      std::printf("NOROUTE %s %s\n", a->get_cname(), b->get_cname());
      std::fflush(stdout);
      continue;
    }
    std::printf("ROUTE %s %s %zu %.17g", a->get_cname(), b->get_cname(), links.size(), latency);
    for (auto* link : links)
      std::printf(" %s", link->get_cname());
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def simgrid_loader(tmp_path_factory) -> str:
    return build_simgrid_program(tmp_path_factory, LOADER, "simgrid-loader")


def simgrid_loads(loader: str, path: str) -> tuple[list[str] | None, str]:
    """SimGrid's hosts once it has loaded and sealed `path`, or None and why it refused it."""
    done = subprocess.run([loader, path, "--log=root.thres:critical"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not done.stdout.startswith("HOSTS "):
        return None, (done.stdout + done.stderr)[-1500:]
    return re.findall(r"^HOST (.*)$", done.stdout, flags=re.M), ""


Route = tuple[int, float, tuple[str, ...]]  # links, latency, the links' names in SimGrid's order
ROUTES_TIMEOUT = 30  # s: SimGrid 3.32 loops forever on some routes (Dijkstra, unreachable nodes)


def simgrid_routes(loader: str, path: str, routes: bool = True, timeout: float = ROUTES_TIMEOUT,
                   pairs: list[tuple[str, str]] | None = None) -> tuple[int, dict[tuple[str, str], Route | None]]:
    """SimGrid's route between every two hosts of `path` (a host to itself included), or the
    `pairs` given; None where SimGrid refuses it (an exception, or the process aborting, crashing
    or looping on it: the pairs after it are then asked again)."""
    hosts, why = simgrid_loads(loader, path)
    assert hosts is not None, f"SimGrid refused {path}:\n{why}"
    pending = (list(pairs) if pairs is not None else [(a, b) for a in hosts for b in hosts]) if routes else []
    found: dict[tuple[str, str], Route | None] = {}
    while pending:
        try:
            done = subprocess.run([loader, path, "routes", "--log=root.thres:critical"], capture_output=True, text=True,
                                  input="".join(f"{a}>{b}\n" for a, b in pending), timeout=timeout)
            stdout, ended = done.stdout, done.returncode == 0
        except subprocess.TimeoutExpired as expired:  # (SimGrid 3.32 loops forever on some Dijkstra routes)
            stdout, ended = (expired.stdout or b"").decode(), False
        for line in stdout.splitlines():
            words = line.split(" ")
            if words[0] == "ROUTE":
                found[(words[1], words[2])] = (int(words[3]), float(words[4]), tuple(words[5:]))
            elif words[0] == "NOROUTE":
                found[(words[1], words[2])] = None
        answered = sum(1 for pair in pending if pair in found)
        assert pending[:answered] == [pair for pair in pending if pair in found]
        if not ended:  # the next pair is the one SimGrid stopped on
            found[pending[answered]] = None
            answered += 1
        pending = pending[answered:]
    return len(hosts), found


def joulesim_route(platform, a: str, b: str) -> Route | None:
    """joulesim's route between two hosts (by name; the master too), as SimGrid's route_to gives
    it; None when joulesim refuses it."""
    network = platform.network
    try:
        found = network.message_route(a, b)
    except InputError:
        return None
    return None if found is None else (len(found[0]), found[1], tuple(network.names[r] for r in found[0]))


def same_route(ours: Route | None, simgrid: Route | None) -> bool:
    """The same links (in any order: SimGrid's Dijkstra lists each hop's links backwards, and the
    order changes nothing in its sharing) and the same latency to the last bit."""
    if ours is None or simgrid is None:
        return ours is simgrid
    return ours[:2] == simgrid[:2] and sorted(ours[2]) == sorted(simgrid[2])


def compare_with_simgrid(loader: str, path: str, master_host: str | None = None, timeout: float = ROUTES_TIMEOUT,
                         pairs: list[tuple[str, str]] | None = None) -> int:
    platform = load_platform(path, master_host=master_host)
    # Without links (energy2, homogeneous240, grid_table2...) joulesim asks no route; SimGrid then
    # has empty routes in one Full zone, and none between zones: loaded and sealed only.
    hosts, routes = simgrid_routes(loader, path, routes=platform.network is not None, timeout=timeout, pairs=pairs)
    assert hosts == 1 + platform.nb_compute + len(platform.storage_hosts)
    # (a host to itself included: a cluster's host link up and down, a Full zone's loopback)
    if platform.network is None:  # no links: SimGrid's routes are empty too
        assert all(route is not None and route[0] == 0 for route in routes.values())
        return 0
    compared = 0
    for (a, b), expected in routes.items():
        ours = joulesim_route(platform, a, b)
        assert same_route(ours, expected), (a, b, ours, expected)
        compared += 1
    return compared


XML_PLATFORMS = [name for name in list_shipped_platforms() if shipped_platform_path(name).endswith(".xml")]


@pytest.mark.parametrize("name", XML_PLATFORMS)
def test_each_shipped_xml_platform_loads_and_routes_in_simgrid(simgrid_loader, name):
    compare_with_simgrid(simgrid_loader, shipped_platform_path(name))


def test_the_shipped_xml_platforms_are_all_there():
    assert len(XML_PLATFORMS) == 14


# Hosts named so that their string order is neither their order in the file nor a natural one
# (digits, case, punctuation, a space, UTF-8), in two zones and a cluster, two of them storage.
NUMBERING = ('<zone id="top" routing="Full"><zone id="z2" routing="Full"><host id="n10" speed="1Gf"/>'
             '<host id="n-1" speed="1Gf"/><host id="N2" speed="1Gf"/><host id="n\u00e9" speed="1Gf"/>'
             '<host id="io9" speed="1Gf"><prop id="role" value="storage"/></host><host id="n 1" speed="1Gf"/></zone>'
             '<zone id="z1" routing="Full"><host id="n2" speed="1Gf"/><host id="n_1" speed="1Gf"/><host id="Z" speed="1Gf"/>'
             '<host id="io10" speed="1Gf"><prop id="role" value="storage"/></host><host id="master_host" speed="1Gf"/>'
             '<host id="n01" speed="1Gf"/></zone>'
             '<cluster id="c" prefix="n" suffix=".x" radical="9-11,1" speed="1Gf" bw="1GBps" lat="0"/></zone>')


def test_hosts_are_numbered_in_simgrids_order(simgrid_loader, tmp_path):
    """Batsim 4.2.1 numbers compute machines, then storage machines, in the order SimGrid 3.32
    lists the platform's hosts (Engine::get_all_hosts: by name, as C++ strings compare); so does
    joulesim, on every shipped XML platform and on NUMBERING."""
    paths = [shipped_platform_path(name) for name in XML_PLATFORMS] + [platform_file(tmp_path, NUMBERING, "numbering.xml")]
    for path in paths:
        simgrid, why = simgrid_loads(simgrid_loader, path)
        assert simgrid is not None, why
        platform = load_platform(path)
        for hosts in (platform.compute_hosts, platform.storage_hosts):
            names = {h.name for h in hosts}
            assert [h.name for h in hosts] == [name for name in simgrid if name in names], path
    assert [h.name for h in platform.compute_hosts] == ["N2", "Z", "n 1", "n-1", "n01", "n1.x", "n10", "n10.x", "n11.x",
                                                        "n2", "n9.x", "n_1", "n\u00e9"]
    assert [(h.id, h.name) for h in platform.storage_hosts] == [(13, "io10"), (14, "io9")]


README_JSON = re.search(r"```json\n(.*?)```", (ROOT / "docs" / "reference" / "platforms.md").read_text(),
                        flags=re.S).group(1)


def json_platforms(tmp_path) -> dict[str, str]:
    readme = tmp_path / "readme.json"
    readme.write_text(README_JSON)
    return {"cluster32.json": shipped_platform_path("cluster32.json"), "grid_table2.json": shipped_platform_path("grid_table2.json"),
            "readme.json": str(readme)}


@pytest.mark.parametrize("name", ["cluster32.json", "grid_table2.json", "readme.json"])
def test_an_exported_json_platform_loads_in_simgrid_with_joulesims_routes(simgrid_loader, tmp_path, name):
    xml = tmp_path / "exported.xml"
    xml.write_text(export_xml(json_platforms(tmp_path)[name]))
    compared = compare_with_simgrid(simgrid_loader, str(xml))
    assert compared == {"cluster32.json": 33 * 33, "grid_table2.json": 0, "readme.json": 33 * 33}[name]


def host_view(host) -> tuple:
    return (host.id, host.name, host.speeds, host.pstate, host.role, host.properties, host.zone_properties,
            host.wattage_per_state, host.wattage_off, host.sleep_pstates, host.cores)


@pytest.mark.parametrize("name", ["cluster32.json", "grid_table2.json", "readme.json"])
def test_export_xml_gives_joulesim_the_same_platform(tmp_path, name):
    source = json_platforms(tmp_path)[name]
    xml = tmp_path / "exported.xml"
    xml.write_text(export_xml(source))
    a, b = load_platform(source), load_platform(str(xml))
    assert host_view(a.master) == host_view(b.master)
    assert [host_view(h) for h in a.compute_hosts + a.storage_hosts] == [host_view(h) for h in b.compute_hosts + b.storage_hosts]
    assert (a.network is None) == (b.network is None)
    if a.network is not None:
        names = [a.master.name] + [h.name for h in a.compute_hosts]
        for src in names:
            for dst in names:
                ra, rb = a.network.message_route(src, dst), b.network.message_route(src, dst)
                assert [a.network.names[r] for r in ra[0]] == [b.network.names[r] for r in rb[0]] and ra[1] == rb[1], (src, dst)


def test_a_run_on_the_exported_xml_writes_the_same_files(tmp_path):
    from joulesim import simulate

    source = shipped_platform_path("cluster32.json")
    xml = tmp_path / "cluster32.xml"
    xml.write_text(export_xml(source))
    outputs = []
    for platform in (source, str(xml)):
        prefix = tmp_path / Path(platform).suffix[1:] / "out"
        simulate(platform, "default", "easy", export=str(prefix))
        outputs.append({p.name: p.read_bytes() for p in prefix.parent.iterdir() if not p.name.endswith("schedule.csv")})
    assert len(outputs[0]) == 3 and outputs[0] == outputs[1]  # jobs, machine states, Pajé trace
    # and cluster32.json is now what it says it is: cluster32.xml
    prefix = tmp_path / "shipped" / "out"
    simulate("cluster32.xml", "default", "easy", export=str(prefix))
    assert (prefix.parent / "out_jobs.csv").read_bytes() == outputs[0]["out_jobs.csv"]


def test_export_xml_command_writes_a_file_or_stdout_and_refuses_to_overwrite(tmp_path):
    command = [sys.executable, "-m", "joulesim.cli.main", "platform", "export-xml", shipped_platform_path("cluster32.json")]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0 and shown.stdout.startswith("<?xml") and '<link id="master_link"' in shown.stdout
    target = tmp_path / "c.xml"
    written = subprocess.run(command + ["-o", str(target)], capture_output=True, text=True, timeout=120)
    assert written.returncode == 0 and target.read_text() == shown.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["c.xml"]  # no .part left
    again = subprocess.run(command + ["-o", str(target)], capture_output=True, text=True, timeout=120)
    assert again.returncode != 0 and "exists already" in again.stderr and "--force" in again.stderr
    assert "Traceback" not in again.stderr


@pytest.mark.parametrize("data, needles", [
    ({"master": {"name": "m", "link": {"bw": "1GBps"}},
      "clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "properties": {"rack": "r1"}}]},
     ["$.clusters[0] ('c')", "properties that are not among its zone_properties", "add the cluster's properties to its zone_properties"]),
])
def test_export_xml_refuses_what_xml_cannot_say(tmp_path, data, needles):
    with pytest.raises(InputError) as info:
        export_xml(write_json(tmp_path, data, name="p.json"))
    for needle in needles:
        assert needle in str(info.value)


def test_export_xml_takes_shipped_names_and_refuses_xml():
    assert export_xml("cluster32.json") == export_xml(shipped_platform_path("cluster32.json"))
    with pytest.raises(InputError) as info:
        export_xml("cluster32.xml")
    assert "is not a JSON platform" in str(info.value)
    with pytest.raises(InputError) as info:
        export_xml("/no/such.json")
    assert "no such file" in str(info.value)


def test_export_xml_refuses_a_node_platform(tmp_path):
    path = ROOT / "experiments" / "irmasim_grid" / "exp2" / "platform.json"
    with pytest.raises(InputError) as info:
        export_xml(str(path))
    assert "node platform" in str(info.value)


def test_cluster_properties_that_are_zone_properties_too_go_on_a_zone_around_it(tmp_path):
    data = {"master": {"name": "master_host", "link": {"bw": "1GBps"}},
            "clusters": [{"id": "c", "prefix": "n", "speed": "1Gf", "count": 2, "bw": "1GBps", "properties": {"rack": "r1"},
                          "zone_properties": {"rack": "r1", "site": "lyon"}}]}
    source = write_json(tmp_path, data, name="p.json")
    text = export_xml(source)
    assert '<zone id="c_zone" routing="Full">' in text and '<prop id="site" value="lyon"/>' in text
    xml = tmp_path / "p.xml"
    xml.write_text(text)
    host = load_platform(str(xml)).compute_hosts[0]
    assert host.properties == {"rack": "r1"} and host.zone_properties == {"site": "lyon", "rack": "r1"}


# ---------------------------------------------------------------- JSON master link
@pytest.mark.parametrize("data, needles", [
    ({"master": {"name": "m"}, "clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps"}]},
     ["$.master", "the master host has no link", '"link": {"bw"']),
    ({"master": {"name": "m", "link": {"bw": "1GBps"}}, "clusters": [{"id": "c", "speed": "1Gf", "count": 2}]},
     ["$.master.link", "no network"]),
    ({"master": {"name": "m", "link": {"bw": "1GBps"}}, "hosts": [{"name": "h", "speed": "1Gf", "link": {"bw": "1GBps"}}],
      "clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps"}]},
     ["$.hosts[0] ('h').link", "only the master host has a link"]),
])
def test_json_master_link_errors(tmp_path, data, needles):
    with pytest.raises(InputError) as info:
        load_platform(write_json(tmp_path, data, name="p.json"))
    for needle in needles:
        assert needle in str(info.value)


# ---------------------------------------------------------------- refusals as SimGrid's
def platform_file(tmp_path, zone: str, name="p.xml") -> str:
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                    f'<platform version="4.1">\n{zone}\n</platform>\n')
    return str(path)


HOSTS = '<host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/>'
LINK = '<link id="l" bandwidth="1GBps" latency="1us"/>'
ROUTE = '<route src="a" dst="master_host"><link_ctn id="l"/></route>'
CLUSTER = '<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>'
MASTER_ZONE = '<zone id="mz" routing="Full"><host id="master_host" speed="1Gf"/></zone>'


@pytest.mark.parametrize("zone, needles", [
    (f'<zone id="z" routing="Full">{HOSTS}{ROUTE}{LINK}</zone>', ["<link id='l'> in <zone id='z'>, after <route src='a' dst='master_host'>"]),
    (f'<zone id="z" routing="Full">{HOSTS}<prop id="k" value="v"/></zone>', ["<prop id='k'> in <zone id='z'>, after <host id='master_host'>"]),
    (f'<zone id="z" routing="Full">{MASTER_ZONE}{CLUSTER}<host id="x" speed="1Gf"/></zone>',
     ["<host id='x'> in <zone id='z'>, after <cluster id='c'>", "a zone holds hosts or zones, not both"]),
    (f'<zone id="z" routing="Full">{MASTER_ZONE}<zone id="y" routing="Full"><host id="b" speed="1Gf"/></zone>{LINK}'
     f'<zoneRoute src="mz" dst="y" gw_src="master_host" gw_dst="b"><link_ctn id="l"/></zoneRoute>'
     f'<zone id="late" routing="Full"/></zone>', ["<zone id='late'> in <zone id='z'>, after <zoneRoute src='mz' dst='y'>"]),
    (f'<zone id="z" routing="Full">{HOSTS}<host id="b" speed="1Gf"><link_ctn id="l"/></host></zone>', ["<link_ctn id='l'> in <host id='b'>"]),
    (f'<zone id="z" routing="Full">{HOSTS}{LINK}<route src="a" dst="master_host"><link_ctn id="l"/><prop id="k" value="v"/></route></zone>',
     ["<prop id='k'> in <route src='a' dst='master_host'>, after <link_ctn id='l'>", "only <link_ctn>"]),
    (f'<zone id="z" routing="Full">{MASTER_ZONE}{CLUSTER}</zone><zone id="second" routing="Full"/>'.replace("</zone><zone id=\"second\"", "</zone>\n<config/><zone id=\"second\""),
     ["<config> in <platform>, after <zone id='z'>", "put <config> first"]),
])
def test_elements_out_of_simgrids_order_are_refused(tmp_path, zone, needles):
    with pytest.raises(InputError) as info:
        load_platform(platform_file(tmp_path, zone))
    message = str(info.value)
    assert "is not allowed here" in message or "holds" in message, message
    for needle in needles:
        assert needle in message, message


def test_the_same_elements_in_simgrids_order_load(tmp_path):
    zone = f'<zone id="z" routing="Full"><prop id="k" value="v"/>{HOSTS}{LINK}{ROUTE}</zone>'
    assert load_platform(platform_file(tmp_path, zone)).nb_compute == 1


def test_a_link_without_latency_is_refused(tmp_path):
    zone = f'<zone id="z" routing="Full">{HOSTS}<link id="l" bandwidth="1GBps"/>{ROUTE}</zone>'
    with pytest.raises(InputError) as info:
        load_platform(platform_file(tmp_path, zone))
    assert "<link id='l'>" in str(info.value) and "'latency'" in str(info.value)


def test_a_master_in_a_none_zone_is_refused(tmp_path):
    zone = (f'<zone id="z" routing="Full"><zone id="mz" routing="None"><host id="master_host" speed="1Gf"/></zone>{CLUSTER}{LINK}'
            '<zoneRoute src="c" dst="mz" gw_src="nc_router" gw_dst="master_host"><link_ctn id="l"/></zoneRoute></zone>')
    with pytest.raises(InputError) as info:
        load_platform(platform_file(tmp_path, zone))
    message = str(info.value)
    assert "zone 'mz' (routing=\"None\"), master host 'master_host'" in message
    assert "There can't be route in an Empty zone" in message and 'routing="Full"' in message
    assert load_platform(platform_file(tmp_path, zone.replace('routing="None"', 'routing="Full"'), "ok.xml")).nb_compute == 2


def test_a_host_routed_to_itself_inside_a_none_zone_is_refused_when_asked(tmp_path):
    zone = (f'<zone id="z" routing="Full">{MASTER_ZONE}<zone id="n" routing="None"><host id="a" speed="1Gf"/></zone>{LINK}'
            '<zoneRoute src="mz" dst="n" gw_src="master_host" gw_dst="a"><link_ctn id="l"/></zoneRoute></zone>')
    network = load_platform(platform_file(tmp_path, zone)).network
    assert network.message_route("master_host", "a")[0]  # through the gateway itself: SimGrid routes it too
    with pytest.raises(InputError) as info:
        network.message_route("a", "a")
    assert "zone 'n' has routing None" in str(info.value) and "There can't be route in an Empty zone" in str(info.value)


# ---------------------------------------------------------------- Batsim's master
def test_master_host_with_role_master_runs_with_a_warning(tmp_path):
    zone = '<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"><prop id="role" value="master"/></host></zone>'
    path = platform_file(tmp_path, zone)
    platform = load_platform(path)
    assert platform.master.name == "master_host" and len(platform.warnings) == 1
    assert "role 'master,master'" in platform.warnings[0] and "remove its role property" in platform.warnings[0]
    run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", path, "-w", "default", "-d", "fcfs",
                          "-e", str(tmp_path / "out" / "r")], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr.count("Batsim 4.2.1") == 1, run.stderr[-2000:]
    portable = platform_file(tmp_path, zone.replace('<prop id="role" value="master"/>', ""), "portable.xml")
    assert load_platform(portable).warnings == [] and load_platform(portable).master.properties == {"role": "master"}


def test_a_role_master_beside_a_host_named_master_host_warns(tmp_path):
    zone = ('<zone id="z" routing="Full"><host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/>'
            '<host id="boss" speed="1Gf"><prop id="role" value="master"/></host></zone>')
    platform = load_platform(platform_file(tmp_path, zone))
    assert platform.master.name == "boss" and [h.name for h in platform.compute_hosts] == ["a", "master_host"]
    assert len(platform.warnings) == 1 and "There are two master hosts" in platform.warnings[0]


def test_json_platforms_carry_no_batsim_warning():
    assert load_platform("cluster32.json").warnings == []
    assert all(load_platform(name).warnings == [] for name in XML_PLATFORMS)


def test_cluster32_json_says_what_it_describes():
    data = json.loads(Path(shipped_platform_path("cluster32.json")).read_text())
    assert data["master"]["link"] == {"id": "master_link", "bw": "10GBps", "lat": "1us"}


@pytest.mark.parametrize("element, needles", [
    ('<host id="a" speed="1Gf" watts="3"/>', ["<host id='a'>, watts", "Bad attribute"]),
    ('<host id="a" speed="1Gf" sped="2Gf"/>', ["<host id='a'>, sped", "did you mean 'speed'?"]),
])
def test_unknown_attributes_are_refused(tmp_path, element, needles):
    zone = f'<zone id="z" routing="Full">{element}<host id="master_host" speed="1Gf"/></zone>'
    with pytest.raises(InputError) as info:
        load_platform(platform_file(tmp_path, zone))
    for needle in needles:
        assert needle in str(info.value)


def test_a_cluster_pstate_is_refused_as_simgrid_does(tmp_path):
    cluster = CLUSTER.replace("/>", ' pstate="0"/>')
    zone = f'<zone id="z" routing="Full">{MASTER_ZONE}{cluster}</zone>'
    with pytest.raises(InputError) as info:
        load_platform(platform_file(tmp_path, zone))
    assert "<cluster id='c'>, pstate" in str(info.value)


def test_a_platform_without_links_exports_as_one_zone(tmp_path):
    """As Batsim's platforms without a network: every host in one zone (between zones SimGrid
    finds no route, and Batsim's first message to the master aborts: measured with Batsim 4.2.1
    on grid_table2 exported with a zone per cluster)."""
    text = export_xml(shipped_platform_path("grid_table2.json"))
    assert text.count("<zone ") == 1 and text.count("<host ") == 1394
    data = {"master": {"name": "master_host"}, "clusters": [{"id": "c", "speed": "1Gf", "count": 2, "zone_properties": {"site": "a"}}]}
    with pytest.raises(InputError) as info:
        export_xml(write_json(tmp_path, data, name="p.json"))
    assert "zone_properties" in str(info.value) and "one zone" in str(info.value)


# ---------------------------------------------------------------- a host's transfers to itself
def routed_as_simgrid_routes(loader: str, tmp_path, zone: str, pairs: int, name: str = "p.xml"):
    """The network of a platform whose `pairs` routes (every host to every host, itself included)
    are those SimGrid gives."""
    path = platform_file(tmp_path, zone, name)
    assert compare_with_simgrid(loader, path) == pairs
    return load_platform(path).network


def test_loopback_routes_are_those_simgrid_routes(simgrid_loader, tmp_path):
    """A Full zone's route from a host to itself is that host's loopback; the other hosts of Full
    and Floyd zones cross SimGrid's own `__loopback__` link (1 link, latency 0): every pair, a
    host to itself included, routed as SimGrid routes it."""
    zone = ('<zone id="z" routing="Full">'
            '<zone id="f" routing="Full"><host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/>'
            '<host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1us"/>'
            '<link id="lo" bandwidth="100MBps" latency="1ms"/><link id="lo2" bandwidth="1GBps" latency="3us"/>'
            '<route src="master_host" dst="a"><link_ctn id="l"/></route><route src="a" dst="b"><link_ctn id="l"/></route>'
            '<route src="master_host" dst="b"><link_ctn id="l"/></route>'
            '<route src="a" dst="a"><link_ctn id="lo"/><link_ctn id="lo2"/></route></zone>'
            '<zone id="s" routing="Floyd"><host id="c" speed="1Gf"/><host id="d" speed="1Gf"/>'
            '<link id="m" bandwidth="1GBps" latency="1us"/><route src="c" dst="d"><link_ctn id="m"/></route></zone>'
            '<link id="w" bandwidth="1GBps" latency="1us"/>'
            '<zoneRoute src="f" dst="s" gw_src="master_host" gw_dst="c"><link_ctn id="w"/></zoneRoute></zone>')
    network = routed_as_simgrid_routes(simgrid_loader, tmp_path, zone, 25)
    assert network.message_route("a", "a") == ((network.names.index("lo"), network.names.index("lo2")), 1e-3 + 3e-6)
    assert network.message_route("b", "b") == network.message_route("d", "d") == ((network.loopback,), 0.0)


@pytest.mark.parametrize("routing", ["Floyd", "Dijkstra", "DijkstraCache"])
def test_a_symmetrical_route_from_a_host_to_itself_in_a_shortest_path_zone_is_refused_as_simgrid_aborts(simgrid_loader, tmp_path, routing):
    """SimGrid 3.32 declares a symmetrical route twice: a Floyd zone aborts on the second ("The
    route between c and c already exists"), a Dijkstra one crashes. With symmetrical="NO" it is
    the host's loopback, as in a Full zone (Dijkstra lists its links backwards)."""
    zone = (f'<zone id="s" routing="{routing}"><host id="master_host" speed="1Gf"/><host id="c" speed="1Gf"/>'
            '<link id="m" bandwidth="1GBps" latency="1us"/><link id="n" bandwidth="1GBps" latency="3us"/>'
            '<route src="c" dst="master_host"><link_ctn id="m"/></route>'
            '<route src="c" dst="c"><link_ctn id="m"/><link_ctn id="n"/></route></zone>')
    path = platform_file(tmp_path, zone)
    assert simgrid_loads(simgrid_loader, path)[0] is None
    with pytest.raises(InputError) as info:
        load_platform(path)
    message = str(info.value)
    assert "<route src='c' dst='c'>" in message and "symmetrical" in message and 'add symmetrical="NO"' in message
    network = routed_as_simgrid_routes(simgrid_loader, tmp_path, zone.replace('dst="c">', 'dst="c" symmetrical="NO">'), 4)
    assert network.message_route("c", "c") == ((network.names.index("m"), network.names.index("n")), 1e-6 + 3e-6)


def test_a_cluster_s_loopback_links_route_as_simgrid_s(simgrid_loader, tmp_path):
    zone = ('<zone id="z" routing="Full"><zone id="mz" routing="Full"><host id="master_host" speed="1Gf"/></zone>'
            '<cluster id="c" prefix="n" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="1us" bb_bw="10GBps" '
            'bb_lat="2us" loopback_bw="5GBps" loopback_lat="7us"/><link id="w" bandwidth="1GBps" latency="1us"/>'
            '<zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="nc_router"><link_ctn id="w"/></zoneRoute></zone>')
    network = routed_as_simgrid_routes(simgrid_loader, tmp_path, zone, 16)
    loopback = network.names.index("c_link_1_loopback")
    assert network.message_route("n1", "n1") == ((loopback,), 7e-6)
    assert (network.capacity[loopback], network.fatpipe[loopback]) == (5e9, True)


# ---------------------------------------------------------------- the load verdict, both ways
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "batsim-energy-and-kills"


def reference_masters() -> dict[str, str | None]:
    """The reference bundle's platforms, each with the --master-host Batsim was given for it."""
    masters: dict[str, str | None] = {path.name: None for path in sorted((REFERENCE / "inputs").glob("*.xml"))}
    for summary in sorted((REFERENCE / "cases").glob("*/summary.json")):
        case = json.loads(summary.read_text())
        flags = case.get("flags", [])
        if "-m" in flags:
            masters[Path(case["platform"]).name] = flags[flags.index("-m") + 1]
    return masters


def joulesim_verdict_of_route(network, src: str, dst: str) -> str | None:
    try:
        network.message_route(src, dst)
    except InputError as error:
        return str(error)
    return None


def joulesim_verdict(path: str, master_host: str | None = None) -> str | None:
    try:
        load_platform(path, master_host=master_host)
    except InputError as error:
        return str(error)
    return None


@pytest.mark.parametrize("name", XML_PLATFORMS)
def test_each_shipped_xml_platform_loads_in_both(simgrid_loader, name):
    path = shipped_platform_path(name)
    assert simgrid_loads(simgrid_loader, path)[0] is not None and joulesim_verdict(path) is None


def test_each_reference_platform_loads_and_routes_in_both_as_batsim_ran_it(simgrid_loader):
    """The platforms Batsim 4.2.1 ran in ../shared/reference/batsim-energy-and-kills (a Vivaldi
    zone, a Full zone without routes to the master, Floyd, Dijkstra, clusters): SimGrid and
    joulesim load each, and route every pair of hosts alike (a refused route refused by both)."""
    if not REFERENCE.is_dir():
        pytest.skip(f"{REFERENCE} is absent: Batsim's reference runs live in ../shared/reference beside the checkout")
    masters = reference_masters()
    assert {"vivaldi8.xml", "full_nomaster8.xml", "floyd8.xml", "dijkstra8.xml"} <= masters.keys()
    for name, master in masters.items():
        path = str(REFERENCE / "inputs" / name)
        assert joulesim_verdict(path, master) is None, name
        compare_with_simgrid(simgrid_loader, path, master)


def zone_file(tmp_path, name: str, zone: str) -> str:
    return platform_file(tmp_path, zone, name + ".xml")


CONFIG = '<config><prop id="{key}" value="{value}"/></config>'
MASTER_F = '<zone id="mz" routing="Full"><host id="master_host" speed="1Gf"/></zone>'
TWO = '<host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/>'
L = '<link id="l" bandwidth="1GBps" latency="1us"/><link id="m" bandwidth="10MBps" latency="3us"/>'

# Files SimGrid 3.32 refuses when it loads them (each checked against it below), and a piece of
# the line joulesim refuses them with.
REFUSED = {
    "vivaldi-two-coordinates": ('<zone id="v" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="1 2"/>'
                                '<host id="master_host" speed="1Gf" coordinates="0 0 0"/></zone>', "must have 3 dimensions"),
    "full-router-coordinates": (f'<zone id="f" routing="Full">{TWO}<router id="r" coordinates="0  0 0"/></zone>', "router 'r', coordinates"),
    "peer-in-a-full-zone": (f'<zone id="z" routing="Full">{MASTER_F}<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>',
                            "can only be used in Vivaldi netzones"),
    "peer-outside-zones": ('<zone id="v" routing="Vivaldi"><host id="master_host" speed="1Gf" coordinates="0 0 0"/></zone>'
                           '<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>', "outside any zone"),
    "vivaldi-route-between-hosts": (f'<zone id="v" routing="Vivaldi">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route></zone>',
                                    "only routes are from a host to itself"),
    "cluster-route-between-hosts": (f'<zone id="k" routing="Cluster">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route></zone>',
                                    "only routes are from a host to itself"),
    "floyd-symmetrical-loopback": (f'<zone id="f" routing="Floyd">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route>'
                                   '<route src="a" dst="a"><link_ctn id="m"/></route></zone>', "already exists"),
    "dijkstra-symmetrical-loopback": (f'<zone id="d" routing="Dijkstra">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route>'
                                      '<route src="a" dst="a"><link_ctn id="m"/></route></zone>', "already exists"),
    "zone-route-through-one-gateway": (f'<zone id="z" routing="Full">{MASTER_F}<zone id="o" routing="Full"><host id="a" speed="1Gf"/></zone>{L}'
                                       '<zoneRoute src="mz" dst="o" gw_src="master_host" gw_dst="master_host"><link_ctn id="l"/></zoneRoute></zone>',
                                       "Cannot define a NetzoneRoute from 'master_host' to itself"),
    "cluster-without-bw-and-lat": ('<zone id="z" routing="Full"><cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf"/>'
                                   f'{MASTER_F}</zone>', "<cluster> has no 'bw', 'lat' attributes"),
    "cluster-without-suffix": ('<zone id="z" routing="Full"><cluster id="c" prefix="n" radical="0-1" speed="1Gf" bw="1GBps" '
                               f'lat="1us"/>{MASTER_F}</zone>', "Required attribute `suffix' not set for `cluster' element"),
    "cabinet-without-lat": (f'<zone id="z" routing="Full">{MASTER_F}<zone id="k" routing="Cluster"><router id="kr"/>'
                            '<cabinet id="cab" prefix="h" suffix="" radical="3-5" speed="1Gf" bw="125MBps"/>'
                            '<backbone id="kbb" bandwidth="2.25GBps" latency="500us"/></zone></zone>', "<cabinet> has no 'lat'"),
    "zone-without-routing": ('<zone id="z"><host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/></zone>',
                             "has no 'routing' attribute"),
    "config-key-batsim-no-net": (CONFIG.format(key="network/coordinates", value="yes") + f'<zone id="v" routing="Vivaldi">{TWO}</zone>',
                                 "Bad config key: network/coordinates"),
    "config-key-old-spelling": (CONFIG.format(key="network/TCP_gamma", value="4194304") + f'<zone id="f" routing="Full">{TWO}</zone>',
                                "did you mean 'network/TCP-gamma'?"),
}

# Files SimGrid 3.32 loads (each checked against it below): joulesim loads them too and routes
# every pair of their hosts as SimGrid does, refusing those SimGrid refuses.
LOADED = {
    "floyd-one-way-loopback": f'<zone id="f" routing="Floyd">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route>'
                              '<route src="a" dst="a" symmetrical="NO"><link_ctn id="m"/><link_ctn id="l"/></route></zone>',
    "dijkstra-one-way-loopback": f'<zone id="d" routing="Dijkstra">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route>'
                                 '<route src="a" dst="a" symmetrical="NO"><link_ctn id="m"/><link_ctn id="l"/></route></zone>',
    "full-without-routes-to-the-master": f'<zone id="f" routing="Full"><host id="b" speed="1Gf"/>{TWO}{L}'
                                         '<route src="a" dst="b"><link_ctn id="l"/><link_ctn id="m"/></route></zone>',
    "bypass-to-itself": f'<zone id="f" routing="Full">{TWO}{L}<route src="a" dst="master_host"><link_ctn id="l"/></route>'
                        '<bypassRoute src="a" dst="a"><link_ctn id="m"/></bypassRoute></zone>',
    "cluster-zone-host-without-host-link": f'<zone id="k" routing="Cluster">{TWO}<host id="b" speed="1Gf"/>{L}'
                                           '<backbone id="bb" bandwidth="1GBps" latency="2us"/><host_link id="b" up="l" down="m"/></zone>',
    "cluster-zone-loopback-route": f'<zone id="k" routing="Cluster">{TWO}{L}<host_link id="a" up="l" down="l"/>'
                                   '<host_link id="master_host" up="m" down="m"/><route src="a" dst="a"><link_ctn id="m"/></route></zone>',
    "vivaldi-host-without-coordinates": '<zone id="v" routing="Vivaldi"><host id="a" speed="1Gf"/><host id="b" speed="1Gf" coordinates="3 4 1"/>'
                                        '<host id="master_host" speed="1Gf" coordinates="-1 0.5 0.25"/></zone>',
    "vivaldi-loopback-route": f'<zone id="v" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="1 2 3"/>'
                              f'<host id="b" speed="1Gf" coordinates="4 6 0.5"/><host id="master_host" speed="1Gf" coordinates="0 0 0"/>{L}'
                              '<route src="a" dst="a"><link_ctn id="l"/><link_ctn id="m"/></route></zone>',
    "vivaldi-peers-behind-a-zone-route": ('<zone id="z" routing="Full"><zone id="v" routing="Vivaldi">'
                                          '<peer id="p1" speed="1Gf" bw_in="100MBps" bw_out="50MBps" coordinates="1.5 -2 0.25"/>'
                                          '<peer id="gw" speed="1Gf" bw_in="1GBps" bw_out="1GBps" coordinates="0 0 -0.75"/></zone>'
                                          f'{MASTER_F}{L}<zoneRoute src="mz" dst="v" gw_src="master_host" gw_dst="gw"><link_ctn id="l"/>'
                                          '</zoneRoute></zone>'),
    "vivaldi-router-gateway": ('<zone id="z" routing="Full"><zone id="v" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="3 4 0.5"/>'
                               '<router id="r" coordinates="-1 -1 2"/></zone>'
                               f'{MASTER_F}{L}<zoneRoute src="mz" dst="v" gw_src="master_host" gw_dst="r"><link_ctn id="m"/>'
                               '</zoneRoute></zone>'),
    "vivaldi-with-child-zones": ('<zone id="v" routing="Vivaldi"><zone id="c" routing="Full"><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
                                 f'{L}<route src="a" dst="b"><link_ctn id="l"/></route></zone>{MASTER_F}</zone>'),
    "cluster-zone-with-child-zones": ('<zone id="k" routing="Cluster"><zone id="c" routing="Full"><host id="a" speed="1Gf"/>'
                                      f'<host id="b" speed="1Gf"/>{L}<route src="a" dst="b"><link_ctn id="l"/></route></zone>{MASTER_F}</zone>'),
    "full-zone-route-to-itself": (f'<zone id="z" routing="Full">{MASTER_F}<zone id="o" routing="Full"><host id="a" speed="1Gf"/>'
                                  f'<host id="b" speed="1Gf"/></zone>{L}'
                                  '<zoneRoute src="mz" dst="o" gw_src="master_host" gw_dst="a"><link_ctn id="l"/></zoneRoute>'
                                  '<zoneRoute src="o" dst="o" gw_src="a" gw_dst="b"><link_ctn id="m"/></zoneRoute></zone>'),
    "cluster-limiter-fatpipe-backbone": (f'<zone id="z" routing="Full">{MASTER_F}<cluster id="c" prefix="n" suffix="" radical="0-2" '
                                         'speed="1Gf" bw="1GBps" lat="1us" sharing_policy="SHARED" bb_bw="10GBps" bb_lat="7ns" '
                                         'bb_sharing_policy="FATPIPE" limiter_link="2GBps"/>'
                                         f'{L}<zoneRoute src="mz" dst="c" gw_src="master_host" gw_dst="nc_router"><link_ctn id="m"/>'
                                         '</zoneRoute></zone>'),
    "cluster-zone-cabinets": (f'<zone id="z" routing="Full">{MASTER_F}<zone id="k" routing="Cluster"><router id="kr"/>'
                              '<cabinet id="cab" prefix="h" suffix="" radical="3-5" speed="1Gf" bw="125MBps" lat="100us"/>'
                              '<backbone id="kbb" bandwidth="2.25GBps" latency="500us"/></zone>'
                              f'{L}<zoneRoute src="mz" dst="k" gw_src="master_host" gw_dst="kr"><link_ctn id="l"/></zoneRoute></zone>'),
    "known-config-key": CONFIG.format(key="network/TCP-gamma", value="4194304") + f'<zone id="f" routing="Full">{TWO}{L}'
                        '<route src="a" dst="master_host"><link_ctn id="l"/></route></zone>',
    # Power properties that do not fit the pstates, as in Batsim's platforms/energy_platform.xml
    # (fewer wattages) and platforms/heterogeneous/platform.xml (more, and sleep pstates that do
    # not exist): loaded, as SimGrid without its energy plugin and Batsim without -E load them;
    # with -E both refuse them (tests/test_power_properties_and_energy_flag.py).
    "wattages-fewer-than-pstates": ('<zone id="f" routing="Full"><host id="a" speed="1Gf, 500Mf, 200Mf">'
                                    '<prop id="wattage_per_state" value="100:200, 90:150"/></host><host id="master_host" speed="1Gf"/>'
                                    f'{L}<route src="a" dst="master_host"><link_ctn id="l"/></route></zone>'),
    "wattages-more-than-pstates": ('<zone id="f" routing="Full"><host id="a" speed="1Gf, 900Mf">'
                                   '<prop id="wattage_per_state" value="4:8, 4:7.2, 1:1, 3:3, 3:3"/><prop id="sleep_pstates" value="2:3:4"/>'
                                   '</host><host id="master_host" speed="1Gf"/>'
                                   f'{L}<route src="a" dst="master_host"><link_ctn id="l"/></route></zone>'),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_simgrid_refuses_to_load_joulesim_refuses(simgrid_loader, tmp_path, name):
    zone, needle = REFUSED[name]
    path = zone_file(tmp_path, name, zone)
    assert simgrid_loads(simgrid_loader, path)[0] is None, f"SimGrid 3.32 loads {name}"
    refused = joulesim_verdict(path)
    assert refused is not None and needle in refused, refused


@pytest.mark.parametrize("name", sorted(LOADED))
def test_what_simgrid_loads_joulesim_loads_and_routes_alike(simgrid_loader, tmp_path, name):
    path = zone_file(tmp_path, name, LOADED[name])
    assert joulesim_verdict(path) is None
    assert compare_with_simgrid(simgrid_loader, path) >= 4


def test_routes_simgrid_refuses_are_refused_and_named(tmp_path):
    """Of the files above, the routes SimGrid 3.32 aborts on: refused when asked, naming why."""
    def refusal(name, src, dst):
        network = load_platform(zone_file(tmp_path, name, LOADED[name])).network
        with pytest.raises(InputError) as info:
            network.message_route(src, dst)
        return str(info.value)

    assert "Please specify the Vivaldi coordinates of Host a" in refusal("vivaldi-host-without-coordinates", "a", "b")
    assert "no link UP from source node" in refusal("vivaldi-loopback-route", "a", "master_host")
    assert "Please specify the Vivaldi coordinates of Zone c" in refusal("vivaldi-with-child-zones", "a", "master_host")
    assert "Bad gateways" in refusal("cluster-zone-with-child-zones", "a", "master_host")


# Files without links but of several zones: SimGrid loads them and routes a host to another
# only inside one zone (empty routes); between zones there is no route (no zoneRoute can be
# declared without links), and Batsim aborts at the first message there.
LINKLESS = {
    "full-top-two-zones": ('<zone id="top" routing="Full"><zone id="a" routing="Full"><host id="h0" speed="1Gf"/>'
                           '<host id="h1" speed="1Gf"/></zone>' + MASTER_F + '</zone>'),
    "floyd-top-two-zones": ('<zone id="top" routing="Floyd"><zone id="a" routing="Full"><host id="h0" speed="1Gf"/>'
                            '</zone>' + MASTER_F + '</zone>'),
    "hosts-and-master-in-one-zone-beside-another": ('<zone id="top" routing="Full"><zone id="za" routing="Full">'
                                                    f'{TWO}</zone><zone id="b" routing="Full"><host id="h9" speed="1Gf"/>'
                                                    '</zone></zone>'),
}


@pytest.mark.parametrize("name", sorted(LINKLESS))
def test_a_file_of_zones_without_links_routes_only_what_simgrid_routes(simgrid_loader, tmp_path, name):
    path = zone_file(tmp_path, name, LINKLESS[name])
    platform = load_platform(path)
    assert platform.network is None and platform.zone_routes is not None
    _, routes = simgrid_routes(simgrid_loader, path)
    refused = 0
    for (a, b), expected in routes.items():
        if a == b:
            continue
        if expected is None:
            refused += 1
            with pytest.raises(InputError, match=r"declares no route from|has no chain of routes from"):
                platform.zone_routes.message_route(a, b)
        else:
            assert expected[0] == 0 and platform.zone_routes.message_route(a, b) == ((), 0.0)
    assert refused == {"hosts-and-master-in-one-zone-beside-another": 4}.get(name, 2 * (len(routes) ** 0.5 - 1))


def test_a_job_on_a_host_with_no_route_to_the_master_stops_the_run_as_batsim_aborts(tmp_path):
    path = zone_file(tmp_path, "two", LINKLESS["full-top-two-zones"])
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", path, "--in-process",
                           "-e", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    # (found when the job's first message is sent: an input found wrong during the run, status 9)
    assert done.returncode == 9 and "Traceback" not in done.stderr
    assert "zone 'top' (routing Full) declares no route from 'a' to 'mz'" in done.stderr


# ---------------------------------------------------------------- Floyd and Dijkstra, as SimGrid chooses
def random_graph_zone(seed: int, routing: str) -> str:
    """Hosts and routers in a random order, joined first by a chain of symmetrical routes (every
    member reaches every other: SimGrid's Dijkstra mis-routes otherwise, tested apart), then by
    random routes of 1 to 3 links, one-way or both ways: many paths of equal cost."""
    rng = random.Random(seed)
    hosts = [f"h{i}" for i in range(rng.randint(2, 5))] + ["master_host"]
    members = hosts + [f"r{i}" for i in range(rng.randint(0, 4))]
    rng.shuffle(members)
    links = "".join(f'<link id="l{i}" bandwidth="{rng.choice(["1GBps", "100MBps"])}" '
                    f'latency="{rng.choice(["1us", "3us", "7ns", "0.5ms"])}" sharing_policy="{rng.choice(["SHARED", "FATPIPE"])}"/>'
                    for i in range(8))
    pairs = [(a, b, True) for a, b in zip(members, members[1:])]
    pairs += [(*rng.sample(members, 2), rng.random() < 0.5) for _ in range(rng.randint(2, 2 * len(members)))]
    declared: set[tuple[str, str]] = set()
    routes = []
    for a, b, both in pairs:
        if (a, b) in declared or (both and (b, a) in declared):
            continue
        declared |= {(a, b), (b, a)} if both else {(a, b)}
        ctn = "".join(f'<link_ctn id="l{rng.randrange(8)}"/>' for _ in range(rng.choice([1, 1, 2, 3])))
        routes.append(f'<route src="{a}" dst="{b}"{"" if both else " symmetrical=" + chr(34) + "NO" + chr(34)}>{ctn}</route>')
    elements = "".join(f'<host id="{m}" speed="1Gf"/>' if m in hosts else f'<router id="{m}"/>' for m in members)
    return f'<zone id="g" routing="{routing}">{elements}{links}{"".join(routes)}</zone>'


@pytest.mark.parametrize("routing", ["Floyd", "Dijkstra"])
def test_shortest_path_zones_choose_simgrids_paths(simgrid_loader, tmp_path, routing):
    """Among equally short paths SimGrid's Floyd and Dijkstra zones choose each their own: 20
    random zones each, every route (a host to itself included) compared with SimGrid's."""
    for seed in range(20):
        compare_with_simgrid(simgrid_loader, zone_file(tmp_path, f"{routing}{seed}", random_graph_zone(seed, routing)))


def test_a_dijkstra_zone_whose_members_cannot_all_reach_each_other_misroutes_as_simgrid(simgrid_loader, tmp_path):
    """One-way routes d -> master_host, b -> master_host, c -> d: from b, SimGrid 3.32's Dijkstra
    never reaches a, c or d, whose costs wrap round (64-bit unsigned) and rewrite master_host's
    predecessor; it then loops forever building b -> master_host, a route declared in the file.
    joulesim computes the same, and refuses the routes SimGrid never finishes."""
    zone = ('<zone id="g" routing="Dijkstra"><host id="master_host" speed="1Gf"/><host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>'
            '<host id="c" speed="1Gf"/><host id="d" speed="1Gf"/><link id="l0" bandwidth="1GBps" latency="1us"/>'
            '<link id="l1" bandwidth="1GBps" latency="2us"/><link id="l2" bandwidth="1GBps" latency="3us"/>'
            '<route src="d" dst="master_host" symmetrical="NO"><link_ctn id="l0"/></route>'
            '<route src="b" dst="master_host" symmetrical="NO"><link_ctn id="l1"/></route>'
            '<route src="c" dst="d" symmetrical="NO"><link_ctn id="l2"/></route></zone>')
    path = zone_file(tmp_path, "wrap", zone)
    network = load_platform(path).network
    with pytest.raises(InputError) as info:
        network.message_route("b", "master_host")
    assert "loops forever" in str(info.value) and 'routing="Floyd"' in str(info.value)
    assert [network.names[r] for r in network.message_route("c", "d")[0]] == ["l2"]
    # SimGrid answers 5 routes, crashes on 9 (a is in no route), loops on the other 11: asked are
    # all but these 11, and one of them (each costs SimGrid's time limit here).
    names = ["master_host", "a", "b", "c", "d"]
    pairs = [(a, b) for a in names for b in names if "loops forever" not in (joulesim_verdict_of_route(network, a, b) or "")]
    assert len(pairs) == 14
    assert compare_with_simgrid(simgrid_loader, path, timeout=3, pairs=pairs + [("b", "master_host")]) == 15
    assert load_platform(zone_file(tmp_path, "floyd", zone.replace("Dijkstra", "Floyd"))).network.message_route("b", "master_host")[1] == 2e-6
