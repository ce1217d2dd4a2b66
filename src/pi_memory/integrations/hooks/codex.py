"""``pi-memory install codex`` / ``uninstall codex``: the MCP server, the hooks and their trust for Codex.

* ``$CODEX_HOME/config.toml`` (default ``~/.codex``), edited with tomlkit so the user's comments, order and
  formatting stay: ``[mcp_servers.pi-memory]`` (``command`` = the absolute console script, ``args = ["mcp"]``,
  ``env_vars`` naming pi-memory's variables: Codex starts an MCP server with a bare environment, so without it a
  ``PI_MEMORY_DIR`` the user set would reach the hooks but not the server),
  ``[features] hooks = true`` when the file does not say otherwise, and one ``[hooks.state."<key>"]
  trusted_hash`` per pi-memory hook;
* ``$CODEX_HOME/hooks.json``: SessionStart, UserPromptSubmit, PreCompact and Stop (Codex has no SessionEnd;
  its Stop ends every turn), each ``<absolute pi-memory> hook codex <event>``, after ``env PI_MEMORY_DIR=…``
  when a ``[mcp_servers.pi-memory]`` of the user's sets the data root in its ``env`` (:mod:`.hook_env`: Codex
  runs a hook's command with ``$SHELL -lc`` and the environment Codex started with, not the server's ``env``);
  SessionStart and UserPromptSubmit with ``"additionalContextLimit": 0`` (:data:`CONTEXT_LIMIT`), so what they
  answer reaches the model whole instead of as a preview and a file path. An install over an older one adds it
  (and trusts the handlers again: Codex's hash covers the key); a limit the person set on our handler stays.

Codex skips hooks it has not been told to trust, without a word. The trust key and hash are Codex's own
(``<hooks.json>:<event>:<group>:<handler>`` and a ``sha256:`` of the handler), so the installer asks Codex
for them: it runs ``codex app-server`` and sends ``hooks/list`` (JSON-RPC over stdio), then records the hash
Codex reports for each of our hooks. Without a ``codex`` binary (``--codex-bin``, else ``PATH``) the hooks are
written but not trusted, and the report says how to trust them.

What install added beyond our own entries (the ``hooks`` feature switch, the trust keys) is remembered in the
hook state (:mod:`.state`, ``installs/codex.json``) so uninstall removes exactly that. A table our removals leave
empty goes only when the install made it: one the user wrote stays (``mcp_servers = {}``, or ``[features]`` when
the config from before the install says it was there; :func:`_drop_emptied`).

config.toml keeps its line endings: tomlkit keeps those of the lines it parsed, and the lines it adds are given
the file's own (:func:`.newlines.like`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

from pi_memory.integrations.hooks import hook_env, state
from pi_memory.integrations.hooks import install as common
from pi_memory.integrations.hooks.newlines import like
from pi_memory.integrations.hooks.protocol import EVENTS, HOST_EVENTS

HOST = "codex"
TIMEOUT_S = 10
LIST_TIMEOUT_S = 30.0
# what Codex must pass on to the MCP server so it opens the same memory as the hooks (which get the full env)
FORWARDED_ENV = ("PI_MEMORY_DIR", "PI_CODING_AGENT_DIR", "PI_MEMORY_STATE_DIR")
# Codex keeps a hook's additionalContext in the model's context only up to its handler's `additionalContextLimit`
# (tokens, about 4 bytes each; 2,500 when the key is absent): a longer one is saved under <tmp>/hook_outputs and the
# model gets its head and tail and the file's path. 0 turns that off for the handler, so the snapshot, blocks and
# standing instructions of a session start, and a prompt's recall, arrive whole. Only the two events whose answer
# reaches the model get it: on PreCompact / Stop Codex warns that the key is ignored. A Codex that does not know the
# key skips it, as it skips any key of a handler it does not know (only one at the top of hooks.json is refused).
CONTEXT_LIMIT = {"session-start": {"additionalContextLimit": 0}, "prompt": {"additionalContextLimit": 0}}


def codex_home() -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else Path.home() / ".codex"


def _manifest_path() -> Path:
    return common.manifest_path(HOST)


def _load_toml(path: Path):
    import tomlkit

    text = common.read_settings_text(path)  # a link to nothing, not UTF-8, a BOM: refused
    if text is None:
        return tomlkit.document()
    try:
        doc = tomlkit.parse(text)
    except Exception as exc:  # tomlkit raises its own ParseError subclasses
        raise common.InstallError(f"{path} is not valid TOML ({exc}); fix it, then run the command again. "
                                  "Nothing was changed.") from exc
    _check_shape(doc, path)
    return doc


# The keys install and uninstall edit: each, when present, must be a table (checked before anything is written).
_TABLES = (("features",), ("mcp_servers",), ("mcp_servers", common.MCP_NAME), ("hooks",), ("hooks", "state"))


_TOML_KINDS = {"str": "a string", "int": "an integer", "float": "a float", "bool": "a boolean", "list": "an array",
               "datetime": "a date-time", "date": "a date", "time": "a time"}


def _check_shape(doc, path: Path) -> None:
    """Refuse a config whose keys we edit hold something other than a table (``features = "x"``): valid TOML
    that Codex itself would reject, and that an edit could only make worse."""
    from collections.abc import Mapping

    for keys in _TABLES:
        node = doc
        for key in keys:
            node = node.get(key) if isinstance(node, Mapping) else None
        if node is not None and not isinstance(node, Mapping):
            name = ".".join(keys)
            kind = _TOML_KINDS.get(type(node.unwrap()).__name__, "value")
            raise common.InstallError(f"{path}: `{name}` is {kind}, where Codex expects a "
                                      f"table ([{name}]); fix or remove that line, then run the command again. "
                                      "Nothing was changed.")


def install(script: str | None = None, codex_bin: str | None = None, cwd: Path | None = None) -> dict:
    """Returns ``{"changes": [Change], "trusted": [key], "trustError": str | None}``."""
    import tomlkit
    from tomlkit.items import InlineTable

    script = script or common.console_script()
    home = codex_home()
    config_path, hooks_path = home / "config.toml", home / "hooks.json"
    doc = _load_toml(config_path)
    hooks_doc = common.read_json_file(hooks_path, ("hooks",))
    common.require_objects(hooks_doc, hooks_path, "hooks")
    manifest = state.read_json(_manifest_path())
    existing = (doc.get("mcp_servers") or {}).get(common.MCP_NAME)
    if common.is_users_server(manifest, config_path, existing, _is_exactly_ours(existing)):
        common.refuse_remote_server(config_path, existing)  # before hooks.json is written
    env = hook_env.pinned(existing, config_path, HOST)  # the entry's data root: the hooks get it too (refused first)

    hooks = hooks_doc.get("hooks") if isinstance(hooks_doc.get("hooks"), dict) else {}
    hooks_pristine = common.without_our_hooks(hooks, HOST)[1] == 0
    events = {e: (EVENTS[e], TIMEOUT_S) for e in HOST_EVENTS[HOST]}
    hooks_doc["hooks"] = common.with_our_hooks(hooks, HOST, script, events, env, CONTEXT_LIMIT)
    changes = [common.write_json(hooks_path, hooks_doc,
                                 [f"hooks {', '.join(EVENTS[e] for e in HOST_EVENTS[HOST])} run {script} hook codex …"
                                  + hook_env.described(env)])]
    common.remember_original(manifest, changes[0], hooks_pristine)

    details, warnings = [], []
    servers = doc.get("mcp_servers")
    existing = servers.get(common.MCP_NAME) if servers is not None else None
    users = common.is_users_server(manifest, config_path, existing, _is_exactly_ours(existing))
    if users:  # the user's own entry (`uvx pi-memory mcp` with an env): taken over, put back by uninstall
        common.refuse_remote_server(config_path, existing)
        common.remember_user_server(manifest, config_path, existing, SET_KEYS)
        kept = ", ".join(existing.get("env") or {}) if hasattr(existing.get("env"), "keys") else ""
        details.append(f"your [mcp_servers.{common.MCP_NAME}] now runs {script} mcp; the rest of it is kept"
                       + (f" (env: {kept})" if kept else "") + ", and uninstall puts it back as it was")
    config_pristine = servers is None or common.MCP_NAME not in servers or users
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    ours = {"command": script, "args": ["mcp"],
            "env_vars": list(FORWARDED_ENV)}  # Codex starts MCP servers with a bare environment
    if common.MCP_NAME in servers:  # changed in place: what the user added to it (env, timeouts) and its
        entry = servers[common.MCP_NAME]  # comments and blank lines stay where they are
        for key, value in ours.items():
            if entry.get(key) != value:
                entry[key] = value
    else:
        entry = tomlkit.table()
        for key, value in ours.items():
            entry[key] = value
        _add_table(servers, common.MCP_NAME, entry)
    details.append(f"[mcp_servers.{common.MCP_NAME}] {script} mcp")
    features = doc.get("features")
    if features is None or "hooks" not in features:
        if features is None:
            features = tomlkit.table()
            doc["features"] = features
        features["hooks"] = True
        manifest["addedHooksFeature"] = True
        details.append("[features] hooks = true")
    elif features.get("hooks") is not True:
        # The user's own switch is left as they set it (we do not overrule an explicit choice), but install
        # must not look like it worked: with hooks off Codex never runs the snapshot, recall or capture.
        value = features["hooks"]
        shown = json.dumps(value) if isinstance(value, bool | int | float | str) else str(value)  # TOML's spelling
        warnings.append(f"{config_path} says [features] hooks = {shown}, so Codex will not run pi-memory's hooks (no snapshot, recall or capture; the MCP tools "
                        "still work). Set it to true in [features], then start Codex again.")

    trusted, trust_error = [], None
    try:
        listed = list_hooks(codex_bin, cwd or Path.cwd())
    except common.InstallError as exc:
        listed, trust_error = [], str(exc)
    hooks_table = doc.get("hooks")
    for hook in listed:
        key = str(hook.get("key", ""))
        source = Path(str(hook.get("sourcePath") or "")).resolve()
        if not (common.is_ours(hook.get("command"), HOST) and hook.get("currentHash") and key
                and source == hooks_path.resolve()):
            continue
        if hooks_table is None:
            hooks_table = tomlkit.table(is_super_table=True)
            doc["hooks"] = hooks_table
        if "state" not in hooks_table:  # `hooks = {}` of the user's holds only inline tables
            inline = isinstance(hooks_table, InlineTable)
            hooks_table["state"] = tomlkit.inline_table() if inline else tomlkit.table(is_super_table=True)
        if key in hooks_table["state"]:
            if hooks_table["state"][key].get("trusted_hash") != hook["currentHash"]:
                hooks_table["state"][key]["trusted_hash"] = hook["currentHash"]
        else:
            item = tomlkit.table()
            item["trusted_hash"] = hook["currentHash"]
            _add_table(hooks_table["state"], key, item)
        trusted.append(key)
    stale = [k for k in manifest.get("trusted", []) if k not in trusted]
    _drop_state_keys(doc, stale)
    if trusted:
        details.append(f"trusted {len(trusted)} hook(s) in [hooks.state]")
    manifest["trusted"] = trusted
    changes.append(common.write_file(config_path, like(common.current_text(config_path), tomlkit.dumps(doc)), details))
    common.remember_original(manifest, changes[1], config_pristine)
    state.write_json(_manifest_path(), common.note_created(manifest, changes))
    return {"changes": changes, "trusted": trusted, "trustError": trust_error, "warnings": warnings}


def uninstall() -> dict:
    home = codex_home()
    config_path, hooks_path = home / "config.toml", home / "hooks.json"
    manifest = state.read_json(_manifest_path())
    common.refuse_dangling_link(config_path)
    config = _load_toml(config_path) if config_path.exists() else None  # both refused before either is written
    common.read_json_file(hooks_path, ("hooks",))
    changes = [c for c in [common.uninstall_hooks_file(hooks_path, HOST, manifest)] if c]
    if config is not None:
        import tomlkit

        doc = config
        original = common.original_of(config_path, manifest, lambda text: tomlkit.parse(text).unwrap())
        before = original[1] if original is not None and isinstance(original[1], dict) else None
        details = []
        servers = doc.get("mcp_servers")
        saved = (manifest.get("userServers") or {}).get(str(config_path))
        if servers is not None and common.MCP_NAME in servers:
            if common.restore_user_server(servers[common.MCP_NAME], saved):
                details.append(f"your own [mcp_servers.{common.MCP_NAME}] is back as it was before the install")
            else:
                del servers[common.MCP_NAME]
                _drop_emptied(doc, "mcp_servers", before)
                details.append(f"removed [mcp_servers.{common.MCP_NAME}]")
        dropped = _drop_state_keys(doc, manifest.get("trusted", []), before)
        if dropped:
            details.append(f"removed {dropped} trust entr{'y' if dropped == 1 else 'ies'}")
        features = doc.get("features")
        if manifest.get("addedHooksFeature") and features is not None and features.get("hooks") is True:
            del features["hooks"]
            _drop_emptied(doc, "features", before)
            details.append("removed [features] hooks")
        text = like(common.current_text(config_path), tomlkit.dumps(doc))
        changes.append(common.finish_uninstall(config_path, doc.unwrap(), text, manifest, details, original))
    changes += common.remove_created_folders(manifest, [config_path, hooks_path])
    _manifest_path().unlink(missing_ok=True)  # nothing of this install is left to remember
    return {"changes": changes, "trusted": [], "trustError": None, "warnings": []}


SET_KEYS = ("command", "args", "env_vars")  # what install sets in a [mcp_servers.pi-memory] of the user's


def _is_exactly_ours(entry) -> bool:
    """The entry exactly as an install writes it (for some path of the console script)."""
    if entry is None or not hasattr(entry, "keys") or set(entry.keys()) != set(SET_KEYS):
        return False
    return (Path(str(entry.get("command", ""))).name == "pi-memory" and list(entry.get("args") or []) == ["mcp"]
            and list(entry.get("env_vars") or []) == list(FORWARDED_ENV))


def _add_table(parent, key: str, table) -> None:
    """Add ``table`` as ``parent[key]``. tomlkit puts it right after ``parent``'s last table, and the blank
    lines that table ended with (before the next table of the file, ``[profiles.fast]``) stay inside it, so
    they would land before ours and none after; ours gets the same ending, so the next table keeps its blank
    line. Without such a table, the ending of ``parent``'s own header (a ``[mcp_servers]`` the user wrote)."""
    import tomlkit
    from tomlkit.items import InlineTable, Table, Whitespace

    if isinstance(parent, InlineTable):  # `mcp_servers = { other = {...} }`: a table cannot go in it, an inline one
        inline = tomlkit.inline_table()  # can (raised "Inline tables cannot contain a table" after hooks.json
        inline.update(table.unwrap())  # was written: a half install)
        parent[key] = inline
        return
    tables = [value for value in parent.values() if isinstance(value, Table)]
    last = tables[-1] if tables else parent if isinstance(parent, Table) else None  # or `[mcp_servers]` itself
    body = list(last.value.body) if last is not None else []
    parent[key] = table
    if body and isinstance(body[-1][1], Whitespace) and "\n" in body[-1][1].as_string():
        table.add(tomlkit.ws(body[-1][1].as_string()))


def _drop_emptied(parent, key: str, before: dict | None) -> None:
    """Remove ``parent[key]`` when it is a table left empty that the install made. ``before`` is the matching
    part of the config from before the install (``{}`` when that config had no such part; ``None`` when the
    manifest did not keep it): the table stays when it was there. Without ``before``, an inline table stays
    (``mcp_servers = {}``: install writes one only inside an inline table of the user's)."""
    from tomlkit.items import InlineTable

    table = parent.get(key)
    if table is None or table:
        return
    if key in before if before is not None else isinstance(table, InlineTable):
        return
    del parent[key]


def _drop_state_keys(doc, keys: list[str], before: dict | None = None) -> int:
    """Remove the trust entries ``keys`` from ``[hooks.state]``; the tables they leave empty go as
    :func:`_drop_emptied` says (``before``: the whole config before the install, when known)."""
    hooks_table = doc.get("hooks")
    table = hooks_table.get("state") if hooks_table is not None else None
    if table is None:
        return 0
    dropped = 0
    for key in keys:
        if key in table:
            del table[key]
            dropped += 1
    had_hooks = None if before is None else before.get("hooks") if isinstance(before.get("hooks"), dict) else {}
    _drop_emptied(hooks_table, "state", had_hooks)
    _drop_emptied(doc, "hooks", before)
    return dropped


def find_codex(codex_bin: str | None) -> str:
    found = codex_bin or shutil.which("codex")
    if not found:
        raise common.InstallError(
            "no codex binary on PATH, so the hooks were written but not trusted (Codex skips untrusted hooks "
            "silently); run `pi-memory install codex --codex-bin /path/to/codex`, or trust them in Codex's /hooks")
    return found


def _kill_group(proc: subprocess.Popen) -> None:
    """End ``proc`` and every process of its group (the app-server's own children too)."""
    import signal

    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5)


def list_hooks(codex_bin: str | None, cwd: Path) -> list[dict]:
    """Codex's own view of the hooks for ``cwd`` (``hooks/list`` of ``codex app-server``): each with ``key``,
    ``command``, ``currentHash`` and ``trustStatus``."""
    exe = find_codex(codex_bin)
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "pi-memory",
                                                                                      "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}},
    ]
    try:
        # its own session (process group): what it starts goes with it, also when it does not answer in time
        proc = subprocess.Popen([exe, "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,  # noqa: S603
                                stderr=subprocess.DEVNULL, text=True, cwd=str(cwd), start_new_session=True)
    except OSError as exc:
        raise common.InstallError(f"could not run {exe} app-server to record the hooks' trust: {exc}") from exc
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("".join(json.dumps(r) + "\n" for r in requests))
        proc.stdin.flush()
        answer: dict = {}

        def read() -> None:
            for line in proc.stdout:
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == 2:
                    answer.update(message)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(LIST_TIMEOUT_S)
    finally:
        _kill_group(proc)
    if "result" not in answer:
        raise common.InstallError(f"{exe} app-server did not list the hooks "
                                  f"({answer.get('error') or 'no answer'}); trust them in Codex's /hooks")
    return [h for item in answer["result"].get("data", []) for h in item.get("hooks", [])]
