"""The five placement variants of conservative backfilling (seed 001, section 5.5.2).

Unit tests of each rule on bitmasks, then the decider through `handle()` with hand-written
messages and end to end with a small platform whose zones carry a `cluster` property.

The shared scenario (8 machines, clusters 0-3 and 4-7): at t=1 machines 0 and 2 are busy
until 100, the hole now is H = {1, 3-7}; x (3 machines, 50 s) then y (3 machines, 100 s)
arrive.
- basic: x on the lowest ids 1 3-4; y on 5-7, now.
- best_effort_contiguous: x on the first block 3-5; {1, 6-7} has no block of 3: y on it.
- best_effort_local: cluster 0 holds only {1, 3}: x on 4-6; {1, 3, 7} is not local: y on it.
- contiguous: x on 3-5; y refuses {1, 6-7} and waits for x's end (51): block 3-5.
- local: x on 4-6; y refuses {1, 3, 7} and waits for x's end (51): 4-6 in cluster 1.
"""

from __future__ import annotations

import random

import pytest
from procset import ProcSet
from test_policy_schedules import EXPECTED as POLICY_EXPECTED
from test_policy_schedules import JOBS as POLICY_JOBS

from joulesim.deciders import describe_deciders, load_decider
from joulesim.deciders.batch.conservative import ConservativeBackfilling
from joulesim.deciders.common.machine_masks import lowest_bits, mask_to_procset, procset_to_mask
from joulesim.deciders.common.placement import (
    PLACEMENTS,
    basic,
    best_effort_contiguous,
    best_effort_local,
    clusters_from_labels,
    clusters_of_size,
    contiguous,
    first_contiguous_block,
    first_local_set,
    local,
    longest_run,
    placement_rule,
)
from joulesim.protocol.errors import JoulesimError

from conftest import jobs_by_id, run_in_process, write_platform, write_workload
from test_deciders_unit import completed, send, submitted


def m(*items) -> int:
    """A bitmask from ProcSet items: m(1, (3, 7)) is {1, 3..7}."""
    return procset_to_mask(ProcSet(*items))


def ids(mask: int | None) -> str | None:
    return None if mask is None else str(mask_to_procset(mask))


TWO_CLUSTERS = [m((0, 3)), m((4, 7))]


# --------------------------------------------------------------------------- rules on bitmasks
def test_basic_takes_the_lowest_ids():
    hole = m(1, (3, 7))
    assert ids(basic(hole, 3)) == "1 3-4"
    assert basic(hole, 6) == hole
    assert placement_rule("basic") is lowest_bits  # the very function of the default path


def test_contiguous_block_in_a_fragmented_hole():
    hole = m((0, 1), (3, 5), (7, 10))  # runs of 2, 3 and 4
    assert ids(first_contiguous_block(hole, 2)) == "0-1"  # ties: the lowest block
    assert ids(first_contiguous_block(hole, 3)) == "3-5"  # the first run long enough
    assert ids(first_contiguous_block(hole, 4)) == "7-10"
    assert first_contiguous_block(hole, 5) is None
    assert ids(first_contiguous_block(m((4, 9)), 3)) == "4-6"  # the lowest ids of a long run
    assert ids(first_contiguous_block(m((0, 299)), 300)) == "0-299"


def test_contiguous_strict_and_best_effort():
    hole = m(1, (6, 7), 9)  # no block of 3
    assert contiguous(hole, 3) is None
    assert ids(best_effort_contiguous(hole, 3)) == "1 6-7"  # as basic
    assert ids(contiguous(hole, 2)) == ids(best_effort_contiguous(hole, 2)) == "6-7"
    assert ids(contiguous(hole, 1)) == "1"


def test_contiguity_ignores_clusters():
    # 3-5 straddles clusters 0-3 and 4-7: still contiguous (the rule knows ids only).
    assert ids(contiguous(m(1, (3, 7)), 3)) == "3-5"


def test_local_takes_the_first_cluster_able_to_take_the_job():
    hole = m((1, 2), (5, 7))  # cluster 0: 1-2; cluster 1: 5-7
    assert ids(local(hole, 3, TWO_CLUSTERS)) == "5-7"
    # Both clusters can take 2: the first one (lowest ids), its lowest ids.
    assert ids(local(hole, 2, TWO_CLUSTERS)) == "1-2"
    assert ids(local(hole, 1, TWO_CLUSTERS)) == "1"
    assert local(hole, 4, TWO_CLUSTERS) is None  # no cluster has 4 free
    assert ids(best_effort_local(hole, 4, TWO_CLUSTERS)) == "1-2 5-6"  # as basic


def test_local_sets_need_not_be_contiguous():
    even, odd = m(0, 2, 4, 6), m(1, 3, 5, 7)
    hole = m(1, (3, 7))
    assert ids(local(hole, 3, [even, odd])) == "1 3 5"  # even has only 4 and 6
    assert ids(local(hole, 2, [even, odd])) == "4 6"  # first fit: even comes first (id 0)
    assert local(m((0, 7)), 5, [even, odd]) is None


def test_first_fit_follows_the_given_cluster_order():
    hole = m((0, 7))
    assert ids(first_local_set(hole, 2, [m((4, 7)), m((0, 3))])) == "4-5"
    assert first_local_set(hole, 2, []) is None


def naive_contiguous(hole: int, q: int) -> int | None:
    block = (1 << q) - 1
    for start in range(hole.bit_length()):
        if (hole >> start) & block == block:
            return block << start
    return None


def naive_local(hole: int, q: int, clusters: list[int]) -> int | None:
    for cluster in clusters:
        free = sorted(i for i in range(cluster.bit_length()) if (hole & cluster) >> i & 1)
        if len(free) >= q:
            return sum(1 << i for i in free[:q])
    return None


def test_rules_agree_with_naive_versions():
    rng = random.Random(5)
    for _ in range(3000):
        width = rng.choice([8, 64, 200])
        hole = rng.getrandbits(width) | rng.getrandbits(width)  # denser: longer runs
        q = rng.randint(1, min(width, 40))
        clusters = clusters_of_size((1 << width) - 1, rng.choice([4, 16, 50]))
        assert first_contiguous_block(hole, q) == naive_contiguous(hole, q)
        assert first_local_set(hole, q, clusters) == naive_local(hole, q, clusters)
        for name in PLACEMENTS:
            chosen = placement_rule(name, clusters)(hole, q)
            if hole.bit_count() >= q and chosen is not None:
                assert chosen.bit_count() == q and not chosen & ~hole, name
            if name.startswith("best_effort") or name == "basic":
                assert chosen is not None


def test_cluster_masks():
    assert [ids(c) for c in clusters_of_size(m((0, 9)), 4)] == ["0-3", "4-7", "8-9"]  # last smaller
    assert [ids(c) for c in clusters_of_size(m((0, 2), (8, 11)), 4)] == ["0-2", "8-11"]  # no empty one
    labels = [(0, "b"), (1, "a"), (2, "b"), (3, "a"), (4, "c")]
    assert [ids(c) for c in clusters_from_labels(labels)] == ["0 2", "1 3", "4"]  # by lowest id
    assert longest_run(m((0, 1), (3, 6), 9)) == 4 and longest_run(0) == 0
    with pytest.raises(ValueError):
        clusters_of_size(m((0, 3)), 0)


def test_placement_rule_errors():
    with pytest.raises(ValueError, match="unknown placement"):
        placement_rule("random")
    with pytest.raises(ValueError, match="needs the clusters"):
        placement_rule("local")


# --------------------------------------------------------------------------- the decider
def begins_with(resources: list[dict]) -> dict:
    # Resource ids may have gaps (a test of holes): nb_resources covers the highest id.
    return {"timestamp": 0.0, "type": "SIMULATION_BEGINS", "data": {
        "nb_resources": max(r["id"] for r in resources) + 1, "nb_compute_resources": len(resources), "nb_storage_resources": 0,
        "allow_compute_sharing": False, "allow_storage_sharing": False, "config": {},
        "compute_resources": resources, "storage_resources": [], "workloads": {"w0": "w.json"}, "profiles": {}}}


def resource(i: int, zone_cluster: str | None = None, host_cluster: str | None = None) -> dict:
    zone = {} if zone_cluster is None else {"cluster": zone_cluster}
    props = {} if host_cluster is None else {"cluster": host_cluster}
    return {"id": i, "name": f"h{i}", "state": "idle", "properties": props, "zone_properties": zone}


def zoned(labels: list[str]) -> dict:
    """SIMULATION_BEGINS with machine i in zone cluster labels[i]."""
    return begins_with([resource(i, label) for i, label in enumerate(labels)])


def plain(n: int) -> dict:
    return begins_with([resource(i) for i in range(n)])


def shared_scenario(options: dict[str, str], begins: dict, order: tuple[int, ...] = tuple(range(8))):
    """The module docstring's scenario, up to t=1; returns the decider and the t=1 decisions.

    Eight one-machine fillers take one machine each (filler i on machine order[i]: a single
    machine goes to the lowest free id, or for the local variants the lowest free id of the
    first cluster with one free); those on 0 and 2 run until 100, the others end at 1.
    """
    decider = load_decider("conservative", options)
    assert send(decider, 0.0, begins) == []
    fillers = [submitted(0.0, f"f{i}", 1, 100 if order[i] in (0, 2) else 1) for i in range(8)]
    assert send(decider, 0.0, *fillers) == [("EXECUTE", f"f{i}", str(order[i])) for i in range(8)]
    ended = [completed(1.0, f"f{i}", str(order[i])) for i in range(8) if order[i] not in (0, 2)]
    return decider, send(decider, 1.0, *ended, submitted(1.0, "x", 3, 50), submitted(1.0, "y", 3, 100))


SHARED_EXPECTED = {  # placement: (decisions at t=1, y's reservation)
    "basic": ([("EXECUTE", "x", "1 3-4"), ("EXECUTE", "y", "5-7")], None),
    "best_effort_contiguous": ([("EXECUTE", "x", "3-5"), ("EXECUTE", "y", "1 6-7")], None),
    "best_effort_local": ([("EXECUTE", "x", "4-6"), ("EXECUTE", "y", "1 3 7")], None),
    "contiguous": ([("EXECUTE", "x", "3-5")], (51.0, "3-5")),
    "local": ([("EXECUTE", "x", "4-6")], (51.0, "4-6")),
}


def reservation(decider, name: str):
    found = decider.reservations.get(f"w0!{name}")
    return None if found is None else (found[0], ids(found[1]))


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_each_variant_in_the_shared_scenario_cluster_size_option(placement):
    decider, decisions = shared_scenario({"placement": placement, "cluster_size": "4"}, plain(8))
    expected, reserved = SHARED_EXPECTED[placement]
    assert decisions == expected
    assert reservation(decider, "y") == reserved
    if reserved is not None:  # x ends on time: y starts at its reservation
        x_alloc = expected[0][2]
        assert send(decider, 51.0, completed(51.0, "x", x_alloc)) == [("EXECUTE", "y", reserved[1])]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_each_variant_in_the_shared_scenario_zone_clusters(placement):
    decider, decisions = shared_scenario({"placement": placement}, zoned(["left"] * 4 + ["right"] * 4))
    assert decisions == SHARED_EXPECTED[placement][0]
    assert reservation(decider, "y") == SHARED_EXPECTED[placement][1]


def test_local_with_interleaved_zone_clusters():
    # Clusters "odd" and "even": x's local set is 1 3 5 (even has only 4 and 6 free);
    # y then finds {4, 6, 7}: no 3 in one cluster, so it waits for x (51): 1 3 5 again.
    interleaved = zoned(["even", "odd"] * 4)
    order = (0, 2, 4, 6, 1, 3, 5, 7)  # the fillers fill cluster "even" first
    decider, decisions = shared_scenario({"placement": "local"}, interleaved, order)
    assert decisions == [("EXECUTE", "x", "1 3 5")]
    assert reservation(decider, "y") == (51.0, "1 3 5")
    decider, decisions = shared_scenario({"placement": "best_effort_local"}, interleaved, order)
    assert decisions == [("EXECUTE", "x", "1 3 5"), ("EXECUTE", "y", "4 6-7")]


def test_cluster_property_sources_and_precedence():
    # Host properties are read when there is no zone property; the zone property wins.
    by_host = begins_with([resource(i, host_cluster="A" if i < 4 else "B") for i in range(8)])
    decider, decisions = shared_scenario({"placement": "local"}, by_host)
    assert decisions == [("EXECUTE", "x", "4-6")]
    # Zones group 0-3 / 4-7; contradicting host properties (even/odd) are ignored.
    both = begins_with([resource(i, "L" if i < 4 else "R", "even" if i % 2 == 0 else "odd") for i in range(8)])
    decider, decisions = shared_scenario({"placement": "local"}, both)
    assert decisions == [("EXECUTE", "x", "4-6")]
    assert [ids(c) for c in decider.clusters] == ["0-3", "4-7"]
    # cluster_size overrides the platform's clusters.
    decider, decisions = shared_scenario({"placement": "local", "cluster_size": "2"}, zoned(["L"] * 8))
    assert [ids(c) for c in decider.clusters] == ["0-1", "2-3", "4-5", "6-7"]


def test_jobs_no_hole_can_take_are_rejected_at_submission():
    decider = load_decider("conservative", {"placement": "local", "cluster_size": "4"})
    send(decider, 0.0, plain(8))
    assert send(decider, 0.0, submitted(0.0, "wide", 5, 10), submitted(0.0, "fits", 4, 10)) == [
        ("REJECT", "wide"), ("EXECUTE", "fits", "0-3")]
    # Compute ids 0-2 and 4-5 (no machine 3): no run of 4 consecutive ids.
    gap = begins_with([resource(i) for i in (0, 1, 2, 4, 5)])
    expected = {"basic": ("EXECUTE", "q4", "0-2 4"), "best_effort_contiguous": ("EXECUTE", "q4", "0-2 4"),
                "contiguous": ("REJECT", "q4")}
    for placement, decision in expected.items():
        decider = load_decider("conservative", {"placement": placement})
        send(decider, 0.0, gap)
        assert send(decider, 0.0, submitted(0.0, "q4", 4, 10)) == [decision], placement


def test_strict_variant_waits_when_the_hole_is_never_good_enough_now():
    # 4 machines, clusters 0-1 / 2-3; a runs on 1 and b on 2 until 100. At 1, c needs 2:
    # the free {0, 3} is neither contiguous nor local; at 100 everything is free.
    for placement, expected, reserved in [
        ("basic", [("EXECUTE", "c", "0 3")], None),
        ("best_effort_contiguous", [("EXECUTE", "c", "0 3")], None),
        ("best_effort_local", [("EXECUTE", "c", "0 3")], None),
        ("contiguous", [], (100.0, "0-1")),
        ("local", [], (100.0, "0-1")),
    ]:
        decider = load_decider("conservative", {"placement": placement, "cluster_size": "2"})
        send(decider, 0.0, plain(4))
        assert send(decider, 0.0, submitted(0.0, "z", 1, 1), submitted(0.0, "a", 1, 100),
                    submitted(0.0, "b", 1, 100)) == [("EXECUTE", "z", "0"), ("EXECUTE", "a", "1"),
                                                      ("EXECUTE", "b", "2")]
        assert send(decider, 1.0, completed(1.0, "z", "0"), submitted(1.0, "c", 2, 10)) == expected, placement
        assert reservation(decider, "c") == reserved, placement


def test_choose_machines_hook_applies_the_placement():
    decider = load_decider("conservative", {"placement": "contiguous"})
    send(decider, 0.0, plain(8))
    assert decider.choose_machines(ProcSet(1, (3, 7)), 3) == ProcSet((3, 5))
    assert decider.choose_machines(ProcSet(1, 3, 5), 2) is None
    decider = load_decider("conservative", {"placement": "best_effort_local", "cluster_size": "4"})
    send(decider, 0.0, plain(8))
    assert decider.choose_machines(ProcSet(1, (3, 7)), 3) == ProcSet((4, 6))


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize("options,message", [
    ({"placement": "random"}, "decider conservative: option placement='random' is invalid: accepted values are "
                              "'basic', 'best_effort_contiguous', 'best_effort_local', 'contiguous', 'local'"),
    ({"placement": "Local"}, "option placement='Local' is invalid"),
    ({"placement": "local", "cluster_size": "0"},
     "option cluster_size='0' is invalid: accepted values are integers >= 1"),
    ({"cluster_size": "four"}, "option cluster_size='four' is invalid"),
    ({"placment": "local"}, "does not accept option\\(s\\) placment \\(accepted: cluster_size, pinned, placement\\)"),
])
def test_option_errors(options, message):
    with pytest.raises(JoulesimError, match=message):
        load_decider("conservative", options)


@pytest.mark.parametrize("placement", ["local", "best_effort_local"])
def test_local_placements_need_clusters(placement):
    decider = load_decider("conservative", {"placement": placement})
    with pytest.raises(JoulesimError, match=f"option placement={placement} needs each machine's cluster.*"
                                            "cluster_size=N"):
        send(decider, 0.0, plain(8))
    partial = begins_with([resource(i, "A" if i < 5 else None) for i in range(8)])
    decider = load_decider("conservative", {"placement": placement})
    with pytest.raises(JoulesimError, match=r"compute resource\(s\) 5-7 have no 'cluster'"):
        send(decider, 0.0, partial)


def test_clusters_are_optional_for_the_other_placements():
    for placement in ("basic", "best_effort_contiguous", "contiguous"):
        decider = load_decider("conservative", {"placement": placement, "cluster_size": "4"})
        send(decider, 0.0, plain(8))  # cluster_size is accepted (and unused): no error
        assert decider.clusters == []


def test_describe_lists_the_options():
    assert describe_deciders()["conservative"].endswith("Options: placement, cluster_size, pinned.")


# --------------------------------------------------------------------------- basic is unchanged
def test_basic_is_the_default_and_gives_the_existing_schedule(tmp_path):
    assert load_decider("conservative", {}).placement == "basic"
    workload = write_workload(tmp_path, [
        {"id": name, "subtime": t, "res": res, "walltime": wall, "delay": wall} for name, t, res, wall in POLICY_JOBS])
    platform = write_platform(tmp_path, 4)
    for options in ({}, {"placement": "basic"}, {"placement": "basic", "cluster_size": "2"}):
        prefix = str(tmp_path / f"out{len(options)}")
        run_in_process(load_decider("conservative", options), platform, [workload], prefix)
        got = {name: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
               for name, r in jobs_by_id(prefix).items()}
        assert got == POLICY_EXPECTED["conservative"]


# --------------------------------------------------------------------------- end to end
def write_clustered_platform(tmp_path, clusters: int, size: int) -> str:
    """`clusters` zones of `size` hosts, each zone with <prop id="cluster" value="cK"/>; cluster K's
    hosts are K*size..K*size+size-1 (their names, h00, h01..., in that order as strings too:
    hosts are numbered by name)."""
    zones = []
    for c in range(clusters):
        hosts = "\n".join(f'      <host id="h{c * size + i:02d}" speed="1Gf"/>' for i in range(size))
        zones.append(f'    <zone id="z{c}" routing="Full">\n      <prop id="cluster" value="c{c}"/>\n'
                     f'{hosts}\n    </zone>')
    path = tmp_path / "clustered.xml"
    path.write_text(
        "<?xml version='1.0'?>\n<platform version=\"4.1\">\n  <zone id=\"top\" routing=\"Full\">\n"
        + "\n".join(zones)
        + '\n    <zone id="zm" routing="Full">\n      <host id="master" speed="1Gf">'
          '<prop id="role" value="master"/></host>\n    </zone>\n  </zone>\n</platform>\n')
    return str(path)


E2E_FILLERS = {"f0": 100, "f1": 1, "f2": 100, "f3": 1, "f4": 1, "f5": 1, "f6": 1, "f7": 1}
E2E_EXPECTED = {  # placement: {job: (start, finish, hosts)} for x and y (submitted at 2)
    "basic": {"x": (2, 52, "1 3-4"), "y": (2, 102, "5-7")},
    "best_effort_contiguous": {"x": (2, 52, "3-5"), "y": (2, 102, "1 6-7")},
    "best_effort_local": {"x": (2, 52, "4-6"), "y": (2, 102, "1 3 7")},
    "contiguous": {"x": (2, 52, "3-5"), "y": (52, 152, "3-5")},
    "local": {"x": (2, 52, "4-6"), "y": (52, 152, "4-6")},
}


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_end_to_end_with_zone_clusters(tmp_path, placement):
    """The shared scenario simulated (x and y arrive at 2, once the short fillers ended at 1);
    the clusters come from the platform's zones through SIMULATION_BEGINS."""
    platform = write_clustered_platform(tmp_path, 2, 4)
    jobs = [{"id": name, "subtime": 0, "res": 1, "walltime": wall, "delay": wall} for name, wall in E2E_FILLERS.items()]
    jobs += [{"id": "x", "subtime": 2, "res": 3, "walltime": 50, "delay": 50},
             {"id": "y", "subtime": 2, "res": 3, "walltime": 100, "delay": 100}]
    workload = write_workload(tmp_path, jobs)
    prefix = str(tmp_path / "out")
    run_in_process(load_decider("conservative", {"placement": placement}), platform, [workload], prefix)
    got = {name: (float(r["starting_time"]), float(r["finish_time"]), r["allocated_resources"])
           for name, r in jobs_by_id(prefix).items()}
    expected = {name: (0.0, float(wall), name[1]) for name, wall in E2E_FILLERS.items()}
    expected |= {name: (float(s), float(f), hosts) for name, (s, f, hosts) in E2E_EXPECTED[placement].items()}
    assert got == expected


class NonIncremental(ConservativeBackfilling):
    incremental = False


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_incremental_plan_matches_a_full_rebuild(tmp_path, placement):
    """Keeping the plan between submissions gives the decisions of a rebuild at every call
    (the strict placements refuse holes monotonically), and every allocation obeys its rule."""
    rng = random.Random(11)
    jobs = []
    t = 0.0
    for i in range(150):
        t += rng.choice([0, 0, 1, 5, 20])
        wall = rng.choice([10, 30, 100, 400])
        jobs.append({"id": f"j{i}", "subtime": t, "res": rng.choice([1, 1, 2, 3, 4, 6, 8, 12]),
                     "walltime": wall, "delay": rng.choice([wall, wall // 2])})
    workload = write_workload(tmp_path, jobs)
    platform = write_clustered_platform(tmp_path, 4, 4)
    outputs = []
    for cls in (ConservativeBackfilling, NonIncremental):
        prefix = str(tmp_path / cls.__name__)
        run_in_process(cls({"placement": placement}), platform, [workload], prefix)
        outputs.append(jobs_by_id(prefix))
    assert outputs[0] == outputs[1]
    for row in outputs[0].values():
        if row["final_state"] == "REJECTED":
            assert placement == "local" and int(row["requested_number_of_resources"]) > 4
            continue
        alloc = ProcSet.from_str(row["allocated_resources"])
        if placement == "contiguous":
            assert len(list(alloc.intervals())) == 1, row
        if placement == "local":
            assert len({i // 4 for i in alloc}) == 1, row
