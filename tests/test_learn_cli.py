"""`joulesim learn generate` and `joulesim learn fit` (seed 003), end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scipy", reason="the learn extra is not installed (pip install '.[learn]' in the checkout)")

from joulesim.inputs.input_error import InputError  # noqa: E402
from joulesim.learn.function_fit import fit_forms, read_scores  # noqa: E402
from joulesim.learn.score_generation import generate_scores  # noqa: E402

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
    from joulesim.deciders.batch.utility_functions import learn_forms

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


# --------------------------------------------------------------------------- hostile inputs
def learn_cli(*args: str):
    """`joulesim learn ARGS` in this process (so that a test can patch what it calls)."""
    from click.testing import CliRunner

    from joulesim.cli.learn_command import learn

    return CliRunner().invoke(learn, list(args))


@pytest.mark.parametrize("option, value, limit", [
    ("--pairs", str(10 ** 30), "is not in the range [1, 1,000,000]"),
    ("--permutations", str(10 ** 12), "is not in the range [1, 100,000,000]"),
    ("--workers", "1000000000", "is not in the range [1, 1,024]"),
    ("--seed", str(2 ** 80), "is not in the range [0, 9,223,372,036,854,775,807]"),
])
def test_generate_refuses_counts_beyond_its_limits_before_any_work(tmp_path, option, value, limit):
    # --pairs 1e30 built a list of 1e30 pair numbers (a hang); --seed 2**80 scored every pair and
    # then failed writing the int64 seed column of the parquet (an OverflowError traceback).
    out = tmp_path / "scores.parquet"
    arguments = {"--pairs": "1", "--permutations": "10", option: value}
    done = learn_cli("generate", *[x for pair in arguments.items() for x in pair], "-o", str(out))
    assert done.exit_code == 2 and f"Invalid value for '{option}'" in done.output and limit in done.output
    assert not os.path.exists(str(out) + ".parts")


@pytest.mark.parametrize("arguments, message", [
    ({"pairs": 10 ** 30}, r"--pairs 1e\+30 is out of range: give an integer from 1 to 1,000,000"),
    ({"pairs": 10 ** 5000}, r"--pairs \(an integer of 16,610 bits\) is out of range"),
    ({"permutations": 0}, r"--permutations 0 is out of range: give an integer from 1 to 100,000,000"),
    ({"seed": 2 ** 80}, r"--seed 1.20893e\+24 is out of range: give an integer from 0 to 9,223,372,036,854,775,807"),
    ({"seed": -1}, r"--seed -1 is out of range"),
    ({"workers": 10 ** 6}, r"--workers 1000000 is out of range: give an integer from 1 to 1,024"),
    ({"pairs": 2.5}, r"--pairs 2.5 is out of range"),
])
def test_generate_scores_refuses_counts_beyond_its_limits(tmp_path, arguments, message):
    from joulesim.learn.score_generation import GenerationCountError

    out = str(tmp_path / "scores.csv")
    with pytest.raises(GenerationCountError, match=message) as refused:
        generate_scores(out, **{"pairs": 1, "permutations": 10, **arguments})
    assert refused.value.exit_code == 2 and not os.path.exists(out + ".parts")


def test_generate_accepts_the_largest_seed_and_writes_it_to_parquet(tmp_path):
    from joulesim.learn.generation_limits import MAX_SEED

    out = str(tmp_path / "scores.parquet")
    generate_scores(out, pairs=1, permutations=50, seed=MAX_SEED, workers=1)
    assert pd.read_parquet(out).seed.tolist() == [MAX_SEED] * 32


def _a_file(tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("not a folder")
    return tmp_path / "file"


@pytest.mark.parametrize("out, problem", [
    ("{tmp}/folder", r"{tmp}/folder: output \(-o\): is a folder, not a file"),
    ("{tmp}/file/scores.parquet", r"{tmp}/file/scores.parquet: output \(-o\): {tmp}/file is a file, not a folder"),
    ("/proc/scores.csv", r"/proc/scores.csv: output \(-o\): cannot be written"),
    ("{tmp}/scores.csv\0x", r"output \(-o\): cannot be written: embedded null byte"),
])
def test_generate_checks_its_output_before_scoring_any_pair(tmp_path, monkeypatch, out, problem):
    # -o a folder used to score every pair, then fail writing the table (IsADirectoryError).
    import joulesim.learn.score_generation as generation

    (tmp_path / "folder").mkdir()
    _a_file(tmp_path)
    out, problem = out.format(tmp=tmp_path), problem.format(tmp=tmp_path)
    monkeypatch.setattr(generation, "score_one_pair", lambda task: pytest.fail("a pair was scored"))
    with pytest.raises(InputError, match=problem) as refused:
        generate_scores(out, pairs=2, permutations=10, workers=1)
    assert refused.value.exit_code == 2 and not os.path.exists(out + ".parts")


def test_generate_refuses_a_parts_folder_that_is_a_file(tmp_path):
    out = tmp_path / "scores.csv"
    (tmp_path / "scores.csv.parts").write_text("")
    with pytest.raises(InputError, match=r"scores.csv.parts: parts folder \(from -o\): is a file, not a folder"):
        generate_scores(str(out), pairs=1, permutations=10, workers=1)


@pytest.mark.parametrize("out, problem", [
    ("{tmp}/file", r"{tmp}/file: output folder \(-o\): is a file, not a folder"),
    ("{tmp}/file/functions", r"{tmp}/file/functions: output folder \(-o\): folder cannot be created: Not a directory"),
    ("/proc/functions", r"/proc/functions: output folder \(-o\): folder cannot be created"),
])
def test_fit_checks_its_output_folder_before_fitting(tmp_path, monkeypatch, out, problem):
    import joulesim.learn.function_fit as function_fit

    scores = tmp_path / "scores.csv"
    pd.DataFrame({"r": [1.0, 2, 3, 4], "n": [1, 2, 3, 4], "s": [0.0, 1, 2, 3], "score": [0.1, 0.2, 0.3, 0.4]}).to_csv(
        scores, index=False)
    _a_file(tmp_path)
    out, problem = out.format(tmp=tmp_path), problem.format(tmp=tmp_path)
    monkeypatch.setattr(function_fit, "fit_forms", lambda table: pytest.fail("the forms were fitted"))
    done = learn_cli("fit", str(scores), "-o", out)
    assert done.exit_code == 2, done.output
    assert re.search(f"joulesim: error: {problem}", done.output) and "Traceback" not in done.output


GOOD_SCORES = {"r": [10.0, 20.0, 30.0, 40.0, 50.0], "n": [1, 2, 4, 8, 16], "s": [0.0, 5.0, 9.0, 12.0, 30.0],
               "score": [0.1, 0.3, float("nan"), 0.2, 0.4]}


@pytest.mark.parametrize("column, values, problem", [
    ("r", ["10", "x", "30", "40", "50"], r"column r: is not numeric \((object|str) values, e.g. '10'\)"),
    ("n", [True, False, True, True, False], r"column n: is not numeric \(bool values"),
    ("score", ["a", "b", "c", "d", "e"], r"column score: is not numeric"),
    ("r", [10.0, float("inf"), 30.0, 40.0, 50.0], r"column r, data row 2: value inf is not a finite number from 0"),
    ("s", [0.0, 5.0, float("nan"), 12.0, 30.0], r"column s, data row 3: value nan is not a finite number"),
    ("n", [1, 2, 0, 8, 16], r"column n, data row 3: value 0 is not a finite number from 1 to 2.14748e\+09"),
    ("r", [10.0, -1.0, 30.0, 40.0, 50.0], r"column r, data row 2: value -1 is not a finite number from 0"),
    ("r", [10.0, 1e300, 30.0, 40.0, 50.0], r"column r, data row 2: value 1e\+300 is not a finite number from 0"),
    ("score", [0.1, float("-inf"), 0.3, 0.2, 0.4], r"column score, data row 2: value -inf is infinite"),
    ("n", pd.array([1, 2, None, 8, 16], dtype="Int64"), r"column n, data row 3: value nan is not a finite number"),
])
@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_fit_refuses_columns_that_are_not_finite_numbers(tmp_path, column, values, problem, suffix):
    # Strings were a TypeError traceback (np.isfinite on objects); inf fitted garbage or ended in
    # least_squares' ValueError; NaN features were fitted as if they were numbers.
    path = tmp_path / f"bad{suffix}"
    table = pd.DataFrame({**GOOD_SCORES, column: values})
    table.to_parquet(path) if suffix == ".parquet" else table.to_csv(path, index=False)
    with pytest.raises(InputError, match=f"{re.escape(str(path))}: {problem}"):
        read_scores(str(path))
    done = learn_cli("fit", str(path))
    assert done.exit_code == 2 and f"joulesim: error: {path}: column {column}" in done.output
    assert not os.path.exists(tmp_path / "bad_functions")


def test_fit_reads_good_scores_leaving_out_jobs_without_a_score(tmp_path):
    path = tmp_path / "good.parquet"
    pd.DataFrame(GOOD_SCORES).to_parquet(path)
    table = read_scores(str(path))
    assert table.score.tolist() == [0.1, 0.3, 0.2, 0.4] and table.n.tolist() == [1, 2, 8, 16]


def test_generate_shows_progress_lines_without_a_terminal(tmp_path, monkeypatch):
    # In a log (stderr not a terminal) generate used to show nothing for minutes. The pairs also
    # go to the executor in batches (here 2 + 1), with the same result.
    import joulesim.console.progress_bar as progress
    import joulesim.learn.score_generation as generation

    monkeypatch.setattr(progress, "PLAIN_DELAY_S", 0)
    monkeypatch.setattr(progress, "PLAIN_INTERVAL_S", 0)
    monkeypatch.setattr(generation, "BATCH_PAIRS", 2)
    out = tmp_path / "scores.csv"
    done = learn_cli("generate", "--pairs", "3", "--permutations", "100", "--workers", "1", "-o", str(out))
    assert done.exit_code == 0, done.output
    lines = [line for line in done.stderr.split("\n") if line.startswith("scoring pairs")]
    assert lines and lines[-1].startswith("scoring pairs: 100%") and "3/3" in lines[-1]
    assert "\r" not in done.stderr
    assert sorted(set(pd.read_csv(out).pair)) == [0, 1, 2]


def test_a_long_compilation_of_the_kernels_is_announced_once(tmp_path, monkeypatch, capsys):
    # (issue 47, item 5: numba compiled for 46 s at the first `learn generate`, silently) The
    # kernels are warmed up in this process before the workers start; past NOTICE_AFTER_S of it
    # a line says why it takes long (here every warm-up counts as long).
    from joulesim.learn import score_generation

    monkeypatch.setattr(score_generation, "NOTICE_AFTER_S", 0.0)
    generate_scores(str(tmp_path / "scores.csv"), pairs=1, permutations=50, seed=1, workers=1)
    assert capsys.readouterr().err.count("joulesim: compiling the scoring kernels (numba)") == 1
    monkeypatch.setattr(score_generation, "NOTICE_AFTER_S", 3600.0)
    generate_scores(str(tmp_path / "again.csv"), pairs=1, permutations=50, seed=1, workers=1)
    assert "compiling" not in capsys.readouterr().err
