"""experiments/energy_budget: the chapter-6 campaign file and its analysis (seed 001 §6.5)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pandas as pd
import pytest
from conftest import load_experiment_script

HERE = Path(__file__).resolve().parents[1] / "experiments" / "energy_budget"


def load_script():
    return load_experiment_script("energy_budget")


def test_the_campaign_has_the_thesis_980_instances(shared_data):
    from joulesim.campaign.runner import instances_of

    study, instances, _ = instances_of(str(HERE / "campaign.toml"))
    assert len(instances) == 980  # 2 traces x 10 weeks x (EASY + 3 algorithms x 2 x 8 budgets)
    per_week = pd.Series([(i.workload.label, i.workload.variant) for i in instances]).value_counts()
    assert len(per_week) == 20 and set(per_week) == {49}
    assert {i.platform.label for i in instances if i.workload.label == "curie"} == {"curie"}
    budgets = {dict(i.options).get("budget") for i in instances}
    assert budgets == {None, "100%", "90%", "80%", "70%", "60%", "50%", "49%", "30%"}
    assert study.window == (0.0, 604800.0)


def test_the_campaign_weeks_are_the_ten_of_highest_load(shared_data):
    study = tomllib.loads((HERE / "campaign.toml").read_text())
    listed = {w["name"]: w["weeks"] for w in study["workloads"]}
    assert load_script().select_weeks() == listed


def synthetic_results() -> pd.DataFrame:
    """Two subjects whose measures differ by a constant: normalization must remove it."""
    script = load_script()
    rows = []
    for trace, week, offset in (("curie", 1, 0.0), ("sdsc-blue", 2, 0.2)):
        conditions = [("EASY", 100.0)] + [(f"{a}{s}", float(b)) for a in script.ALGORITHMS
                                          for s in ("", "_SHUT") for b in script.BUDGETS]
        for algorithm, budget in conditions:
            shut = algorithm.endswith("_SHUT")
            rows.append({"trace": trace, "week": week, "algorithm": algorithm, "budget": budget,
                         "window_utilization": budget / 200 + offset + (0.01 if shut else 0.0),
                         "mean_bounded_slowdown": 100 - budget + 10 * offset,
                         "window_jobs_started": 1000 + budget,
                         "relative_energy": budget / 100 * (0.9 if shut else 1.0) + offset})
    return pd.DataFrame(rows)


def test_normalization_removes_the_subjects_offsets_and_keeps_the_grand_mean():
    script = load_script()
    frame = synthetic_results()
    normalized = script.normalize(frame)
    by_subject = normalized.groupby(["algorithm", "budget"])["window_utilization"]
    assert (by_subject.max() - by_subject.min()).abs().max() < 1e-12
    assert normalized["window_utilization"].mean() == pytest.approx(frame["window_utilization"].mean())


def test_table_6_2_is_the_mean_percent_change_of_shutdown_over_idle():
    script = load_script()
    means = script.condition_means(script.normalize(synthetic_results()))
    table = script.table_6_2(means)
    # Energy: shutdown consumes 10% less at every budget (the offsets average out to 0.1).
    expected = sum((0.9 * b / 100 + 0.1 - (b / 100 + 0.1)) / (b / 100 + 0.1) for b in script.BUDGETS) / 8
    assert table.loc["energy", "energyBud"] == pytest.approx(100 * expected)
    assert table.loc["jobs started", "PC"] == pytest.approx(0.0)
    assert table.loc["utilization", "reducePC"] > 0


def test_the_baseline_of_section_6_5_6():
    script = load_script()
    assert script.baseline(0.8, 100) == pytest.approx(0.8)
    assert script.baseline(0.8, 30) == pytest.approx(0.8 * (3 / 7 * 0.3 + 4 / 7))


def test_the_campaign_resumes_from_committed_records_and_writes_them_back(tmp_path, monkeypatch):
    """run() restores the committed records into the results folder before the campaign runs (so
    the runner skips those instances), and writes every finished record back after it."""
    import json

    from experiments.energy_budget import run as eb
    from joulesim.campaign import runner

    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps({"id": "aaa", "status": "ok", "platform_source": "/x/curie_taurus.json"}) + "\n")
    out = tmp_path / "out"
    seen = []

    class Summary:
        failed, wall_time, nb_run, nb_instances = [], 1.0, 1, 2

    def fake_campaign(study, folder, workers=None, where=None):
        seen.append(sorted(path.name for path in (Path(folder) / "instances").glob("*.json")))
        (Path(folder) / "instances" / "bbb.json").write_text(json.dumps({"id": "bbb", "status": "ok"}))
        return Summary()

    monkeypatch.setattr(runner, "run_campaign", fake_campaign)
    eb.run(out, full=True, workers=1, records=records)
    assert seen == [["aaa.json"]]  # (restored before the campaign ran)
    assert [json.loads(line)["id"] for line in records.read_text().splitlines()] == ["aaa", "bbb"]
    assert json.loads(records.read_text().splitlines()[0])["platform_source"] == "curie_taurus.json"


def test_the_readme_figures_follow_the_committed_records(tmp_path):
    """README.md's figures from committed records of the synthetic subjects (no trace read):
    shutdown raises utilization by 0.01 and cuts energy by 10 % everywhere, AVEbsld ties."""
    import json

    script = load_script()
    lines = []
    for number, row in enumerate(synthetic_results().to_dict("records")):
        parameters = {"workload": row["trace"], "week": row["week"], "decider": row["algorithm"]}
        if row["algorithm"] != "EASY":
            parameters["option.budget"] = f"{row['budget']:g}%"
        machines = script.TRACES[row["trace"]][1]
        metrics = {"window_utilization": row["window_utilization"], "mean_bounded_slowdown": row["mean_bounded_slowdown"],
                   "window_jobs_started": row["window_jobs_started"],
                   "window_energy": row["relative_energy"] * machines * script.P_COMPUTING * script.WEEK}
        lines.append(json.dumps({"id": f"{number:04d}", "parameters": parameters, "metrics": metrics,
                                 "status": "ok", "wall_time": 1.5}))
    (tmp_path / "instances.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "run.json").write_text(json.dumps({"command": "c", "date": "d", "commit": "x", "wall_s": 1.0,
                                                   "cpu": "cpu", "cores": 2}))
    block, figures = script.readme_figures(tmp_path)
    assert block.splitlines()[2].startswith("| EASY | 100% | ")
    assert figures["best_u"] == "PC_SHUT at every budget" and figures["best_b"] == "PC at every budget"
    assert figures["shut_less"] == "at every budget" and figures["pc_gap"] == "0.0100"
    # signs as the thesis's: utilization up for reducePC and energyBud, energy down for all three
    assert figures["signs"] == "5 of 12"
    assert figures["instances"] == "98" and figures["full.extra"] == "882" and figures["full.instances"] == "980"
    assert figures["cost.total"] == "2 min 27 s" and figures["cost.per_trace"] == "curie 1.5 s; sdsc-blue 1.5 s"
    assert figures["subjects"] == "curie: weeks 1; sdsc-blue: weeks 2"
    assert figures["rpc_shut_wins"] == "every budget" and figures["pc_above_eb"] == "none"
