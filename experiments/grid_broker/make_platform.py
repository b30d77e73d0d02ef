"""Seed 004 §3, table 2: the ten TOP500 clusters of the broker experiment, as a joulesim JSON
platform for the `broker` decider (deciders/grid/cluster_broker.py).

    python -m experiments.grid_broker.make_platform                  # out/grid_broker/platform.json
    python -m experiments.grid_broker.make_platform --base-size 8 --out grid10.json
    python -m experiments.grid_broker.make_platform --out platforms/grid_table2.json  # the shipped copy

Each cluster is a joulesim "clusters" entry of single-processor nodes, the node of
experiments/grid_energy (its constants are read from that run.py: 520 W peak, idle 0.43, sleep
0.03 of peak, the same switch-off / switch-on pstates and durations) with every power scaled by
the cluster's coefficient 1 / (relative energy efficiency): all nodes compute at the same speed
(paper: "all clusters have the same node performance"), so a node that does more Mflop per watt
draws fewer watts. The least efficient cluster (Russia, 1.0) keeps the DL380's 520 W. Scaling
every power by one factor keeps T_be at 209.8 s on every cluster. Host properties: `cluster`,
`price` (US cents/kWh, flat: the paper gives no night tariff) and `utc_offset` (hours).
See README.md for these choices.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from experiments.grid_energy import run as grid_energy

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "grid_broker" / "platform.json"  # /out/ is git-ignored
BASE_SIZE = 16  # nodes of a cluster of relative size 1.0 (the paper gives only relative sizes)

# Table 2: (name, UTC offset in hours, relative size, relative energy efficiency in Mflop/W,
# electricity price in US cents per kWh), in the paper's order.
TABLE_2: list[tuple[str, int, float, float, float]] = [
    ("spain", +2, 1.0, 1.9, 19.69),
    ("united_kingdom", 0, 1.0, 1.7, 18.59),
    ("united_states_w", -7, 1.8, 1.4, 11.2),
    ("canada", -4, 2.1, 1.5, 6.18),
    ("australia", +8, 2.4, 1.2, 28.88),
    ("united_states_e", -5, 4.2, 8.4, 11.2),
    ("russia", +3, 8.4, 1.0, 9.49),
    ("saudi_arabia", +3, 16.7, 1.6, 13.1),
    ("japan", +9, 18.7, 3.6, 12.0),
    ("china", +7, 30.8, 2.1, 16.0),
]


def node_power_factor(efficiency: float) -> float:
    """Power of a node relative to the 520 W base: equal speed, so watts ~ 1 / (Mflop/W)."""
    return 1.0 / efficiency


def cluster_size(relative: float, base_size: int = BASE_SIZE) -> int:
    return max(1, round(relative * base_size))


def platform(base_size: int = BASE_SIZE) -> dict[str, Any]:
    """The ten clusters of table 2 as a joulesim JSON platform (hosts `00_spain-0`...)."""
    g = grid_energy  # its node constants: one node model for both studies
    clusters = []
    for index, (name, offset, size, efficiency, price) in enumerate(TABLE_2):
        k = node_power_factor(efficiency)
        # joulesim numbers hosts in name order: the row number in the names keeps table 2's
        # order as the platform's (the broker's tie-break order).
        clusters.append({
            "id": f"{index:02d}_{name}", "prefix": f"{index:02d}_{name}-", "count": cluster_size(size, base_size),
            "speed": ["1Gf", "1e-9Mf", 1.0 / g.T_SD, 1.0 / g.T_WU],
            "properties": {"cluster": name, "price": f"{price:g}", "utc_offset": f"{offset:+d}"},
            "wattage_per_state": [[k * g.IDLE_W, k * g.PEAK_W], [k * g.SLEEP_W, k * g.SLEEP_W],
                                  [k * g.P_SD, k * g.P_SD], [k * g.P_WU, k * g.P_WU]],
            "wattage_off": k * g.SLEEP_W,
            "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}]})
    total = sum(c["count"] for c in clusters)
    return {"version": 1,
            "description": f"seed 004 table 2: ten clusters, {total} single-processor nodes "
                           f"({base_size} per unit of relative size), node power 520 W / relative efficiency",
            "master": {"name": "master_host", "speed": "1Gf"},
            "clusters": clusters}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-size", type=int, default=BASE_SIZE,
                        help=f"nodes of a cluster of relative size 1 (default {BASE_SIZE})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the platform")
    args = parser.parse_args(argv)
    if args.base_size < 1:
        parser.error("--base-size must be at least 1")
    doc = platform(args.base_size)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}: {doc['description']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
