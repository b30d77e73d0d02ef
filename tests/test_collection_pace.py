"""A run makes the cycle collector's young passes sparser, and gives the caller's thresholds back
(simulator/engine/collection_pace.py): after the run, after a run that fails, and untouched when
the caller had turned the collector's passes off."""

from __future__ import annotations

import gc

import pytest

from joulesim.deciders.batch.fcfs import FCFS
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.engine.collection_pace import YOUNG_THRESHOLD

from conftest import run_in_process, write_platform, write_workload


class ThresholdWatcher(FCFS):
    """FCFS that notes the collector's thresholds at each message (and can fail at the second)."""

    def __init__(self, fail: bool = False):
        super().__init__({})
        self.seen: list[tuple[int, int, int]] = []
        self.fail = fail

    def handle(self, message):
        self.seen.append(gc.get_threshold())
        if self.fail and len(self.seen) == 2:
            raise JoulesimError("a decider that fails on purpose")
        return super().handle(message)


@pytest.fixture
def inputs(tmp_path):
    platform = write_platform(tmp_path, 2)
    workload = write_workload(tmp_path, [{"id": i, "subtime": i, "res": 1, "walltime": 100, "profile": "d"}
                                         for i in range(3)], {"d": {"type": "delay", "delay": 5}})
    return platform, workload, str(tmp_path / "out")


@pytest.fixture
def thresholds():
    """The test's own thresholds, put back after it whatever it did."""
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_run_raises_the_young_threshold_and_puts_the_callers_back(inputs, thresholds):
    platform, workload, prefix = inputs
    gc.set_threshold(700, 7, 9)
    watcher = ThresholdWatcher()
    run_in_process(watcher, platform, [workload], prefix, event_grouping="batsim")
    assert watcher.seen and set(watcher.seen) == {(YOUNG_THRESHOLD, 7, 9)}
    assert gc.get_threshold() == (700, 7, 9)


def test_a_run_that_fails_puts_the_callers_thresholds_back(inputs, thresholds):
    platform, workload, prefix = inputs
    watcher = ThresholdWatcher(fail=True)
    with pytest.raises(JoulesimError):
        run_in_process(watcher, platform, [workload], prefix)
    assert watcher.seen[0] == (YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("callers", [(0, 10, 10), (50_000, 10, 10)])
def test_a_caller_who_turned_passes_off_or_sparser_keeps_that(inputs, thresholds, callers):
    platform, workload, prefix = inputs
    gc.set_threshold(*callers)
    watcher = ThresholdWatcher()
    run_in_process(watcher, platform, [workload], prefix)
    assert set(watcher.seen) == {callers}
    assert gc.get_threshold() == callers


def test_the_joulesim_program_skips_the_collectors_last_walk_and_a_host_process_keeps_it(tmp_path):
    """`joulesim run` freezes the collector's objects as it ends (its exit then skips a walk over
    them); the same command run inside another program (here pytest's) freezes nothing."""
    import subprocess
    import sys

    from click.testing import CliRunner

    from joulesim.cli.main import main

    script = ("import atexit, gc, sys\n"
              "atexit.register(lambda: print('frozen', gc.get_freeze_count()))\n"
              "sys.argv = ['joulesim', 'run', '--in-process', '-p', 'small4', '-w', 'tiny', '-e', sys.argv[1], '-q']\n"
              "from joulesim.cli.main import main\n"
              "main()\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "program")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.split()[-1]) > 0, done.stdout
    before = gc.get_freeze_count()
    result = CliRunner().invoke(main, ["run", "--in-process", "-p", "small4", "-w", "tiny", "-e", str(tmp_path / "host"), "-q"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before


class PassCounter:
    """Counts the cycle collector's passes while it is installed (gc.callbacks)."""

    def __init__(self):
        self.passes = 0

    def __call__(self, phase, info):
        if phase == "start":
            self.passes += 1

    def __enter__(self):
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc):
        gc.callbacks.remove(self)


@pytest.fixture
def many_jobs(tmp_path):
    """5,000 jobs: their loading and records make tens of thousands of containers, which at the
    default threshold (700) would start dozens of passes."""
    return write_workload(tmp_path, [{"id": i, "subtime": i, "res": 1, "walltime": 100, "profile": "d"}
                                     for i in range(5000)], {"d": {"type": "delay", "delay": 5}})


def test_loading_a_workload_and_making_its_records_start_no_pass_and_leave_the_collector_on(many_jobs, thresholds):
    from joulesim.deciders.batch.fcfs import FCFS as Decider
    from joulesim.protocol.transport_inprocess import InProcessRequester
    from joulesim.simulator.engine.decider_link import DeciderLink
    from joulesim.simulator.engine.simulation import Simulation
    from joulesim.simulator.engine.simulation_config import SimulationConfig
    from joulesim.simulator.platform.platform_loader import load_platform
    from joulesim.simulator.workload.workload_loader import load_workload

    platform = load_platform("small4")
    gc.collect()
    with PassCounter() as counter:
        workload = load_workload(many_jobs, "w0")
        Simulation(SimulationConfig(platform=platform, workloads=[workload], export_prefix=None),
                   DeciderLink(InProcessRequester(Decider({}))))
    assert len(workload.jobs) == 5000
    assert counter.passes == 0
    assert gc.isenabled()
    with PassCounter() as counter:  # (what the same objects start when made with the collector on)
        made = [[{"id": i}] for i in range(5000)]
    assert counter.passes > 0 and made


def test_a_collector_turned_off_by_the_caller_stays_off_after_loading(many_jobs):
    from joulesim.simulator.workload.workload_loader import load_workload

    gc.disable()
    try:
        load_workload(many_jobs, "w0")
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_workload_refused_while_loading_leaves_the_collector_on(tmp_path):
    from joulesim.inputs.input_error import InputError
    from joulesim.simulator.workload.workload_loader import load_workload

    bad = tmp_path / "bad.json"
    bad.write_text('{"jobs": [{"id": 1, "subtime": -5, "res": 1, "profile": "d"}], "profiles": {"d": {"type": "delay", "delay": 1}}}')
    with pytest.raises(InputError):
        load_workload(str(bad), "w0")
    assert gc.isenabled()
