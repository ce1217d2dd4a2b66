"""Control characters (``ESC``, ``NUL``, C1) cannot be written into a memory block, by the ``updateMemory``
tool or by ``create``: the curated stores' check (:func:`pi_memory.curated.entries.holds_control`) refuses them,
and the file stays as it was. Tabs and line breaks are text."""

from __future__ import annotations

import pytest

from pi_memory.blocks import BlockStore
from pi_memory.tools.blocks import create_block_tools

SEED = "---\ndescription: Information about the user\nlimit: 2000\n---\n\nPrefers functional style.\n"
UPDATE = ("newText holds control characters (terminal escape codes or similar), which can hide text from a person "
          "reading the block. Nothing was changed. Remove them and send plain text.")
CONTROL = ["ctl\x1b[31m", "NUL\x00here", "bell\x07", "c1\x9bcsi", "del\x7f", "lone CR\rover", "\x1b[8mhidden\x1b[0m"]


@pytest.fixture
def store(tmp_path):
    project = tmp_path / "repo"
    (project / ".pi" / "memory-blocks").mkdir(parents=True)
    (project / ".pi" / "memory-blocks" / "user.md").write_text(SEED)
    return BlockStore(tmp_path / "data" / "blocks", project, project_trusted=True)


@pytest.mark.parametrize("text", CONTROL)
def test_update_memory_refuses_control_characters(store, text):
    path = store.project_dir / "user.md"
    (tool,) = create_block_tools(store)
    for arguments in ({"blockKey": "user", "newText": text},
                      {"blockKey": "user", "oldText": "functional", "newText": text}):
        out = tool.call(arguments)
        assert out.is_error and (out.result["code"], out.result["error"]) == ("invalid_content", UPDATE)
    assert path.read_text() == SEED


@pytest.mark.parametrize(("text", "value"), [
    ("Uses\ttabs", "Prefers functional style.\nUses\ttabs"),
    ("two\r\nlines", "Prefers functional style.\ntwo\nlines"),
])
def test_tabs_and_line_breaks_are_text(store, text, value):
    result = store.update("user", text)
    assert result.success and store.get("user").value == value


@pytest.mark.parametrize("text", CONTROL)
@pytest.mark.parametrize("field", ["description", "value"])
def test_create_refuses_control_characters(store, text, field):
    if field == "description" and text == "lone CR\rover":  # a description is one line: its breaks are spaces
        assert store.create("notes", description=text).block.description == "lone CR over"
        return
    result = store.create("notes", **{field: text})
    what = "description" if field == "description" else "initial text"
    assert (result.success, result.code, result.error) == (False, "invalid_content", (
        f"The {what} holds control characters (terminal escape codes or similar), which can hide or change text "
        "on a screen showing it. Nothing was created. Remove them and use plain text."))
    assert not (store.global_dir / "notes.md").exists()
