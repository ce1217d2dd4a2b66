"""External edits are never silently lost: drift detection, backups, and what is NOT drift (issue #2 §2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated.entries import analyse, split_plain_markdown


def make(tmp_path: Path, content: bytes, limit: int = 200) -> MemoryStore:
    (tmp_path / "MEMORY.md").write_bytes(content)
    s = MemoryStore(tmp_path, memory_char_limit=limit)
    s.load_from_disk()
    return s


def backups(tmp_path: Path) -> list[Path]:
    return sorted(tmp_path.glob("MEMORY.md.bak.*"))


@pytest.mark.parametrize(
    "content",
    [
        b"one\r\n\xc2\xa7\r\ntwo\r\n",  # CRLF file (Hermes #42874 false drift)
        b"one\n\xc2\xa7\ntwo",  # no trailing newline
        b"one\n\xc2\xa7\ntwo\n\n\n",  # trailing blank lines
        b"\n\none\n\n\xc2\xa7\n\ntwo\n",  # blank lines around entries and delimiter
        b"one\n\xc2\xa7\n\xc2\xa7\ntwo\n\xc2\xa7\n",  # empty entry, trailing delimiter
        b"\xef\xbb\xbfone\n\xc2\xa7\ntwo\n",  # UTF-8 BOM
    ],
)
def test_formatting_only_differences_are_not_drift(tmp_path, content):
    s = make(tmp_path, content)
    assert s.drift("memory") is None
    assert s.entries("memory") == ["one", "two"]
    r = s.add("memory", "three")
    assert r.success
    assert (tmp_path / "MEMORY.md").read_text(encoding="utf-8") == "one\n§\ntwo\n§\nthree\n"
    assert backups(tmp_path) == []


def test_an_entry_over_the_limit_is_over_budget_not_drift(tmp_path):
    """Text appended without a '§' line joins the entry before it; a write keeps it whole, so it is not drift:
    adds are refused as over budget, shrinking changes work, no backup is written (issue 9 §11)."""
    raw = b"short entry\n\xc2\xa7\n" + b"appended by a patch tool without separators " * 10
    s = make(tmp_path, raw, limit=200)
    assert s.drift("memory") is None
    r = s.add("memory", "new")
    assert not r.success and r.code == "over_limit" and "over budget: it uses 453 of 200 chars" in r.error
    assert r.drift_backup is None and "memoryCharLimit" in r.error
    assert (tmp_path / "MEMORY.md").read_bytes() == raw
    notice = s.read("memory").notice
    assert "over budget: it holds 453 chars and its limit is 200" in notice and "One entry alone is 439" in notice
    r = s.remove("memory", "short")
    assert r.success
    assert (tmp_path / "MEMORY.md").read_bytes() == b"appended by a patch tool without separators " * 9 + \
        b"appended by a patch tool without separators\n"
    assert backups(tmp_path) == []


@pytest.mark.parametrize(("limit", "entries"), [
    (100, ["a" * 60, "b" * 60]),  # every entry fits, the store does not
    (50, ["c" * 60, "d" * 30]),  # one entry alone is over the limit
    (30, ["e" * 20, "f" * 20, "g" * 20]),
])
def test_a_lowered_limit_refuses_adds_and_keeps_the_file(tmp_path, limit, entries):
    raw = "\n§\n".join(entries).encode() + b"\n"
    s = make(tmp_path, raw, limit=limit)
    for _ in range(3):
        r = s.add("memory", "one more fact")
        assert not r.success and r.code == "over_limit" and "over budget" in r.error
        assert r.current_entries == entries
    s.begin_turn()
    assert s.replace("memory", entries[0][:5], "short").success  # shrinking is allowed
    assert (tmp_path / "MEMORY.md").read_bytes() == "\n§\n".join(["short", *entries[1:]]).encode() + b"\n"
    assert backups(tmp_path) == []


def test_malformed_delimiter_line_is_drift(tmp_path):
    s = make(tmp_path, "first\n § \nsecond\n".encode())
    r = s.add("memory", "third")
    assert not r.success and r.code == "drift"
    assert "line 2" in r.error


def test_not_utf8_is_drift_never_a_crash(tmp_path):
    raw = "用户偏好".encode("gbk")
    s = make(tmp_path, raw)  # load must not raise
    assert s.drift("memory").drift == "not_utf8"
    r = s.add("memory", "x")
    assert not r.success and r.code == "drift"
    assert "UTF-8" in r.error and "iconv" in r.error
    assert Path(r.drift_backup).read_bytes() == raw
    assert (tmp_path / "MEMORY.md").read_bytes() == raw
    assert s.read("memory").success  # read still works, with a notice
    assert "UTF-8" in s.read("memory").notice


def test_plain_markdown_gets_split_command(tmp_path):
    notes = "# Tooling\n- uses uv for everything\n- ruff for lint\n\n# People\n- Ada owns the deploy scripts\n"
    s = make(tmp_path, (notes * 8).encode(), limit=200)
    r = s.add("memory", "x")
    assert not r.success and r.code == "drift"
    assert "pi-memory split memory" in r.error


def test_small_plain_markdown_is_usable_but_noticed(tmp_path):
    notes = "# Tooling\n- uses uv\n- ruff for lint\n"
    s = make(tmp_path, notes.encode())
    assert s.drift("memory") is None
    r = s.read("memory")
    assert r.entry_count == 1 and "pi-memory split memory" in r.notice


def test_split_plain_markdown_proposes_standalone_entries():
    notes = "# Tooling\n- uses uv\n- ruff for lint\n  (since 2025)\n\nA paragraph\nof two lines.\n\n## People\n1. Ada owns deploys\n"
    assert split_plain_markdown(notes) == [
        "Tooling: uses uv",
        "Tooling: ruff for lint\n  (since 2025)",
        "Tooling: A paragraph\nof two lines.",
        "People: Ada owns deploys",
    ]


def test_external_append_between_writes_is_kept(tmp_path):
    s = make(tmp_path, b"one\n")
    with open(tmp_path / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("§\nadded by hand\n")
    assert s.add("memory", "three").success
    assert (tmp_path / "MEMORY.md").read_text() == "one\n§\nadded by hand\n§\nthree\n"


def test_write_through_symlink_keeps_link(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "MEMORY.md").write_text("one\n")
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    os.symlink(real / "MEMORY.md", store_dir / "MEMORY.md")
    s = MemoryStore(store_dir)
    assert s.add("memory", "two").success
    assert (store_dir / "MEMORY.md").is_symlink()
    assert (real / "MEMORY.md").read_text() == "one\n§\ntwo\n"


def test_analyse_missing_file_is_empty_store():
    a = analyse(None, 100)
    assert a.entries == [] and a.drift is None


@pytest.mark.parametrize("folder", ["plain", "with space", "it's"])
def test_split_hint_names_the_data_root_it_was_read_from(tmp_path, folder):
    import shlex

    root = tmp_path / folder
    root.mkdir()
    notes = "# Tooling\n- uses uv for everything\n- ruff for lint\n\n# People\n- Ada owns the deploy scripts\n"
    s = make(root, (notes * 8).encode(), limit=200)
    r = s.add("memory", "x")
    quoted = shlex.quote(str(root))
    assert f"Run `pi-memory split memory --dir {quoted}` to see it split" in r.error
    assert f"`pi-memory split memory --dir {quoted} --apply` to save them" in r.error
    assert shlex.split(f"pi-memory split memory --dir {quoted}")[-1] == str(root)  # copy-paste acts on this store


def test_split_hint_for_a_project_store_names_the_data_root(tmp_path):
    import subprocess

    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    s = MemoryStore(tmp_path / "data", project_root=repo, project_char_limit=100)
    s.path("project").parent.mkdir(parents=True)
    s.path("project").write_text("# Notes\n- one\n- two\n\n# More\n- three\n" * 5)
    notice = s.read("project").notice
    assert f"`pi-memory split project --dir {tmp_path / 'data'}`" in notice


@pytest.mark.parametrize(("text", "codec", "named"), [
    ("Préférences: café, naïve, été à Montréal", "latin-1", "ISO-8859-1"),
    ("Größe: Straße, Übergröße", "latin-1", "ISO-8859-1"),
    ("café", "latin-1", "ISO-8859-1"),
    ("Smart “quotes” – and a € sign", "cp1252", "WINDOWS-1252"),
    ("用户偏好：使用中文回答", "gbk", "GB18030"),
    ("用户偏好", "gbk", "GB18030"),
    ("ユーザーは日本語の回答を好む", "shift_jis", "SHIFT_JIS"),
    ("사용자는 한국어 답변을 선호합니다", "euc_kr", "EUC-KR"),
    ("使用者偏好繁體中文回答", "big5", "BIG5"),
    ("notes in UTF-16 with ö", "utf-16", "UTF-16"),
])
def test_not_utf8_hint_names_the_likely_encoding(tmp_path, text, codec, named):
    import shlex

    s = make(tmp_path, text.encode(codec))
    r = s.add("memory", "x")
    path = shlex.quote(str(tmp_path / "MEMORY.md"))
    assert r.code == "drift" and f"It looks like {named} text: convert it with `iconv -f {named} -t UTF-8 {path}" in r.error
    assert "GBK" not in r.error or named == "GB18030"
    converted = text.encode(codec).decode({"ISO-8859-1": "latin-1", "WINDOWS-1252": "cp1252", "GB18030": "gb18030",
                                           "SHIFT_JIS": "shift_jis", "EUC-KR": "euc_kr", "BIG5": "big5",
                                           "UTF-16": "utf-16"}[named])
    assert converted == text  # following the hint gives the text back
