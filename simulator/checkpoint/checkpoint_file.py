"""The checkpoint file: a first line that says what it is, a JSON header, then compressed
sections, the whole checked by a SHA-256 written in the header.

    JOULESIM CHECKPOINT
    {"format": 1, "sha256": "...", "sections": {"state": 1234, "messages": 567}, ...}
    <the sections' bytes, one after the other, each zlib-compressed>

A file is written beside its final place and renamed over it once complete (a folder or a
device at its path refused, never renamed over), so a run killed while writing leaves the
previous checkpoint whole. Reading refuses, with one line naming the
cause: a file that is not a checkpoint, one written by a newer format, one damaged or cut short
(the checksum), and a header that does not say what it should.
"""

from __future__ import annotations

import hashlib
import os
import stat
import zlib
from typing import Any

import orjson

from joulesim.inputs.output_file import write_whole
from joulesim.protocol.errors import JoulesimError

MAGIC = b"JOULESIM CHECKPOINT\n"
FORMAT = 1
_MAX_HEADER = 1 << 20


class CheckpointError(JoulesimError):
    """A checkpoint that cannot be written or read: the message is one line naming the cause
    (exit status 2: refused before any output is written)."""

    exit_code = 2


def write_checkpoint(path: str, header: dict[str, Any], sections: dict[str, bytes],
                     compressed: dict[str, bytes] | None = None) -> int:
    """Write `sections` (compressed here) and `compressed` (zlib streams already) under `header`
    (JSON-able), whole (inputs.output_file.write_whole); returns the file's size."""
    packed = {name: zlib.compress(data, 1) for name, data in sections.items()}
    packed.update(compressed or {})
    digest = hashlib.sha256()
    for data in packed.values():
        digest.update(data)
    head = orjson.dumps({**header, "format": FORMAT, "sha256": digest.hexdigest(),
                         "sections": {name: len(data) for name, data in packed.items()}})

    def write(temporary: str) -> None:
        with open(temporary, "wb") as handle:
            handle.write(MAGIC)
            handle.write(head + b"\n")
            for data in packed.values():
                handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())  # (whole on disk before it replaces the previous one)

    write_whole(path, "checkpoint", write, "give a checkpoint path in a folder you can write to (-e)")
    return len(MAGIC) + len(head) + 1 + sum(len(data) for data in packed.values())


def read_checkpoint(path: str) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The header and the sections (decompressed) of the checkpoint at `path`."""
    _refuse_special(path)
    try:
        with open(path, "rb") as handle:
            magic = handle.read(len(MAGIC))
            if magic != MAGIC:
                raise CheckpointError(f"{path} is not a joulesim checkpoint (it does not begin with "
                                      f"{MAGIC.decode().strip()!r})")
            line = handle.readline(_MAX_HEADER)
            body = handle.read()
    except OSError as exc:
        raise CheckpointError(f"cannot read the checkpoint {path}: {exc.strerror or exc}") from None
    try:
        header = orjson.loads(line)
    except orjson.JSONDecodeError:
        raise CheckpointError(f"{path}: its header is damaged (not JSON): the file is not a complete checkpoint") from None
    if type(header) is not dict or type(header.get("format")) is not int:
        raise CheckpointError(f"{path}: its header does not give a format: the file is not a joulesim checkpoint")
    if header["format"] > FORMAT:
        raise CheckpointError(f"{path} was written by a newer joulesim (checkpoint format {header['format']}; this one "
                              f"reads format {FORMAT}): resume it with that version")
    sizes = header.get("sections")
    if type(sizes) is not dict or not all(type(size) is int and size >= 0 for size in sizes.values()):
        raise CheckpointError(f"{path}: its header does not list its sections: the file is damaged")
    if sum(sizes.values()) != len(body) or hashlib.sha256(body).hexdigest() != header.get("sha256"):
        raise CheckpointError(f"{path} is damaged or cut short (its checksum does not match its content): resume from "
                              "another checkpoint, or run again")
    sections, start = {}, 0
    for name, size in sizes.items():
        try:
            sections[name] = zlib.decompress(body[start:start + size])
        except zlib.error:
            raise CheckpointError(f"{path}: its section {name!r} cannot be decompressed: the file is damaged") from None
        start += size
    return header, sections


def _refuse_special(path: str) -> None:
    """A checkpoint is a regular file: a folder or a device at its path is refused."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path} (no such file)") from None
    except OSError as exc:
        raise CheckpointError(f"cannot use the checkpoint path {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise CheckpointError(f"the checkpoint path {path} is {what}: give the path of a file")
