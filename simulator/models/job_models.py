"""Which job model runs a job on the network runner, from its profile's type."""

from __future__ import annotations

from typing import TYPE_CHECKING

from joulesim.simulator.models.leaf_sequence import LeafSequence

if TYPE_CHECKING:
    from joulesim.simulator.models.job_activity import JobModel
    from joulesim.simulator.workload.job_record import JobRecord


def job_model_for(record: "JobRecord", hosts: list[int], storages: dict[str, int]) -> "JobModel":
    """The model of a starting job: its executors' `hosts`, its storage labels resolved."""
    return LeafSequence(record.job.profile, record.profiles, storages)
