"""An External Decision Component loaded as a shared library, called as Batsim 5 calls it.

The library exposes three C functions (Batsim 5's test/edc-lib/batsim_edc.h):

    uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size,
                            uint32_t *flags, uint8_t **reply_data, uint32_t *reply_size);
    uint8_t batsim_edc_take_decisions(const uint8_t *what_happened, uint32_t what_happened_size,
                                      uint8_t **decisions, uint32_t *decisions_size);
    uint8_t batsim_edc_deinit(void);

Each returns 0 on success. `flags` chooses the format (FORMAT_BINARY or FORMAT_JSON); the reply
buffers belong to the library and stay valid until its next call, so they are copied at once.
A JSON message goes in as a NUL-terminated C string whose size counts the NUL, as Batsim does.

The library runs in this process: a crash in it (a segmentation fault, an abort) ends the
simulator too. `--edc-isolated` loads it in a child process instead (edc_isolated.py). Before
anything of it runs, the file is checked (check_library_file): a regular file, and, for an ELF
file, every segment its program headers map within the file (dlopen of a truncated copy dies of
SIGBUS). It is loaded by libc's dlopen called through ctypes, which releases the GIL, so that a
watchdog thread (edc_watchdog.py) can end a run whose library never returns, even from its
constructors; init, take_decisions and deinit release it too (ctypes.CDLL's functions).
"""

from __future__ import annotations

import ctypes
import os
import stat
import struct
from time import monotonic
from typing import Any

from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError

FORMAT_BINARY = 0x1
FORMAT_JSON = 0x2
SYMBOLS = ("batsim_edc_init", "batsim_edc_take_decisions", "batsim_edc_deinit")

_BUFFER = ctypes.POINTER(ctypes.c_uint8)
# The reply buffers, typed as char pointers: slicing one copies its bytes out in one step,
# several times faster than ctypes.string_at (which goes through a foreign-function call).
_REPLY = ctypes.POINTER(ctypes.c_char)


class EdcError(JoulesimError):
    """An EDC library that reports a failure while it runs (take_decisions returns non-zero)."""

    exit_code = 5


class EdcInputError(EdcError):
    """What joulesim refuses before any output, as it refuses an input file or a command-line
    value (exit status 2): an EDC library file that is missing, not a regular file, truncated,
    not a shared library or without the three functions; init data it cannot pass; an init that
    refuses its data (batsim_edc_init returning non-zero)."""

    exit_code = 2


_PT_LOAD = 1


def check_library_file(path: str) -> None:
    """Refuse, naming `path`, a file that cannot be an EDC library, before any of it runs or is
    mapped: missing, not a regular file (a directory, a device, a FIFO), or an ELF file cut short
    (a segment its program headers map lies beyond its end: dlopen would die of SIGBUS). Other
    files are left to dlopen, which says what it finds."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise EdcInputError(f"{path}: no such EDC library file (give the path of a shared library, e.g. "
                            "libfcfs.so)") from None
    except OSError as exc:
        raise EdcInputError(f"{path}: cannot read the EDC library file: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise EdcInputError(f"{path}: is not a regular file (a directory, a device or a FIFO cannot be an EDC "
                            "library; give the path of a shared library, e.g. libfcfs.so)")
    try:
        with open(path, "rb") as file:
            header = file.read(64)
            if header[:4] != b"\x7fELF" or len(header) < 6 or header[4] not in (1, 2) or header[5] not in (1, 2):
                return  # not ELF (or an ELF kind not known here): dlopen says what it is
            wide, order = header[4] == 2, "<" if header[5] == 1 else ">"
            if len(header) < (64 if wide else 52):
                raise _truncated(path, 64 if wide else 52, info.st_size)
            if wide:
                phoff, = struct.unpack_from(order + "Q", header, 32)
                entry_size, count = struct.unpack_from(order + "HH", header, 54)
                layout, minimum = order + "I4xQ16xQ", 56  # p_type, p_offset, p_filesz
            else:
                phoff, = struct.unpack_from(order + "I", header, 28)
                entry_size, count = struct.unpack_from(order + "HH", header, 42)
                layout, minimum = order + "II8xI", 32
            if count == 0:
                return
            if entry_size < minimum or phoff + entry_size * count > info.st_size:
                raise _truncated(path, phoff + max(entry_size, minimum) * count, info.st_size)
            file.seek(phoff)
            table = file.read(entry_size * count)
    except OSError as exc:
        raise EdcInputError(f"{path}: cannot read the EDC library file: {exc.strerror}") from None
    for index in range(count):
        kind, offset, size = struct.unpack_from(layout, table, index * entry_size)
        if kind == _PT_LOAD and offset + size > info.st_size:
            raise _truncated(path, offset + size, info.st_size)


def _truncated(path: str, needed: int, size: int) -> EdcInputError:
    return EdcInputError(f"{path}: is a truncated or damaged ELF file: its headers place {needed} bytes of it, the "
                         f"file holds {size} (a copy cut short? build or copy the library again)")


def _load(path: str) -> Any:
    """The library loaded with dlopen (its constructors run), the GIL released meanwhile."""
    # RTLD_DEEPBIND: the library's own symbols first (its batprotocol and flatbuffers, not another
    # copy that may already be loaded), as Batsim 5 loads it.
    mode = os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_DEEPBIND
    absolute = os.path.abspath(path)
    try:
        libc = ctypes.CDLL(None)
        dlopen, dlerror = libc.dlopen, libc.dlerror
    except (OSError, AttributeError):  # (no dlopen in the process's namespace: ctypes' own, GIL held)
        return ctypes.CDLL(absolute, mode=mode)
    dlopen.argtypes, dlopen.restype = [ctypes.c_char_p, ctypes.c_int], ctypes.c_void_p
    dlerror.argtypes, dlerror.restype = [], ctypes.c_char_p
    handle = dlopen(os.fsencode(absolute), mode)
    if not handle:
        reason = dlerror()
        raise OSError(os.fsdecode(reason) if reason else "dlopen failed")
    return ctypes.CDLL(absolute, mode=mode, handle=handle)


class EdcLibrary:
    """One loaded EDC library; `init` once, `take_decisions` per call, `close` at the end."""

    def __init__(self, path: str, watchdog: Any = None):
        """`watchdog` (an edc_watchdog.CallWatchdog, or None): told of each call into the library
        (loading it included), so that it can end a run whose call never returns."""
        self.path = path
        self._watchdog = watchdog
        self._initialised = False
        check_library_file(path)
        try:
            self._library = self._watched("dlopen (which runs the library's constructors)", _load, path)
        except OSError as exc:
            raise EdcInputError(f"{path}: cannot be loaded as a shared library ({exc})") from None
        missing = [name for name in SYMBOLS if not hasattr(self._library, name)]
        if missing:
            raise EdcInputError(f"{path}: is not an EDC library: it does not export {', '.join(missing)} (an EDC "
                           "library exports batsim_edc_init, batsim_edc_take_decisions and batsim_edc_deinit "
                           'with C linkage: extern "C")')
        self._init = self._library.batsim_edc_init
        self._init.argtypes = [_BUFFER, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(_REPLY),
                               ctypes.POINTER(ctypes.c_uint32)]
        self._init.restype = ctypes.c_uint8
        self._take = self._library.batsim_edc_take_decisions
        # Called once per decision: without argtypes, which more than halves ctypes' cost of a
        # call, so take_decisions passes only what needs no conversion: the message as bytes (a
        # char pointer to the bytes object's own buffer, no copy; the library only reads it),
        # its size as a c_uint32, and pointers to the out-parameters, made once here (the
        # library writes both at each call).
        self._take.argtypes = None
        self._take.restype = ctypes.c_uint8
        self._reply, self._reply_size = _REPLY(), ctypes.c_uint32(0)
        self._reply_at, self._reply_size_at = ctypes.pointer(self._reply), ctypes.pointer(self._reply_size)
        self._deinit = self._library.batsim_edc_deinit
        self._deinit.argtypes = []
        self._deinit.restype = ctypes.c_uint8
        if watchdog is not None:
            self.take_decisions = self._take_decisions_watched  # type: ignore[method-assign]

    def _watched(self, function: str, call: Any, *arguments: Any) -> Any:
        """`call(*arguments)`, the watchdog (if any) told that `function` runs meanwhile."""
        watchdog = self._watchdog
        if watchdog is None:
            return call(*arguments)
        watchdog.call = (monotonic(), function)
        try:
            return call(*arguments)
        finally:
            watchdog.call = None

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        """Call batsim_edc_init: (the flags it set, its reply: a message holding its hello)."""
        data = (ctypes.c_uint8 * max(len(init_data), 1)).from_buffer_copy(init_data or b"\0")
        flags, reply, size = ctypes.c_uint32(0), _REPLY(), ctypes.c_uint32(0)
        status = self._watched("batsim_edc_init", self._init, data, len(init_data), ctypes.byref(flags),
                               ctypes.byref(reply), ctypes.byref(size))
        if status != 0:
            raise EdcInputError(f"{self.path}: batsim_edc_init returned {status} (not 0: the library could not "
                           "initialise itself; check the init data given with --edc-init or --edc-init-file)")
        self._initialised = True
        return flags.value, _copy(reply, size.value, self.path, "batsim_edc_init")

    def take_decisions(self, message: bytes) -> bytes:
        """Call batsim_edc_take_decisions with one message; its reply message."""
        status = self._take(bytes(message), ctypes.c_uint32(len(message)), self._reply_at, self._reply_size_at)
        if status != 0:
            raise EdcError(f"{self.path}: batsim_edc_take_decisions returned {status} (not 0: the library "
                           "reported that it could not take decisions)")
        return _copy(self._reply, self._reply_size.value, self.path, "batsim_edc_take_decisions")

    _take_decisions_unwatched = take_decisions

    def _take_decisions_watched(self, message: bytes) -> bytes:
        watchdog = self._watchdog
        watchdog.call = (monotonic(), "batsim_edc_take_decisions")
        try:
            return self._take_decisions_unwatched(message)
        finally:
            watchdog.call = None

    def close(self) -> None:
        """Call batsim_edc_deinit (once, if init succeeded)."""
        if self._initialised:
            self._initialised = False
            self._watched("batsim_edc_deinit", self._deinit)


def _copy(pointer, size: int, path: str, function: str) -> bytes:
    if size == 0:
        return b""
    if not pointer:
        raise DeciderUnavailableError(f"{path}: {function} gave a NULL reply buffer of {size} bytes")
    return pointer[:size]
