"""Number formatting shared by the CSV outputs, so that runs are byte-identical."""


def fmt(value: float) -> str:
    """Fixed six decimals, as Batsim writes times: hides float noise, stays exact to 1 us."""
    return f"{value:.6f}"
