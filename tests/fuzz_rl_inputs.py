"""Fuzzing `joulesim rl` inputs: training configurations (TOML, checked by
`load_training_config`; through `joulesim rl train`) and model files (read by `load_agent`
expecting what the model was trained for; through `joulesim rl evaluate`). The model every
case starts from is trained once per worker on seed 002's experiment 2 (one simulation)."""

from __future__ import annotations

import os
import random
import zipfile

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID, random_byte_mutation, random_text_mutation
from surface_fuzzer import in_process, new_result, replace_once, through_cli

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLATFORM = os.path.join(REPO, "experiments", "irmasim_grid", "exp2", "platform.json")
WORKLOAD = os.path.join(REPO, "experiments", "irmasim_grid", "exp2", "workload.json")
BASE_CONFIG = f"""\
[environment]
platform = "{PLATFORM}"
workload = "{WORKLOAD}"
objective = "energy"
num_jobs = 4
trajectory_length = 6
trajectory_origin = 0
wait_action = false

[training]
simulations = 1
trajectories = 1
seed = 1
threads = 1

[ppo]
gamma = 0.99
clip = 0.1
minibatch_size = 8
epochs = 1
"""

_CONFIG_TARGETED = {
    "huge_threads": ("threads = 1", lambda r: f"threads = {r.choice([10**9, 2**62, 100000])}"),
    "bad_simulations": ("simulations = 1", lambda r: "simulations = " + r.choice(["0", "-1", "1.5", '"1"', "inf"])),
    "bad_gamma": ("gamma = 0.99", lambda r: "gamma = " + r.choice(["2", "nan", "inf", "-0.1", '"0.99"', "true"])),
    "bad_clip": ("clip = 0.1", lambda r: "clip = " + r.choice(["0", "-1", "1.5", "nan"])),
    "bad_objective": ('objective = "energy"', lambda r: "objective = " + r.choice(['"power"', '""', "1", '"Energy"'])),
    "unknown_key": ("[training]\n", lambda r: "[training]\n" + r.choice(["simulation = 3", "lr = 1", "Seed = 1"]) + "\n"),
    "unknown_table": ("[ppo]\n", lambda r: r.choice(["[PPO]\n", "[training.x]\na = 1\n[ppo]\n", "[[ppo]]\n"])),
    "bad_features": ("wait_action = false", lambda r: "wait_action = false\nfeatures = " + r.choice(
        ['["nope"]', "[]", '["wait_time", "wait_time"]', '"wait_time"'])),
    "bad_origin": ("trajectory_origin = 0", lambda r: "trajectory_origin = " + r.choice(["-1", '"first"', "1.5"])),
    "missing_file": (f'platform = "{PLATFORM}"', lambda r: 'platform = "' + r.choice(["nowhere.json", "", "/", "."]) + '"'),
    "deep_nesting": ("seed = 1", lambda r: "seed = " + "[" * r.choice([1000, 100_000]) + "]" * 1000),
    "huge_seed": ("seed = 1", lambda r: "seed = " + r.choice(["9223372036854775808", "18446744073709551616", "-1"])),
}


# ------------------------------------------------------------------------- the trained model
def trained_model(directory: str) -> str:
    """model.pt of a one-simulation training, made once per worker process."""
    folder = os.path.join(directory, f"rl_model_{os.getpid()}")
    model = os.path.join(folder, "model.pt")
    if not os.path.exists(model):
        from joulesim.rl.training import train
        from joulesim.rl.training_config import load_training_config

        config = os.path.join(directory, f"rl_base_{os.getpid()}.toml")
        with open(config, "w") as handle:
            handle.write(BASE_CONFIG)
        train(load_training_config(config), folder, progress=False)
    return model


def _corrupt_member_data(raw: bytes, path: str, rng: random.Random) -> bytes | None:
    """64 bytes inside one stored member's data (never in zip padding): certainly damage."""
    with zipfile.ZipFile(path) as archive:
        members = [i for i in archive.infolist() if i.compress_size >= 64]
    if not members:
        return None
    info = rng.choice(members)
    name_length = int.from_bytes(raw[info.header_offset + 26: info.header_offset + 28], "little")
    extra_length = int.from_bytes(raw[info.header_offset + 28: info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_length + extra_length
    at = start + rng.randrange(info.compress_size - 63)
    data = bytearray(raw)
    for i in range(at, at + 64):
        data[i] ^= rng.randrange(1, 256)
    return bytes(data)


def _payload_change(path: str, rng: random.Random) -> tuple[str, bytes]:
    import io

    import torch

    payload = torch.load(path, weights_only=True)
    change = rng.choice(["format", "drop_key", "metadata", "weights_shape", "code"])
    if change == "format":
        payload["format"] = rng.choice(["joulesim-rl-0", "", 1, None])
    elif change == "drop_key":
        del payload[rng.choice(["metadata", "n_actions", "actor", "critic", "settings"])]
    elif change == "metadata":
        payload["metadata"]["num_nodes"] = rng.choice([3, 5, -1, "4", None])
    elif change == "weights_shape":
        actor = payload["actor"]
        key = rng.choice(sorted(actor))
        actor[key] = torch.zeros(3, 3)
    else:
        payload = {"format": "joulesim-rl-1", "metadata": _Code()}
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return change, buffer.getvalue()


class _Code:
    def __reduce__(self):
        return (os.system, ("echo PICKLED CODE RAN",))


def _model_case(seed: int, rng: random.Random, directory: str, via_cli: bool):
    base = trained_model(directory)
    raw = open(base, "rb").read()
    choice = rng.random()
    if choice < 0.25:
        operator, label, mutated = "corrupt_64_bytes", ALWAYS_INVALID, _corrupt_member_data(raw, base, rng)
    elif choice < 0.4:
        operator, label, mutated = "truncated", ALWAYS_INVALID, raw[: rng.randrange(len(raw))]
    elif choice < 0.7:
        change, mutated = _payload_change(base, rng)
        operator, label = f"payload_{change}", ALWAYS_INVALID
    elif choice < 0.8:
        operator, label = "not_a_model", ALWAYS_INVALID
        mutated = rng.choice([b"", b"PK\x03\x04", os.urandom(200), b"\x80\x04N.", b"{}"])
    else:
        operator, label, mutated = "random_bytes", MAYBE_VALID, random_byte_mutation(raw, rng)
    result = new_result(seed, f"model:{operator}", label, via_cli)
    if mutated is None:  # no member large enough to damage: the case is not applicable
        mutated, result.label = raw, MAYBE_VALID
    path = os.path.join(directory, f"model{seed}.pt")
    with open(path, "wb") as handle:
        handle.write(mutated)  # b"" too: an empty model file
    result.mutated = f"{len(mutated)} bytes".encode()
    try:
        if via_cli:
            return through_cli(result, ["rl", "evaluate", path, "-p", PLATFORM, "-w", WORKLOAD, "--runs", "1"],
                               directory)
        from joulesim.rl.model_file import load_agent

        import torch

        expect = torch.load(base, weights_only=True)["metadata"]
        expect = {k: expect[k] for k in ("num_nodes", "num_jobs", "n_actions") if k in expect}
        return in_process(result, lambda: load_agent(path, expect=expect))
    finally:
        os.unlink(path)


def _config_case(seed: int, rng: random.Random, directory: str, via_cli: bool):
    if rng.random() < 0.7:
        operator = rng.choice(sorted(_CONFIG_TARGETED))
        old, new = _CONFIG_TARGETED[operator]
        label, text = ALWAYS_INVALID, replace_once(BASE_CONFIG, old, new(rng))
    else:
        operator, label, text = "random", MAYBE_VALID, random_text_mutation(BASE_CONFIG, rng)
    result = new_result(seed, f"config:{operator}", label, via_cli)
    result.mutated = text[:300].encode("utf-8", "replace")
    path = os.path.join(directory, f"train{seed}.toml")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
    try:
        if via_cli:
            return through_cli(result, ["rl", "train", path, "-o", os.path.join(directory, f"train{seed}")],
                               directory)
        from joulesim.rl.training_config import load_training_config

        return in_process(result, lambda: load_training_config(path))
    finally:
        os.unlink(path)


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    kind = rng.choice(["config", "model"])
    via_cli = rng.random() < 0.12
    return (_config_case if kind == "config" else _model_case)(seed, rng, directory, via_cli)
