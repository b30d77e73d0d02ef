"""`joulesim workload generate`: the three synthetic models match their parameters, are
deterministic per seed, load in joulesim, and the command reports misuse clearly.

Tolerances are several standard errors wide for the sample sizes used (fixed seeds, so the
tests are deterministic anyway; the margins keep them valid if numpy's streams change).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from click.testing import CliRunner

from joulesim.cli.workload_generate import generate as generate_command
from joulesim.simulator.workload.workload_loader import load_workload
from joulesim.workload_tools import batsim_eval, grid_stream, lublin
from joulesim.workload_tools.synthetic import GeneratorError, dumps


def columns(workload):
    jobs = workload["jobs"]
    subtimes = np.array([j["subtime"] for j in jobs], dtype=float)
    sizes = np.array([j["res"] for j in jobs])
    runtimes = np.array([workload["profiles"][j["profile"]]["delay"] for j in jobs], dtype=float)
    return subtimes, sizes, runtimes


def is_pow2(sizes):
    return (sizes & (sizes - 1)) == 0


def day_fraction(subtimes, start=8, end=20):
    hours = (subtimes % 86400) / 3600
    return float(((hours >= start) & (hours < end)).mean())


@pytest.fixture(scope="module")
def lublin_big():
    return lublin.generate(jobs=20000, nb_res=256, seed=1)


@pytest.fixture(scope="module")
def batsim_big():
    return batsim_eval.generate(jobs=20000, seed=1)


@pytest.fixture(scope="module")
def grid_big():
    return grid_stream.generate(jobs_per_day=1000, days=30, seed=1)


# ---------------------------------------------------------------- structure, profile sharing

@pytest.mark.parametrize("fixture", ["lublin_big", "batsim_big", "grid_big"])
def test_structure_and_shared_profiles(fixture, request):
    w = request.getfixturevalue(fixture)
    subtimes, sizes, runtimes = columns(w)
    assert [j["id"] for j in w["jobs"]] == list(range(1, len(w["jobs"]) + 1))
    assert np.all(np.diff(subtimes) >= 0)
    assert np.all(subtimes >= 0)
    assert np.all((sizes >= 1) & (sizes <= w["nb_res"]))
    assert np.all(runtimes >= 1)
    for name, profile in w["profiles"].items():
        assert profile == {"type": "delay", "delay": profile["delay"]}
        assert name == f"delay_{profile['delay']}"
    assert len(w["profiles"]) == len(set(runtimes.tolist()))  # one profile per distinct runtime
    for job in w["jobs"]:  # default walltime factor 2 (with 1, every job would be killed at its walltime)
        assert job["walltime"] == 2 * w["profiles"][job["profile"]]["delay"]


# ------------------------------------------------------------------------------- lublin

def test_lublin_serial_fraction(lublin_big):
    _, sizes, _ = columns(lublin_big)
    assert abs((sizes == 1).mean() - lublin.SERIAL_PROB) < 0.015


def pow2_share_of_uniform(a, b):
    """P(round(2**par) is a power of two) for par ~ U(a, b)."""
    if b <= a:
        return 0.0
    total = 0.0
    for k in range(0, 12):
        lo = math.log2(2 ** k - 0.5) if k > 0 else -math.inf
        hi = math.log2(2 ** k + 0.5)
        total += max(0.0, min(hi, b) - max(lo, a))
    return total / (b - a)


def test_lublin_power_of_two_fraction(lublin_big):
    # with nb_res = 256: uhi = 8, umed = 6, ulow = 1.2; the non-power-of-two branch still
    # rounds to a power of two when 2**par lands within 0.5 of one
    q = (lublin.UPROB * pow2_share_of_uniform(1.2, 6.0)
         + (1 - lublin.UPROB) * pow2_share_of_uniform(6.0, 8.0))
    expected = lublin.SERIAL_PROB + lublin.POW2_PROB + (1 - lublin.SERIAL_PROB - lublin.POW2_PROB) * q
    _, sizes, _ = columns(lublin_big)
    assert abs(is_pow2(sizes).mean() - expected) < 0.01
    parallel = sizes[sizes > 1]
    assert abs(is_pow2(parallel).mean() - (expected - lublin.SERIAL_PROB) / (1 - lublin.SERIAL_PROB)) < 0.015
    assert sizes.max() <= 256 and (sizes == 256).any()


def test_lublin_sizes_fit_a_machine_that_is_not_a_power_of_two():
    _, sizes, _ = columns(lublin.generate(jobs=3000, nb_res=100, seed=5))
    assert sizes.max() <= 100
    assert sizes.max() > 50


def test_lublin_runtimes_follow_the_hyper_gamma(lublin_big):
    _, sizes, runtimes = columns(lublin_big)
    assert runtimes.min() >= 1 and runtimes.max() <= math.exp(lublin.TOO_MUCH_TIME)
    p = lublin.PA * 1 + lublin.PB
    expected = p * lublin.A1 * lublin.B1 + (1 - p) * lublin.A2 * lublin.B2  # E[log runtime], serial
    assert abs(np.log(runtimes[sizes == 1]).mean() - expected) < 0.2
    # larger jobs run longer (pa < 0 moves weight to the long gamma)
    big = sizes >= 64
    assert np.log(runtimes[big]).mean() > np.log(runtimes[sizes == 1]).mean()


def test_lublin_daily_cycle(lublin_big):
    subtimes, _, _ = columns(lublin_big)
    weights = lublin.daily_weights()
    expected = weights[16:40].sum() / weights.sum()  # half-hour buckets of 08:00-20:00
    observed = day_fraction(subtimes)
    assert observed > 0.6  # clearly more arrivals in daytime than at night
    assert abs(observed - expected) < 0.03
    hours = ((subtimes % 86400) // 3600).astype(int)
    counts = np.bincount(hours, minlength=24)
    assert counts[10:17].mean() > 2 * counts[1:6].mean()


def test_lublin_daily_weights_shape():
    weights = lublin.daily_weights()
    assert len(weights) == 48 and abs(weights.mean() - 1) < 1e-12
    assert 20 <= int(np.argmax(weights)) <= 32  # peak around midday
    assert weights.min() > 0


# -------------------------------------------------------------------------- batsim-eval

def test_batsim_eval_interarrivals(batsim_big):
    subtimes, _, _ = columns(batsim_big)
    mean_gap = subtimes[-1] / len(subtimes)
    assert abs(mean_gap / (15 * math.gamma(1.5)) - 1) < 0.03


def test_batsim_eval_sizes(batsim_big):
    _, sizes, runtimes = columns(batsim_big)
    assert set(sizes.tolist()) <= {1, 2, 4, 8, 16, 32}

    def cdf(x):  # lognormal(0.25, 0.5)
        return 0.0 if x <= 0 else 0.5 * (1 + math.erf((math.log(x) - 0.25) / (0.5 * math.sqrt(2))))

    mass = [cdf(k + 1) - cdf(k) for k in range(6)]
    for k in range(6):
        expected = mass[k] / sum(mass)
        assert abs((sizes == 2 ** k).mean() - expected) < 0.012, k
    assert runtimes.min() >= 10 and runtimes.max() <= 600
    assert batsim_big["nb_res"] == 32


def test_batsim_eval_rejects_a_small_machine():
    with pytest.raises(GeneratorError):
        batsim_eval.generate(jobs=10, nb_res=16)


# -------------------------------------------------------------------------- grid-stream

def test_grid_stream_widths_and_durations(grid_big):
    _, sizes, runtimes = columns(grid_big)
    assert abs((sizes == 1).mean() - 0.8) < 0.02
    assert sizes.min() >= 1 and sizes.max() <= 10 and set(sizes.tolist()) == set(range(1, 11))
    assert runtimes.min() >= 600 and runtimes.max() <= 7200
    assert abs(runtimes.mean() - 3900) < 60


def test_grid_stream_density_and_day_night(grid_big):
    subtimes, _, _ = columns(grid_big)
    assert abs(len(subtimes) / 30 - 1000) < 30
    assert subtimes.max() < 30 * 86400
    day = day_fraction(subtimes)
    assert abs(day / (1 - day) - 2) < 0.2  # equal 12 h halves: count ratio = rate ratio


def test_grid_stream_job_count_and_flat_stream():
    w = grid_stream.generate(jobs_per_day=2000, jobs=12000, night_weight=1.0, seed=2)
    subtimes, _, _ = columns(w)
    assert len(subtimes) == 12000
    assert abs(subtimes[-1] / 86400 - 6) < 0.3
    day = day_fraction(subtimes)
    assert abs(day / (1 - day) - 1) < 0.1



def test_grid_stream_compute_speed_turns_each_delay_into_a_computation_of_the_same_duration():
    delays = grid_stream.generate(jobs_per_day=800, days=1, nb_res=20, night_weight=1.0, seed=4)
    computing = grid_stream.generate(jobs_per_day=800, days=1, nb_res=20, night_weight=1.0, seed=4,
                                     compute_speed=2e9)
    assert len(computing["jobs"]) == len(delays["jobs"]) > 700
    for plain, job in zip(delays["jobs"], computing["jobs"]):
        seconds = delays["profiles"][plain["profile"]]["delay"]
        assert {k: v for k, v in job.items() if k != "profile"} == {k: v for k, v in plain.items() if k != "profile"}
        assert computing["profiles"][job["profile"]] == {"type": "parallel_homogeneous", "cpu": seconds * 2e9,
                                                         "com": 0.0}
    assert computing["description"]["compute_speed"] == 2e9
    assert "compute_speed" not in delays["description"]  # the default stream's bytes are unchanged


def test_computing_stream_runs_its_jobs_for_their_duration_at_full_power(tmp_path):
    import joulesim

    platform = {"version": 1, "master": {"name": "m", "speed": "1Gf"},
                "clusters": [{"id": "c", "prefix": "n", "count": 10, "speed": "1Gf",
                              "wattage_per_state": [[100.0, 300.0]], "wattage_off": 5.0}]}
    workload = grid_stream.generate(jobs=3, jobs_per_day=10, nb_res=10, seed=1, compute_speed=1e9)
    run = joulesim.simulate(platform, workload, "fcfs", energy=True)
    jobs = run.jobs.sort_values("job_id")
    durations = [workload["profiles"][j["profile"]]["cpu"] / 1e9 for j in workload["jobs"]]
    assert jobs["execution_time"].tolist() == pytest.approx(durations)
    widths = [j["res"] for j in workload["jobs"]]
    assert jobs["consumed_energy"].tolist() == pytest.approx([300.0 * w * d for w, d in zip(widths, durations)])


@pytest.mark.parametrize("speed", [0.0, -1.0])
def test_grid_stream_refuses_a_non_positive_compute_speed(speed):
    with pytest.raises(GeneratorError, match="compute speed"):
        grid_stream.generate(jobs_per_day=10, days=1, compute_speed=speed)


def test_delays_as_computations_refuses_other_profiles():
    from joulesim.workload_tools.synthetic import delays_as_computations

    workload = {"nb_res": 1, "jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "p"}],
                "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0}}}
    with pytest.raises(GeneratorError, match="'p' is not a delay profile"):
        delays_as_computations(workload, 1e9)
    with pytest.raises(GeneratorError, match="host speed"):
        delays_as_computations(workload, float("nan"))

# ---------------------------------------------------------------------- determinism, loading

MODELS = {
    "lublin": lambda seed: lublin.generate(jobs=500, nb_res=64, seed=seed),
    "batsim-eval": lambda seed: batsim_eval.generate(jobs=500, seed=seed),
    "grid-stream": lambda seed: grid_stream.generate(jobs_per_day=500, days=1, seed=seed),
}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_determinism(model):
    make = MODELS[model]
    assert dumps(make(7)) == dumps(make(7))
    assert dumps(make(7)) != dumps(make(8))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_output_loads_in_joulesim(model, tmp_path):
    doc = MODELS[model](3)
    path = tmp_path / "w.json"
    path.write_bytes(dumps(doc))
    loaded = load_workload(str(path), "w0")
    assert loaded.nb_res == doc["nb_res"]
    assert len(loaded.jobs) == len(doc["jobs"])
    assert set(loaded.profiles) == set(doc["profiles"])


# ------------------------------------------------------------------------------ the command

def run(args):
    return CliRunner().invoke(generate_command, args)


@pytest.mark.parametrize("args", [
    ["lublin", "--jobs", "300", "--nb-res", "64"],
    ["batsim-eval", "--jobs", "300", "--runtime-min", "5", "--runtime-max", "50"],
    ["grid-stream", "--days", "1", "--jobs-per-day", "300", "--day-start", "9", "--day-end", "18"],
    ["grid-stream", "--days", "1", "--jobs-per-day", "300", "--night-weight", "1", "--compute-speed", "1e9"],
])
def test_command_writes_identical_bytes_per_seed(args, tmp_path):
    outputs = []
    for index, seed in enumerate(["4", "4", "5"]):
        path = tmp_path / f"w{index}.json"
        result = run(args + ["--seed", seed, "-o", str(path)])
        assert result.exit_code == 0, result.output
        outputs.append(path.read_bytes())
        load_workload(str(path), "w0")
    assert outputs[0] == outputs[1] != outputs[2]


def test_command_walltime_options(tmp_path):
    path = tmp_path / "w.json"
    assert run(["lublin", "--jobs", "50", "--walltime-factor", "3", "-o", str(path)]).exit_code == 0
    doc = load_workload(str(path), "w0")
    for job in doc.jobs:
        assert job.walltime == 3 * doc.profiles[job.profile]["delay"]
    assert run(["lublin", "--jobs", "50", "--no-walltime", "-o", str(path)]).exit_code == 0
    assert all(job.walltime == -1 for job in load_workload(str(path), "w0").jobs)


@pytest.mark.parametrize("args, words", [
    (["lublin", "--days", "2"], "--days does not apply to model 'lublin'"),
    (["batsim-eval", "--jobs-per-day", "9"], "--jobs-per-day does not apply"),
    (["grid-stream", "--runtime-min", "9", "--days", "1"], "--runtime-min does not apply"),
    (["lublin", "--compute-speed", "1e9"], "--compute-speed does not apply"),
    (["grid-stream", "--days", "1", "--compute-speed", "0"], "--compute-speed"),
    (["grid-stream", "--days", "1", "--night-weight", "0"], "--night-weight"),
    (["grid-stream"], "needs --days D or --jobs N"),
    (["grid-stream", "--days", "1", "--jobs", "5"], "not both"),
    (["batsim-eval", "--nb-res", "8"], "must be >= 32"),
    (["lublin", "--jobs", "0"], "--jobs"),
    (["nosuchmodel"], "nosuchmodel"),
    (["lublin", "--no-walltime", "--walltime-factor", "2"], "exclude each other"),
])
def test_command_errors(args, words, tmp_path):
    result = run(args + ["-o", str(tmp_path / "w.json")])
    assert result.exit_code != 0
    assert result.output.startswith("joulesim: error: ")
    assert words in result.output
    assert not (tmp_path / "w.json").exists()



# int(), float() and click's ranges took '١٢', '1_0', 'nan' (it passes every range check); a
# negative seed or a huge --jobs / --days ended in a numpy traceback (issue 23).
@pytest.mark.parametrize("args, words", [
    (["lublin", "--seed", "-1"], "'--seed': '-1' is not in the range [0, inf]"),
    (["lublin", "--seed", "١٢"], "'--seed': '١٢' is not an integer of ASCII digits"),
    (["lublin", "--jobs", "1_0"], "'--jobs': '1_0' is not an integer of ASCII digits"),
    (["lublin", "--jobs", "999999999999"], "'--jobs': '999999999999' is not in the range [1, 10,000,000]"),
    (["lublin", "--walltime-factor", "nan"], "'--walltime-factor': 'nan' is not an ASCII decimal number"),
    (["lublin", "--walltime-factor", "inf"], "'--walltime-factor': 'inf' is not an ASCII decimal number"),
    (["grid-stream", "--days", "1e400"], "'--days': '1e400' is beyond the largest number a double holds"),
    (["grid-stream", "--days", "1e300"], "asks for about 1e+303 jobs, more than joulesim's limit of 10,000,000"),
    (["grid-stream", "--days", "1", "--day-start", "２"], "'--day-start': '２' is not an ASCII decimal number"),
])
def test_command_numbers_are_ascii_decimals_within_bounds(args, words, tmp_path):
    result = run(args + ["-o", str(tmp_path / "w.json")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("joulesim: error: ") and words in result.output, result.output
    assert not (tmp_path / "w.json").exists()