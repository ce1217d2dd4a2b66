"""Answer MCP's ``initialize`` and ``tools/list`` on stdio before the SDK has finished importing.

Importing the mcp SDK and the CLI takes 1-2 s on a loaded 2-core machine, and clients time the server from
its start (Codex starts without a non-required server that is late). So ``pi-memory mcp`` (stdio) starts
here (:func:`run`, from :mod:`pi_memory.launch`): the process's standard input and output are swapped for
pipes, the real ``pi-memory mcp`` (the SDK server) is started on those pipes, and two threads relay lines:

* client -> server: the first line is read at once; when it is an ``initialize`` request and the answer to
  the same request is known, that answer goes to the client straight away, and the line is still passed on
  to the SDK (so its session is initialised exactly as usual). The same for the session's first
  ``tools/list`` request without a cursor, once the session began with an ``initialize``;
* server -> client: every line is relayed, except the SDK's own answers to those requests (already sent).

A known answer is the SDK's own from an earlier start, byte for byte, kept in the hook state folder
(:mod:`pi_memory.integrations.hooks.state`). ``initialize`` (``mcp-initialize.json``) is keyed by the
requested protocol version, pi-memory's version and the SDK's version (and this file's and the server
module's modification times). ``tools/list`` (``mcp-tools-list.json``) depends on the settings too (which
tools are served and how their descriptions read: the prompt mode, ``toolEnabled``, the session-search
variant), so its key adds the ``initialize`` key, the request's parameters, the working folder, the
command line (less ``--index-interval`` and ``--json``), the variables that choose the data root and the
settings (``HOME``, ``PI_MEMORY_DIR``, ``PI_CODING_AGENT_DIR``) and every variable a settings file names as
``${VAR}`` (hashed, never stored), the size and mtime of every settings file
(:func:`pi_memory.settings_files.settings_files`) and of every module of the package. What the key cannot
see: a semantic backend that fails to open (a remote store that is down) serves no ``mem0_memory``; the early
list still has it, and the mismatch is logged and stored for the next start.
The first start with a new key waits for the SDK and stores its answer; when a later SDK answer differs from
the one sent, the stored one is replaced and a warning goes to standard error (the server declares no
``listChanged``, so a client keeps a tool list it got; the key is built so that this cannot happen without
a change the key misses). Clients of the 2026-07-28 protocol, which send no ``initialize``, are simply
relayed.

``PI_MEMORY_MCP_QUICKSTART=0`` turns all this off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import threading
from pathlib import Path

from pi_memory.integrations.hooks import state

CACHE_FILE = "mcp-initialize.json"
TOOLS_CACHE_FILE = "mcp-tools-list.json"
_PKG = Path(__file__).resolve().parents[1]  # src/pi_memory
_KEEP = {CACHE_FILE: 20, TOOLS_CACHE_FILE: 10}  # answers kept per file (a tool list is ~20 KB)


def _versions() -> list[str]:
    from importlib.metadata import PackageNotFoundError, version

    parts = []
    for package in ("pi-memory", "mcp"):
        try:
            parts.append(version(package))
        except PackageNotFoundError:
            parts.append("?")
    return parts


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _key(protocol: str) -> str:
    parts = [protocol, *_versions()]
    here = Path(__file__).resolve()
    for source in (here, here.with_name("mcp_server.py")):
        try:
            parts.append(str(source.stat().st_mtime_ns))
        except OSError:
            parts.append("?")
    return _digest(parts)


def _code_fingerprint() -> list[list]:
    """``[path, mtime_ns, size]`` of every module of the package (an edit or an upgrade changes the tools)."""
    paths = []
    for folder, dirs, files in os.walk(_PKG):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__")))
        paths += [os.path.join(folder, f) for f in sorted(files) if f.endswith(".py")]
    return state.fingerprint(paths)


_KEY_ENV = ("HOME", "PI_MEMORY_DIR", "PI_CODING_AGENT_DIR")  # what chooses the data root and the settings
_UNRELATED_ARGS = {"--index-interval": 1, "--json": 0}  # options that change no tool (name -> values taken)
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _tool_args(args: list[str]) -> list[str]:
    """The command line without the options that do not change the tool list (the warm-up of a host and the
    host itself may differ in ``--index-interval``)."""
    out, skip = [], 0
    for arg in args:
        if skip:
            skip -= 1
        elif arg.split("=", 1)[0] in _UNRELATED_ARGS:
            skip = 0 if "=" in arg else _UNRELATED_ARGS[arg.split("=", 1)[0]]
        else:
            out.append(arg)
    return out


def tools_key(init_key: str, params: object) -> str:
    """The key of a ``tools/list`` answer: see the module docstring for what it covers."""
    from pi_memory.settings_files import settings_files

    cwd = Path.cwd().resolve()
    files = [str(p) for p in settings_files(cwd)]
    names = set(_KEY_ENV)
    for path in files:  # ${VAR} in a settings file: that variable's value is part of the settings
        with contextlib.suppress(OSError):
            names.update(_VAR.findall(Path(path).read_text(encoding="utf-8", errors="replace")))
    env = sorted((k, os.environ.get(k)) for k in names)
    parts = [init_key, json.dumps(params, sort_keys=True), str(cwd), json.dumps(_tool_args(sys.argv[1:])),
             json.dumps(env), json.dumps(state.fingerprint(files)), json.dumps(_code_fingerprint())]
    return _digest(parts)


def _cache_path(name: str = CACHE_FILE) -> Path:
    return state.state_dir() / name


def known_answer(request: dict) -> tuple[str, dict | None]:
    """``(cache key, the SDK's earlier result for this request or None)``."""
    params = request.get("params") if isinstance(request.get("params"), dict) else {}
    key = _key(str(params.get("protocolVersion", "")))
    result = state.read_json(_cache_path()).get(key)
    return key, result if isinstance(result, dict) else None


def remember(key: str, result: dict, name: str = CACHE_FILE) -> None:
    cache = state.read_json(_cache_path(name))
    cache.pop(key, None)  # the newest last: the oldest are dropped first
    cache[key] = result
    for old in list(cache)[:-_KEEP.get(name, 20)]:
        del cache[old]
    state.write_json(_cache_path(name), cache)


def _as_request(line: bytes) -> dict | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


# Up to this long the SDK may answer what is awaited after the client hung up (the wait ends as soon as it has).
# 2 s was too short on a loaded 2-core machine (the SDK's start-up alone took longer: CI failed on it); a real
# MCP client sends SIGTERM 2 s after closing its side anyway, which ends the process sooner.
PENDING_GRACE = 10.0


class Relay:
    """The two relay threads between the real standard streams and the SDK's pipes. ``pending``: request id
    -> ``(cache file, key, the answer sent early or None)`` for requests whose SDK answer is awaited."""

    def __init__(self) -> None:
        self.real_in, self.real_out = os.dup(0), os.dup(1)
        to_sdk_r, self.to_sdk = os.pipe()
        self.from_sdk, from_sdk_w = os.pipe()
        os.dup2(to_sdk_r, 0)
        os.dup2(from_sdk_w, 1)
        os.close(to_sdk_r)
        os.close(from_sdk_w)
        self.pending: dict[str, tuple[str, str | None, dict | None]] = {}
        self._pending_lock = threading.Condition()  # notified whenever an awaited answer arrives
        self.init_key: str | None = None  # set once the session began with an initialize
        self.tools_seen = False
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

    def _early(self, request: dict, first: bool) -> None:
        """Answer ``request`` at once when it is one we know the SDK's answer to (and note that the SDK's own
        answer, when it comes, is to be compared and dropped)."""
        method, request_id = request.get("method"), request.get("id")
        if request_id is None or isinstance(request_id, bool) or not isinstance(request_id, str | int):
            return
        name = key = sent = None
        try:
            if method == "initialize" and first:
                name = CACHE_FILE
                key, sent = known_answer(request)
                self.init_key = key
            elif (method == "tools/list" and self.init_key is not None and not self.tools_seen
                  and not (request.get("params") or {}).get("cursor")):
                self.tools_seen, name = True, TOOLS_CACHE_FILE
                key = tools_key(self.init_key, request.get("params") or {})
                cached = state.read_json(_cache_path(name)).get(key)
                sent = cached if isinstance(cached, dict) else None
        except Exception:  # noqa: BLE001 - no known answer: the SDK answers, only later
            key, sent = None, None
        if name is None:
            return
        with self._pending_lock:
            self.pending[json.dumps(request_id)] = (name, key, sent)
        if sent is not None:
            self._send(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": sent},
                                  separators=(",", ":"), ensure_ascii=False).encode() + b"\n")

    def _client_to_sdk(self) -> None:
        try:
            with os.fdopen(self.real_in, "rb", buffering=0) as raw:
                first = True
                for line in iter(raw.readline, b""):
                    request = _as_request(line) if first or b'"tools/list"' in line else None
                    if isinstance(request, dict):
                        self._early(request, first)
                    if first:
                        first = False
                        self._first_done.set()
                    os.write(self.to_sdk, line)
        except OSError:
            pass
        finally:
            self._first_done.set()
            # A client that hangs up right after an early answer would otherwise stop the SDK before it
            # answers too, and a stale cached answer would never be compared and corrected: the SDK gets up
            # to PENDING_GRACE seconds to answer what is awaited before it sees the end of its input.
            with self._pending_lock:
                self._pending_lock.wait_for(lambda: not self.pending, timeout=PENDING_GRACE)
            with contextlib.suppress(OSError):
                os.close(self.to_sdk)  # the SDK sees end of input and shuts down as usual

    def _sdk_to_client(self) -> None:
        with os.fdopen(self.from_sdk, "rb", buffering=0) as raw:
            for line in iter(raw.readline, b""):
                self._first_done.wait()
                try:
                    if self.pending and self._answered_early(line):
                        continue
                except Exception as exc:  # noqa: BLE001 - a cache that cannot be written must not stop the relay
                    sys.stderr.write(f"pi-memory mcp: the early answers' cache was not updated: {exc}\n")
                try:
                    self._send(line)
                except OSError:
                    return

    def _answered_early(self, line: bytes) -> bool:
        """Whether ``line`` is the SDK's answer to a request answered early (then it is dropped); a result that
        differs from the one stored replaces it."""
        message = _as_request(line)
        if not message or "method" in message or not ("result" in message or "error" in message):
            return False
        with self._pending_lock:
            entry = self.pending.pop(json.dumps(message.get("id")), None)
            self._pending_lock.notify_all()
        if entry is None:
            return False
        name, key, sent = entry
        result = message.get("result")
        if key is not None and isinstance(result, dict) and result != sent:
            remember(key, result, name)
            if sent is not None:
                what = "initialize" if name == CACHE_FILE else "tools/list"
                sys.stderr.write(f"pi-memory mcp: the early {what} answer differed from the SDK's; it is "
                                 "updated for the next start\n")
        return sent is not None


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
