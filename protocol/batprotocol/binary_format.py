"""batprotocol messages in flatbuffers' binary format: read with bounds checks, written with the
`flatbuffers` package's Builder.

A message in Python is the dict flatbuffers' JSON form would give (json_format.py): every field
of a table present, absent scalars at their default, absent tables, strings and vectors None,
enums by name, a union field `x` as `x_type` (the member's name, "NONE" when empty) and `x`
(the member's table). Reading checks every offset and length against the buffer, so a buffer
that is not a batprotocol message gives a BatprotocolError naming where it went wrong, never a
crash or a read past the end.
"""

from __future__ import annotations

import struct
from typing import Any

from joulesim.protocol.batprotocol.message_layout import ENUMS, JSON_ONLY_MEMBERS, ROOT, TABLES, UNIONS, Field, slots
from joulesim.protocol.errors import ProtocolError

# How deep tables may nest: batprotocol's deepest is a kill progress tree; a buffer whose
# offsets loop would otherwise recurse without end.
MAX_DEPTH = 64
_SCALARS = {"bool": ("<B", 1), "u8": ("<B", 1), "u32": ("<I", 4), "u64": ("<Q", 8), "f64": ("<d", 8)}


class BatprotocolError(ProtocolError):
    """A message that is not a valid batprotocol message (its format, not its meaning)."""


# ------------------------------------------------------------------------------ reading
def decode_message(buffer: bytes) -> dict[str, Any]:
    """The message a binary buffer holds."""
    reader = _Reader(bytes(buffer))
    return reader.table(reader.root(), ROOT, "message", 0)


class _Reader:
    def __init__(self, buffer: bytes):
        self.buffer = buffer
        self.size = len(buffer)

    def _unpack(self, fmt: str, width: int, at: int, where: str) -> Any:
        if at < 0 or at + width > self.size:
            raise BatprotocolError(f"{where}: points outside the {self.size}-byte buffer (at byte {at})")
        return struct.unpack_from(fmt, self.buffer, at)[0]

    def root(self) -> int:
        if self.size < 8:
            raise BatprotocolError(f"message: {self.size} bytes are too few for a flatbuffers message")
        return self._unpack("<I", 4, 0, "message")

    def _target(self, at: int, where: str) -> int:
        """Where the offset stored at `at` points."""
        return at + self._unpack("<I", 4, at, where)

    def table(self, at: int, name: str, where: str, depth: int) -> dict[str, Any]:
        if depth > MAX_DEPTH:
            raise BatprotocolError(f"{where}: tables nest deeper than {MAX_DEPTH} levels (offsets that loop?)")
        vtable = at - self._unpack("<i", 4, at, where)
        vtable_size = self._unpack("<H", 2, vtable, where)
        object_size = self._unpack("<H", 2, vtable + 2, where)
        if vtable_size < 4 or vtable_size % 2 or at + object_size > self.size:
            raise BatprotocolError(f"{where}: the {name} table's layout is not valid")
        out: dict[str, Any] = {}
        for field, slot in slots(name):
            entry = 4 + 2 * slot
            offset = self._unpack("<H", 2, vtable + entry, where) if entry < vtable_size else 0
            if offset and offset >= object_size:
                raise BatprotocolError(f"{where}.{field.name}: lies outside its table")
            if field.kind == "union":
                type_entry = entry - 2
                type_offset = self._unpack("<H", 2, vtable + type_entry, where) if type_entry < vtable_size else 0
                out.update(self._union(at, type_offset, offset, field, f"{where}.{field.name}", depth))
            else:
                out[field.name] = self._field(at + offset, field, f"{where}.{field.name}", depth) if offset else \
                    (_default(field))
            if field.required and out[field.name] is None:
                raise BatprotocolError(f"{where}.{field.name}: is missing, and a {name} needs it")
        return out

    def _union(self, at: int, type_offset: int, offset: int, field: Field, where: str, depth: int) -> dict[str, Any]:
        members = UNIONS[field.of]
        kind = self._unpack("<B", 1, at + type_offset, where + "_type") if type_offset else 0
        if kind > len(members):
            raise BatprotocolError(f"{where}_type: is {kind}, which names no {field.of} (1 to {len(members)})")
        if kind == 0 or not offset:
            return {f"{field.name}_type": "NONE", field.name: None}
        member = members[kind - 1]
        return {f"{field.name}_type": member,
                field.name: self.table(self._target(at + offset, where), member, where, depth + 1)}

    def _field(self, at: int, field: Field, where: str, depth: int) -> Any:
        kind = field.kind
        if kind in _SCALARS:
            value = self._unpack(*_SCALARS[kind], at, where)
            if kind == "bool":
                return value != 0
            if kind == "u8":
                names = ENUMS[field.of]
                if value >= len(names):
                    raise BatprotocolError(f"{where}: is {value}, which is no {field.of} (0 to {len(names) - 1})")
                return names[value]
            return value
        target = self._target(at, where)
        if kind == "str":
            return self._string(target, where)
        if kind == "table":
            return self.table(target, field.of, where, depth + 1)
        return self._vector(target, field, where, depth)

    def _string(self, at: int, where: str) -> str:
        length = self._unpack("<I", 4, at, where)
        if at + 4 + length > self.size:
            raise BatprotocolError(f"{where}: a string of {length} bytes runs past the buffer's end")
        try:
            return self.buffer[at + 4:at + 4 + length].decode("utf-8")
        except UnicodeDecodeError:
            raise BatprotocolError(f"{where}: is not UTF-8 text") from None

    def _vector(self, at: int, field: Field, where: str, depth: int) -> list[Any]:
        length = self._unpack("<I", 4, at, where)
        element = field.kind[1:-1]
        width = 8 if element == "f64" else 4
        start = at + 4
        if start + length * width > self.size:
            raise BatprotocolError(f"{where}: a vector of {length} elements runs past the buffer's end")
        if element == "f64":
            return list(struct.unpack_from(f"<{length}d", self.buffer, start))
        if element == "u32":
            return list(struct.unpack_from(f"<{length}I", self.buffer, start))
        items = []
        for index in range(length):
            target = self._target(start + 4 * index, f"{where}[{index}]")
            items.append(self._string(target, f"{where}[{index}]") if element == "str"
                         else self.table(target, field.of, f"{where}[{index}]", depth + 1))
        return items


def _default(field: Field) -> Any:
    if field.kind == "u8":
        return ENUMS[field.of][field.default]
    return field.default


# ------------------------------------------------------------------------------ writing
def encode_message(message: dict[str, Any]) -> bytes:
    """The binary buffer of a message (a dict as decode_message gives; absent keys take their
    defaults)."""
    import flatbuffers

    builder = flatbuffers.Builder(1024)
    builder.Finish(_write_table(builder, ROOT, message, "message"))
    return bytes(builder.Output())


def _write_table(builder, name: str, value: dict[str, Any], where: str) -> int:
    if not isinstance(value, dict):
        raise BatprotocolError(f"{where}: is {type(value).__name__}, not a {name} object")
    laid = slots(name)
    children: dict[str, int] = {}
    for field, _ in laid:  # (strings, vectors and tables go before the table that points to them)
        given = value.get(field.name)
        if field.kind == "union":
            member = value.get(f"{field.name}_type", "NONE")
            if member not in ("NONE", None):
                if member in JSON_ONLY_MEMBERS.get(field.of, ()):
                    raise BatprotocolError(f"{where}.{field.name}_type: {member} has no binary numbering that joulesim "
                                           "knows (Batsim 5's later batprotocol revision): use the JSON format")
                if member not in UNIONS[field.of]:
                    raise BatprotocolError(f"{where}.{field.name}_type: {member!r} is no {field.of}")
                children[field.name] = _write_table(builder, member, given or {}, f"{where}.{field.name}")
        elif given is not None and field.kind not in _SCALARS:
            children[field.name] = _write_offset(builder, field, given, f"{where}.{field.name}")
        elif given is None and field.required:
            raise BatprotocolError(f"{where}.{field.name}: is missing, and a {name} needs it")
    builder.StartObject(laid[-1][1] + 1 if laid else 0)
    for field, slot in laid:
        given = value.get(field.name)
        if field.kind == "union":
            if field.name in children:
                builder.PrependUint8Slot(slot - 1, UNIONS[field.of].index(value[f"{field.name}_type"]) + 1, 0)
                builder.PrependUOffsetTRelativeSlot(slot, children[field.name], 0)
        elif field.name in children:
            builder.PrependUOffsetTRelativeSlot(slot, children[field.name], 0)
        elif field.kind in _SCALARS and given is not None:
            _write_scalar(builder, field, slot, given, f"{where}.{field.name}")
    return builder.EndObject()


def _write_scalar(builder, field: Field, slot: int, value: Any, where: str) -> None:
    kind = field.kind
    if kind == "bool":
        builder.PrependBoolSlot(slot, bool(value), bool(field.default))
    elif kind == "u8":
        names = ENUMS[field.of]
        code = names.index(value) if value in names else value
        if not isinstance(code, int) or not 0 <= code < len(names):
            raise BatprotocolError(f"{where}: {value!r} is no {field.of} ({', '.join(names)})")
        builder.PrependUint8Slot(slot, code, field.default)
    elif kind == "u32":
        builder.PrependUint32Slot(slot, int(value), field.default)
    elif kind == "u64":
        builder.PrependUint64Slot(slot, int(value), field.default)
    else:
        builder.PrependFloat64Slot(slot, float(value), field.default)


def _write_offset(builder, field: Field, value: Any, where: str) -> int:
    kind = field.kind
    if kind == "str":
        return builder.CreateString(str(value))
    if kind == "table":
        return _write_table(builder, field.of, value, where)
    element = kind[1:-1]
    if element == "f64":
        builder.StartVector(8, len(value), 8)
        for item in reversed(value):
            builder.PrependFloat64(float(item))
        return builder.EndVector()
    if element == "u32":
        builder.StartVector(4, len(value), 4)
        for item in reversed(value):
            builder.PrependUint32(int(item))
        return builder.EndVector()
    offsets = [builder.CreateString(str(item)) if element == "str" else
               _write_table(builder, field.of, item, f"{where}[{index}]") for index, item in enumerate(value)]
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


__all__ = ["BatprotocolError", "decode_message", "encode_message", "TABLES"]
