"""Shared parts of ``pi-memory install <host>`` / ``uninstall <host>``: the command the hosts run, the edit
of a settings file (backup, atomic write, a report of what changed) and the merge of hook lists.

Rules every host installer follows:

* the hosts run pi-memory's console script by absolute path (:func:`console_script`), so no ``PATH`` lookup or
  resolver runs on every prompt;
* a file is read, changed in memory and written only when its text changes (atomic, after a byte-exact
  backup of what was there, kept in the state folder: ``<state>/backups/<the file's absolute path>.bak.<unix-ts>``,
  never beside the file, so a project's backups are not untracked files in its repository); a file that cannot
  be parsed is left alone with an error saying what to fix;
* a JSON file is written back in its own layout: only the values our entries change are written anew, in the
  file's style (indent unit, separators, escapes); every other byte stays, so a user's compact
  ``"allow": ["Bash(ls:*)"]`` in an indented file stays one line (:func:`dump_like`, :mod:`.json_edit`);
* a file keeps its line endings: the user's lines keep theirs, the lines we add end as the file's mostly do
  (CRLF in a CRLF file; JSON and TOML alike, :mod:`.newlines`);
* a JSON key the user wrote twice (a reader keeps only the last) stays as it is when it is outside what we edit;
  one inside it (``hooks``, ``mcpServers`` or anything under them) is refused, naming the key, before anything
  is written (:func:`read_json_file`; why, in :mod:`.json_edit`);
* the first install remembers (in the install's manifest) the backup of each file as it was before any entry of
  ours; uninstall writes those exact bytes back when what is left after removing our entries equals that
  content (the round trip is byte-exact), and otherwise removes only our entries, keeping the user's own keys,
  also an event the user left empty (``"Stop": []``);
* a file the install created and that holds only our entries is removed by uninstall, without a backup (there
  is nothing of the user's in it);
* our hook entries are recognised by their command as a shell reads it (``... pi-memory hook <host> <event>``,
  whatever path the script had), so installing again replaces them and uninstalling removes exactly them
  (:mod:`.hook_entries`, which also keeps a spill limit the person set on one of ours);
* our entries go after the user's own, so hosts that key state by position (Codex's hook trust) keep the
  user's keys;
* an MCP server entry named ``pi-memory`` that is the user's own (``uvx pi-memory mcp`` with an ``env`` of theirs)
  is taken over, not replaced: install sets only its command and arguments (what runs) and keeps everything else
  in it (``env``: a ``PI_MEMORY_DIR`` the user chose, timeouts); the first install remembers the values it
  changed (:func:`remember_user_server`) and uninstall puts them back (the ``env`` as the user has it then). A remote entry of the user's (a ``url``: an HTTP server) is refused
  instead, since a local command in its place would silently point the host at another memory. The variables
  of that entry's ``env`` that choose the data root and the settings go into our hook commands too
  (``env PI_MEMORY_DIR=… <pi-memory> hook …``, :mod:`.hook_env`), read from the entry at each install, so the
  hooks and the server use one memory;
* what cannot be edited safely is refused before anything is written (:class:`InstallRefusal`, exit 1 with
  ``problem`` and ``path``): a file that is not UTF-8, a symbolic link to nothing (install would create its
  target, wherever it points, and uninstall would remove the link), a project folder that does not exist.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pi_memory.curated.files import atomic_write_text, backup
from pi_memory.integrations.hooks import state
from pi_memory.integrations.hooks.hook_entries import (  # noqa: F401  (the installers call them through here)
    hook_command,
    is_ours,
    with_our_hooks,
    without_our_hooks,
)

MCP_NAME = "pi-memory"


class InstallError(Exception):
    """An install or uninstall could not be done; the message says what to do."""


class InstallRefusal(InstallError):
    """A refusal (exit 1) about one path, before anything was written: ``problem`` names the kind for ``--json``
    (``not_utf8``, ``dangling_link``, ``no_project_folder``, ``user_server``, ``entry_env``)."""

    def __init__(self, message: str, problem: str, path: Path) -> None:
        super().__init__(message)
        self.problem = problem
        self.path = path


@dataclass
class Change:
    """One file an install touched: ``action`` is ``created``, ``updated``, ``unchanged`` or ``removed``."""

    path: Path
    action: str
    backup: Path | None = None
    details: list[str] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)  # folders made for the file (outermost first)

    def to_dict(self) -> dict:
        return {"path": str(self.path), "action": self.action, "backup": str(self.backup) if self.backup else None,
                "details": list(self.details)}


def console_script() -> str:
    """The absolute path of the ``pi-memory`` console script of this installation."""
    beside = Path(sys.executable).parent / "pi-memory"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    found = shutil.which("pi-memory")
    if found:
        return str(Path(found).absolute())
    raise InstallError("the pi-memory console script was not found beside this Python or on PATH; install "
                       "pi-memory with pip (or scripts/bootstrap.sh) and run this command with that install")


BOM = "\ufeff"


def bom_refusal(path: Path) -> str:
    """The refusal of a settings file that starts with a byte-order mark (valid neither as JSON nor as TOML)."""
    return (f"{path} starts with a byte-order mark (BOM), which JSON and TOML do not allow; save it as UTF-8 without "
            "a BOM, then run the command again. Nothing was changed.")


def refuse_dangling_link(path: Path) -> None:
    """Refuse ``path`` when it, or a folder above it, is a symbolic link to something that does not exist."""
    for link in (path, *path.parents):
        if link.is_symlink() and not link.exists():
            raise InstallRefusal(
                f"{link} is a symbolic link to {os.readlink(link)}, which does not exist, so pi-memory would create "
                "files wherever it points; create its target (an empty file will do) or remove the link, then run "
                "this command again (nothing was changed).", "dangling_link", link)


def read_settings_text(path: Path) -> str | None:
    """The text of a host's settings file (``None``: it does not exist), with CRLF kept. Refused: a symbolic
    link to nothing, bytes that are not UTF-8, a byte-order mark."""
    refuse_dangling_link(path)
    try:
        raw = path.read_bytes()  # not read_text: that turns CRLF into LF
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InstallError(f"could not read {path}: {exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallRefusal(
            f"{path} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}), so pi-memory cannot edit "
            "it safely; save it as UTF-8 (or move it away), then run this command again (nothing was changed).",
            "not_utf8", path) from exc
    if text.startswith(BOM):
        raise InstallError(bom_refusal(path))
    return text


def read_json_file(path: Path, edited: tuple[str, ...] = ()) -> dict:
    """The object in a JSON settings file (``{}`` when it does not exist or is empty). A key written more than once
    in ``edited`` (top-level keys whose values we change), in an object under one of them, or one of them
    written twice, is refused (:func:`duplicate_refusal`); so is what :func:`read_settings_text` refuses."""
    text = read_settings_text(path)
    if text is None or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path} is not valid JSON ({exc}); fix or move it, then run the command again. "
                           "Nothing was changed.") from exc
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds {json_kind(data)}, not a JSON object; fix or move it, then run the command "
                           "again. Nothing was changed.")
    if edited:
        from pi_memory.integrations.hooks.json_edit import duplicate_keys

        inside = duplicate_keys(text, edited)
        if inside:
            raise InstallError(duplicate_refusal(path, inside))
    return data


def duplicate_refusal(path: Path, duplicates: list[tuple[str, int]]) -> str:
    """The refusal of a JSON file with a key written more than once where the install edits it."""
    listed = ", ".join(f'"{where}" ({times} times)' for where, times in duplicates)
    return (f"{path} has a key written more than once in the part pi-memory edits: {listed}. A JSON reader (Claude "
            "Code and Codex too) takes only the last one and ignores the others, so which one to change is not "
            "clear. Keep one of each (move what the others hold into it), then run the command again. Nothing was "
            "changed.")


def json_kind(value: object) -> str:
    """What a JSON value is, in JSON's words (for a person reading an error)."""
    if isinstance(value, bool):
        return "true or false"
    return {str: "a string", int: "a number", float: "a number", list: "an array", dict: "an object",
            type(None): "null"}.get(type(value), "a value")


def require_objects(doc: dict, path: Path, *keys: str) -> None:
    """Refuse, before anything is written, a settings file where a key we edit (dotted: ``mcpServers.pi-memory``)
    holds something other than an object, or where an event under ``hooks`` is not an array: the host would
    reject such a file anyway, and replacing the value would drop what the user wrote."""
    for key in keys:
        node: object = doc
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None and not isinstance(node, dict):
            raise InstallError(f"{path}: \"{key}\" is {json_kind(node)}, where an object is expected; fix or remove "
                               "it, then run the command again. Nothing was changed.")
    hooks = doc.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else ()):
        if groups is not None and not isinstance(groups, list):
            raise InstallError(f"{path}: \"hooks.{event}\" is {json_kind(groups)}, where an array of hook groups is "
                               "expected; fix or remove it, then run the command again. Nothing was changed.")


def backup_in_state(path: Path, raw: bytes) -> Path:
    """Save ``raw`` (the bytes ``path`` held) as ``<state>/backups/<path without its root>.bak.<unix-ts>``, 0600."""
    folder = state.state_dir() / "backups" / Path(*path.absolute().parts[1:]).parent
    state.private_dir(folder)
    return backup(folder / path.name, raw)


def write_file(path: Path, text: str, details: list[str]) -> Change:
    """Write ``text`` to ``path`` when it differs from what is there, after a backup of the old bytes."""
    try:
        old = path.read_bytes()
    except FileNotFoundError:
        old = None
    if old is not None and old == text.encode("utf-8"):
        return Change(path, "unchanged")
    saved = backup_in_state(path, old) if old is not None else None
    missing = [folder for folder in [path.parent, *path.parent.parents] if not folder.exists()][::-1]
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, text)
    return Change(path, "updated" if old is not None else "created", saved, details, missing)


def current_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def dump_like(data: dict, old: str | None) -> str:
    """``data`` as the JSON text ``old`` (the file's text before the edit) becomes: only the values that
    changed are written anew, in the file's layout; every other byte stays (:func:`.json_edit.edit`: a
    user's compact array in an indented file stays compact, a one-line file stays one line). A text that
    cannot be edited in place is written whole in its style (:class:`.json_edit.Style`); a new or empty file gets
    two-space indent and a final newline (CRLF when the empty file's whitespace has one)."""
    from pi_memory.integrations.hooks.json_edit import Style, edit
    from pi_memory.integrations.hooks.newlines import like

    body = old.strip() if old else ""
    if not body:
        return like(old, dump_json(data))
    edited = edit(old, data)
    if edited is not None:
        return edited
    return Style.of(old).dump(data) + old[len(old.rstrip()):]


def write_json(path: Path, data: dict, details: list[str]) -> Change:
    """:func:`write_file` of ``data`` in the layout of the file's current text (:func:`dump_like`)."""
    return write_file(path, dump_like(data, current_text(path)), details)


def remember_original(manifest: dict, change: Change, pristine: bool) -> None:
    """Note in ``manifest`` the backup of the file as it was before the first install (``pristine``: it held
    no entry of ours), so uninstall can write those bytes back; a later install keeps the first note."""
    originals = manifest.setdefault("originals", {})
    if pristine and change.backup is not None and str(change.path) not in originals:
        originals[str(change.path)] = str(change.backup)


def original_of(path: Path, manifest: dict, parse) -> tuple[bytes, object] | None:
    """``(bytes, parsed content)`` of ``path`` before the first install, when the manifest kept them."""
    saved = manifest.get("originals", {}).get(str(path)) if isinstance(manifest.get("originals"), dict) else None
    if not isinstance(saved, str):
        return None
    try:
        raw = Path(saved).read_bytes()
        return raw, parse(raw.decode("utf-8"))
    except Exception:  # a backup gone or unreadable: uninstall falls back to removing our entries
        return None


def is_users_server(manifest: dict, path: Path, entry: object, exactly_ours: bool) -> bool:
    """Whether ``entry`` (the ``pi-memory`` server entry in ``path`` before this install) is the user's own: there
    is one, no install of ours wrote into ``path`` before (the manifest knows neither the file nor an entry of
    the user's in it), and it is not exactly what an install writes (``exactly_ours``: a manifest lost since)."""
    known = {*(manifest.get("created") or []), *(manifest.get("originals") or {}), *(manifest.get("userServers") or {})}
    return entry is not None and str(path) not in known and not exactly_ours


def refuse_remote_server(path: Path, entry: object) -> None:
    """Refuse a user's ``pi-memory`` entry that is a remote server (a ``url``): a local command in its place would
    point the host at another memory without a word."""
    url = entry.get("url") if hasattr(entry, "get") else None
    if url is not None:
        raise InstallRefusal(
            f"{path} already has an MCP server named {MCP_NAME} of yours that talks to {url}, which install would "
            "replace with the local server; rename yours (or remove it), then run this command again (nothing was "
            "changed).", "user_server", path)


def remember_user_server(manifest: dict, path: Path, entry, keys: tuple[str, ...]) -> None:
    """Note the values the install is about to set (``keys``) as the user's entry ``entry`` in ``path`` had them
    (a key it lacked: noted as absent), unless noted already, so uninstall can put them back."""
    saved = manifest.setdefault("userServers", {})
    if str(path) in saved:
        return
    values = {}
    for key in keys:
        if key in entry:
            value = entry[key]
            value = value.unwrap() if hasattr(value, "unwrap") else value  # a tomlkit item: its plain value
            try:
                json.dumps(value)
            except (TypeError, ValueError):
                value = str(value)
            values[key] = value
    saved[str(path)] = {"keys": list(keys), "values": values}


def restore_user_server(entry, saved: object) -> bool:
    """Put back in ``entry`` the values :func:`remember_user_server` noted (``saved``); ``False`` when there is no
    usable note (the entry is then ours to remove)."""
    if not isinstance(saved, dict) or not isinstance(saved.get("keys"), list) or not isinstance(
            saved.get("values"), dict):
        return False
    for key in saved["keys"]:
        if key == "env" and (key in saved["values"] or entry.get(key)):
            continue  # install keeps the user's env as it is: today's, edited since or added since, stays
        if key in saved["values"]:
            if entry.get(key) != saved["values"][key]:
                entry[key] = saved["values"][key]
        elif key in entry:
            del entry[key]
    return True


def manifest_path(host: str) -> Path:
    """What an install of ``host`` added beyond its own entries (files it created, switches it set)."""
    return state.state_dir() / "installs" / f"{host}.json"


def note_created(manifest: dict, changes: list[Change]) -> dict:
    """``manifest`` with the files and the folders ``changes`` created added (uninstall removes such a file
    when it holds nothing else, and such a folder when it is empty)."""
    created = set(manifest.get("created", []))
    created.update(str(c.path) for c in changes if c.action == "created")
    folders = set(manifest.get("createdFolders", []))
    folders.update(str(folder) for c in changes for folder in c.folders)
    return {**manifest, "created": sorted(created), **({"createdFolders": sorted(folders)} if folders else {})}


def remove_created_folders(manifest: dict, files: list[Path]) -> list[Change]:
    """Remove the folders the install made for ``files`` (recorded by :func:`note_created`) that are empty now,
    innermost first; a folder holding anything (the host's own files, the user's) stays."""
    removed = []
    made = [Path(f) for f in manifest.get("createdFolders", []) if isinstance(f, str)]
    for folder in sorted((f for f in made if any(f == p.parent or f in p.parents for p in files)),
                         key=lambda f: len(f.parts), reverse=True):
        try:
            folder.rmdir()  # only an empty folder goes
        except OSError:
            continue
        removed.append(Change(folder, "removed", None, ["the empty folder the install made"]))
    return removed


def forget(manifest_file: Path, manifest: dict, files: list[Path]) -> None:
    """Drop what ``manifest`` says about ``files`` (and the folders made for them) after their uninstall; the
    manifest goes when nothing else is left in it (a project-scope manifest is shared by every project)."""
    names = {str(p) for p in files}
    made = {str(f) for f in manifest.get("createdFolders", [])
            if isinstance(f, str) and any(Path(f) == p.parent or Path(f) in p.parents for p in files)}
    left = {
        **{k: v for k, v in manifest.items() if k not in ("created", "createdFolders", "originals", "userServers")},
        "created": [p for p in manifest.get("created", []) if p not in names],
        "createdFolders": [f for f in manifest.get("createdFolders", []) if f not in made],
        "originals": {k: v for k, v in (manifest.get("originals") or {}).items() if k not in names},
        "userServers": {k: v for k, v in (manifest.get("userServers") or {}).items() if k not in names},
    }
    left = {k: v for k, v in left.items() if v}
    if left:
        state.write_json(manifest_file, left)
    else:
        manifest_file.unlink(missing_ok=True)  # nothing of this install is left to remember


def is_empty(data: object) -> bool:
    """Only empty containers left (``{"hooks": {}}``, ``{"mcpServers": {}}``)."""
    return isinstance(data, dict | list) and all(is_empty(v) for v in (data.values() if isinstance(data, dict)
                                                                       else data))


def finish_uninstall(path: Path, data: dict, text: str, manifest: dict, details: list[str],
                     original: tuple[bytes, object] | None = None) -> Change:
    """Write what is left of ``path`` (``data``, as ``text``) after our entries went. When that equals the
    content before the first install (``original``, :func:`original_of`), the exact bytes of then are written
    back. A file install created that holds nothing else is removed (no backup then: it held only what install
    wrote). Otherwise ``text`` is written, ending with the whitespace the file ended with."""
    old = path.read_bytes().decode("utf-8")  # not read_text: that turns CRLF into LF
    if original is not None and original[1] == data:
        change = write_file(path, original[0].decode("utf-8"), details)
        if change.action == "updated":
            change.details = [*details, "the file is again byte for byte as before the install"]
        return change
    if str(path) in manifest.get("created", []) and is_empty(data):
        path.unlink()
        return Change(path, "removed", None, details)
    text = text.rstrip() + old[len(old.rstrip()):] if text.strip() else text
    return write_file(path, text, details)


def uninstall_hooks_file(path: Path, host: str, manifest: dict) -> Change | None:
    """Remove our handlers from the hooks JSON file ``path`` (``{"hooks": {...}}``; an event or a ``hooks`` key
    our removal left empty goes too, unless the file had it before the install). ``None`` when the file does
    not exist, or has no hook table."""
    if not path.exists():
        return None
    data = read_json_file(path, ("hooks",))
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return None
    original = original_of(path, manifest, json.loads)
    before = original[1] if original and isinstance(original[1], dict) else {}
    had = before.get("hooks") if isinstance(before.get("hooks"), dict) else {}
    kept, removed = without_our_hooks(hooks, host, keep=set(had))
    if not removed:  # none of ours there: the file is left exactly as it is (not even re-indented)
        return Change(path, "unchanged", None, ["no pi-memory hooks"])
    if kept or "hooks" in before:
        data["hooks"] = kept
    else:
        data.pop("hooks")
    return finish_uninstall(path, data, dump_like(data, current_text(path)), manifest,
                            [f"removed {removed} pi-memory hook(s)"], original)


def dump_json(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def summarise(changes: list[Change]) -> str:
    """The lines a person reads after an install or uninstall."""
    lines = []
    for change in changes:
        what = f"{change.action} {change.path}"
        if change.backup:
            what += f" (backup of the old text: {change.backup})"
        if change.details and change.action != "unchanged":
            what += ": " + "; ".join(change.details)
        lines.append(what)
    return "\n".join(lines)
