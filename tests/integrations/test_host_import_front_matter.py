"""A Claude Code memory file read for ``pi-memory import claude-code-memory`` goes through the one safe frontmatter
loader: YAML aliases (a "billion laughs") are not expanded (the file's text is imported without its frontmatter),
and a description that is a list is not imported as its Python repr."""

from __future__ import annotations

import time

import pytest

from pi_memory.integrations.hooks.imports import front_matter, plan_claude_code

NAMES = "abcdefghi"
BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
    f"{NAMES[i]}: &{NAMES[i]} [" + ",".join([f"*{NAMES[i - 1]}"] * 9) + "]" for i in range(1, 9)])


@pytest.mark.parametrize(("front", "target", "text"), [
    (f"name: x\n{BOMB}\ndescription: *i\ntype: user", "project", "Use pnpm for every install."),  # none read
    ("name: x\ndescription: [a, b]\ntype: user", "user", "Use pnpm for every install."),
    ("name: x\ndescription: {k: v}", "project", "Use pnpm for every install."),
    ("name: x\ndescription: Installs\ntype: feedback", "project", "Installs: Use pnpm for every install."),
])
def test_the_frontmatter_of_a_memory_file_is_read_safely(tmp_path, front, target, text):
    (tmp_path / "topic.md").write_text(f"---\n{front}\n---\nUse pnpm for every install.\n", encoding="utf-8")
    started = time.perf_counter()
    [planned] = plan_claude_code(tmp_path)
    assert time.perf_counter() - started < 2
    assert (planned.target, planned.text) == (target, text)


def test_a_refused_frontmatter_leaves_only_the_body():
    assert front_matter(f"---\n{BOMB}\nx: *i\n---\nthe body\n") == ({}, "the body\n")
    assert front_matter("---\na: [1\n---\nthe body\n") == ({}, "---\na: [1\n---\nthe body\n")  # as before
