"""Expand a decider's option grid: fixed options, a cartesian product, and zipped lists.

`grid = {t_idle = [0, 300], f = ["n", "2n"]}` gives 4 combinations; `zip = {budget = [1, 2],
end = [10, 20]}` gives 2 (budget 1 with end 10, budget 2 with end 20); both together give
their product, 8. The order is the file's: the last key varies fastest.
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Mapping


def count_options(grid: Mapping[str, list], zipped: Mapping[str, list]) -> int:
    """How many combinations expand_options gives, without making them (a grid of 6 keys of
    100 values each holds 10^12)."""
    zip_rows = len(next(iter(zipped.values()))) if zipped else 1
    return zip_rows * math.prod(len(values) for values in grid.values())


def expand_options(fixed: Mapping[str, Any], grid: Mapping[str, list], zipped: Mapping[str, list]
                   ) -> list[dict[str, Any]]:
    """Every option combination, each a dict holding the fixed options too.

    The caller checked that the lists are non-empty, that zipped lists have one length, and
    that no key is given twice."""
    zip_rows: list[dict[str, Any]] = [{}]
    if zipped:
        keys = list(zipped)
        zip_rows = [dict(zip(keys, values)) for values in zip(*(zipped[k] for k in keys))]
    grid_keys = list(grid)
    combinations = []
    for zip_row in zip_rows:
        for values in itertools.product(*(grid[k] for k in grid_keys)):
            combinations.append({**fixed, **zip_row, **dict(zip(grid_keys, values))})
    return combinations
