"""The report's time axis in days, hours and minutes (or, when the run's start is known, UTC
dates), and its hover values with their units.

The runs' times stay seconds since the simulation's start in the page's data (the series'
callbacks and the tests read them so); only the ticks and labels change. Raw seconds
(1,814,400) say nothing to a reader of a three-week trace: the ticks fall on round durations
(1, 2, 5, 10, 15, 30 s; 1, 2, 5, 10, 15, 30 min; 1, 2, 3, 6, 12 h; 1, 2 d; then weeks), chosen
in the browser for the view, and read "2 d 06:00" since the start, or "2011-02-03 06:00" when
the start is known (`origin`: the Unix time of simulated time 0, e.g. an SWF trace's
UnixStartTime plus the submit-time shift its conversion applied: workload_tools/swf.py).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re

from joulesim.inputs.input_error import InputError

# Tick spacings (s): ~6-10 ticks across the view, the first spacing that gives at most MAX_TICKS.
STEPS = (1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
         3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800, 1209600, 2419200, 4838400, 9676800, 19353600,
         38707200)
MAX_TICKS = 10
_DAY = 86400
# The ticks of a view [start, end]: multiples of the step in Unix time when `origin` is known
# (so a day's tick falls at midnight UTC), else in seconds since the start.
_TICKS = """
const span = cb_data.end - cb_data.start;
let step = steps[steps.length - 1];
for (const candidate of steps) if (span / candidate <= max_ticks) { step = candidate; break; }
const offset = origin === null ? 0 : origin;
const ticks = [];
for (let k = Math.ceil((cb_data.start + offset) / step); k * step - offset <= cb_data.end; k++)
    ticks.push(k * step - offset);
return ticks;
"""
# A label, and the same text as a hover's (value, its spacing: how precise to be).
_FORMAT = """
function since_start(t, step) {
    const sign = t < 0 ? '-' : '';
    let rest = Math.abs(t);
    if (step < 1) rest = Math.round(rest * 1000) / 1000; else rest = Math.round(rest);
    const days = Math.floor(rest / 86400);
    rest -= days * 86400;
    const hours = Math.floor(rest / 3600), minutes = Math.floor((rest - hours * 3600) / 60);
    const seconds = rest - hours * 3600 - minutes * 60;
    const two = (n) => String(n).padStart(2, '0');
    if (step >= 86400 && step % 86400 === 0) return `${sign}${days} d`;
    let text = days ? `${sign}${days} d ` : sign;
    text += `${two(hours)}:${two(minutes)}`;
    if (step < 60) text += ':' + (step < 1 ? seconds.toFixed(3).padStart(6, '0') : two(seconds));
    return text;
}
function as_date(t, step) {
    const text = new Date(Math.round((origin + t) * 1000)).toISOString();  // 2011-02-01T15:38:44.000Z
    if (step >= 86400 && step % 86400 === 0) return text.slice(0, 10);
    if (step >= 60) return text.slice(0, 16).replace('T', ' ');
    if (step >= 1) return text.slice(0, 19).replace('T', ' ');
    return text.slice(0, 23).replace('T', ' ');
}
function label(t, step) { return origin === null ? since_start(t, step) : as_date(t, step); }
"""
_TICK_LABEL = _FORMAT + """
const step = ticks.length > 1 ? Math.abs(ticks[1] - ticks[0]) : 86400;
const steps_known = [%s];
const nearest = steps_known.reduce((a, b) => Math.abs(b - step) < Math.abs(a - step) ? b : a);
return label(tick, nearest);
""" % ", ".join(repr(step) for step in STEPS)
_HOVER_TIME = _FORMAT + """
return `${value.toFixed(3)} s (${label(value, 1)}${origin === null ? '' : ' UTC'})`;
"""
_HOVER_DURATION = """
if (!Number.isFinite(value)) return '-';
const hours = value / 3600;
return `${value.toFixed(3)} s (${hours < 48 ? hours.toFixed(2) + ' h' : (hours / 24).toFixed(2) + ' d'})`;
"""
_HOVER_ENERGY = """
if (!Number.isFinite(value) || value < 0) return '-';
return `${value.toFixed(2)} J (${(value / 3.6e6).toPrecision(3)} kWh)`;
"""


def axis_label(origin: float | None) -> str:
    return "time since the start (d hh:mm)" if origin is None else "date and time (UTC)"


def apply_time_axis(fig, origin: float | None) -> None:
    """Ticks and labels of a figure's time (x) axis."""
    from bokeh.models import CustomJSTicker, CustomJSTickFormatter

    args = {"steps": list(STEPS), "max_ticks": MAX_TICKS, "origin": origin}
    fig.xaxis.ticker = CustomJSTicker(args=args, major_code=_TICKS)
    fig.xaxis.formatter = CustomJSTickFormatter(args={"origin": origin}, code=_TICK_LABEL)
    fig.xaxis.axis_label = axis_label(origin)
    fig.xgrid.ticker = fig.xaxis.ticker


_HOVER_SUBMITTED = _FORMAT + """
const t = source.data.left[value] - source.data.waiting[value];  // (value: the row's index)
return `${t.toFixed(3)} s (${label(t, 1)}${origin === null ? '' : ' UTC'})`;
"""


def submission_hover(origin: float | None, source: object) -> object:
    """A hover formatter for "$index" giving a Gantt row's submission as its start minus its
    waiting time, from `source` (the rows drawn): the page carries no submission column (on
    CEA-Curie's page it was 1.5 MB; waiting times, often 0, weigh far less)."""
    from bokeh.models import CustomJSHover

    return CustomJSHover(args={"origin": origin, "source": source}, code=_HOVER_SUBMITTED)


def hover_formatters(origin: float | None) -> dict[str, object]:
    """Bokeh CustomJSHover models by kind: "time" (an instant of the run), "duration", "energy"."""
    from bokeh.models import CustomJSHover

    return {"time": CustomJSHover(args={"origin": origin}, code=_HOVER_TIME),
            "duration": CustomJSHover(code=_HOVER_DURATION), "energy": CustomJSHover(code=_HOVER_ENERGY)}


# ---------------------------------------------------------------------- the start, as given
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def parse_start_time(text: str) -> float:
    """`joulesim report --start-time`: the Unix time of simulated time 0, from a Unix time
    (1296571124), an ISO 8601 date (2011-02-01T15:38:44+01:00; without a zone: UTC), or a
    workload JSON that `joulesim workload from-swf` wrote from a trace with UnixStartTime."""
    where = "option --start-time"
    text = text.strip()
    if _NUMBER.fullmatch(text):
        value = float(text)
        if not math.isfinite(value) or abs(value) > 1e11:
            raise InputError(text, where, "is not a Unix time in range", "give seconds since 1970-01-01 UTC")
        return value
    if text.lower().endswith(".json") or os.path.exists(text):
        return _start_of_workload(text)
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        raise InputError(text, where, "is not a Unix time, an ISO 8601 date or a workload JSON file",
                         "e.g. --start-time 2011-02-01T15:38:44Z, --start-time 1296571124 or "
                         "--start-time workload.json") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.timezone.utc)
    return moment.timestamp()


def _start_of_workload(path: str) -> float:
    from joulesim.inputs.input_file import read_input_file

    raw = read_input_file(path, "a workload JSON file")
    try:
        document = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(path, "option --start-time", f"is not JSON ({exc})",
                         "give a workload written by joulesim workload from-swf") from None
    value = document.get("unix_start_time") if isinstance(document, dict) else None
    if value is None:
        raise InputError(path, "top level: field 'unix_start_time'", "is missing (the trace's header had no "
                         "UnixStartTime, or the workload was not converted by joulesim workload from-swf)",
                         "give --start-time as a date or a Unix time")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(path, "top level: field 'unix_start_time'", f"{value!r} is not a number",
                         "give --start-time as a date or a Unix time")
    return float(value)
