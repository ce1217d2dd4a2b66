"""Text with nothing readable left (only U+FFFD after the input edge replaced undecodable bytes or lone
surrogates) is refused, not saved as a row of replacement characters into every later prompt."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.tools import create_memory_tools

UNREADABLE = ("The content has no readable text: every character is one that could not be decoded (bytes that "
              "are not UTF-8, or half of an emoji), shown as \ufffd. Nothing was saved. Retype the text, or check "
              "the encoding of what was sent.")


def make(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "mem")
    store.load_from_disk()
    return store


@pytest.mark.parametrize("text", ["\ufffd", "\ufffd\ufffd\ufffd", " \ufffd \n \ufffd "])
def test_only_replacement_characters_are_refused(tmp_path, text):
    store = make(tmp_path)
    result = store.add("memory", text)
    assert (result.success, result.code, result.error) == (False, "invalid_content", UNREADABLE)
    assert not (tmp_path / "mem" / "MEMORY.md").exists()


def test_a_lone_surrogate_from_a_tool_call_is_refused_and_a_real_word_beside_it_kept(tmp_path):
    store = make(tmp_path)
    [add] = [t for t in create_memory_tools(store) if t.name == "memory_add"]
    refused = add.call({"target": "user", "content": "\ud83d"}).result
    assert (refused["success"], refused["code"]) == (False, "invalid_content")
    kept = add.call({"target": "user", "content": "Likes \ud83d tea"}).result
    assert kept["success"] is True
    assert (tmp_path / "mem" / "USER.md").read_text(encoding="utf-8") == "Likes \ufffd tea\n"


def test_replace_with_only_undecodable_bytes_keeps_the_entry(tmp_path):
    store = make(tmp_path)
    assert store.add("memory", "Uses make").success
    result = store.replace("memory", "make", "\ufffd\ufffd")
    assert result.code == "invalid_content"
    assert (tmp_path / "mem" / "MEMORY.md").read_text(encoding="utf-8") == "Uses make\n"


def test_cli_argument_of_bytes_that_are_not_utf8_is_refused(tmp_path):
    run = subprocess.run([sys.executable, "-m", "pi_memory", "--dir", str(tmp_path / "mem"), "add", "memory",
                          b"\xed\xa0\xbd"], capture_output=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.decode("utf-8") == f"refused (invalid_content): {UNREADABLE}\n"
    assert not (tmp_path / "mem" / "MEMORY.md").exists()
