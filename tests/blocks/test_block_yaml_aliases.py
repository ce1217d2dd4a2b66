"""A block file whose frontmatter is a YAML "billion laughs" (aliases nine deep) made ``blocks list`` hang past a
minute and the Claude Code session-start hook answer nothing. Now that one file is skipped, named to a person
with why, and every other block still loads; a description that is a list or a mapping is refused as not plain
text (it was shown as a Python repr)."""

from __future__ import annotations

import json
import time

import pytest

from cli_homes import isolated_cli  # tests/: on sys.path by the conftest
from pi_memory.blocks import BlockStore
from pi_memory.front_matter import ALIASES
from pi_memory.prompt import blocks_text

GOOD = "---\ndescription: Team conventions\nlimit: 2000\n---\n\nWe use trunk-based development.\n"


def bomb(levels: int, where: str = "description") -> str:
    names = "abcdefghijklmnop"
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"{names[i]}: &{names[i]} [" + ",".join([f"*{names[i - 1]}"] * 9) + "]" for i in range(1, levels)]
    return "---\n" + "\n".join([*lines, f"{where}: *{names[levels - 1]}"]) + "\nlimit: 2000\n---\n\nlol value\n"


def skipped_message(key: str, scope: str, path) -> str:
    return (f"Block {key!r} ({scope}, {path}) is not read: {ALIASES}. It goes into no prompt; the other blocks "
            "are read as usual. Fix the file's frontmatter, or delete the file.")


@pytest.mark.parametrize("text", [bomb(3), bomb(9), bomb(9, "notes"), "---\nx: &x [*x]\n---\nvalue\n"])
def test_a_global_block_with_aliases_is_skipped_and_the_others_load(tmp_path, text):
    store = BlockStore(tmp_path / "blocks")
    store.global_dir.mkdir()
    (store.global_dir / "team.md").write_text(GOOD)
    (store.global_dir / "bomb.md").write_text(text)
    started = time.perf_counter()
    assert [b.key for b in store.blocks()] == ["team"]
    [away] = store.skipped()
    rendered = blocks_text(store.blocks())
    assert time.perf_counter() - started < 2.0
    assert (away.key, away.code, away.message) == ("bomb", "unreadable_frontmatter", skipped_message(
        "bomb", "global", store.global_dir / "bomb.md"))
    assert away.to_dict()["refused"] == ALIASES
    assert "We use trunk-based development." in rendered and "lol" not in rendered
    result = store.update("bomb", "more")
    assert (result.success, result.code, result.error) == (False, "unreadable_frontmatter", (
        f"Memory block 'bomb' is not available: {ALIASES}, so the file is neither read nor written. Nothing was "
        "changed. Tell the user; `pi-memory blocks list` shows them what to fix."))
    assert (store.global_dir / "bomb.md").read_text() == text


def test_a_trusted_projects_block_with_aliases_is_skipped_and_hides_no_global_block(tmp_path):
    project = tmp_path / "proj"
    (project / ".pi" / "memory-blocks").mkdir(parents=True)
    (project / ".pi" / "memory-blocks" / "team.md").write_text(bomb(9))
    store = BlockStore(tmp_path / "blocks", project, project_trusted=True)
    store.global_dir.mkdir()
    (store.global_dir / "team.md").write_text(GOOD)
    [block] = store.blocks()
    assert (block.key, block.scope, block.value) == ("team", "global", "We use trunk-based development.")
    [away] = store.skipped()
    assert away.message == skipped_message("team", "project", project / ".pi" / "memory-blocks" / "team.md")


@pytest.mark.parametrize(("front", "problem", "description"), [
    ("description: [a, b]", "its description is a list in the frontmatter, not plain text; no description used "
     "(write it as one line of text)", ""),
    ("description: {what: notes}", "its description is a mapping in the frontmatter, not plain text; no description "
     "used (write it as one line of text)", ""),
    ("description: Notes\nlimit: [1, 2]", "limit a list is not a whole number from 1 to 100,000; the default limit "
     "2,000 is used instead", "Notes"),
    ("description: 42", None, "42"),
])
def test_a_value_that_is_not_plain_text_is_refused_not_shown_as_a_repr(tmp_path, front, problem, description):
    store = BlockStore(tmp_path / "blocks")
    store.global_dir.mkdir()
    (store.global_dir / "notes.md").write_text(f"---\n{front}\n---\nvalue\n")
    [block] = store.blocks()
    assert (block.problems, block.description) == ([problem] if problem else [], description)
    assert "[" not in blocks_text([block]).split("## notes")[1].split("\n", 1)[1]


def test_the_cli_names_the_skipped_file_and_lists_the_rest_quickly(tmp_path, monkeypatch):
    run = isolated_cli(tmp_path, monkeypatch)
    folder = tmp_path / "mem" / "blocks"
    folder.mkdir(parents=True)
    (folder / "team.md").write_text(GOOD)
    (folder / "bomb.md").write_text(bomb(9))
    started = time.perf_counter()
    listed = run("blocks", "list")
    data = json.loads(run("blocks", "list", "--json").stdout)
    shown = run("blocks", "show", "bomb")
    context = json.loads(run("preview-context", "--json").stdout)
    status = run("status")
    assert time.perf_counter() - started < 20
    message = skipped_message("bomb", "global", folder / "bomb.md")
    assert listed.exit_code == 0 and listed.stdout.startswith(f"warning: {message}\n\nteam (global)")
    assert [b["key"] for b in data["blocks"]] == ["team"] and data["skippedBlocks"][0]["refused"] == ALIASES
    assert (shown.exit_code, " ".join(shown.output.split())) == (1, " ".join(f"refused: {message}".split()))
    assert "We use trunk-based development." in context["systemPrompt"] and "lol" not in context["systemPrompt"]
    assert context["skippedBlocks"][0]["message"] == message
    assert f"warning: {message}" in status.stdout
