"""The network of a platform that describes none: no links, every transfer free.

The network runner needs a topology; with --enable-compute-sharing on a platform without links
it gets this one, so that jobs share CPUs as Batsim's model shares them while their
communications cost nothing (as everywhere in joulesim without a network description).
"""

from __future__ import annotations

import numpy as np


class FreeNetwork:
    nb_resources = 0
    capacity = np.empty(0)
    fatpipe = np.empty(0, dtype=bool)
    names: list[str] = []

    @staticmethod
    def route(src: int, dst: int) -> tuple[tuple[int, ...], float]:
        return (), 0.0

    @staticmethod
    def self_route(host: int) -> tuple[tuple[int, ...], float]:
        return (), 0.0
