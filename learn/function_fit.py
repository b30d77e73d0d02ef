"""`joulesim learn fit`: seed 003's non-linear regression of the scores on f(r, n, s).

Every candidate form of `joulesim.deciders.utility_functions.learn_forms` (F1's product shape
and F2's sum shape with r and n taken as is, square-rooted or log10'd, plus c3 log10 s) is
fitted to the scores by least squares (scipy.optimize.least_squares, trust region), and the
forms are ranked by the mean absolute distance between the scores and the function's values,
as the paper ranks them. In a product form c1 g(r) c2 h(n) only c1 x c2 is determined by the
data: c2 is fixed to 1 there (the paper's split of the product between c1 and c2 is arbitrary;
compare c1 x c2).

Rows whose score is undefined (a job that was first in no permutation) are left out.
Written to the output folder: `ranking.csv` (every form: coefficients, mean absolute distance,
RMSE), one `<form>.json` per form and `best.json` (the best form), in the file format the
`utility` decider reads (`--option function=DIR/best.json`); the paper's F1 and F2, with
table 1's coefficients, are scored on the same data for comparison.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from joulesim.deciders.utility_functions import FORM_ALIASES, PAPER_FUNCTIONS, learn_forms
from joulesim.protocol.errors import JoulesimError
from joulesim.simulator.input_error import InputError

__all__ = ["fit_forms", "FitResult", "read_scores", "write_fit"]

_REQUIRED = ("r", "n", "s", "score")


@dataclass
class FitResult:
    ranking: pd.DataFrame  # form, alias, c1, c2, c3, mad, rmse (sorted by mad)
    paper: pd.DataFrame  # F1 and F2 with table 1's coefficients, on the same data
    rows: int


def read_scores(path: str) -> pd.DataFrame:
    """The (r, n, s, score) rows of a file written by `joulesim learn generate`."""
    if not os.path.isfile(path):
        raise InputError(path, "file", "does not exist", "give the scores file written by joulesim learn generate")
    try:
        table = pd.read_csv(path) if path.endswith(".csv") else pd.read_parquet(path)
    except ImportError:
        raise JoulesimError(f"{path}: reading parquet needs pyarrow (pip install 'joulesim[learn]')") from None
    except Exception as exc:  # a damaged or foreign file
        raise InputError(path, "file", f"cannot be read as a table ({type(exc).__name__}: {exc})",
                         "give the scores file written by joulesim learn generate (parquet or CSV)") from None
    missing = [c for c in _REQUIRED if c not in table.columns]
    if missing:
        raise InputError(path, f"column(s) {', '.join(missing)}", "are missing",
                         "the scores file needs columns r, n, s and score (joulesim learn generate writes them)")
    table = table[np.isfinite(table["score"])]
    if len(table) < 4:
        raise InputError(path, "rows", f"only {len(table)} rows have a score", "generate more pairs or permutations")
    return table


def _is_product(form: str) -> bool:
    return "_times_" in form


def fit_forms(table: pd.DataFrame) -> FitResult:
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise JoulesimError("joulesim learn fit needs scipy: install the learn extra "
                            "(pip install 'joulesim[learn]')") from None

    r = table["r"].to_numpy(float)
    n = table["n"].to_numpy(float)
    s = table["s"].to_numpy(float)
    y = table["score"].to_numpy(float)
    aliases = {form: alias for alias, form in FORM_ALIASES.items()}
    def row(name: str, alias: str, coefficients: tuple, error: np.ndarray) -> dict:
        return {"form": name, "alias": alias, "c1": coefficients[0], "c2": coefficients[1], "c3": coefficients[2],
                "mad": float(np.mean(np.abs(error))), "rmse": float(np.sqrt(np.mean(error * error)))}

    rows = []
    for name, form in learn_forms.items():
        product = _is_product(name)

        def expand(c: np.ndarray, product=product) -> tuple:
            return (c[0], 1.0, c[1]) if product else (c[0], c[1], c[2])  # products have c2 = 1

        def residuals(c: np.ndarray, form=form, expand=expand) -> np.ndarray:
            return form(r, n, s, expand(c)) - y

        start = np.array([1e-4, 1e-2]) if product else np.array([1e-4, 1e-4, 1e-2])
        solution = least_squares(residuals, start, method="trf", x_scale="jac", max_nfev=2000)
        rows.append(row(name, aliases.get(name, ""), expand(solution.x), residuals(solution.x)))
    ranking = pd.DataFrame(rows).sort_values(["mad", "form"]).reset_index(drop=True)
    paper = [row(FORM_ALIASES[alias], alias, coefficients, learn_forms[FORM_ALIASES[alias]](r, n, s, coefficients) - y)
             for alias, coefficients in PAPER_FUNCTIONS.items()]
    return FitResult(ranking, pd.DataFrame(paper), len(table))


def write_fit(result: FitResult, directory: str, source: str) -> str:
    """ranking.csv, <form>.json per form and best.json in `directory`; returns best.json's path."""
    os.makedirs(directory, exist_ok=True)
    result.ranking.to_csv(os.path.join(directory, "ranking.csv"), index=False)
    for row in result.ranking.itertuples():
        document = {"form": row.form, "coefficients": [row.c1, row.c2, row.c3], "mean_absolute_distance": row.mad,
                    "rmse": row.rmse, "rows": result.rows, "scores": os.path.abspath(source)}
        with open(os.path.join(directory, f"{row.form}.json"), "w") as handle:
            json.dump(document, handle, indent=1)
        if row.Index == 0:
            best = os.path.join(directory, "best.json")
            with open(best, "w") as handle:
                json.dump(document, handle, indent=1)
    return best
