"""A data folder opened for reading only gets no block write: ``updateMemory`` (the model's), ``blocks create`` (a
person's) and the defaults a session start creates are refused before any lock or file is touched, though the
``blocks/`` and ``locks/`` folders inside keep their write bits (and root may write anywhere). The folder's
bytes stay as they were."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import (  # noqa: E402,F401
    TELL,
    own_agent,
    root_read_only,
    root_todo,
    seed_every_store,
    text_cli,
    tree_state,
)

pytestmark = pytest.mark.usefixtures("own_agent")


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    seed_every_store(folder)
    yield folder
    folder.chmod(0o755)


@pytest.mark.parametrize("args", [{"blockKey": "agent", "newText": "ro line"},
                                  {"blockKey": "agent", "oldText": "reviews", "newText": "skips"},
                                  {"blockKey": "agent", "oldText": "no such text", "newText": "x"}],
                         ids=["append", "replace", "no match"])
def test_update_memory_is_refused_and_changes_nothing(data, args):
    from pi_memory.runtime import open_memory

    why = root_read_only(data)
    before = tree_state(data)
    memory = open_memory(override_dir=data)
    try:
        tools = {tool.name: tool for tool in memory.tools()}
        result = tools["updateMemory"].call(args).result
    finally:
        memory.close()
    assert (result["success"], result["code"]) == (False, "read_only")
    assert result["error"] == f"Nothing was saved to block 'agent': {why} {TELL}{root_todo(data)}"
    assert tree_state(data) == before


def test_blocks_create_is_refused_in_a_persons_words(data):
    why = root_read_only(data)
    before = tree_state(data)
    code, out, err = text_cli(["blocks", "create", "team", "--description", "who is on the team", "--dir", str(data)])
    assert (code, out) == (1, "")
    assert err.strip().splitlines()[-1] == (f"refused: Block 'team' was not created at {data}/blocks/team.md: {why} "
                                            f"{root_todo(data)}")
    assert tree_state(data) == before


def test_a_project_block_is_refused_too(data, tmp_path):
    """Its lock file would go into the data folder's locks/ (the block file itself is in the project)."""
    from pi_memory.blocks import BlockStore
    from pi_memory.config import load_settings

    proj = tmp_path / "proj"
    (proj / ".pi" / "memory-blocks").mkdir(parents=True)
    (proj / ".pi" / "memory-blocks" / "notes.md").write_text("---\ndescription: notes\nlimit: 200\n---\n\nold\n")
    store = BlockStore.from_settings(load_settings(proj, override_dir=data), proj, project_trusted=True)
    why = root_read_only(data)
    before, project_before = tree_state(data), tree_state(proj)
    result = store.update("notes", "new line")
    assert (result.success, result.code) == (False, "read_only")
    assert result.error == f"Nothing was saved to block 'notes': {why} {TELL}{root_todo(data)}"
    assert (tree_state(data), tree_state(proj)) == (before, project_before)


def test_a_session_start_creates_no_default_block(tmp_path):
    """An empty blocks/ folder (writable) in a read-only data folder: no user.md / agent.md appear."""
    from pi_memory.blocks import BlockStore
    from pi_memory.config import load_settings

    data = tmp_path / "data"
    (data / "blocks").mkdir(parents=True)
    (data / "locks").mkdir()
    store = BlockStore.from_settings(load_settings(tmp_path, override_dir=data), None, project_trusted=False)
    root_read_only(data)
    try:
        assert store.ensure_defaults() == []
        assert tree_state(data) == {"blocks": "dir", "locks": "dir"}
    finally:
        data.chmod(0o755)
