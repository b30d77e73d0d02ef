"""`mypyc_attr` where mypy_extensions is not installed: the class options that mypyc reads when
it compiles a module (setup.py), as a decorator that returns the class as it is.

mypyc reads `@mypyc_attr(...)` from the source; at run time the decorator does nothing. Its
package, mypy_extensions, comes with mypy (a build requirement), not with joulesim's install.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

T = TypeVar("T")


def mypyc_attr(*attrs: str, **kwattrs: Any) -> Callable[[T], T]:
    """Leave the class as it is (mypyc compiles by these options; Python needs none)."""
    return lambda cls: cls
