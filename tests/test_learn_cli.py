"""`joulesim learn generate` and `joulesim learn fit` (seed 003), end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scipy", reason="the learn extra is not installed (pip install 'joulesim[learn]')")

from joulesim.learn.function_fit import fit_forms, read_scores  # noqa: E402
from joulesim.learn.score_generation import generate_scores  # noqa: E402
from joulesim.simulator.input_error import InputError  # noqa: E402

COMMAND = [sys.executable, "-m", "joulesim.cli.main", "learn"]


def test_generate_is_reproducible_resumable_and_independent_of_the_pair_count(tmp_path):
    out = str(tmp_path / "scores.parquet")
    first = generate_scores(out, pairs=3, permutations=3000, seed=5, workers=2)
    assert first.computed == 3
    table = pd.read_parquet(out)
    assert list(table.columns) == ["pair", "job", "r", "n", "s", "score", "first_count", "permutations", "seed"]
    assert len(table) == 3 * 32 and set(table.pair) == {0, 1, 2}
    for _, rows in table.groupby("pair"):
        # eq. 2: each pair's scores are shares of the total AVEbsld (they add up to 1)
        assert rows.score.sum() == pytest.approx(1.0, rel=1e-9)
        assert rows.first_count.sum() == 3000
    # Resumable: a lost part is scored again, the others are kept, the result is the same.
    os.remove(out + ".parts/pair_000001.csv")
    again = generate_scores(out, pairs=3, permutations=3000, seed=5, workers=1)
    assert again.computed == 1
    pd.testing.assert_frame_equal(pd.read_parquet(out), table)
    # Pair k's scores do not depend on how many pairs are asked for.
    fewer = generate_scores(str(tmp_path / "two.csv"), pairs=2, permutations=3000, seed=5, workers=1)
    assert fewer.out.endswith(".csv")
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "two.csv"), table[table.pair < 2].reset_index(drop=True),
                                  check_dtype=False)


def test_fit_recovers_known_coefficients(tmp_path):
    # Scores made by F2's form with chosen coefficients are fitted back by that form, first.
    from joulesim.deciders.utility_functions import learn_forms

    rng = np.random.default_rng(0)
    r, n, s = rng.uniform(1, 1e5, 400), rng.integers(1, 256, 400).astype(float), rng.uniform(0, 1e6, 400)
    truth = (2e-7, 3e-4, 7e-3)
    table = pd.DataFrame({"r": r, "n": n, "s": s, "score": learn_forms["r_plus_sqrt_n"](r, n, s, truth)})
    result = fit_forms(table)
    best = result.ranking.iloc[0]
    assert best.form == "r_plus_sqrt_n" and best.alias == "F2"
    assert [best.c1, best.c2, best.c3] == pytest.approx(list(truth), rel=1e-6)
    assert best.mad < 1e-9


def test_cli_generate_fit_and_use_the_function(tmp_path):
    scores = tmp_path / "scores.parquet"
    done = subprocess.run(COMMAND + ["generate", "--pairs", "2", "--permutations", "2000", "--seed", "3",
                                     "-o", str(scores), "--no-progress"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "2 pair(s) x 2,000 permutations: 2 scored now" in done.stdout
    done = subprocess.run(COMMAND + ["fit", str(scores), "-o", str(tmp_path / "fit")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "the paper's table 1 on the same data" in done.stdout
    best = json.loads((tmp_path / "fit" / "best.json").read_text())
    ranking = pd.read_csv(tmp_path / "fit" / "ranking.csv")
    assert best["form"] == ranking.form[0] and len(best["coefficients"]) == 3
    assert (tmp_path / "fit" / "sqrt_r_times_n.json").is_file()  # F1's form, usable as function=FILE


def test_bad_score_files_are_clear_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_scores(str(tmp_path / "nothing.parquet"))
    bad = tmp_path / "bad.csv"
    bad.write_text("r,n,score\n1,2,0.1\n")
    with pytest.raises(InputError, match="column\\(s\\) s"):
        read_scores(str(bad))
    junk = tmp_path / "junk.parquet"
    junk.write_text("not parquet")
    with pytest.raises(InputError, match="cannot be read"):
        read_scores(str(junk))
    done = subprocess.run(COMMAND + ["fit", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr and "column(s) s" in done.stderr
    done = subprocess.run(COMMAND + ["generate", "--pairs", "0"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "--pairs" in done.stderr
    assert Path(tmp_path).is_dir()


def test_generate_on_a_dask_cluster_gives_the_pool_scores(tmp_path):
    distributed = pytest.importorskip("distributed", reason="the dask extra is not installed")
    pool = str(tmp_path / "pool.csv")
    generate_scores(pool, pairs=2, permutations=2000, seed=9, workers=2)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        on_dask = str(tmp_path / "dask.csv")
        summary = generate_scores(on_dask, pairs=2, permutations=2000, seed=9, dask_address=cluster.scheduler_address)
    assert summary.computed == 2
    pd.testing.assert_frame_equal(pd.read_csv(on_dask), pd.read_csv(pool))


def test_without_the_learn_extra_generate_still_runs_and_fit_says_what_to_install(tmp_path):
    # numba and scipy hidden as on a base install: generate falls back to plain Python (the
    # worker used to import numba to set its threads), fit names the extra instead of a traceback.
    script = """
import sys
sys.modules["numba"] = None
sys.modules["scipy"] = None
sys.modules["scipy.optimize"] = None
from joulesim.cli.main import main
sys.argv = ["joulesim", "learn", *sys.argv[1:]]
main()
"""
    out = str(tmp_path / "g.csv")
    done = subprocess.run([sys.executable, "-c", script, "generate", "--pairs", "1", "--permutations", "50",
                           "--workers", "1", "-o", out], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert len(pd.read_csv(out)) == 32
    done = subprocess.run([sys.executable, "-c", script, "fit", out], capture_output=True, text=True, timeout=300)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "needs scipy: install the learn extra" in done.stderr


def test_generate_works_after_this_process_ran_the_parallel_kernel(tmp_path):
    """A notebook that scored permutations itself, then generates: the pool's workers must not
    inherit the parent's numba (OpenMP) threads, with which a forked child dies of a segfault."""
    from joulesim.learn.list_schedule import permutations_avebsld, using_threads

    with using_threads(2):
        values = permutations_avebsld(np.array([2]), np.array([5.0]), np.array([1, 2]), np.array([3.0, 4.0]),
                                      np.array([[0, 1], [1, 0]]), 2)
    assert values.shape == (2,)
    summary = generate_scores(str(tmp_path / "scores.csv"), pairs=2, permutations=500, seed=1, workers=2)
    assert summary.computed == 2 and summary.failures == []
