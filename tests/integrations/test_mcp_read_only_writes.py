"""``pi-memory mcp`` on a data folder made read-only with ``chmod 555`` (the folder alone: its subfolders keep their
write bits, and the suite runs as root, whom no mode stops): the server starts for reading only, and every write
tool is refused, ``updateMemory`` and ``skill_manage`` included, with the folder's bytes unchanged."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import TELL, root_read_only, root_todo, seed_every_store, tree_state  # noqa: E402

CALLS = [
    ("memory_add", {"target": "memory", "content": "the deploy port is 8443"}, "Nothing was saved to MEMORY.md"),
    ("updateMemory", {"blockKey": "agent", "newText": "ro line"}, "Nothing was saved to block 'agent'"),
    ("skill_manage", {"action": "create", "name": "ro-skill", "description": "A skill saved while read-only",
                      "scope": "global", "procedure_steps": ["step one"]},
     "Could not write {data}/skills/ro-skill/SKILL.md; nothing was changed"),
    ("skill_manage", {"action": "delete", "skill_id": "global:evil"},
     "Could not delete global:evil; nothing was changed"),
]


def test_every_write_tool_is_refused_and_the_folder_is_unchanged(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    data = tmp_path / "data"
    seed_every_store(data)
    why = root_read_only(data)
    before = tree_state(data)
    env = {k: v for k, v in os.environ.items() if k not in ("PI_CODING_AGENT_SESSION_DIR", "PI_MEMORY_INDEX_INTERVAL")}
    env.update(PI_MEMORY_DIR=str(data), CODEX_HOME=str(tmp_path / "codex"))
    params = StdioServerParameters(command=sys.executable, args=["-m", "pi_memory.cli", "mcp"], env=env)
    answers = []

    async def scenario():
        async with Client(params) as client:
            for name, args, _ in CALLS:
                answers.append((await client.call_tool(name, args)).structured_content)

    try:
        anyio.run(scenario)
        for (_, _, subject), answer in zip(CALLS, answers, strict=True):
            assert (answer["success"], answer["code"]) == (False, "read_only"), answer
            assert answer["error"] == f"{subject.format(data=data)}: {why} {TELL}{root_todo(data)}"
        assert tree_state(data) == before
    finally:
        data.chmod(0o755)
