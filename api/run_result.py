"""What `joulesim.simulate` returns: the run's outputs as pandas DataFrames, and its metrics.

pandas (and numpy, through the metrics) are imported when an output or a metric is first asked
for, not by `simulate` itself: their import took 0.2 s of a 20,000-job call's 1.5 s, which a
caller that reads only `wall_time` or the files never needed (BENCHMARKS.md, "The whole command").
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from joulesim.simulator.engine.simulation import SimulationResult
from joulesim.simulator.platform.platform_model import Platform

if TYPE_CHECKING:
    import pandas as pd

    from joulesim.analysis.run_outputs import RunOutputs


class RunResult:
    """The outputs of one run, read on first use.

    The DataFrames hold exactly what the Batsim-format output files hold (the files are
    written only when `simulate` was given `export=PREFIX`; `outputs` then lists them).
    """

    def __init__(self, result: SimulationResult, name: str, platform: Platform | None = None):
        self._result = result
        self._name = name
        self._platform = platform  # (for the report's grouping of machines)

    @cached_property
    def _outputs(self) -> RunOutputs:
        from joulesim.analysis.run_outputs import RunOutputs

        return RunOutputs(self._name, self._result.texts or None)

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """One row per job, the columns of `PREFIX_jobs.csv`, in submission order (submission
        time, then workload, then job id; the file lists jobs as they end, as Batsim writes it).

        `job_id` is an integer column when every id of the run is a plain integer, as in most
        Batsim workloads (`jobs[jobs.job_id == 7]`), else strings ("a", "007").
        """
        from joulesim.analysis.job_order import jobs_in_submission_order

        return jobs_in_submission_order(self._outputs.jobs)

    @property
    def schedule(self) -> dict[str, Any]:
        """Whole-run figures (`PREFIX_schedule.csv`), numbers parsed."""
        return self._outputs.schedule

    @property
    def machine_states(self) -> pd.DataFrame:
        """Machines per state over time (`PREFIX_machine_states.csv`)."""
        return self._outputs.machine_states

    @property
    def consumed_energy(self) -> pd.DataFrame | None:
        """Energy over time (`PREFIX_consumed_energy.csv`); None when energy was off."""
        return self._outputs.consumed_energy

    @property
    def pstate_changes(self) -> pd.DataFrame | None:
        """Power-state changes (`PREFIX_pstate_changes.csv`); None when energy was off."""
        return self._outputs.pstate_changes

    @property
    def energy_cost(self) -> pd.DataFrame | None:
        """Energy cost per cluster, per job and in total (`PREFIX_energy_cost.csv`: columns
        kind, name, energy_joules, cost_cents); None unless energy was on and the platform's
        hosts carry a `price`."""
        return self._outputs.energy_cost

    @cached_property
    def metrics(self) -> dict[str, Any]:
        """Summary metrics (as `joulesim analyze` computes them, tau = 10 s), all
        deterministic: the same inputs give the same numbers."""
        from joulesim.analysis.metrics import DEFAULT_TAU, compute_metrics

        metrics = compute_metrics(self._outputs, DEFAULT_TAU)
        metrics.pop("run")
        return metrics

    def window_metrics(self, start: float, end: float) -> dict[str, Any]:
        """Utilization, energy and jobs started within [start, end] (seed 001 §6.5.3's
        measures of a week): see joulesim.analysis.window_metrics."""
        from joulesim.analysis.window_metrics import window_metrics

        return window_metrics(self._outputs, start, end)

    def report(self, path: str, title: str | None = None) -> str:
        """The run's interactive HTML page (as `joulesim report` writes it; needs the report
        extra, Bokeh), its Gantt grouped as the run's platform groups its machines (by node and
        processor, or by cluster); the path written."""
        from joulesim.analysis.html_report import write_report
        from joulesim.analysis.machine_groups import machine_groups
        from joulesim.analysis.metrics import DEFAULT_TAU

        groups = None if self._platform is None else machine_groups(self._platform, self._outputs.nb_machines)
        return write_report([self._outputs], path, DEFAULT_TAU, title, groups=groups)

    def outputs_labelled(self, label: str) -> RunOutputs:
        """The run's outputs shown under `label` (comparisons: joulesim.compare_report)."""
        from joulesim.analysis.run_outputs import RunOutputs

        return RunOutputs(self._outputs.prefix, self._result.texts or None, label)

    @property
    def energy_enabled(self) -> bool:
        return self._result.energy_enabled

    @property
    def decider_calls(self) -> int:
        return self._result.decider_calls

    @property
    def wall_time(self) -> float:
        """Wall-clock seconds the simulation took (not deterministic)."""
        return self._result.wall_time

    @property
    def outputs(self) -> list[str]:
        """Paths of the output files; empty when the run kept its outputs in memory."""
        return list(self._result.outputs)

    def __repr__(self) -> str:
        m = self.metrics
        text = (f"<RunResult {m['nb_jobs']} jobs, makespan {m['makespan']:g} s, mean waiting "
                f"{m['mean_waiting_time']:.1f} s, mean bounded slowdown {m['mean_bounded_slowdown']:.2f}")
        if m["consumed_joules"] is not None:
            text += f", {m['consumed_joules']:.4g} J"
        return text + ">"
