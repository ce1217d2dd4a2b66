"""pi-memory: durable, safe, searchable memory for coding agents."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("pi-memory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
