"""ZeroMQ CURVE keys for simulator <-> decider links that must cross machines.

A keys directory holds two certificate pairs written by `joulesim keys generate DIR`
(pyzmq's certificate format, z85 text): `decider.key`/`decider.key_secret` (the CURVE server)
and `simulator.key`/`simulator.key_secret` (the client), plus `authorized/simulator.key`, the
only public key the decider accepts. Both sides are given the same directory. Secret files
are readable by their owner only.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth

from joulesim.protocol.errors import JoulesimError

_FILES = ("decider.key", "decider.key_secret", "simulator.key", "simulator.key_secret")


class CurveKeysError(JoulesimError):
    exit_code = 2


@dataclass(frozen=True)
class CurveKeys:
    directory: Path
    decider_public: bytes
    decider_secret: bytes
    simulator_public: bytes
    simulator_secret: bytes

    @property
    def authorized(self) -> Path:
        return self.directory / "authorized"


def require_curve() -> None:
    if not zmq.has("curve"):
        raise CurveKeysError("this libzmq was built without CURVE security, which --curve-keys needs; "
                             "install pyzmq's wheels (they include libsodium) or run on loopback/ipc:// only")


def generate_keys(directory: str, force: bool = False) -> Path:
    """Write both key pairs into `directory` (created 0700); refuses to overwrite unless forced."""
    require_curve()
    target = Path(directory)
    existing = [name for name in _FILES if (target / name).exists()]
    if existing and not force:
        raise CurveKeysError(f"{target}: keys already exist ({', '.join(existing)}); use --force to replace "
                             "them (both sides then need the new directory)")
    try:
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(target, 0o700)
        for role in ("decider", "simulator"):
            zmq.auth.create_certificates(str(target), role)
            os.chmod(target / f"{role}.key_secret", 0o600)
        authorized = target / "authorized"
        if authorized.exists():
            shutil.rmtree(authorized)
        authorized.mkdir(mode=0o700)
        shutil.copyfile(target / "simulator.key", authorized / "simulator.key")
    except OSError as exc:
        raise CurveKeysError(f"{target}: cannot write keys: {exc.strerror or exc}") from None
    return target


def load_keys(directory: str) -> CurveKeys:
    """The keys of a directory written by generate_keys, or CurveKeysError naming what is missing."""
    require_curve()
    target = Path(directory)
    try:
        decider_public, decider_secret = zmq.auth.load_certificate(str(target / "decider.key_secret"))
        simulator_public, simulator_secret = zmq.auth.load_certificate(str(target / "simulator.key_secret"))
    except (OSError, ValueError) as exc:
        raise CurveKeysError(f"{target}: not a joulesim keys directory ({exc}); create one with "
                             "`joulesim keys generate DIR`") from None
    if not (target / "authorized" / "simulator.key").is_file():
        raise CurveKeysError(f"{target}: authorized/simulator.key is missing; regenerate with "
                             "`joulesim keys generate DIR --force`")
    return CurveKeys(target, decider_public, decider_secret, simulator_public, simulator_secret)
