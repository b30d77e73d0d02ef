"""Learned utility functions f(r, n, s) that order the waiting queue, lowest first (seed 003).

Carastan-Santos and de Camargo, "Encontrando Políticas de Escalonamento Eficientes para
Clusters de Alto Desempenho com Simulação e Regressão Não Linear" (seed 003), fit functions
of a job's runtime r (seconds), processors n and submission time s (seconds since the start
of the experiment) to simulated scores by non-linear least squares; a job with a lower value
runs first. Its table 1:

    F1 = c1 * sqrt(r) * c2 * n + c3 * log10(s)    c1 = 0.0001352  c2 = 0.2765352  c3 = 0.0071470
    F2 = c1 * r + c2 * sqrt(n) + c3 * log10(s)    c1 = 0.0000002  c2 = 0.0003207  c3 = 0.0069554

The logarithm is base 10, as in the authors' public code.

Domain (our definition): log10 is taken of max(x, 1), so s <= 1 s (in particular s = 0, a
job submitted at the start of the experiment, where the authors' code gets -inf) gives 0,
the value at s = 1 s. Why: log10(0) = -inf would put such a job before every other one
whatever its r and n (and -inf + inf terms can make NaN), and s is a count of seconds in the
traces, so s in ]0, 1[ carries no information worth a negative, unbounded term. The same
clamp applies to log10(r) and log10(n) in the candidate forms below (r = 0 is a job that
does nothing).

Candidate forms (`learn_forms`): the forms the fitting code (`joulesim learn fit`) tries and
this module evaluates, all with three coefficients and the seed's shapes:
- product forms `<g>_r_times_<h>_n`: c1 * g(r) * c2 * h(n) + c3 * log10(s) (F1's shape);
- sum forms `<g>_r_plus_<h>_n`: c1 * g(r) + c2 * h(n) + c3 * log10(s) (F2's shape);
with g, h among `r`/`n` themselves, `sqrt` and `log10` (names: `r_times_sqrt_n`,
`sqrt_r_times_n`, `log10_r_plus_n`, ...). F1 is `sqrt_r_times_n` and F2 `r_plus_sqrt_n`
(`FORM_ALIASES`). Forms take floats or numpy arrays (the fit evaluates them on arrays).

File format (`--option function=FILE`, written by `joulesim learn fit`), a JSON object:

    {"form": "F1", "coefficients": [0.0001352, 0.2765352, 0.0071470]}

`form` is a name of `learn_forms` or an alias (F1, F2); `coefficients` are [c1, c2, c3],
numbers of magnitude at most MAX_COEFFICIENT (1e100: every form then stays finite for any job,
runtimes below 2**33 s and sizes below 2**31, where larger ones could reach inf - inf = NaN
and leave the queue order undefined; fitted coefficients are near 1e-7 to 1). Other keys
(e.g. the fit's error, its data) are allowed and ignored. The file is strict JSON (no NaN,
no Infinity), nested at most MAX_FILE_DEPTH levels deep (the format needs 2): deeper files,
such as a thousand arrays inside each other, are refused before anything walks them
recursively.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.json_input import clip, nests_deeper, shown
from joulesim.protocol.errors import JoulesimError

__all__ = ["FORM_ALIASES", "MAX_COEFFICIENT", "MAX_FILE_DEPTH", "PAPER_FUNCTIONS", "UtilityFunction", "learn_forms",
           "load_function_file", "log10_at_least_1", "resolve_form", "utility_function"]

MAX_COEFFICIENT = 1e100
MAX_FILE_DEPTH = 32

Form = Callable[[Any, Any, Any, "tuple[float, ...] | list[float]"], Any]


def log10_at_least_1(x: Any) -> Any:
    """log10(max(x, 1)): 0 for x <= 1 (see the module's docstring); a float or a numpy array."""
    if isinstance(x, (int, float)):
        return math.log10(x) if x > 1 else 0.0
    import numpy as np  # only array callers (the fit) pay for it

    return np.log10(np.maximum(x, 1.0))


def _identity(x: Any) -> Any:
    return x


def _sqrt(x: Any) -> Any:
    return x ** 0.5  # floats and numpy arrays alike


#: Transforms of r and n in the candidate forms: name prefix -> function ('' = the value itself).
_TRANSFORMS: dict[str, Callable[[Any], Any]] = {"": _identity, "sqrt_": _sqrt, "log10_": log10_at_least_1}


def _product(g: Callable[[Any], Any], h: Callable[[Any], Any]) -> Form:
    def form(r: Any, n: Any, s: Any, c: Any) -> Any:
        return c[0] * g(r) * c[1] * h(n) + c[2] * log10_at_least_1(s)
    return form


def _sum(g: Callable[[Any], Any], h: Callable[[Any], Any]) -> Form:
    def form(r: Any, n: Any, s: Any, c: Any) -> Any:
        return c[0] * g(r) + c[1] * h(n) + c[2] * log10_at_least_1(s)
    return form


#: Candidate forms: name -> f(r, n, s, (c1, c2, c3)), lowest value first. The one list the
#: deciders and the fitting code share.
learn_forms: dict[str, Form] = {}
for _g_name, _g in _TRANSFORMS.items():
    for _h_name, _h in _TRANSFORMS.items():
        learn_forms[f"{_g_name}r_times_{_h_name}n"] = _product(_g, _h)
        learn_forms[f"{_g_name}r_plus_{_h_name}n"] = _sum(_g, _h)
del _g_name, _g, _h_name, _h

#: Seed 003's names of its two best forms.
FORM_ALIASES: dict[str, str] = {"F1": "sqrt_r_times_n", "F2": "r_plus_sqrt_n"}

#: Seed 003, table 1: the coefficients of F1 and F2.
PAPER_FUNCTIONS: dict[str, tuple[float, float, float]] = {
    "F1": (0.0001352, 0.2765352, 0.0071470),
    "F2": (0.0000002, 0.0003207, 0.0069554),
}


def resolve_form(name: str) -> str:
    """The `learn_forms` name of a form name or alias; KeyError when unknown."""
    name = FORM_ALIASES.get(name, name)
    if name not in learn_forms:
        raise KeyError(name)
    return name


@dataclass(frozen=True, slots=True)
class UtilityFunction:
    """A form with its coefficients; `value(r, n, s)`, lowest first."""

    form: str  # a key of learn_forms
    coefficients: tuple[float, float, float]
    source: str = ""  # 'F1', 'F2' or the file it was read from

    def value(self, r: float, n: float, s: float) -> float:
        return learn_forms[self.form](r, n, s, self.coefficients)


def _file_error(path: str, problem: str) -> JoulesimError:
    return JoulesimError(
        f"utility function file {path!r} {problem}: expected a JSON object like "
        '{"form": "F1", "coefficients": [c1, c2, c3]} (form: F1, F2 or one of '
        f"{', '.join(learn_forms)}), as `joulesim learn fit` writes")


def _is_coefficient(value: Any) -> bool:
    return type(value) in (int, float) and abs(value) <= MAX_COEFFICIENT  # a bool is no number


def _coefficients_shown(value: Any) -> str:
    """The coefficients as written, cut short (a hostile file may hold megabytes or deep nesting)."""
    if isinstance(value, list) and len(value) <= 6:
        return "[" + ", ".join(shown(item) for item in value) + "]"
    return shown(value)


def load_function_file(path: str) -> UtilityFunction:
    """A utility function from a JSON file (format in the module's docstring)."""
    try:
        raw = read_input_file(path, "a utility function file (JSON)")
    except InputError as exc:  # missing, a folder, a device (read forever), unreadable
        raise JoulesimError(f"cannot read utility function file {path!r}: it {exc.problem}; "
                            "give function=F1, function=F2 or the path of a JSON file "
                            "written by `joulesim learn fit`") from None
    try:
        data = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))  # strict JSON; a UTF-8 BOM is allowed
    except orjson.JSONDecodeError as exc:
        raise _file_error(path, f"is not valid JSON ({exc})") from None
    if nests_deeper(data, MAX_FILE_DEPTH):  # before anything (repr, checks) walks it recursively
        raise _file_error(path, f"nests arrays or objects more than {MAX_FILE_DEPTH} levels deep (the format needs 2)")
    if not isinstance(data, dict):
        raise _file_error(path, f"holds a {type(data).__name__}, not an object")
    form = data.get("form")
    if not isinstance(form, str):
        raise _file_error(path, "has no string 'form'")
    try:
        form = resolve_form(form)
    except KeyError:
        raise _file_error(path, f"has an unknown form {clip(form)!r}") from None
    coefficients = data.get("coefficients")
    if not (isinstance(coefficients, list) and len(coefficients) == 3 and all(map(_is_coefficient, coefficients))):
        raise _file_error(path, f"has coefficients {_coefficients_shown(coefficients)}: three numbers of magnitude "
                                f"at most {MAX_COEFFICIENT:g} are needed")
    return UtilityFunction(form, (float(coefficients[0]), float(coefficients[1]), float(coefficients[2])), path)


def utility_function(value: str) -> UtilityFunction:
    """The function an option value names: F1 or F2 (seed 003's table 1), else a file's path."""
    if value in PAPER_FUNCTIONS:
        return UtilityFunction(resolve_form(value), PAPER_FUNCTIONS[value], value)
    return load_function_file(value)
