"""Vivaldi zones (routing="Vivaldi") as SimGrid 3.32 routes them, and what it refuses of them.

Expected latencies are SimGrid 3.32's own, as Debian's libsimgrid prints them for these files
(route_to, "%.17g"): (sqrt(dx^2 + dy^2) + |h1| + |h2|) / 1000 s on top of the links'. The same
routes are compared with SimGrid itself, pair by pair, in test_platform_simgrid.py.
"""

from __future__ import annotations

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.engine.ipc_routes import FREE, MASTER, IpcRoutes
from joulesim.simulator.engine.simgrid_kernel import UNBOUNDED_RATE
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import read_csv


def platform(tmp_path, body: str, name: str = "p.xml") -> str:
    path = tmp_path / name
    path.write_text('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                    f'<platform version="4.1">\n{body}\n</platform>\n')
    return str(path)


# The reference case's platform (../shared/reference/batsim-energy-and-kills/inputs/vivaldi8.xml),
# four of its hosts: coordinates only, no link.
VIVALDI = ('<zone id="AS0" routing="Vivaldi">'
           '<host id="node0" speed="1Gf" coordinates="0.0 0.0 0.5"/><host id="node1" speed="1Gf" coordinates="3.5 2.0 0.5"/>'
           '<host id="node4" speed="1Gf" coordinates="14.0 2.0 0.5"/><host id="node7" speed="1Gf" coordinates="24.5 2.0 0.5"/>'
           '<host id="master" speed="1Gf" coordinates="0 0 0"/></zone>')


def test_coordinates_add_their_latency_to_every_route(tmp_path):
    p = load_platform(platform(tmp_path, VIVALDI), master_host="master")
    net = p.network
    assert net is not None and net.nb_resources == 0  # a network without links
    # SimGrid 3.32: master -> node1, node4, node7; node0 -> node4; node0 -> node0 (twice its height)
    assert net.message_route("master", "node1") == ((), 0.0045311288741492744)
    assert net.message_route("node4", "master") == ((), 0.014642135623730951)
    assert net.message_route("master", "node7") == ((), 0.02508149710656371)
    assert net.message_route("node0", "node4") == ((), 0.015142135623730952)
    assert net.message_route("node0", "node0") == ((), 0.001)
    assert net.message_route("master", "master") == ((), 0.0)  # no loopback link in a Vivaldi zone
    assert net.route(0, 2) == ((), 0.015142135623730952)  # (compute hosts node0, node1, node4, node7)
    assert net.self_route(0) == ((), 0.001)


def test_the_latency_is_summed_in_simgrids_order(tmp_path):
    """(distance + |h1|) + |h2|, then / 1000: here each other order is a bit off SimGrid's value."""
    body = ('<zone id="v" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="-48.683 33.747 -24.065"/>'
            '<host id="master_host" speed="1Gf" coordinates="-26.567 49.564 -2.974"/></zone>')
    assert load_platform(platform(tmp_path, body)).network.message_route("a", "master_host") == ((), 0.054228978760565455)


def test_batsims_messages_wait_the_latency_and_move_nothing(tmp_path):
    """A 1-byte message on a route of no link: ptask_L07 has nothing to move (its action's
    remains are 0), so it ends as its latency ends; without latency, at once."""
    routes = IpcRoutes(load_platform(platform(tmp_path, VIVALDI), master_host="master"))
    node4 = routes.route(2, MASTER)
    assert (node4.latency, node4.rate) == (0.014642135623730951, UNBOUNDED_RATE)
    assert routes.route(MASTER, MASTER) is FREE


PEERS = ('<zone id="AS0" routing="Full"><zone id="v" routing="Vivaldi">'
         '<peer id="p1" speed="1Gf" bw_in="100MBps" bw_out="50MBps" coordinates="1.5 -2 0.25"/>'
         '<peer id="p2" speed="2Gf" bw_in="1GBps" bw_out="10MBps" coordinates="-3 4 -1"/>'
         '<peer id="gw" speed="1Gf" bw_in="1GBps" bw_out="1GBps" coordinates="0 0 0"/></zone>'
         '<zone id="m" routing="Full"><host id="master_host" speed="1Gf"/></zone>'
         '<link id="wan" bandwidth="1GBps" latency="2ms"/>'
         '<zoneRoute src="m" dst="v" gw_src="master_host" gw_dst="gw"><link_ctn id="wan"/></zoneRoute></zone>')


def test_a_peer_is_a_host_with_a_link_up_and_a_link_down(tmp_path):
    p = load_platform(platform(tmp_path, PEERS))
    assert [(h.name, h.speeds) for h in p.compute_hosts] == [("gw", [1e9]), ("p1", [1e9]), ("p2", [2e9])]
    net = p.network
    up, down = net.link("link_p1_UP"), net.link("link_p1_DOWN")
    assert (up.bandwidth, up.latency, down.bandwidth, down.latency) == (50e6, 0.0, 100e6, 0.0)
    assert up.policy.value == down.policy.value == "SHARED"

    def named(a, b):
        resources, latency = net.message_route(a, b)
        return [net.names[r] for r in resources], latency

    # SimGrid 3.32's routes (links in its order, latencies to the last bit):
    assert named("p1", "p2") == (["link_p1_UP", "link_p2_DOWN"], 0.0087500000000000008)
    assert named("p2", "p2") == (["link_p2_UP", "link_p2_DOWN"], 0.002)
    # through the gateway: the zoneRoute's latency first, then the Vivaldi zone's
    assert named("master_host", "p1") == (["wan", "link_gw_UP", "link_p1_DOWN"], 0.0047499999999999999)
    assert named("p2", "master_host") == (["link_p2_UP", "link_gw_DOWN", "wan"], 0.0080000000000000002)
    # a message from p1 to the master: p1's link up (50 MB/s) is the slowest
    message = IpcRoutes(p).route(1, MASTER)
    assert (message.latency, message.rate) == (0.0047499999999999999, 50e6)


def test_a_host_s_loopback_route_in_a_vivaldi_zone_isolates_it_as_in_simgrid(tmp_path):
    """SimGrid's StarZone keeps a <route src="a" dst="a"> as a's loopback, and a then has no
    way up or down: a -> a crosses the loopback (plus twice a's height), SimGrid aborts on
    a -> b ("StarZone routing (a - b): no link UP from source node")."""
    body = ('<zone id="z" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="1 2 3"/>'
            '<host id="b" speed="1Gf" coordinates="4 6 0.5"/><host id="master_host" speed="1Gf" coordinates="0 0 0"/>'
            '<link id="l" bandwidth="1GBps" latency="5us"/><link id="m" bandwidth="1GBps" latency="7us"/>'
            '<route src="a" dst="a"><link_ctn id="l"/><link_ctn id="m"/></route></zone>')
    net = load_platform(platform(tmp_path, body)).network
    assert net.message_route("a", "a") == ((net.names.index("l"), net.names.index("m")), 0.006012)
    assert net.message_route("b", "master_host") == ((), 0.0077111025509279786)
    for src, dst, what in (("a", "b", "no link UP from source"), ("b", "a", "no link DOWN to destination")):
        with pytest.raises(InputError) as info:
            net.message_route(src, dst)
        message = str(info.value)
        assert f"route from {src!r} to {dst!r}" in message and what in message and "remove the <route src=\"a\" dst=\"a\">" in message


def test_a_member_without_coordinates_is_refused_when_routed_as_simgrid_aborts(tmp_path):
    body = ('<zone id="z" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="1 2 3"/><host id="b" speed="1Gf"/>'
            '<host id="master_host" speed="1Gf" coordinates="0 0 0"/></zone>')
    net = load_platform(platform(tmp_path, body)).network  # (SimGrid loads it too)
    assert net.message_route("a", "master_host") == ((), 0.0052360679774997899)
    with pytest.raises(InputError) as info:
        net.message_route("a", "b")
    message = str(info.value)
    assert "host 'b' of zone 'z' (routing Vivaldi) has no coordinates" in message
    assert "Please specify the Vivaldi coordinates of Host b" in message and 'give \'b\' coordinates="x y height"' in message


@pytest.mark.parametrize("coordinates, needles", [
    ("1 2", ["have 2 part(s)", "must have 3 dimensions"]),
    ("1  2 3", ["have 4 part(s)", "between single spaces"]),
    (" 1 2 3", ["have 4 part(s)"]),
    ("1,2,3", ["have 1 part(s)"]),
    ("1 2 x", ["coordinate 'x'", "not a decimal number"]),
    ("1 2 nan", ["coordinate 'nan'"]),
    ("1 2 1e13", ["beyond", "joulesim's limit"]),
])
@pytest.mark.parametrize("routing", ["Vivaldi", "Full"])
def test_malformed_coordinates_are_refused_in_any_zone(tmp_path, coordinates, needles, routing):
    body = (f'<zone id="z" routing="{routing}"><host id="a" speed="1Gf" coordinates="{coordinates}"/>'
            '<host id="master_host" speed="1Gf" coordinates="0 0 0"/></zone>')
    with pytest.raises(InputError) as info:
        load_platform(platform(tmp_path, body))
    message = str(info.value)
    assert "host 'a', coordinates" in message and 'coordinates="12.5 -3 0.5"' in message
    for needle in needles:
        assert needle in message, message


@pytest.mark.parametrize("body, needles", [
    # SimGrid 3.32: "<peer> tag can only be used in Vivaldi netzones"
    ('<zone id="z" routing="Full"><zone id="f" routing="Full"><host id="master_host" speed="1Gf"/></zone>'
     '<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>', ["<peer id='p'>", "zone 'z', whose routing is Full", 'routing="Vivaldi"']),
    ('<zone id="v" routing="Vivaldi"><host id="master_host" speed="1Gf" coordinates="0 0 0"/></zone>'
     '<peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>', ["<peer id='p'>", "outside any zone", 'inside a <zone routing="Vivaldi">']),
    ('<zone id="v" routing="Vivaldi"><peer id="p" speed="1Gf" bw_in="1GBps"/><zone id="m" routing="Full">'
     '<host id="master_host" speed="1Gf"/></zone></zone>', ["<peer id='p'>", "'bw_out'"]),
    ('<zone id="v" routing="Vivaldi"><peer id="p" speed="1Gf, 2Gf" bw_in="1GBps" bw_out="1GBps"/><zone id="m" routing="Full">'
     '<host id="master_host" speed="1Gf"/></zone></zone>', ["peer 'p', speed", "not a number with a unit"]),
    # SimGrid 3.32: "In a StarZone, route must be: ... loopback, same source and destination"
    ('<zone id="v" routing="Vivaldi"><host id="a" speed="1Gf" coordinates="0 0 0"/><host id="master_host" speed="1Gf"/>'
     '<link id="l" bandwidth="1GBps" latency="0"/><route src="a" dst="master_host"><link_ctn id="l"/></route></zone>',
     ["<route src='a' dst='master_host'>", "its only routes are from a host to itself", "bw_in and bw_out"]),
    # (the DTD: a zone holds hosts or peers, which stand with zones)
    ('<zone id="v" routing="Vivaldi"><host id="master_host" speed="1Gf"/><peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/></zone>',
     ["<peer id='p'> in <zone id='v'>, after <host id='master_host'>", "is not allowed here"]),
])
def test_what_simgrid_refuses_of_vivaldi_zones_is_refused(tmp_path, body, needles):
    with pytest.raises(InputError) as info:
        load_platform(platform(tmp_path, body))
    message = str(info.value)
    for needle in needles:
        assert needle in message, message


def test_jobs_transfers_pay_the_coordinates_latency(tmp_path):
    """A parallel task between two hosts 15.142 ms apart (no link): SimGrid 3.32 (ptask_L07,
    measured alone) ends it after 1.0151421356237309 s with 1 Gflop on each and 1 MB between
    them, and after 0.015142135623730952 s with only 1 GB to move (nothing to move on no link)."""
    body = ('<zone id="AS0" routing="Vivaldi"><host id="node0" speed="1Gf" coordinates="0.0 0.0 0.5"/>'
            '<host id="node1" speed="1Gf" coordinates="14.0 2.0 0.5"/><host id="master" speed="1Gf" coordinates="0 0 0"/></zone>')
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 2, "jobs": [{"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "p"},'
                        '{"id": 2, "subtime": 10, "res": 2, "walltime": 100, "profile": "q"}], "profiles": {'
                        '"p": {"type": "parallel", "cpu": [1e9, 1e9], "com": [0, 1e6, 0, 0]},'
                        '"q": {"type": "parallel", "cpu": [0, 0], "com": [0, 1e9, 0, 0]}}}')
    import joulesim

    joulesim.simulate(platform(tmp_path, body), str(workload), "fcfs", master_host="master", export=str(tmp_path / "out"))
    rows = {row["job_id"]: row for row in read_csv(str(tmp_path / "out_jobs.csv"))}
    assert float(rows["1"]["execution_time"]) == pytest.approx(1.0151421356237309, abs=1e-6)
    assert float(rows["2"]["execution_time"]) == pytest.approx(0.015142135623730952, abs=1e-6)
