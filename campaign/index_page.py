"""The index of `joulesim campaign report --html`: a row per instance, sortable by any column.

A row gives the instance (a link to its page, or "failed: no page"), the parameters that vary,
how many of its jobs succeeded and how many were killed (walltime reached included, as the
metrics count them: analysis/metrics.py) and the main metrics. A click on a column's header sorts
the rows by it, a second click the other way: numbers as numbers (each cell keeps its exact value
in data-key, so 9 comes before 10 and 0.1234564 before 0.1234567, though both show as 0.123456),
text by character codes (as Python's sorted does), empty cells last either way; ties keep their
order. The script is inline and the page fetches nothing, as the instance pages.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from joulesim.campaign.report import DEFAULT_METRICS, _label

# (column header, row's key in the counts given to index_page)
COUNT_COLUMNS = [("succeeded", "nb_jobs_success"), ("killed", "nb_jobs_killed")]

_SORT_SCRIPT = """
document.querySelectorAll("th").forEach(function (header, column) {
  header.addEventListener("click", function () {
    var body = document.querySelector("tbody");
    var numeric = header.dataset.type === "number";
    var descending = header.getAttribute("aria-sort") === "ascending";
    document.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
    var key = function (row) {
      var text = row.cells[column].dataset.key;
      return numeric && text !== "" ? parseFloat(text) : text;
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {  // Array.sort is stable: ties keep their order
      var x = key(a), y = key(b);
      if (x === "" || y === "") return (x === "") - (y === "");  // empty cells last, either way
      var order = x < y ? -1 : (x > y ? 1 : 0);
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  });
});
"""

_STYLE = ("body{font-family:sans-serif} table{border-collapse:collapse} td,th{border:1px solid #ccc;"
          "padding:2px 6px;text-align:right} td:first-child,th:first-child{text-align:left} "
          "th{cursor:pointer;background:#f4f4f4} th[aria-sort=ascending]::after{content:' \\25B2'} "
          "th[aria-sort=descending]::after{content:' \\25BC'}")


def index_page(frame: pd.DataFrame, parameters: list[str], links: dict, counts: dict,
               comparisons: list[tuple[str, str]] | None = None) -> str:
    """The index's HTML. `links`: row -> its page's path relative to the index (rows without one
    failed); `counts`: row -> {"nb_jobs_success": n, "nb_jobs_killed": n} read from its jobs file;
    `comparisons`: (what a comparison page compares, its path relative to the index), listed above
    the table."""
    metrics = [m for m in DEFAULT_METRICS if m in frame.columns and frame[m].notna().any()]
    columns = [("instance", False), *((c, _numeric(frame[c])) for c in parameters),
               *((name, True) for name, _ in COUNT_COLUMNS), *((m, True) for m in metrics)]
    head = "".join(f'<th data-type="{"number" if numeric else "text"}" title="click to sort">'
                   f"{html.escape(_label(name))}</th>" for name, numeric in columns)
    rows = []
    for row in frame.index:
        instance = str(frame.at[row, "instance_id"])
        if row in links:
            first = f'<a href="{html.escape(links[row])}">{html.escape(instance)}</a>'
        else:
            first = f"{html.escape(instance)} (failed: no page)"
        cells = [_td(first, instance)]
        for name in parameters:
            value = frame.at[row, name]
            cells.append(_td(html.escape(_cell(value)), _key(value) if _numeric(frame[name]) else _cell(value)))
        for _, key in COUNT_COLUMNS:
            value = counts.get(row, {}).get(key)
            cells.append(_td("" if value is None else str(value), "" if value is None else _key(value)))
        for name in metrics:
            value = frame.at[row, name]
            cells.append(_td(html.escape(_cell(value)), _key(value)))
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>joulesim campaign</title>"
            f"<style>{_STYLE}</style></head><body>"
            f"<h1>joulesim campaign: {len(links)} of {len(frame)} instances with a page</h1>"
            "<p>Click a column's header to sort by it, again to reverse. Killed jobs include those that "
            "reached their walltime.</p>"
            + ("<h2>Comparisons (instances that ran the same jobs, on one page)</h2><ul>"
               + "".join(f'<li><a href="{html.escape(link)}">{html.escape(label)}</a></li>'
                         for label, link in comparisons) + "</ul>" if comparisons else "")
            + f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<script>{_SORT_SCRIPT}</script></body></html>\n")


def _numeric(column: pd.Series) -> bool:
    # A column of True/False (energy) sorts as text: pandas counts booleans as numbers.
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


def _td(content: str, key: str) -> str:
    return f'<td data-key="{html.escape(key)}">{content}</td>'


def _key(value) -> str:
    """A number's exact value for the sort (repr: shortest text that reads back the same), "" when
    missing; JavaScript's parseFloat reads every such text, infinities as "Infinity"."""
    if value is None or pd.isna(value):
        return ""
    number = float(value)
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return repr(number)


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if pd.isna(value) else f"{value:.6g}"
    return str(value)
