"""A simulation's state as data: an object graph written without pickle and read back without
running anything the file names.

A checkpoint is a file users keep and move between machines; unpickling one would call whatever
the file names. Here the file can name classes only, and only joulesim's own and a few known
library types (`_LIBRARY_CLASSES`): an object is made with `cls.__new__(cls)` and its attributes
set, so reading a file runs no constructor, no `__setstate__`, nothing of the file's choosing. (A
class compiled by mypyc runs its own `__init__`, with its defaults, when it is made: the kernel's
classes take no required argument for that.)

The tree the encoder returns is JSON (orjson writes it). Plain values stay themselves: None, bools,
64-bit ints, finite floats, strings. Everything else is a list whose first item says what it is:

    ["r", id]                    a thing written before (shared things stay shared, cycles too)
    ["l", id, items]             list        ["t", id, items]  tuple      ["s", id, items]  set
    ["d", id, keys, values]      dict   ["dk", id, "Counter" | "OrderedDict", keys, values]
    ["dd", id, default, keys, values]  defaultdict       ["q", id, maxlen, items]  deque   ["fs", items]  frozenset
    ["o", id, class, state]      an object of a known class (state: its __dict__ and __slots__)
    ["nt", id, class, items]     a tuple of a known class (a namedtuple)
    ["m", object, name]          a bound method      ["fn", "module:name"]  a function of joulesim
    ["pt", function, args, keywords]  a functools.partial (of a method or function above)
    ["g", id, description]       a generator (a running actor), described by the run's own code
    ["bm", object, name]         a built-in method of a list, dict, set, deque, bytearray or file
    ["c", "module:name"]         a class             ["e", "module:name", member]  an enum member
    ["i", hex]  a large int      ["f", "inf"]  inf, -inf, nan     ["by", base64]  bytes  ["ba", id, base64]  bytearray
    ["np", id, dtype, shape, base64]  a numpy array  ["ns", dtype, value]  a numpy scalar
    ["rg", start, stop, step]    range      ["cn", id, next]  itertools.count
    ["sio", id, text]            io.StringIO        ["file", id, path]  an output file (reopened to append)
    ["env", id, now, queue, eid] simpy's Environment (its calendar)
    ["x", index]                 a thing of the run's inputs (the platform, a workload, a job...),
                                 found again in the inputs read anew (`externals`)
    ["k", name]                  a thing the resuming run gives (the decider link...)

Closures, generators, lambdas and objects of other classes cannot be written: the error names
the first one met and where it was reached from.
"""

from __future__ import annotations

import base64
import collections
import enum
import functools
import importlib
import inspect
import io
import itertools
import math
import types
from typing import Any, Callable, Iterable

import simpy

#: Classes outside joulesim whose objects a simulation's state holds (made with __new__, their
#: attributes set; tuples of a class with tuple.__new__).
_LIBRARY_CLASSES = {"procset:ProcSet", "procset:ProcInt"}
_JOULESIM = "joulesim."
_SMALL = 1 << 63
#: The built-in types whose bound methods a state may hold (besides files').
_BUILTIN_METHOD_OWNERS = {list, dict, set, collections.deque, bytearray, io.StringIO}
_FLOATS = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


class StateCodecError(ValueError):
    """A state that cannot be written, or a file whose state cannot be read (says which thing)."""


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _known_class_name(name: str) -> bool:
    module, _, qualname = name.partition(":")
    return (module.startswith(_JOULESIM) or name in _LIBRARY_CLASSES) and "<" not in qualname and bool(qualname)


def external_objects(roots: Iterable[Any]) -> list[Any]:
    """The objects reachable from `roots` (the run's inputs), in a walk whose order depends only on
    their content: the same inputs read again give the same list, so a position names an object."""
    found: list[Any] = []
    seen: set[int] = set()
    stack = list(reversed(list(roots)))
    while stack:
        thing = stack.pop()
        kind = type(thing)
        if kind in (str, int, float, bool, type(None), bytes) or id(thing) in seen:
            continue
        if isinstance(thing, (type, types.FunctionType, types.MethodType, types.ModuleType, types.BuiltinFunctionType)):
            continue
        seen.add(id(thing))
        found.append(thing)
        if isinstance(thing, dict):
            children = [item for pair in thing.items() for item in pair]
        elif isinstance(thing, (list, tuple, set, frozenset, collections.deque)):
            children = sorted(thing, key=repr) if isinstance(thing, (set, frozenset)) else list(thing)
        else:
            children = [value for _, value in _attributes(thing)]
        stack.extend(reversed(children))
    return found


def _attributes(thing: Any) -> list[tuple[str, Any]]:
    """An object's attributes: its __dict__'s, then its classes' __slots__ that are set."""
    pairs = list(getattr(thing, "__dict__", {}).items())
    for name in _slots(type(thing)):
        try:
            pairs.append((name, object.__getattribute__(thing, name)))
        except AttributeError:  # (a slot never set)
            pass
    return pairs


def _slots(cls: type) -> tuple[str, ...]:
    """The names of a class's slots, its bases' included (but __dict__ and __weakref__), and of a
    class compiled by mypyc (setup.py) its attributes (`__mypyc_attrs__`: it has neither)."""
    names = _SLOTS.get(cls)
    if names is None:
        found: list[str] = []
        for klass in cls.__mro__:
            slots = klass.__dict__.get("__slots__", ())
            found.extend((slots,) if isinstance(slots, str) else slots)
            found.extend(klass.__dict__.get("__mypyc_attrs__", ()))
        names = _SLOTS[cls] = tuple(dict.fromkeys(name for name in found if name not in ("__dict__", "__weakref__")))
    return names


_SLOTS: dict[type, tuple[str, ...]] = {}


def place_text(where: Any) -> str:
    """The text of an encoder's `where` (where a thing was reached from)."""
    parts = []
    while type(where) is tuple:
        where, separator, key = where
        parts.append(f"[{key!r:.40}]" if separator == "[" else f"{separator}{key}" + (")" if separator.startswith(" (") else ""))
    return where + "".join(reversed(parts))


class StateEncoder:
    """Writes object graphs as the tree above. `externals`: the inputs' objects (external_objects);
    `given`: id(thing) -> the name under which the resuming run gives it back."""

    def __init__(self, externals: list[Any] = (), given: dict[int, str] | None = None,
                 file_path: Callable[[Any], str | None] = lambda handle: None,
                 generators: "Callable[[StateEncoder, Any, Any], Any] | None" = None):
        self._external = {id(thing): index for index, thing in enumerate(externals)}
        self._given = given or {}
        self._file_path = file_path
        # (a generator's description, ["g", ...], or an error: the run's actors, which only it knows)
        self._generators = generators
        self._ids: dict[int, int] = {}
        self._keep: list[Any] = []  # (the things numbered: alive while their ids mean them)

    def encode(self, thing: Any, where: Any = "the state") -> Any:
        """The tree of `thing`; `where` names it in errors (a string, or (parent, separator, key),
        made into text only for an error)."""
        kind = type(thing)
        if kind is str or kind is bool or thing is None:
            return thing
        if kind is int:
            return thing if -_SMALL <= thing < _SMALL else ["i", hex(thing)]
        if kind is float:
            if math.isfinite(thing):
                return thing
            return ["f", "nan" if thing != thing else ("inf" if thing > 0 else "-inf")]
        key = id(thing)
        number = self._ids.get(key)
        if number is not None:
            return ["r", number]
        if key in self._given:
            return ["k", self._given[key]]
        if key in self._external:
            return ["x", self._external[key]]
        return self._encode_new(thing, kind, where)

    def _number(self, thing: Any) -> int:
        number = self._ids[id(thing)] = len(self._ids)
        self._keep.append(thing)
        return number

    def _encode_new(self, thing: Any, kind: type, where: Any) -> Any:
        encode = self.encode
        if kind is list:
            number = self._number(thing)
            return ["l", number, [encode(item, where) for item in thing]]
        if kind is dict:
            number = self._number(thing)
            return ["d", number, [encode(k, where) for k in thing], [encode(v, (where, "[", k)) for k, v in thing.items()]]
        if kind is tuple:
            number = self._number(thing)
            return ["t", number, [encode(item, where) for item in thing]]
        if kind is types.MethodType:
            function = thing.__func__
            if "<" in function.__qualname__:
                raise StateCodecError(f"{place_text(where)}: {function.__qualname__} is a closure, which a checkpoint cannot hold")
            return ["m", encode(thing.__self__, (where, " (the object of ", function.__qualname__)), function.__name__]
        if kind is types.BuiltinMethodType and not isinstance(thing.__self__, types.ModuleType):
            # (e.g. an output's `file.write` or a list's `append`, kept to save a lookup per row)
            return ["bm", encode(thing.__self__, (where, " (the object of ", thing.__name__)), thing.__name__]
        if kind is set:
            number = self._number(thing)
            return ["s", number, [encode(item, where) for item in sorted(thing, key=repr)]]
        if kind is frozenset:
            return ["fs", [encode(item, where) for item in sorted(thing, key=repr)]]
        if kind is collections.Counter or kind is collections.OrderedDict:
            number = self._number(thing)
            return ["dk", number, "Counter" if kind is collections.Counter else "OrderedDict",
                    [encode(k, where) for k in thing], [encode(v, where) for v in thing.values()]]
        if kind is collections.defaultdict:
            number = self._number(thing)
            return ["dd", number, encode(thing.default_factory, (where, " (its default", "")),
                    [encode(k, where) for k in thing], [encode(v, where) for v in thing.values()]]
        if kind is collections.deque:
            number = self._number(thing)
            return ["q", number, thing.maxlen, [encode(item, where) for item in thing]]
        if kind is range:
            return ["rg", thing.start, thing.stop, thing.step]
        if kind is bytes:
            return ["by", base64.b64encode(thing).decode()]
        if kind is bytearray:
            number = self._number(thing)
            return ["ba", number, base64.b64encode(thing).decode()]
        if kind is itertools.count:
            number = self._number(thing)
            return ["cn", number, int(repr(thing)[len("count("):-1])]
        if kind is io.StringIO:
            number = self._number(thing)
            return ["sio", number, thing.getvalue()]
        if kind is simpy.Environment:
            number = self._number(thing)
            return ["env", number, encode(thing._now, where), encode(thing._queue, (where, " (the calendar", "")),
                    encode(thing._eid, where)]
        if kind is types.FunctionType:
            name = _class_name(thing)
            if not name.startswith(_JOULESIM) or "<" in thing.__qualname__ or thing.__closure__:
                raise StateCodecError(f"{place_text(where)}: {thing.__qualname__} is a closure or a function outside joulesim, "
                                      "which a checkpoint cannot hold")
            return ["fn", name]
        if kind is type or isinstance(thing, type):
            name = _class_name(thing)
            if not (_known_class_name(name) or thing.__module__ == "builtins"):
                raise StateCodecError(f"{place_text(where)}: the class {name} is not one a checkpoint may name")
            return ["c", name]
        if isinstance(thing, enum.Enum):
            return ["e", _class_name(kind), thing.name]
        if isinstance(thing, io.IOBase):
            path = self._file_path(thing)
            if path is None:
                raise StateCodecError(f"{place_text(where)}: an open file that is not one of the run's outputs")
            number = self._number(thing)
            return ["file", number, path]
        if kind.__module__ == "numpy":
            import numpy

            if isinstance(thing, numpy.ndarray):
                if thing.dtype.hasobject:
                    raise StateCodecError(f"{place_text(where)}: a numpy array of Python objects")
                number = self._number(thing)
                return ["np", number, thing.dtype.str, list(thing.shape), base64.b64encode(thing.tobytes()).decode()]
            if isinstance(thing, numpy.generic):
                return ["ns", thing.dtype.str, encode(thing.item(), where)]
        if kind is functools.partial:
            return ["pt", encode(thing.func, (where, " (a partial's function", "")),
                    [encode(item, where) for item in thing.args],
                    {key: encode(value, where) for key, value in thing.keywords.items()}]
        if kind is types.GeneratorType and self._generators is not None:
            number = self._number(thing)
            return ["g", number, self._generators(self, thing, where)]
        name = _class_name(kind)
        if isinstance(thing, (types.GeneratorType, types.CoroutineType)):
            raise StateCodecError(f"{place_text(where)}: a running actor ({thing.__qualname__}), which a checkpoint cannot hold")
        if not _known_class_name(name):
            raise StateCodecError(f"{place_text(where)}: an object of {name}, which a checkpoint cannot hold")
        if isinstance(thing, tuple):  # (a namedtuple of a known class)
            number = self._number(thing)
            return ["nt", number, name, [encode(item, where) for item in thing]]
        if isinstance(thing, (dict, list, set)):
            raise StateCodecError(f"{place_text(where)}: an object of {name}, a subclass of a container")
        number = self._number(thing)
        state = {}
        for attribute, value in _attributes(thing):  # (plain values inline: most attributes are)
            value_kind = type(value)
            if value_kind is str or value_kind is bool or value is None or (
                    value_kind is float and value - value == 0.0) or (value_kind is int and -_SMALL <= value < _SMALL):
                state[attribute] = value
            else:
                state[attribute] = encode(value, (where, ".", attribute))
        return ["o", number, name, state]


class StateDecoder:
    """Reads the tree back. `externals`: the inputs' objects (the same walk as the encoder's);
    `given`: name -> the thing the resuming run gives; `open_file(path)`: an output reopened."""

    def __init__(self, externals: list[Any] = (), given: dict[str, Any] | None = None,
                 open_file: Callable[[str], Any] | None = None,
                 generators: "Callable[[StateDecoder, Any], Any] | None" = None):
        self._externals = externals
        self._given = given or {}
        self._open_file = open_file
        self._generators = generators  # (a generator made again from its description)
        self._things: dict[int, Any] = {}

    def decode(self, node: Any) -> Any:
        if type(node) is not list:
            if type(node) in (str, int, float, bool) or node is None:
                return node
            raise StateCodecError(f"unexpected {type(node).__name__} in the state")
        if not node or type(node[0]) is not str:
            raise StateCodecError("a malformed entry in the state")
        try:
            return self._decode(node[0], node)
        except StateCodecError:
            raise
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
            raise StateCodecError(f"a malformed {node[0]!r} entry in the state ({exc})") from None

    def _keep(self, number: int, thing: Any) -> Any:
        if type(number) is not int or number in self._things:
            raise StateCodecError(f"entry number {number!r} given twice")
        self._things[number] = thing
        return thing

    def _decode(self, tag: str, node: list) -> Any:
        decode = self.decode
        if tag == "r":
            if node[1] not in self._things:
                raise StateCodecError(f"a reference to entry {node[1]!r}, not read yet")
            return self._things[node[1]]
        if tag == "l":
            items = self._keep(node[1], [])
            items.extend(decode(item) for item in node[2])
            return items
        if tag == "d":
            return self._fill(self._keep(node[1], {}), node[2], node[3])
        if tag == "t":
            return self._keep(node[1], tuple(decode(item) for item in node[2]))
        if tag == "dk" or tag == "dd":
            if tag == "dk":
                kinds = {"Counter": collections.Counter, "OrderedDict": collections.OrderedDict}
                mapping = self._keep(node[1], kinds[node[2]]())
            else:
                mapping = self._keep(node[1], collections.defaultdict())
                factory = decode(node[2])
                if factory is not None and not isinstance(factory, (type, types.FunctionType)):
                    raise StateCodecError("a defaultdict whose default is neither a class nor a function")
                mapping.default_factory = factory
            return self._fill(mapping, node[3], node[4])
        if tag == "s":
            items = self._keep(node[1], set())
            items.update(decode(item) for item in node[2])
            return items
        if tag == "fs":
            return frozenset(decode(item) for item in node[1])
        if tag == "q":
            queue = self._keep(node[1], collections.deque(maxlen=node[2]))
            queue.extend(decode(item) for item in node[3])
            return queue
        if tag == "i":
            return int(node[1], 16)
        if tag == "f":
            return _FLOATS[node[1]]
        if tag == "m":
            owner = decode(node[1])
            name = node[2]
            function = inspect.getattr_static(type(owner), name, None) if type(name) is str else None
            if not isinstance(function, types.FunctionType):
                raise StateCodecError(f"a method {name!r} that {_class_name(type(owner))} does not define")
            return types.MethodType(function, owner)
        if tag == "bm":
            owner = decode(node[1])
            name = node[2]
            if type(owner) not in _BUILTIN_METHOD_OWNERS and not isinstance(owner, io.IOBase) \
                    or type(name) is not str or not name.isidentifier() or name.startswith("_"):
                raise StateCodecError(f"a built-in method {name!r} of {type(owner).__name__}, which a checkpoint may not name")
            method = getattr(owner, name)
            if not isinstance(method, types.BuiltinMethodType):
                raise StateCodecError(f"{type(owner).__name__}.{name} is not a built-in method")
            return method
        if tag == "pt":
            function = decode(node[1])
            if not callable(function) or type(node[3]) is not dict:
                raise StateCodecError("a partial of something that is not a function")
            return functools.partial(function, *[decode(item) for item in node[2]],
                                     **{key: decode(value) for key, value in node[3].items()})
        if tag == "g":
            if self._generators is None:
                raise StateCodecError("a running actor in a state read without the run's actors")
            return self._keep(node[1], self._generators(self, node[2]))
        if tag == "fn":
            function = self._named(node[1])
            if not isinstance(function, types.FunctionType):
                raise StateCodecError(f"{node[1]} is not a function")
            return function
        if tag == "c":
            return self._class(node[1], builtins_too=True)
        if tag == "e":
            cls = self._class(node[1])
            if not issubclass(cls, enum.Enum):
                raise StateCodecError(f"{node[1]} is not an enumeration")
            return cls[node[2]]
        if tag == "rg":
            return range(node[1], node[2], node[3])
        if tag == "by":
            return base64.b64decode(node[1], validate=True)
        if tag == "ba":
            return self._keep(node[1], bytearray(base64.b64decode(node[2], validate=True)))
        if tag == "cn":
            return self._keep(node[1], itertools.count(node[2]))
        if tag == "sio":
            text = io.StringIO(newline="")
            text.write(node[2])  # (at its end, where the run writes next)
            return self._keep(node[1], text)
        if tag == "file":
            if self._open_file is None:
                raise StateCodecError("an output file in a state read without its outputs")
            return self._keep(node[1], self._open_file(node[2]))
        if tag == "env":
            environment = self._keep(node[1], simpy.Environment())
            environment._now = decode(node[2])
            environment._queue = decode(node[3])
            environment._eid = decode(node[4])
            return environment
        if tag == "np":
            import numpy

            dtype = numpy.dtype(node[2])
            if dtype.hasobject:
                raise StateCodecError("a numpy array of Python objects")
            data = base64.b64decode(node[4], validate=True)
            return self._keep(node[1], numpy.frombuffer(data, dtype=dtype).reshape(node[3]).copy())
        if tag == "ns":
            import numpy

            dtype = numpy.dtype(node[1])
            if dtype.hasobject:
                raise StateCodecError("a numpy scalar of a Python object")
            return dtype.type(decode(node[2]))
        if tag == "x":
            index = node[1]
            if type(index) is not int or not 0 <= index < len(self._externals):
                raise StateCodecError(f"a reference to input object {index!r}, which the inputs do not have")
            return self._externals[index]
        if tag == "k":
            if node[1] not in self._given:
                raise StateCodecError(f"a reference to {node[1]!r}, which the resuming run does not give")
            return self._given[node[1]]
        if tag == "nt":
            cls = self._class(node[2])
            if not issubclass(cls, tuple):
                raise StateCodecError(f"{node[2]} is not a tuple class")
            return self._keep(node[1], tuple.__new__(cls, [decode(item) for item in node[3]]))
        if tag == "o":
            cls = self._class(node[2])
            if issubclass(cls, (tuple, dict, list, set, enum.Enum, type)) or isinstance(cls, type) and issubclass(cls, io.IOBase):
                raise StateCodecError(f"{node[2]} cannot be made from its attributes")
            thing = self._keep(node[1], cls.__new__(cls))
            state = node[3]
            if type(state) is not dict:
                raise StateCodecError(f"the attributes of a {node[2]} are not a mapping")
            has_dict = hasattr(thing, "__dict__")
            slots = set(_slots(cls))
            for attribute, value in state.items():
                if has_dict and attribute not in slots:
                    thing.__dict__[attribute] = decode(value)
                elif attribute in slots:
                    object.__setattr__(thing, attribute, decode(value))
                else:
                    raise StateCodecError(f"{node[2]} has no attribute {attribute!r}")
            return thing
        raise StateCodecError(f"an entry of unknown kind {tag!r}")

    def _fill(self, mapping: dict, keys: list, values: list) -> dict:
        if len(keys) != len(values):
            raise StateCodecError("a mapping entry whose keys and values differ in number")
        decode = self.decode
        for key, value in zip(keys, values):
            mapping[decode(key)] = decode(value)
        return mapping

    def _class(self, name: Any, builtins_too: bool = False) -> type:
        if type(name) is not str:
            raise StateCodecError("a class named by something else than its name")
        if builtins_too and name.startswith("builtins:"):
            import builtins

            cls = getattr(builtins, name.partition(":")[2], None)
            if isinstance(cls, type):
                return cls
            raise StateCodecError(f"{name} is not a class")
        cls = self._named(name)
        if not isinstance(cls, type):
            raise StateCodecError(f"{name} is not a class")
        return cls

    @staticmethod
    def _named(name: str) -> Any:
        """A class or function of joulesim (or one of _LIBRARY_CLASSES), by "module:qualified name"."""
        if not _known_class_name(name):
            raise StateCodecError(f"{name!r} is not a name a checkpoint may use (joulesim's own classes only)")
        module_name, _, qualname = name.partition(":")
        try:
            thing: Any = importlib.import_module(module_name)
        except ImportError:
            raise StateCodecError(f"{module_name} is not a module of this joulesim") from None
        for part in qualname.split("."):
            thing = inspect.getattr_static(thing, part, None)
            if thing is None:
                raise StateCodecError(f"{name} is not in this joulesim")
        return thing
