"""Where the hook commands keep what must outlive one short process, and their log.

A hook is a process of its own for every event, so what a host session needs again later lives in files
under the state folder (``$PI_MEMORY_STATE_DIR``, else ``$XDG_STATE_HOME/pi-memory``, else
``~/.local/state/pi-memory``; only the environment names it, so finding it costs no settings read):

* ``hooks/<host>/<session id>.json``: one host session's state: the frozen session-start context (so a resumed
  session gets the same bytes), the last prompt (the user half of the turn captured at stop), the recall marker;
* ``hooks/snapshot-cache.json``: the last session-start context built per working folder, with the size and
  modification time of every file it was built from (settings, trust list, the curated stores, the memory
  blocks and standing instructions, the code that renders them); reused only while all of them are unchanged
  and for at most an hour, so a new session start after no memory change imports no scanner at all;
* ``hooks/team-servers.json``: what a prompt hook learnt of a team memory server for the next one (whose the
  token is, a server found down and until when), as digests of the URL and token (:mod:`.team_servers`);
* ``hooks.log``: why a hook answered empty (errors, the time ceiling) and what background jobs did; cut to its
  newest half past 1 MiB.

Writes are atomic (temp file + rename), so a host that runs two hooks of one session at once never reads half
a file; a lost race only means the state of the later writer wins. Every file is private to the user (0600, in
0700 folders): they hold memory text. The last prompt is stored with its credentials redacted, cut to
:data:`PROMPT_KEEP_CHARS`, and dropped once the turn's capture has it; session files untouched for
:data:`SESSION_KEEP_DAYS` days are removed at the next session start.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path

from pi_memory.private_files import make_private_folder

LOG_MAX_BYTES = 1 << 20
# The state writes this process could not make (``"<path>: <why>"``): the state folder is an optimisation, never a
# precondition, so a hook answers all the same and says so (:func:`pi_memory.integrations.hooks.run_hook`).
WRITE_PROBLEMS: list[str] = []
PROMPT_KEEP_CHARS = 20_000  # of the last prompt, kept for the turn's capture at stop
SESSION_KEEP_DAYS = 30  # a host session's state (its frozen context for a resume) is kept this long unused
_SAFE = re.compile(r"[^A-Za-z0-9._-]+")


def state_dir() -> Path:
    env = os.environ.get("PI_MEMORY_STATE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state") / "pi-memory"


def session_file(host: str, session_id: str) -> Path:
    """The state file of one host session (the id is made file-name safe; an empty id gets ``unknown``)."""
    safe = _SAFE.sub("_", session_id or "")[:200] or "unknown"
    return state_dir() / "hooks" / host / f"{safe}.json"


def read_json(path: Path) -> dict:
    """The JSON object in ``path``; ``{}`` when it is missing, unreadable or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def private_dir(path: Path) -> None:
    """``path`` and each of its missing parents created 0700 (an existing folder's mode is left alone)."""
    make_private_folder(path)


def write_private(path: Path, text: str) -> None:
    """``text`` written atomically to ``path``, readable by the user only (0600)."""
    private_dir(path.parent)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def write_json(path: Path, data: dict) -> None:
    write_private(path, json.dumps(data, ensure_ascii=False))


def prune_sessions(host: str, keep_days: float = SESSION_KEEP_DAYS, at_most: int = 200) -> int:
    """Remove up to ``at_most`` session files of ``host`` untouched for ``keep_days``; returns how many."""
    folder = state_dir() / "hooks" / host
    cutoff = time.time() - keep_days * 86400
    removed = 0
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if removed >= at_most:
                break
            with contextlib.suppress(OSError):
                if entry.name.endswith(".json") and entry.is_file() and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
    return removed


def note_unwritable(path: Path, exc: OSError) -> None:
    """Remember that ``path`` could not be written (:data:`WRITE_PROBLEMS`)."""
    WRITE_PROBLEMS.append(f"{exc.filename or path}: {exc.strerror or exc}")


def update_session(host: str, session_id: str, **changes) -> dict:
    """Merge ``changes`` into one session's state and return the result (not kept when the state folder cannot
    be written: noted in :data:`WRITE_PROBLEMS`)."""
    path = session_file(host, session_id)
    data = read_json(path)
    data.update(changes)
    data["updatedAt"] = time.time()
    try:
        write_json(path, data)
    except OSError as exc:
        note_unwritable(path, exc)
    return data


def log(message: str) -> None:
    """One line in ``hooks.log`` (never raises: logging must not be why a hook fails)."""
    path = state_dir() / "hooks.log"
    with contextlib.suppress(OSError):
        private_dir(path.parent)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            data = path.read_bytes()
            path.write_bytes(data[len(data) // 2:])
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{stamp} [{os.getpid()}] {message}\n")


def fingerprint(paths: list[str]) -> list[list]:
    """``[path, mtime_ns, size]`` for each path (``[path, None, None]`` when it does not exist)."""
    out: list[list] = []
    for p in paths:
        try:
            st = os.stat(p)
            out.append([p, st.st_mtime_ns, st.st_size])
        except OSError:
            out.append([p, None, None])
    return out


ENV_KEYS = ("PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "HOME")


CACHE_TTL_S = 3600.0  # recent lessons age out with time, not only with file changes


def cached_context(cwd: str, version: str) -> dict | None:
    """The cached session-start context for ``cwd`` when none of its inputs changed, else ``None``."""
    entry = read_json(state_dir() / "hooks" / "snapshot-cache.json").get(cwd)
    if not isinstance(entry, dict) or entry.get("version") != version:
        return None
    if entry.get("env") != {k: os.environ.get(k) for k in ENV_KEYS}:
        return None
    if not isinstance(entry.get("builtAt"), int | float) or time.time() - entry["builtAt"] > CACHE_TTL_S:
        return None
    deps = entry.get("deps")
    if not isinstance(deps, list) or fingerprint([d[0] for d in deps]) != deps:
        return None
    value = entry.get("value")
    return value if isinstance(value, dict) else None


def store_context(cwd: str, version: str, deps: list[str], before: list[list], value: dict) -> None:
    """Cache ``value`` for ``cwd``; ``before`` is the fingerprint taken before reading the inputs: when a file
    changed while the context was built, nothing is cached (the next start builds again)."""
    if fingerprint(deps) != before:
        return
    path = state_dir() / "hooks" / "snapshot-cache.json"
    cache = read_json(path)
    cache[cwd] = {"version": version, "env": {k: os.environ.get(k) for k in ENV_KEYS}, "deps": before,
                  "builtAt": time.time(), "value": value}
    if len(cache) > 200:  # a folder per project; keep the newest 200
        for key in list(cache)[:-200]:
            del cache[key]
    try:
        write_json(path, cache)
    except OSError as exc:  # no cache: the next start builds the context again
        note_unwritable(path, exc)
