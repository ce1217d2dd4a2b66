"""``pi-memory install pi`` over a folder that is already there (breaker F0: it was deleted, no check, no backup).

A folder we did not write is refused with nothing changed; a folder of ours holding a file we did not write (or
one of ours edited) is moved whole to ``<agent>/pi-memory-backups/`` and kept, and the output says where."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.integrations.pi import EXTENSION_DIR

RUN = CliRunner()


def cli(*args: str):
    result = RUN.invoke(app, list(args))
    return result.exit_code, result.stdout


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_install_refuses_a_folder_it_did_not_write_and_changes_nothing(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    folder = agent / "extensions" / "pi-memory"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "MEMORY.md").write_text("precious\n", encoding="utf-8")
    (folder / "package.json").write_text('{"name":"pi-memory-seed"}\n', encoding="utf-8")
    before = tree(agent)
    code, text = cli("install", "pi", "--agent-dir", str(agent), "--json")
    assert code == 1
    assert json.loads(text)["error"] == (
        f"Not installed, nothing was changed: {folder} has no pi-memory.json, so `pi-memory install pi` did not "
        "write it. Move that folder out of extensions/ (or delete it if it is an old pi-memory extension you no "
        "longer need), then run `pi-memory install pi` again.")
    assert tree(agent) == before
    assert sorted(p.name for p in agent.iterdir()) == ["extensions"]  # no staging folder left behind


def test_install_refuses_a_file_named_like_the_extension(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions").mkdir(parents=True)
    (agent / "extensions" / "pi-memory").write_text("notes\n", encoding="utf-8")
    code, _ = cli("install", "pi", "--agent-dir", str(agent))
    assert code == 1 and (agent / "extensions" / "pi-memory").read_text(encoding="utf-8") == "notes\n"


def test_reinstall_over_our_own_untouched_copy_replaces_it_and_keeps_nothing(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    assert cli("install", "pi", "--agent-dir", str(agent))[0] == 0
    code, text = cli("install", "pi", "--agent-dir", str(agent), "--json")
    assert code == 0
    assert json.loads(text) == {"success": True, "installed": str(agent / "extensions" / "pi-memory"), "kept": None}
    assert sorted(p.name for p in agent.iterdir()) == ["extensions"]


def test_reinstall_keeps_a_file_the_user_added_and_one_they_edited(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    folder = agent / "extensions" / "pi-memory"
    assert cli("install", "pi", "--agent-dir", str(agent))[0] == 0
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    (folder / "index.ts").write_text("// my patch\n", encoding="utf-8")
    code, text = cli("install", "pi", "--agent-dir", str(agent))
    assert code == 0
    kept = sorted((agent / "pi-memory-backups").iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("pi-memory.bak.")
    assert (kept[0] / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert (kept[0] / "index.ts").read_text(encoding="utf-8") == "// my patch\n"
    assert (folder / "index.ts").read_text(encoding="utf-8") == (EXTENSION_DIR / "index.ts").read_text(encoding="utf-8")
    assert not (folder / "notes.txt").exists()
    assert text == (f"Installed the pi extension at {folder}. Start pi as usual; memory tools load with it.\n"
                    f"The earlier copy there held files pi-memory did not write; it was moved whole to {kept[0]} "
                    "(nothing deleted). Copy back what you need.\n")


def test_reinstall_over_an_old_install_without_hashes_keeps_only_the_unknown_kinds(tmp_path: Path) -> None:
    """An install from before the sha256 record: its .ts/.json files count as ours, a data folder does not."""
    agent = tmp_path / "agent"
    folder = agent / "extensions" / "pi-memory"
    folder.mkdir(parents=True)
    (folder / "index.ts").write_text("// old\n", encoding="utf-8")
    (folder / "pi-memory.json").write_text('{"python": "/usr/bin/python3"}\n', encoding="utf-8")
    assert cli("install", "pi", "--agent-dir", str(agent))[0] == 0
    assert not (agent / "pi-memory-backups").exists()
    (folder / "data").mkdir()
    (folder / "data" / "x.md").write_text("keep\n", encoding="utf-8")
    code, text = cli("uninstall", "pi", "--agent-dir", str(agent), "--json")
    kept = sorted((agent / "pi-memory-backups").iterdir())
    assert code == 0 and json.loads(text) == {"success": True, "host": "pi", "action": "uninstall",
                                              "removed": str(folder), "kept": str(kept[0])}
    assert (kept[0] / "data" / "x.md").read_text(encoding="utf-8") == "keep\n"
    assert not folder.exists()
