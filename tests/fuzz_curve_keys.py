"""Fuzzing CURVE keys directories (`--curve-keys DIR`, written by `joulesim keys generate`):
a damaged copy of a generated directory is loaded and applied to both ends of a ZeroMQ link
in this process, or given to `joulesim run` (simulator and decider processes on ipc://)."""

from __future__ import annotations

import os
import random
import shutil

from hostile_mutations import ALWAYS_INVALID, MAYBE_VALID
from surface_fuzzer import in_process, new_result, through_cli

# The files joulesim reads (a secret file holds both keys of its pair; the public files beside
# them are for copying to the other machine and are not read).
_FILES = ["decider.key_secret", "simulator.key_secret", os.path.join("authorized", "simulator.key")]


def generated_keys(directory: str) -> str:
    """A keys directory written once per worker process."""
    target = os.path.join(directory, f"keys_{os.getpid()}")
    if not os.path.exists(target):
        from joulesim.protocol.curve_keys import generate_keys

        generate_keys(target + ".tmp")
        os.replace(target + ".tmp", target)
    return target


def _damage(keys: str, rng: random.Random) -> tuple[str, str]:
    name = rng.choice(_FILES)
    path = os.path.join(keys, name)
    raw = open(path, "rb").read()
    change = rng.choice(["truncate", "delete", "directory", "empty", "junk", "bad_z85", "flip"])
    if change == "delete":
        os.unlink(path)
    elif change == "directory":
        os.unlink(path)
        os.mkdir(path)
    elif change == "flip":  # a changed byte: the pair may no longer match (refused then)
        data = bytearray(raw)
        data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
        open(path, "wb").write(bytes(data))
    else:
        if change == "truncate":
            at = raw.index(b'key = "') + 7 + rng.randrange(1, 39) if b'key = "' in raw else rng.randrange(len(raw))
            data = raw[:at] + (b'"\n' if rng.random() < 0.5 else b"")
        elif change == "empty":
            data = b""
        elif change == "junk":
            data = rng.choice([os.urandom(64), b"\xff\xfe" * 30, b"metadata\n" * 1000, b"curve\n    key = 1\n"])
        else:  # 40 characters, one outside Z85's alphabet
            start = raw.index(b'key = "') + 7
            data = raw[:start + 5] + rng.choice([b'"', b"\\", b"~", b"\xc3\xa9"[:1], b" "]) + raw[start + 6:]
        open(path, "wb").write(data)
    return f"{change}:{name}", ALWAYS_INVALID if change != "flip" else MAYBE_VALID


def _link(keys_dir: str, endpoint: str) -> None:
    """Load the keys and put them on both ends of a link (no message: a mismatch only shows
    as silence, which the command's --timeout covers)."""
    from joulesim.protocol.curve_keys import load_keys
    from joulesim.protocol.transport_zmq import ZmqReplier, ZmqRequester

    keys = load_keys(keys_dir)
    replier = ZmqReplier(endpoint, keys)
    try:
        requester = ZmqRequester(endpoint, 1.0, curve=keys)
        requester.close()
    finally:
        replier.close()


def run_case(seed: int, directory: str):
    rng = random.Random(seed)
    keys = os.path.join(directory, f"keys{seed}")
    shutil.copytree(generated_keys(directory), keys)
    operator, label = _damage(keys, rng)
    via_cli = rng.random() < 0.25
    result = new_result(seed, operator, label, via_cli)
    result.mutated = operator.encode()
    try:
        if via_cli:
            # A flipped key that still loads leaves the link silent: the decider reply timeout (5).
            exits = (2, 5) if label == MAYBE_VALID else (2,)
            return through_cli(result, ["run", "-p", "small4", "-w", "tiny", "-d", "fcfs", "--curve-keys", keys,
                                        "--timeout", "5", "-e", os.path.join(directory, f"curve{seed}", "out")],
                               directory, exits=exits)
        return in_process(result, lambda: _link(keys, f"ipc://{directory}/curve{seed}.sock"))
    finally:
        shutil.rmtree(keys, ignore_errors=True)
