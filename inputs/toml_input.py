"""TOML input files (campaign files, RL training configurations): decoding with one error line
for every way a file can be hostile.

tomllib parses nested arrays and inline tables recursively (a file a few thousand levels deep
is a RecursionError), Python refuses integers of more than 4,300 digits with a ValueError, and
a file that parses may still nest so deep that later code (a JSON encoder, a recursive walk)
fails on it. Each becomes an InputError naming the file.
"""

from __future__ import annotations

import tomllib
from typing import Any

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import nests_deeper

__all__ = ["MAX_TOML_NESTING", "decode_toml"]

#: Configurations need a few levels; past this, a file is refused before anything walks it.
MAX_TOML_NESTING = 100


def decode_toml(path: str, raw: bytes, what: str, max_nesting: int = MAX_TOML_NESTING) -> dict[str, Any]:
    """The document of `raw`, read from `path` (`what` names the kind of file in messages)."""
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, "file", f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                         f"save {what} as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(path, "TOML syntax", str(exc), "see https://toml.io for the syntax") from None
    except RecursionError:
        raise InputError(path, "file", "nests arrays or inline tables about a thousand levels deep",
                         f"{what} needs a few levels, at most {max_nesting}") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise InputError(path, "TOML value", str(exc).split(";")[0], "write numbers of a few digits") from None
    if nests_deeper(document, max_nesting):
        raise InputError(path, "file", f"nests tables and arrays more than {max_nesting} levels deep",
                         f"{what} needs a few levels, at most {max_nesting}")
    return document
