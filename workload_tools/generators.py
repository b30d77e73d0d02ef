"""The synthetic workload models by name, as `joulesim workload generate`, campaign files and
`joulesim.generate_workload` name them."""

from __future__ import annotations

from typing import Any, Callable

MODELS = ("lublin", "batsim-eval", "grid-stream")


def generator(model: str) -> Callable[..., dict[str, Any]]:
    """The `generate` function of a model (its keywords: the model module's)."""
    from joulesim.workload_tools import batsim_eval, grid_stream, lublin

    functions = {"lublin": lublin.generate, "batsim-eval": batsim_eval.generate, "grid-stream": grid_stream.generate}
    if model not in functions:
        from joulesim.workload_tools.synthetic import GeneratorError

        raise GeneratorError(f"unknown workload model {model!r}: use one of {', '.join(MODELS)}")
    return functions[model]
