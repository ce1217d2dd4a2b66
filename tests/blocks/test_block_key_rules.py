"""Block keys: ASCII only, said honestly (a fresh tester's finding: ``blocks create 名前`` answered "use 1-64
letters", which 名前 is); keys differing only by case are refused on create (``notes``/``Notes``/``NOTES`` were
three blocks, one file on macOS and Windows), while existing files of that kind are still read."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from pi_memory.blocks import BlockStore
from pi_memory.cli.app import app

ASCII_ONLY = ("is not a usable block key: use 1-64 ASCII letters (A-Z, a-z), digits, '-' or '_', starting with a "
              "letter or digit. The key is the block's file name, and other scripts do not survive every file "
              "system; pick an ASCII key (e.g. team-notes) and put the name in your language in the description.")


@pytest.fixture
def store(tmp_path):
    project = tmp_path / "repo"
    (project / ".pi" / "memory-blocks").mkdir(parents=True)
    return BlockStore(tmp_path / "data" / "blocks", project, project_trusted=True)


@pytest.mark.parametrize("key", ["名前", "Развертывание", "café", "notes\n", "a b", "-x", "x" * 65, ""])
def test_keys_outside_ascii_letters_digits_dash_underscore_are_refused_saying_so(store, key):
    r = store.create(key, "Names")
    assert (r.success, r.code, r.error) == (False, "invalid_key", f"{key!r} {ASCII_ONLY}")
    assert list(store.global_dir.parent.rglob("*.md")) == []


def test_the_cli_gives_the_same_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["blocks", "create", "名前", "--dir", str(tmp_path / "mem")])
    assert r.exit_code == 1
    assert " ".join(r.stderr.split()) == f"refused: '名前' {ASCII_ONLY}"


def test_a_key_differing_only_by_case_is_refused_in_the_same_folder(store):
    assert store.create("notes", "Notes").success
    for key in ("Notes", "NOTES"):
        r = store.create(key, "Notes")
        assert (r.success, r.code, r.error) == (False, "exists", (
            f"Not created: block 'notes' already exists in {store.global_dir}, and {key!r} differs from it only by "
            "case: on macOS and Windows the two are one file. Use 'notes', or pick a key that differs in more "
            "than case."))
    assert sorted(p.name for p in store.global_dir.iterdir()) == ["notes.md"]
    assert store.create("notes-2", "More notes").success


def test_a_key_differing_only_by_case_is_refused_across_scopes(store):
    assert store.create("user", "Facts", scope="project").success
    r = store.create("User", "Facts", scope="global")
    assert (r.success, r.code, r.error) == (False, "exists", (
        "Not created: there is a project block 'user', and 'User' differs from it only by case, so both would "
        "show in every prompt under nearly the same name. Pick a key that differs in more than case."))
    assert store.create("agent", "Role", scope="global").success
    r = store.create("AGENT", "Role", scope="project")
    assert r.error == ("Not created: there is a global block 'agent', and 'AGENT' differs from it only by case, so "
                       "both would show in every prompt under nearly the same name. To have the project block take "
                       "the global one's place, create it as 'agent'; otherwise pick a key that differs in more "
                       "than case.")
    assert store.create("agent", "Role", scope="project").success  # the same key hides the global one, as before


def test_existing_files_differing_by_case_are_still_read_with_a_warning(store):
    folder = store.project_dir
    (folder / "notes.md").write_text("lower\n")
    (folder / "Notes.md").write_text("capital\n")
    if len(list(folder.iterdir())) == 1:
        pytest.skip("this file system folds case: the two names are one file")
    blocks = {b.key: b for b in store.blocks()}
    assert (blocks["notes"].value, blocks["Notes"].value) == ("lower", "capital")
    assert blocks["notes"].problems == ["its key differs from block 'Notes' only by case: on macOS and Windows the "
                                        "two are one file; rename one of them"]
    assert blocks["Notes"].problems == ["its key differs from block 'notes' only by case: on macOS and Windows the "
                                        "two are one file; rename one of them"]
    assert store.update("Notes", "more").success
    assert (folder / "Notes.md").read_text() == "capital\nmore\n"
    assert (folder / "notes.md").read_text() == "lower\n"


def test_a_wrongly_cased_key_from_the_model_gets_the_right_spelling(store):
    assert store.create("notes", "Notes").success
    r = store.update("NOTES", "x")
    assert (r.success, r.code, r.error) == (False, "unknown_block", (
        "There is no memory block 'NOTES'. Nothing was changed. Block keys are case-sensitive: did you mean "
        "'notes'? Use one of the existing blocks (notes); you cannot create blocks, the user can."))
