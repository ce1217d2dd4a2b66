"""pi-memory: durable, safe, searchable memory for coding agents.

``__version__`` is read from the installed package's metadata on first use: importing
``importlib.metadata`` costs 20-150 ms, which every ``pi-memory hook`` process (one per host event) would pay.
"""


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("pi-memory")
        except PackageNotFoundError:  # running from a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module 'pi_memory' has no attribute {name!r}")
