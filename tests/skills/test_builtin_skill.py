"""The shipped ``learn-memory-tool`` skill stays true to the code: every CLI command, pi command and tool it
names exists (walking the typer app, the extension's command registrations and the tool list)."""

from __future__ import annotations

import re
from pathlib import Path

import frontmatter
import pytest

from pi_memory.cli.app import build_command
from pi_memory.skills.builtin import BUILTIN_DIR, builtin_skill_folders

EXTENSION = Path(__import__("pi_memory").__file__).parent / "integrations" / "pi" / "extension"
SKILL = BUILTIN_DIR / "learn-memory-tool" / "SKILL.md"
TEXT = SKILL.read_text(encoding="utf-8")
CODE = re.findall(r"`([^`]+)`", TEXT)


def _cli_paths(command, path=()):
    yield path
    for name, sub in getattr(command, "commands", {}).items():
        yield from _cli_paths(sub, (*path, name))


CLI = {" ".join(p) for p in _cli_paths(build_command())}


def _pi_commands() -> set[str]:
    ts = "".join(p.read_text(encoding="utf-8") for p in EXTENSION.glob("*.ts"))
    return set(re.findall(r'registerCommand\("([a-z0-9-]+)"', ts)) | set(re.findall(r'\{ name: "([a-z0-9-]+)"', ts))


@pytest.fixture(scope="module")
def tool_names(tmp_path_factory) -> set[str]:
    root = tmp_path_factory.mktemp("skill-tools")
    mp = pytest.MonkeyPatch()
    mp.setenv("PI_CODING_AGENT_DIR", str(root / "agent"))
    mp.setenv("PI_MEMORY_DIR", str(root / "data"))
    mp.setenv("HOME", str(root / "home"))
    try:
        from pi_memory.runtime import open_memory

        memory = open_memory(root)
        names = {t.name for t in memory.tools()}
        memory.close()
    finally:
        mp.undo()
    return names


def test_the_skill_is_shipped_with_valid_frontmatter():
    assert builtin_skill_folders() == [BUILTIN_DIR / "learn-memory-tool"]
    post = frontmatter.loads(TEXT)
    assert post["name"] == "learn-memory-tool"  # the Agent Skills rule: name is the folder's slug
    assert 40 < len(post["description"]) <= 1024


def test_every_cli_command_it_names_exists():
    named = set()
    for code in CODE:
        if not code.startswith("pi-memory "):
            continue
        words = [w for w in code.split()[1:] if re.fullmatch(r"[a-z][a-z-]*", w)]
        # the longest prefix of plain words that is a command ("skills list"; "read memory" is read + an argument)
        for n in range(len(words), 0, -1):
            if " ".join(words[:n]) in CLI:
                named.add(" ".join(words[:n]))
                break
        else:
            pytest.fail(f"the skill names `{code}`, which is no pi-memory command")
    assert {"status", "session-search", "skills list", "consolidate", "learning", "pin"} <= named


def test_every_pi_command_it_names_is_registered():
    commands = _pi_commands()
    named = {c[1:].split()[0] for c in CODE if c.startswith("/")}
    assert named, "the skill names no pi command"
    missing = sorted(named - commands)
    assert missing == [], f"the skill names pi commands the extension does not register: {missing}"
    assert {"memory-pin", "memory-consolidate", "memory-skills", "memory-index-sessions"} <= named


def test_every_tool_it_names_exists(tool_names):
    named = {c for c in CODE if re.fullmatch(r"[a-z]+(_[a-z0-9]+)+|[a-z]+[A-Z][A-Za-z]+", c)}
    assert {"memory_add", "memory_search", "session_search", "skill_manage", "updateMemory"} <= named
    assert sorted(named - tool_names) == []


def test_the_checks_catch_a_name_that_does_not_exist():
    assert "memory-forget" not in _pi_commands()
    assert "forget" not in CLI


def test_the_skill_manage_actions_it_names_exist():
    from typing import get_args

    from pi_memory.tools.skills import SkillManageArgs

    actions = set(get_args(SkillManageArgs.model_fields["action"].annotation))
    named = set(re.findall(r"\(action `([a-z]+)`\)|with `([a-z]+)` or `([a-z]+)`, and `([a-z]+)`", TEXT)[0]) - {""}
    named |= {w for group in re.findall(r"with `([a-z]+)` or `([a-z]+)`, and `([a-z]+)`", TEXT) for w in group}
    assert named == {"create", "patch", "update", "view"} and named <= actions
