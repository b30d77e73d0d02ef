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
simulator too. `--edc-isolated` loads it in a child process instead (edc_isolated.py).
"""

from __future__ import annotations

import ctypes
import os

from joulesim.protocol.errors import DeciderUnavailableError, JoulesimError

FORMAT_BINARY = 0x1
FORMAT_JSON = 0x2
SYMBOLS = ("batsim_edc_init", "batsim_edc_take_decisions", "batsim_edc_deinit")

_BUFFER = ctypes.POINTER(ctypes.c_uint8)
# The reply buffers, typed as char pointers: slicing one copies its bytes out in one step,
# several times faster than ctypes.string_at (which goes through a foreign-function call).
_REPLY = ctypes.POINTER(ctypes.c_char)


class EdcError(JoulesimError):
    """An EDC library that cannot be loaded or that reports a failure."""

    exit_code = 5


class EdcLibrary:
    """One loaded EDC library; `init` once, `take_decisions` per call, `close` at the end."""

    def __init__(self, path: str):
        self.path = path
        if not os.path.isfile(path):
            raise EdcError(f"{path}: no such EDC library file (give the path of a shared library, e.g. libfcfs.so)")
        try:
            # RTLD_DEEPBIND: the library's own symbols first (its batprotocol and flatbuffers,
            # not another copy that may already be loaded), as Batsim 5 loads it.
            self._library = ctypes.CDLL(os.path.abspath(path), mode=os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_DEEPBIND)
        except OSError as exc:
            raise EdcError(f"{path}: cannot be loaded as a shared library ({exc})") from None
        missing = [name for name in SYMBOLS if not hasattr(self._library, name)]
        if missing:
            raise EdcError(f"{path}: is not an EDC library: it does not export {', '.join(missing)} (an EDC "
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
        self._initialised = False

    def init(self, init_data: bytes) -> tuple[int, bytes]:
        """Call batsim_edc_init: (the flags it set, its reply: a message holding its hello)."""
        data = (ctypes.c_uint8 * max(len(init_data), 1)).from_buffer_copy(init_data or b"\0")
        flags, reply, size = ctypes.c_uint32(0), _REPLY(), ctypes.c_uint32(0)
        status = self._init(data, len(init_data), ctypes.byref(flags), ctypes.byref(reply), ctypes.byref(size))
        if status != 0:
            raise EdcError(f"{self.path}: batsim_edc_init returned {status} (not 0: the library could not "
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

    def close(self) -> None:
        if self._initialised:
            self._initialised = False
            self._deinit()


def _copy(pointer, size: int, path: str, function: str) -> bytes:
    if size == 0:
        return b""
    if not pointer:
        raise DeciderUnavailableError(f"{path}: {function} gave a NULL reply buffer of {size} bytes")
    return pointer[:size]
