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
import struct
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.utils import z85

from joulesim.protocol.errors import JoulesimError

_FILES = ("decider.key", "decider.key_secret", "simulator.key", "simulator.key_secret")
_MAX_CERTIFICATE_BYTES = 64 * 1024


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
    try:  # a name too long or a path through a file is an OSError here already
        existing = [name for name in _FILES if (target / name).exists()]
    except OSError as exc:
        raise CurveKeysError(f"{target}: cannot write keys: {exc.strerror or exc}") from None
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
    """The keys of a directory written by generate_keys, or CurveKeysError naming the file
    that is missing or malformed (checked here: libzmq would refuse a bad key only when a
    socket is made, with a bare "Invalid argument")."""
    require_curve()
    target = Path(directory)
    if not target.is_dir():
        raise CurveKeysError(f"{target}: not a joulesim keys directory (not a directory); create one with "
                             "`joulesim keys generate DIR`")
    decider_public, decider_secret = _key_pair(target, "decider.key_secret")
    simulator_public, simulator_secret = _key_pair(target, "simulator.key_secret")
    authorized = target / "authorized"
    if not (authorized / "simulator.key").is_file():
        raise CurveKeysError(f"{target}: authorized/simulator.key is missing; {_regenerate(target)}")
    for path in sorted(authorized.glob("*.key")):  # the decider's authenticator reads them all
        _public_key(target, path.relative_to(target))
    return CurveKeys(target, decider_public, decider_secret, simulator_public, simulator_secret)


def _regenerate(target: Path) -> str:
    return f"regenerate the keys with `joulesim keys generate {target} --force` and give both sides the new directory"


def _is_z85_key(text: bytes | None) -> bool:
    """True for 40 characters of Z85 text that decode to a 32-byte CURVE key."""
    try:
        return text is not None and len(text) == 40 and len(z85.decode(text)) == 32
    except (KeyError, ValueError, struct.error):  # a character outside Z85, or a block beyond 2^32
        return False


def _read_certificate(target: Path, name: Path | str) -> tuple[bytes, bytes | None]:
    path = target / name
    try:
        # A certificate is a few hundred bytes: a device or a huge file is not one (and
        # /dev/zero would be read forever).
        if not path.is_file() or path.stat().st_size > _MAX_CERTIFICATE_BYTES:
            raise ValueError("not a regular file of at most 64 KiB")
        return zmq.auth.load_certificate(str(path))
    except (OSError, ValueError) as exc:
        problem = "is missing" if not path.exists() else f"is not a ZeroMQ certificate ({exc})"
        raise CurveKeysError(f"{path}: {problem}; {_regenerate(target)}") from None


def _public_key(target: Path, name: Path | str) -> bytes:
    """The public key of a certificate file, checked to be a CURVE key."""
    public, _ = _read_certificate(target, name)
    if not _is_z85_key(public):
        raise CurveKeysError(f"{target / name}: its public-key is not a CURVE key (40 characters of Z85 text): "
                             f"the file is damaged or truncated; {_regenerate(target)}")
    return public


def _key_pair(target: Path, name: str) -> tuple[bytes, bytes]:
    """The (public, secret) keys of a secret certificate, checked to belong together."""
    public = _public_key(target, name)
    _, secret = _read_certificate(target, name)
    if secret is None:
        problem = "has no secret-key"
    elif not _is_z85_key(secret):
        problem = "its secret-key is not a CURVE key (40 characters of Z85 text)"
    elif zmq.curve_public(secret) != public:
        problem = "its secret-key does not belong to its public-key"
    else:
        return public, secret
    raise CurveKeysError(f"{target / name}: {problem}: the file is damaged or truncated; {_regenerate(target)}")
