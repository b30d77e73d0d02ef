"""Platform loading: shipped platforms, XML and JSON formats, and readable errors."""

import os

import pytest

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_json import load_json_platform
from joulesim.simulator.platform.platform_loader import list_shipped_platforms, load_platform, shipped_platform_path
from joulesim.simulator.platform.platform_model import SleepPstate
from joulesim.simulator.platform.platform_xml import load_xml_platform

from conftest import write_json, zone_body

MASTER = '<host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>'


def xml(tmp_path, body, name="p.xml", master=MASTER, root='platform version="4.1"'):
    path = tmp_path / name
    path.write_text(f"<?xml version='1.0'?>\n<{root}>\n<zone id=\"z\" routing=\"Full\">\n{zone_body(body, master)}\n</zone>\n</{root.split()[0]}>\n")
    return str(path)



def raises(path, *needles, master_host=None, energy=False):
    with pytest.raises(InputError) as info:
        load_platform(path, master_host, energy=energy)
    msg = str(info.value)
    assert os.path.basename(path) in msg
    for needle in needles:
        assert needle in msg, msg
    return msg


# ---------------------------------------------------------------- shipped platforms


def test_shipped_list():
    assert set(list_shipped_platforms()) >= {"small4.xml", "cluster32.xml", "cluster32.json", "cluster128.xml", "energy2.xml",
                                               "homogeneous240.xml"}


@pytest.mark.parametrize("name", ["small4.xml", "cluster32.xml", "cluster32.json", "cluster128.xml", "energy2.xml",
                                  "homogeneous240.xml"])
def test_each_shipped_platform_loads(name):
    p = load_platform(shipped_platform_path(name))
    assert p.master.name == "master_host" and p.master.role == "master" and p.master.id == -1
    assert [h.id for h in p.compute_hosts] == list(range(p.nb_compute))
    assert all(h.role == "compute_node" for h in p.compute_hosts)
    assert p.master not in p.compute_hosts


def test_shipped_sizes_and_bare_names():
    assert load_platform("small4").nb_compute == 4
    assert [h.name for h in load_platform("small4").compute_hosts] == ["host0", "host1", "host2", "host3"]
    assert load_platform("cluster32").nb_compute == 32
    assert load_platform("cluster32.json").nb_compute == 32
    assert load_platform("cluster128").nb_compute == 128
    assert shipped_platform_path("cluster32").endswith("cluster32.xml")
    assert all(h.speeds == [1e9] for h in load_platform("cluster128").compute_hosts)


def test_cluster32_hosts_in_batsims_order():
    """Batsim 4.2.1 numbers machines in the string order of their names (measured: its machines
    0..31 on cluster32 are node-0, node-1, node-10..node-19, node-2, node-20..node-29, node-3,
    node-30, node-31, node-4..node-9), and so does joulesim, the JSON twin included."""
    expected = ["node-0", "node-1", *(f"node-1{i}" for i in range(10)), "node-2", *(f"node-2{i}" for i in range(10)),
                "node-3", "node-30", "node-31", *(f"node-{i}" for i in range(4, 10))]
    for name in ("cluster32", "cluster32.json"):
        p = load_platform(name)
        assert [h.name for h in p.compute_hosts] == expected
        assert [h.id for h in p.compute_hosts] == list(range(32))


def test_cluster32_json_equals_xml():
    a, b = load_platform("cluster32.xml"), load_platform("cluster32.json")
    assert a.compute_hosts == b.compute_hosts
    assert a.master == b.master
    assert a.storage_hosts == b.storage_hosts == []


@pytest.mark.parametrize("name, size", [("energy2", 2), ("homogeneous240", 240)])
def test_taurus_energy_platforms(name, size):
    """Seed 001 table 6.1: idle 95 W, computing 190.74 W, off 9.75 W, switch-on 151.52 s at
    125.17 W, switch-off 6.10 s at 101 W."""
    p = load_platform(name)
    assert p.nb_compute == size
    assert [h.name for h in p.compute_hosts] == sorted(f"host{i}" for i in range(size))  # host0, host1, host10, ...
    for h in p.compute_hosts:
        assert h.speeds[0] == 1e9 and h.pstate == 0 and h.speed == 1e9
        assert h.wattage_per_state == [(95.0, 190.74), (9.75, 9.75), (101.0, 101.0), (125.17, 125.17)]
        assert h.wattage_off == 9.75
        assert h.sleep_pstates == [SleepPstate(sleep=1, switch_off=2, switch_on=3)]
        assert 1 / h.speeds[2] == pytest.approx(6.10)
        assert 1 / h.speeds[3] == pytest.approx(151.52)
        assert h.properties["sleep_pstates"] == "1:2:3"  # kept as Batsim forwards it


# ---------------------------------------------------------------- XML features


def test_speed_units_and_pstates(tmp_path):
    path = xml(tmp_path, """
        <host id="a" speed="100.0Mf"/>
        <host id="b" speed=" 1e9f ,  2.5Gf,0.5kf " pstate="1" core="4"/>
        <host id="c" speed="1000"/>
        <host id="d" speed="1Tf, 1Pf, 1Ef, 1Zf, 3f, 2gigaflops"/>
    """)
    hosts = {h.name: h for h in load_xml_platform(path).compute_hosts}
    assert hosts["a"].speeds == [1e8]
    assert hosts["b"].speeds == [1e9, 2.5e9, 500.0] and hosts["b"].speed == 2.5e9
    assert hosts["c"].speeds == [1000.0]
    assert hosts["d"].speeds == [1e12, 1e15, 1e18, 1e21, 3.0, 2e9]


def test_cluster_expansion_order_and_props(tmp_path):
    path = xml(tmp_path, """
        <cluster id="c" prefix="n" suffix=".x" radical="10,2-3,1" speed="1Gf" bw="1GBps" lat="5us">
            <prop id="wattage_per_state" value="100:200"/>
            <prop id="rack" value="r1"/>
        </cluster>
    """)
    p = load_xml_platform(path)
    assert [(h.id, h.name) for h in p.compute_hosts] == [(0, "n1.x"), (1, "n10.x"), (2, "n2.x"), (3, "n3.x")]
    assert all(h.properties == {"wattage_per_state": "100:200", "rack": "r1"} for h in p.compute_hosts)
    assert all(h.wattage_per_state == [(100.0, 200.0)] for h in p.compute_hosts)


def test_zone_properties_roles_and_ignored_elements(tmp_path):
    path = tmp_path / "z.xml"
    path.write_text("""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="top" routing="Full">
    <prop id="site" value="lyon"/>
    <prop id="level" value="top"/>
    <zone id="inner" routing="Floyd">
      <prop id="level" value="inner"/>
      <host id="node-10" speed="1Gf"><prop id="role" value="compute_node"/><prop id="k" value="v"/></host>
      <host id="node-2" speed="1Gf"/>
      <host id="disk-1" speed="1Gf"><prop id="role" value="storage"/></host>
      <host id="disk-0" speed="1Gf"><prop id="role" value="storage"/></host>
      <link id="l1" bandwidth="1GBps" latency="1us"/>
      <router id="r1"/>
      <backbone id="bb" bandwidth="1GBps" latency="1us"/>
      <trace id="t" periodicity="1"/>
      <storage_type id="st" size="1TB"/>
      <route src="node-10" dst="node-2"><link_ctn id="l1"/></route>
      <bypassRoute src="node-2" dst="node-10"><link_ctn id="l1"/></bypassRoute>
    </zone>
    <AS id="legacy" routing="None">
      <cluster id="c" prefix="c-" suffix="" radical="0-1" speed="2Gf" bw="1GBps" lat="1us" bb_bw="2GBps" bb_lat="1us"/>
    </AS>
    <zone id="boss_zone" routing="Full"><host id="boss" speed="1Gf"/></zone>
    <zoneRoute src="inner" dst="legacy" gw_src="r1" gw_dst="c-c_router"><link_ctn id="l1"/></zoneRoute>
  </zone>
</platform>
""")
    p = load_platform(str(path), master_host="boss")
    assert p.master.name == "boss" and p.master.role == "master"
    assert [(h.id, h.name) for h in p.compute_hosts] == [(0, "c-0"), (1, "c-1"), (2, "node-10"), (3, "node-2")]
    assert [(h.id, h.name, h.role) for h in p.storage_hosts] == [(4, "disk-0", "storage"), (5, "disk-1", "storage")]
    hosts = {h.name: h for h in p.compute_hosts}
    assert hosts["node-10"].zone_properties == {"site": "lyon", "level": "inner"}
    assert hosts["node-10"].properties == {"role": "compute_node", "k": "v"}
    assert hosts["c-0"].zone_properties == {"site": "lyon", "level": "top"}
    assert hosts["c-0"].speeds == [2e9]
    assert p.master.zone_properties == {"site": "lyon", "level": "top"}
    # SimGrid's DTD: a zone's routes after its hosts, links, routers...; hosts and zones not side by side.
    path.write_text(path.read_text().replace('<zone id="boss_zone" routing="Full"><host id="boss" speed="1Gf"/></zone>', '<host id="boss" speed="1Gf"/>'))
    raises(str(path), "<host id='boss'> in <zone id='top'>, after <AS id='legacy'>", "is not allowed here", master_host="boss")


def test_master_selection(tmp_path):
    # role=master wins over the default name; default name used when no role
    path = xml(tmp_path, '<host id="a" speed="1Gf"/><host id="m" speed="1Gf"><prop id="role" value="master"/></host>', master="")
    assert load_platform(path).master.name == "m"
    path = xml(tmp_path, '<host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/>', master="", name="d.xml")
    p = load_platform(path)
    assert p.master.name == "master_host" and [h.name for h in p.compute_hosts] == ["a"]
    # --master-host picks any host
    path = xml(tmp_path, '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>', master="", name="e.xml")
    p = load_platform(path, master_host="b")
    assert p.master.name == "b" and [h.name for h in p.compute_hosts] == ["a"]


def test_three_value_wattage_and_aliases(tmp_path):
    path = xml(tmp_path, """
        <host id="a" speed="1Gf, 2Gf"><prop id="wattage_per_state" value="10:15:20, 30 : 35 : 40"/></host>
        <host id="b" speed="1Gf"><prop id="watt_per_state" value="1:2"/><prop id="watt_off" value="0.5"/></host>
    """)
    hosts = {h.name: h for h in load_platform(path).compute_hosts}
    assert hosts["a"].wattage_per_state == [(10.0, 20.0), (30.0, 40.0)]
    assert hosts["a"].wattage_off is None and hosts["a"].sleep_pstates == []
    assert hosts["b"].wattage_per_state == [(1.0, 2.0)] and hosts["b"].wattage_off == 0.5


def test_several_sleep_pstates(tmp_path):
    path = xml(tmp_path, """
        <host id="a" speed="1Gf, 0f, 1f, 1f, 0f"><prop id="sleep_pstates" value="1:2:3, 4:2:3"/></host>
    """)
    h = load_platform(path).compute_hosts[0]
    assert h.sleep_pstates == [SleepPstate(1, 2, 3), SleepPstate(4, 2, 3)]


# ---------------------------------------------------------------- JSON features


def test_json_full_format(tmp_path):
    path = write_json(tmp_path, {
        "hosts": [
            {"name": "h10", "speed": ["1Gf", "1e-9Mf", 0.5, 0.25], "pstate": 0,
             "wattage_per_state": [[95, 190.74], [9.75, 9.75], [101, 101], [125.17, 125.17]],
             "wattage_off": 9.75, "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}],
             "properties": {"k": "v"}, "zone_properties": {"site": "a"}},
            {"name": "h2", "speed": "100Mf, 200Mf", "pstate": 1, "sleep_pstates": [], "core": 2},
            {"name": "s0", "speed": 1e9, "role": "storage"},
            {"name": "boss", "speed": [1e9], "role": "master", "link": {"bw": "1GBps"}},
        ],
        "clusters": [{"id": "c", "prefix": "n", "radical": [3, 1], "speed": "1Gf", "bw": "1GBps",
                      "properties": {"rack": "r"}, "zone_properties": {"z": "1"}}],
        "network": {"anything": True},
    }, name="p.json")
    p = load_json_platform(path)
    assert p.master.name == "boss"
    # (by name as strings compare, as XML platforms: "h10" before "h2")
    assert [(h.id, h.name) for h in p.compute_hosts] == [(0, "h10"), (1, "h2"), (2, "n1"), (3, "n3")]
    assert [(h.id, h.name) for h in p.storage_hosts] == [(4, "s0")]
    h10 = p.compute_hosts[0]
    assert h10.speeds == [1e9, 1e-3, 0.5, 0.25]
    assert h10.wattage_per_state == [(95, 190.74), (9.75, 9.75), (101, 101), (125.17, 125.17)]
    assert h10.sleep_pstates == [SleepPstate(1, 2, 3)] and h10.wattage_off == 9.75
    assert h10.properties == {"k": "v", "wattage_per_state": "95:190.74, 9.75:9.75, 101:101, 125.17:125.17",
                              "wattage_off": "9.75", "sleep_pstates": "1:2:3"}
    assert h10.zone_properties == {"site": "a"}
    assert p.compute_hosts[1].speeds == [1e8, 2e8] and p.compute_hosts[1].speed == 2e8
    assert p.compute_hosts[2].properties == {"rack": "r"} and p.compute_hosts[2].zone_properties == {"z": "1"}


def test_json_batsim_strings_and_master_object(tmp_path):
    path = write_json(tmp_path, {
        "master": {"name": "m"},
        "hosts": [{"name": "a", "speed": ["1Gf", "0f", "1f", "1f"], "wattage_per_state": "1:2, 0:0, 3:3, 4:4",
                   "sleep_pstates": [[1, 2, 3]], "wattage_off": "0"}],
    }, name="p.json")
    p = load_platform(path)
    assert p.master.name == "m" and p.master.properties == {"role": "master"} and p.master.speeds == [1e9]
    h = p.compute_hosts[0]
    assert h.wattage_per_state == [(1, 2), (0, 0), (3, 3), (4, 4)] and h.sleep_pstates == [SleepPstate(1, 2, 3)]


# ---------------------------------------------------------------- loader errors


def test_missing_file_and_extension(tmp_path):
    raises(str(tmp_path / "nope.xml"), "no such file", "cluster32.xml")
    with pytest.raises(InputError, match="no shipped platform"):
        load_platform("not_a_shipped_platform")
    bad = tmp_path / "p.yaml"
    bad.write_text("x")
    raises(str(bad), "extension", ".yaml")
    raises(str(tmp_path / "nodir") + "/", "no such file")


def test_directory_is_error(tmp_path):
    d = tmp_path / "dir.xml"
    d.mkdir()
    raises(str(d), "directory")


# ---------------------------------------------------------------- XML errors


def test_malformed_xml_line_number(tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<platform version='4.1'>\n<zone id='z'>\n<host id='a' speed='1Gf'>\n</zone>\n</platform>\n")
    raises(str(path), "line 4", "malformed XML")


def test_blank_lines_before_the_xml_declaration_are_read_as_simgrid_reads_them(tmp_path):
    # (Batsim 5 ships platforms/cluster_energy_128.xml so; expat alone refuses it)
    path = tmp_path / "blank.xml"
    body = "<?xml version='1.0'?>\n<platform version='4.1'><zone id='z' routing='Full'>\n"
    path.write_text("\n  \n" + body + "<host id='master_host' speed='1Gf'/><host id='a' speed='1Gf'/><host id='b' speed='1Gf'/></zone></platform>\n")
    assert [h.name for h in load_platform(str(path)).compute_hosts] == ["a", "b"]
    path.write_text("\n\n" + body + "<host id='a' speed='1Gf'>\n</zone></platform>\n")
    raises(str(path), "line 6", "malformed XML")  # (</zone> on line 6: the blank lines count)


def test_unknown_root(tmp_path):
    path = tmp_path / "root.xml"
    path.write_text("<plateforme><host id='a' speed='1Gf'/></plateforme>")
    raises(str(path), "<plateforme>", "<platform>")


def test_old_version(tmp_path):
    raises(xml(tmp_path, '<host id="a" speed="1Gf"/>', root='platform version="3"'), "version", "simgrid_update_xml")


@pytest.mark.parametrize("body, needles", [
    ('<host id="a" speed="1Gf"/><host id="a" speed="1Gf"/>', ["host 'a'", "already used"]),
    ('<host id="a" speed="1Gf"/><cluster id="c" prefix="a" suffix="" radical="" speed="1Gf" bw="1GBps" lat="1us"/>', ["cluster 'c'", "radical"]),
    ('<cluster id="c" prefix="n" suffix="" radical="1-3,2" speed="1Gf" bw="1GBps" lat="1us"/>', ["n2", "already used"]),
    ('<cluster id="c" prefix="n" suffix="" radical="5-3" speed="1Gf" bw="1GBps" lat="1us"/>', ["cluster 'c'", "radical", "5-3"]),
    ('<cluster id="c" prefix="n" suffix="" radical="1-2-3" speed="1Gf" bw="1GBps" lat="1us"/>', ["cluster 'c'", "radical"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-3"/>', ["cluster 'c'", "'speed'"]),
    ('<host id="a" speed="1Gx"/>', ["host 'a'", "speed", "unknown unit 'Gx'"]),
    ('<host id="a" speed="fast"/>', ["host 'a'", "speed", "'fast'"]),
    ('<host id="a" speed="1Gf,,2Gf"/>', ["host 'a'", "speed"]),
    ('<host id="a" speed=""/>', ["<host>", "speed"]),
    ('<host id="a"/>', ["host 'a'", "'speed'"]),
    ('<host speed="1Gf"/>', ["<host>", "'id'"]),
    ('<host id="a" speed="0f"/>', ["host 'a'", "speed", "computation pstate 0"]),
    ('<host id="a" speed="1Gf, -1f"/>', ["host 'a'", "speed", "-1f"]),
    ('<host id="a" speed="1Gf" pstate="1"/>', ["host 'a'", "pstate", "out of range"]),
    ('<host id="a" speed="1Gf" pstate="x"/>', ["host 'a'", "pstate", "'x'"]),
    ('<host id="a" speed="1Gf" core="0"/>', ["host 'a'", "core"]),
    ('<host id="a" speed="1Gf, 0f, 1f"><prop id="sleep_pstates" value="0:1:2"/></host>', ["host 'a'", "speed", "virtual switch pstate 1"]),
    ('<host id="a" speed="1Gf, 1f, 1f, 1f" pstate="2"><prop id="sleep_pstates" value="1:2:3"/></host>', ["host 'a'", "pstate", "virtual"]),
    ('<host id="a" speed="1Gf"><prop id="role" value="login"/></host>', ["host 'a'", "role", "'login'", "compute_node"]),
    ('<host id="a" speed="1Gf"><prop id="role"/></host>', ["host 'a'", "<prop>", "value"]),
    ('<host id="a" speed="1Gf"><prop id="role" value="storage"/></host>', ["no compute host"]),
])
def test_xml_errors(tmp_path, body, needles):
    raises(xml(tmp_path, body, name="bad.xml"), *needles)


# Power properties are read with -E only (as SimGrid's energy plugin and Batsim 4.2.1 read
# them): without it such a host runs without them, and the platform loads with a warning.
@pytest.mark.parametrize("body, needles", [
    ('<host id="a" speed="1Gf, 2Gf"><prop id="wattage_per_state" value="1:2"/></host>', ["host 'a'", "wattage_per_state", "1 wattage", "2 pstate"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1:x"/></host>', ["host 'a'", "wattage_per_state", "'x'"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1"/></host>', ["host 'a'", "wattage_per_state", "idle:max"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="-1:2"/></host>', ["host 'a'", "wattage_per_state", "negative"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_off" value="off"/></host>', ["host 'a'", "wattage_off", "'off'"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_off" value="-3"/></host>', ["host 'a'", "wattage_off", "negative"]),
    ('<host id="a" speed="1Gf, 1f, 1f"><prop id="sleep_pstates" value="1:2:3"/></host>', ["host 'a'", "sleep_pstates", "pstate 3"]),
    ('<host id="a" speed="1Gf, 1f, 1f"><prop id="sleep_pstates" value="1:2:2"/></host>', ["host 'a'", "sleep_pstates", "same pstate twice"]),
    ('<host id="a" speed="1Gf, 1f, 1f, 1f"><prop id="sleep_pstates" value="1:2:3,1:2:3"/></host>', ["host 'a'", "sleep_pstates", "pstate 1 twice"]),
    ('<host id="a" speed="1Gf, 1f, 1f, 1f"><prop id="sleep_pstates" value="1:2:3,2:1:3"/></host>', ["host 'a'", "sleep_pstates", "twice"]),
    ('<host id="a" speed="1Gf, 1f, 1f"><prop id="sleep_pstates" value="1:2"/></host>', ["host 'a'", "sleep_pstates", "three"]),
    ('<host id="a" speed="1Gf, 1f, 1f"><prop id="sleep_pstates" value="1:x:2"/></host>', ["host 'a'", "sleep_pstates", "'x'"]),
])
def test_xml_power_property_errors_are_refused_with_energy_only(tmp_path, body, needles):
    path = xml(tmp_path, body, name="bad.xml")
    platform = load_platform(path)
    host = platform.compute_hosts[0]
    assert (host.wattage_per_state, host.wattage_off, host.sleep_pstates) == (None, None, [])
    warned = [warning for warning in platform.warnings if "without -E the property is unused" in warning]
    assert len(platform.energy_refusals) == 1 and len(warned) == 1
    assert all(needle in warned[0] for needle in needles), warned[0]
    raises(path, *needles, "-E", energy=True)


def test_master_errors(tmp_path):
    raises(xml(tmp_path, '<host id="a" speed="1Gf"/>', master="", name="nomaster.xml"), "no master host", 'role" value="master"', "--master-host")
    two = '<host id="m1" speed="1Gf"><prop id="role" value="master"/></host><host id="a" speed="1Gf"/>'
    raises(xml(tmp_path, two, name="two.xml"), "m1", "master_host", "master")
    raises(xml(tmp_path, '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>', name="mh.xml"), "--master-host", "'zz'", master_host="zz")
    raises(xml(tmp_path, '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>', name="mh2.xml"), "two master hosts", "'b'", "'master_host'", master_host="b")
    raises(xml(tmp_path, "", name="onlymaster.xml"), "no compute host")
    raises(xml(tmp_path, "", master="", name="empty.xml"), "no host")


# ---------------------------------------------------------------- JSON errors


def test_malformed_json_line_number(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "hosts": [\n    {"name": "a",}\n  ]\n}\n')
    raises(str(path), "line 3", "malformed JSON")


@pytest.mark.parametrize("data, needles", [
    ([], ["$", "object"]),
    ({"hostz": []}, ["$", "'hostz'", "hosts"]),
    ({"hosts": [{"name": "a"}]}, ["$.hosts[0]", "'speed'"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "watts": 3}]}, ["$.hosts[0]", "'watts'", "wattage_per_state"]),
    ({"hosts": [{"name": "a", "speed": True}]}, ["$.hosts[0].speed", "SimGrid unit"]),
    ({"hosts": [{"name": "a", "speed": []}]}, ["$.hosts[0].speed"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "pstate": -1}]}, ["$.hosts[0].pstate"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "role": "boss"}]}, ["$.hosts[0].role", "compute_node"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "properties": {"x": 1}}]}, ["$.hosts[0].properties.x", "must be string"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "wattage_per_state": [[1]]}]}, ["$.hosts[0].wattage_per_state", "idle, max"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "sleep_pstates": [{"sleep": 1}]}]}, ["$.hosts[0].sleep_pstates"]),
    ({"clusters": [{"id": "c", "speed": "1Gf"}]}, ["$.clusters[0]", "'radical'"]),
    ({"hosts": [{"name": "a", "speed": "1Gx"}]}, ["$.hosts[0] ('a').speed", "unknown unit"]),
    ({"hosts": [{"name": "a", "speed": [1e9, 0]}]}, ["$.hosts[0] ('a')", "speed", "pstate 1"]),
    ({"hosts": [{"name": "a", "speed": [1e9], "pstate": 1}]}, ["$.hosts[0] ('a')", "pstate", "out of range"]),
    ({"hosts": [{"name": "a", "speed": "1Gf", "role": "storage", "properties": {"role": "storage"}}]}, ["$.hosts[0] ('a').role", "only once"]),
    ({"hosts": [{"name": "a", "speed": "1Gf"}, {"name": "a", "speed": "1Gf"}]}, ["$.hosts[1] ('a')", "already used"]),
    ({"clusters": [{"id": "c", "radical": "0-x", "speed": "1Gf"}]}, ["$.clusters[0] ('c').radical", "'x'"]),
    ({"hosts": [{"name": "a", "speed": "1Gf"}]}, ["no master host"]),
    ({"master": {"name": "m", "role": "storage"}, "hosts": [{"name": "a", "speed": "1Gf"}]}, ["$.master ('m').role"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": "1Gf", "role": "master"}]}, ["'m'", "'a'", "master"]),
    ({"master": {"name": "m"}}, ["no compute host"]),
    ({}, ["no host"]),
])
def test_json_errors(tmp_path, data, needles):
    raises(write_json(tmp_path, data, name="bad.json"), *needles)


@pytest.mark.parametrize("data, needles", [
    ({"hosts": [{"name": "a", "speed": [1e9, 1e9], "wattage_per_state": [[1, 2]]}]}, ["$.hosts[0] ('a')", "wattage_per_state", "2 pstate"]),
    ({"hosts": [{"name": "a", "speed": [1e9], "wattage_off": "x"}]}, ["$.hosts[0] ('a')", "wattage_off"]),
    ({"hosts": [{"name": "a", "speed": [1e9, 1, 1], "sleep_pstates": [[1, 2, 3]]}]}, ["$.hosts[0] ('a')", "sleep_pstates", "pstate 3"]),
    ({"hosts": [{"name": "a", "speed": [1e9, 1, 1], "sleep_pstates": [[1, 1, 2]]}]}, ["$.hosts[0] ('a')", "sleep_pstates", "twice"]),
])
def test_json_power_property_errors_are_refused_with_energy_only(tmp_path, data, needles):
    path = write_json(tmp_path, {"master": {"name": "master_host"}, **data}, name="bad.json")
    platform = load_platform(path)
    assert len(platform.energy_refusals) == 1 and len(platform.warnings) == 1
    raises(path, *needles, "-E", energy=True)


def test_json_not_utf8(tmp_path):
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe{}")
    raises(str(path), "UTF-8")
