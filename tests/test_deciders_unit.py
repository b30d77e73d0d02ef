"""Unit tests of the shipped deciders, driven with hand-written simulator messages."""

from __future__ import annotations

import math
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from procset import ProcSet

from joulesim.deciders import DECIDERS, describe_deciders, load_decider
from joulesim.deciders.batch.conservative import ConservativeBackfilling
from joulesim.deciders.batch.easy import EasyBackfilling
from joulesim.deciders.batch.fcfs import FCFS
from joulesim.deciders.batch.rejecter import Rejecter
from joulesim.deciders.batch.sjf import SJF
from joulesim.deciders.common.machine_masks import lowest_bits, mask_runs, mask_to_procset, procset_to_mask
from joulesim.deciders.common.queue_policy import QueuePolicy
from joulesim.deciders.common.waiting_queue import WaitingQueue
from joulesim.protocol.decider import SubmittedJob
from joulesim.protocol.errors import JoulesimError

from conftest import send

QUEUE_POLICIES = ["fcfs", "sjf", "easy", "conservative"]


# --------------------------------------------------------------------------- message helpers
def begins(n: int, unavailable: tuple[int, ...] = ()) -> dict:
    return {
        "timestamp": 0.0,
        "type": "SIMULATION_BEGINS",
        "data": {
            "nb_resources": n,
            "nb_compute_resources": n,
            "nb_storage_resources": 0,
            "allow_compute_sharing": False,
            "allow_storage_sharing": False,
            "config": {},
            "compute_resources": [
                {"id": i, "name": f"h{i}", "state": "unavailable" if i in unavailable else "idle",
                 "properties": {}, "zone_properties": {}}
                for i in range(n)
            ],
            "storage_resources": [],
            "workloads": {"w0": "w.json"},
            "profiles": {},
        },
    }


def submitted(now: float, name: str, res: int, walltime: float) -> dict:
    job_id = f"w0!{name}"
    return {
        "timestamp": now,
        "type": "JOB_SUBMITTED",
        "data": {"job_id": job_id,
                 "job": {"id": job_id, "subtime": now, "res": res, "walltime": walltime, "profile": "p"}},
    }


def completed(now: float, name: str, alloc: str) -> dict:
    return {
        "timestamp": now,
        "type": "JOB_COMPLETED",
        "data": {"job_id": f"w0!{name}", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0, "alloc": alloc},
    }


def killed(now: float, *names: str) -> dict:
    return {"timestamp": now, "type": "JOB_KILLED",
            "data": {"job_ids": [f"w0!{n}" for n in names], "job_progress": {}}}


def notify(now: float, kind: str, resources: str | None = None) -> dict:
    data = {"type": kind}
    if resources is not None:
        data["resources"] = resources
    return {"timestamp": now, "type": "NOTIFY", "data": data}


def start(name: str, n: int, *, unavailable: tuple[int, ...] = ()):
    decider = load_decider(name, {})
    assert send(decider, 0.0, begins(n, unavailable)) == []
    return decider


# --------------------------------------------------------------------------- registry
def test_registry_loads_every_decider_class():
    from joulesim.deciders.batch.utility_policies import UnicefPolicy, UtilityPolicy, WFP3Policy
    from joulesim.deciders.energy.energy_budget import EnergyBudget, ReducePC
    from joulesim.deciders.energy.inertial_shutdown import InertialShutdown
    from joulesim.deciders.energy.power_capped_easy import PowerCappedEasy
    from joulesim.deciders.energy.proportional_shutdown import ProportionalShutdown
    from joulesim.deciders.grid.cluster_broker import ClusterBroker
    from joulesim.deciders.learned.random_pairs import RandomPairs
    from joulesim.deciders.node.irmasim_heuristic import IrmasimHeuristic
    from joulesim.deciders.node.pcbe import PCBE

    expected = {"fcfs": FCFS, "sjf": SJF, "easy": EasyBackfilling,
                "conservative": ConservativeBackfilling, "rejecter": Rejecter,
                "proportional": ProportionalShutdown, "inertial": InertialShutdown,
                "powercap": PowerCappedEasy, "energybud": EnergyBudget, "reducepc": ReducePC,
                "heuristic": IrmasimHeuristic, "pcbe": PCBE,
                "wfp": WFP3Policy, "unicef": UnicefPolicy, "utility": UtilityPolicy,
                "broker": ClusterBroker, "random-pairs": RandomPairs}
    assert set(DECIDERS) == set(expected) | {"rl"}
    for name, cls in expected.items():
        assert type(load_decider(name, {})) is cls
    # rl needs its model file (tests/test_rl_training.py); its class loads without torch.
    from joulesim.deciders import load_decider_class
    from joulesim.rl.trained_policy import RLPolicy

    assert load_decider_class("rl") is RLPolicy


def test_a_shutdown_option_selects_the_variant_with_opportunistic_shutdown():
    from joulesim.deciders.energy.budgeted_easy_shutdown import EnergyBudgetWithShutdown
    from joulesim.deciders.energy.easy_shutdown import EasyWithShutdown

    assert type(load_decider("easy", {"t_idle": "300"})) is EasyWithShutdown
    assert type(load_decider("easy", {"sleep_pstate": "1"})) is EasyWithShutdown
    assert type(load_decider("energybud", {"t_idle": "0"})) is EnergyBudgetWithShutdown
    with pytest.raises(JoulesimError, match="does not accept option"):
        load_decider("fcfs", {"t_idle": "300"})


def test_unknown_decider_lists_known_names():
    with pytest.raises(JoulesimError) as info:
        load_decider("nonexistent", {})
    for name in DECIDERS:
        assert name in str(info.value)


def test_bad_user_paths_are_joulesim_errors():
    with pytest.raises(JoulesimError, match="cannot import"):
        load_decider("no_such_module_xyz:Foo", {})
    with pytest.raises(JoulesimError, match="no class"):
        load_decider("joulesim.deciders.batch.fcfs:Nope", {})
    with pytest.raises(JoulesimError, match="not a subclass"):
        load_decider("joulesim.deciders.common.queue_policy:WaitingQueue", {})


def test_user_decider_by_module_path(tmp_path, monkeypatch):
    (tmp_path / "my_user_decider.py").write_text(textwrap.dedent("""
        from joulesim.protocol.decider import Decider

        class Mine(Decider):
            '''My decider.'''
            def on_job_submitted(self, job):
                self.reject_job(job.id)
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    decider = load_decider("my_user_decider:Mine", {"anything": "goes"})
    assert type(decider).__name__ == "Mine"
    assert decider.options == {"anything": "goes"}
    send(decider, 0.0, begins(2))
    assert send(decider, 1.0, submitted(1.0, "1", 1, 10)) == [("REJECT", "1")]


def test_unknown_option_refused_for_registered_deciders():
    with pytest.raises(JoulesimError, match="bogus"):
        load_decider("easy", {"bogus": "1"})


# What float()/int() take beyond ASCII decimals (issue 23): other scripts' digits, underscores,
# nan, infinities where none is allowed, and exponents beyond a double.
@pytest.mark.parametrize("name, options, bad", [
    ("easy", {"t_idle": "١٢"}, "t_idle"),
    ("easy", {"t_idle": "1_0"}, "t_idle"),
    ("easy", {"t_idle": "1e400"}, "t_idle"),  # float() says inf: not the 'inf' the user did not write
    ("easy", {"t_idle": "nan"}, "t_idle"),
    ("proportional", {"rho": "０.５"}, "rho"),
    ("proportional", {"rho": "inf"}, "rho"),
    ("easy", {"t_idle": "0", "compute_pstate": "١"}, "compute_pstate"),
    ("easy", {"t_idle": "0", "sleep_pstate": "1_0"}, "sleep_pstate"),
    ("heuristic", {"seed": "٣"}, "seed"),
    ("heuristic", {"seed": "9" * 5000}, "seed"),
])
def test_numeric_options_take_ascii_decimals_only(name, options, bad):
    with pytest.raises(JoulesimError) as info:
        load_decider(name, options)
    message = str(info.value)
    assert f"option {bad}=" in message and "is invalid: accepted values are" in message and "ASCII" in message, message


def test_platform_properties_read_by_deciders_take_ascii_decimals_only():
    # Under Batsim the properties reach deciders unchecked: '١' and '1_0' were read as 1 and 10.
    from joulesim.deciders.common.machine_power import parse_sleep_pstates
    from joulesim.deciders.energy.budget_period import full_power
    from joulesim.deciders.grid.cluster_broker import _peak_watts
    from joulesim.deciders.grid.cluster_router import Cluster

    assert parse_sleep_pstates("1:2:3", "h") == [(1, 2, 3)]
    for text in ("١:2:3", "1_0:2:3", "+1:2:3"):
        with pytest.raises(JoulesimError, match="host h: property sleep_pstates"):
            parse_sleep_pstates(text, "h")
    assert full_power([{"name": "h", "properties": {"wattage_per_state": "95:190.5"}}], 0, "d") == 190.5
    for text in ("95:١٩٠", "95:1_90", "95:inf", "95:nan"):
        with pytest.raises(JoulesimError, match="host h has no wattage_per_state entry"):
            full_power([{"name": "h", "properties": {"wattage_per_state": text}}], 0, "d")
    cluster = Cluster.__new__(Cluster)
    cluster.name = "c"
    assert _peak_watts("95:190.5", cluster, "broker") == 190.5
    with pytest.raises(JoulesimError, match="unreadable wattage_per_state"):
        _peak_watts("95:1e400", cluster, "broker")


def test_numeric_options_still_take_decimal_notation():
    assert load_decider("easy", {"t_idle": " 1.5e2 "}).t_idle == 150.0
    assert load_decider("easy", {"t_idle": "inf"}).t_idle == math.inf
    assert load_decider("proportional", {"rho": ".5"}).rho == 0.5
    assert load_decider("heuristic", {"seed": "+7"}).seed == 7


def test_describe_deciders_gives_first_docstring_lines():
    described = describe_deciders()
    assert set(described) == set(DECIDERS)
    assert described["fcfs"].startswith("Strict first-come-first-served")
    assert "EASY" in described["easy"]
    assert described["easy"].endswith("Options: storage_mapping, pinned, t_idle, compute_pstate, sleep_pstate.")
    assert described["fcfs"].endswith("Options: storage_mapping, pinned.")
    assert "Options: " not in described["rejecter"]
    assert all(line and "\n" not in line for line in described.values())


# --------------------------------------------------------------------------- bitmask helpers
def test_bitmask_helpers():
    mask = procset_to_mask(ProcSet((0, 3), 5, (7, 9)))
    assert mask == 0b1110101111
    assert mask_runs(mask) == [(0, 3), (5, 5), (7, 9)]
    assert mask_to_procset(mask) == ProcSet((0, 3), 5, (7, 9))
    assert str(mask_to_procset(mask)) == "0-3 5 7-9"
    assert mask_to_procset(0) == ProcSet()
    assert lowest_bits(mask, 5) == procset_to_mask(ProcSet((0, 3), 5))
    assert lowest_bits(mask, 2) == 0b11
    assert lowest_bits(mask, 100) == mask
    big = procset_to_mask(ProcSet((3, 200)))
    assert mask_to_procset(lowest_bits(big, 150)) == ProcSet((3, 152))


def test_waiting_queue_order_and_removal():
    queue = WaitingQueue()
    jobs = [SubmittedJob(f"w0!{i}", 0.0, 1, 10, "p") for i in range(200)]
    for job in jobs:
        queue.append(job)
    for i in range(0, 150):
        if i % 3:
            queue.remove(f"w0!{i}")
    queue.remove("w0!0")
    queue.compact()
    expected = [f"w0!{i}" for i in range(1, 200) if i >= 150 or i % 3 == 0]
    assert queue.ids() == expected
    assert len(queue) == len(expected)
    assert queue.first().id == "w0!3"
    assert "w0!3" in queue and "w0!4" not in queue


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "add", "remove", "compact", "look"]), st.integers(0, 6),
                          st.integers(0, 200)), max_size=80))
def test_the_jobs_that_fit_after_a_job_are_the_walk_from_it_less_the_bigger_ones(operations):
    """fitting_after(job, most) gives, in order, the jobs iter_from(job) gives after it that ask
    for at most `most` machines: after any appends, removals (from the head or inside) and
    compactions, and while the jobs it gave are being removed."""
    queue, number = WaitingQueue(), 0
    for kind, res, pick in operations:
        if kind == "add":
            queue.append(SubmittedJob(f"w0!{number}", 0.0, res, 10.0, "p"))
            number += 1
        elif kind == "remove" and queue:
            queue.remove(queue.ids()[pick % len(queue)])
        elif kind == "compact":
            queue._items += [None] * 70  # (holes enough for compact() to act; no job is there)
            queue.compact()
        elif kind == "look" and queue:
            after = queue.ids()[pick % len(queue)]
            walk = queue.iter_from(after)
            next(walk)
            expected = [job.id for job in walk if job.res <= res]
            got = []
            for job in queue.fitting_after(after, res):
                got.append(job.id)
                if pick % 2:  # the pass starts some of the jobs it is given
                    queue.remove(job.id)
            assert got == expected


# --------------------------------------------------------------------------- common behaviour
@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_too_big_jobs_rejected_at_submission(name):
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "big", 5, 10), submitted(0.0, "zero", 0, 10),
                submitted(0.0, "ok", 4, 10)) == [("REJECT", "big"), ("REJECT", "zero"), ("EXECUTE", "ok", "0-3")]


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_lowest_ids_and_release_on_completion(name):
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "a", 1, 10), submitted(0.0, "b", 2, 10)) == [
        ("EXECUTE", "a", "0"), ("EXECUTE", "b", "1-2")]
    assert send(decider, 1.0, submitted(1.0, "c", 2, 10)) == []
    assert send(decider, 5.0, completed(5.0, "a", "0")) == [("EXECUTE", "c", "0 3")]
    assert set(decider.running) == {"w0!b", "w0!c"}
    assert decider.free_mask == 0


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_job_killed_frees_machines(name):
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100), submitted(0.0, "b", 2, 100)) == [
        ("EXECUTE", "a", "0-1"), ("EXECUTE", "b", "2-3")]
    assert send(decider, 1.0, submitted(1.0, "c", 4, 100)) == []
    # A kill answer lists every killed job; a later JOB_COMPLETED for one of them is harmless.
    assert send(decider, 2.0, killed(2.0, "a", "b")) == [("EXECUTE", "c", "0-3")]
    assert send(decider, 2.0, completed(2.0, "a", "0-1")) == []
    assert decider.free_mask == 0


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_unavailable_machines_are_not_allocated(name):
    decider = start(name, 4)
    assert send(decider, 0.0, notify(0.0, "event_machine_unavailable", "0-1"),
                submitted(0.0, "a", 2, 100), submitted(0.0, "b", 1, 100)) == [("EXECUTE", "a", "2-3")]
    # Machine 0 comes back: b goes there; machine 1 is still out.
    assert send(decider, 10.0, notify(10.0, "event_machine_available", "0")) == [("EXECUTE", "b", "0")]
    assert send(decider, 11.0, submitted(11.0, "c", 1, 100)) == []
    # Machine 3 becomes unavailable while a runs on it: it stays out when a ends.
    assert send(decider, 12.0, notify(12.0, "event_machine_unavailable", "3")) == []
    assert send(decider, 100.0, completed(100.0, "a", "2-3")) == [("EXECUTE", "c", "2")]
    assert send(decider, 101.0, submitted(101.0, "d", 1, 100)) == []
    assert send(decider, 102.0, notify(102.0, "event_machine_available", "1 3")) == [("EXECUTE", "d", "1")]
    assert decider.free_machines == ProcSet(3)


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_machine_available_again_while_its_job_runs(name):
    decider = start(name, 2)
    assert send(decider, 0.0, submitted(0.0, "a", 1, 100)) == [("EXECUTE", "a", "0")]
    assert send(decider, 1.0, notify(1.0, "event_machine_unavailable", "0-1")) == []
    assert send(decider, 2.0, notify(2.0, "event_machine_available", "0-1")) == []
    # Machine 0 still runs a: only machine 1 may be used.
    assert send(decider, 3.0, submitted(3.0, "b", 1, 10), submitted(3.0, "c", 1, 10)) == [("EXECUTE", "b", "1")]
    assert decider.free_mask == 0


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_unavailable_at_simulation_begins(name):
    decider = start(name, 3, unavailable=(0,))
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100), submitted(0.0, "b", 1, 100)) == [
        ("EXECUTE", "a", "1-2")]


# --------------------------------------------------------------------------- where the policies differ
def scenario_backfill_one(name):
    """4 machines, a (2 x 100 s) runs; queue b needs 4 (blocked), c needs 2 for 50 s."""
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    return decider, send(decider, 1.0, submitted(1.0, "b", 4, 100), submitted(1.0, "c", 2, 50))


def test_fcfs_does_not_backfill():
    decider, decisions = scenario_backfill_one("fcfs")
    assert decisions == []
    assert send(decider, 100.0, completed(100.0, "a", "0-1")) == [("EXECUTE", "b", "0-3")]
    assert send(decider, 200.0, completed(200.0, "b", "0-3")) == [("EXECUTE", "c", "0-1")]


@pytest.mark.parametrize("name", ["easy", "conservative"])
def test_backfilling_policies_backfill_short_job(name):
    decider, decisions = scenario_backfill_one(name)
    assert decisions == [("EXECUTE", "c", "2-3")]
    assert send(decider, 51.0, completed(51.0, "c", "2-3")) == []
    assert send(decider, 100.0, completed(100.0, "a", "0-1")) == [("EXECUTE", "b", "0-3")]


def test_sjf_takes_the_shortest_job_first():
    decider, decisions = scenario_backfill_one("sjf")
    assert decisions == [("EXECUTE", "c", "2-3")]  # c (50 s) is shorter than b (100 s)


def scenario_order(name):
    """4 machines, a (2 x 100 s) runs; queue b (2 x 300 s), then c (2 x 50 s)."""
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    return send(decider, 1.0, submitted(1.0, "b", 2, 300), submitted(1.0, "c", 2, 50))


@pytest.mark.parametrize("name,expected", [("fcfs", "b"), ("easy", "b"), ("conservative", "b"), ("sjf", "c")])
def test_sjf_reorders_where_others_keep_submission_order(name, expected):
    assert scenario_order(name) == [("EXECUTE", expected, "2-3")]


def test_sjf_is_strict_and_no_walltime_is_infinitely_long():
    decider = start("sjf", 4)
    assert send(decider, 0.0, submitted(0.0, "a", 3, 100)) == [("EXECUTE", "a", "0-2")]
    # Order y (10 s), z (500 s), x (no walltime: last); y needs 2 and is blocked: strict, so
    # z does not start although it fits.
    assert send(decider, 1.0, submitted(1.0, "x", 1, -1), submitted(1.0, "z", 1, 500),
                submitted(1.0, "y", 2, 10)) == []
    assert send(decider, 100.0, completed(100.0, "a", "0-2")) == [
        ("EXECUTE", "y", "0-1"), ("EXECUTE", "z", "2"), ("EXECUTE", "x", "3")]


def test_sjf_ties_by_submission_order():
    decider = start("sjf", 1)
    assert send(decider, 0.0, submitted(0.0, "a", 1, 10)) == [("EXECUTE", "a", "0")]
    assert send(decider, 1.0, submitted(1.0, "p", 1, 20), submitted(1.0, "q", 1, 20),
                submitted(1.0, "r", 1, 5)) == []
    assert send(decider, 10.0, completed(10.0, "a", "0")) == [("EXECUTE", "r", "0")]
    assert send(decider, 15.0, completed(15.0, "r", "0")) == [("EXECUTE", "p", "0")]
    assert send(decider, 35.0, completed(35.0, "p", "0")) == [("EXECUTE", "q", "0")]


def scenario_second_job_protected(name):
    """4 machines, a (2 x 100 s) runs; queue b (3 x 100 s), c (4 x 10 s), d (1 x 250 s).

    EASY only protects b (shadow 100 s, 1 extra machine): d uses the extra machine now.
    Conservative also protects c (reserved at 200 s on all machines): d would delay it.
    """
    decider = start(name, 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    return decider, send(decider, 1.0, submitted(1.0, "b", 3, 100), submitted(1.0, "c", 4, 10),
                         submitted(1.0, "d", 1, 250))


@pytest.mark.parametrize("name,expected", [
    ("fcfs", []),
    ("sjf", []),
    ("easy", [("EXECUTE", "d", "2")]),
    ("conservative", []),
])
def test_easy_backfills_what_conservative_protects(name, expected):
    decider, decisions = scenario_second_job_protected(name)
    assert decisions == expected


def test_conservative_reservations_of_second_scenario():
    decider, _ = scenario_second_job_protected("conservative")
    res = {job_id.split("!")[1]: (t, str(mask_to_procset(m))) for job_id, (t, m) in decider.reservations.items()}
    assert res == {"b": (100.0, "0-2"), "c": (200.0, "0-3"), "d": (210.0, "0")}
    # The profile: machines 2-3 free until a ends, then 3 until b ends, nothing during c.
    assert [(t, e, str(p)) for t, e, p in decider.profile()] == [
        (1.0, 100.0, "2-3"), (100.0, 200.0, "3"), (200.0, 210.0, ""), (210.0, 460.0, "1-3"), (460.0, math.inf, "0-3")]
    # a ends early: b starts at once (and nothing else, c is still blocked).
    assert send(decider, 50.0, completed(50.0, "a", "0-1")) == [("EXECUTE", "b", "0-2")]


def test_easy_extra_machines_are_consumed():
    check_extra_machines_are_consumed(start("easy", 6))


def check_extra_machines_are_consumed(decider) -> None:
    """EASY's extra machines are used up by the jobs backfilled into them (6 machines)."""
    assert send(decider, 0.0, submitted(0.0, "a", 4, 100)) == [("EXECUTE", "a", "0-3")]
    # b needs 5: shadow 100 s, 6 machines free then, 1 extra.
    assert send(decider, 1.0, submitted(1.0, "b", 5, 100), submitted(1.0, "c", 1, 500),
                submitted(1.0, "d", 1, 500), submitted(1.0, "e", 1, 50)) == [
        ("EXECUTE", "c", "4"), ("EXECUTE", "e", "5")]
    assert send(decider, 51.0, completed(51.0, "e", "5")) == []  # d would delay b: no extra left
    assert send(decider, 100.0, completed(100.0, "a", "0-3")) == [("EXECUTE", "b", "0-3 5")]
    assert send(decider, 501.0, completed(501.0, "c", "4")) == [("EXECUTE", "d", "4")]


def test_easy_picks_lowest_free_conservative_the_hole():
    """5 machines; a (2 x 50 s) on 1-2, x (1 x 1000 s) on 3; 0 and 4 free; b needs 3 (blocked).

    EASY: c uses the single extra machine, the lowest free one (0).
    Conservative: b is reserved at 50 s on 0-2, so c's hole is machine 4 only.
    """
    for name, alloc in [("easy", "0"), ("conservative", "4")]:
        decider = start(name, 5)
        assert send(decider, 0.0, submitted(0.0, "z", 1, 1)) == [("EXECUTE", "z", "0")]
        assert send(decider, 0.0, submitted(0.0, "a", 2, 50)) == [("EXECUTE", "a", "1-2")]
        assert send(decider, 0.0, submitted(0.0, "x", 1, 1000)) == [("EXECUTE", "x", "3")]
        assert send(decider, 1.0, completed(1.0, "z", "0")) == []
        assert send(decider, 2.0, submitted(2.0, "b", 3, 100), submitted(2.0, "c", 1, 200)) == [
            ("EXECUTE", "c", alloc)], name


def test_easy_jobs_without_walltime_only_use_extra_machines():
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    # b needs 4: no extra machine; c has no walltime: not backfilled although it fits.
    assert send(decider, 1.0, submitted(1.0, "b", 4, 100), submitted(1.0, "c", 1, -1)) == []
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    # b needs 3: one extra machine, which c may use forever.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 100), submitted(1.0, "c", 1, -1)) == [("EXECUTE", "c", "2")]


def test_easy_running_job_without_walltime_never_frees():
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "inf", 2, -1), submitted(0.0, "a", 1, 100)) == [
        ("EXECUTE", "inf", "0-1"), ("EXECUTE", "a", "2")]
    # b needs 3: at a's end only 2 machines are free: no shadow time, so c (long) fits now.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 10), submitted(1.0, "c", 1, 10_000)) == [("EXECUTE", "c", "3")]
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "inf", 1, -1), submitted(0.0, "a", 1, 100)) == [
        ("EXECUTE", "inf", "0"), ("EXECUTE", "a", "1")]
    # b needs 3: shadow 100 s with no extra machine: c (long) must wait.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 10), submitted(1.0, "c", 1, 10_000)) == []


def test_easy_without_possible_reservation_jobs_without_walltime_still_wait():
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "inf", 2, -1), submitted(0.0, "a", 1, 100)) == [
        ("EXECUTE", "inf", "0-1"), ("EXECUTE", "a", "2")]
    # b needs 3 and no shadow time exists; c (no walltime) gets no extra machine.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 10), submitted(1.0, "c", 1, -1)) == []
    assert decider.shadow(3) == (math.inf, 0)


def test_easy_unavailable_machines_do_not_count_at_shadow_time():
    decider = start("easy", 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    assert send(decider, 0.0, notify(0.0, "event_machine_unavailable", "1")) == []
    # b needs 3; when a ends only machine 0 comes back: 3 free, no extra. c (long) must wait.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 10), submitted(1.0, "c", 1, 10_000)) == []
    assert decider.shadow(3) == (100.0, 0)


def test_conservative_jobs_without_walltime_reserve_forever():
    decider = start("conservative", 5)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    # b (no walltime) fits on 2-3 forever; c (3 x 10 s) is reserved when a ends, on 0-1 4;
    # d (4 machines) never fits again.
    assert send(decider, 1.0, submitted(1.0, "b", 2, -1), submitted(1.0, "c", 3, 10),
                submitted(1.0, "d", 4, 10)) == [("EXECUTE", "b", "2-3")]
    # e would fit on 4 now, but not for 200 s without delaying c.
    assert send(decider, 2.0, submitted(2.0, "e", 1, 200)) == []
    res = {job_id.split("!")[1]: (t, str(mask_to_procset(m))) for job_id, (t, m) in decider.reservations.items()}
    assert res == {"c": (100.0, "0-1 4"), "e": (110.0, "0")}


def test_conservative_respects_machine_unavailable_while_running():
    decider = start("conservative", 4)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    assert send(decider, 0.0, notify(0.0, "event_machine_unavailable", "1")) == []
    # b needs 3: at a's end only 0 returns (1 stays out): b reserved at 100 on 0 2 3, so
    # c (1 x 500 s) cannot start now.
    assert send(decider, 1.0, submitted(1.0, "b", 3, 10), submitted(1.0, "c", 1, 500)) == []
    assert decider.reservations["w0!b"] == (100.0, procset_to_mask(ProcSet(0, 2, 3)))


def test_conservative_hole_search_window_boundaries():
    """3 machines; x (2 x 10 s) on 1-2 until 10; machine 0 free now. At t=1:

    r (2 x 10 s) is reserved at 10 on 0-1, leaving 2 free in [10, 20) and 0 in [1, 10);
    c (1 x 15 s) cannot start now (0 is taken at 10) but can at 10 on 2 (a hole that does
    not start at the first slice that cut the previous candidate window);
    d (1 x 9.5 s) would end after 10: it waits until 20;
    e (1 x 9 s) ends exactly at 10: it starts now on 0.
    """
    decider = start("conservative", 3)
    assert send(decider, 0.0, submitted(0.0, "z", 1, 1)) == [("EXECUTE", "z", "0")]
    assert send(decider, 0.0, submitted(0.0, "x", 2, 10)) == [("EXECUTE", "x", "1-2")]
    assert send(decider, 1.0, completed(1.0, "z", "0")) == []
    assert send(decider, 1.0, submitted(1.0, "r", 2, 10), submitted(1.0, "c", 1, 15),
                submitted(1.0, "d", 1, 9.5), submitted(1.0, "e", 1, 9)) == [("EXECUTE", "e", "0")]
    res = {job_id.split("!")[1]: (t, str(mask_to_procset(m))) for job_id, (t, m) in decider.reservations.items()}
    assert res == {"r": (10.0, "0-1"), "c": (10.0, "2"), "d": (20.0, "0")}


def test_conservative_job_running_past_its_walltime_is_expected_to_end_now():
    decider = start("conservative", 2)
    assert send(decider, 0.0, submitted(0.0, "a", 1, 10)) == [("EXECUTE", "a", "0")]
    assert send(decider, 1.0, submitted(1.0, "b", 2, 5), submitted(1.0, "c", 1, 20)) == []
    assert decider.reservations == {"w0!b": (10.0, 0b11), "w0!c": (15.0, 0b1)}
    # At 20 a has not ended yet (walltime not enforced): no reservation may stay in the past.
    assert send(decider, 20.0, submitted(20.0, "d", 1, 3)) == []
    assert decider.reservations == {"w0!b": (20.0, 0b11), "w0!c": (25.0, 0b1), "w0!d": (25.0, 0b10)}
    assert decider.profile()[0][:2] == (20.0, 20.0)


class HighestIds(ConservativeBackfilling):
    def choose_machines(self, hole: ProcSet, n: int) -> ProcSet | None:
        return ProcSet(*list(hole)[-n:])


class NeedsMachineZero(ConservativeBackfilling):
    def choose_machines(self, hole: ProcSet, n: int) -> ProcSet | None:
        if 0 not in hole:
            return None
        return super().choose_machines(hole, n)


class Broken(ConservativeBackfilling):
    def choose_machines(self, hole: ProcSet, n: int) -> ProcSet | None:
        return hole


def test_conservative_choose_machines_hook():
    decider = HighestIds()
    send(decider, 0.0, begins(4))
    assert send(decider, 0.0, submitted(0.0, "a", 1, 100), submitted(0.0, "b", 2, 100)) == [
        ("EXECUTE", "a", "3"), ("EXECUTE", "b", "1-2")]

    decider = NeedsMachineZero()
    send(decider, 0.0, begins(4))
    # a takes 0; b's hole now is 1-3 (refused), at 100 s it is 0-3.
    assert send(decider, 0.0, submitted(0.0, "a", 1, 100), submitted(0.0, "b", 2, 100)) == [("EXECUTE", "a", "0")]
    assert decider.reservations["w0!b"] == (100.0, 0b11)
    assert send(decider, 100.0, completed(100.0, "a", "0")) == [("EXECUTE", "b", "0-1")]

    decider = Broken()
    send(decider, 0.0, begins(4))
    with pytest.raises(ValueError, match="exactly 1"):
        send(decider, 0.0, submitted(0.0, "a", 1, 100))


def test_conservative_early_end_moves_reservations_forward():
    decider = start("conservative", 2)
    assert send(decider, 0.0, submitted(0.0, "a", 2, 100)) == [("EXECUTE", "a", "0-1")]
    assert send(decider, 1.0, submitted(1.0, "b", 1, 50), submitted(1.0, "c", 2, 10),
                submitted(1.0, "d", 1, 40)) == []
    # a ends early at 20: b starts; c (2 machines) must wait for b; d fits beside b before c.
    assert send(decider, 20.0, completed(20.0, "a", "0-1")) == [("EXECUTE", "b", "0"), ("EXECUTE", "d", "1")]


# --------------------------------------------------------------------------- rejecter and misc
def test_rejecter_rejects_everything():
    decider = load_decider("rejecter", {})
    send(decider, 0.0, begins(4))
    assert send(decider, 0.0, submitted(0.0, "a", 1, 10), submitted(0.0, "b", 4, -1)) == [
        ("REJECT", "a"), ("REJECT", "b")]


@pytest.mark.parametrize("name", QUEUE_POLICIES + ["rejecter"])
def test_simulation_ends_gets_an_empty_reply(name):
    decider = start(name, 2)
    send(decider, 0.0, submitted(0.0, "a", 1, 10))
    assert send(decider, 10.0, completed(10.0, "a", "0"), {"timestamp": 10.0, "type": "SIMULATION_ENDS", "data": {}}) == []
    assert decider.finished


def test_queue_policy_requires_schedule():
    decider = QueuePolicy()
    send(decider, 0.0, begins(2))
    with pytest.raises(NotImplementedError):
        send(decider, 0.0, submitted(0.0, "a", 1, 10))


def test_the_list_of_deciders_says_what_to_install_for_a_decider_whose_extra_is_missing():
    import subprocess

    script = ("import sys; sys.modules['gymnasium'] = None; sys.modules['torch'] = None\n"
              "from joulesim.cli.main import main; sys.argv = ['joulesim', 'decide', '--list']; main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rl_line = next(line for line in done.stdout.splitlines() if line.split()[:1] == ["rl"])
    assert "needs the rl extra" in rl_line and "pip install" in rl_line
    assert any(line.split()[:1] == ["easy"] for line in done.stdout.splitlines())


def test_a_decider_module_not_found_gets_a_hint_about_where_it_is_looked_for(tmp_path, monkeypatch):
    from joulesim.protocol.errors import JoulesimError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(JoulesimError) as missing:
        load_decider("my_fcfs_nowhere:MyFCFS")
    assert "No module named 'my_fcfs_nowhere'" in str(missing.value)
    assert f"current folder ({tmp_path})" in str(missing.value) and "PYTHONPATH=" in str(missing.value)
    # a module that is found but fails to import something else gets that error alone
    (tmp_path / "broken_decider_module.py").write_text("import a_module_that_is_not_there\n")
    with pytest.raises(JoulesimError) as broken:
        load_decider("broken_decider_module:X")
    assert "No module named 'a_module_that_is_not_there'" in str(broken.value)
    assert "PYTHONPATH" not in str(broken.value)


def running(now: float, name: str, res: int, walltime: float, alloc: str, start: float) -> dict:
    """joulesim's JOB_RUNNING: a job a decider takes over (joulesim.Simulation.fork(decider=...))."""
    job_id = f"w0!{name}"
    return {"timestamp": now, "type": "JOB_RUNNING",
            "data": {"job_id": job_id, "alloc": alloc, "start": start,
                     "job": {"id": job_id, "subtime": 0.0, "res": res, "walltime": walltime, "profile": "p"}}}


@pytest.mark.parametrize("name", QUEUE_POLICIES)
def test_a_queue_policy_takes_a_running_job_over_on_its_machines_without_executing_it(name):
    decider = load_decider(name, {})
    assert send(decider, 50.0, begins(3)) == []
    assert send(decider, 50.0, running(50.0, "a", 2, 100.0, "0-1", start=0.0), submitted(50.0, "b", 1, 10.0)) == [
        ("EXECUTE", "b", "2")]  # (a holds 0-1: not executed again, not given to b)
    assert send(decider, 60.0, completed(60.0, "b", "2"), completed(60.0, "a", "0-1"),
                submitted(60.0, "c", 3, 10.0)) == [("EXECUTE", "c", "0-2")]


def test_easy_reserves_at_a_taken_over_job_s_end_from_its_real_start():
    """a runs on 0-1 since t=0 for at most 100 s: b (3 machines) is reserved at t=100, so c
    (1 machine for 60 s, from t=50: ends at 110) would delay it and is not backfilled. Counted
    from the takeover (t=50), a would end at 150 and c would be."""
    decider = load_decider("easy", {})
    send(decider, 50.0, begins(3))
    assert send(decider, 50.0, running(50.0, "a", 2, 100.0, "0-1", start=0.0),
                submitted(50.0, "b", 3, 10.0), submitted(50.0, "c", 1, 60.0)) == []
    assert send(decider, 50.0, submitted(50.0, "d", 1, 50.0)) == [("EXECUTE", "d", "2")]  # (ends at 100)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(QUEUE_POLICIES + ["powercap", "energybud", "inertial", "proportional"]),
       st.lists(st.tuples(st.sampled_from(["submit", "end", "kill", "down", "up"]),
                          st.integers(1, 12), st.integers(0, 11)), max_size=40))
def test_the_kept_free_count_and_runs_equal_the_free_machines_after_every_message(name, steps):
    """free_count() and the free runs are kept across starts and ends rather than found again
    (each look at the mask costs the platform's width): after any sequence of submissions, ends,
    kills and machines leaving and coming back, they equal the free mask's own count and runs."""
    decider = load_decider(name, {})
    send(decider, 0.0, begins(12))  # (the shutdown policies answer with their first wake-up)
    now = 1.0
    for number, (kind, res, machine) in enumerate(steps):
        if kind == "submit":
            message = submitted(now, f"j{number}", res, 100)
        elif kind in ("end", "kill") and decider.running:
            job_id = sorted(decider.running)[machine % len(decider.running)]
            name_, alloc = job_id.split("!")[1], str(decider.running[job_id].alloc)
            message = completed(now, name_, alloc) if kind == "end" else killed(now, name_)
        elif kind in ("down", "up"):
            message = notify(now, f"event_machine_{'unavailable' if kind == 'down' else 'available'}", str(machine))
        else:
            continue
        send(decider, now, message)
        assert decider.free_count() == decider.free_mask.bit_count(), (kind, number)
        if decider._free_runs is not None:  # (kept beside the mask since they were last found)
            assert decider._free_runs.runs() == mask_runs(decider.free_mask), (kind, number)
        assert all(job.mask == procset_to_mask(job.alloc) for job in decider.running.values()), (kind, number)
        now += 1.0


# --------------------------------------------------------------------------- the library's classes as Python extends them
# The build compiles Decider, QueuePolicy and EasyBackfilling (setup.py), as classes that Python
# classes extend: what a Python subclass does with them must work as it does in Python.
class _EasyWithItsOwnState(EasyBackfilling):
    """A subclass with an attribute of its own, an __init__ argument, and hooks that return values."""

    def __init__(self, options=None, label="mine"):
        super().__init__(options)
        self.label = label
        self.submitted_here: list[str] = []

    def on_job_submitted(self, job):
        super().on_job_submitted(job)
        self.submitted_here.append(job.id)
        return self.submitted_here  # (a value a callback returns is ignored, not refused)

    def schedule(self):
        super().schedule()
        return "scheduled"

    def decide(self):
        super().decide()
        return True


@pytest.mark.parametrize("make", [SJF, EasyBackfilling, lambda: _EasyWithItsOwnState(label="copied")],
                         ids=["sjf", "easy", "subclass"])
def test_a_decider_copied_by_pickle_decides_as_the_original(make):
    """A fork hands its decider to another process by pickle: the copy keeps the state of the
    compiled base classes and of the Python subclass (SJF's heap, a subclass's attributes), so
    that both decide the same from there."""
    import pickle

    decider = make()
    send(decider, 0.0, begins(4))
    send(decider, 1.0, submitted(1.0, "a", 3, 50.0), submitted(1.0, "b", 2, 30.0),
         submitted(1.0, "c", 1, 10.0), submitted(1.0, "d", 4, 5.0))
    copy = pickle.loads(pickle.dumps(decider))
    assert type(copy) is type(decider)
    assert sorted(getattr(copy, "__dict__", {})) == sorted(getattr(decider, "__dict__", {}))
    if isinstance(decider, _EasyWithItsOwnState):
        assert (copy.label, copy.submitted_here) == ("copied", ["w0!a", "w0!b", "w0!c", "w0!d"])
    for later in ([completed(50.0, "a", "0-2")], [submitted(60.0, "e", 1, 1.0)]):
        now = later[0]["timestamp"]
        assert send(copy, now, *later) == send(decider, now, *later)
    assert copy.running.keys() == decider.running.keys() and len(copy.queue) == len(decider.queue)


def test_hooks_a_subclass_overrides_may_return_values():
    """The callbacks and schedule() of a Python subclass may return something (Python ignores it);
    the compiled base classes must not refuse it."""
    decider = _EasyWithItsOwnState()
    send(decider, 0.0, begins(4))
    assert send(decider, 1.0, submitted(1.0, "a", 3, 50.0)) == [("EXECUTE", "a", "0-2")]
    assert decider.submitted_here == ["w0!a"] and decider.label == "mine"
