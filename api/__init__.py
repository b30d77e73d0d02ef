"""joulesim: a fast, Batsim-4-compatible simulator of HPC job and resource management.

From Python::

    import joulesim
    result = joulesim.simulate("cluster32", "default", "easy")
    result.jobs            # a pandas DataFrame, one row per job
    result.metrics         # makespan, mean waiting time, ...

The command line is `joulesim` (see `joulesim --help`). Names are imported on first use, so
that `import joulesim.cli.main` stays fast.

This package's folder is `api/` (pyproject.toml installs it as the root `joulesim`): the Python
API, one layer above the simulator and the deciders and below campaigns, learners and the
command line (docs/reference/architecture.md). Its modules: run_simulation (`simulate`), run_result
(`RunResult`), simulation_options (`BatsimFlags`, `Workflows`, `Batsim5Decider`: simulate's keywords
grouped), simulation_inputs (platforms and workloads given as names, paths or dicts),
workload_making (`generate_workload`, `convert_swf`, `save_workload`), run_comparison (`compare`,
`compare_plot`, `compare_report`: several runs side by side),
decider_process (a decider in its own process; protocol/start_handshake.py its start report), run_interrupted,
stepwise_simulation (`Simulation`: run_until, state, fork) and simulation_worker (the process it runs in).
"""

from __future__ import annotations

from typing import Any

__all__ = ["simulate", "Simulation", "RunResult", "BatsimFlags", "Workflows", "Batsim5Decider", "generate_workload", "convert_swf",
           "save_workload", "compare", "compare_plot", "compare_report"]

_EXPORTS = {"simulate": "joulesim.run_simulation", "Simulation": "joulesim.stepwise_simulation",
            "RunResult": "joulesim.run_result",
            "BatsimFlags": "joulesim.simulation_options", "Workflows": "joulesim.simulation_options",
            "Batsim5Decider": "joulesim.simulation_options",
            "generate_workload": "joulesim.workload_making", "convert_swf": "joulesim.workload_making",
            "save_workload": "joulesim.workload_making", "compare": "joulesim.run_comparison",
            "compare_plot": "joulesim.run_comparison", "compare_report": "joulesim.run_comparison"}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'joulesim' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
