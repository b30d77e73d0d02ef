"""Where conservative backfilling puts a job inside its hole: the five placement variants of
the Batsim thesis (seed 001, section 5.5.2, after [Luc+15]).

Conservative backfilling traverses the availability profile by ascending date; at each
start time where enough machines stay free for the job's whole walltime (the *hole* H), a
placement rule either accepts the hole and picks the machines A ⊆ H, |A| = q, or rejects it
(the traversal then goes on to the next start time).

Pure functions on bitmasks (bit i = machine i). Every rule takes the hole and q (the hole
has at least q machines) and returns the mask of exactly q machines of the hole, or None to
reject the hole. The rules know only machine ids and, for locality, which cluster each
machine belongs to (`clusters`: one mask per cluster, ordered by lowest id):

- `basic`: accepts; the q lowest ids (the minimal sum of ids).
- `best_effort_contiguous`: accepts; the first contiguous block (q consecutive ids) of the
  hole, i.e. the block with the lowest ids; without one, as basic.
- `best_effort_local`: accepts; the q lowest ids of the first cluster (by lowest id) that
  has at least q machines in the hole; without one, as basic.
- `contiguous`: as best_effort_contiguous, but rejects a hole without a contiguous block.
- `local`: as best_effort_local, but rejects a hole without q machines in one cluster.

Contiguity is about ids only (it ignores clusters, as in the thesis). Ties: among the
contiguous blocks, the one with the lowest ids (it also has the minimal sum of ids); among
the clusters, the first one able to take the job (first fit, as [Luc+15]-style list
heuristics do), then its lowest ids.

The two strict rules reject monotonically: if a hole is rejected, so is every hole inside
it. Conservative backfilling relies on it to keep its plan between calls (see
`ConservativeBackfilling.schedule`).
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Iterable, Sequence

from joulesim.deciders.common.machine_masks import lowest_bits, mask_runs

__all__ = [
    "PLACEMENTS",
    "LOCAL_PLACEMENTS",
    "PlacementRule",
    "basic",
    "best_effort_contiguous",
    "best_effort_local",
    "contiguous",
    "local",
    "first_contiguous_block",
    "first_local_set",
    "longest_run",
    "clusters_of_size",
    "clusters_from_labels",
    "placement_rule",
]

#: The placement variants, in the thesis's order; "basic" is the default.
PLACEMENTS = ("basic", "best_effort_contiguous", "best_effort_local", "contiguous", "local")
#: The variants that need the machines' clusters.
LOCAL_PLACEMENTS = ("best_effort_local", "local")

#: (hole mask, q) -> chosen mask, or None to reject the hole.
PlacementRule = Callable[[int, int], int | None]


# --------------------------------------------------------------------------- building blocks
def first_contiguous_block(hole: int, q: int) -> int | None:
    """The q consecutive ids of `hole` with the lowest ids, or None when it has no such block."""
    if q <= 0:
        return 0
    # Bit i of `starts` stays set while bits i .. i+width-1 are all in the hole; doubling
    # the width each step takes O(log q) big-integer operations, whatever the hole.
    starts = hole
    width = 1
    while width < q and starts:
        step = min(width, q - width)
        starts &= starts >> step
        width += step
    if not starts:
        return None
    first = (starts & -starts).bit_length() - 1
    return ((1 << q) - 1) << first


def first_local_set(hole: int, q: int, clusters: Sequence[int]) -> int | None:
    """The q lowest ids of the first cluster with at least q machines in `hole`, or None."""
    for cluster in clusters:
        free = hole & cluster
        if free.bit_count() >= q:
            return lowest_bits(free, q)
    return None


# --------------------------------------------------------------------------- the five rules
def basic(hole: int, q: int) -> int:
    """The q lowest ids (minimal sum of ids); never rejects."""
    return lowest_bits(hole, q)


def best_effort_contiguous(hole: int, q: int) -> int:
    """The lowest contiguous block of q ids if there is one, else the q lowest ids."""
    block = first_contiguous_block(hole, q)
    return lowest_bits(hole, q) if block is None else block


def contiguous(hole: int, q: int) -> int | None:
    """The lowest contiguous block of q ids; None (reject) when the hole has none."""
    return first_contiguous_block(hole, q)


def best_effort_local(hole: int, q: int, clusters: Sequence[int]) -> int:
    """The q lowest ids of the first cluster able to take them, else the q lowest ids."""
    chosen = first_local_set(hole, q, clusters)
    return lowest_bits(hole, q) if chosen is None else chosen


def local(hole: int, q: int, clusters: Sequence[int]) -> int | None:
    """The q lowest ids of the first cluster able to take them; None (reject) when none can."""
    return first_local_set(hole, q, clusters)


def placement_rule(name: str, clusters: Sequence[int] | None = None) -> PlacementRule:
    """The rule called `name` (one of PLACEMENTS) as a function (hole, q) -> mask or None.

    The local rules need `clusters` (one mask per cluster, ordered by lowest id).
    """
    if name in LOCAL_PLACEMENTS:
        if not clusters:
            raise ValueError(f"placement {name!r} needs the clusters' masks")
        rule = local if name == "local" else best_effort_local
        return partial(rule, clusters=tuple(clusters))
    rules: dict[str, PlacementRule] = {
        "basic": lowest_bits,  # the very function the basic variant always used
        "best_effort_contiguous": best_effort_contiguous,
        "contiguous": contiguous,
    }
    if name not in rules:
        raise ValueError(f"unknown placement {name!r}: use one of {', '.join(PLACEMENTS)}")
    return rules[name]


# --------------------------------------------------------------------------- platform shape
def longest_run(mask: int) -> int:
    """The length of the longest run of consecutive ids of `mask` (0 for an empty mask)."""
    return max((last - first + 1 for first, last in mask_runs(mask)), default=0)


def clusters_of_size(machines: int, size: int) -> list[int]:
    """Clusters of `size` consecutive ids: ids 0..size-1 form cluster 0, size..2*size-1
    cluster 1, ...; each restricted to `machines` (empty ones dropped; the last may be
    smaller)."""
    if size < 1:
        raise ValueError("a cluster has at least one machine")
    block = (1 << size) - 1
    clusters = []
    offset = 0
    while machines >> offset:
        cluster = machines & (block << offset)
        if cluster:
            clusters.append(cluster)
        offset += size
    return clusters


def clusters_from_labels(labels: Iterable[tuple[int, str]]) -> list[int]:
    """One mask per distinct label of (machine id, cluster label) pairs, ordered by lowest id."""
    masks: dict[str, int] = {}
    for machine, label in labels:
        masks[label] = masks.get(label, 0) | (1 << machine)
    return sorted(masks.values(), key=lambda mask: mask & -mask)
