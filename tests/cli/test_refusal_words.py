"""What a person reads at the terminal: no words meant for a model ("Retrying will not help; tell the user") in
``memory-search`` / ``session-search`` without --json or in ``import ... --apply`` refusals, and a write refused
by a read-only folder or file in the same words and code (``read_only``) as a curated write, not an exception
dump ("(ReadOnlyFolderError: [Errno 13] ...)", "(PermissionError: ...)") with ``io_error``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: read_only_folder

from read_only_folder import cli, own_agent, text_cli  # noqa: E402,F401

MODEL = "Retrying will not help"
ROOT = "and pi-memory honours that even when running as root"


@pytest.fixture(autouse=True)
def _in_a_project(request, monkeypatch):
    home = request.getfixturevalue("own_agent")  # first: it runs from tmp_path
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (home / "proj").mkdir()
    monkeypatch.chdir(home / "proj")


@pytest.fixture
def data(tmp_path):
    folder = tmp_path / "data"
    assert cli(["add", "memory", "the build uses make", "--dir", str(folder)])[0] == 0
    assert cli(["pin", "add", "always run the tests", "--dir", str(folder)])[0] == 0
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.mark.parametrize("command", ["memory-search", "session-search"])
def test_a_search_refused_at_the_terminal_has_no_words_for_a_model(data, command):
    index = data / "index.sqlite3"
    index.chmod(0o000)
    code, out, err = text_cli([command, "build", "--dir", str(data)])
    said = (f"The file {index} cannot be read by this user (root): it belongs to root and its mode is 0000 (its mode "
            f"lets no one read it, {ROOT}). Nothing was read or changed. Give your user read access to it (for example "
            f"`chmod u+r {index}`), or point --dir or $PI_MEMORY_DIR at another folder.")
    assert (code, out, err.strip()) == (1, "", said)
    code, result, _ = cli([command, "build", "--dir", str(data)])  # a program's copy is the tool's, as before
    assert code == 1 and result["error"] == f"{said} {MODEL}; tell the user."


def test_a_search_on_a_folder_named_index_sqlite3_has_no_words_for_a_model(data):
    index = data / "index.sqlite3"
    index.unlink()
    index.mkdir()
    code, out, err = text_cli(["memory-search", "build", "--dir", str(data)])
    assert (code, out) == (1, "") and MODEL not in err
    assert err.strip().startswith(f"The search index {index} cannot be opened: it is a folder.")


def test_an_import_refused_at_the_terminal_has_no_words_for_a_model(data, tmp_path, monkeypatch):
    monkeypatch.setenv("PI_MEMORY_DIR", str(data))
    (tmp_path / "home" / ".claude").mkdir(parents=True)
    (tmp_path / "home" / ".claude" / "CLAUDE.md").write_text("- I like short answers\n", encoding="utf-8")
    (data / "index.sqlite3").chmod(0o444)
    code, out, _ = text_cli(["import", "claude-code-memory", "--apply"])
    index = data / "index.sqlite3"
    assert code == 1 and MODEL not in out  # 1: an entry was refused
    assert out.splitlines()[0] == (
        f"refused: user: I like short answers (Nothing was saved to USER.md: you have no permission to write the file "
        f"{index} in the data folder {data} (its mode 0444 lets no one write it, {ROOT}). Give your user write access "
        f"to it (for example `chmod u+w {index}`), or use another folder with --dir or $PI_MEMORY_DIR.)")
    code, out, _ = text_cli(["import", "claude-code-memory"])  # the dry run says so beforehand
    assert code == 1 and out.splitlines()[0].startswith("would be refused: user: I like short answers (Nothing was "
                                                        "saved to USER.md: you have no permission to write the file")


def test_a_read_only_memory_file_is_a_read_only_refusal(data):
    memory_md = data / "MEMORY.md"
    memory_md.chmod(0o444)
    said = (f"you have no permission to write the file {memory_md} in the data folder {data} (its mode 0444 lets no "
            f"one write it, {ROOT}).")
    todo = (f"Give your user write access to it (for example `chmod u+w {memory_md}`), or use another folder with "
            "--dir or $PI_MEMORY_DIR.")
    code, result, _ = cli(["add", "memory", "the queue is redis", "--dir", str(data)])
    assert (code, result["code"]) == (1, "read_only")
    assert result["error"] == (f"Nothing was saved to MEMORY.md: {said} {MODEL}; tell the user, who can fix it: "
                               f"{todo}")
    code, out, err = text_cli(["add", "memory", "the queue is redis", "--dir", str(data)])
    assert (code, out, err.strip()) == (1, "", f"refused (read_only): Nothing was saved to MEMORY.md: {said} {todo}")
    assert memory_md.read_text(encoding="utf-8") == "the build uses make\n"


@pytest.mark.parametrize("argv", [["pin", "add", "never push on friday"], ["pin", "remove", "1"]], ids=" ".join)
def test_a_pin_in_a_read_only_folder_is_a_read_only_refusal(data, argv):
    data.chmod(0o555)
    code, result, _ = cli([*argv, "--dir", str(data)])
    assert (code, result["success"], result["code"]) == (1, False, "read_only")
    assert result["error"] == (
        f"Nothing was saved to STANDING.md: you have no permission to write in the data folder {data} (its mode 0555 "
        f"lets no one write there, {ROOT}). Give your user write access to it (for example `chmod u+w {data}`), or "
        "use another folder with --dir or $PI_MEMORY_DIR.")
    assert (data / "STANDING.md").read_text(encoding="utf-8").count("always run the tests") == 1


def test_a_pin_to_a_read_only_standing_file_names_the_file(data):
    standing = data / "STANDING.md"
    standing.chmod(0o444)
    before = standing.read_bytes()
    code, result, _ = cli(["pin", "add", "never push on friday", "--dir", str(data)])
    assert (code, result["code"]) == (1, "read_only")
    assert result["error"] == (
        f"Nothing was saved to STANDING.md: you have no permission to write the file {standing} in the data folder "
        f"{data} (its mode 0444 lets no one write it, {ROOT}). Give your user write access to it (for example "
        f"`chmod u+w {standing}`), or use another folder with --dir or $PI_MEMORY_DIR.")
    assert standing.read_bytes() == before


def test_a_block_in_a_read_only_folder_is_a_read_only_refusal(data):
    data.chmod(0o555)
    code, result, _ = cli(["blocks", "create", "notes", "--description", "scratch", "--dir", str(data)])
    path = data / "blocks" / "notes.md"
    assert code == 1 and result["refusal"] == "read_only", result
    assert result["error"] == (
        f"Block 'notes' was not created at {path}: you have no permission to write in the data folder {data} (its mode "
        f"0555 lets no one write there, {ROOT}). Give your user write access to it (for example `chmod u+w {data}`), "
        "or use another folder with --dir or $PI_MEMORY_DIR.")
    assert not os.path.exists(data / "blocks")
