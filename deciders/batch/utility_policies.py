"""Queue policies ordered by utility functions: WFP3, UNICEF (Tang et al. 2009) and the learned
functions of seed 003.

Seed 003 (Carastan-Santos and de Camargo, "Encontrando Políticas de Escalonamento Eficientes
para Clusters de Alto Desempenho com Simulação e Regressão Não Linear") orders the waiting
queue by a function of each job's runtime r, processors n and submission time s, and
compares its learned functions F1, F2 (utility_functions.py) with FCFS and two utility
policies of Tang, Lan, Desai and Buettner, "Fault-aware, utility-based job scheduling on
BlueGene/P systems", CLUSTER 2009. The scores below are those of the authors' public code
(age = now - submission time, n = the job's res):

    wfp      WFP3     (age / r)^3 * n                                  highest first
    unicef   UNICEF   (age + 1e-20) / (log2(n + 1e-20) * r)            highest first
    utility  F1, F2 or a fitted function f(r, n, s)                    lowest first

For the learned functions, s is the submission time minus the simulation's start (the time
of SIMULATION_BEGINS, 0 for Batsim workloads), so a workload cut from a longer trace should
have its submission times shifted to start near 0, as the seed's experiments are; s <= 1 s
counts as 1 s (log10 term 0; why: utility_functions.py).

WFP3 and UNICEF depend on the age, hence on the time: they are recomputed at every
scheduling pass (dynamic priorities). Edge cases, which the authors' C code leaves to IEEE
division: r = 0 gives WFP3 +inf (the job goes first); in double precision
log2(n + 1e-20) = log2(n), so for n = 1 (or r = 0) UNICEF's denominator is 0 and the score
+inf, as the C code's division gives: such jobs go first, in submission order.

Each decider is an order plus a pass (ordered_policy.py): options `backfill=none|easy`
(default none, the paper's setting) and `runtime=walltime|profile` (default walltime, the
"estimate" setting; profile is the paper's figure 1 "runtime" setting); `utility` also takes
`function=F1|F2|FILE` (default F1; FILE's format: utility_functions.py).
"""

from __future__ import annotations

import math

from joulesim.deciders.batch.ordered_policy import JobFacts, OrderedPolicy
from joulesim.deciders.batch.utility_functions import UtilityFunction, utility_function
from joulesim.deciders.common.queue_order import ScoreOrder
from joulesim.protocol.errors import JoulesimError

__all__ = ["UnicefPolicy", "UtilityPolicy", "WFP3Policy", "unicef_score", "wfp3_score"]


def wfp3_score(job: JobFacts, now: float) -> float:
    """WFP3: (age / r)^3 * n, highest first."""
    if job.r <= 0:
        return math.inf
    ratio = (now - job.submit) / job.r
    return ratio * ratio * ratio * job.n  # products overflow to inf where ** would raise


def unicef_score(job: JobFacts, now: float) -> float:
    """UNICEF: (age + 1e-20) / (log2(n + 1e-20) * r), highest first."""
    denominator = math.log2(job.n + 1e-20) * job.r
    if denominator <= 0:  # n = 1 or r = 0: IEEE division by zero gives +inf in the authors' code
        return math.inf
    return (now - job.submit + 1e-20) / denominator


class WFP3Policy(OrderedPolicy):
    """WFP3 (Tang et al. 2009): waiting jobs by (age / r)^3 * n, highest first, re-sorted at every pass."""

    NAME = "wfp"

    def make_order(self) -> ScoreOrder[JobFacts]:
        return ScoreOrder(wfp3_score, highest_first=True, dynamic=True)


class UnicefPolicy(OrderedPolicy):
    """UNICEF (Tang et al. 2009): waiting jobs by (age + 1e-20) / (log2(n + 1e-20) * r), highest first."""

    NAME = "unicef"

    def make_order(self) -> ScoreOrder[JobFacts]:
        return ScoreOrder(unicef_score, highest_first=True, dynamic=True)


class UtilityPolicy(OrderedPolicy):
    """Seed 003's learned utility functions: waiting jobs by f(r, n, s), lowest first (F1, F2 or a file)."""

    NAME = "utility"
    OPTIONS = {
        **OrderedPolicy.OPTIONS,
        "function": "F1 (default) or F2 (seed 003's table 1), or the path of a JSON file "
                    '{"form": ..., "coefficients": [c1, c2, c3]} as `joulesim learn fit` writes',
    }

    def make_order(self) -> ScoreOrder[JobFacts]:
        value = str(self.options.get("function", "F1")).strip()
        try:
            self.function: UtilityFunction = utility_function(value)
        except JoulesimError as exc:
            raise JoulesimError(f"decider {self.NAME}: option function={value!r}: {exc}") from None
        evaluate = self.function.value

        def score(job: JobFacts, now: float) -> float:
            return evaluate(job.r, job.n, job.s)

        return ScoreOrder(score, highest_first=False, dynamic=False)
