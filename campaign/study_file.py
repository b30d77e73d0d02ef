"""Read and check a campaign file (TOML): platforms x workloads x deciders x energy x repetitions.

Everything is checked before anything runs: unknown keys, missing files, unknown deciders or
options (each option combination is tried on the decider class), empty grids, nesting deeper
than MAX_NESTING, names that would leave the results folder, studies of more than
MAX_INSTANCES instances (counted before any is made). Each problem is an InputError naming the
file, the table and the key, and saying how to fix it.

    [campaign]                      # all optional
    name = "budget"                 # default: the file's name
    energy = [false, true]          # or one boolean; default false
    repetitions = 1
    timeout = 3600                  # seconds of wall-clock time per instance
    reply_timeout = 120             # seconds to wait for each decider reply
    outputs = false                 # keep each instance's Batsim files in RESULTS/runs/ID/
    window = [0, 604800]            # also measure utilization, energy, jobs started in [t0, t1]

    [[platforms]]
    path = "cluster32"              # a file (relative to this file) or a shipped platform
    name = "c32"                    # optional label; mmax = N optional

    [[workloads]]                   # one of path, trace, generator
    path = "default"
    # trace = "../shared/data/swf/KTH-SP2-1996-2.1-cln.swf"; weeks = [0, 1]; convert = {...}
    # generator = "lublin"; seeds = [1, 2]; parameters = {jobs = 100, nb_res = 32}
    # platforms = ["c32"]           # only with these platforms (default: all)

    [[deciders]]
    decider = "easy"                # a shipped name or "module:Class"; or command = [...]
    options = {}                    # fixed options
    grid = {t_idle = [0, 300]}      # cartesian product
    zip = {}                        # lists zipped together (one length)

    [[deciders]]                    # a Batsim 5 EDC library instead (batprotocol)
    edc_library = "libeasy_edc.so"  # relative to this file
    edc_init = ['{"a": 1}', '{"a": 2}']   # its init data: a string, or a list (one instance each)
    edc_isolated = false            # true: loaded in a child process (a crash is a failed instance)
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass, field
from typing import Any, Callable

from joulesim.campaign.option_grid import count_options, expand_options
from joulesim.inputs.input_error import InputError
from joulesim.inputs.input_file import read_input_file
from joulesim.inputs.json_input import clip
from joulesim.inputs.toml_input import decode_toml
from joulesim.protocol.errors import JoulesimError
from joulesim.workload_tools.generators import MODELS as GENERATORS, generator

DEFAULT_TIMEOUT_S = 3600.0
DEFAULT_REPLY_TIMEOUT_S = 120.0
#: Tables and arrays inside each other in a campaign file (a few are needed; the parsed
#: document is walked and hashed, and JSON encoders stop at 255).
MAX_NESTING = 100
#: Instances of one campaign file: each is checked, hashed and listed in the results table
#: before the first runs (about 15 s for 100,000 on one core); larger studies are split.
MAX_INSTANCES = 100_000
_SPLIT_FIX = (f"a campaign file holds at most {MAX_INSTANCES:,} instances: split the study into several "
              "campaign files, each with its own name (e.g. one per platform, per workload or per value of "
              "an option), or give fewer values or repetitions")
#: Bytes of a name that becomes part of a file or folder name (file names stop at 255).
MAX_NAME_BYTES = 100
_TOP_KEYS = {"campaign": "settings", "platforms": "platforms", "workloads": "workloads", "deciders": "deciders"}
_CAMPAIGN_KEYS = ("name", "energy", "repetitions", "timeout", "reply_timeout", "outputs", "window")
_PLATFORM_KEYS = ("path", "name", "mmax")
_WORKLOAD_KEYS = ("path", "trace", "generator", "name", "weeks", "convert", "seeds", "parameters", "platforms")
_DECIDER_KEYS = ("decider", "command", "name", "options", "grid", "zip", "edc_library", "edc_init", "edc_isolated")


@dataclass(frozen=True)
class PlatformSpec:
    label: str
    source: str  # an absolute path, or a shipped platform's name
    mmax: int = 0


@dataclass(frozen=True)
class WorkloadSpec:
    """One workload of the study: a file, one week of a trace, or one seed of a generator."""

    label: str
    kind: str  # "file", "trace" or "generator"
    source: str  # a path, a shipped name, or a generator model
    variant: tuple[str, int] | None = None  # ("week", 3) or ("seed", 1)
    settings: tuple[tuple[str, Any], ...] = ()  # conversion options or generator parameters
    platforms: tuple[str, ...] | None = None  # labels; None: every platform


@dataclass(frozen=True)
class DeciderSpec:
    label: str
    name: str | None  # a shipped name or "module:Class"
    command: tuple[str, ...] | None  # or an external program's command line
    combinations: tuple[tuple[tuple[str, Any], ...], ...]  # option sets, each sorted by key
    # or a Batsim 5 EDC library (an absolute path), loaded in a child process when isolated;
    # its init data is the option "edc_init" of each combination
    edc_library: str | None = None
    edc_isolated: bool = False


@dataclass
class Study:
    path: str
    name: str
    platforms: list[PlatformSpec]
    workloads: list[WorkloadSpec]
    deciders: list[DeciderSpec]
    energy: list[bool] = field(default_factory=lambda: [False])
    repetitions: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    reply_timeout_s: float = DEFAULT_REPLY_TIMEOUT_S
    keep_outputs: bool = False
    window: tuple[float, float] | None = None  # window metrics over [t0, t1] (simulated seconds)


class _Checker:
    """Reports problems of one campaign file, naming the table and key."""

    def __init__(self, path: str):
        self.path = path
        self.directory = os.path.dirname(os.path.abspath(path))

    def fail(self, where: str, problem: str, fix: str) -> InputError:
        return InputError(self.path, where, problem, fix)

    def keys(self, where: str, table: Any, allowed: tuple[str, ...]) -> dict:
        if not isinstance(table, dict):
            raise self.fail(where, f"is a {_toml_type(table)}, not a table", "write it as a [table] or {key = value}")
        unknown = [k for k in table if k not in allowed]
        if unknown:
            raise self.fail(f"{where}: key '{unknown[0]}'", "is not a known key",
                            "known keys here: " + ", ".join(allowed))
        return table

    def typed(self, where: str, value: Any, kind: type | tuple, what: str) -> Any:
        if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
            raise self.fail(where, f"is a boolean ({value})", f"give {what}")
        if not isinstance(value, kind):
            raise self.fail(where, f"is a {_toml_type(value)} ({value!r})", f"give {what}")
        return value

    def positive(self, where: str, value: Any, what: str, integer: bool = False, zero: bool = False) -> Any:
        self.typed(where, value, int if integer else (int, float), what)
        if not (value >= 0 if zero else value > 0) or value != value or value in (float("inf"),):
            raise self.fail(where, f"is {value!r}", f"give {what}")
        return value

    def folder_name(self, where: str, value: Any, used_for: str) -> str:
        """A name that becomes part of a file or folder name: it must stay one plain name inside
        the results folder ("" or "../../x" would write elsewhere)."""
        self.typed(where, value, str, "a name")
        unsafe = (not value.strip() or "/" in value or "\\" in value or ".." in value
                  or any(ord(c) < 32 or ord(c) == 127 for c in value)
                  or len(value.encode("utf-8")) > MAX_NAME_BYTES)
        if unsafe:
            raise self.fail(where, f"is {clip(value)!r}", f"it names {used_for}: give a non-empty name of at most "
                            f"{MAX_NAME_BYTES} bytes without '/', '\\', '..' or control characters, "
                            'e.g. name = "shutdown"')
        return value

    def file(self, where: str, value: Any, shipped: Callable[[], list[str]] | None, kind: str) -> str:
        """An existing path (relative to the campaign file) or, when `shipped` is given, a shipped name."""
        self.typed(where, value, str, f"the path of {kind}")
        candidate = value if os.path.isabs(value) else os.path.join(self.directory, value)
        if os.path.exists(candidate):
            if os.path.isdir(candidate):
                raise self.fail(where, f"{value!r} is a directory", f"give the path of {kind}")
            return os.path.normpath(candidate)
        names = shipped() if shipped else []
        stem = os.path.splitext(value)[0]
        if "/" not in value and os.sep not in value and stem in names:
            return stem
        hint = f" or a shipped name ({', '.join(names)})" if names else ""
        raise self.fail(where, f"{value!r}: no such file (looked for {candidate})",
                        f"give the path of {kind}, relative to the campaign file{hint}")


def _toml_type(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "table"}.get(
        type(value), type(value).__name__)


def load_study(path: str) -> Study:
    """Read and check campaign file `path` (InputError on any problem)."""
    path = str(path)
    raw = read_input_file(path, "a campaign file (TOML)")
    doc = decode_toml(path, raw, "a campaign file", MAX_NESTING)
    check = _Checker(path)
    check.keys("top level", doc, tuple(_TOP_KEYS))
    settings = check.keys("[campaign]", doc.get("campaign", {}), _CAMPAIGN_KEYS)
    study = Study(path=os.path.abspath(path),
                  name=check.folder_name("[campaign]: key 'name'", settings.get("name", _stem(path)),
                                         "the results folder NAME_results"),
                  platforms=_platforms(check, doc), workloads=[], deciders=[])
    study.workloads = _workloads(check, doc, {p.label for p in study.platforms})
    study.deciders = _deciders(check, doc)
    energy = settings.get("energy", False)
    energies = energy if isinstance(energy, list) else [energy]
    if not energies:
        raise check.fail("[campaign]: key 'energy'", "is an empty list", "give true, false or [false, true]")
    for value in energies:
        check.typed("[campaign]: key 'energy'", value, bool, "true, false or [false, true]")
    study.energy = list(dict.fromkeys(energies))
    study.repetitions = check.positive("[campaign]: key 'repetitions'", settings.get("repetitions", 1),
                                       "a whole number >= 1", integer=True)
    study.timeout_s = float(check.positive("[campaign]: key 'timeout'", settings.get("timeout", DEFAULT_TIMEOUT_S),
                                           "a number of seconds > 0"))
    study.reply_timeout_s = float(check.positive(
        "[campaign]: key 'reply_timeout'", settings.get("reply_timeout", DEFAULT_REPLY_TIMEOUT_S),
        "a number of seconds > 0 (at most 86400)"))
    if study.reply_timeout_s > 86400:
        raise check.fail("[campaign]: key 'reply_timeout'", f"is {study.reply_timeout_s:g}", "give at most 86400 s")
    study.keep_outputs = check.typed("[campaign]: key 'outputs'", settings.get("outputs", False), bool,
                                     "true or false")
    if "window" in settings:
        window = settings["window"]
        fix = "give [t0, t1], two times in seconds with t0 < t1, e.g. window = [0, 604800]"
        if not isinstance(window, list) or len(window) != 2:
            raise check.fail("[campaign]: key 'window'", f"is {window!r}", fix)
        for value in window:
            check.positive("[campaign]: key 'window'", value, fix, zero=True)
        if not window[0] < window[1]:
            raise check.fail("[campaign]: key 'window'", f"is {window!r}", fix)
        study.window = (float(window[0]), float(window[1]))
    _check_size(check, study)
    _try_deciders(check, study.deciders)
    return study


def _check_size(check: _Checker, study: Study) -> None:
    """Refuse a study of more than MAX_INSTANCES instances, counted before any is made."""
    pairs = sum(1 for platform in study.platforms for workload in study.workloads
                if workload.platforms is None or platform.label in workload.platforms)
    option_sets = sum(len(decider.combinations) for decider in study.deciders)
    total = pairs * option_sets * len(study.energy) * study.repetitions
    if total > MAX_INSTANCES:
        raise check.fail("the whole campaign", f"has {total:,} instances ({pairs:,} platform-workload pairs x "
                         f"{option_sets:,} decider option sets x {len(study.energy)} energy settings x "
                         f"{study.repetitions:,} repetitions)", _SPLIT_FIX)


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def _entries(check: _Checker, doc: dict, key: str, what: str) -> list[dict]:
    entries = doc.get(key)
    if entries is None:
        raise check.fail("top level", f"has no [[{key}]]", f"add at least one [[{key}]] table ({what})")
    if not isinstance(entries, list) or not entries:
        raise check.fail(f"[[{key}]]", "is empty" if isinstance(entries, list) else "is not a list of tables",
                         f"write one [[{key}]] table per {what}")
    return entries


def _unique(check: _Checker, key: str, labels: list[str]) -> None:
    seen: dict[str, int] = {}
    for index, label in enumerate(labels):
        if label in seen:
            raise check.fail(f"[[{key}]] #{index + 1}", f"has the same name {label!r} as #{seen[label] + 1}",
                             "give each a distinct name = \"...\"")
        seen[label] = index


def _platforms(check: _Checker, doc: dict) -> list[PlatformSpec]:
    from joulesim.simulator.platform.platform_loader import list_shipped_platforms

    def shipped() -> list[str]:
        return sorted({os.path.splitext(n)[0] for n in list_shipped_platforms()})

    specs = []
    for index, entry in enumerate(_entries(check, doc, "platforms", "platform")):
        where = f"[[platforms]] #{index + 1}"
        entry = check.keys(where, entry, _PLATFORM_KEYS)
        if "path" not in entry:
            raise check.fail(where, "has no 'path'", 'give path = "a platform file or shipped name"')
        source = check.file(f"{where}: key 'path'", entry["path"], shipped, "a platform file (.xml or .json)")
        label = check.typed(f"{where}: key 'name'", entry.get("name", _stem(entry["path"])), str, "a name")
        mmax = check.positive(f"{where}: key 'mmax'", entry.get("mmax", 0), "a whole number >= 0",
                              integer=True, zero=True)
        specs.append(PlatformSpec(label, source, mmax))
    _unique(check, "platforms", [s.label for s in specs])
    return specs


def _keyword_parameters(function: Callable, exclude: tuple[str, ...]) -> list[str]:
    return [name for name in inspect.signature(function).parameters if name not in exclude]


def _int_list(check: _Checker, where: str, value: Any, what: str) -> list[int]:
    values = value if isinstance(value, list) else [value]
    if not values:
        raise check.fail(where, "is an empty list", f"give at least one {what}")
    for item in values:
        check.positive(where, item, f"{what}s: whole numbers >= 0", integer=True, zero=True)
    return list(dict.fromkeys(values))


def _workloads(check: _Checker, doc: dict, platform_labels: set[str]) -> list[WorkloadSpec]:
    from joulesim.simulator.workload.workload_loader import list_shipped_workloads
    from joulesim.workload_tools.swf import convert_swf

    specs = []
    labels = []
    for index, entry in enumerate(_entries(check, doc, "workloads", "workload")):
        where = f"[[workloads]] #{index + 1}"
        entry = check.keys(where, entry, _WORKLOAD_KEYS)
        kinds = [k for k in ("path", "trace", "generator") if k in entry]
        if len(kinds) != 1:
            raise check.fail(where, "has " + (" and ".join(kinds) if kinds else "none of path, trace, generator"),
                             "give exactly one: path = workload file or shipped name, trace = SWF file, "
                             "or generator = " + " | ".join(GENERATORS))
        kind = kinds[0]
        for key, needs in (("weeks", "trace"), ("convert", "trace"), ("seeds", "generator"),
                           ("parameters", "generator")):
            if key in entry and kind != needs:
                raise check.fail(f"{where}: key '{key}'", f"applies to a {needs}, not to a {kind}",
                                 f"remove it, or use {needs} = ...")
        platforms = None
        if "platforms" in entry:
            platforms = entry["platforms"]
            if not isinstance(platforms, list) or not platforms:
                raise check.fail(f"{where}: key 'platforms'", "is not a non-empty list",
                                 'give the names of [[platforms]], e.g. platforms = ["c32"]')
            for label in platforms:
                if label not in platform_labels:
                    raise check.fail(f"{where}: key 'platforms'", f"{label!r} names no [[platforms]]",
                                     "use one of: " + ", ".join(sorted(platform_labels)))
            platforms = tuple(platforms)
        if kind == "path":
            source = check.file(f"{where}: key 'path'", entry["path"], list_shipped_workloads,
                                "a Batsim workload JSON file")
            label = entry.get("name", _stem(entry["path"]))
            variants: list[tuple[str, int] | None] = [None]
            settings: dict[str, Any] = {}
        elif kind == "trace":
            source = check.file(f"{where}: key 'trace'", entry["trace"], None, "an SWF trace (plain or .gz)")
            label = entry.get("name", _stem(_stem(entry["trace"])))
            settings = check.keys(f"{where}: key 'convert'", entry.get("convert", {}),
                                  tuple(_keyword_parameters(convert_swf, ("path", "week"))))
            variants = ([("week", w) for w in _int_list(check, f"{where}: key 'weeks'", entry["weeks"], "week")]
                        if "weeks" in entry else [None])
        else:
            source = entry["generator"]
            if source not in GENERATORS:
                raise check.fail(f"{where}: key 'generator'", f"unknown generator {source!r}",
                                 "use one of: " + ", ".join(GENERATORS))
            label = entry.get("name", source)
            settings = check.keys(f"{where}: key 'parameters'", entry.get("parameters", {}),
                                  tuple(_keyword_parameters(generator(source), ("seed",))))
            variants = [("seed", s) for s in _int_list(check, f"{where}: key 'seeds'", entry.get("seeds", [0]),
                                                       "seed")]
        check.folder_name(f"{where}: key 'name'", label, "its converted or generated workload files")
        labels.append(label)
        for variant in variants:
            specs.append(WorkloadSpec(label, "file" if kind == "path" else kind, source, variant,
                                      tuple(sorted(settings.items())), platforms))
    _unique(check, "workloads", labels)
    return specs


def _deciders(check: _Checker, doc: dict) -> list[DeciderSpec]:
    specs = []
    for index, entry in enumerate(_entries(check, doc, "deciders", "decider")):
        where = f"[[deciders]] #{index + 1}"
        entry = check.keys(where, entry, _DECIDER_KEYS)
        if "edc_library" in entry:
            specs.append(_edc_decider(check, where, entry))
            continue
        for key in ("edc_init", "edc_isolated"):
            if key in entry:
                raise check.fail(f"{where}: key '{key}'", "goes with edc_library",
                                 'give edc_library = "path/to/libedc.so" (a Batsim 5 EDC library), or drop it')
        if ("decider" in entry) == ("command" in entry):
            raise check.fail(where, "has both decider and command" if "decider" in entry else
                             "has neither decider nor command",
                             'give decider = "easy" (a shipped name or "module:Class"), or command = '
                             '["program", "-s", "{endpoint}"] for an external decider')
        fixed = check.keys(f"{where}: key 'options'", entry.get("options", {}), tuple(entry.get("options", {})))
        grid = check.keys(f"{where}: key 'grid'", entry.get("grid", {}), tuple(entry.get("grid", {})))
        zipped = check.keys(f"{where}: key 'zip'", entry.get("zip", {}), tuple(entry.get("zip", {})))
        for table, values in (("options", fixed), ("grid", grid), ("zip", zipped)):
            for key, value in values.items():
                key_where = f"{where}: key '{table}.{key}'"
                if table != "options":
                    check.typed(key_where, value, list, f"a list of values, e.g. {key} = [1, 2]")
                    if not value:
                        raise check.fail(key_where, "is an empty list", "give at least one value")
                for item in (value if table != "options" else [value]):
                    check.typed(key_where, item, (str, int, float, bool), "strings, numbers or booleans")
        for first, second in (("options", grid), ("options", zipped), ("grid", zipped)):
            first_table = {"options": fixed, "grid": grid}[first]
            both = sorted(set(first_table) & set(second))
            if both:
                raise check.fail(f"{where}: key '{both[0]}'", "is given twice (in two of options, grid, zip)",
                                 "give each option in one of them")
        lengths = {len(v) for v in zipped.values()}
        if len(lengths) > 1:
            raise check.fail(f"{where}: key 'zip'", "holds lists of different lengths (" +
                             ", ".join(f"{k}: {len(v)}" for k, v in zipped.items()) + ")",
                             "zipped lists go together value by value: give them one length")
        count = count_options(grid, zipped)
        if count > MAX_INSTANCES:
            sizes = [f"{k}: {len(v)}" for k, v in grid.items()] + ([f"zip: {len(next(iter(zipped.values())))}"]
                                                                   if zipped else [])
            tables = " and ".join(name for name, table in (("grid", grid), ("zip", zipped)) if table)
            raise check.fail(f"{where}: {tables}", f"give {count:,} option combinations ("
                             + " x ".join(sizes) + ")", _SPLIT_FIX)
        combinations = expand_options(fixed, grid, zipped)
        if "decider" in entry:
            name = check.typed(f"{where}: key 'decider'", entry["decider"], str, 'a decider name, e.g. "easy"')
            if not name.strip():
                raise check.fail(f"{where}: key 'decider'", "is empty",
                                 'give a decider name (joulesim decide --list), e.g. "easy"')
            command = None
        else:
            command = check.typed(f"{where}: key 'command'", entry["command"], list,
                                  'a list of strings, e.g. ["batsched", "-s", "{endpoint}"]')
            if not command or not all(isinstance(w, str) for w in command):
                raise check.fail(f"{where}: key 'command'", "is not a non-empty list of strings",
                                 'e.g. command = ["batsched", "-v", "easy_bf", "-s", "{endpoint}"]')
            if not any("{endpoint}" in w for w in command):
                raise check.fail(f"{where}: key 'command'", "has no {endpoint} placeholder",
                                 "put {endpoint} where the program takes the endpoint it must serve")
            if combinations != [{}]:
                raise check.fail(where, "gives options to an external command",
                                 "write the options in the command line itself")
            name, command = None, tuple(command)
        label = check.typed(f"{where}: key 'name'", entry.get("name", name or os.path.basename(command[0])), str,
                            "a name")
        specs.append(DeciderSpec(label, name, command,
                                 tuple(tuple(sorted(options.items())) for options in combinations)))
    _unique(check, "deciders", [s.label for s in specs])
    return specs


def _edc_decider(check: _Checker, where: str, entry: dict) -> DeciderSpec:
    """A Batsim 5 EDC library; `edc_init` a string, or a list of them (one instance each)."""
    for key in ("decider", "command", "options", "grid", "zip"):
        if key in entry:
            raise check.fail(f"{where}: key '{key}'", "does not go with edc_library",
                             "an EDC library takes its settings as init data: edc_init = '{...}' (or a list of "
                             "them, one instance each)")
    library = check.file(f"{where}: key 'edc_library'", entry["edc_library"], None, "a Batsim 5 EDC library (.so)")
    inits = entry.get("edc_init", "")
    for item in (inits if isinstance(inits, list) else [inits]):
        check.typed(f"{where}: key 'edc_init'", item, str, "a string (the EDC's init data), or a list of strings")
    if isinstance(inits, list) and not inits:
        raise check.fail(f"{where}: key 'edc_init'", "is an empty list", "give at least one init string")
    isolated = check.typed(f"{where}: key 'edc_isolated'", entry.get("edc_isolated", False), bool, "true or false")
    label = check.typed(f"{where}: key 'name'", entry.get("name", os.path.basename(library)), str, "a name")
    combinations = tuple(((("edc_init", init),),) for init in (inits if isinstance(inits, list) else [inits]))
    return DeciderSpec(label, None, None, tuple(c[0] for c in combinations), library, isolated)


def _try_deciders(check: _Checker, deciders: list[DeciderSpec]) -> None:
    """Try every option combination of every decider (thousands take seconds: show progress)."""
    from joulesim.console.progress_bar import progress_bar

    total = sum(len(decider.combinations) for decider in deciders if decider.name is not None)
    with progress_bar(total, "checking decider options", "option set") as bar:
        for index, decider in enumerate(deciders):
            if decider.name is None:  # an external command: its options are in its command line
                continue
            for options in decider.combinations:
                _try_decider(check, f"[[deciders]] #{index + 1}", decider.name, dict(options))
                bar.update()


def _try_decider(check: _Checker, where: str, name: str, options: dict[str, Any]) -> None:
    """Build the decider once with these options: an unknown name, option or bad value is
    found now, not in the middle of the campaign."""
    from joulesim.deciders import load_decider
    from joulesim.run_simulation import option_text

    try:
        load_decider(name, {k: option_text(v) for k, v in options.items()})
    except JoulesimError as exc:
        shown = ", ".join(f"{k}={v}" for k, v in sorted(options.items())) or "no options"
        raise check.fail(f"{where} ({name}, {shown})", str(exc),
                         "fix the decider name or its options (see `joulesim decide --list`)") from None
