"""The int64 -> int64 index of the compiled kernels (simulator/models/int_index_kernel.py):
what a dict holds, through collisions and growth.

Compiled with numba (the test extra brings it); the same functions run as Python without it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from joulesim.simulator.models import int_index_kernel as index_kernel

keys = st.one_of(st.integers(0, 40), st.integers(0, 2 ** 62))  # small keys collide in 16 rows


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(keys, st.integers(0, 2 ** 40)), max_size=300), st.lists(keys, max_size=50))
def test_it_holds_what_a_dict_holds(puts, probes):
    index = index_kernel.new_index()
    expected: dict[int, int] = {}
    for key, value in puts:
        index = index_kernel.room(index, len(expected) + 1)
        index_kernel.put(index, key, value)
        expected[key] = value
        assert index.shape[0] >= 2 * len(expected)
    for key in list(expected) + probes:
        assert index_kernel.get(index, key) == expected.get(key, -1)


def test_room_keeps_an_index_with_room_and_copies_into_a_larger_one():
    index = index_kernel.new_index(3)
    assert index.shape == (16, 2) and (index[:, 0] == -1).all()
    assert index_kernel.room(index, 8) is index
    for key in range(8):
        index_kernel.put(index, key * 16, key)  # one home row for all: probing
    grown = index_kernel.room(index, 9)
    assert grown.shape[0] == 32
    assert [index_kernel.get(grown, key * 16) for key in range(8)] == list(range(8))
    assert index_kernel.get(grown, 16 * 8) == -1
