"""A decider that rejects every job (measures the simulator's own overhead)."""

from __future__ import annotations

from joulesim.protocol.decider import Decider, SubmittedJob


class Rejecter(Decider):
    """Reject every job at submission (measures pure simulator overhead)."""

    OPTIONS: dict[str, str] = {}

    def on_job_submitted(self, job: SubmittedJob) -> None:
        self.reject_job(job.id)
