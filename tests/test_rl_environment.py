"""The Gymnasium environment of seed 002's Energy scheduler (joulesim.rl.environment)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")
pytest.importorskip("greenlet", reason="the rl extra is not installed (pip install '.[rl]' in the checkout)")

import joulesim  # noqa: E402
from joulesim.protocol.errors import JoulesimError  # noqa: E402
from joulesim.rl.environment import NodeSchedulingEnv  # noqa: E402

GRID = Path(__file__).resolve().parents[1] / "experiments" / "irmasim_grid"
EXP1 = (str(GRID / "exp1" / "platform.json"), str(GRID / "exp1" / "workload.json"))
EXP2 = (str(GRID / "exp2" / "platform.json"), str(GRID / "exp2" / "workload.json"))


def run_episode(env: NodeSchedulingEnv, policy, seed: int | None = 0):
    """(observations, actions, rewards, infos) of one episode under `policy(obs) -> action`."""
    obs, info = env.reset(seed=seed)
    observations, actions, rewards, infos = [obs], [], [], [info]
    while True:
        action = policy(obs)
        obs, reward, terminated, truncated, info = env.step(action)
        actions.append(action)
        rewards.append(reward)
        infos.append(info)
        observations.append(obs)
        if terminated or truncated:
            return observations, actions, rewards, infos


def first_valid(obs) -> int:
    return int(np.flatnonzero(obs["mask"])[0])


@pytest.mark.parametrize("wait", [False, True])
def test_passes_the_gymnasium_env_checker(wait):
    from gymnasium.utils.env_checker import check_env

    check_env(NodeSchedulingEnv(*EXP2, wait_action=wait), skip_render_check=True)


def test_first_valid_pair_reproduces_the_heuristic_and_rewards_sum_to_minus_the_energy():
    # With as many actions per instant as fit, taking the first valid pair is IRMaSim's
    # first/first heuristic on experiment 2: the same schedule, hence the same energy
    # (32,925.33 J); the rewards add up to minus that energy.
    env = NodeSchedulingEnv(*EXP2, per_step="all")
    _, actions, rewards, infos = run_episode(env, first_valid)
    heuristic = joulesim.simulate(EXP2[0], EXP2[1], "heuristic", energy=True,
                                  options={"job_selection": "first", "resource_selection": "first"})
    assert len(actions) == 18
    assert infos[-1]["energy"] == pytest.approx(float(heuristic.schedule["consumed_joules"]), abs=1e-6)
    assert infos[-1]["makespan"] == pytest.approx(float(heuristic.schedule["makespan"]), abs=1e-6)
    assert math.fsum(rewards) == pytest.approx(-infos[-1]["energy"], rel=1e-12)
    assert infos[-1]["edp"] == pytest.approx(infos[-1]["energy"] * infos[-1]["makespan"])


def test_one_action_per_time_step_as_the_thesis():
    # IRMaSim asks its energy scheduler once per simulator step: jobs that fit now may wait for
    # the next event. With per_step=all, the first-valid policy starts jobs back to back.
    times = {}
    for per_step in ("one", "all"):
        _, actions, rewards, infos = run_episode(NodeSchedulingEnv(*EXP2, per_step=per_step), first_valid)
        decided_at = [info["time"] for info in infos[:-1]]
        times[per_step] = decided_at
        assert len(actions) == 18
        assert math.fsum(rewards) == pytest.approx(-infos[-1]["energy"], rel=1e-12)
    assert len(set(times["one"])) == 18  # every decision at its own instant
    assert len(set(times["all"])) < 18


def test_edp_rewards_are_energy_increments_times_time_increments():
    energy_env, edp_env = NodeSchedulingEnv(*EXP2), NodeSchedulingEnv(*EXP2, objective="edp")
    _, _, energy_rewards, infos = run_episode(energy_env, first_valid)
    _, _, edp_rewards, _ = run_episode(edp_env, first_valid)
    times = [info["time"] for info in infos]
    for k, (e, d) in enumerate(zip(energy_rewards, edp_rewards)):
        assert d == pytest.approx(e * (times[k + 1] - times[k]), rel=1e-12, abs=1e-9)
    assert any(d != 0 for d in edp_rewards)


def test_observation_at_t0_is_table_3_1_normalised():
    # Experiment 1 at t=0: job J0 (4 cores, req_time 5.5 s) and two idle 2.5 GHz nodes of 4 and
    # 8 cores (static 24.38 W, dynamic 2.3 W per core, min power 5%). Features of each pair:
    # wait 0, req_time 5.5, submit 0, cores 4, availability 1, clock 2.5, idle power
    # 0.05 x 24.38, dynamic 0, estimate 5.5 x (24.38 / 1 + 4 x 2.3); the matrix over its norm.
    # "matrix" (the thesis) divides the matrix by its Frobenius norm, "columns" each feature by
    # its largest value (the zero features stay zero).
    row = np.array([0, 5.5, 0, 4, 1, 2.5, 0.05 * 24.38, 0, 5.5 * (24.38 + 4 * 2.3)])
    for normalisation, expected in (("matrix", row / math.sqrt(2 * row @ row)), ("columns", (row > 0) * 1.0)):
        env = NodeSchedulingEnv(*EXP1, normalisation=normalisation)
        obs, _ = env.reset(seed=0)
        assert obs["features"].shape == (6 * 2, 9)
        np.testing.assert_allclose(obs["features"][0], expected, rtol=1e-6)
        np.testing.assert_allclose(obs["features"][1], expected, rtol=1e-6)
        assert not obs["features"][2:].any()
    assert obs["mask"].tolist() == [1, 1] + [0] * 10
    assert env.action_masks().tolist() == [True, True] + [False] * 10


@pytest.mark.parametrize("normalisation", ["columns", "matrix"])
def test_every_observation_is_normalised_and_masks_exactly_the_pairs_that_fit(normalisation):
    env = NodeSchedulingEnv(*EXP2, wait_action=True, normalisation=normalisation)
    rng = np.random.default_rng(3)
    obs, _ = env.reset(seed=0)
    sizes = [8, 16, 32, 48]
    for _ in range(200):
        features, mask = obs["features"], obs["mask"]
        assert features.dtype == np.float32 and features.min() >= 0 and features.max() <= 1
        assert mask[-1] == 1 and not features[-1].any()  # the wait row
        pairs = mask[:-1].reshape(18, 4)
        if pairs.any() and normalisation == "matrix":
            assert float(np.linalg.norm(features.astype(np.float64))) == pytest.approx(1.0, rel=1e-5)
        elif pairs.any():  # every feature that is not zero everywhere peaks at exactly 1
            peaks = features.max(axis=0)
            assert set(peaks.tolist()) <= {0.0, 1.0} and peaks[4] == 1.0  # availability > 0 where a job fits
        # A pair is valid exactly when its node has the job's cores idle: the cores requested
        # (feature 3, scaled) are equal along a job's row, and the idle cores are availability x size.
        bridge = env._bridge
        jobs = list(bridge.pending.values())[:18]
        for j in range(18):
            for n in range(4):
                fits = j < len(jobs) and jobs[j].ntasks <= bridge.platform.idle[n]
                assert bool(pairs[j, n]) == fits
                assert bool(features[j * 4 + n].any()) == fits
        assert all(bridge.platform.idle[n] <= sizes[n] for n in range(4))
        valid = np.flatnonzero(mask)
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(valid)))
        if terminated or truncated:
            obs, _ = env.reset()


def test_an_invalid_action_is_not_applied_and_can_be_made_an_error():
    env = NodeSchedulingEnv(*EXP1)
    obs, _ = env.reset(seed=0)
    invalid = int(np.flatnonzero(obs["mask"] == 0)[0])
    again, reward, terminated, truncated, info = env.step(invalid)
    assert info["invalid_action"] and reward == 0 and not terminated and not truncated
    np.testing.assert_array_equal(again["features"], obs["features"])
    with pytest.raises(JoulesimError, match=r"action 2 \(job queue position 1 \(the queue holds 1 job\(s\)\) "
                                            r"on node .*\) is not valid at t=0"):
        strict_env().step(2)
    with pytest.raises(JoulesimError, match=r"action 99 is not an integer in \[0, 12\)"):
        strict_env().step(99)


def strict_env() -> NodeSchedulingEnv:
    env = NodeSchedulingEnv(*EXP1, invalid_action="raise")
    env.reset(seed=0)
    return env


def test_waiting_moves_to_the_next_event_or_one_second_later():
    env = NodeSchedulingEnv(*EXP1, wait_action=True)
    obs, info = env.reset(seed=0)
    wait = env.n_actions - 1
    assert info["time"] == 0
    obs, reward, _, _, info = env.step(wait)  # J1 arrives at 0.05 s, before the timer
    assert info["time"] == pytest.approx(0.05)
    assert reward == 0  # nothing runs yet: no energy
    for _ in range(4):  # until the last arrival (0.25 s); nothing runs
        obs, _, _, _, info = env.step(wait)
    assert info["time"] == pytest.approx(0.25)
    obs, _, _, _, info = env.step(wait)  # no event left: the timer, one second later
    assert info["time"] == pytest.approx(1.25)
    assert env._bridge.platform.runs == {}
    # A decision cancels the timer: after a start, the next decision comes at the next event
    # (J0's end, 5.5 s later at most), not at the timer (2.25 s).
    obs, _, _, _, info = env.step(first_valid(obs))
    assert info["time"] != pytest.approx(2.25) and info["time"] > 1.25


def test_waiting_is_offered_max_waits_times_then_the_episode_ends():
    # Before any processor starts, waiting costs nothing: a policy that always waits would
    # never end its episode. After max_waits waits, the wait action is masked.
    env = NodeSchedulingEnv(*EXP1, wait_action=True, max_waits=5)
    wait = env.n_actions - 1
    observations, actions, _, infos = run_episode(env, lambda obs: wait if obs["mask"][wait] else first_valid(obs))
    assert actions.count(wait) == 5
    assert all(obs["mask"][wait] == 0 for obs in observations[5:])
    assert "energy" in infos[-1] and infos[-1]["energy"] > 0  # terminated: every job ran


def test_a_policy_stuck_on_invalid_actions_is_truncated():
    env = NodeSchedulingEnv(*EXP1, max_steps=7)
    _, actions, _, infos = run_episode(env, lambda obs: int(np.flatnonzero(obs["mask"] == 0)[0]))
    assert len(actions) == 7 and all(info.get("invalid_action") for info in infos[1:])
    env.reset(seed=1)  # the truncated episode's simulation is cleaned up; a new one starts
    assert env._bridge.now == 0


def test_random_trajectories_are_windows_of_the_workload_shifted_to_t0():
    env = NodeSchedulingEnv(*EXP2, trajectory_length=6, trajectory_origin="random", num_jobs=6)
    origins = set()
    for seed in range(12):
        env.reset(seed=seed)
        trajectory = env.sampler.sample(np.random.default_rng(seed))
        origins.add(trajectory.jobs[0].local_id)
        assert trajectory.jobs[0].subtime == 0
        assert [j.local_id for j in trajectory.jobs] == [f"J{int(trajectory.jobs[0].local_id[1:]) + k}" for k in range(6)]
    assert len(origins) > 3
    first = [run_episode(env, first_valid, seed=7)[3][-1]["energy"] for _ in range(2)]
    assert first[0] == first[1]  # the same seed, the same trajectory and outcome


def test_bad_inputs_are_clear_errors(tmp_path):
    with pytest.raises(JoulesimError, match=r"18 jobs, fewer than the trajectory length 40"):
        NodeSchedulingEnv(*EXP2, trajectory_length=40)
    with pytest.raises(JoulesimError, match="objective 'power'"):
        NodeSchedulingEnv(*EXP2, objective="power")
    with pytest.raises(JoulesimError, match="no node hierarchy"):
        NodeSchedulingEnv("cluster32", EXP2[1])
    with pytest.raises(JoulesimError, match="features"):
        NodeSchedulingEnv(*EXP2, features=["wait_time", "colour"])
    with pytest.raises(JoulesimError, match="origin 20"):
        NodeSchedulingEnv(*EXP2, trajectory_length=6, trajectory_origin=20)
    env = NodeSchedulingEnv(*EXP1)
    with pytest.raises(JoulesimError, match="call reset"):
        env.step(0)


@pytest.mark.parametrize("normalisation", ["columns", "matrix"])
def test_the_compiled_observation_equals_the_numpy_one(normalisation):
    # pair_features_kernel (numba) fills the matrix in one pass; the numpy passes serve without
    # numba. Both must give the same bits, on every step of random episodes.
    env = NodeSchedulingEnv(*EXP2, wait_action=True, per_step="all", normalisation=normalisation)
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=0)
    compared = 0
    for _ in range(300):
        bridge = env._bridge
        observation = bridge.observation
        count = min(len(bridge.pending), observation.num_jobs)
        if observation.compiled is False:
            pytest.skip("numba is not installed: only the numpy path exists")
        built = []
        for compiled in (True, False):
            observation.compiled = compiled
            built.append(observation.build(bridge.now, bridge._rows[:count], True))
        observation.compiled = True
        np.testing.assert_array_equal(built[0][0], built[1][0])
        np.testing.assert_array_equal(built[0][1], built[1][1])
        compared += int(built[0][1][:-1].any())
        valid = np.flatnonzero(obs["mask"])
        obs, _, terminated, truncated, _ = env.step(int(valid[rng.integers(len(valid))]))
        if terminated or truncated:
            obs, _ = env.reset()
    assert compared > 100
