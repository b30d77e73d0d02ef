"""Seed 004, figures 1 and 2: one cluster fed by the grid job stream (table 3), with and without
opportunistic shutdown of idle nodes (figure 1), and the queue-time estimate h_j of the broker's
algorithm S against the real waiting time under EASY backfilling (figure 2).

    python -m experiments.grid_energy.run                # both figures (its README says how long)
    python -m experiments.grid_energy.run --quick        # a tiny version (seconds), README.md untouched
    python -m experiments.grid_energy.run --readme-only  # README.md from the committed results/

A whole run writes results/{fig1,fig2}.csv and results/run.json beside this script (committed),
then README.md's table and every figure its prose quotes from them; the plots and the platform
go to out/grid_energy (or --out). See README.md for the model and every choice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from experiments.readme_results import write_readme
from experiments.run_record import read_run_record, record_figures, write_run_record

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
DEFAULT_OUT = REPO_ROOT / "out" / "grid_energy"  # /out/ is git-ignored
RESULTS = HERE / "results"  # the whole run's figures, committed

# ---------------------------------------------------------------- node model (paper §3)
PEAK_W = 520.0                 # HP ProLiant DL380 G3 peak (paper §3, its ref. [1])
IDLE_W = 0.43 * PEAK_W         # 223.6 W
SLEEP_W = 0.03 * PEAK_W        # 15.6 W
# Switching: the paper gives none. Durations are the Taurus (Grid'5000) measurements of the
# Batsim thesis (seed 001, table 6.1, our homogeneous240 platform); the powers keep Taurus's
# ratios to its idle power (switch-off 101 / 95 W, switch-on 125.17 / 95 W), applied to IDLE_W.
T_SD = 6.10                    # s, switch-off
T_WU = 151.52                  # s, switch-on (wake-up delay T_wu of table 1)
P_SD = IDLE_W * 101.0 / 95.0   # W while switching off (237.7 W)
P_WU = IDLE_W * 125.17 / 95.0  # W while switching on (294.6 W)
E_SD = P_SD * T_SD             # J (table 1's E_sd)
E_WU = P_WU * T_WU             # J (table 1's E_wu)
NODES = 64                     # one host = one single-processor node

DAYS = 7
FIG1_DENSITIES = [10, 20, 50, 100, 200, 300, 400, 500, 600]
FIG1_SEEDS = [0, 1, 2]
FIG2_DENSITIES = [50, 100, 200, 300, 400, 500, 600]
FIG2_SINGLE = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
FIG2_SEEDS = [0, 1]
MEAN_DURATION = (600 + 7200) / 2  # grid_stream: uniform whole seconds on [600, 7200]
# The paper's claims that README.md checks, in the paper's words and figures.
PAPER_CLAIMS = {"figure 1: energy lower at about 10 jobs/day": "4-5 times",
                "figure 1: energy cut over the densities": "20-80 %",
                "idle against off power": "12 times",
                "figure 2: h_j against the real wait": "at most 30 %",
                "figure 2: most ratios in": "[0.8, 1]",
                "figure 2: single-processor shares": "0.3-0.6"}


def break_even(e_sd: float = E_SD, e_wu: float = E_WU, p_idle: float = IDLE_W, p_sleep: float = SLEEP_W,
               t_sd: float = T_SD, t_wu: float = T_WU) -> float:
    """T_be (table 1): the off period (switch-off + sleep + switch-on) that costs as much as idling
    through it: E_sd + E_wu + p_sleep (T - t_sd - t_wu) = p_idle T."""
    return (e_sd + e_wu - p_sleep * (t_sd + t_wu)) / (p_idle - p_sleep)


T_BE = break_even()


def platform(nodes: int = NODES) -> dict[str, Any]:
    """joulesim JSON platform: `nodes` hosts at 1 Gflop/s; pstate 0 computes (IDLE_W..PEAK_W),
    1 sleeps (SLEEP_W), 2 and 3 are the virtual switch-off / switch-on pstates (one flop at
    1/T_SD and 1/T_WU flop/s)."""
    return {"version": 1,
            "description": f"seed 004 cluster: {nodes} single-processor nodes, 520 W peak, "
                           f"idle 0.43, sleep 0.03 x peak; switch-off {T_SD} s, switch-on {T_WU} s",
            "master": {"name": "master_host", "speed": "1Gf"},
            "clusters": [{"id": "cluster", "prefix": "node-", "count": nodes,
                          "speed": ["1Gf", "1e-9Mf", 1.0 / T_SD, 1.0 / T_WU],
                          "wattage_per_state": [[IDLE_W, PEAK_W], [SLEEP_W, SLEEP_W], [P_SD, P_SD], [P_WU, P_WU]],
                          "wattage_off": SLEEP_W,
                          "sleep_pstates": [{"sleep": 1, "switch_off": 2, "switch_on": 3}]}]}


def computing(workload: dict[str, Any]) -> dict[str, Any]:
    """The workload with its delay profiles turned into computations of the same duration at
    1 Gflop/s (a delay job leaves its hosts at idle power; a computing one loads them fully)."""
    from joulesim.workload_tools.synthetic import delays_as_computations

    return delays_as_computations(workload, 1e9)


def stream(density: float, seed: int, days: float, single: float = 0.8, nodes: int = NODES) -> dict[str, Any]:
    from joulesim.workload_tools import grid_stream
    # walltime_factor 1: the paper's exact estimates (figure 2's h_j is made of requested times);
    # under Batsim's rule such a job ends as killed at its walltime, having run its whole duration.
    return computing(grid_stream.generate(jobs_per_day=density, days=days, nb_res=nodes, seed=seed,
                                          single_fraction=single, walltime_factor=1.0))


def mean_width(single: float = 0.8) -> float:
    """grid_stream's mean job width: 1 with probability `single`, else uniform on 2..10 (mean 6)."""
    return single + (1 - single) * 6.0


def offered_load(density: float, single: float, nodes: int = NODES) -> float:
    """Mean requested area per day over the cluster's capacity."""
    return density * mean_width(single) * MEAN_DURATION / (nodes * 86400.0)


def count_machines(ids: str) -> int:
    """Machines in a Batsim interval set "0-3 7 9-10"."""
    from joulesim.protocol.interval_set import parse_interval_set

    return len(parse_interval_set(str(ids)))


def switch_ons(pstate_changes: pd.DataFrame | None) -> int:
    """Machines switched on: those of the rows going to -1 (switching towards a computation pstate)."""
    if pstate_changes is None or pstate_changes.empty:
        return 0
    rows = pstate_changes[pstate_changes["new_pstate"] == -1]
    return int(sum(count_machines(ids) for ids in rows["machine_id"]))


def mean_queue_length(jobs: pd.DataFrame) -> float:
    """Time-average number of waiting jobs over [0, last job end]: the integral of the queue
    length is the sum of the waiting times."""
    return float(jobs["waiting_time"].sum() / jobs["finish_time"].max())


def queue_estimates(sub: np.ndarray, start: np.ndarray, finish: np.ndarray, width: np.ndarray,
                    walltime: np.ndarray, nodes: int, chunk: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """h_j of algorithm S at each job's submission, jobs given in submission order.

    h_queue[j] = sum over the jobs k submitted before j and not started at sub[j] of
    width_k x walltime_k, over `nodes` (the paper: queued jobs' total area / cluster width).
    h_ahead[j] = h_queue[j] + the requested area still to run of the jobs running at sub[j]
    (start_k <= sub[j] < finish_k: width_k x (start_k + walltime_k - sub[j])), over `nodes`."""
    n = len(sub)
    h_queue = np.zeros(n)
    h_ahead = np.zeros(n)
    area = width * walltime
    idx = np.arange(n)
    for lo in range(0, n, chunk):
        rows = np.arange(lo, min(n, lo + chunk))
        t = sub[rows][:, None]
        before = idx[None, :] < rows[:, None]
        queued = before & (start[None, :] > t)
        running = before & (start[None, :] <= t) & (finish[None, :] > t)
        remaining = np.clip(start[None, :] + walltime[None, :] - t, 0.0, None) * width[None, :]
        h_queue[rows] = (queued * area[None, :]).sum(axis=1) / nodes
        h_ahead[rows] = h_queue[rows] + (running * remaining).sum(axis=1) / nodes
    return h_queue, h_ahead


# ---------------------------------------------------------------- runs
def fig1_point(args: tuple[float, int, float, str]) -> dict[str, Any]:
    import joulesim
    density, seed, days, policy = args
    options = {"t_idle": T_BE} if policy == "shutdown" else {}
    run = joulesim.simulate(platform(), stream(density, seed, days), "easy", options=options, energy=True)
    m = run.metrics
    return {"density": density, "seed": seed, "policy": policy, "jobs": int(m["nb_jobs"]),
            "energy_kwh": m["consumed_joules"] / 3.6e6, "mean_queue_length": mean_queue_length(run.jobs),
            "mean_waiting_s": m["mean_waiting_time"], "switch_ons": switch_ons(run.pstate_changes),
            "machine_switches": int(m["nb_machine_switches"] or 0), "utilization": m["utilization"]}


def fig2_point(args: tuple[float, float, int, float]) -> dict[str, Any]:
    import joulesim
    density, single, seed, days = args
    run = joulesim.simulate(platform(), stream(density, seed, days, single), "easy", energy=False)
    j = run.jobs  # (in submission order, ids as numbers: RunResult.jobs)
    h_queue, h_ahead = queue_estimates(j["submission_time"].to_numpy(float), j["starting_time"].to_numpy(float),
                                       j["finish_time"].to_numpy(float),
                                       j["requested_number_of_resources"].to_numpy(float),
                                       j["requested_time"].to_numpy(float), NODES)
    wait = j["waiting_time"].to_numpy(float)
    return {"density": density, "single_fraction": single, "seed": seed, "jobs": len(j),
            "offered_load": offered_load(density, single), "mean_wait_s": wait.mean(),
            **estimate_ratios(wait, h_queue, h_ahead)}


def estimate_ratios(wait: np.ndarray, h_queue: np.ndarray, h_ahead: np.ndarray) -> dict[str, float]:
    """Real waits against h over the jobs that found a non-empty queue (h_queue > 0: the only
    jobs for which the paper's h_j says anything): sums ratio, median per-job ratio, share of
    those jobs within 30 %; and the share of jobs (and of the total waiting time) they cover."""
    sel = h_queue > 0
    n = int(sel.sum())
    per_job = wait[sel] / h_queue[sel]
    return {"queued_share": n / len(wait) if len(wait) else np.nan,
            "wait_share": wait[sel].sum() / wait.sum() if wait.sum() > 0 else np.nan,
            "ratio_queue": wait[sel].sum() / h_queue[sel].sum() if n else np.nan,
            "ratio_ahead": wait[sel].sum() / h_ahead[sel].sum() if n else np.nan,
            "median_job_ratio": float(np.median(per_job)) if n else np.nan,
            "within_30pct": float(np.mean(np.abs(per_job - 1) <= 0.3)) if n else np.nan}


def run_all(quick: bool, workers: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    days = 1 if quick else DAYS
    d1 = [10, 100] if quick else FIG1_DENSITIES
    s1 = [0] if quick else FIG1_SEEDS
    d2 = [100, 300] if quick else FIG2_DENSITIES
    f2 = [0.4, 0.8] if quick else FIG2_SINGLE
    s2 = [0] if quick else FIG2_SEEDS
    tasks1 = [(d, s, days, p) for d in d1 for s in s1 for p in ("no shutdown", "shutdown")]
    tasks2 = [(d, f, s, days) for d in d2 for f in f2 for s in s2]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            rows1 = list(pool.map(fig1_point, tasks1))
            rows2 = list(pool.map(fig2_point, tasks2))
    else:
        rows1 = [fig1_point(t) for t in tasks1]
        rows2 = [fig2_point(t) for t in tasks2]
    return pd.DataFrame(rows1), pd.DataFrame(rows2)


def fig1_summary(fig1: pd.DataFrame) -> pd.DataFrame:
    mean = fig1.groupby(["density", "policy"], as_index=False).mean(numeric_only=True)
    wide = mean.pivot(index="density", columns="policy")
    out = pd.DataFrame({
        "energy_kwh_no_shutdown": wide[("energy_kwh", "no shutdown")],
        "energy_kwh_shutdown": wide[("energy_kwh", "shutdown")],
        "queue_no_shutdown": wide[("mean_queue_length", "no shutdown")],
        "queue_shutdown": wide[("mean_queue_length", "shutdown")],
        "switch_ons_shutdown": wide[("switch_ons", "shutdown")],
        "utilization": wide[("utilization", "no shutdown")]})
    out["energy_ratio"] = out["energy_kwh_no_shutdown"] / out["energy_kwh_shutdown"]
    out["saving_pct"] = 100.0 * (1.0 - out["energy_kwh_shutdown"] / out["energy_kwh_no_shutdown"])
    return out.reset_index()


def fig2_summary(fig2: pd.DataFrame) -> pd.DataFrame:
    return fig2.groupby(["density", "single_fraction"], as_index=False).mean(numeric_only=True).drop(columns="seed")


# ---------------------------------------------------------------- outputs
def plot(fig1: pd.DataFrame, fig2: pd.DataFrame, out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    s1 = fig1_summary(fig1)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for policy, col_e, col_q in (("no shutdown", "energy_kwh_no_shutdown", "queue_no_shutdown"),
                                 ("shutdown (t_idle = T_be)", "energy_kwh_shutdown", "queue_shutdown")):
        axes[0].plot(s1["density"], s1[col_e], marker="o", label=policy)
        axes[1].plot(s1["density"], s1[col_q], marker="o", label=policy)
    axes[2].plot(s1["density"], s1["switch_ons_shutdown"], marker="o", color="C1", label="shutdown")
    for ax, title in zip(axes, ("energy (kWh)", "mean queue length (jobs)", "switch-ons (machines)")):
        ax.set_xscale("log")
        ax.set_xlabel("density (jobs/day)")
        ax.set_title(title)
        ax.legend()
    fig.suptitle(f"Figure 1: one cluster of {NODES} nodes, EASY, {DAYS} days")
    fig.tight_layout()
    fig.savefig(out / "fig1.png", dpi=110)
    plt.close(fig)

    s2 = fig2_summary(fig2)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, col, title in ((axes[0], "ratio_queue", "sum real wait / sum h_j (paper: queued jobs only)"),
                           (axes[1], "ratio_ahead", "sum real wait / sum (h_j + running jobs' rest / W)")):
        grid = s2.pivot(index="single_fraction", columns="density", values=col)
        im = ax.imshow(grid.to_numpy(), origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=2)
        ax.set_xticks(range(len(grid.columns)), [str(int(c)) for c in grid.columns])
        ax.set_yticks(range(len(grid.index)), [f"{v:.1f}" for v in grid.index])
        ax.set_xlabel("density (jobs/day)")
        ax.set_ylabel("single-processor share")
        ax.set_title(title, fontsize=9)
        for (i, k), v in np.ndenumerate(grid.to_numpy()):
            if np.isfinite(v):
                ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="w" if v < 1 else "k")
        fig.colorbar(im, ax=ax)
    fig.suptitle(f"Figure 2: jobs that found a non-empty queue, EASY, {NODES} nodes, {DAYS} days")
    fig.tight_layout()
    fig.savefig(out / "fig2.png", dpi=110)
    plt.close(fig)


def markdown(fig1: pd.DataFrame, fig2: pd.DataFrame, quick: bool) -> str:
    s1 = fig1_summary(fig1)
    lines = [f"Measured by `run.py{' --quick' if quick else ''}` ({NODES} nodes; T_be = {T_BE:.1f} s; "
             f"means over seeds {sorted(int(s) for s in fig1['seed'].unique())}).", "",
             "Figure 1 (EASY without / with shutdown after T_be idle seconds):", "",
             "| jobs/day | utilization | energy kWh (no shutdown) | energy kWh (shutdown) | ratio | saving | "
             "mean queue (no sd) | mean queue (sd) | switch-ons |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in s1.itertuples():
        lines.append(f"| {r.density:g} | {r.utilization:.2f} | {r.energy_kwh_no_shutdown:,.1f} | "
                     f"{r.energy_kwh_shutdown:,.1f} | {r.energy_ratio:.2f}x | {r.saving_pct:.0f} % | "
                     f"{r.queue_no_shutdown:.3f} | {r.queue_shutdown:.3f} | {r.switch_ons_shutdown:,.0f} |")
    s2 = fig2_summary(fig2)
    lines += ["", "Figure 2 (EASY, no shutdown), over the jobs that found a non-empty queue: sum of real "
              "waiting times / sum of h_j, with the paper's h_j (queued jobs only) / with h_j plus the running "
              "jobs' remaining requested area; [share of jobs that found a non-empty queue]; rows: "
              "single-processor share, columns: jobs/day; `*`: offered load > 1, `-`: no job found a queue.", ""]
    dens = sorted(s2["density"].unique())
    lines.append("| single share | " + " | ".join(f"{d:g}" for d in dens) + " |")
    lines.append("|---:|" + "---:|" * len(dens))
    for f in sorted(s2["single_fraction"].unique()):
        cells = []
        for d in dens:
            r = s2[(s2["density"] == d) & (s2["single_fraction"] == f)].iloc[0]
            star = "*" if r["offered_load"] > 1 else ""
            cells.append("-" if not np.isfinite(r["ratio_queue"]) else
                         f"{r['ratio_queue']:.2f} / {r['ratio_ahead']:.2f} [{100 * r['queued_share']:.0f} %]{star}")
        lines.append(f"| {f:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def readme_figures(results: Path) -> tuple[str, dict[str, str]]:
    """README.md's results block and every figure its prose quotes, from the committed results
    (the inputs' derived values too: they are computed here, not typed)."""
    fig1, fig2 = pd.read_csv(results / "fig1.csv"), pd.read_csv(results / "fig2.csv")
    s1 = fig1_summary(fig1).set_index("density")
    s2 = fig2_summary(fig2)
    at = s1.loc
    queued = s2[s2["queued_share"] >= 0.3]        # the points where jobs do queue
    rare = s2[(s2["queued_share"] > 0) & (s2["queued_share"] < 0.3)]
    in_band = queued["ratio_queue"].between(0.8, 1.0)
    lowest = queued.nsmallest(1, "ratio_queue").iloc[0]
    band = s1[s1["saving_pct"].between(20, 80)].index
    empty = s1[s1["queue_no_shutdown"].round(3) == 0].index

    def share(values: pd.Series) -> str:
        return f"{values.min():.2f}-{values.max():.2f}"

    def of_share(single: float) -> pd.Series:
        return queued[queued["single_fraction"].round(1) == single]["ratio_queue"]

    width = mean_width()
    figures = {
        **record_figures(read_run_record(results)),
        "seeds.fig1": ", ".join(str(int(v)) for v in sorted(fig1["seed"].unique())),
        "seeds.fig2": ", ".join(str(int(v)) for v in sorted(fig2["seed"].unique())),
        "input.idle_w": f"{IDLE_W:.1f}", "input.sleep_w": f"{SLEEP_W:.1f}",
        "input.p_sd": f"{P_SD:.1f}", "input.p_wu": f"{P_WU:.1f}",
        "input.e_sd": f"{E_SD:,.0f}", "input.e_wu": f"{E_WU:,.0f}", "input.t_be": f"{T_BE:.1f}",
        "input.ceiling": f"{IDLE_W / SLEEP_W:.1f}",
        "input.mean_width": f"{width:.1f}", "input.mean_duration": f"{MEAN_DURATION:.0f}",
        "input.mean_area": f"{width * MEAN_DURATION:,.0f}",
        "input.saturation": f"{NODES * 86400 / (width * MEAN_DURATION):,.0f}",
        "input.saturation_day": f"{NODES * 86400 / (width * MEAN_DURATION) * 3 / 4:,.0f}",
        "util.lowest": f"{s1['utilization'].min():.2f}", "util.highest": f"{s1['utilization'].max():.2f}",
    }
    for d in s1.index:
        key = f"{d:g}"
        figures |= {f"ratio.{key}": f"{at[d, 'energy_ratio']:.1f}x", f"saving.{key}": f"{at[d, 'saving_pct']:.0f} %",
                    f"util.{key}": f"{at[d, 'utilization']:.2f}", f"util_pct.{key}": f"{100 * at[d, 'utilization']:.0f} %",
                    f"kwh_no.{key}": f"{at[d, 'energy_kwh_no_shutdown']:,.0f}",
                    f"kwh_sd.{key}": f"{at[d, 'energy_kwh_shutdown']:,.0f}",
                    f"queue_no.{key}": f"{at[d, 'queue_no_shutdown']:.3g}",
                    f"queue_sd.{key}": f"{at[d, 'queue_shutdown']:.3g}",
                    f"switch_ons.{key}": f"{at[d, 'switch_ons_shutdown']:,.0f}"}
    figures |= {
        "saving_band": f"{band.min():g}-{band.max():g}" if len(band) else "none of the densities",
        "queue_empty_until": f"{empty.max():g}" if len(empty) else "none",
        "fig2.queued_points": str(len(queued)), "fig2.in_band": str(int(in_band.sum())),
        "fig2.queued_range": share(queued["ratio_queue"]),
        "fig2.lowest": f"{lowest['ratio_queue']:.2f}",
        "fig2.lowest_at": f"single share {lowest['single_fraction']:.1f} and {lowest['density']:g} jobs/day",
        "fig2.rare_share": f"{100 * rare['queued_share'].min():.2g}-{100 * rare['queued_share'].max():.2g} %",
        "fig2.rare_range": share(rare["ratio_queue"]) if len(rare) else "-",
        "fig2.share_0": share(of_share(0.0)), "fig2.share_04_06": share(pd.concat([of_share(0.4), of_share(0.6)])),
        "fig2.ahead_moderate": share(queued[queued["offered_load"] <= 1]["ratio_ahead"]),
        "fig2.single_only_queued": (lambda top: "no job finds a queue" if top == 0 else
                                    f"at most {100 * top:.1f} % of the jobs find a queue")(
            s2[s2["single_fraction"] == 1.0]["queued_share"].max()),
        "fig2.single_only_load": f"{s2[s2['single_fraction'] == 1.0]['offered_load'].max():.2f}",
    }
    return markdown(fig1, fig2, quick=False), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="plots and platform (default: out/grid_energy)")
    parser.add_argument("--quick", action="store_true", help="1 day, 2 densities, 1 seed (results in --out)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-readme", action="store_true")
    parser.add_argument("--readme-only", action="store_true", help="rewrite README.md from the committed results")
    args = parser.parse_args(argv)
    if args.readme_only:
        write_readme(HERE / "README.md", *readme_figures(RESULTS))
        return 0
    began = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results" if args.quick else RESULTS
    results.mkdir(parents=True, exist_ok=True)
    # The platform as a file, to rerun a point by hand (joulesim run -p OUT/platform.json ...).
    (args.out / "platform.json").write_text(json.dumps(platform(), indent=1) + "\n")
    fig1, fig2 = run_all(args.quick, args.workers)
    fig1.to_csv(results / "fig1.csv", index=False)
    fig2.to_csv(results / "fig2.csv", index=False)
    write_run_record(results, "python -m experiments.grid_energy.run" + (" --quick" if args.quick else ""),
                     time.perf_counter() - began, event_grouping="batsim", workers=args.workers,
                     seeds={"fig1": sorted(set(fig1["seed"].astype(int))), "fig2": sorted(set(fig2["seed"].astype(int)))})
    try:
        plot(fig1, fig2, args.out)
    except ImportError:
        print("no figures: matplotlib is missing (pip install '.[plot]' in the joulesim checkout)")
    print(markdown(fig1, fig2, args.quick))
    if not (args.quick or args.no_readme):
        write_readme(HERE / "README.md", *readme_figures(results))
    print(f"done in {time.perf_counter() - began:.1f} s; results in {results}, plots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
