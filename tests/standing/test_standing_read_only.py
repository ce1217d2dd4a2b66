"""A data folder opened for reading only gets no edit of ``STANDING.md``: ``pin add|remove|clear`` (the CLI) and
pi's ``/memory-pin`` are refused before the lock, in a person's words (what is wrong, what to do), and the folder's
bytes stay as they were. (The atomic write's own check refused these before too; the shared check now says it
first, in the same words.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import own_agent, root_read_only, root_todo, seed_every_store, text_cli, tree_state  # noqa: E402,F401

pytestmark = pytest.mark.usefixtures("own_agent")


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    seed_every_store(folder)
    yield folder
    folder.chmod(0o755)


@pytest.mark.parametrize("argv", [["pin", "add", "always run the tests"], ["pin", "remove", "1"], ["pin", "clear"]],
                         ids=lambda a: a[1])
def test_pin_is_refused_and_changes_nothing(data, argv):
    why = root_read_only(data)
    before = tree_state(data)
    code, out, err = text_cli([*argv, "--dir", str(data)])
    assert code == 1
    assert f"Nothing was saved to STANDING.md: {why} {root_todo(data)}" in out + err
    assert "Retrying will not help" not in out + err
    assert tree_state(data) == before


def test_pi_memory_pin_command_is_refused(data):
    from pi_memory.integrations.pi.commands import _pin
    from pi_memory.runtime import open_memory

    why = root_read_only(data)
    before = tree_state(data)
    memory = open_memory(override_dir=data)
    try:
        reply = _pin(memory, "add always run the tests", {})
    finally:
        memory.close()
    assert reply["level"] == "warning"
    assert f"Nothing was saved to STANDING.md: {why} {root_todo(data)}" in reply["text"]
    assert tree_state(data) == before
