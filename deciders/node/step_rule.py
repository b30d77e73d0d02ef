"""How many jobs a node decider may start at one instant: IRMaSim's one per time step, or all
that fit.

Seed 002's IRMaSim calls its scheduler once per simulator time step (an instant with
submissions, completions or a requested wake-up) and the learned scheduler takes one action
there; its heuristics start every job that fits. The rule alone moves experiment 2's energy by
about 9 % (issue 48): a learned policy and a heuristic are only compared under the same rule,
so every node decider that starts jobs takes it as the option `per_step`.
"""

from __future__ import annotations

from joulesim.deciders.common.decider_options import choice_option

__all__ = ["StepRule", "PER_STEP_RULES", "per_step_option_text"]

PER_STEP_RULES = ("one", "all")


def per_step_option_text(default: str) -> str:
    """The option's description, naming the decider's default."""
    texts = {"one": "one (one job started per time step, as seed 002's IRMaSim calls its learned scheduler)",
             "all": "all (every job that fits, as IRMaSim's heuristics)"}
    ordered = [texts[default] + ", default"] + [texts[rule] for rule in PER_STEP_RULES if rule != default]
    return " or ".join(ordered)


class StepRule:
    """Whether a decider may start another job now; `started` records that it did."""

    def __init__(self, decider_name: str, options: dict[str, str], default: str):
        self.one_per_step = choice_option(decider_name, options, "per_step", PER_STEP_RULES, default) == "one"
        self._acted_at = -1.0  # the instant of the last start (simulated time is never negative)

    def may_start(self, now: float) -> bool:
        return not self.one_per_step or self._acted_at != now

    def started(self, now: float) -> None:
        self._acted_at = now
