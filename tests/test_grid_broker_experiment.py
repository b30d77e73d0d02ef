"""Seed 004 figure 3 (experiments/grid_broker/run.py): the campaign file it writes, the wait
increase and cost ratio it derives from a results table (hand-made numbers), the energy-cost
column of campaign results, and --quick end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import joulesim
from joulesim.campaign.runner import instances_of, run_campaign

from conftest import load_experiment_script


@pytest.fixture(scope="module")
def gb():
    return load_experiment_script("grid_broker")


def test_the_paper_grid_holds_its_named_points(gb):
    dens, hs = gb.densities(False), gb.h_diffs(False)
    assert dens[0] == 500 and {620, 3140} <= set(dens) and dens[-1] == 10_100
    assert len(dens) == 81 and all(b - a == 120 for a, b in zip(dens, dens[1:]))
    assert hs == list(range(0, 9001, 300)) and {8700, 9000} <= set(hs)


def test_the_campaign_file_pairs_one_stream_per_density_with_s_and_every_h_diff_of_p(gb, tmp_path):
    (tmp_path / "platform.json").write_text(json.dumps(_two_clusters()))
    study = tmp_path / "fig3.toml"
    study.write_text(gb.study_text("platform.json", [500, 620], [0, 300, 600], 0.5, 209.8, 20))
    parsed, instances, _ = instances_of(str(study))
    assert len(instances) == 2 * (1 + 3)
    assert [w.label for w in parsed.workloads] == ["d500", "d620"]
    settings = dict(parsed.workloads[0].settings)
    assert settings == {"jobs_per_day": 500, "days": 0.5, "nb_res": 20, "night_weight": 1.0, "compute_speed": 1e9,
                        "walltime_factor": 1.0}
    p = [i.parameters() for i in instances if i.parameters()["decider"] == "P"]
    assert sorted({row["option.h_diff"] for row in p}) == [0, 300, 600]
    assert all(row["option.algorithm"] == "P" and row["option.t_idle"] == 209.8 for row in p)
    assert parsed.energy == [True]


def _results(rows):
    """A campaign table as run.py reads it: (workload, decider, h_diff, wait, cost)."""
    return pd.DataFrame([{"instance_id": f"i{n}", "workload": w, "decider": d, "option.h_diff": h,
                          "mean_waiting_time": wait, "energy_cost_cents": cost, "nb_jobs": 10, "status": "ok"}
                         for n, (w, d, h, wait, cost) in enumerate(rows)])


def test_figure3_derives_the_wait_increase_the_cost_ratio_and_the_saving(gb):
    fig = gb.figure3(_results([
        ("d500", "S", None, 100.0, 200.0), ("d500", "P", 0, 90.0, 200.0), ("d500", "P", 300, 400.0, 100.0),
        ("d620", "S", None, 50.0, 300.0), ("d620", "P", 0, 60.0, 250.0), ("d620", "P", 300, 2000.0, 120.0)]))
    assert fig[["density", "h_diff"]].values.tolist() == [[500, 0], [500, 300], [620, 0], [620, 300]]
    assert fig["wait_increase"].tolist() == [-10.0, 300.0, 10.0, 1950.0]
    assert fig["cost_ratio"].tolist() == [1.0, 2.0, 1.2, 2.5]
    assert fig["saving_pct"].tolist() == pytest.approx([0.0, 50.0, 100 / 6, 60.0])
    rows = {paper: ours for paper, _, ours in gb.comparison(fig)}
    assert rows["P's mean wait is always higher than S's"].startswith("in 75 % of the 4 cells (min -10 s)")
    assert rows["largest wait increase (anywhere)"] == "1,950 s at density 620, H_diff 300"
    assert rows["largest cost ratio S / P"] == "2.50 at density 620, H_diff 300"
    trade = gb.tradeoff(fig)
    assert trade["saving_pct"].tolist() == pytest.approx([100 / 12, 55.0])
    assert trade["wait_increase"].tolist() == [0.0, 1125.0]


def test_figure3_refuses_a_table_with_unfinished_instances(gb):
    table = _results([("d500", "S", None, 1.0, 1.0), ("d500", "P", 0, 1.0, 1.0)])
    table.loc[1, "status"] = "timeout"
    with pytest.raises(SystemExit, match="1 instance"):
        gb.figure3(table)


def _two_clusters():
    """Two clusters of 10 single-node hosts; the second's node draws half the watts at the same price."""
    def cluster(name, watts):
        return {"id": name, "prefix": f"{name}-", "count": 10, "speed": "1Gf",
                "properties": {"cluster": name, "price": "10"},
                "wattage_per_state": [[watts * 0.5, watts]], "wattage_off": 1.0}
    return {"version": 1, "master": {"name": "m", "speed": "1Gf"}, "clusters": [cluster("a", 400.0), cluster("b", 200.0)]}


def test_campaign_results_carry_the_energy_cost_of_priced_platforms_only(gb, tmp_path):
    (tmp_path / "platform.json").write_text(json.dumps(_two_clusters()))
    study = tmp_path / "fig3.toml"
    study.write_text(gb.study_text("platform.json", [500], [0], 0.1, 209.8, 20))
    summary = run_campaign(str(study), str(tmp_path / "res"), workers=1, progress=False)
    assert summary.nb_run == 2 and not summary.failed
    table = pd.read_csv(tmp_path / "res" / "results.csv")
    workload = json.loads(next((tmp_path / "res" / "workloads").glob("d500-*.json")).read_text())
    for _, row in table.iterrows():
        options = {"algorithm": row["decider"], "t_idle": 209.8}
        if row["decider"] == "P":
            options["h_diff"] = 0
        single = joulesim.simulate(_two_clusters(), workload, "broker", options=options, energy=True).metrics
        assert row["energy_cost_cents"] == pytest.approx(single["energy_cost_cents"], rel=1e-12)
    # P at H_diff 0 still takes the cheaper cluster whenever the queues are even: it costs less
    # The paper's h is the exact queued work: every job's walltime is its duration (grid-stream's
    # default would double it), so each ends at its walltime having run its whole duration.
    profiles = workload["profiles"]
    assert workload["jobs"] and all(job["walltime"] == profiles[job["profile"]]["cpu"] / 1e9 for job in workload["jobs"])
    s, p = (table.set_index("decider").loc[d, "energy_cost_cents"] for d in ("S", "P"))
    assert p < s
    no_prices = _two_clusters()
    for c in no_prices["clusters"]:
        del c["properties"]["price"]
    (tmp_path / "platform.json").write_text(json.dumps(no_prices))
    run_campaign(str(study), str(tmp_path / "res2"), workers=1, progress=False, where={"decider": ["S"]})
    assert "energy_cost_cents" not in pd.read_csv(tmp_path / "res2" / "results.csv").columns


def test_quick_run_end_to_end(gb, tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("before\n<!-- results: begin -->\nold\n<!-- results: end -->\nafter\n")
    assert gb.main(["--quick", "--out", str(tmp_path / "out"), "--workers", "1", "--readme", str(readme)]) == 0
    fig = pd.read_csv(tmp_path / "out" / "fig3_quick.csv")
    assert len(fig) == 9 and sorted(fig["density"].unique()) == [500, 620, 3140]
    assert (fig["wait_increase"] == fig["wait_p"] - fig["wait_s"]).all()
    # At 500 jobs/day, P with a large H_diff runs almost everything on the cheapest cluster
    # (eastern United States: 61.9 W x 11.2 cents) where S fills the clusters in table order.
    low = fig[(fig["density"] == 500) & (fig["h_diff"] == 9000)].iloc[0]
    assert low["cost_ratio"] > 1.5
    text = readme.read_text()
    assert text.startswith("before\n<!-- results: begin -->\nMeasured by `run.py --quick`") and "old" not in text
    assert "| largest cost ratio S / P | 1.87 at density 620, H_diff 8,700 |" in text


def test_the_shipped_table2_platform_is_make_platforms_output():
    from joulesim.simulator.platform.platform_loader import shipped_platform_path

    make_platform = load_experiment_script("grid_broker", "make_platform.py")
    shipped = Path(shipped_platform_path("grid_table2")).read_text()
    assert json.loads(shipped) == make_platform.platform(), \
        "platforms/grid_table2.json is stale: python -m experiments.grid_broker.make_platform --out platforms/grid_table2.json"


def test_joulesim_run_on_the_shipped_grid_prints_the_total_energy_cost(tmp_path):
    from conftest import write_workload

    workload = write_workload(tmp_path, [{"id": i, "subtime": 60 * i, "res": 1 + i % 3, "delay": 600} for i in range(8)])
    done = subprocess.run([sys.executable, "-m", "joulesim.cli.main", "run", "-p", "grid_table2", "-w", workload,
                           "-d", "broker", "-o", "algorithm=P", "-o", "h_diff=inf", "-E", "-e", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    cost = pd.read_csv(tmp_path / "out_energy_cost.csv")
    total = cost[cost["kind"] == "total"]["cost_cents"].iloc[0]
    assert f"energy cost           {total:,.2f} US cents" in done.stdout
    # P with h_diff=inf runs every job on the eastern United States (the cheapest node-second):
    # a delay job holds its nodes at that cluster's idle power, 0.43 x 520 W / 8.4.
    jobs = cost[cost["kind"] == "job"].set_index("name")
    assert len(jobs) == 8
    for i in range(8):
        joules = jobs.loc[jobs.index.str.endswith(f"!{i}"), "energy_joules"].iloc[0]
        assert joules == pytest.approx(0.43 * 520.0 / 8.4 * (1 + i % 3) * 600, rel=1e-9)



def test_committed_records_let_a_new_checkout_resume_and_rerun_nothing(gb, tmp_path, capsys):
    """A quick campaign's records written with --records-only are restored into another output
    folder (a fresh checkout's): the campaign there runs no instance again and derives the same
    figure; the records file is the same bytes when written again; a damaged line is one error
    naming the file and line."""
    records = tmp_path / "records.jsonl"
    first, second = tmp_path / "first", tmp_path / "second"
    assert gb.main(["--quick", "--out", str(first), "--no-readme", "--workers", "1"]) == 0
    assert gb.main(["--quick", "--out", str(first), "--no-readme", "--records", str(records), "--records-only"]) == 0
    lines = records.read_bytes().splitlines()
    assert len(lines) == 12 and all(json.loads(line)["status"] == "ok" for line in lines)
    assert all(json.loads(line)["platform_source"] == "platform.json" for line in lines)
    from experiments.campaign_records import restore_records  # (importable once gb is loaded)

    results = second / "fig3_quick_results"
    assert restore_records(records, results) == 12 and restore_records(records, results) == 0
    summary = run_campaign(str(first / "fig3_quick.toml"), str(results), workers=1, progress=None)
    assert summary.nb_run == 0 and summary.nb_already_done == 12
    capsys.readouterr()
    assert gb.main(["--quick", "--out", str(second), "--no-readme", "--records", str(records), "--workers", "1"]) == 0
    assert (f"12 finished instance(s) committed in {records}: 0 restored into {results}, 12 there already"
            in capsys.readouterr().out)
    assert (second / "fig3_quick.csv").read_bytes() == (first / "fig3_quick.csv").read_bytes()
    assert records.read_bytes().splitlines() == lines
    # written from a folder that lacks them (a fresh checkout's), the committed records stay
    assert gb.save_records(tmp_path / "empty", records) == 12 and records.read_bytes().splitlines() == lines
    records.write_bytes(records.read_bytes() + b"{not json\n")
    with pytest.raises(SystemExit, match=r"records.jsonl: line 13 is not an instance record"):
        restore_records(records, tmp_path / "third")


def _write_records(path, savings, waits=lambda density, h: h / 10):
    """Committed records of S and of P at H_diff 0-9,000: S costs 100 cents and waits 100 s at every
    density; P saves `savings[density]` % from H_diff 2,000 (nothing below) and waits `waits` more."""
    lines = []
    for density, saving in savings.items():
        rows = [("S", None, 100.0, 100.0)] + [("P", h, 100.0 + waits(density, h), 100.0 - (saving if h >= 2000 else 0.0))
                                              for h in (0, 300, 600, 900, 1200, 2100, 3900, 8700, 9000)]
        for decider, h, wait, cost in rows:
            parameters = {"workload": f"d{density}", "decider": decider, "platform": "table2"}
            if h is not None:
                parameters["option.h_diff"] = h
            lines.append(json.dumps({"id": f"{density}-{decider}-{h}", "parameters": parameters, "status": "ok",
                                     "wall_time": 2.0, "metrics": {"mean_waiting_time": wait,
                                                                   "energy_cost_cents": cost, "nb_jobs": 10}}))
    path.write_text("\n".join(lines) + "\n")


def test_the_readme_figures_follow_the_committed_records(gb, tmp_path):
    """Figures of README.md's prose from records whose savings and waits are set by hand: the bands'
    mean savings, the density from which the saving stays under 3 %, the lowest density's ratio, the
    trade-off per H_diff, the cells where P waits less, and the sensitivity rows of the records present."""
    savings = {500: 50.0, 620: 40.0, 740: 30.0, 2060: 10.0, 3140: 2.5, 6020: 4.0, 7000: 1.0}
    _write_records(tmp_path / "fig3_instances.jsonl", savings,
                   waits=lambda density, h: -5.0 if (density, h) == (740, 600) else h / 10)
    (tmp_path / "run.json").write_text(json.dumps({"command": "c", "date": "d", "commit": "x", "wall_s": 1.0,
                                                   "cpu": "cpu", "cores": 2, "days": 1.0}))
    block, figures = gb.readme_figures(tmp_path)
    assert block.startswith("Measured by `run.py` (relative size 1 = 16 nodes, 1,393 in all): densities "
                            "500-7,000 jobs/day (7 values)") and "70 simulations (2 min 20 s of simulation" in block
    assert figures["band.500"] == "45.0 %" and figures["band.740"] == "30.0 %" and figures["band.2000"] == "10.0 %"
    assert figures["band.3000"] == "2.5 %" and figures["band.6000"] == "2.5 %"
    assert figures["under3.density"] == "7,000"  # not 3,140: the saving is back above 3 % at 6,020
    assert figures["lowest.density"] == "500" and figures["lowest.ratio"] == "2.00" and figures["lowest.saving"] == "50 %"
    assert figures["trade.wait.9000"] == "+900 s" and figures["trade.saving.2100"] == f"{sum(savings.values()) / 7:.1f} %"
    assert figures["top.increase"] == "900 s" and figures["paper_point.wait"] == "900 s"
    assert figures["paper_point.ratio"] == f"{100 / 60:.2f}" and figures["less.densities"] == "740"
    assert figures["less.cells"] == "1" and figures["cheapest.name"] == "`05_united_states_e`"
    assert figures["sensitivity"].count("\n") == 0 and figures["sensitivity"].startswith("| 16 (the default, full grid) | 1,393 |")
    _write_records(tmp_path / "fig3_base32_step480x900_instances.jsonl", {500: 20.0, 2060: 8.0, 10100: 0.5})
    rows = gb.readme_figures(tmp_path)[1]["sensitivity"].splitlines()
    assert len(rows) == 2 and rows[1] == ("| 32 | 2,787 | 900 s (500, 9,000) | 1.25 (500, 2,100) | 1.25 | "
                                          "8.0-8.0 %, mean 8.0 % | 0.5-0.5 % |")
