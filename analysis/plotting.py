"""Lazy matplotlib import (an optional extra) with the non-interactive Agg backend."""

from __future__ import annotations

from typing import Any

from joulesim.console.install_hint import install_hint
from joulesim.protocol.errors import JoulesimError


def pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend; a readable error when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise JoulesimError("plotting needs matplotlib, which is not installed: "
                            f"{install_hint('plot')}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def save(fig: Any, path: str) -> str:
    """Write the figure to `path` whole (a new file renamed over it: inputs/output_file.py); an
    existing `path` that is a folder, device or FIFO is refused."""
    import os

    from joulesim.inputs.output_file import write_whole

    plt = pyplot()
    directory = os.path.dirname(path)
    image_format = os.path.splitext(path)[1][1:].lower() or "png"
    try:
        if directory:
            os.makedirs(directory, exist_ok=True)
        write_whole(path, "image", lambda temporary: fig.savefig(temporary, dpi=120, format=image_format))
    except OSError as exc:
        raise JoulesimError(f"{path}: cannot write the image: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return path


def plain_time_axis(axis) -> None:
    """Seconds with thousands separators, no '1e7' offset text."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda value, _pos: f"{value:,.0f}"))
