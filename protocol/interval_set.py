"""Batsim interval sets ("1-3 5 7") on top of procset, the library pybatsim uses."""

from procset import ProcSet


def parse_interval_set(text: str) -> ProcSet:
    """Parse any valid form ("3 1-2", "1-3"); raises ValueError on a malformed string."""
    if not isinstance(text, str):
        raise ValueError(f"expected an interval set string like '0-3 5', got {text!r}")
    text = text.strip()
    if not text:
        return ProcSet()
    try:
        return ProcSet.from_str(text)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"malformed interval set {text!r}: expected closed integer intervals like '0-3 5 7'") from exc


def format_interval_set(resources: "ProcSet | str | list[int] | range") -> str:
    """Canonical form: disjoint, maximal, ascending intervals separated by single spaces."""
    if isinstance(resources, str):
        return str(parse_interval_set(resources))
    if not isinstance(resources, ProcSet):
        resources = ProcSet(*resources)
    return str(resources)
