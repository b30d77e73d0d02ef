"""Batsim's -r/--add-role-to-hosts: roles given on the command line, as host name -> role.

Batsim 4.2.1 (batsim.cpp) takes each value as HOSTS:ROLE, HOSTS being host names separated by
commas (`-r host8:master -r host1,host2:storage`); a later value for a host replaces an
earlier one. The roles are checked against the platform when it is loaded
(platform_checks.build_platform).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from joulesim.inputs.input_error import InputError
from joulesim.inputs.json_input import shown

_FIX = "give HOSTS:ROLE, e.g. -r host1,host2:storage (roles: master, storage, compute_node)"


def host_roles(value: Mapping[str, str] | Sequence[str] | str | None) -> dict[str, str]:
    """Host name -> role, from Batsim's HOSTS:ROLE strings or from a mapping already."""
    if not value:
        return {}
    if isinstance(value, Mapping):
        for name, role in value.items():
            if not isinstance(name, str) or not isinstance(role, str):
                raise InputError("add_role_to_hosts", f"entry {shown(name)}", f"maps to {shown(role)}",
                                 "map host names (strings) to roles (strings), e.g. {'io0': 'storage'}")
        return dict(value)
    roles: dict[str, str] = {}
    for item in [value] if isinstance(value, str) else value:
        if not isinstance(item, str) or item.count(":") != 1:
            raise InputError("--add-role-to-hosts", shown(item), "must hold exactly one ':'", _FIX)
        hosts, role = item.split(":")
        if not role or not all(hosts.split(",")):
            raise InputError("--add-role-to-hosts", shown(item), "has an empty host name or role", _FIX)
        for host in hosts.split(","):
            roles[host] = role
    return roles
