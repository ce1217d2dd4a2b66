"""A team project server for the tests that time the team client: a real socket on 127.0.0.1 (optionally TLS),
one thread per connection, that hangs, answers or dribbles as the test says, and records when each connection
opened and when the client gave it up. Put on ``sys.path`` by the test modules and conftests that use it
(``--import-mode=importlib`` imports no conftest by name); the fixture is :func:`team_socket`."""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
import time
from pathlib import Path

import pytest

import pi_memory
from pi_memory.curated.snapshot import RULE

ENTRIES = {"entries": ["Deploys go out on Tuesdays"], "version": 1}
STATUS_LINE = b"HTTP/1.1 200 OK\r\n"  # a dribble after it: the headers never end
FLOOD_BYTES = 64 * 1024 * 1024  # what "flood" sends, fast: far past any answer a client reads
HEADERS = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n"  # the body never ends


class TeamSocket:
    """``mode``: ``"hang"`` accepts and never answers (those connections are in ``held``); ``"answer"``
    answers every request with ``answer`` (:data:`ENTRIES` unless set; bytes: sent as they are, as HTML) and HTTP
    status ``status`` (200);
    ``"flood"`` answers with :data:`FLOOD_BYTES` of body, as fast as the client reads; ``"dribble"`` reads the
    request, sends ``head`` at once, then one byte every ``every`` seconds for as long as the client listens. ``spans``: per connection, ``[opened,
    given up]`` (:func:`time.monotonic`; ``None`` while the client keeps it). ``tls``: ``(certfile, keyfile)``."""

    def __init__(self, tls: tuple[str, str] | None = None) -> None:
        self.mode, self.head, self.every = "hang", STATUS_LINE, 1.0
        self.answer: dict | bytes = ENTRIES
        self.status = 200
        self.flooded = 0  # body bytes "flood" got into the socket before the client went away
        self.held: list[socket.socket] = []
        self.spans: list[list[float | None]] = []
        self._lock = threading.Lock()
        self._tls = None
        if tls is not None:
            self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self._tls.load_cert_chain(*tls)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"{'https://localhost' if tls else 'http://127.0.0.1'}:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                span: list[float | None] = [time.monotonic(), None]
                self.spans.append(span)
            threading.Thread(target=self._one, args=(conn, span, self.mode), daemon=True).start()

    def _one(self, conn: socket.socket, span: list[float | None], mode: str) -> None:
        try:
            if self._tls is not None:
                conn = self._tls.wrap_socket(conn, server_side=True)
            if mode == "hang":
                self.held.append(conn)
                while conn.recv(65536):  # the request, then nothing until the client closes its side
                    pass
            elif mode == "answer":
                conn.recv(65536)
                raw = isinstance(self.answer, bytes)  # bytes: sent as they are, as an HTML page
                body = self.answer if raw else json.dumps(self.answer).encode()
                kind = "text/html" if raw else "application/json"
                conn.sendall(f"HTTP/1.1 {self.status} X\r\ncontent-type: {kind}\r\ncontent-length: ".encode()
                             + str(len(body)).encode() + b"\r\nconnection: close\r\n\r\n" + body)
            elif mode == "flood":
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(FLOOD_BYTES).encode() + b"\r\n\r\n")
                chunk = b" " * 65536
                for _ in range(FLOOD_BYTES // len(chunk)):
                    conn.sendall(chunk)
                    self.flooded += len(chunk)
            else:
                conn.recv(65536)
                conn.sendall(self.head)
                while True:
                    time.sleep(self.every)
                    conn.sendall(b" ")
        except (OSError, ValueError):  # the client went away (a reset, or a TLS socket it shut)
            pass
        finally:
            span[1] = time.monotonic()
            if mode != "hang":
                conn.close()

    def held_for(self, index: int, wait: float = 3.0) -> float | None:
        """Seconds the client kept connection ``index`` before giving it up (``None``: it still did after
        ``wait`` seconds more; a dribbling server notices it at its next byte, a hung one at once)."""
        ends = time.monotonic() + wait
        while self.spans[index][1] is None and time.monotonic() < ends:
            time.sleep(0.05)
        opened, closed = self.spans[index]
        return None if closed is None else closed - opened

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def team_env(tmp_path: Path, url: str | None, timeout: float = 10) -> dict[str, str]:
    """The environment of a pi-memory process with a HOME, data root, hook state and agent folder under
    ``tmp_path``, MEMORY.md, USER.md and a standing instruction, and a project ``proj`` (a git root); the settings
    point the project store at the team store ``acme`` on ``url`` (none: a local project store) with
    ``timeoutSeconds`` ``timeout``. Made for a subprocess; a test in this process sets the same variables."""
    data, agent, proj = tmp_path / "data", tmp_path / "agent", tmp_path / "proj"
    for folder in (data, agent, proj / ".git", tmp_path / "home"):
        folder.mkdir(parents=True, exist_ok=True)
    (data / "MEMORY.md").write_text("Builds run with make\n", encoding="utf-8")
    (data / "USER.md").write_text("Prefers short answers\n", encoding="utf-8")
    (data / "STANDING.md").write_text("Never push to main\n", encoding="utf-8")
    block = {"teamProjectStore": {"url": url, "project": "acme", "timeoutSeconds": timeout}} if url else {}
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_MEMORY_")}
    source = os.path.dirname(os.path.dirname(pi_memory.__file__))  # this checkout, whatever the cwd
    env.update(PYTHONPATH=os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")])),
               HOME=str(tmp_path / "home"), PI_MEMORY_DIR=str(data), PI_MEMORY_STATE_DIR=str(tmp_path / "state"),
               PI_CODING_AGENT_DIR=str(agent), PI_MEMORY_SERVER_TOKEN="team-token")
    return env


def unavailable(url: str, folder: str = "proj") -> str:
    """The project part a snapshot has when the team store ``acme`` at ``url`` did not answer at the start (the
    project's folder: ``folder``)."""
    return (f"{RULE}\nPROJECT MEMORY: {folder} (notes about this repository) [not available]\n{RULE}\n[The team "
            f"project store 'acme' on {url} could not be reached when this session started, so its entries are "
            "missing here. They are not lost: memory_read with target 'project' asks the server again; if that "
            "fails too, tell the user.]")


@pytest.fixture
def team_socket():
    from pi_memory.curated.team_client import forget_down

    forget_down()  # no server an earlier test found down (a port can come again) is skipped by a start here
    server = TeamSocket()
    yield server
    server.close()
    forget_down()


def cli_in_this_process(monkeypatch, tmp_path: Path, url: str, timeout: float = 1.0) -> None:
    """This process set up as a CLI run in ``tmp_path/proj`` whose project store is the team server at ``url``
    (:func:`team_env`), for commands run in process (``read_only_folder.cli`` / ``text_cli``)."""
    import os

    env = team_env(tmp_path, url, timeout)
    for name in [k for k in os.environ if k.startswith("PI_MEMORY_")]:
        monkeypatch.delenv(name)
    for name in ("HOME", "PI_MEMORY_DIR", "PI_MEMORY_STATE_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_SERVER_TOKEN"):
        monkeypatch.setenv(name, env[name])
    monkeypatch.chdir(tmp_path / "proj")
