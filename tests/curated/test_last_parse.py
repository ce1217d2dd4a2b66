"""A store file read again with the same bytes is not parsed again (``pi-memory status`` read every store twice:
once when the memory opened, once for its figures: 1.2 s for a 16 MB MEMORY.md), while any change of the bytes,
even one that keeps the size and the modification time, is read; and the faster delimiter split gives the
entries the line-by-line one gave."""

from __future__ import annotations

import os
import re

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated import entries as fmt


@pytest.fixture
def parses(monkeypatch) -> list[int]:
    """The byte length of every file :func:`pi_memory.curated.entries.analyse` parses."""
    seen: list[int] = []
    real = fmt.analyse

    def counting(raw, limit):
        seen.append(len(raw) if isinstance(raw, bytes) else -1)
        return real(raw, limit)

    monkeypatch.setattr(fmt, "analyse", counting)
    return seen


def test_status_parses_each_store_file_once(tmp_path, monkeypatch, parses):
    from pi_memory.insights import status_data
    from pi_memory.runtime import open_memory

    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    data.mkdir()
    (data / "MEMORY.md").write_text("Uses uv\n§\nRuff for lint\n")
    (data / "USER.md").write_text("Prefers short answers\n")
    memory = open_memory(tmp_path, override_dir=data)
    status = status_data(memory)
    assert sorted(n for n in parses if n >= 0) == [22, 25]  # USER.md, MEMORY.md: once each
    assert (status["stores"]["memory"]["entryCount"], status["stores"]["user"]["entryCount"]) == (2, 1)


def test_a_change_that_keeps_size_and_time_is_read(tmp_path, parses):
    path = tmp_path / "MEMORY.md"
    path.write_text("alpha\n§\nbravo\n")
    store = MemoryStore(tmp_path)
    assert store.read("memory").entries == ["alpha", "bravo"]
    assert store.read("memory").entries == ["alpha", "bravo"]
    assert parses == [15]
    stat = path.stat()
    with path.open("r+b") as fh:  # in place, same length, then the old times back
        fh.write(b"ALPHA")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (stat.st_size, stat.st_mtime_ns)
    assert store.read("memory").entries == ["ALPHA", "bravo"]
    assert store.entries("memory") == ["ALPHA", "bravo"] and parses == [15, 15]


def test_a_limit_change_parses_again(tmp_path):
    (tmp_path / "MEMORY.md").write_text("# Notes\n\n- one long line of hand-written notes\n- another one\n")
    store = MemoryStore(tmp_path, memory_char_limit=2200)
    assert store.read("memory").success and store.drift("memory") is None
    store.limits["memory"] = 10
    store.read("memory")
    assert store.drift("memory").drift == "plain_markdown"


def _line_by_line(text: str) -> list[str]:
    """The split as it was: at every line that is exactly §."""
    return [p.strip() for p in re.split(r"^§$", fmt.normalise_newlines(text), flags=re.MULTILINE) if p.strip()]


@pytest.mark.parametrize("text", [
    "", "§", "\n§\n", "§\n§", "a\n§\n§\nb", "a\n§\nb\n§", "§\na", "a\n§", " §\na", "a\n§ \nb", "a\n§§\nb",
    "a\r\n§\r\nb", "a\r§\rb", "a\n\u2028§\nb", "a\n§\u2028b", "\n\n§\n\n", "a §\n§ b", "x\n§\n \n§\ny\n",
])
def test_the_split_gives_the_entries_the_line_by_line_split_gave(text):
    assert fmt.parse(text) == _line_by_line(text)
