"""Messages' numbers as Batsim 4.2.1 prints them (printf's "%f", read back): the shortcut for
doubles that are already a whole number of microseconds gives the same bits as printing."""

from __future__ import annotations

import math
import struct

from hypothesis import given
from hypothesis import strategies as st

from joulesim.protocol.batsim_number_format import as_batsim_writes


def printed(x: float) -> float:
    return float("%f" % x)


def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def test_a_double_printed_to_the_microsecond_reads_back_rounded():
    assert as_batsim_writes(298.84400000299996) == 298.844
    assert as_batsim_writes(0.0000004) == 0.0
    assert as_batsim_writes(0.0000005) == 0.0  # (the double below 5e-7: printf rounds it down)
    assert as_batsim_writes(0.0000015) == 0.000002
    assert bits(as_batsim_writes(-0.0)) == bits(-0.0)
    assert as_batsim_writes(12.345) == 12.345  # (already a whole number of microseconds)
    assert as_batsim_writes(math.inf) == math.inf
    assert math.isnan(as_batsim_writes(math.nan))


def test_a_message_keeps_its_shape_and_its_integers_and_gets_new_containers():
    job = {"id": "w0!1", "subtime": 1.0000004, "res": 4, "walltime": 7200, "profile": "p"}
    message = {"now": 10.0000001, "events": [{"timestamp": 10.0000001, "type": "JOB_SUBMITTED",
                                              "data": {"job_id": "w0!1", "job": job}}]}
    written = as_batsim_writes(message)
    assert written == {"now": 10.0, "events": [{"timestamp": 10.0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "w0!1", "job": {"id": "w0!1", "subtime": 1.0, "res": 4, "walltime": 7200, "profile": "p"}}}]}
    assert type(written["events"][0]["data"]["job"]["walltime"]) is int
    assert written["events"][0]["data"]["job"] is not job and job["subtime"] == 1.0000004  # (the input is left as it was)


# Doubles near whole microseconds (where the shortcut applies, or just misses), near its bound
# 2^33, and anywhere.
_MICROSECONDS = st.integers(min_value=-(2 ** 33) * 10 ** 6, max_value=2 ** 33 * 10 ** 6)
_NEAR_WHOLE_MICROSECONDS = st.builds(lambda m, ulps: _moved(m / 1e6, ulps), _MICROSECONDS, st.integers(-3, 3))


def _moved(x: float, ulps: int) -> float:
    for _ in range(abs(ulps)):
        x = math.nextafter(x, math.inf if ulps > 0 else -math.inf)
    return x


@given(st.one_of(_NEAR_WHOLE_MICROSECONDS,
                 st.builds(lambda ulps: _moved(2.0 ** 33, ulps), st.integers(-4, 4)),
                 st.builds(lambda ulps: _moved(-(2.0 ** 33), ulps), st.integers(-4, 4)),
                 st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
                 st.floats(allow_nan=False, allow_infinity=False)))
def test_every_double_is_written_as_printf_writes_it_to_the_bit(x):
    assert bits(as_batsim_writes(x)) == bits(printed(x))
    assert bits(as_batsim_writes({"now": x, "a": [x, x]})["a"][1]) == bits(printed(x))  # (the last one printed, kept)


def test_the_shortcut_holds_for_every_whole_millisecond_of_a_day_and_microseconds_around_2_to_the_32():
    for millisecond in range(0, 86_400_000, 997):
        x = millisecond / 1000
        assert bits(as_batsim_writes(x)) == bits(printed(x)), x
    for step in range(-2000, 2000):
        x = (2 ** 32 * 10 ** 6 + step) / 1e6
        assert bits(as_batsim_writes(x)) == bits(printed(x)), x
