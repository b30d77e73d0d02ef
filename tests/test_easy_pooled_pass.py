"""EASY's pass with hooks (`EasyBackfilling.pooled_pass`), which the shutdown and budget policies
compose their schedules from: on EASY's own machines it decides exactly what EASY's fast
`schedule` decides, and the policies built on it keep EASY's rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim.deciders import load_decider
from joulesim.deciders.batch.easy import EasyBackfilling, Reservation
from joulesim.deciders.common.machine_masks import lowest_bits

from conftest import send
from test_deciders_unit import begins, check_extra_machines_are_consumed, completed, submitted


class PooledEasy(EasyBackfilling):
    """EASY through the pooled pass, with EASY's own machines and jobs as the hooks."""

    def schedule(self) -> None:
        self.pooled_pass(self.free_mask, lambda: iter(self.queue),
                         lambda job, pool: self.start_job(job, lowest_bits(pool, job.res)).mask,
                         lambda job, free: Reservation(job, *self.shadow(job.res)))


steps = st.lists(st.tuples(
    # walltimes on the steps' 10 s grid too, so that a job may end exactly at the shadow time
    st.lists(st.tuples(st.integers(1, 9), st.sampled_from([-1.0, 5.0, 10.0, 20.0, 30.0, 45.0])), max_size=4),
    st.lists(st.integers(0, 20), max_size=3),  # indices of running jobs that end at this step
), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 8), steps)
def test_the_pooled_pass_decides_as_easy(machines, script):
    fast, pooled = EasyBackfilling({}), PooledEasy({})
    for decider in (fast, pooled):
        send(decider, 0.0, begins(machines))
    running: list[tuple[str, str]] = []  # (name, alloc) in start order
    now, count = 0.0, 0
    for submissions, ends in script:
        now += 10.0
        events = []
        for index in sorted(set(i % len(running) for i in ends) if running else (), reverse=True):
            name, alloc = running.pop(index)
            events.append(completed(now, name, alloc))
        for res, walltime in submissions:
            count += 1
            events.append(submitted(now, f"j{count}", res, walltime))
        decisions = send(fast, now, *events)
        assert send(pooled, now, *events) == decisions
        running += [(name, alloc) for kind, name, alloc in (d for d in decisions if d[0] == "EXECUTE")]


def test_easy_with_shutdown_consumes_extra_machines_as_easy():
    """EASY's extra-machines scenario with opportunistic shutdown that never acts in it (t_idle
    longer than the run): the same decisions."""
    decider = load_decider("easy", {"t_idle": "1000"})
    send(decider, 0.0, begins(6))  # its answer: a CALL_ME_LATER for the idle timer
    check_extra_machines_are_consumed(decider)
