"""Lazy public names for a package ``__init__``: ``from pi_memory.index import open_index`` keeps working, but
the module behind a name is imported when the name is first used, not when the package is.

A host that runs a process per event (the hooks of :mod:`pi_memory.integrations.hooks`, one per prompt) would
otherwise import every module a package exports -- numpy, pydantic, the whole index -- to use one of them. A
package lists its exports by module (relative name -> space-separated public names)::

    __getattr__, __dir__ = lazy_exports(__name__, {".db": "open_index migrate", ".search": "session_search"})

A public name must not also be a submodule's name (``pkg.dream`` the function vs ``pkg/dream.py``): importing
the submodule would set the package attribute to the module. Such a package keeps eager imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, modules: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package``, exporting ``modules``' names on first use."""
    where = {name: module for module, names in modules.items() for name in names.split()}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
