"""``pi-memory uninstall pi``: the twin of ``install pi`` (README: ``uninstall <host>``), in-process."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from pi_memory.cli.app import app

RUN = CliRunner()


def cli(*args: str):
    result = RUN.invoke(app, list(args))
    return result.exit_code, result.stdout


def test_uninstall_pi_removes_exactly_the_installed_extension(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    (agent / "extensions" / "other").mkdir(parents=True)
    (agent / "memories").mkdir()
    (agent / "memories" / "MEMORY.md").write_text("kept\n", encoding="utf-8")
    assert cli("install", "pi", "--agent-dir", str(agent))[0] == 0
    assert (agent / "extensions" / "pi-memory" / "index.ts").is_file()
    code, text = cli("uninstall", "pi", "--agent-dir", str(agent))
    assert code == 0
    assert text == (f"Removed the pi extension at {agent / 'extensions' / 'pi-memory'}. Your memories are kept; "
                    "`pi-memory install pi` puts it back.\n")
    assert sorted(p.name for p in (agent / "extensions").iterdir()) == ["other"]
    assert (agent / "memories" / "MEMORY.md").read_text(encoding="utf-8") == "kept\n"


def test_uninstall_pi_twice_says_there_is_nothing_to_change(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    assert cli("install", "pi", "--agent-dir", str(agent))[0] == 0
    assert cli("uninstall", "pi", "--agent-dir", str(agent))[0] == 0
    code, text = cli("uninstall", "pi", "--agent-dir", str(agent), "--json")
    assert code == 0 and json.loads(text) == {"success": True, "host": "pi", "action": "uninstall", "removed": None,
                                                  "kept": None}
    code, text = cli("uninstall", "pi", "--agent-dir", str(agent))
    assert (code, text) == (0, f"pi: nothing to change; no pi-memory extension at {agent / 'extensions' / 'pi-memory'}.\n")


def test_uninstall_pi_leaves_a_folder_it_did_not_write(tmp_path: Path) -> None:
    folder = tmp_path / "agent" / "extensions" / "pi-memory"
    folder.mkdir(parents=True)
    (folder / "index.ts").write_text("// someone else's\n", encoding="utf-8")
    code, text = cli("uninstall", "pi", "--agent-dir", str(tmp_path / "agent"), "--json")
    assert code == 1 and (folder / "index.ts").read_text(encoding="utf-8") == "// someone else's\n"
    assert "pi-memory.json" in json.loads(text)["error"] and "Delete the folder yourself" in json.loads(text)["error"]
