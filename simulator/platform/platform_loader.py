"""Load a platform from a file path or from the name of a platform shipped with joulesim.

``load_platform("my.xml")`` reads SimGrid XML (:mod:`platform_xml`), ``load_platform("my.json")``
joulesim's native JSON (:mod:`platform_json`) or IRMaSim's JSON (:mod:`platform_irmasim`); ``load_platform("cluster32")`` (no such file)
loads the shipped ``joulesim/platforms/cluster32.xml``.

Every problem with the file (missing, a directory or device, malformed, hostile, too large,
inconsistent) is an :class:`InputError` naming the file, the element and the fix; the limits on
a platform's size are in :mod:`platform_checks`.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Mapping

from joulesim.inputs.input_error import InputError
from joulesim.simulator.platform.platform_checks import check_energy_properties
from joulesim.simulator.platform.platform_json import load_json_platform
from joulesim.simulator.platform.platform_model import Platform
from joulesim.simulator.platform.platform_xml import load_xml_platform

_PACKAGE = "joulesim.platforms"
_LOADERS = {".xml": load_xml_platform, ".json": load_json_platform}


def list_shipped_platforms() -> list[str]:
    """File names (with extension) of the platforms shipped in joulesim.platforms."""
    return sorted(
        entry.name
        for entry in resources.files(_PACKAGE).iterdir()
        if entry.is_file() and os.path.splitext(entry.name)[1].lower() in _LOADERS
    )


def shipped_platform_path(name: str) -> str:
    """Path of a shipped platform; `name` with or without extension (.xml preferred over .json)."""
    base = resources.files(_PACKAGE)
    candidates = [name] if os.path.splitext(name)[1].lower() in _LOADERS else [name + ext for ext in _LOADERS]
    for candidate in candidates:
        entry = base / candidate
        if entry.is_file():
            return str(entry)
    raise InputError(
        name, "platform", "no such file and no shipped platform of that name",
        "give the path of a .xml or .json platform file, or one of the shipped platforms: " + ", ".join(list_shipped_platforms()),
    )


def platform_file(path: str) -> str:
    """The file a platform argument names: a path, or the name of a shipped platform."""
    path = os.fspath(path)
    if not os.path.exists(path):
        if os.sep in path or (os.altsep and os.altsep in path) or not path:
            raise InputError(path, "platform", "no such file", "check the path, or give the name of a shipped platform: " + ", ".join(list_shipped_platforms()))
        path = shipped_platform_path(path)
    return path


def load_platform(path: str, master_host: str | None = None, platform_name: str | None = None,
                  added_roles: Mapping[str, str] | None = None, energy: bool = False) -> Platform:
    """Load a .xml (SimGrid) or .json (native or IRMaSim) platform, or a shipped platform by name.
    `platform_name` chooses one platform of an IRMaSim file that holds several; `added_roles`
    (host name -> role) is Batsim's --add-role-to-hosts; `energy` (-E) refuses a platform whose
    power properties cannot be read (platform_checks.check_energy_properties), which is loaded
    without it, as Batsim runs it."""
    path = platform_file(path)
    if os.path.isdir(path):
        raise InputError(path, "platform", "is a directory, not a platform file", "give a .xml or .json platform file")
    ext = os.path.splitext(path)[1].lower()
    loader = _LOADERS.get(ext)
    if loader is None:
        raise InputError(path, "platform", f"unknown platform file extension {ext or '(none)'!r}", "use a SimGrid .xml file or a joulesim .json file")
    if loader is load_json_platform:
        platform = loader(path, master_host, platform_name=platform_name, added_roles=added_roles)
        if energy:
            check_energy_properties(platform)
        return platform
    if platform_name is not None:
        raise InputError(path, "--platform-name", "only IRMaSim platform files (.json) hold several platforms",
                         "drop --platform-name")
    return loader(path, master_host, added_roles, energy=energy)
