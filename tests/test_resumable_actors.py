"""Batsim's actors at a checkpoint (simulator/engine/resumable_actors.py): every place marked
`# (resumable: NAME)` in batsim_actors.py has its continuation, and every continuation its
marked place, so that moving a line or adding a wait cannot silently leave a place unhandled."""

from __future__ import annotations

import types

import pytest

from joulesim.simulator.engine import resumable_actors
from joulesim.simulator.engine.resumable_batsim_actors import BatsimActors  # (the actors a checkpoint reads)


def test_every_marked_place_has_a_continuation_and_every_continuation_a_place():
    places = {(function, place) for (function, _), place in resumable_actors._places(BatsimActors).items()}
    own = {key for key in places if key[0] == "_resume"}
    assert places - own == set(resumable_actors._NEEDS)
    assert own == {("_resume", "again"), ("_resume", "decided"), ("_resume", "done")}


def test_a_generator_waiting_elsewhere_is_refused_by_name():
    def elsewhere():
        yield ("sleep", 1.0)

    code = elsewhere()
    next(code)
    with pytest.raises(resumable_actors.NotResumable, match="a place a checkpoint cannot hold"):
        resumable_actors.describe(object.__new__(BatsimActors), code)
    with pytest.raises(resumable_actors.NotResumable, match="no continuation"):
        resumable_actors.resumed(object.__new__(BatsimActors), "_timed", "slept", {"callback": None})
    assert isinstance(resumable_actors.resumed(object.__new__(BatsimActors), "_put", "done", {}), types.GeneratorType)
