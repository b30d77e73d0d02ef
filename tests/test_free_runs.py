"""The free machines as runs (deciders/common/free_runs.py) against a set of machine ids."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from joulesim.deciders.common.free_runs import FreeRuns
from joulesim.deciders.common.machine_masks import mask_runs


def _runs_of(ids: set[int]) -> list[tuple[int, int]]:
    return mask_runs(sum(1 << i for i in ids))


@given(st.sets(st.integers(0, 300)), st.lists(st.tuples(st.booleans(), st.integers(0, 40)), max_size=40))
def test_taking_the_lowest_and_giving_back_keep_the_maximal_runs_of_the_free_machines(free, steps):
    """Any sequence of takes (the n lowest free machines) and gives back (machines taken
    before, any of them) leaves exactly the runs of the free machines, merged where they touch."""
    runs = FreeRuns(_runs_of(free))
    taken: list[int] = []
    for take, n in steps:
        if take:
            got = runs.take_lowest(n)
            lowest = sorted(free)[:n]
            assert got == _runs_of(set(lowest))
            free -= set(lowest)
            taken += lowest
        elif taken:
            back = sorted(set(taken[n % len(taken)::2]))
            taken = [i for i in taken if i not in set(back)]
            runs.give_back(_runs_of(set(back)))
            free |= set(back)
        assert runs.runs() == _runs_of(free)


def test_hand_cases():
    runs = FreeRuns([(0, 3), (6, 6), (9, 20)])
    assert runs.take_lowest(5) == [(0, 3), (6, 6)]
    assert runs.runs() == [(9, 20)]
    assert runs.take_lowest(2) == [(9, 10)]
    runs.give_back([(4, 5)])  # alone
    runs.give_back([(6, 6)])  # joins the run below
    runs.give_back([(8, 8)])  # joins the run above (11-20)? no: 9-10 are taken: alone
    assert runs.runs() == [(4, 6), (8, 8), (11, 20)]
    runs.give_back([(9, 10)])  # joins both
    assert runs.runs() == [(4, 6), (8, 20)]
    assert runs.take_lowest(100) == [(4, 6), (8, 20)] and runs.runs() == []
