"""``pi-memory import pi-hermes-memory [PATH]``: move over from the pi-hermes-memory extension (seed 001).

Its layout (``<agentDir>`` = ``~/.pi/agent``)::

    <agentDir>/pi-hermes-memory/   MEMORY.md  USER.md  failures.md  STANDING.md  sessions.db  skills/<slug>/SKILL.md
    <agentDir>/projects-memory/<project>/   MEMORY.md  skills/<slug>/SKILL.md

``PATH`` is that ``pi-hermes-memory`` folder or the agent folder holding it (default: ``<agentDir>``).

What goes where:

* ``MEMORY.md`` / ``USER.md`` / ``failures.md`` -> our ``memory`` / ``user`` / ``failure`` stores, the
  ``<!-- created=…, last=… -->`` comment removed (its date kept for entries that go to the extended store);
  the peer's limits are 5,000 characters, ours 2,200 / 1,375 by default, so what does not fit goes to the
  extended store (searchable by ``memory_search``), never dropped.
* ``projects-memory/<project>/`` -> that project's store and skills (failure entries the peer scoped to a
  project, ``project64=`` in their comment, join our failure store, which is global). The peer names a project by the basename
  of its git root, we key it by the root's path: the folder is found from the ``cwd`` of the peer's own
  session rows (``sessions.db``) that still exist on disk, or from ``--project-map NAME=PATH``, or is the
  current project when the names match. A project with no known folder is skipped, with the flag to pass.
* ``skills/`` -> our global and project skills (:mod:`.skills`); ``STANDING.md`` -> merged into ours
  (:mod:`.standing`); ``sessions.db`` -> its ``memories`` rows that are not copies of a Markdown entry (the
  peer's extended store) into ours. Its conversations come from pi's session files, which
  ``pi-memory index-sessions`` reads itself; the ones whose file is gone are written back as pi session
  files from the messages ``sessions.db`` kept (:mod:`.sessions`) and indexed.

Idempotent: a second run finds everything "already there". Nothing of ours is ever overwritten.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from pi_memory.config import read_json_object
from pi_memory.curated import entries as fmt
from pi_memory.curated.store import failure_entry
from pi_memory.importers.curated import existing_rows, import_entries, index_or_none, refusal
from pi_memory.importers.report import ImportReport
from pi_memory.importers.skills import import_skills
from pi_memory.importers.standing import import_standing
from pi_memory.project import project_id, project_name, project_root

_META = re.compile(r"\s*<!--\s*created=(?P<created>\d{4}-\d{2}-\d{2})?[^>]*-->\s*$")
GLOBAL_FILES = (("MEMORY.md", "memory"), ("USER.md", "user"), ("failures.md", "failure"))


class ImportSourceError(ValueError):
    """The source folder or file is missing or unreadable; the message says what to pass instead."""


def layout(path: Path | None, agent_dir: Path) -> tuple[Path, Path]:
    """``(store folder, projects folder)`` for ``PATH`` (see the module docstring). Without ``PATH``: the
    ``memoryDir`` / ``projectsMemoryDir`` of the peer's ``hermes-memory-config.json`` when set, else
    ``<agentDir>/pi-hermes-memory`` (or its pre-0.7.10 name ``<agentDir>/memory``)."""
    if path is None:
        config = read_json_object(agent_dir / "hermes-memory-config.json", ImportSourceError)
        memory_dir = config.get("memoryDir") if isinstance(config.get("memoryDir"), str) else None
        projects = config.get("projectsMemoryDir") if isinstance(config.get("projectsMemoryDir"), str) else None
        root = Path(memory_dir).expanduser() if memory_dir else agent_dir / "pi-hermes-memory"
        if not memory_dir and not root.is_dir() and (agent_dir / "memory" / "MEMORY.md").is_file():
            root = agent_dir / "memory"
        projects_dir = agent_dir / (projects or "projects-memory")
    else:
        base = path.expanduser()
        root = base / "pi-hermes-memory" if (base / "pi-hermes-memory").is_dir() else base
        projects_dir = root.parent / "projects-memory"
    if not root.is_dir():
        raise ImportSourceError(f"No pi-hermes-memory folder at {root}. Pass the folder that holds its MEMORY.md "
                                "(e.g. ~/.pi/agent/pi-hermes-memory) or the pi agent folder above it.")
    return root, projects_dir


def read_entries(path: Path) -> list[tuple[str, str | None]]:
    """``(text, created)`` of every entry of a peer Markdown store, metadata comment removed."""
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return []
    out = []
    for entry in fmt.parse(fmt.normalise_newlines(text)):
        m = _META.search(entry)
        out.append((entry[: m.start()].strip() if m else entry.strip(), m.group("created") if m else None))
    return [(t, c) for t, c in out if t]


def _rows(db: Path, sql: str) -> list[sqlite3.Row]:
    if not db.is_file():
        return []
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.Error:
        return []
    finally:
        conn.close()


def project_folders(db: Path, names: list[str], mapping: dict[str, Path], current: Path | None) -> dict:
    """``{name: git root or None}`` for the peer's project names (module docstring)."""
    found: dict[str, Path | None] = {n: None for n in names}
    for name, folder in mapping.items():
        found[name] = project_root(folder)
    for row in _rows(db, "SELECT DISTINCT project, cwd FROM sessions WHERE cwd IS NOT NULL"):
        name, cwd = row["project"], row["cwd"]
        if found.get(name) is None and name in found and Path(cwd).is_dir():
            root = project_root(Path(cwd))
            if project_name(root) == name or Path(cwd).name == name:
                found[name] = root
    if current is not None and found.get(project_name(current), "absent") is None:
        found[project_name(current)] = current
    return found


def import_hermes(memory, path: Path | None = None, apply: bool = False,
                  project_map: dict[str, Path] | None = None) -> ImportReport:
    """Import everything of the peer's layout into ``memory`` (:class:`pi_memory.runtime.Memory`)."""
    from pi_memory.runtime import open_memory

    settings = memory.settings
    root, projects = layout(path, settings.agent_dir)
    report = ImportReport(source=str(root), applied=apply)
    for name, target in GLOBAL_FILES:
        import_entries(report, memory, memory.store, target, read_entries(root / name), name, apply)
    names = sorted(p.name for p in projects.iterdir() if p.is_dir()) if projects.is_dir() else []
    db = root / "sessions.db"
    folders = project_folders(db, names, project_map or {}, memory.project_root)
    for name in names:
        folder = projects / name
        kind = f"projects-memory/{name}"
        target_root = folders.get(name)
        if target_root is None:
            count = len(read_entries(folder / "MEMORY.md"))
            report.add(kind, f"{count} entr{'y' if count == 1 else 'ies'} and its skills", "skip",
                       f"no folder is known for project {name!r}; run the import again with "
                       f"--project-map {name}=/path/to/its/repository")
            continue
        pmem = memory if target_root == memory.project_root else open_memory(target_root, settings.data_dir)
        import_entries(report, pmem, pmem.store, "project", read_entries(folder / "MEMORY.md"), kind, apply)
        import_skills(report, pmem.skills(), "project", folder / "skills", apply, kind=f"{kind}/skills")
    import_skills(report, memory.skills(), "global", root / "skills", apply)
    import_standing(report, settings.data_dir, root / "STANDING.md", apply, settings.lock_timeout)
    _import_extended(report, memory, db, root, projects, folders, apply)
    _restore_sessions(report, memory, db, apply)
    return report


def _import_extended(report: ImportReport, memory, db: Path, root: Path, projects: Path, folders: dict,
                     apply: bool) -> None:
    """The peer's SQLite-only memories (rows of ``memories`` that are no Markdown entry) -> our extended store."""
    from pi_memory.index import add_extended

    markdown = {t for name, _ in GLOBAL_FILES for t, _ in read_entries(root / name)}
    for folder in projects.glob("*/MEMORY.md"):
        markdown |= {t for t, _ in read_entries(folder)}
    conn = index_or_none(memory, apply)
    kind = "sessions.db memories"
    for row in _rows(db, "SELECT * FROM memories ORDER BY id"):
        keys = row.keys()
        content = (row["content"] or "").strip()
        target = row["target"] if row["target"] in ("memory", "user", "failure") else "memory"
        if target == "failure" and "category" in keys and row["category"]:
            reason = row["failure_reason"] if "failure_reason" in keys else None
            text = failure_entry(content, row["category"], reason)
        else:
            text = content
        if not content or content in markdown or text in markdown:
            continue  # the peer's mirror of a Markdown entry, imported with its file
        scope, pid = "global", None
        if row["project"]:
            root_path = folders.get(row["project"])
            if root_path is None:
                report.add(kind, text, "skip", f"project {row['project']!r} has no known folder; pass "
                           f"--project-map {row['project']}=/path/to/its/repository")
                continue
            scope, pid = "project", project_id(root_path)
            target = "project" if target == "memory" else target
        why = refusal(text)
        if why:
            report.add(kind, text, "skip", why, refused=True)
            continue
        if text in existing_rows(conn, scope, pid, target):
            report.add(kind, text, "already", to="extended store")
            continue
        if apply:
            category = row["category"] if "category" in keys and target == "failure" else None
            created = str(row["created"]) if "created" in keys and row["created"] else None
            add_extended(memory.index(), text, target=target, scope=scope, project=pid, category=category,
                         created=created)
        report.add(kind, text, "extended", to="extended store")


def _restore_sessions(report: ImportReport, memory, db: Path, apply: bool) -> None:
    from pi_memory.importers.sessions import restore_sessions

    tables = {name: [dict(r) for r in _rows(db, f"SELECT * FROM {name} ORDER BY rowid")]
              for name in ("sessions", "session_files", "messages")}
    if not tables["sessions"]:
        return
    folder = restore_sessions(report, tables, memory.settings.agent_dir / "sessions", apply)
    if folder is not None:
        from pi_memory.index import index_paths

        index_paths(memory.index(), [folder])
    report.notes.append(f"sessions.db holds {len(tables['sessions'])} conversation(s); those whose pi session "
                        "file still exists are read from it: run `pi-memory index-sessions` to make them searchable.")
