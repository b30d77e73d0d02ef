"""`joulesim learn fit`: seed 003's non-linear regression of the scores on f(r, n, s).

Every candidate form of `joulesim.deciders.batch.utility_functions.learn_forms` (F1's product shape
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
from pathlib import Path

import numpy as np
import pandas as pd

from joulesim.console.install_hint import install_hint
from joulesim.deciders.batch.utility_functions import FORM_ALIASES, PAPER_FUNCTIONS, learn_forms
from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import check_input_file
from joulesim.inputs.json_input import MAX_INT32
from joulesim.learn.output_paths import make_output_folder, write_via_temporary
from joulesim.protocol.errors import JoulesimError
from joulesim.protocol.time_range import MAX_SIMULATED_TIME

__all__ = ["fit_forms", "FitResult", "read_scores", "write_fit"]

_REQUIRED = ("r", "n", "s", "score")
#: The range of each feature column: runtimes and submission times are simulated times, sizes
#: processor counts (a C int in Batsim). Beyond it a file is not `learn generate`'s, and values
#: such as 1e300 would overflow the forms into inf during the fit.
_RANGES = {"r": (0.0, MAX_SIMULATED_TIME), "n": (1.0, float(MAX_INT32)), "s": (-MAX_SIMULATED_TIME, MAX_SIMULATED_TIME)}
_SCORES_FIX = "give the scores file written by joulesim learn generate"


@dataclass
class FitResult:
    ranking: pd.DataFrame  # form, alias, c1, c2, c3, mad, rmse (sorted by mad)
    paper: pd.DataFrame  # F1 and F2 with table 1's coefficients, on the same data
    rows: int


def _numeric_column(path: str, table: pd.DataFrame, name: str) -> np.ndarray:
    """Column `name` as float64, or InputError naming the column and its first bad value."""
    column = table[name]
    if isinstance(column, pd.DataFrame):
        raise InputError(path, f"column {name}", "appears more than once", _SCORES_FIX)
    if not (pd.api.types.is_integer_dtype(column) or pd.api.types.is_float_dtype(column)):
        bad = next((v for v in column if not isinstance(v, (int, float, np.integer, np.floating))
                    or isinstance(v, (bool, np.bool_))), column.iloc[0] if len(column) else None)
        raise InputError(path, f"column {name}", f"is not numeric ({column.dtype} values, e.g. {str(bad)[:40]!r})",
                         f"every value must be a number: {_SCORES_FIX}")
    return column.to_numpy(np.float64, na_value=np.nan)


def read_scores(path: str) -> pd.DataFrame:
    """The (r, n, s, score) rows of a file written by `joulesim learn generate`, checked: numbers
    in every column, r, n and s finite and in range, scores finite or NaN (a job first in no
    permutation: such rows are left out)."""
    check_input_file(path, "the scores file written by joulesim learn generate")
    try:
        table = pd.read_csv(path) if path.endswith(".csv") else pd.read_parquet(path)
    except ImportError:
        raise JoulesimError(f"{path}: reading parquet needs pyarrow ({install_hint('learn')})") from None
    except Exception as exc:  # a damaged or foreign file
        raise InputError(path, "file", f"cannot be read as a table ({type(exc).__name__}: {exc})",
                         "give the scores file written by joulesim learn generate (parquet or CSV)") from None
    missing = [c for c in _REQUIRED if c not in table.columns]
    if missing:
        raise InputError(path, f"column(s) {', '.join(missing)}", "are missing",
                         "the scores file needs columns r, n, s and score (joulesim learn generate writes them)")
    columns = {name: _numeric_column(path, table, name) for name in _REQUIRED}
    for name, (low, high) in _RANGES.items():
        values = columns[name]
        bad = ~((values >= low) & (values <= high))  # NaN compares False: bad too
        if bad.any():
            row = int(np.argmax(bad))
            raise InputError(path, f"column {name}, data row {row + 1}",
                             f"value {values[row]:g} is not a finite number from {low:g} to {high:g}", _SCORES_FIX)
    if np.isinf(columns["score"]).any():
        row = int(np.argmax(np.isinf(columns["score"])))
        raise InputError(path, f"column score, data row {row + 1}", f"value {columns['score'][row]:g} is infinite",
                         "scores are finite shares of AVEbsld, or empty (NaN) for a job first in no permutation")
    kept = np.isfinite(columns["score"])
    if kept.sum() < 4:
        raise InputError(path, "rows", f"only {int(kept.sum())} rows have a score", "generate more pairs or permutations")
    return pd.DataFrame({name: values[kept] for name, values in columns.items()})


def _is_product(form: str) -> bool:
    return "_times_" in form


def fit_forms(table: pd.DataFrame) -> FitResult:
    try:
        from scipy.optimize import least_squares
    except ImportError:
        raise JoulesimError("joulesim learn fit needs scipy: install the learn extra "
                            f"({install_hint('learn')})") from None

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
        try:
            solution = least_squares(residuals, start, method="trf", x_scale="jac", max_nfev=2000)
        except (ValueError, np.linalg.LinAlgError) as exc:  # e.g. residuals that overflow to inf
            raise JoulesimError(f"the least-squares fit of form {name} failed on these scores: {exc}") from None
        rows.append(row(name, aliases.get(name, ""), expand(solution.x), residuals(solution.x)))
    ranking = pd.DataFrame(rows).sort_values(["mad", "form"]).reset_index(drop=True)
    paper = [row(FORM_ALIASES[alias], alias, coefficients, learn_forms[FORM_ALIASES[alias]](r, n, s, coefficients) - y)
             for alias, coefficients in PAPER_FUNCTIONS.items()]
    return FitResult(ranking, pd.DataFrame(paper), len(table))


def write_fit(result: FitResult, directory: str, source: str) -> str:
    """ranking.csv, <form>.json per form and best.json in `directory`; returns best.json's path.
    Each file is written whole (`output_paths.write_via_temporary`)."""
    make_output_folder(directory, "output folder (-o)")
    what = "output folder (-o)"
    write_via_temporary(os.path.join(directory, "ranking.csv"), what,
                        lambda path: result.ranking.to_csv(path, index=False))
    best = os.path.join(directory, "best.json")
    for row in result.ranking.itertuples():
        document = {"form": row.form, "coefficients": [row.c1, row.c2, row.c3], "mean_absolute_distance": row.mad,
                    "rmse": row.rmse, "rows": result.rows, "scores": os.path.abspath(source)}
        text = json.dumps(document, indent=1)
        for name in [f"{row.form}.json"] + (["best.json"] if row.Index == 0 else []):
            write_via_temporary(os.path.join(directory, name), what, lambda path: Path(path).write_text(text))
    return best
