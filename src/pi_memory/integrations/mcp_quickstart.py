"""Answer MCP's ``initialize`` on stdio before the SDK has finished importing.

Importing the mcp SDK and the CLI takes 1-2 s on a loaded 2-core machine, and clients time the server from
its start (Codex starts without a non-required server that is late). So ``pi-memory mcp`` (stdio) starts
here (:func:`run`, from :mod:`pi_memory.launch`): the process's standard input and output are swapped for
pipes, the real ``pi-memory mcp`` (the SDK server) is started on those pipes, and two threads relay lines:

* client -> server: the first line is read at once; when it is an ``initialize`` request and the answer to
  the same request is known, that answer goes to the client straight away, and the line is still passed on
  to the SDK (so its session is initialised exactly as usual);
* server -> client: every line is relayed, except the SDK's own answer to that ``initialize`` (already sent).

The known answer is the SDK's own from an earlier start, byte for byte, kept in the hook state folder
(:mod:`pi_memory.integrations.hooks.state`, ``mcp-initialize.json``) keyed by the requested protocol
version, pi-memory's version and the SDK's version (and this file's and the server module's modification
times). The first start with a new key waits for the SDK and stores its answer; when a later SDK answer
differs from the one sent, the stored one is replaced and a warning goes to standard error. Clients of the
2026-07-28 protocol, which send no ``initialize``, are simply relayed.

``PI_MEMORY_MCP_QUICKSTART=0`` turns all this off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
from pathlib import Path

from pi_memory.integrations.hooks import state

CACHE_FILE = "mcp-initialize.json"


def _key(protocol: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [protocol]
    for package in ("pi-memory", "mcp"):
        try:
            parts.append(version(package))
        except PackageNotFoundError:
            parts.append("?")
    here = Path(__file__).resolve()
    for source in (here, here.with_name("mcp_server.py")):
        try:
            parts.append(str(source.stat().st_mtime_ns))
        except OSError:
            parts.append("?")
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _cache_path() -> Path:
    return state.state_dir() / CACHE_FILE


def known_answer(request: dict) -> tuple[str, dict | None]:
    """``(cache key, the SDK's earlier result for this request or None)``."""
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    key = _key(str(params.get("protocolVersion", "")))
    result = state.read_json(_cache_path()).get(key)
    return key, result if isinstance(result, dict) else None


def remember(key: str, result: dict) -> None:
    cache = state.read_json(_cache_path())
    cache[key] = result
    for old in list(cache)[:-20]:
        del cache[old]
    state.write_json(_cache_path(), cache)


def _as_request(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Relay:
    """The two relay threads between the real standard streams and the SDK's pipes."""

    def __init__(self) -> None:
        self.real_in, self.real_out = os.dup(0), os.dup(1)
        to_sdk_r, self.to_sdk = os.pipe()
        self.from_sdk, from_sdk_w = os.pipe()
        os.dup2(to_sdk_r, 0)
        os.dup2(from_sdk_w, 1)
        os.close(to_sdk_r)
        os.close(from_sdk_w)
        self.init_id: object = None
        self.init_key: str | None = None
        self.sent: dict | None = None
        self._write_lock = threading.Lock()
        self._first_done = threading.Event()
        self.inbound = threading.Thread(target=self._client_to_sdk, name="mcp-relay-in", daemon=True)
        self.outbound = threading.Thread(target=self._sdk_to_client, name="mcp-relay-out", daemon=True)

    def start(self) -> None:
        self.inbound.start()
        self.outbound.start()

    def _send(self, data: bytes) -> None:
        with self._write_lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.real_out, view):]

    def _client_to_sdk(self) -> None:
        try:
            with os.fdopen(self.real_in, "rb", buffering=0) as raw:
                reader = iter(raw.readline, b"")
                first = next(reader, b"")
                request = _as_request(first) if first else None
                if request and request.get("method") == "initialize" and "id" in request:
                    self.init_id = request["id"]
                    try:
                        self.init_key, self.sent = known_answer(request)
                    except Exception:  # noqa: BLE001 - no known answer: the SDK answers, only later
                        self.init_key, self.sent = None, None
                    if self.sent is not None:
                        self._send(json.dumps({"jsonrpc": "2.0", "id": self.init_id, "result": self.sent},
                                              separators=(",", ":"), ensure_ascii=False).encode() + b"\n")
                self._first_done.set()
                if first:
                    os.write(self.to_sdk, first)
                for line in reader:
                    os.write(self.to_sdk, line)
        except OSError:
            pass
        finally:
            self._first_done.set()
            with contextlib.suppress(OSError):
                os.close(self.to_sdk)  # the SDK sees end of input and shuts down as usual

    def _sdk_to_client(self) -> None:
        with os.fdopen(self.from_sdk, "rb", buffering=0) as raw:
            for line in iter(raw.readline, b""):
                self._first_done.wait()
                if self.init_id is not None and self._is_init_answer(line):
                    continue
                try:
                    self._send(line)
                except OSError:
                    return

    def _is_init_answer(self, line: bytes) -> bool:
        message = _as_request(line)
        if not message or message.get("id") != self.init_id or "result" not in message:
            return False
        self.init_id = None  # only the first answer with that id
        result = message["result"]
        if self.init_key is not None and result != self.sent:
            remember(self.init_key, result)
            if self.sent is not None:
                sys.stderr.write("pi-memory mcp: the early initialize answer differed from the SDK's; it is "
                                 "updated for the next start\n")
        return self.sent is not None


def run() -> None:
    """Start the relay, run ``pi-memory mcp`` on the pipes, then let the relay flush and exit."""
    relay = Relay()
    relay.start()
    code: object = 0
    try:
        from pi_memory.cli import main as cli_main

        cli_main()
    except SystemExit as exc:
        code = exc.code
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        os.close(1)  # the SDK's last output reaches the relay, which then sees its end
        relay.outbound.join(2.0)
        sys.stderr.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))
