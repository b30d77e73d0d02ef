"""The energy budget of seed 001 §6.4: B joules over [t_s, t_e], made available at B / (t_e - t_s)
watts, read from the decider's options (joules, or a percentage of the platform's full-load
energy) with errors naming the option.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from joulesim.deciders.common.decider_options import float_option
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.number_text import parse_decimal


@dataclass(frozen=True, slots=True)
class BudgetPeriod:
    """The budget B over [start, end] (t_s, t_e), made available at `rate` = B / (t_e - t_s) W."""

    budget: float
    start: float
    end: float

    @property
    def unlimited(self) -> bool:
        return math.isinf(self.budget)

    @property
    def rate(self) -> float:
        """B / (t_e - t_s): joules made available per second (rule 1), or the power cap (§6.5.2)."""
        return self.budget / (self.end - self.start)

    def clock(self, t: float) -> float:
        """t clamped to [t_s, t_e]: integrals over the period are differences of this clock."""
        return self.start if t < self.start else self.end if t > self.end else t

    def overlap(self, a: float, b: float) -> float:
        """Length of [a, b] within the budget period (0 when b <= a)."""
        return max(0.0, self.clock(b) - self.clock(a))


def read_budget_fraction(options: dict[str, str], decider: str) -> float | None:
    """The budget as a fraction when given as a percentage ("80%"), else None."""
    text = str(options.get("budget", "")).strip()
    if not text.endswith("%"):
        return None
    percent = float_option(decider, {"budget": text[:-1]}, "budget", 0.0, minimum=0.0)
    return percent / 100.0


def full_power(compute_resources: list[dict[str, Any]], pstate: int, decider: str) -> float:
    """Watts of every compute machine computing at full load in `pstate`, from the hosts'
    wattage_per_state properties ("idle:max, idle:max, ..." per pstate, as Batsim's)."""
    total = 0.0
    for resource in compute_resources:
        text = str((resource.get("properties") or {}).get("wattage_per_state", ""))
        name = resource.get("name", resource.get("id"))
        pairs = [part.strip() for part in text.split(",")] if text else []
        try:
            if pstate >= len(pairs):
                raise ValueError
            total += parse_decimal(pairs[pstate].split(":")[-1])  # a NumberTextError is a ValueError
        except ValueError:
            raise JoulesimError(f"decider {decider}: a budget in % needs the machines' full-load power, but host "
                                f"{name} has no wattage_per_state entry for pstate {pstate} (got {text!r}); give "
                                "the budget in joules, or use a platform with wattage_per_state") from None
    return total


def read_budget_period(options: dict[str, str], decider: str) -> BudgetPeriod:
    """The budget, start and end options (JoulesimError naming the option when invalid).

    A budget in % (e.g. "80%") gives a period with budget 0 here: the decider sets the budget
    once it knows the platform (`BudgetedEasy.on_simulation_begins`)."""
    if read_budget_fraction(options, decider) is not None:
        options = {**options, "budget": "0"}
    budget = float_option(decider, options, "budget", math.inf, minimum=0.0, allow_inf=True)
    start = float_option(decider, options, "start", 0.0, minimum=0.0)
    if "end" in options:
        end = float_option(decider, options, "end", math.inf, minimum=start, minimum_excluded=True)
    elif math.isinf(budget):
        end = math.inf
    else:
        raise JoulesimError(f"decider {decider}: option end (t_e, the budget period's end in seconds, "
                            f"after start={start:g}) is required with budget={options['budget']}")
    return BudgetPeriod(budget, start, end)
