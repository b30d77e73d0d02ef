"""Platform networks: units, SimGrid XML and JSON parsing, routes and latencies, errors, and the
clustered platforms shipped for the Batsim thesis's chapter 5 (seed 001 §5.5)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import parse_bandwidth, parse_latency
from joulesim.simulator.platform.platform_loader import list_shipped_platforms, load_platform, shipped_platform_path

from conftest import load_experiment_script, write_json, zone_body

MASTER = '<zone id="mz" routing="Full"><host id="master_host" speed="1Gf"><prop id="role" value="master"/></host></zone>'
# (docs/reference/platforms.md shows a JSON platform with links; it must route as its XML twin)
PLATFORMS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "platforms.md"


def xml(tmp_path, body, name="net.xml", routing="Full", master=MASTER):
    path = tmp_path / name
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"top\" routing=\"{routing}\">\n{zone_body(body, master)}\n</zone>\n</platform>\n")
    return str(path)



def raises(path, *needles):
    with pytest.raises(InputError) as info:
        load_platform(path)
    msg = str(info.value)
    assert os.path.basename(path) in msg
    for needle in needles:
        assert needle in msg, msg
    return msg


def route_raises(network, src, dst, *needles):
    with pytest.raises(InputError) as info:
        network.route(src, dst)
    msg = str(info.value)
    assert network.source in msg
    for needle in needles:
        assert needle in msg, msg
    return msg


# §11's cluster: 1 Gflop/s hosts, 1 GB/s links with 5 us latency, a backbone with 3 us latency.
SECTION_11 = '<cluster id="c" prefix="n" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="5us" bb_bw="10GBps" bb_lat="3us"/>'


# ---------------------------------------------------------------- units


@pytest.mark.parametrize("text, value", [
    ("1.25GBps", 1.25e9), ("10Gbps", 1.25e9), ("1GiBps", 2.0**30), ("8Mibps", 2.0**20), ("125MBps", 125e6),
    ("5kBps", 5e3), ("5KBps", 5e3), ("1.5Tbps", 1.5e12 / 8), ("1000", 1000.0), ("3Bps", 3.0), (2e9, 2e9), ("1e3kBps", 1e6),
])
def test_bandwidth_units(text, value):
    assert parse_bandwidth("p", "w", text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text, value", [
    ("24ns", 24e-9), ("5us", 5e-6), ("1ms", 1e-3), ("0s", 0.0), ("0", 0.0), ("0.5", 0.5), ("2m", 120.0), ("1h", 3600.0),
    ("1d", 86400.0), ("1w", 604800.0), ("3ps", 3e-12), (1e-6, 1e-6),
])
def test_latency_units(text, value):
    assert parse_latency("p", "w", text) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("parse, text, needles", [
    (parse_bandwidth, "10gbps", ["unknown unit 'gbps'", "case-sensitive", "'GBps' or 'Gbps'"]),
    (parse_bandwidth, "fast", ["'fast'", "not a number"]),
    (parse_bandwidth, "-1Bps", ["non-negative"]),
    (parse_bandwidth, "0GBps", ["zero"]),
    (parse_bandwidth, "1Gf", ["unknown unit 'Gf'", "10Gbps"]),
    (parse_latency, "5 sec", ["unknown unit 'sec'", "24ns"]),
    (parse_latency, "-1s", ["non-negative"]),
    (parse_latency, "1US", ["case-sensitive", "'us'"]),
])
def test_unit_errors(parse, text, needles):
    with pytest.raises(InputError) as info:
        parse("file.xml", "cluster 'c', bw", text)
    for needle in ["file.xml", "cluster 'c', bw", *needles]:
        assert needle in str(info.value), str(info.value)


# ---------------------------------------------------------------- clusters


def test_section_11_cluster_route_and_latency(tmp_path):
    p = load_platform(xml(tmp_path, SECTION_11))
    net = p.network
    assert net.route_names(0, 1) == ["c_link_0_UP", "c_backbone", "c_link_1_DOWN"]
    assert net.route_names(1, 0) == ["c_link_1_UP", "c_backbone", "c_link_0_DOWN"]
    resources, latency = net.route(0, 1)
    assert latency == pytest.approx(13e-6, rel=1e-12)  # 5 us + 3 us + 5 us
    assert [net.capacity[r] for r in resources] == [1e9, 1e10, 1e9]
    assert not net.fatpipe[:-1].any()
    assert net.route(2, 2) == ((), 0.0)  # same host: free
    up, backbone, down = (net.names.index(name) for name in ("c_link_2_UP", "c_backbone", "c_link_2_DOWN"))
    assert net.self_route(2) == ((up, backbone, down), pytest.approx(13e-6, rel=1e-12))  # (as SimGrid: up, down again)
    # the cluster's links and backbone, then SimGrid's loopback (10 GBps, FATPIPE), which the
    # master's Full zone routes the master to itself through
    assert net.nb_resources == 1 + 2 * 4 + 1 == len(net.names) == len(net.capacity) == len(net.fatpipe)
    assert (net.names[-1], net.capacity[-1], net.fatpipe[-1], net.latency[-1]) == ("__loopback__", 10e9, True, 0.0)
    assert net.message_route("master_host", "master_host") == ((net.loopback,), 0.0)
    # the shipped cluster32 is the same cluster (its last host by name, node-9, is resource 31)
    shipped = load_platform("cluster32").network
    assert shipped.route_names(0, 31) == ["cluster_link_0_UP", "cluster_backbone", "cluster_link_9_DOWN"]
    assert shipped.route(0, 31)[1] == pytest.approx(13e-6, rel=1e-12)


def test_shared_splitduplex_fatpipe_resources(tmp_path):
    body = """
    <cluster id="s" prefix="s" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="1us" sharing_policy="SHARED" bb_bw="2GBps" bb_lat="0" bb_sharing_policy="FATPIPE"/>
    <cluster id="d" prefix="d" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="1us" sharing_policy="FULLDUPLEX"/>
    <cluster id="f" prefix="f" suffix="" radical="0-2" speed="1Gf" bw="1GBps" lat="1us" sharing_policy="FATPIPE"/>
    """
    p = load_platform(xml(tmp_path, body))
    net = p.network
    names = {h.name: h.id for h in p.compute_hosts}
    # SHARED: one resource per host link, used by both directions
    assert net.route_names(names["s0"], names["s1"]) == ["s_link_0", "s_backbone", "s_link_1"]
    assert net.route_names(names["s1"], names["s0"]) == ["s_link_1", "s_backbone", "s_link_0"]
    assert net.fatpipe[net.names.index("s_backbone")] and not net.fatpipe[net.names.index("s_link_0")]
    # FULLDUPLEX (SimGrid's old name of SPLITDUPLEX): one resource per direction, no backbone
    assert net.route_names(names["d0"], names["d2"]) == ["d_link_0_UP", "d_link_2_DOWN"]
    assert net.route(names["d0"], names["d2"])[1] == pytest.approx(2e-6)
    # FATPIPE host links
    fat = net.route(names["f0"], names["f1"])[0]
    assert [net.names[r] for r in fat] == ["f_link_0", "f_link_1"] and all(net.fatpipe[r] for r in fat)
    assert net.nb_resources == (3 + 1) + 3 * 2 + 3 + 1  # (+ SimGrid's loopback, for the master's Full zone)


def test_limiter_links_and_router_id(tmp_path):
    body = '<cluster id="c" prefix="n" suffix=".x" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" limiter_link="1.5GBps" router_id="gw"/>'
    net = load_platform(xml(tmp_path, body)).network
    assert net.route_names(0, 1) == ["c_link_0_limiter", "c_link_0_UP", "c_link_1_DOWN", "c_link_1_limiter"]
    assert net.capacity[net.names.index("c_link_0_limiter")] == 1.5e9
    assert net.route(0, 1)[1] == pytest.approx(2e-6)


def test_cluster_props_zone_and_energy(tmp_path):
    body = """
    <cluster id="b" prefix="b-" suffix="" radical="0-1" speed="1Gf, 1f, 1f, 1f" bw="1GBps" lat="1us">
      <prop id="cluster" value="second"/>
      <prop id="wattage_per_state" value="95:190, 9:9, 100:100, 120:120"/>
      <prop id="sleep_pstates" value="1:2:3"/>
    </cluster>
    <cluster id="a" prefix="a-" suffix="" radical="9-10" speed="2Gf" bw="1GBps" lat="1us"><prop id="cluster" value="first"/></cluster>
    """
    path = tmp_path / "props.xml"
    path.write_text(f"<?xml version='1.0'?><platform version=\"4.1\"><zone id=\"top\" routing=\"Full\">"
                    f"<prop id=\"site\" value=\"s\"/>{body}{MASTER}</zone></platform>")
    p = load_platform(str(path))
    # (numbered by name as strings compare, as Batsim does: "a-10" before "a-9")
    assert [(h.id, h.name, h.zone) for h in p.compute_hosts] == [(0, "a-10", "a"), (1, "a-9", "a"), (2, "b-0", "b"), (3, "b-1", "b")]
    assert p.compute_hosts[0].zone_properties == {"site": "s", "cluster": "first"}
    assert p.compute_hosts[2].zone_properties == {"site": "s", "cluster": "second", "wattage_per_state": "95:190, 9:9, 100:100, 120:120",
                                                  "sleep_pstates": "1:2:3"}
    b0 = p.compute_hosts[2]
    assert b0.wattage_per_state == [(95, 190), (9, 9), (100, 100), (120, 120)] and b0.sleep_pstates[0].sleep == 1
    assert p.master.zone == ""


def test_platforms_without_links_have_no_network(tmp_path):
    for name in ("small4", "energy2", "homogeneous240"):
        assert load_platform(name).network is None
    # A <cluster> always has links: SimGrid's DTD requires its bw and lat.
    linkless = xml(tmp_path, '<cluster id="c" prefix="n" suffix="" radical="0-3" speed="1Gf"/>')
    with pytest.raises(InputError, match=r"cluster 'c': <cluster> has no 'bw', 'lat' attributes, which simgrid.dtd "
                                         r"requires .*Required attribute `bw' not set for `cluster' element"):
        load_platform(linkless)


# ---------------------------------------------------------------- zones and routes


TWO_CLUSTERS = """
<cluster id="a" prefix="a-" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" bb_bw="10GBps" bb_lat="2us"/>
<cluster id="b" prefix="b-" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" bb_bw="10GBps" bb_lat="2us"/>
<link id="wan" bandwidth="1.25GBps" latency="10us"/>
"""


def test_nested_clusters_same_and_other_cluster(tmp_path):
    body = TWO_CLUSTERS + '<zoneRoute src="a" dst="b" gw_src="a-a_router" gw_dst="b-b_router"><link_ctn id="wan"/></zoneRoute>'
    p = load_platform(xml(tmp_path, body))
    net = p.network
    assert [h.name for h in p.compute_hosts] == ["a-0", "a-1", "b-0", "b-1"]
    assert net.route_names(0, 1) == ["a_link_0_UP", "a_backbone", "a_link_1_DOWN"]
    assert net.route(0, 1)[1] == pytest.approx(4e-6)
    assert net.route_names(0, 3) == ["a_link_0_UP", "a_backbone", "wan", "b_backbone", "b_link_1_DOWN"]
    assert net.route_names(3, 0) == ["b_link_1_UP", "b_backbone", "wan", "a_backbone", "a_link_0_DOWN"]  # symmetrical
    assert net.route(0, 3)[1] == pytest.approx(1e-6 + 2e-6 + 10e-6 + 2e-6 + 1e-6)
    assert net.route(0, 3) is net.route(0, 3)  # cached


def test_old_names_as_and_asroute(tmp_path):
    path = tmp_path / "old.xml"
    path.write_text(f"""<?xml version='1.0'?><platform version="4"><AS id="top" routing="Full">{MASTER}{TWO_CLUSTERS}
        <ASroute src="a" dst="b" gw_src="a-a_router" gw_dst="b-b_router" symmetrical="NO"><link_ctn id="wan"/></ASroute>
        </AS></platform>""")
    net = load_platform(str(path)).network
    assert net.route_names(1, 2) == ["a_link_1_UP", "a_backbone", "wan", "b_backbone", "b_link_0_DOWN"]
    route_raises(net, 2, 1, "route from host 'b-0' (id 2) to host 'a-1' (id 1)", "zone 'top' (routing Full) declares no route from 'b' to 'a'",
                 "<zoneRoute src=\"b\" dst=\"a\">")


def test_full_zone_routes_and_splitduplex_directions(tmp_path):
    body = """
    <zone id="z" routing="Full">
      <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/>
      <link id="l0" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
      <link id="l1" bandwidth="2GBps" latency="2us"/>
      <link id="fat" bandwidth="1GBps" latency="0" sharing_policy="FATPIPE"/>
      <route src="h0" dst="h1"><link_ctn id="l0" direction="UP"/><link_ctn id="l1"/></route>
      <route src="h1" dst="h2" symmetrical="no"><link_ctn id="fat"/></route>
      <route src="h2" dst="h1" symmetrical="NO"><link_ctn id="l0_DOWN"/></route>
    </zone>"""
    net = load_platform(xml(tmp_path, body)).network
    assert net.route_names(0, 1) == ["l0_UP", "l1"]
    assert net.route_names(1, 0) == ["l1", "l0_DOWN"]  # the reverse crosses the other half
    assert net.route(0, 1)[1] == pytest.approx(3e-6)
    assert net.route_names(1, 2) == ["fat"] and net.fatpipe[net.route(1, 2)[0][0]]
    assert net.route_names(2, 1) == ["l0_DOWN"]
    assert net.link("l1").bandwidth == 2e9 and net.link("l0").policy.value == "SPLITDUPLEX"
    # Undeclared between two hosts: SimGrid's FullZone gives an empty route (no link, no latency).
    assert net.route(0, 2) == ((), 0.0) and net.message_route("h2", "h0") == ((), 0.0)


def test_shortest_path_zone_through_a_router(tmp_path):
    body = """
    <zone id="g" routing="Floyd">
      <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/><host id="h2" speed="1Gf"/><router id="r"/>
      <link id="a" bandwidth="1GBps" latency="1us"/><link id="b" bandwidth="1GBps" latency="1us"/>
      <link id="c" bandwidth="1GBps" latency="1us"/><link id="slow" bandwidth="1GBps" latency="1ms"/>
      <route src="h0" dst="r"><link_ctn id="a"/></route>
      <route src="r" dst="h1"><link_ctn id="b"/></route>
      <route src="h1" dst="h2"><link_ctn id="c"/></route>
      <route src="h0" dst="h2"><link_ctn id="slow"/></route>
    </zone>"""
    net = load_platform(xml(tmp_path, body)).network
    # Fewest links, whatever the latency; of the two 2-link paths from h0 to h1, Floyd-Warshall
    # keeps the one through h2 (members numbered h0, h1, h2, r: h2 is tried before r), and
    # Dijkstra the one through r (r is reached first): both as SimGrid 3.32 routes them.
    assert net.route_names(0, 1) == ["slow", "c"]
    assert net.route_names(2, 0) == ["slow"]
    assert net.route_names(2, 1) == ["c"]
    net = load_platform(xml(tmp_path, body.replace('"Floyd"', '"Dijkstra"'), name="dijkstra.xml")).network
    assert net.route_names(0, 1) == ["a", "b"] and net.route(0, 1)[1] == 1e-6 + 1e-6


def test_hand_built_cluster_zones(tmp_path):
    """SimGrid's examples/platforms/routing_cluster.xml, in short: Cluster zones with host_links,
    backbones and routers, joined by a zoneRoute."""
    body = """
    <zone id="k1" routing="Cluster">
      <router id="router1"/>
      <host id="host1" speed="1Gf"/><link id="l1_UP" bandwidth="125MBps" latency="100us"/><link id="l1_DOWN" bandwidth="125MBps" latency="100us"/>
      <host_link id="host1" up="l1_UP" down="l1_DOWN"/>
      <host id="host2" speed="1Gf"/><link id="l2" bandwidth="125MBps" latency="100us" sharing_policy="SPLITDUPLEX"/>
      <host_link id="host2" up="l2_UP" down="l2_DOWN"/>
      <backbone id="backbone1" bandwidth="2.25GBps" latency="500us"/>
    </zone>
    <zone id="k2" routing="Cluster">
      <router id="router2"/>
      <cabinet id="cab" prefix="host" suffix="" radical="3-4" speed="1Gf" bw="125MBps" lat="100us"/>
    </zone>
    <link id="link1-2" bandwidth="2.25GBps" latency="500us"/>
    <zoneRoute src="k1" dst="k2" gw_src="router1" gw_dst="router2"><link_ctn id="link1-2"/></zoneRoute>
    """
    p = load_platform(xml(tmp_path, body))
    net = p.network
    assert [(h.name, h.zone) for h in p.compute_hosts] == [("host1", "k1"), ("host2", "k1"), ("host3", "k2"), ("host4", "k2")]
    assert net.route_names(0, 1) == ["l1_UP", "backbone1", "l2_DOWN"]
    assert net.route_names(1, 3) == ["l2_UP", "backbone1", "link1-2", "link_host4_DOWN"]
    assert net.route_names(3, 2) == ["link_host4_UP", "link_host3_DOWN"]
    assert net.route(1, 3)[1] == pytest.approx(100e-6 + 500e-6 + 500e-6 + 100e-6)


def test_bypass_route_wins(tmp_path):
    body = """
    <zone id="z" routing="Full">
      <host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/>
      <link id="normal" bandwidth="1GBps" latency="0"/><link id="short" bandwidth="1GBps" latency="0"/>
      <route src="h0" dst="h1"><link_ctn id="normal"/></route>
      <bypassRoute src="h0" dst="h1"><link_ctn id="short"/></bypassRoute>
    </zone>"""
    net = load_platform(xml(tmp_path, body)).network
    assert net.route_names(0, 1) == ["short"] and net.route_names(1, 0) == ["normal"]
    assert net.route(0, 1)[1] == 0.0  # link latency defaults to 0


def test_hosts_are_numbered_by_name_across_clusters_and_zones(tmp_path):
    """As Batsim 4.2.1 numbers them: SimGrid's hosts in the string order of their names, whatever
    their clusters and their order in the file ("node-10" before "node-2")."""
    body = """
    <cluster id="z2" prefix="node-" suffix="" radical="10-11" speed="1Gf" bw="1GBps" lat="1us"/>
    <cluster id="z1" prefix="node-" suffix="" radical="2,9" speed="1Gf" bw="1GBps" lat="1us"/>
    <link id="wan" bandwidth="1GBps" latency="0"/>
    <zoneRoute src="z1" dst="z2" gw_src="node-z1_router" gw_dst="node-z2_router"><link_ctn id="wan"/></zoneRoute>
    """
    p = load_platform(xml(tmp_path, body))
    assert [(h.id, h.name, h.zone) for h in p.compute_hosts] == [(0, "node-10", "z2"), (1, "node-11", "z2"), (2, "node-2", "z1"), (3, "node-9", "z1")]
    assert p.network.route_names(3, 0) == ["z1_link_9_UP", "wan", "z2_link_10_DOWN"]


def test_routes_scale_to_thousands_of_hosts(tmp_path):
    clusters = "".join(f'<cluster id="c{k}" prefix="c{k}-" suffix="" radical="0-923" speed="1Gf" bw="1GBps" lat="1us" '
                       f'bb_bw="10GBps" bb_lat="1us" router_id="r{k}"/>' for k in range(6))
    routes = "".join(f'<zoneRoute src="c{a}" dst="c{b}" gw_src="r{a}" gw_dst="r{b}"><link_ctn id="sw"/></zoneRoute>'
                     for a in range(6) for b in range(a + 1, 6))
    p = load_platform(xml(tmp_path, clusters + '<link id="sw" bandwidth="10GBps" latency="1us"/>' + routes))
    assert p.nb_compute == 5544 and p.network.nb_resources == 6 * (1 + 2 * 924) + 1 + 1  # (+ the loopback)
    # (the last host by name is c5-99)
    assert p.network.route_names(0, 5543) == ["c0_link_0_UP", "c0_backbone", "sw", "c5_backbone", "c5_link_99_DOWN"]


# ---------------------------------------------------------------- XML errors


@pytest.mark.parametrize("body, needles", [
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" lat="1us"/><link id="l" bandwidth="1GBps" latency="0"/>', ["cluster 'c'", "'bw'"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps"/>', ["cluster 'c'", "'lat'"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="10gbps" lat="1us"/>', ["cluster 'c', bw", "unknown unit 'gbps'", "case-sensitive"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="5 sec"/>', ["cluster 'c', lat", "'sec'"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" sharing_policy="HALF"/>', ["cluster 'c', sharing_policy", "'HALF'", "SPLITDUPLEX"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" bb_bw="1GBps" bb_sharing_policy="SPLITDUPLEX"/>', ["bb_sharing_policy", "SHARED, FATPIPE"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" topology="TORUS" topo_parameters="2,2"/>', ["topology", "'TORUS'", "FLAT"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" bb_lat="1us"/>', ["bb_lat", "without bb_bw"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us" router_id="n1"/>', ["'n1'", "used twice"]),
    ('<cluster id="c" prefix="a" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/><cluster id="c" prefix="b" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>',
     ["cluster 'c'", "zone id 'c' is already used"]),
    ('<link id="l"/>' + SECTION_11, ["<link id='l'>", "'bandwidth'"]),
    ('<link id="l" bandwidth="1GBps" latency="1 day"/>' + SECTION_11, ["<link id='l'>, latency", "'day'"]),
    ('<link id="l" bandwidth="1GBps" sharing_policy="WIFI" latency="0"/>' + SECTION_11, ["<link id='l'>, sharing_policy", "WIFI", "not supported"]),
    ('<link id="l" bandwidth="1GBps" bandwidth_file="bw.txt" latency="0"/>' + SECTION_11, ["bandwidth_file", "not supported"]),
    ('<link id="c_link_0" bandwidth="1GBps" latency="0"/>' + SECTION_11.replace('bw="1GBps"', 'bw="1GBps" sharing_policy="SHARED"'), ["link name 'c_link_0' is already used"]),
    ('<link id="x" bandwidth="1GBps" sharing_policy="SPLITDUPLEX" latency="0"/><link id="x_UP" bandwidth="1GBps" latency="0"/>' + SECTION_11, ["'x_UP'", "used twice", "SPLITDUPLEX"]),
    ('<trace_connect kind="BANDWIDTH" trace="t" element="l"/>' + SECTION_11, ["trace_connect", "not supported"]),
    ('<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>' + SECTION_11, ["<peer id='p'>", "routing is Full", "only be used in Vivaldi", 'routing="Vivaldi"']),
    ('<zone id="v" routing="Wifi"><host id="h" speed="1Gf"/></zone>' + SECTION_11, ["zone 'v', routing", 'routing="Wifi"', "not supported"]),
    ('<zone id="v" routing="RuleBased"><host id="h" speed="1Gf"/></zone>' + SECTION_11, ["zone 'v', routing", "unknown routing", "Floyd"]),
    ('<zone id="v"><host id="h" speed="1Gf"/></zone>' + SECTION_11, ["zone 'v'", "'routing'"]),
    ('<zone id="v" routing="None"><host id="h" speed="1Gf"/><host id="i" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="0"/>'
     '<route src="h" dst="i"><link_ctn id="l"/></route></zone>', ["<route src='h' dst='i'>", 'routing="None"', 'routing="Full"']),
    ('<host_link id="x" up="a" down="b"/>' + SECTION_11, ["<host_link id='x'>", 'routing="Cluster"']),
    ('<zone id="k" routing="Cluster"><host id="h" speed="1Gf"/><host id="i" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="0"/>'
     '<route src="h" dst="i"><link_ctn id="l"/></route></zone>', ["<route src='h' dst='i'>", "only routes are from a host to itself", "<host_link"]),
    ('<cabinet id="cab" prefix="h" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="0"/>', ["cabinet 'cab'", 'routing="Cluster"']),
    ('<bypassZoneRoute src="a" dst="b" gw_src="x" gw_dst="y"/>' + SECTION_11, ["<bypassZoneRoute>", "not supported", "<zoneRoute>"]),
])
def test_xml_network_errors(tmp_path, body, needles):
    raises(xml(tmp_path, body, name="bad.xml"), *needles)


HOSTS = '<zone id="z" routing="Full"><host id="h0" speed="1Gf"/><host id="h1" speed="1Gf"/><router id="r"/>' \
        '<link id="l" bandwidth="1GBps" latency="0"/><link id="sd" bandwidth="1GBps" sharing_policy="SPLITDUPLEX" latency="0"/>{}</zone>'


@pytest.mark.parametrize("routes, needles", [
    ('<route src="h0" dst="h1"><link_ctn id="lx"/></route>', ["zone 'z', <route src='h0' dst='h1'>", "no link named 'lx'", "did you mean 'l'"]),
    ('<route src="h0" dst="h1"><link_ctn id="sd"/></route>', ["link 'sd' is SPLITDUPLEX", 'direction="UP"', "'sd_UP'"]),
    ('<route src="h0" dst="h1"><link_ctn id="l" direction="LEFT"/></route>', ["direction 'LEFT'", "UP, DOWN or NONE"]),
    ('<route src="h0" dst="h1" symmetrical="maybe"><link_ctn id="l"/></route>', ["symmetrical 'maybe'", "YES"]),
    ('<route src="h0" dst="h1"></route>', ["<route src='h0' dst='h1'>", "no <link_ctn>", "empty"]),
    ('<route src="h0"><link_ctn id="l"/></route>', ["<route>", "'dst'"]),
    ('<route src="h0" dst="hx"><link_ctn id="l"/></route>', ["dst 'hx' is no host or router"]),
    ('<route src="h0" dst="n1"><link_ctn id="l"/></route>', ["dst 'n1' is not a host or router of zone 'z'", "<zoneRoute>"]),
    ('<route src="h0" dst="h1"><link_ctn id="l"/></route><route src="h1" dst="h0"><link_ctn id="l"/></route>',
     ["<route src='h1' dst='h0'>", "already declared by zone 'z', <route src='h0' dst='h1'>", 'symmetrical="NO"']),
    ('<link_ctn id="l"/><bypassRoute src="h0" dst="hx"><link_ctn id="l"/></bypassRoute>', ["<bypassRoute src='h0' dst='hx'>", "dst 'hx'"]),
])
def test_route_errors(tmp_path, routes, needles):
    raises(xml(tmp_path, HOSTS.format(routes) + SECTION_11, name="routes.xml"), *needles)


@pytest.mark.parametrize("zone_route, needles", [
    ('<zoneRoute src="a" dst="b" gw_src="a-a_router"><link_ctn id="wan"/></zoneRoute>', ["<zoneRoute src='a' dst='b'>", "'gw_dst'"]),
    ('<zoneRoute src="a" dst="b" gw_src="nowhere" gw_dst="b-b_router"><link_ctn id="wan"/></zoneRoute>', ["gw_src 'nowhere' is no host or router", "_router"]),
    ('<zoneRoute src="a" dst="a-0" gw_src="a-a_router" gw_dst="a-0"><link_ctn id="wan"/></zoneRoute>', ["dst 'a-0' is not a zone or cluster directly inside zone 'top'"]),
    ('<route src="a" dst="b"><link_ctn id="wan"/></route>', ["src 'a' is a zone", "<zoneRoute>"]),
    ('<zoneRoute src="a" dst="b" gw_src="a-a_router" gw_dst="b-b_router"><link_ctn id="nope"/></zoneRoute>', ["<link_ctn id='nope'>", "no link named 'nope'"]),
])
def test_zone_route_errors(tmp_path, zone_route, needles):
    raises(xml(tmp_path, TWO_CLUSTERS + zone_route, name="zroutes.xml"), *needles)


def test_a_zone_route_from_a_zone_to_itself_through_one_gateway_is_refused(tmp_path):
    body = TWO_CLUSTERS + '<zoneRoute src="a" dst="a" gw_src="a-a_router" gw_dst="a-a_router"><link_ctn id="wan"/></zoneRoute>'
    raises(xml(tmp_path, body, name="zself.xml"), "<zoneRoute src='a' dst='a'>", "gw_src and gw_dst are both 'a-a_router'",
           "Cannot define a NetzoneRoute from 'a-a_router' to itself")


@pytest.mark.parametrize("routing", ["Quantum", "RuleBased", "Wifi", "", "Full Floyd"])
@pytest.mark.parametrize("links", [False, True])
def test_unknown_routings_are_refused_with_or_without_links(tmp_path, routing, links):
    # Without links no network is read, and routing="Quantum" used to pass unchecked.
    network = '<link id="l" bandwidth="1GBps" latency="0"/>' if links else ""
    body = f'<zone id="q" routing="{routing}"><host id="h" speed="1Gf"/>{network}</zone>'
    if routing == "":
        msg = raises(xml(tmp_path, body, name="q.xml"), "zone 'q'")
    else:
        msg = raises(xml(tmp_path, body, name="q.xml"), "zone 'q', routing", routing)
        assert ("not supported" if routing == "Wifi" else "Full, Floyd, Dijkstra, DijkstraCache, Cluster, Vivaldi, None") in msg


def test_no_route_errors_name_both_hosts_and_the_file(tmp_path):
    net = load_platform(xml(tmp_path, TWO_CLUSTERS, name="noroute.xml")).network
    assert net.route_names(0, 1) == ["a_link_0_UP", "a_backbone", "a_link_1_DOWN"]  # inside a cluster: fine
    route_raises(net, 1, 2, "noroute.xml", "route from host 'a-1' (id 1) to host 'b-0' (id 2)", "declares no route from 'a' to 'b'",
                 '<zoneRoute src="a" dst="b">')
    with pytest.raises(ValueError, match="host ids go from 0 to 3"):
        net.route(0, 4)


def test_gateway_outside_its_zone_is_reported_when_used(tmp_path):
    body = TWO_CLUSTERS + '<zoneRoute src="a" dst="b" gw_src="a-a_router" gw_dst="a-0"><link_ctn id="wan"/></zoneRoute>'
    net = load_platform(xml(tmp_path, body, name="gw.xml")).network
    route_raises(net, 0, 2, "route from host 'a-0' (id 0) to host 'b-0' (id 2)", "<zoneRoute src='a' dst='b'>: gw_dst 'a-0' is not inside cluster 'b'")
    route_raises(net, 2, 0, "gw_dst 'a-0' is not inside cluster 'b'")  # the reverse names the attribute as written


def test_a_host_beside_a_sub_zone_is_refused_as_simgrid_does(tmp_path):
    """SimGrid's DTD: a zone holds hosts or zones, not both (SimGrid 3.32: "Starting tag <zone> is
    not allowed here"); a host beside a zone could not be routed to anyway."""
    body = '<host id="loner" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="0"/>' + SECTION_11
    path = tmp_path / "beside.xml"
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\">\n<zone id=\"top\" routing=\"Full\">{body}{MASTER}</zone></platform>")
    raises(str(path), "<cluster id='c'> in <zone id='top'>, after <link id='l'>", "is not allowed here",
           "a zone holds hosts or zones, not both")


def test_top_level_without_one_enclosing_zone(tmp_path):
    path = tmp_path / "flat.xml"
    clusters = TWO_CLUSTERS.replace('<link id="wan" bandwidth="1.25GBps" latency="10us"/>', "")
    path.write_text(f"<?xml version='1.0'?><platform version=\"4.1\">{clusters}{MASTER}</platform>")
    net = load_platform(str(path)).network
    assert net.route_names(0, 1) == ["a_link_0_UP", "a_backbone", "a_link_1_DOWN"]
    route_raises(net, 0, 2, "the top level of <platform>", "routes nothing")


# ---------------------------------------------------------------- JSON


def readme_json() -> dict:
    text = PLATFORMS_PAGE.read_text()
    return json.loads(re.search(r"```json\n(.*?)```", text, flags=re.S).group(1))


def test_readme_json_platform_routes_like_its_xml_twin(tmp_path):
    p = load_platform(write_json(tmp_path, readme_json(), name="net.json"))
    net = p.network
    assert [h.name for h in p.compute_hosts][:2] == ["c0-host0", "c0-host1"] and p.nb_compute == 32
    assert [(h.zone, h.zone_properties) for h in p.compute_hosts[15:17]] == [("c0", {"cluster": "c0"}), ("c1", {"cluster": "c1"})]
    assert net.route_names(0, 1) == ["c0_link_0_UP", "c0_backbone", "c0_link_1_DOWN"]
    assert net.route_names(0, 17) == ["c0_link_0_UP", "c0_backbone", "backbone", "c1_backbone", "c1_link_1_DOWN"]
    assert net.route(0, 17)[1] == pytest.approx(72e-9)
    twin = load_platform("griffon8x16").network  # same clusters, more of them
    for a, b in ((0, 1), (0, 17), (20, 3)):
        assert [n.replace("backbone", "main_switch") if n == "backbone" else n for n in net.route_names(a, b)] == twin.route_names(a, b)
        assert net.route(a, b)[1] == twin.route(a, b)[1]
        assert [net.capacity[r] for r in net.route(a, b)[0]] == [twin.capacity[r] for r in twin.route(a, b)[0]]


def test_json_cluster32_routes_like_the_xml_one():
    a, b = load_platform("cluster32.xml").network, load_platform("cluster32.json").network
    for pair in ((0, 1), (31, 0), (7, 7)):
        assert a.route_names(*pair) == b.route_names(*pair) and a.route(*pair)[1] == b.route(*pair)[1]


def test_json_network_options(tmp_path):
    data = {"master": {"name": "m", "link": {"bw": "1GBps"}},
            "hosts": [{"name": "alone", "speed": "1Gf"}],
            "clusters": [{"id": "c", "prefix": "n", "radical": "1-2", "speed": "1Gf", "bw": 1e9, "sharing_policy": "SHARED",
                          "bb_bw": "2GBps", "bb_lat": "1us", "bb_sharing_policy": "FATPIPE", "limiter_link": "3GBps", "router_id": "gw",
                          "topology": "FLAT"}]}
    p = load_platform(write_json(tmp_path, data, name="opts.json"))
    net = p.network
    names = [h.name for h in p.compute_hosts]
    assert names == ["alone", "n1", "n2"]
    assert net.route_names(1, 2) == ["c_link_1_limiter", "c_link_1", "c_backbone", "c_link_2", "c_link_2_limiter"]
    assert net.route(1, 2)[1] == pytest.approx(1e-6)  # lat defaults to 0
    assert net.fatpipe[net.names.index("c_backbone")]
    # A host outside the clusters reaches the master only (through the master's link).
    route_raises(net, 0, 1, "route from host 'alone' (id 0)", "declares no route from 'alone_zone' to 'c'")
    assert net.message_route("m", "alone") == ((net.names.index("master_link"),), 0.0)


@pytest.mark.parametrize("data, needles", [
    ({"clusters": [{"id": "c", "speed": "1Gf", "radical": "0-1", "count": 2}]}, ["$.clusters[0] ('c')", "both 'radical' and 'count'"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 0}]}, ["$.clusters[0].count", ">= 1"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps"}, {"id": "d", "prefix": "d", "speed": "1Gf", "count": 2}],
      "backbone": {"bw": "1GBps"}}, ["$.clusters[1] ('d')", "'bw'"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps"}, {"id": "d", "prefix": "d", "speed": "1Gf", "count": 2, "bw": "1GBps"}]},
     ["2 clusters with links but no \"backbone\"", '"backbone": {"bw"']),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "10gbps"}]}, ["$.clusters[0] ('c').bw", "unknown unit 'gbps'"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "lat": "1 day"}]}, ["$.clusters[0] ('c').lat", "'day'"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "bb_lat": "1us"}]}, ["$.clusters[0] ('c').bb_lat", "without bb_bw"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "topology": "TORUS"}]}, ["$.clusters[0] ('c').topology", "not supported"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "loopback_bw": "1GBps"}]}, ["$.clusters[0] ('c').loopback_bw", "down again", "in XML"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "sharing_policy": "HALF"}]}, ["$.clusters[0].sharing_policy", "SPLITDUPLEX"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": True}]}, ["$.clusters[0].bw", "10Gbps"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2}], "backbone": {"bw": "1GBps", "latency": 1}}, ["$.backbone", "'latency'", "lat"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2}], "backbone": {"lat": 0}}, ["$.backbone", "'bw'"]),
    ({"clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": 1}], "backbone": {"bw": "0Bps"}}, ["$.backbone ('backbone').bw", "zero"]),
    ({"clusters": [{"id": "c", "prefix": "c", "speed": "1Gf", "count": 2, "bw": 1, "router_id": "c1"}]}, ["'c1'", "used twice"]),
])
def test_json_network_errors(tmp_path, data, needles):
    data = {"master": {"name": "master_host", "link": {"bw": "1GBps"}}, **data}
    raises(write_json(tmp_path, data, name="bad.json"), *needles)


# ---------------------------------------------------------------- shipped platforms (seed 001 §5.5)


HETERO = [f"hetero_{s}_{o}" for s in ("c123", "c456") for o in ("o1", "o2", "o3", "o4")]


def test_clustered_platforms_are_shipped_and_up_to_date():
    assert {f"{name}.xml" for name in ["griffon8x16", *HETERO]} <= set(list_shipped_platforms())
    make_cluster_platforms = load_experiment_script("placement_network", "make_cluster_platforms.py")
    for name, text in make_cluster_platforms.all_platforms().items():
        assert Path(shipped_platform_path(name)).read_text() == text, f"{name} is stale: run python -m experiments.placement_network.make_cluster_platforms"


def check_eight_by_sixteen(p):
    assert p.nb_compute == 128 and p.master.name == "master_host" and p.storage_hosts == []
    # Cluster k's hosts are 16k..16k+15, in the string order of their names (as Batsim numbers
    # them): c0-host0, c0-host1, c0-host10, ..., c0-host15, c0-host2, ..., c0-host9.
    for host in p.compute_hosts:
        k, i = divmod(host.id, 16)
        assert host.name == sorted(f"c{k}-host{n}" for n in range(16))[i]
        assert host.zone == f"c{k}" and host.zone_properties["cluster"] == f"c{k}"
    assert [h.name for h in p.compute_hosts[:3]] == ["c0-host0", "c0-host1", "c0-host10"]
    ids = {h.name: h.id for h in p.compute_hosts}
    net = p.network
    assert net.nb_resources == 8 * (1 + 2 * 16) + 2 + 1  # (+ SimGrid's loopback, for the master's Full zone)
    for k in range(8):
        for j in range(8):
            names = net.route_names(ids[f"c{k}-host3"], ids[f"c{j}-host5"])
            if k == j:
                assert names == [f"c{k}_link_3_UP", f"c{k}_backbone", f"c{k}_link_5_DOWN"]
            else:
                assert names == [f"c{k}_link_3_UP", f"c{k}_backbone", "main_switch", f"c{j}_backbone", f"c{j}_link_5_DOWN"]
    main = net.names.index("main_switch")
    assert net.capacity[main] == 1.25e9 and net.latency[main] == pytest.approx(24e-9) and not net.fatpipe[main]
    return net


def test_griffon8x16_parameters():
    """§5.5.3: switch 1.25e9 B/s, latency 0; host links 1.25e6 B/s, 24e-9 s; main switch 1.25e9, 24e-9."""
    p = load_platform("griffon8x16")
    net = check_eight_by_sixteen(p)
    assert all(h.speeds == [286.087e3] for h in p.compute_hosts)
    for k in range(8):
        bb = net.names.index(f"c{k}_backbone")
        assert net.capacity[bb] == 1.25e9 and net.latency[bb] == 0.0
        for i in range(16):
            for half in ("UP", "DOWN"):
                r = net.names.index(f"c{k}_link_{i}_{half}")
                assert net.capacity[r] == 1.25e6 and net.latency[r] == pytest.approx(24e-9)
    assert net.route(0, 1)[1] == pytest.approx(48e-9) and net.route(0, 127)[1] == pytest.approx(72e-9)


@pytest.mark.parametrize("name", HETERO)
def test_heterogeneous_platforms_follow_table_5_1(name):
    """Base: switch 10 Gbit/s, latency 0; 286.097e3 flop/s; links 10 Gbit/s, 24e-9 s; factors per c1..c6."""
    factors = {"c1": (2, 1), "c2": (4, 2.02), "c3": (1, 2.94), "c4": (1, 1.24), "c5": (2, 1.61), "c6": (1, 1.72)}
    order = {"o1": (1, 1, 1, 2, 2, 2, 3, 3), "o2": (3, 3, 2, 2, 2, 1, 1, 1), "o3": (1, 2, 2, 3, 3, 2, 1, 1), "o4": (3, 1, 2, 3, 1, 2, 1, 2)}
    _, kinds, ordering = name.split("_")
    p = load_platform(name)
    net = check_eight_by_sixteen(p)
    expected = [f"c{kinds[i]}" for i in order[ordering]]  # kinds is "c123" or "c456": kinds[1] is "1" or "4"
    for k, kind in enumerate(expected):
        switch, speed = factors[kind]
        hosts = p.compute_hosts[16 * k:16 * k + 16]
        assert all(h.zone_properties["table_5_1"] == kind for h in hosts)
        assert all(h.speeds == [pytest.approx(286.097e3 * speed, rel=1e-12)] for h in hosts)
        assert net.capacity[net.names.index(f"c{k}_backbone")] == 1.25e9 * switch
        link = net.names.index(f"c{k}_link_7_UP")
        assert net.capacity[link] == 1.25e9 and net.latency[link] == pytest.approx(24e-9)
    assert sorted(expected) == sorted(3 * [f"c{kinds[1]}"] + 3 * [f"c{kinds[2]}"] + 2 * [f"c{kinds[3]}"])
