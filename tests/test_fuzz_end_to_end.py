"""Seeded mutation fuzzing of whole runs: a decider reply (or a simulator message) is mutated
and the run must end normally or with a clean error; never a traceback, a hang, or an
invalid message accepted. benchmarks/fuzz_hostile_inputs.py runs thousands of such cases.
"""

from __future__ import annotations

from collections import Counter

import pytest
from decider_fuzzer import run_decider_case
from hostile_mutations import ALWAYS_INVALID, REPLY_MUTATIONS, SIMULATOR_MUTATIONS
from reply_fuzzer import ACCEPTED_INVALID, CLEAN_ERROR, HANG, NOT_APPLIED, TRACEBACK, run_process_case, run_reply_case

BAD = (TRACEBACK, HANG, ACCEPTED_INVALID)


def _report(results) -> str:
    text = "\n\n".join(f"seed {r.seed} scenario {r.scenario} operator {r.operator} ({r.label}): {r.outcome}\n"
                       f"mutated: {r.mutated!r}\n{r.detail}" for r in results)
    # (a case's output may hold lone surrogates, from bytes that are not UTF-8: escaped, so that
    # pytest-xdist can send the failure report back rather than stopping the session)
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def test_hundreds_of_mutated_replies_in_process(tmp_path):
    results = [run_reply_case(seed, str(tmp_path)) for seed in range(400)]
    bad = [r for r in results if r.outcome in BAD]
    assert not bad, _report(bad)
    applied = Counter(r.operator for r in results if r.outcome != NOT_APPLIED)
    assert set(applied) == set(REPLY_MUTATIONS), f"never applied: {set(REPLY_MUTATIONS) - set(applied)}"
    # Every always-invalid mutation that was applied ended in a clean error.
    assert all(r.outcome == CLEAN_ERROR for r in results if r.label == ALWAYS_INVALID and r.outcome != NOT_APPLIED)


@pytest.mark.parametrize("operator", sorted(name for name, (label, _) in REPLY_MUTATIONS.items()
                                            if label == ALWAYS_INVALID))
def test_each_always_invalid_mutation_is_refused(tmp_path, operator):
    """Forced on the first reply it applies to, over a few seeds (so every scenario is tried)."""
    outcomes = Counter()
    for seed in range(6):
        result = run_reply_case(seed, str(tmp_path), only_operator=operator)
        assert result.outcome in (CLEAN_ERROR, NOT_APPLIED), _report([result])
        outcomes[result.outcome] += 1
    assert outcomes[CLEAN_ERROR] > 0


def test_mutated_replies_between_two_processes(tmp_path):
    # 8 seeded cases (16 until 2026-11-29: the suite's time); benchmarks/fuzz_hostile_inputs.py
    # runs thousands. Seeds 0-7 give 7 clean errors and a reply that still applies.
    results = [run_process_case(seed, str(tmp_path)) for seed in range(8)]
    bad = [r for r in results if r.outcome in BAD]
    assert not bad, _report(bad)
    assert Counter(r.outcome for r in results)[CLEAN_ERROR] >= 4


def test_mutated_simulator_messages_to_joulesim_decide(tmp_path):
    results = [run_decider_case(seed, str(tmp_path)) for seed in range(8)]  # 8 operators of 7 kinds
    bad = [r for r in results if r.outcome in BAD]
    assert not bad, _report(bad)
    invalid = [r for r in results if SIMULATOR_MUTATIONS[r.operator][0] == ALWAYS_INVALID and r.outcome != NOT_APPLIED]
    assert invalid and all(r.outcome == CLEAN_ERROR for r in invalid)


# --------------------------------------------------------------------------- surfaces added since
# A few seeded cases of each surface fuzzed by benchmarks/fuzz_hostile_inputs.py (the same
# runners, the same seeds as its categories' first cases would not be: these are fixed here).
SURFACE_SEEDS = {
    "fuzz_campaign_files": range(0, 6),
    "fuzz_node_platforms": range(0, 5),
    "fuzz_rl_inputs": range(0, 4),
    "fuzz_learn_inputs": range(1, 6),
    "fuzz_prices": range(0, 6),
    "fuzz_decider_options": range(0, 6),
    "fuzz_curve_keys": range(0, 4),
    "fuzz_output_paths": range(0, 3),
    # issue 46's surfaces (seeds picked to cover hostile libraries, init files, rank files, DAX,
    # events and damaged outputs, and to stay fast: about 15 s together, the reports base outputs included)
    "fuzz_edc_inputs": [1, 2, 3, 5, 6, 7, 10, 11],
    "fuzz_job_models": [0, 1, 2, 4, 7, 8, 11, 12, 13],
    "fuzz_reports": [4],
}


CASE_BOUND_S = 20  # a case still running then is a hang (unbounded work: a 10^12-instance grid)


def _bounded(runner, seed: int, directory: str):
    import signal

    from reply_fuzzer import CaseResult
    from surface_fuzzer import CaseOvertime, limit_memory

    def overtime(signum, frame):
        raise CaseOvertime()

    limit_memory()  # this pytest process: a runaway case ends in MemoryError, not in the machine's memory
    previous = signal.signal(signal.SIGALRM, overtime)
    signal.alarm(CASE_BOUND_S)
    try:
        return runner(seed, directory)
    except CaseOvertime:
        import surface_fuzzer

        known = surface_fuzzer.current
        return CaseResult(seed, -1, known.operator if known else "?", known.label if known else "?", HANG,
                          f"over {CASE_BOUND_S} s", known.mutated if known else b"")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("surface", sorted(SURFACE_SEEDS))
def test_hostile_inputs_on_the_new_surfaces(tmp_path, surface):
    import importlib

    runner = importlib.import_module(surface).run_case
    results = [_bounded(runner, seed, str(tmp_path)) for seed in SURFACE_SEEDS[surface]]
    bad = [r for r in results if r.outcome in BAD]
    assert not bad, _report(bad)
