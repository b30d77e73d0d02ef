"""The part of platform loading that does not depend on the file format.

Both loaders (:mod:`platform_xml`, :mod:`platform_json`) turn their file into a list of
:class:`RawHost` (a name, speeds, an initial pstate and Batsim-style string properties) and hand
it to :func:`build_platform`, which checks the semantics (pstates, power model, roles), chooses
the master host and numbers the hosts. Every problem is reported as an :class:`InputError`; those
of power properties only with -E (:func:`check_energy_properties`), as Batsim reads them.

Numbers in files are read strictly, by :mod:`joulesim.protocol.number_text`: ASCII digits only,
no underscores, nothing around them but spaces (Python's ``int()``/``float()`` would also take
"²", "١", "１.５", "1_0", "inf" or "nan").
The limits below are checked before anything is allocated, so that a mistyped or hostile file
ends with an error instead of exhausting memory, the stack or the user's patience.
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Mapping

from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import check_file_type
from joulesim.protocol.number_text import (
    DECIMAL_PATTERN,
    MAX_INTEGER_DIGITS,
    NumberTextError,
    parse_decimal,
    parse_integer,
)
from joulesim.protocol.time_range import MAX_SIMULATED_TIME, TIME_RANGE_TEXT
from joulesim.simulator.platform.platform_model import Host, Platform, SleepPstate

# A platform may have at most MAX_HOSTS hosts (the master and storage hosts included): ~6 times
# Fugaku's 158,976 nodes; loading that many takes about 20 s and 2 GB (40 s and 3.5 GB with links).
MAX_HOSTS = 1_000_000
# A host may have at most MAX_PSTATES pstates (real ones have a few DVFS levels plus three
# pstates per sleep state); the speeds of every host are kept, so this bounds memory too.
MAX_PSTATES = 256
# Cluster ids, prefixes and suffixes are copied into the name of each of its hosts and links.
MAX_NAME_LENGTH = 1000
# Zones nested deeper than this are refused (routes between zones recurse along the nesting).
MAX_ZONE_DEPTH = 100
# Platform files are read whole; 1M hosts with their power properties take about 300 MB.
MAX_PLATFORM_FILE_BYTES = 1 << 30

ROLES = ("master", "compute_node", "storage")
DEFAULT_MASTER_NAME = "master_host"  # Batsim's default for -m/--master-host

# SimGrid's speed units (xbt parse_speed), flop/s.
SPEED_UNITS = {
    "": 1.0,
    "f": 1.0,
    "flops": 1.0,
    "kf": 1e3,
    "kiloflops": 1e3,
    "Mf": 1e6,
    "megaflops": 1e6,
    "Gf": 1e9,
    "gigaflops": 1e9,
    "Tf": 1e12,
    "teraflops": 1e12,
    "Pf": 1e15,
    "petaflops": 1e15,
    "Ef": 1e18,
    "exaflops": 1e18,
    "Zf": 1e21,
    "zettaflops": 1e21,
    "Yf": 1e24,
    "yottaflops": 1e24,
}
# A number then a SimGrid unit ("1.25GBps"); ASCII only: \d and \s would also match other
# scripts' digits and spaces. The number is then read by number_text.parse_decimal.
_SPEED_RE = re.compile(rf"[ \t\r\n]*({DECIMAL_PATTERN})[ \t\r\n]*([A-Za-z]*)[ \t\r\n]*")
_SPEED_FIX = "write one speed per pstate, comma-separated, with a SimGrid unit, e.g. speed=\"1Gf, 500Mf\" (units: f, kf, Mf, Gf, Tf, Pf, Ef, Zf)"


def _bandwidth_units() -> dict[str, float]:
    """SimGrid's bandwidth units (xbt unit_scale, simgrid.dtd), in bytes/s: Bps (bytes) and bps
    (bits, 1/8 byte), with decimal (k, M, G...) or binary (Ki, Mi, Gi...) prefixes."""
    units: dict[str, float] = {}
    for unit, scale in (("Bps", 1.0), ("bps", 0.125)):
        units[unit] = scale
        for power, (decimal, binary) in enumerate(zip("kMGTPEZY", ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi")), start=1):
            units[decimal + unit] = scale * 1000.0 ** power
            units[binary + unit] = scale * 1024.0 ** power
        units["K" + unit] = scale * 1000.0  # SimGrid's docs spell kilo "K" (KBps), its DTD "k" (kBps)
    return units


BANDWIDTH_UNITS = _bandwidth_units()
# SimGrid's time units (simgrid.dtd), in seconds.
LATENCY_UNITS = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_BANDWIDTH_FIX = 'write a number with a SimGrid unit, e.g. "1.25GBps" (bytes/s) or "10Gbps" (bits/s); prefixes k, M, G, T (x1000) or Ki, Mi, Gi (x1024)'
_LATENCY_FIX = 'write a number with a SimGrid unit, e.g. "24ns", "5us", "1ms" or "0s" (units: ps, ns, us, ms, s, m, h, d, w)'


def read_platform_file(path: str) -> bytes:
    """The bytes of a platform file or a shell's pipe, at most MAX_PLATFORM_FILE_BYTES;
    InputError for a directory, a device (/dev/zero would be read forever), a named pipe (opening
    it waits for a writer), as every input file (inputs/input_file.py), or an unreadable path."""
    fix = "check the path and the file's permissions"
    too_big = (f"is more than joulesim's limit of {MAX_PLATFORM_FILE_BYTES:,} bytes for a platform",
               'describe identical hosts with <cluster> (or "clusters" in JSON) instead of one element each')
    try:
        info = os.stat(path)
        check_file_type(path, info, "a .xml or .json platform file", "platform")
        if info.st_size > MAX_PLATFORM_FILE_BYTES:
            raise InputError(path, "platform", *too_big)
        with open(path, "rb") as f:
            if stat.S_ISREG(info.st_mode):  # (read(n) sets n bytes aside first: not the whole limit)
                data = f.read(info.st_size + 1)
            else:  # a pipe has no size to check beforehand: in pieces, up to the limit
                pieces, total = [], 0
                while total <= MAX_PLATFORM_FILE_BYTES:
                    piece = f.read(1 << 20)
                    if not piece:
                        break
                    pieces.append(piece)
                    total += len(piece)
                data = b"".join(pieces)
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise InputError(path, "file", f"cannot read: {getattr(e, 'strerror', None) or e}", fix) from None
    if len(data) > MAX_PLATFORM_FILE_BYTES:
        raise InputError(path, "platform", *too_big)
    return data


def shown(value: object, limit: int = 60) -> str:
    """repr(value), cut to about `limit` characters: a file's text may be megabytes long."""
    text = repr(value) if not isinstance(value, str) or len(value) <= limit else repr(value[:limit]) + f"... ({len(value):,} characters)"
    return text if len(text) <= limit + 40 else text[:limit] + "..."


def _file_number(path: str, where: str, value: int | float, what: str, fix: str) -> float:
    """A JSON number as a float (a JSON integer may be too large for a float)."""
    try:
        return float(value)
    except OverflowError:
        raise InputError(path, where, f"{what} {shown(value)} is too large", fix) from None


def _parse_with_units(path: str, where: str, text: str | float | int, what: str, units: dict[str, float], fix: str) -> float:
    if isinstance(text, bool):
        raise InputError(path, where, f"{what} {text!r} is not a {what}", fix)
    if isinstance(text, (int, float)):
        value = _file_number(path, where, text, what, fix)  # unit-less: bytes/s or seconds, as SimGrid reads them
    else:
        m = _SPEED_RE.fullmatch(str(text))
        if not m:
            raise InputError(path, where, f"{what} {shown(text)} is not a number with a unit", fix)
        unit = m.group(2)
        if unit and unit not in units:
            near = [u for u in units if u.lower() == unit.lower()]
            hint = f" (units are case-sensitive: did you mean {' or '.join(repr(u) for u in near)}?)" if near else ""
            raise InputError(path, where, f"{what} {shown(text)} has an unknown unit {shown(unit)}{hint}", fix)
        value = _unit_number(path, where, text, m.group(1), what, fix) * (units[unit] if unit else 1.0)
    if not math.isfinite(value) or value < 0:
        raise InputError(path, where, f"{what} {shown(text)} must be a finite non-negative number", fix)
    return value


def parse_bandwidth(path: str, where: str, text: str | float | int) -> float:
    """A bandwidth in bytes/s: a number (bytes/s) or a string with a SimGrid unit ("10Gbps" is bits)."""
    value = _parse_with_units(path, where, text, "bandwidth", BANDWIDTH_UNITS, _BANDWIDTH_FIX)
    if value <= 0:
        raise InputError(path, where, f"bandwidth {shown(text)} is zero: nothing could cross this link", _BANDWIDTH_FIX)
    return value


def parse_latency(path: str, where: str, text: str | float | int) -> float:
    """A latency in seconds: a number (seconds) or a string with a SimGrid unit ("24ns", "5us")."""
    value = _parse_with_units(path, where, text, "latency", LATENCY_UNITS, _LATENCY_FIX)
    if value >= MAX_SIMULATED_TIME:
        raise InputError(path, where, f"latency {shown(text)} is {value:g} s: {TIME_RANGE_TEXT}", _LATENCY_FIX)
    return value


@dataclass
class RawHost:
    """A host as read from a file, before semantic checks.

    `where` names it in error messages (e.g. "host 'h0'" or "cluster 'c0' host 'node-3'").
    """

    name: str
    where: str
    speeds: list[float]
    pstate: int = 0
    properties: dict[str, str] = field(default_factory=dict)
    zone_properties: dict[str, str] = field(default_factory=dict)
    zone: str = ""  # id of the host's cluster ("" outside clusters)
    cores: int = 1


def parse_number(path: str, where: str, text: str, what: str, fix: str = "") -> float:
    """A finite float from `text` (ASCII decimal notation), or InputError naming `what`."""
    try:
        return parse_decimal(str(text))
    except NumberTextError:
        raise InputError(path, where, f"{what} {shown(text)} is not a finite decimal number", fix or "write a decimal number such as 9.75") from None


def parse_int(path: str, where: str, text: str, what: str, fix: str = "") -> int:
    """A non-negative int from `text` (ASCII digits), or InputError naming `what`."""
    text = str(text)
    try:
        return parse_integer(text, signed=False)
    except NumberTextError:
        digits = text.strip(" \t\r\n")
        if digits.isascii() and digits.isdigit():  # well formed, only too long
            raise InputError(path, where, f"{what} {shown(text)} is too large (more than {MAX_INTEGER_DIGITS} digits)", fix or "write an integer such as 0") from None
        raise InputError(path, where, f"{what} {shown(text)} is not a non-negative integer (ASCII digits 0-9)", fix or "write an integer such as 0") from None


def _unit_number(path: str, where: str, text: str, number: str, what: str, fix: str) -> float:
    """The number before the unit of a SimGrid unit string (already matched by DECIMAL_PATTERN)."""
    try:
        return parse_decimal(number)
    except NumberTextError:  # an exponent beyond a double
        raise InputError(path, where, f"{what} {shown(text)} must be a finite non-negative number", fix) from None


def parse_speed(path: str, where: str, text: str | float | int) -> float:
    """One speed in flop/s: a number, or a string with an optional SimGrid unit ("100.0Mf")."""
    if isinstance(text, bool):
        raise InputError(path, where, f"speed {text!r} is not a speed", _SPEED_FIX)
    if isinstance(text, (int, float)):
        value = _file_number(path, where, text, "speed", _SPEED_FIX)
    else:
        m = _SPEED_RE.fullmatch(str(text))
        if not m:
            raise InputError(path, where, f"speed {shown(text)} is not a number with a unit", _SPEED_FIX)
        unit = m.group(2)
        if unit not in SPEED_UNITS:
            raise InputError(path, where, f"speed {shown(text)} has an unknown unit {shown(unit)}", _SPEED_FIX)
        value = _unit_number(path, where, text, m.group(1), "speed", _SPEED_FIX) * SPEED_UNITS[unit]
    if not math.isfinite(value) or value < 0:
        raise InputError(path, where, f"speed {shown(text)} must be a finite non-negative number", _SPEED_FIX)
    return value


def parse_speeds(path: str, where: str, text: str | list) -> list[float]:
    """Speeds of all pstates: "1Gf, 500Mf" or a list of numbers/strings."""
    items = text if isinstance(text, list) else [text] if isinstance(text, (int, float)) else str(text).split(",")
    if not items or (len(items) == 1 and isinstance(items[0], str) and not items[0].strip()):
        raise InputError(path, where, "speed is empty", _SPEED_FIX)
    if len(items) > MAX_PSTATES:
        raise InputError(path, where, f"gives {len(items):,} speeds (pstates), more than joulesim's limit of {MAX_PSTATES}",
                         "give one speed per pstate: DVFS levels, then three pstates per sleep state")
    return [parse_speed(path, where, item) for item in items]


def check_host_count(path: str, where: str, count: int, before: int) -> None:
    """InputError if `count` more hosts after `before` ones would exceed MAX_HOSTS."""
    if before + count > MAX_HOSTS:
        earlier = f" (after {before:,} host(s) declared before)" if before else ""
        raise InputError(path, where, f"declares {count:,} host(s){earlier}: more than joulesim's limit of {MAX_HOSTS:,} hosts per platform",
                         f"check the numbers; a platform may have at most {MAX_HOSTS:,} hosts")


def check_name_part(path: str, where: str, text: str, what: str) -> None:
    """InputError if `text` (a cluster's id, prefix or suffix, copied into each host name) is too long."""
    if len(text) > MAX_NAME_LENGTH:
        raise InputError(path, where, f"{what} {shown(text)} is longer than joulesim's limit of {MAX_NAME_LENGTH:,} characters",
                         "use a shorter name: it is copied into the name of every host of the cluster")


def parse_radical(path: str, where: str, radical: str | list[int], before: int = 0) -> list[int]:
    """Cluster host numbers: "0-31,40" (numbers or ranges a-b, comma-separated) or a list of ints.

    `before` hosts are already declared: the count is checked against MAX_HOSTS before any
    number is listed (a radical "0-100000000000" is a short string but a huge list)."""
    if isinstance(radical, list):
        check_host_count(path, where, len(radical), before)
        return list(radical)
    fix = 'write comma-separated numbers or ranges, e.g. radical="0-31,40"'
    ranges: list[tuple[int, int]] = []
    count = 0
    for part in str(radical).split(","):
        bounds = part.split("-")
        if len(bounds) > 2:
            raise InputError(path, where, f"radical part {shown(part.strip())} is not a number or a range a-b", fix)
        lo = parse_int(path, where, bounds[0], "radical", fix)
        hi = parse_int(path, where, bounds[-1], "radical", fix)
        if hi < lo:
            raise InputError(path, where, f"radical range {shown(part.strip())} is empty (end < start)", fix)
        ranges.append((lo, hi))
        count += hi - lo + 1
        check_host_count(path, where, count, before)
    return [n for lo, hi in ranges for n in range(lo, hi + 1)]


def parse_wattage_per_state(path: str, where: str, text: str,
                            nb_pstates: int | None = None) -> list[tuple[float, float, float]]:
    """"idle:max, idle:max" (or SimGrid's "idle:epsilon:max") -> [(idle, epsilon, max), ...],
    epsilon = idle where a pstate gives idle:max (SimGrid's init_watts_range_list).

    With `nb_pstates`, a count other than one pair per pstate is refused before parsing."""
    fix = 'write one "idle:max" pair of watts per pstate, comma-separated, e.g. value="95:190.74, 9.75:9.75"'
    parts = str(text).split(",")
    if nb_pstates is not None and len(parts) != nb_pstates:
        raise InputError(path, where, f"gives {len(parts):,} wattage(s) for {nb_pstates} pstate(s) (speeds): energy accounting "
                         f"(-E/--energy) needs one per pstate, and Batsim 4.2.1 with -E aborts there too (SimGrid 3.32: "
                         f"\"Invalid XML file. Found {len(parts)} energetic profiles for {nb_pstates} pstates\")",
                         f"give exactly one idle:max pair per speed ({nb_pstates} here), or run without -E (the property is "
                         f"then unused, as Batsim 4.2.1 leaves it)")
    result = []
    for i, part in enumerate(parts):
        values = part.split(":")
        if len(values) not in (2, 3):
            raise InputError(path, where, f"wattage_per_state part {i} {shown(part.strip())} must be idle:max or idle:epsilon:max", fix)
        numbers = [parse_number(path, where, v, f"wattage_per_state part {i} value", fix) for v in values]
        if any(n < 0 for n in numbers):
            raise InputError(path, where, f"wattage_per_state part {i} {shown(part.strip())} has a negative wattage", fix)
        result.append((numbers[0], numbers[1] if len(numbers) == 3 else numbers[0], numbers[-1]))
    return result


def parse_sleep_pstates(path: str, where: str, text: str, nb_pstates: int) -> list[SleepPstate]:
    """"S:OFF:ON, ..." -> [SleepPstate], checking ranges and pstate kinds (as Batsim does)."""
    fix = 'write "sleep:switch_off:switch_on" pstate indices, e.g. value="1:2:3"; several are comma-separated'
    result: list[SleepPstate] = []
    sleeps: set[int] = set()
    virtuals: set[int] = set()
    for part in str(text).split(","):
        values = part.split(":")
        if len(values) != 3:
            raise InputError(path, where, f"sleep_pstates part {shown(part.strip())} must be three colon-separated pstates", fix)
        s, off, on = (parse_int(path, where, v, "sleep_pstates pstate", fix) for v in values)
        for p in (s, off, on):
            if p >= nb_pstates:
                raise InputError(
                    path, where,
                    f"sleep_pstates part {shown(part.strip())} refers to pstate {p}, but the host has {nb_pstates} pstate(s) (0..{nb_pstates - 1})",
                    "use pstate indices of the host's speed list, or add speeds",
                )
        if len({s, off, on}) != 3:
            raise InputError(path, where, f"sleep_pstates part {shown(part.strip())} uses the same pstate twice", "the sleep, switch-off and switch-on pstates must be three different pstates")
        if s in sleeps or s in virtuals or off in sleeps or on in sleeps:
            dup = s if (s in sleeps or s in virtuals) else (off if off in sleeps else on)
            raise InputError(path, where, f"sleep_pstates uses pstate {dup} twice (as a sleep pstate and again)", "a sleep pstate must appear once and must not also be a switch-off/switch-on pstate")
        sleeps.add(s)
        virtuals.update((off, on))
        result.append(SleepPstate(sleep=s, switch_off=off, switch_on=on))
    return result


class _ParsedProperties:
    """Power properties parsed once per distinct text: a cluster's hosts share theirs, and
    parsing them for each of 100,000 hosts was most of the loading time. Only successes are
    kept, so a bad text still fails (with its host's name) at its first host."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str, int], object] = {}

    def get(self, kind: str, text: str, nb: int, parse):
        key = (kind, text, nb)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = parse()
        return hit


def _power_property(refused: list[InputError], read):
    """What `read()` parses of a power property, or None when it refuses it: the refusal is then
    kept for -E (check_energy_properties), since a run without energy reads no power property."""
    try:
        return read()
    except InputError as error:
        if "-E/--energy" not in error.problem:
            error = InputError(error.path, error.where, f"{error.problem} (read with -E/--energy only, as Batsim 4.2.1 reads it)",
                               f"{error.fix}, or run without -E" if error.fix else "run without -E")
        refused.append(error)
        return None


def _check_host(path: str, raw: RawHost, parsed: _ParsedProperties, power_refused: list[InputError],
                sleep_refused: list[tuple[str, InputError]]) -> Host:
    """`raw` checked as a Host. Its power properties (wattage_per_state, wattage_off,
    sleep_pstates) are read only by energy accounting, as SimGrid's energy plugin and Batsim
    read them only with -E: one that is refused is left out, its refusal added to
    `power_refused` (wattages) or `sleep_refused` (sleep pstates, with the host's name)."""
    where = raw.where
    props = raw.properties
    nb = len(raw.speeds)
    if nb == 0:
        raise InputError(path, where, "has no speed", _SPEED_FIX)
    if nb > MAX_PSTATES:
        raise InputError(path, f"{where}, speed", f"has {nb:,} pstates, more than joulesim's limit of {MAX_PSTATES}",
                         "give one speed per pstate: DVFS levels, then three pstates per sleep state")
    if not 0 <= raw.pstate < nb:
        raise InputError(path, f"{where}, pstate", f"initial pstate {raw.pstate} is out of range: the host has {nb} pstate(s) (0..{nb - 1})", "set pstate to an index of the speed list")

    role = props.get("role", "compute_node")
    if role not in ROLES:
        raise InputError(path, f"{where}, property 'role'", f"unknown role {shown(role)}", "use one of: " + ", ".join(ROLES))

    wattage = epsilon = None
    key = "wattage_per_state" if "wattage_per_state" in props else ("watt_per_state" if "watt_per_state" in props else None)
    if key:
        text, prop = props[key], key
        ranges = _power_property(power_refused, lambda: parsed.get(
            "wattage", text, nb, lambda: parse_wattage_per_state(path, f"{where}, property '{prop}'", text, nb)))
        if ranges is not None:
            wattage = [(idle, peak) for idle, _, peak in ranges]
            if any(eps != idle for idle, eps, _ in ranges):
                epsilon = [eps for _, eps, _ in ranges]

    wattage_off = None
    key = "wattage_off" if "wattage_off" in props else ("watt_off" if "watt_off" in props else None)
    if key:
        wattage_off = _power_property(power_refused, lambda: _parse_wattage_off(path, where, key, props[key]))

    sleep = []
    if "sleep_pstates" in props:
        text, refused = props["sleep_pstates"], []
        sleep = _power_property(refused, lambda: list(parsed.get(
            "sleep", text, nb, lambda: parse_sleep_pstates(path, f"{where}, property 'sleep_pstates'", text, nb)))) or []
        sleep_refused += ((raw.name, error) for error in refused)
    sleep_ids = {sp.sleep for sp in sleep}
    virtual_ids = {p for sp in sleep for p in (sp.switch_off, sp.switch_on)}
    for i, speed in enumerate(raw.speeds):
        if speed <= 0 and i not in sleep_ids:
            kind = "virtual switch" if i in virtual_ids else "computation"
            raise InputError(path, f"{where}, speed", f"{kind} pstate {i} has speed {speed:g} flop/s; it must be > 0", "give every non-sleep pstate a positive speed")
    if raw.pstate in virtual_ids:
        raise InputError(path, f"{where}, pstate", f"initial pstate {raw.pstate} is a virtual switch-off/switch-on pstate", "start the host in a computation or sleep pstate")

    return Host(
        id=-1,
        name=raw.name,
        speeds=list(raw.speeds),
        pstate=raw.pstate,
        role=role,
        properties=dict(props),
        zone_properties=dict(raw.zone_properties),
        wattage_per_state=wattage,
        wattage_epsilon=epsilon,
        wattage_off=wattage_off,
        sleep_pstates=sleep,
        zone=raw.zone,
        cores=raw.cores,
    )


def _parse_wattage_off(path: str, where: str, key: str, text: str) -> float:
    watts = parse_number(path, f"{where}, property '{key}'", text, key)
    if watts < 0:
        raise InputError(path, f"{where}, property '{key}'", f"{key} {shown(text)} is negative", "give the power of a switched-off machine in watts (>= 0)")
    return watts


def check_energy_properties(platform: Platform) -> None:
    """With -E/--energy: refuse the platform if a power property of one of its hosts (the master,
    storage hosts and hosts beyond --mmax included) cannot be read. Without -E they are not read
    (build_platform keeps their refusals aside), as Batsim 4.2.1 runs such a platform without -E
    and aborts with it: SimGrid's energy plugin reads every host's wattage_per_state and
    wattage_off as the platform is loaded, in file order, then Batsim every host's sleep_pstates,
    in the order of their names. The first refusal is raised."""
    if platform.energy_refusals:
        raise platform.energy_refusals[0]


def _unused_power_warning(path: str, refusals: list[InputError]) -> str:
    first = refusals[0]
    others = f" ({len(refusals) - 1:,} other power propert{'y' if len(refusals) == 2 else 'ies'} refused alike)" if len(refusals) > 1 else ""
    return (f"joulesim: warning: {path}: {first.where}: {first.problem}{others}; without -E the property is unused "
            f"and the platform runs, as on Batsim 4.2.1")


def _add_role(path: str, hosts: dict[str, RawHost], name: str, role: str) -> None:
    """Batsim's -r/--add-role-to-hosts NAME:ROLE (machines.cpp): the host gets property role=ROLE.
    A host that has a role already would get "OLD,ROLE", which Batsim 4.2.1 refuses (roles do not
    combine: permissions_from_role knows single roles only): refused here too, with the reason."""
    where = f"--add-role-to-hosts {name}:{role}"
    if role not in ROLES:
        raise InputError(path, where, f"unknown role {shown(role)}", "roles are " + ", ".join(ROLES))
    raw = hosts.get(name)
    if raw is None:
        raise InputError(path, where, f"no host named {shown(name)} in the platform", "give the names of existing hosts, comma-separated")
    old = raw.properties.get("role")
    if old is not None:
        raise InputError(path, where, f"{raw.where} has role={shown(old)} already: Batsim 4.2.1 would make it "
                         f"role={shown(old + ',' + role)}, which is no role (roles do not combine), and stop",
                         "remove the role property from the platform file, or drop this --add-role-to-hosts")
    raw.properties = {**raw.properties, "role": role}


def _name(host: Host) -> str:
    return host.name


def build_platform(path: str, raw_hosts: list[RawHost], master_host: str | None = None,
                   added_roles: Mapping[str, str] | None = None) -> Platform:
    """Check hosts, choose the master, number compute then storage hosts in the string order of
    their names.

    The master is the host named `master_host` (Batsim's --master-host) if given, otherwise the
    host whose role property is "master", otherwise a host named "master_host". Its id is -1
    (as in Batsim). Compute hosts get ids 0..n-1 and storage hosts n..n+m-1, each kind in the
    order Batsim 4.2.1 numbers them: SimGrid 3.32 lists a platform's hosts by name, compared as
    C++ strings compare (byte by byte: host0, host1, host10, host100, ..., host11, ..., host2;
    "Z" before "a"), whatever their order in the file; Batsim keeps that order (machines.cpp)
    and --mmax N keeps the first N compute hosts of it. Python compares str by code point,
    which is the byte order of their UTF-8. `added_roles` (host name -> role) is Batsim's
    --add-role-to-hosts, applied before anything else.
    """
    path = str(path)
    check_host_count(path, "platform", len(raw_hosts), 0)  # the loaders check as they go; this is the backstop
    seen: dict[str, RawHost] = {}
    for raw in raw_hosts:
        if raw.name in seen:
            raise InputError(path, raw.where, f"host name {shown(raw.name)} is already used by {seen[raw.name].where}", "give every host a unique name")
        seen[raw.name] = raw
    for name, role in (added_roles or {}).items():
        _add_role(path, seen, name, role)

    parsed = _ParsedProperties()
    power_refused: list[InputError] = []
    sleep_refused: list[tuple[str, InputError]] = []
    hosts = [_check_host(path, raw, parsed, power_refused, sleep_refused) for raw in raw_hosts]
    # (SimGrid reads wattages as it creates the hosts, in file order; Batsim sleep pstates once
    # SimGrid has them all, in its order, by name.)
    energy_refusals = power_refused + [error for _, error in sorted(sleep_refused, key=lambda pair: pair[0])]
    by_name = {h.name: h for h in hosts}
    wheres = {raw.name: raw.where for raw in raw_hosts}
    role_masters = [h for h in hosts if h.role == "master"]
    master_fix = 'add <prop id="role" value="master"/> to exactly one host (or "role": "master" in JSON), or name it with --master-host'

    if master_host is not None:
        if master_host not in by_name:
            raise InputError(path, "--master-host", f"no host named {master_host!r} in the platform", "give the name of an existing host, or drop --master-host and mark the master with the role property")
        master = by_name[master_host]
        others = [h for h in role_masters if h is not master]
        if others:
            raise InputError(path, wheres[others[0].name], f"two master hosts: {master.name!r} (--master-host) and {others[0].name!r} (role=master)", "keep a single master: remove the role=master property or change --master-host")
    elif len(role_masters) > 1:
        names = ", ".join(repr(h.name) for h in role_masters)
        raise InputError(path, wheres[role_masters[1].name], f"several master hosts: {names}", "keep role=master on exactly one host")
    elif role_masters:
        master = role_masters[0]
    elif DEFAULT_MASTER_NAME in by_name:
        master = by_name[DEFAULT_MASTER_NAME]
    else:
        raise InputError(path, "platform", "no master host: no host has role=master and none is named 'master_host'", master_fix)
    master.role = "master"
    master.properties = {**master.properties, "role": "master"}  # as Batsim: the master's role, by name too

    compute = sorted((h for h in hosts if h is not master and h.role == "compute_node"), key=_name)
    storage = sorted((h for h in hosts if h is not master and h.role == "storage"), key=_name)
    if not compute:
        raise InputError(path, "platform", "has no compute host (every host is the master or a storage host)", 'add hosts without a role property or with <prop id="role" value="compute_node"/>')
    for i, h in enumerate(compute + storage):
        h.id = i
    warnings = [_unused_power_warning(path, energy_refusals)] if energy_refusals else []
    return Platform(source=path, master=master, compute_hosts=compute, storage_hosts=storage, warnings=warnings,
                    energy_refusals=energy_refusals)
