"""A store file's own layout (line endings, BOM, blank lines, spaces, empty entries) kept without its entries, and
given back by a write that is asked to (a learning undo's ``restore``) only when it may."""

from __future__ import annotations

import hashlib

import pytest

from pi_memory.curated import MemoryStore, Operation
from pi_memory.curated.layout import Layout, Restore

CASES = [  # (the file's bytes, the entries the reader finds, in order, copies included)
    (b"A\r\n\xc2\xa7\r\nB\r\nline 2\r\n", ["A", "B\nline 2"]),
    ("\ufeffA\n§\nB\n".encode(), ["A", "B"]),
    (b"A\n\n\n\n\xc2\xa7\n\n\n\nB\n", ["A", "B"]),
    (b"A\rx\n\xc2\xa7\n\xc2\xa7\n  B \n\xc2\xa7\nB\r\r\n\n", ["A\nx", "B", "B"]),
    (b"\xc2\xa7\nA\n\xc2\xa7\n", ["A"]),  # a leading and a trailing delimiter
    (b"A", ["A"]),  # no trailing newline
    (b" \n\n", []),  # only blank lines
]


@pytest.mark.parametrize(("raw", "entries"), CASES)
def test_a_layout_gives_back_its_bytes_for_its_entries_only(raw, entries):
    layout = Layout.of(raw)
    assert layout is not None and layout.digest == hashlib.sha256(raw).hexdigest()
    assert layout.fill(entries) == raw
    assert Layout.from_json(layout.to_json()) == layout
    assert layout.fill([*entries, "C"]) is None  # another count of entries
    if entries:
        assert layout.fill([entries[0] + "!", *entries[1:]]) is None  # another text
        assert layout.fill(list(reversed(entries))) in (None, raw)  # another order (the same when all alike)
    for entry in entries:
        for line in entry.split("\n"):
            assert line not in "".join(layout.gaps)


@pytest.mark.parametrize("raw", [None, b"", b"A\n\xc2\xa7\nB\n", b"A\n\xc2\xa7\nA\n", b"caf\xe9\n"])
def test_no_layout_for_no_file_the_store_format_or_bytes_that_are_not_utf8(raw):
    assert Layout.of(raw) is None


def _store(tmp_path, raw: bytes) -> tuple[MemoryStore, object]:
    path = tmp_path / "MEMORY.md"
    path.write_bytes(raw)
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    return store, path


def test_a_write_reports_the_layout_it_replaced_and_the_bytes_it_wrote(tmp_path):
    raw = b"A\r\n\xc2\xa7\r\nB\r\n"
    store, path = _store(tmp_path, raw)
    result = store.add("memory", "C")
    assert result.published.before == Layout.of(raw)
    assert result.published.digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert result.published.restored is None
    assert store.add("memory", "D").published.before is None  # the file is in the store's format now


def test_a_restore_is_made_only_when_the_file_is_as_left_and_the_entries_are_the_same(tmp_path):
    raw = b"A\r\n\xc2\xa7\r\nB\r\n"
    store, path = _store(tmp_path, raw)
    layout = store.add("memory", "C").published.before
    left = hashlib.sha256(path.read_bytes()).hexdigest()
    wrong = Restore(layout, "0" * 64)  # the file does not hold what the write left
    r = store.apply("memory", [Operation(action="remove", old_text="C")], restore=wrong)
    assert (r.success, r.published.restored, path.read_bytes()) == (True, "changed", b"A\n\xc2\xa7\nB\n")
    store.add("memory", "C")
    r = store.apply("memory", [Operation(action="replace", old_text="C", content="D")], restore=Restore(layout, left))
    assert (r.published.restored, path.read_bytes()) == ("entries", b"A\n\xc2\xa7\nB\n\xc2\xa7\nD\n")
    left = hashlib.sha256(path.read_bytes()).hexdigest()
    r = store.apply("memory", [Operation(action="remove", old_text="D")], restore=Restore(layout, left))
    assert (r.published.restored, path.read_bytes()) == ("restored", raw)
    assert store.entries("memory") == ["A", "B"]
