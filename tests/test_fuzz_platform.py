"""Hostile, broken and random platform files: each loads, or ends with an InputError naming the
file and the field; never a traceback, a MemoryError, a RecursionError or a silent acceptance.

The property-based tests run JOULESIM_FUZZ_EXAMPLES examples each (default 120, derandomized by
the 'ci' profile of conftest.py); ``JOULESIM_FUZZ_EXAMPLES=5000 HYPOTHESIS_PROFILE=dev pytest
tests/test_fuzz_platform.py`` explores further.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform import platform_checks
from joulesim.simulator.platform.platform_checks import (
    MAX_HOSTS,
    MAX_PSTATES,
    MAX_ZONE_DEPTH,
    parse_int,
    parse_number,
    parse_speed,
)
from joulesim.simulator.platform.platform_loader import load_platform

from conftest import fuzz_settings, zone_body

MASTER = '<host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>'


def write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def xml(tmp_path: Path, body: str, name: str = "p.xml", version: str = "4.1", master: str = MASTER) -> str:
    return write(tmp_path, name, f'<?xml version="1.0"?>\n<platform version="{version}">\n<zone id="z" routing="Full">\n{zone_body(body, master)}\n</zone>\n</platform>\n')


def jsonfile(tmp_path: Path, data, name: str = "p.json") -> str:
    return write(tmp_path, name, json.dumps(data))


def refused(path: str, *needles: str, energy: bool = False) -> str:
    """The InputError of loading `path` (with -E: `energy`): it names the file and every needle."""
    with pytest.raises(InputError) as info:
        load_platform(path, energy=energy)
    msg = str(info.value)
    assert msg.startswith(path + ": "), msg
    for needle in needles:
        assert needle in msg, msg
    return msg


def loads_or_refuses(path: str) -> None:
    """The fuzzing oracle: a Platform, or an InputError naming the file; nothing else."""
    try:
        platform = load_platform(path)
    except InputError as e:
        assert str(e).startswith(path + ": "), str(e)
        assert e.fix, str(e)
        return
    assert platform.nb_compute >= 1
    assert all(0 <= h.pstate < len(h.speeds) for h in platform.compute_hosts)
    assert all(isinstance(h.pstate, int) for h in platform.compute_hosts)
    for refusal in platform.energy_refusals:  # power properties, refused with -E only
        assert isinstance(refusal, InputError) and str(refusal).startswith(path + ": ") and refusal.fix, str(refusal)


# ================================================================ 1. non-ASCII and Python-only numbers


@pytest.mark.parametrize("text", ["²", "١", "５", "1_0", " 1 2", "+1", "0x1", "1.0", "", "٣٢"])
def test_parse_int_takes_ascii_digits_only(text):
    with pytest.raises(InputError, match="not a non-negative integer"):
        parse_int("f.xml", "w", text, "pstate")


@pytest.mark.parametrize("text", ["１.５", "1_0", "inf", "nan", "-inf", "1e400", "Infinity", "0x10", "1.5.", "١", "", "1 0"])
def test_parse_number_takes_finite_ascii_decimals_only(text):
    with pytest.raises(InputError, match="not a finite decimal number"):
        parse_number("f.xml", "w", text, "wattage_off")


def test_ascii_numbers_still_parse():
    assert parse_int("f", "w", " 12 ", "x") == 12
    assert parse_number("f", "w", " -1.5e3 ", "x") == -1500.0
    assert parse_number("f", "w", ".5", "x") == 0.5
    assert parse_speed("f", "w", " 1.5e3Mf ") == 1.5e9
    with pytest.raises(InputError, match="too large"):
        parse_int("f", "w", "9" * 5000, "x")  # int() would raise ValueError past 4300 digits


@pytest.mark.parametrize("body, needles", [
    ('<host id="a" speed="1Gf" pstate="²"/>', ["host 'a', pstate", "'²'", "ASCII"]),
    ('<host id="a" speed="1Gf, 2Gf" pstate="١"/>', ["host 'a', pstate", "'١'"]),
    ('<host id="a" speed="1Gf" core="５"/>', ["host 'a', core", "'５'"]),
    ('<host id="a" speed="１.５Gf"/>', ["host 'a', speed", "'１.５Gf'"]),
    ('<host id="a" speed="1_0Gf"/>', ["host 'a', speed", "'1_0Gf'"]),
    ('<host id="a" speed="nanGf"/>', ["host 'a', speed", "'nanGf'"]),
    ('<cluster id="c" prefix="n" suffix="" radical="0-３" speed="1Gf" bw="1GBps" lat="1us"/>', ["cluster 'c', radical", "'３'"]),
    ('<host id="a" speed="1Gf"/><link id="l" bandwidth="１GBps" latency="0"/>', ["<link id='l'>, bandwidth", "'１GBps'"]),
    ('<host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1_0us"/>', ["<link id='l'>, latency", "'1_0us'"]),
])
def test_non_ascii_digits_in_xml_are_refused(tmp_path, body, needles):
    refused(xml(tmp_path, body), *needles)


@pytest.mark.parametrize("body, needles", [
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1_0:20"/></host>', ["host 'a', property 'wattage_per_state'", "'1_0'"]),
    ('<host id="a" speed="1Gf"><prop id="wattage_off" value="١"/></host>', ["host 'a', property 'wattage_off'", "'١'"]),
    ('<host id="a" speed="1Gf, 1f, 1f, 1f"><prop id="sleep_pstates" value="1:２:3"/></host>', ["host 'a', property 'sleep_pstates'", "'２'"]),
])
def test_non_ascii_digits_in_power_properties_are_refused_with_energy(tmp_path, body, needles):
    """Power properties are read with -E only, as Batsim 4.2.1 (SimGrid's energy plugin) reads them."""
    assert len(load_platform(xml(tmp_path, body)).energy_refusals) == 1
    refused(xml(tmp_path, body), *needles, energy=True)


@pytest.mark.parametrize("field, value", [
    ("speed", "１Gf"), ("speed", ["1Gf", "1_0Mf"]), ("wattage_off", "1_0"), ("wattage_per_state", "٩:10"),
    ("sleep_pstates", "1:2:٣"),
])
def test_non_ascii_digits_in_json_are_refused(tmp_path, field, value):
    host = {"name": "a", "speed": ["1Gf", "1f", "1f", "1f"], field: value}
    path = jsonfile(tmp_path, {"master": {"name": "m"}, "hosts": [host]})
    power = field != "speed"  # (power properties: read with -E only)
    if power:
        assert len(load_platform(path).energy_refusals) == 1
    refused(path, "$.hosts[0] ('a')", field, energy=power)


def test_non_ascii_digits_in_a_json_radical(tmp_path):
    data = {"master": {"name": "m"}, "clusters": [{"id": "c", "radical": "0-５", "speed": "1Gf"}]}
    refused(jsonfile(tmp_path, data), "$.clusters[0] ('c').radical", "'５'")


# ================================================================ 2. deep nesting


def nested_zones(depth: int) -> str:
    opening = "".join(f'<zone id="z{i}" routing="Full">' for i in range(depth))
    return f'<platform version="4.1">{opening}<host id="a" speed="1Gf"/>{MASTER}{"</zone>" * depth}</platform>'


def test_zones_nested_thousands_deep_are_refused(tmp_path):
    refused(write(tmp_path, "deep.xml", nested_zones(5000)), f"zone 'z{MAX_ZONE_DEPTH}'", f"more than {MAX_ZONE_DEPTH} deep")


def test_zones_nested_to_the_limit_load(tmp_path):
    assert load_platform(write(tmp_path, "limit.xml", nested_zones(MAX_ZONE_DEPTH))).nb_compute == 1


def test_deeply_nested_unknown_elements_are_refused(tmp_path):
    refused(xml(tmp_path, '<host id="a" speed="1Gf"/>' + "<junk>" * 100_000 + "</junk>" * 100_000), "<junk>", "not an element")


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"hosts": ' + "[" * 100_000 + "]" * 100_000 + "}",
                                  '{"network": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001])
def test_json_nested_100000_deep_is_refused(tmp_path, text):
    refused(write(tmp_path, "deep.json", text), "nested too deeply")


def test_json_nested_hundreds_deep_where_a_host_is_expected(tmp_path):
    # Deep enough to load, then shown in the schema error without recursing.
    refused(write(tmp_path, "deep.json", '{"hosts": [' + "[" * 600 + "]" * 600 + "]}"), "$.hosts[0]")


# ================================================================ 3. huge clusters


@pytest.mark.parametrize("radical", ["0-100000000000", "0-999999999999999999", f"0-{MAX_HOSTS}", "0-600000,0-600000"])
def test_huge_xml_radical_is_refused_before_allocating(tmp_path, radical):
    refused(xml(tmp_path, f'<cluster id="c" prefix="n" suffix="" radical="{radical}" speed="1Gf" bw="1GBps" lat="1us"/>'),
            "cluster 'c', radical", f"limit of {MAX_HOSTS:,} hosts")


def test_hosts_of_several_clusters_and_lists_count_together(tmp_path, monkeypatch):
    monkeypatch.setattr(platform_checks, "MAX_HOSTS", 100)  # the real limit would make the test allocate 10^6 hosts
    body = '<cluster id="a" prefix="a" suffix="" radical="0-49" speed="1Gf" bw="1GBps" lat="1us"/><cluster id="b" prefix="b" suffix="" radical="0-50" speed="1Gf" bw="1GBps" lat="1us"/>'
    refused(xml(tmp_path, body), "cluster 'b', radical", "51 host(s) (after 51 host(s) declared before)", "limit of 100 hosts")  # (the master first)
    data = {"master": {"name": "m"}, "hosts": [{"name": f"h{i}", "speed": 1} for i in range(60)],
            "clusters": [{"id": "c", "speed": "1Gf", "count": 40}]}
    refused(jsonfile(tmp_path, data), "$.clusters[0] ('c').count", "after 61 host(s)", "limit of 100 hosts")
    refused(xml(tmp_path, "".join(f'<host id="h{i}" speed="1Gf"/>' for i in range(101))), "limit of 100 hosts")


@pytest.mark.parametrize("cluster, where", [
    ({"count": 10**12}, "$.clusters[0] ('c').count"),
    ({"radical": "0-100000000000"}, "$.clusters[0] ('c').radical"),
    ({"count": MAX_HOSTS + 1}, "$.clusters[0] ('c').count"),
])
def test_huge_json_cluster_is_refused_before_allocating(tmp_path, cluster, where):
    data = {"master": {"name": "m"}, "clusters": [{"id": "c", "speed": "1Gf", **cluster}]}
    refused(jsonfile(tmp_path, data), where, f"limit of {MAX_HOSTS:,} hosts")


def test_a_long_prefix_is_refused_before_it_is_copied_into_every_host_name(tmp_path):
    refused(xml(tmp_path, f'<cluster id="c" prefix="{"p" * 100_000}" suffix="" radical="0-999" speed="1Gf" bw="1GBps" lat="1us"/>'), "cluster 'c', prefix", "1,000 characters")
    data = {"master": {"name": "m"}, "clusters": [{"id": "c" * 5000, "speed": "1Gf", "count": 3}]}
    refused(jsonfile(tmp_path, data), ".id", "1,000 characters")


def test_too_many_pstates_are_refused(tmp_path):
    refused(xml(tmp_path, f'<cluster id="c" prefix="n" suffix="" radical="0-9" speed="{", ".join(["1Gf"] * 100_000)}" bw="1GBps" lat="1us"/>'),
            "cluster 'c', speed", f"limit of {MAX_PSTATES}")
    refused(jsonfile(tmp_path, {"master": {"name": "m"}, "hosts": [{"name": "a", "speed": [1e9] * (MAX_PSTATES + 1)}]}),
            "$.hosts[0] ('a').speed", f"limit of {MAX_PSTATES}")


# ================================================================ 4. storages on hosts that do not exist


STORAGE_TYPE = '<storage_type id="disk" size="1TB"/>'


@pytest.mark.parametrize("body, needles", [
    (STORAGE_TYPE + '<host id="a" speed="1Gf"/><storage id="s" typeId="disk" attach="nohost"/>',
     ["<storage id='s'>, attach", "host 'nohost'", "does not declare"]),
    (STORAGE_TYPE + '<host id="a" speed="1Gf"><mount storageId="nostorage" name="/home"/></host>',
     ["host 'a', <mount>, storageId", "storage 'nostorage'", "does not declare"]),
    ('<host id="a" speed="1Gf"/><storage id="s" typeId="notype" attach="a"/>', ["<storage id='s'>, typeId", "'notype'"]),
    (STORAGE_TYPE + '<host id="a" speed="1Gf"/><storage id="s" typeId="disk"/>', ["<storage id='s'>", "'attach'"]),
    (STORAGE_TYPE + '<host id="a" speed="1Gf"/><storage id="s" typeId="disk" attach="a"/><storage id="s" typeId="disk" attach="a"/>',
     ["<storage id='s'>", "already used"]),
])
def test_storage_mappings_must_name_declared_hosts_and_storages(tmp_path, body, needles):
    refused(xml(tmp_path, body), *needles)


def test_a_storage_on_a_cluster_host_loads(tmp_path):
    body = (f'<zone id="storages" routing="Full">{STORAGE_TYPE}<storage id="s" typeId="disk" attach="n1"/>'
            '<host id="a" speed="1Gf"><mount storageId="s" name="/scratch"/></host></zone>'
            '<cluster id="c" prefix="n" suffix="" radical="0-1" speed="1Gf" bw="1GBps" lat="1us"/>')
    assert load_platform(xml(tmp_path, body)).nb_compute == 3


# ================================================================ 5. routes through links that do not exist


@pytest.mark.parametrize("route, needles", [
    ('<route src="a" dst="b"><link_ctn id="nolink"/></route>', ["<route src='a' dst='b'>, <link_ctn id='nolink'>", "no link named 'nolink'"]),
    ('<route src="a" dst="b"/>', ["<route src='a' dst='b'>", "no <link_ctn>"]),
    ('<bypassRoute src="a" dst="b"><link_ctn id="l"/></bypassRoute>', ["<bypassRoute src='a' dst='b'>", "'l'"]),
])
def test_routes_in_a_platform_without_links_are_refused(tmp_path, route, needles):
    refused(xml(tmp_path, f'<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>{route}'), *needles)


# ================================================================ 6. the platform version


@pytest.mark.parametrize("version, needles", [
    ("nan", ["<platform> version", "'nan'", 'version="4.1"']),
    ("inf", ["<platform> version", "'inf'"]),
    ("", ["<platform> version", "''"]),
    ("4.1.1", ["'4.1.1'"]),
    ("４.1", ["'４.1'"]),
    ("4.2", ["4.2", "newer"]),
    ("5", ["newer"]),
    ("3", ["old format", "simgrid_update_xml"]),
    ("1e400", ["'1e400'"]),
])
def test_bad_platform_versions_are_refused(tmp_path, version, needles):
    refused(xml(tmp_path, '<host id="a" speed="1Gf"/>', version=version), *needles)


@pytest.mark.parametrize("version", ["4", "4.0", "4.1", " 4.1 ", "4.10"])
def test_simgrid_4_versions_load(tmp_path, version):
    assert load_platform(xml(tmp_path, '<host id="a" speed="1Gf"/>', version=version)).nb_compute == 1


def test_json_version_must_be_1(tmp_path):
    hosts = [{"name": "a", "speed": "1Gf"}]
    refused(jsonfile(tmp_path, {"version": 2, "master": {"name": "m"}, "hosts": hosts}), "$.version")
    refused(jsonfile(tmp_path, {"version": True, "master": {"name": "m"}, "hosts": hosts}), "$.version")
    assert load_platform(jsonfile(tmp_path, {"version": 1, "master": {"name": "m"}, "hosts": hosts})).nb_compute == 1


# ================================================================ 7. XML entities, DTDs


LAUGHS = "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10))


@pytest.mark.parametrize("doctype, value", [
    (f'<!DOCTYPE platform [<!ENTITY lol0 "lol">{LAUGHS}]>', "&lol9;"),
    ('<!DOCTYPE platform [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', "&xxe;"),
    ('<!DOCTYPE platform [<!ENTITY % remote SYSTEM "http://example.invalid/x.dtd"> %remote;]>', "x"),
    ('<!DOCTYPE platform [<!ENTITY e "1Gf">]>', "&e;"),
])
def test_entities_and_external_references_are_refused(tmp_path, doctype, value):
    text = (f'<?xml version="1.0"?>\n{doctype}\n<platform version="4.1"><zone id="z" routing="Full">'
            f'<host id="a" speed="1Gf"><prop id="k" value="{value}"/></host>{MASTER}</zone></platform>')
    refused(write(tmp_path, "bomb.xml", text), "<!ENTITY", "remove the entity declarations")


def test_simgrid_doctype_is_accepted_and_not_fetched(tmp_path):
    text = ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n<platform version="4.1">'
            f'<zone id="z" routing="Full"><host id="a" speed="1Gf"/>{MASTER}</zone></platform>')
    assert load_platform(write(tmp_path, "dtd.xml", text)).nb_compute == 1


# ================================================================ 8. everything else


@pytest.mark.parametrize("body, needles", [
    ('<host id="a" speed="inf"/>', ["host 'a', speed", "'inf'"]),
    ('<host id="a" speed="1e400f"/>', ["host 'a', speed", "finite"]),
    ('<host id="a" speed="-1Gf"/>', ["host 'a', speed", "non-negative"]),
    ('<host id="a" speed="1Gf" pstate=""/>', ["host 'a', pstate", "''"]),
    ('<host id="a" speed="1Gf" pstate="99999999999999999999999"/>', ["host 'a', pstate", "too large"]),
    ('<host id="" speed="1Gf"/>', ["<host>", "'id'"]),
    ('<host id="a" speed="1Gf"><prop id="role" value="compute_node"/><prop id="role" value="master"/></host>', ["host 'a', <prop id='role'>", "twice"]),
    ('<zone id="y" routing="Full"><host id="a" speed="1Gf"/></zone><zone id="y" routing="Full"/>', ["zone 'y'", "already used"]),
    ('<cluster id="c" prefix="a" suffix="" radical="0" speed="1Gf" bw="1GBps" lat="1us"/><cluster id="c" prefix="b" suffix="" radical="0" speed="1Gf" bw="1GBps" lat="1us"/>', ["cluster 'c'", "already used"]),
    ('<zone routing="Full"><host id="a" speed="1Gf"/></zone>', ["<zone>", "'id'"]),
    ('<hots id="a" speed="1Gf"/>', ["<hots>", "did you mean <host>?"]),
    ('<host id="a" speed="1Gf"/><include file="more.xml"/>', ["<include id='more.xml'>", "paste"]),
    ('<host id="a" speed="1Gf"/><peer id="p" speed="1Gf" bw_in="1GBps" bw_out="1GBps"/>', ["<peer id='p'>", "only be used in Vivaldi netzones"]),
    ('<host id="a" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1e10s"/>', ["<link id='l'>, latency", "2^33"]),
    ('<host id="a" speed="1Gf"/><link id="l" bandwidth="nan" latency="0"/>', ["<link id='l'>, bandwidth", "'nan'"]),
])
def test_more_bad_xml_values(tmp_path, body, needles):
    refused(xml(tmp_path, body), *needles)


@pytest.mark.parametrize("data, needles", [
    ([1, 2], ["$", "object"]),
    (None, ["$", "object"]),
    ("platform", ["$", "object"]),
    ({"master": {"name": "m"}, "hosts": {"name": "a"}}, ["$.hosts"]),
    ({"master": {"name": "m"}, "hosts": [None]}, ["$.hosts[0]"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": "1Gf", "pstate": True}]}, ["$.hosts[0].pstate"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": None}]}, ["$.hosts[0].speed"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": 10**400}]}, ["$.hosts[0] ('a').speed", "too large"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": -5}]}, ["$.hosts[0] ('a').speed", "non-negative"]),
    ({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": "1Gf", "wattage_off": 1e308 * 10}]}, ["Infinity"]),
    ({"master": {"name": "m"}, "clusters": [{"id": "c", "speed": "1Gf", "count": True}]}, ["$.clusters[0].count"]),
    ({"master": {"name": "m"}, "clusters": [{"id": "", "speed": "1Gf", "count": 2}]}, ["$.clusters[0].id"]),
    ({"master": {"name": "m"}, "clusters": [{"id": "c", "prefix": "a", "speed": "1Gf", "count": 2},
                                            {"id": "c", "prefix": "b", "speed": "1Gf", "count": 2}]}, ["$.clusters[1] ('c').id", "already used"]),
    ({"master": {"name": "m"}, "clusters": [{"id": "c", "speed": "1Gf", "count": 2, "bw": "1GBps", "lat": 1e10}]}, ["$.clusters[0] ('c').lat", "2^33"]),
])
def test_more_bad_json_values(tmp_path, data, needles):
    refused(write(tmp_path, "p.json", json.dumps(data)), *needles)


@pytest.mark.parametrize("text, needles", [
    ('{"master": {"name": "m"}, "hosts": [{"name": "a", "speed": NaN}]}', ["NaN"]),
    ('{"master": {"name": "m"}, "hosts": [{"name": "a", "speed": -Infinity}]}', ["Infinity"]),
    ('{"master": {"name": "m"}, "hosts": [{"name": "a", "speed": 1e9, "speed": 2e9}]}', ["key 'speed'", "twice"]),
    ('{"hosts": [], "hosts": []}', ["key 'hosts'", "twice"]),
    ('{"master": {"name": "m"}, "hosts": [{"name": "a", "speed": ' + "9" * 5000 + "}]}", ["malformed JSON", "thousands of digits"]),
    ("", ["line 1", "malformed JSON"]),
])
def test_non_standard_json_is_refused(tmp_path, text, needles):
    refused(write(tmp_path, "p.json", text), *needles)


def test_json_integers_written_as_floats_are_integers(tmp_path):
    data = {"master": {"name": "m"}, "clusters": [{"id": "c", "speed": ["1Gf", "2Gf"], "pstate": 1.0, "count": 2.0}]}
    platform = load_platform(jsonfile(tmp_path, data))
    assert [(h.name, h.pstate, h.speed) for h in platform.compute_hosts] == [("0", 1, 2e9), ("1", 1, 2e9)]
    assert all(type(h.pstate) is int for h in platform.compute_hosts)


def test_json_with_a_byte_order_mark_loads(tmp_path):
    text = json.dumps({"master": {"name": "m"}, "hosts": [{"name": "a", "speed": "1Gf"}]})
    assert load_platform(write(tmp_path, "bom.json", "\ufeff" + text)).nb_compute == 1


@pytest.mark.parametrize("name, content, needles", [
    ("utf8.xml", b'<platform version="4.1"><zone id="z"><host id="\xff\xfe" speed="1Gf"/></zone></platform>', ["line 1", "malformed XML"]),
    ("utf8.json", b'{"hosts": [{"name": "\xc3\x28", "speed": 1}]}', ["line 1", "not UTF-8"]),
    ("junk.xml", bytes(range(256)) * 4, ["malformed XML"]),
    ("junk.json", bytes(range(256)) * 4, ["not UTF-8"]),
    ("empty.xml", b"", ["malformed XML"]),
    ("enc.xml", b'<?xml version="1.0" encoding="no-such-codec"?><platform/>', ["line 1", "no-such-codec"]),
])
def test_bytes_that_are_not_a_platform(tmp_path, name, content, needles):
    refused(write(tmp_path, name, content), *needles)


def test_paths_that_are_not_platform_files(tmp_path):
    (tmp_path / "dir.xml").mkdir()
    refused(str(tmp_path / "dir.xml"), "directory")
    refused(str(tmp_path / "missing.json"), "no such file")
    if os.path.exists("/dev/zero"):  # a device would be read forever
        refused("/dev/zero", "extension")
        from joulesim.simulator.platform.platform_xml import load_xml_platform
        with pytest.raises(InputError, match="/dev/zero: platform: is a device"):
            load_xml_platform("/dev/zero")
    refused(str(tmp_path / "nul\0.xml"), "no such file")
    refused("cluster32\0", "no shipped platform")
    from joulesim.simulator.platform.platform_json import load_json_platform
    with pytest.raises(InputError, match="cannot read"):
        load_json_platform(str(tmp_path / "nul\0.json"))


def test_zone_routes_whose_gateways_are_one_point_are_refused_as_simgrid_does(tmp_path):
    # Found by fuzzing: the shortest path B -> A -> X crosses gateway h1 then h2; joining them
    # needs the route from h1 to h2 itself (SimGrid's get_global_route would recurse forever).
    def zone(zid, host):
        return (f'<zone id="{zid}" routing="Full"><host id="{host}" speed="1Gf"/><router id="r{host}"/><link id="l{host}" bandwidth="1GBps" latency="0"/>'
                f'<route src="{host}" dst="r{host}"><link_ctn id="l{host}"/></route></zone>')
    body = (f'<zone id="top" routing="Floyd">{zone("A", "h0")}{zone("B", "h1")}<zone id="X" routing="Floyd">{zone("C", "h2")}</zone>'
            '<link id="t0" bandwidth="1GBps" latency="0"/><link id="t1" bandwidth="1GBps" latency="0"/>'
            '<zoneRoute src="A" dst="B" gw_src="h1" gw_dst="h1"><link_ctn id="t0"/></zoneRoute>'
            '<zoneRoute src="A" dst="X" gw_src="h2" gw_dst="h2"><link_ctn id="t1"/></zoneRoute></zone>')
    # The zoneRoutes' gateways are one point each (gw_src = gw_dst), which SimGrid 3.32 refuses
    # at load ("Cannot define a NetzoneRoute from 'h1' to itself"): so is it here now.
    refused(xml(tmp_path, body, master=f'<zone id="mz" routing="Full">{MASTER}</zone>'), "<zoneRoute src='A' dst='B'>",
            "gw_src and gw_dst are both 'h1'")


def test_the_cli_reports_a_bad_platform_in_one_line_and_exits_2(tmp_path):
    path = xml(tmp_path, '<cluster id="c" prefix="n" suffix="" radical="0-100000000000" speed="1Gf" bw="1GBps" lat="1us"/>', name="huge.xml")
    run = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "--in-process", "-p", path, "-e", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"joulesim: error: {path}: cluster 'c', radical: declares 100,000,000,001 host(s)"), run.stderr
    assert "Traceback" not in run.stderr


# ================================================================ property-based: valid platforms


SPEED_FACTORS = {"": 1.0, "f": 1.0, "kf": 1e3, "Mf": 1e6, "Gf": 1e9, "Tf": 1e12}
speed_texts = st.builds(
    lambda n, frac, unit: (f"{n}{'.' + frac if frac else ''}{unit}", float(f"{n}{'.' + frac if frac else ''}") * SPEED_FACTORS[unit]),
    st.integers(1, 10**6), st.sampled_from(["", "5", "25", "125"]), st.sampled_from(sorted(SPEED_FACTORS)))


@st.composite
def host_specs(draw):
    """(speed texts, speeds, pstate, storage?) of a host or of every host of a cluster."""
    pairs = draw(st.lists(speed_texts, min_size=1, max_size=4))
    return [p[0] for p in pairs], [p[1] for p in pairs], draw(st.integers(0, len(pairs) - 1)), draw(st.booleans())


@st.composite
def radicals(draw):
    """Disjoint ranges in random order: (radical text, host numbers)."""
    lengths = draw(st.lists(st.integers(1, 6), min_size=1, max_size=4))
    gaps = draw(st.lists(st.integers(0, 5), min_size=len(lengths), max_size=len(lengths)))
    parts, numbers, start = [], [], 0
    for length, gap in zip(lengths, gaps):
        lo = start + gap
        parts.append(f"{lo}-{lo + length - 1}" if length > 1 or draw(st.booleans()) else str(lo))
        numbers += range(lo, lo + length)
        start = lo + length
    order = draw(st.permutations(range(len(parts))))
    return ",".join(parts[i] for i in order), numbers


@st.composite
def valid_platforms(draw):
    """A platform as (hosts: name -> (speeds, pstate, role), XML text, JSON data)."""
    expected: dict[str, tuple[list[float], int, str]] = {}
    xml_items, json_hosts, json_clusters = [], [], []
    for i in range(draw(st.integers(0, 4))):
        texts, speeds, pstate, storage = draw(host_specs())
        role = "storage" if storage else "compute_node"
        name = f"h{i}"
        expected[name] = (speeds, pstate, role)
        props = '<prop id="role" value="storage"/>' if storage else ""
        xml_items.append(f'<host id="{name}" speed="{", ".join(texts)}" pstate="{pstate}">{props}</host>')
        json_hosts.append({"name": name, "speed": texts if draw(st.booleans()) else speeds, "pstate": pstate, "role": role})
    for i in range(draw(st.integers(0 if expected else 1, 3))):
        texts, speeds, _, _ = draw(host_specs())
        pstate = 0  # SimGrid's <cluster> has no pstate attribute: its hosts start in pstate 0
        radical, numbers = draw(radicals())
        for n in numbers:
            expected[f"c{i}-{n}"] = (speeds, pstate, "compute_node")
        xml_items.append(f'<cluster id="c{i}" prefix="c{i}-" suffix="" radical="{radical}" speed="{", ".join(texts)}" bw="1GBps" lat="1us"/>')
        numbering = {"radical": radical} if draw(st.booleans()) else {"radical": numbers}
        json_clusters.append({"id": f"c{i}", "prefix": f"c{i}-", "speed": ",".join(texts), "pstate": pstate, **numbering})
    assume(any(role == "compute_node" for _, _, role in expected.values()))
    # Spread the elements over up to 5 nested zones; the master sits in the innermost one.
    depth = draw(st.integers(1, 5))
    cuts = sorted(draw(st.lists(st.integers(0, len(xml_items)), min_size=depth - 1, max_size=depth - 1)))
    bounds = [0, *cuts, len(xml_items)]
    # As SimGrid's DTD wants: a zone holds hosts or zones and clusters, not both (the hosts of
    # a level go into a zone of their own; the master into one innermost).
    body = f'<zone id="mz" routing="Full">{MASTER}</zone>'
    for level in reversed(range(depth)):
        items = xml_items[bounds[level]:bounds[level + 1]]
        hosts = "".join(item for item in items if item.startswith("<host"))
        clusters = "".join(item for item in items if not item.startswith("<host"))
        if hosts:
            hosts = f'<zone id="z{level}h" routing="Full">{hosts}</zone>'
        body = f'<zone id="z{level}" routing="Full">{hosts}{clusters}{body}</zone>'
    xml_text = f'<?xml version="1.0"?>\n<platform version="4.1">{body}</platform>'
    json_data = {"version": 1, "master": {"name": "master_host"}, "hosts": json_hosts, "clusters": json_clusters}
    return expected, xml_text, json_data


def check_loaded(path: str, expected: dict[str, tuple[list[float], int, str]]) -> None:
    platform = load_platform(path)
    compute = {name: spec for name, spec in expected.items() if spec[2] == "compute_node"}
    storage = [name for name, spec in expected.items() if spec[2] == "storage"]
    # As Batsim 4.2.1 numbers them: compute hosts, then storage hosts, each by name as C++ strings
    # compare (the bytes of their UTF-8), whatever their order in the file.
    assert [h.name for h in platform.compute_hosts] == sorted(compute, key=str.encode)
    assert [h.name for h in platform.storage_hosts] == sorted(storage, key=str.encode)
    assert [h.id for h in platform.compute_hosts + platform.storage_hosts] == list(range(len(compute) + len(storage)))
    for host in platform.compute_hosts + platform.storage_hosts:
        speeds, pstate, _ = expected[host.name]
        assert host.speeds == pytest.approx(speeds, rel=1e-12)
        assert host.pstate == pstate
    assert platform.master.name == "master_host"


@pytest.fixture(scope="module")
def fuzz_dir():
    with tempfile.TemporaryDirectory(prefix="joulesim-fuzz-") as d:
        yield Path(d)


@fuzz_settings
@given(valid_platforms())
def test_valid_xml_platforms_load_with_their_hosts_and_speeds(fuzz_dir, platform):
    expected, xml_text, _ = platform
    check_loaded(write(fuzz_dir, "valid.xml", xml_text), expected)


@fuzz_settings
@given(valid_platforms())
def test_valid_json_platforms_load_with_their_hosts_and_speeds(fuzz_dir, platform):
    expected, _, json_data = platform
    check_loaded(write(fuzz_dir, "valid.json", json.dumps(json_data)), expected)


# ================================================================ property-based: broken platforms


HOSTILE_TEXTS = [
    "", " ", "0", "-1", "1", "2", "1e400", "-1e400", "inf", "nan", "NaN", "1_0", "²", "١٢", "５", "１.５Gf", "0-100000000000",
    "0-3,2", "3-1", "1-2-3", "1Gf,,2Gf", "1Gf, 0f", "1:2:3", "1:2", "0:0", "95:190,1:2", "a" * 2000, "\u202e", "\x00",
    "FULLDUPLEX", "WIFI", "Cluster", "Floyd", "None", "Vivaldi", "SPLITDUPLEX", "FATPIPE", "UP", "DOWN", "YES", "no",
    "master", "storage", "compute_node", "master_host", "h0", "c0-1", "z0", "l0", "r0", "4.1", "3", "24ns", "1GBps", "10Gbps",
]
hostile_text = st.one_of(st.sampled_from(HOSTILE_TEXTS), st.text(max_size=30))

XML_ATTRIBUTES = ["id", "speed", "pstate", "core", "radical", "prefix", "suffix", "bw", "lat", "bb_bw", "bb_lat", "sharing_policy",
                  "coordinates", "bw_in", "bw_out",
                  "bb_sharing_policy", "limiter_link", "router_id", "topology", "loopback_bw", "routing", "bandwidth", "latency",
                  "src", "dst", "gw_src", "gw_dst", "symmetrical", "direction", "up", "down", "value", "version",
                  "attach", "typeId", "storageId", "name", "bandwidth_file", "kind", "element"]
XML_TAGS = ["zone", "AS", "host", "cluster", "cabinet", "router", "link", "backbone", "host_link", "route", "zoneRoute",
            "ASroute", "bypassRoute", "link_ctn", "prop", "storage", "storage_type", "mount", "trace_connect", "peer",
            "config", "disk", "hots", "bypassZoneRoute"]


def network_platform(routing: str) -> ET.Element:
    """A valid platform with links, routes, zones and clusters: the seed of the XML mutations."""
    text = f"""<platform version="4.1"><zone id="top" routing="{routing}">
      <zone id="z0" routing="Full">
        <host id="h0" speed="1Gf, 1e-9Mf, 0.5Gf, 0.5Gf" pstate="0">
          <prop id="wattage_per_state" value="95:190, 9:9, 100:100, 120:120"/><prop id="sleep_pstates" value="1:2:3"/>
          <prop id="wattage_off" value="9"/></host>
        <host id="h1" speed="2Gf" core="4"/><router id="r0"/>
        <link id="l0" bandwidth="1GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
        <link id="l1" bandwidth="10Gbps" latency="0"/>
        <storage_type id="disk" size="1TB"/><storage id="s0" typeId="disk" attach="h1"/>
        <route src="h0" dst="h1"><link_ctn id="l0" direction="UP"/><link_ctn id="l1"/></route>
        <route src="h0" dst="r0"><link_ctn id="l1"/></route>
        <route src="h1" dst="r0" symmetrical="YES"><link_ctn id="l1"/></route>
      </zone>
      <cluster id="c0" prefix="c0-" suffix="" radical="0-3" speed="1Gf" bw="1GBps" lat="5us" bb_bw="10GBps" bb_lat="3us">
        <prop id="wattage_per_state" value="10:20"/></cluster>
      <zone id="z1" routing="Cluster">
        <host id="k0" speed="1Gf"/><host id="k1" speed="1Gf"/><router id="kr"/>
        <link id="k0_up" bandwidth="1GBps" latency="0"/><link id="k0_down" bandwidth="1GBps" latency="0"/>
        <link id="k1_up" bandwidth="1GBps" latency="0"/><link id="k1_down" bandwidth="1GBps" latency="0"/>
        <host_link id="k0" up="k0_up" down="k0_down"/><host_link id="k1" up="k1_up" down="k1_down"/>
        <backbone id="kbb" bandwidth="2GBps" latency="1us"/>
      </zone>
      <zone id="zm" routing="Full">{MASTER}</zone>
      <zone id="zv" routing="Vivaldi">
        <peer id="p0" speed="1Gf" bw_in="1GBps" bw_out="500MBps" coordinates="1.5 -2 0.5"/>
        <peer id="pg" speed="1Gf" bw_in="1GBps" bw_out="1GBps" coordinates="0 0 0"/>
      </zone>
      <link id="t0" bandwidth="1GBps" latency="2us"/><link id="t1" bandwidth="1GBps" latency="2us"/>
      <zoneRoute src="z0" dst="c0" gw_src="r0" gw_dst="c0-c0_router"><link_ctn id="t0"/></zoneRoute>
      <zoneRoute src="c0" dst="z1" gw_src="c0-c0_router" gw_dst="kr"><link_ctn id="t1"/></zoneRoute>
      <zoneRoute src="z0" dst="z1" gw_src="r0" gw_dst="kr"><link_ctn id="t0"/><link_ctn id="t1"/></zoneRoute>
      <zoneRoute src="z0" dst="zv" gw_src="r0" gw_dst="pg"><link_ctn id="t1"/></zoneRoute>
    </zone></platform>"""
    return ET.fromstring(text)


def route_all_pairs(platform) -> None:
    if platform.network is None:
        return
    n = platform.nb_compute
    for src in range(n):
        for dst in range(n):
            try:
                resources, latency = platform.network.route(src, dst)
            except InputError as e:
                assert str(e).startswith(platform.source + ": "), str(e)
                continue
            assert all(0 <= r < platform.network.nb_resources for r in resources)
            assert latency >= 0


def test_the_mutation_seed_is_a_valid_platform(tmp_path):
    for routing in ("Full", "Floyd"):
        path = write(tmp_path, f"seed-{routing}.xml", ET.tostring(network_platform(routing), encoding="unicode"))
        platform = load_platform(path)
        assert platform.nb_compute == 10 and [h.name for h in platform.storage_hosts] == []
        route_all_pairs(platform)


@st.composite
def mutated_xml(draw) -> bytes:
    root = network_platform(draw(st.sampled_from(["Full", "Floyd", "Dijkstra", "None"])))
    for _ in range(draw(st.integers(1, 4))):
        elements = list(root.iter())
        elem = draw(st.sampled_from(elements))
        action = draw(st.sampled_from(["set", "set", "set", "delete", "remove", "add", "duplicate"]))
        if action == "set":
            elem.set(draw(st.sampled_from(sorted(elem.attrib) + XML_ATTRIBUTES)), draw(hostile_text))
        elif action == "delete" and elem.attrib:
            del elem.attrib[draw(st.sampled_from(sorted(elem.attrib)))]
        elif action == "remove" and len(elem):
            elem.remove(draw(st.sampled_from(list(elem))))
        elif action == "add":
            child = ET.SubElement(elem, draw(st.sampled_from(XML_TAGS)))
            for _ in range(draw(st.integers(0, 3))):
                child.set(draw(st.sampled_from(XML_ATTRIBUTES)), draw(hostile_text))
        elif action == "duplicate" and len(elem):
            elem.append(draw(st.sampled_from(list(elem))))
    return ET.tostring(root, encoding="utf-8")


@fuzz_settings
@given(mutated_xml())
def test_mutated_xml_platforms_load_or_raise_input_error(fuzz_dir, content):
    path = write(fuzz_dir, "mutated.xml", content)
    loads_or_refuses(path)
    try:
        platform = load_platform(path)
    except InputError:
        return
    route_all_pairs(platform)


@st.composite
def random_xml_trees(draw) -> bytes:
    """Random structure: elements of SimGrid's vocabulary (and typos) with random attributes."""
    def element(depth: int) -> ET.Element:
        elem = ET.Element(draw(st.sampled_from(XML_TAGS)))
        for _ in range(draw(st.integers(0, 4))):
            elem.set(draw(st.sampled_from(XML_ATTRIBUTES)), draw(hostile_text))
        if depth < 4:
            for _ in range(draw(st.integers(0, 3))):
                elem.append(element(depth + 1))
        return elem
    root = ET.Element("platform", {"version": draw(st.sampled_from(["4.1", "4", "nan", ""]))})
    for _ in range(draw(st.integers(0, 3))):
        root.append(element(0))
    master = ET.SubElement(root, "host", {"id": "master_host", "speed": "1Gf"})
    ET.SubElement(master, "prop", {"id": "role", "value": "master"})
    return ET.tostring(root, encoding="utf-8")


@fuzz_settings
@given(random_xml_trees())
def test_random_xml_structures_load_or_raise_input_error(fuzz_dir, content):
    loads_or_refuses(write(fuzz_dir, "random.xml", content))


# Every attribute of the seed that holds numbers: (tag, id of the element or None, attribute, what the error names).
XML_NUMBER_SLOTS = [
    ("platform", None, "version", "version"), ("host", "h0", "speed", "host 'h0', speed"), ("host", "h0", "pstate", "host 'h0', pstate"),
    ("host", "h1", "core", "host 'h1', core"), ("cluster", "c0", "radical", "cluster 'c0', radical"),
    ("cluster", "c0", "speed", "cluster 'c0', speed"), ("cluster", "c0", "bw", "cluster 'c0', bw"), ("cluster", "c0", "lat", "cluster 'c0', lat"),
    ("cluster", "c0", "bb_bw", "cluster 'c0', bb_bw"), ("cluster", "c0", "bb_lat", "cluster 'c0', bb_lat"),
    ("link", "l0", "bandwidth", "<link id='l0'>, bandwidth"), ("link", "l0", "latency", "<link id='l0'>, latency"),
    ("backbone", "kbb", "bandwidth", "<backbone id='kbb'>, bandwidth"), ("backbone", "kbb", "latency", "<backbone id='kbb'>, latency"),
    ("prop", "wattage_per_state", "value", "host 'h0', property 'wattage_per_state'"),
    ("prop", "sleep_pstates", "value", "host 'h0', property 'sleep_pstates'"), ("prop", "wattage_off", "value", "host 'h0', property 'wattage_off'"),
    ("peer", "p0", "coordinates", "peer 'p0', coordinates"), ("peer", "p0", "bw_in", "<peer id='p0'>, bw_in"),
    ("peer", "p0", "speed", "peer 'p0', speed"),
]
# Characters Python's int()/float() (or \d, str.isdigit) take for digits, but SimGrid does not.
NOT_ASCII_DIGITS = "²³¹١٢٣٤５６０߀०১੧૧୧௧౧೧൧๑໑༡၁᠑᧑᭑᮱᱁꘡꣑꤁꧑꩑꯱０９_"
numberish = st.text(alphabet="0123456789.eE+-_ ,:xGfMkBbpsnuTiK" + NOT_ASCII_DIGITS[:8], max_size=14)


def number_slot(root: ET.Element, slot) -> ET.Element:
    tag, ident, _, _ = slot
    return next(e for e in root.iter(tag) if ident is None or e.get("id") == ident)


@fuzz_settings
@given(st.sampled_from(["Full", "Floyd"]), st.sampled_from(XML_NUMBER_SLOTS), st.one_of(numberish, hostile_text))
def test_any_text_in_a_number_attribute_loads_or_raises_input_error(fuzz_dir, routing, slot, text):
    root = network_platform(routing)
    number_slot(root, slot).set(slot[2], text)
    loads_or_refuses(write(fuzz_dir, "numbers.xml", ET.tostring(root, encoding="utf-8")))


@fuzz_settings
@given(st.sampled_from(XML_NUMBER_SLOTS), st.sampled_from(NOT_ASCII_DIGITS), st.data())
def test_a_non_ascii_digit_in_a_number_attribute_is_refused_by_name(fuzz_dir, slot, char, data):
    root = network_platform("Full")
    elem = number_slot(root, slot)
    text = elem.get(slot[2])
    at = data.draw(st.integers(0, len(text)), label="position")
    elem.set(slot[2], text[:at] + char + text[at:])
    # (power properties, <prop>s here, are read with -E only)
    refused(write(fuzz_dir, "digits.xml", ET.tostring(root, encoding="utf-8")), slot[3], energy=slot[0] == "prop")


JSON_NUMBER_SLOTS = [  # (path in JSON_SEED, what the error names)
    (("master", "speed"), "$.master ('master_host').speed"), (("hosts", 0, "speed", 0), "$.hosts[0] ('h0').speed"),
    (("hosts", 0, "speed", 1), "$.hosts[0] ('h0').speed"), (("clusters", 0, "speed"), "$.clusters[0] ('c0').speed"),
    (("clusters", 0, "bw"), "$.clusters[0] ('c0').bw"), (("clusters", 0, "lat"), "$.clusters[0] ('c0').lat"),
    (("clusters", 0, "bb_bw"), "$.clusters[0] ('c0').bb_bw"), (("clusters", 1, "radical"), "$.clusters[1] ('c1').radical"),
    (("clusters", 1, "limiter_link"), "$.clusters[1] ('c1').limiter_link"), (("backbone", "bw"), "$.backbone ('backbone').bw"),
    (("backbone", "lat"), "$.backbone ('backbone').lat"),
]


@fuzz_settings
@given(st.sampled_from(JSON_NUMBER_SLOTS), st.sampled_from(NOT_ASCII_DIGITS), st.data())
def test_a_non_ascii_digit_in_a_json_number_string_is_refused_by_name(fuzz_dir, slot, char, data):
    seed = json.loads(json.dumps(JSON_SEED))
    *parents, last = slot[0]
    node = seed
    for key in parents:
        node = node[key]
    text = node[last]
    at = data.draw(st.integers(0, len(text)), label="position")
    node[last] = text[:at] + char + text[at:]
    refused(write(fuzz_dir, "digits.json", json.dumps(seed)), slot[1])


@fuzz_settings
@given(st.integers(1, 3000))
def test_zones_load_up_to_the_depth_limit_and_are_refused_beyond(fuzz_dir, depth):
    path = write(fuzz_dir, "nested.xml", nested_zones(depth))
    if depth <= MAX_ZONE_DEPTH:
        assert load_platform(path).nb_compute == 1
    else:
        refused(path, f"more than {MAX_ZONE_DEPTH} deep")


@fuzz_settings
@given(st.integers(1, 20_000), st.sampled_from(["[", '{"a": ']))
def test_json_nesting_loads_or_raises_input_error(fuzz_dir, depth, opening):
    closing = "]" if opening == "[" else "}"
    text = '{"master": {"name": "m"}, "hosts": [{"name": "a", "speed": 1}], "network": ' + opening * depth + "1" * (opening != "[") + closing * depth + "}"
    loads_or_refuses(write(fuzz_dir, "nested.json", text))


@fuzz_settings
@given(st.integers(0, 10**6), st.one_of(st.integers(0, 40), st.integers(MAX_HOSTS, 10**17)), st.booleans())
def test_cluster_sizes_load_or_are_refused_before_allocating(fuzz_dir, lo, size, as_json):
    hi = lo + size
    count = hi - lo + 1
    if as_json:
        path = write(fuzz_dir, "size.json", json.dumps({"master": {"name": "m"}, "clusters": [{"id": "c", "radical": f"{lo}-{hi}", "speed": 1}]}))
    else:
        path = write(fuzz_dir, "size.xml", nested_zones(1).replace("<host id=\"a\"", f'<cluster id="c" prefix="n" suffix="" radical="{lo}-{hi}" speed="1Gf" bw="1GBps" lat="1us"/><zone id="h" routing="Full"><host id="a"').replace("</zone></platform>", "</zone></zone></platform>"))
    if count <= 41:
        assert load_platform(path).nb_compute == count + (not as_json)
    else:
        refused(path, f"limit of {MAX_HOSTS:,} hosts")


@fuzz_settings
@given(st.text(max_size=8))
def test_only_simgrid_4_versions_are_accepted(fuzz_dir, version):
    assume("\x00" not in version and all(c.isprintable() for c in version))
    root = ET.fromstring(nested_zones(1))
    root.set("version", version)
    path = write(fuzz_dir, "version.xml", ET.tostring(root, encoding="utf-8"))
    try:
        load_platform(path)
    except InputError as e:
        assert str(e).startswith(f"{path}: <platform> version"), str(e)
        return
    assert re.fullmatch(r"[ \t\r\n]*[0-9]+(\.[0-9]+)?[ \t\r\n]*", version) and 4 <= float(version) <= 4.1, version


@fuzz_settings
@given(st.sampled_from(["h0", "h1", "c0-3", "k1", "master_host", "r0", "c0", "z0", "s0", "nohost", ""]),
       st.sampled_from(["s0", "s1", "disk", ""]))
def test_storages_load_only_on_declared_hosts(fuzz_dir, attach, mount):
    root = network_platform("Full")
    next(root.iter("storage")).set("attach", attach)
    h0 = next(e for e in root.iter("host") if e.get("id") == "h0")
    ET.SubElement(h0, "mount", {"storageId": mount, "name": "/data"})
    path = write(fuzz_dir, "storage.xml", ET.tostring(root, encoding="utf-8"))
    if attach in ("h0", "h1", "c0-3", "k1", "master_host") and mount == "s0":
        assert load_platform(path).nb_compute == 10
    else:
        refused(path, "<mount>" if attach in ("h0", "h1", "c0-3", "k1", "master_host") else "<storage id='s0'>")


@fuzz_settings
@given(st.lists(st.tuples(st.sampled_from(["route", "bypassRoute", "zoneRoute", "ASroute"]), st.sampled_from(["a", "b", "x", ""]),
                          st.lists(st.sampled_from(["l", "a", ""]), max_size=2)), min_size=1, max_size=3))
def test_routes_without_links_are_always_refused(fuzz_dir, routes):
    body = '<host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>' + "".join(
        f'<{tag} src="{src}" dst="b">{"".join(f"<link_ctn id={chr(34)}{link}{chr(34)}/>" for link in links)}</{tag}>'
        for tag, src, links in routes)
    refused(xml(fuzz_dir, body, name="routes.xml"), f"<{routes[0][0]} src='{routes[0][1]}' dst='b'>")


# The hosts and routers inside each zone of the gateway test: a zoneRoute's gateways are drawn
# from those of its two zones, in either role (a gateway on the wrong side can make routes loop).
INSIDE = {"A": ["h0", "rh0"], "B": ["h1", "rh1"], "C": ["h2", "rh2"], "D": ["h3", "rh3"], "X": ["h2", "h3", "ra"]}


def leaf_zone(zid: str, host: str) -> str:
    return (f'<zone id="{zid}" routing="Full"><host id="{host}" speed="1Gf"/><router id="r{host}"/><link id="l{host}" bandwidth="1GBps" latency="0"/>'
            f'<route src="{host}" dst="r{host}"><link_ctn id="l{host}"/></route></zone>')


@st.composite
def zone_routes(draw, zones: list[str], tag: str) -> str:
    pairs = draw(st.lists(st.tuples(st.sampled_from(zones), st.sampled_from(zones)).filter(lambda p: p[0] != p[1]),
                          min_size=1, max_size=5, unique=True))
    routes = []
    for i, (a, b) in enumerate(pairs):
        gw_src, gw_dst = (draw(st.sampled_from(INSIDE[a] + INSIDE[b])) for _ in range(2))
        routes.append(f'<link id="{tag}{i}" bandwidth="1GBps" latency="0"/><zoneRoute src="{a}" dst="{b}" gw_src="{gw_src}" gw_dst="{gw_dst}" '
                      f'symmetrical="{draw(st.sampled_from(["YES", "NO"]))}"><link_ctn id="{tag}{i}"/></zoneRoute>')
    return "".join(routes)


@fuzz_settings
@given(st.sampled_from(["Floyd", "Full", "Dijkstra"]), st.sampled_from(["Floyd", "Full"]), st.data())
def test_zone_routes_with_any_gateways_route_or_raise_input_error(fuzz_dir, top, inner, data):
    # Two levels of zones joined by zoneRoutes whose gateways are drawn from every host and router.
    x = f'<zone id="X" routing="{inner}"><router id="ra"/>{leaf_zone("C", "h2")}{leaf_zone("D", "h3")}{data.draw(zone_routes(["C", "D"], "x"))}</zone>'
    body = f'<zone id="T" routing="{top}"><router id="rb"/>{leaf_zone("A", "h0")}{leaf_zone("B", "h1")}{x}{data.draw(zone_routes(["A", "B", "X"], "t"))}</zone>'
    path = xml(fuzz_dir, body, name="gateways.xml", master=f'<zone id="mz" routing="Full">{MASTER}</zone>')
    try:
        platform = load_platform(path)
    except InputError as e:
        assert str(e).startswith(path + ": ")
        return
    route_all_pairs(platform)


@fuzz_settings
@given(st.binary(max_size=300), st.sampled_from(["junk.xml", "junk.json"]))
def test_random_bytes_load_or_raise_input_error(fuzz_dir, content, name):
    loads_or_refuses(write(fuzz_dir, name, content))


JSON_SEED = {
    "version": 1, "description": "seed",
    "master": {"name": "master_host", "speed": "1Gf", "link": {"bw": "10GBps", "lat": "1us"}},
    "hosts": [{"name": "h0", "speed": ["1Gf", "1e-9Mf", 0.5e9, 0.5e9], "pstate": 0, "role": "compute_node",
               "wattage_per_state": [[95, 190], [9, 9], [100, 100], [120, 120]], "wattage_off": 9,
               "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}], "properties": {"k": "v"}},
              {"name": "s0", "speed": 1e9, "role": "storage"}],
    "clusters": [{"id": "c0", "prefix": "c0-", "count": 4, "speed": "1Gf", "bw": "1GBps", "lat": "5us", "bb_bw": "10GBps"},
                 {"id": "c1", "prefix": "c1-", "radical": "0-1,5", "speed": [1e9, 2e9], "pstate": 1, "bw": 1e9,
                  "sharing_policy": "FATPIPE", "limiter_link": "1GBps", "zone_properties": {"site": "x"}}],
    "backbone": {"bw": "10GBps", "lat": "1us"},
}

json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=10**18, max_value=10**30),
              st.floats(allow_nan=True, allow_infinity=True), hostile_text),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(
        ["name", "id", "speed", "count", "radical", "pstate", "role", "bw", "lat", "sleep", "switch_off", "switch_on", "x"]), children, max_size=3),
    max_leaves=6)


@st.composite
def mutated_json(draw) -> str:
    data = json.loads(json.dumps(JSON_SEED))
    for _ in range(draw(st.integers(1, 4))):
        # Walk down to a random container, then replace, delete or add one of its entries.
        node = data
        while True:
            children = [(k, v) for k, v in (node.items() if isinstance(node, dict) else enumerate(node)) if isinstance(v, (dict, list))]
            if not children or draw(st.booleans()):
                break
            node = draw(st.sampled_from(children))[1]
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        action = draw(st.sampled_from(["set", "set", "delete", "add"]))
        if action == "set" and keys:
            node[draw(st.sampled_from(keys))] = draw(json_values)
        elif action == "delete" and keys:
            del node[draw(st.sampled_from(keys))]
        elif isinstance(node, dict):
            node[draw(st.sampled_from(["speed", "pstate", "count", "radical", "role", "bb_lat", "topology", "core", "suffix", "junk"]))] = draw(json_values)
        else:
            node.append(draw(json_values))
    return json.dumps(data)  # NaN and Infinity included: the loader must refuse them


def test_the_json_mutation_seed_is_a_valid_platform(tmp_path):
    platform = load_platform(write(tmp_path, "seed.json", json.dumps(JSON_SEED)))
    assert platform.nb_compute == 8 and [h.name for h in platform.storage_hosts] == ["s0"]
    route_all_pairs(platform)


@fuzz_settings
@given(mutated_json())
def test_mutated_json_platforms_load_or_raise_input_error(fuzz_dir, text):
    path = write(fuzz_dir, "mutated.json", text)
    loads_or_refuses(path)
    try:
        platform = load_platform(path)
    except InputError:
        return
    route_all_pairs(platform)


@fuzz_settings
@given(json_values)
def test_any_json_document_loads_or_raises_input_error(fuzz_dir, value):
    loads_or_refuses(write(fuzz_dir, "any.json", json.dumps(value)))


def test_a_platform_is_read_without_setting_the_whole_size_limit_aside(tmp_path):
    """read(limit + 1) reserved the 1 GiB limit for every platform file: a process whose address
    space is bounded (ulimit -v, as on shared login nodes) could not load cluster128. A pipe, with
    no size to check beforehand, is read in pieces up to the limit."""
    import subprocess
    import sys

    script = ("import resource\n"
              "resource.setrlimit(resource.RLIMIT_AS, (600 * 2**20, 600 * 2**20))\n"
              "from joulesim.simulator.platform.platform_loader import load_platform\n"
              "print(load_platform('cluster128').nb_compute)\n"
              "import os, threading\n"
              "read_end, write_end = os.pipe()  # an anonymous pipe (a named one is refused: it may never open)\n"
              f"piped = {str(tmp_path / 'piped.xml')!r}\n"
              "os.symlink(f'/dev/fd/{read_end}', piped)\n"
              "text = open(load_platform('small4').source, 'rb').read()\n"
              "def write():\n"
              "    with open(write_end, 'wb') as out:\n"
              "        out.write(text)\n"
              "threading.Thread(target=write).start()\n"
              "print(load_platform(piped).nb_compute)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["128", "4"], done.stderr[-2000:]
