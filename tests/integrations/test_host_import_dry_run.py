"""`import claude-code-memory` / `import codex-memories`: the dry run says what --apply then does (control
characters, the scanners, a store's character limit, the standing instructions' caps, checked against the
stores as the entries before would leave them), every text is shown with escape codes and hidden characters
escaped, and the command exits with 1 when an entry is (or would be) refused.

A fresh tester's case: a `CLAUDE.local.md` with `ESC[31m` and an OSC title sequence was printed raw by the dry
run as `would add`, then refused by --apply; with 20 rules pinned the dry run said `would add: standing: ...`
and --apply refused it; `0 added, 4 already there, 7 refused` exited 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from pi_memory.curated.store import MemoryStore
from pi_memory.integrations.hooks.imports import Planned, apply, preview
from pi_memory.standing import StandingStore

CONTROL = ("The content holds control characters (terminal escape codes or similar), which can hide text from a "
           "person reading memory. Nothing was saved. Remove them and save plain text.")
PINNED = ("20 instructions are pinned, the most allowed is 20. Nothing was pinned. Remove one first (pi-memory pin "
          "list, then pin remove N), or merge two into one.")
BIDI = ("Not saved: the memory text contains a hidden character (invisible_unicode_U+202E), which can smuggle "
        "instructions into future system prompts. Remove it and save the plain text.")
APPLIED = {"would add": "added", "already there": "duplicate", "would be refused": "refused"}


def run(home, *args, code):
    """Standard output; with --json the texts are JSON's (``\\u001b`` for ESC; U+202E as it is, for programs)."""
    env = {**os.environ, "HOME": str(home / "home"), "PI_MEMORY_DIR": str(home / "data")}
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR"):
        env.pop(name, None)
    done = subprocess.run([sys.executable, "-m", "pi_memory", *args], cwd=home / "proj", env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == code, done.stdout + done.stderr
    for ch in "\x1b\x07" if "--json" in args else "\x1b\x07\u202e":
        assert ch not in done.stdout and ch not in done.stderr, repr(ch)
    return done.stdout


def test_escape_codes_are_shown_escaped_refused_by_the_dry_run_and_the_exit_code_says_so(home):
    (home / "proj" / "CLAUDE.local.md").write_text(
        "- \x1b[31mred2\x1b[0m text\n- has \x1b]0;title\x07 osc\n- bidi \u202e here\n- Tests run with pytest\n",
        encoding="utf-8")
    dry = run(home, "import", "claude-code-memory", code=1).splitlines()
    assert dry[:4] == [
        f"would be refused: project: \\x1b[31mred2\\x1b[0m text ({CONTROL})",
        f"would be refused: project: has \\x1b]0;title\\x07 osc ({CONTROL})",
        f"would be refused: project: bidi \\u202e here ({BIDI})",
        "would add: project: Tests run with pytest"]
    assert dry[4].endswith(": 1 to add, 0 already there, 3 would be refused; nothing was written. Run again with "
                           "--apply to import them.")
    applied = run(home, "import", "claude-code-memory", "--apply", code=1).splitlines()
    assert applied[:4] == [line.replace("would be refused", "refused").replace("would add", "added")
                           for line in dry[:4]]
    assert applied[4].startswith("1 added, 0 already there, 3 refused. ")
    again = run(home, "import", "claude-code-memory", "--apply", "--json", code=1)
    assert json.loads(again)["refused"] == 3 and "\\u001b" in again  # JSON keeps the text (escaped as JSON does)


def test_everything_already_there_exits_0(home):
    (home / "proj" / "CLAUDE.local.md").write_text("- Tests run with pytest\n", encoding="utf-8")
    assert "1 added, 0 already there, 0 refused" in run(home, "import", "claude-code-memory", "--apply", code=0)
    assert "0 to add, 1 already there, 0 would be refused" in run(home, "import", "claude-code-memory", code=0)


def test_codex_memories_escape_and_refuse_alike(home):
    folder = home / "home" / ".codex" / "memories"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- \x1b[2J clears the screen\n- Prefers ruff\n", encoding="utf-8")
    dry = run(home, "import", "codex-memories", "--no-instructions", code=1).splitlines()
    assert dry[:2] == [f"would be refused: memory: \\x1b[2J clears the screen ({CONTROL})",
                       "would add: memory: Prefers ruff"]
    applied = run(home, "import", "codex-memories", "--no-instructions", "--apply", code=1).splitlines()
    assert applied[:2] == [f"refused: memory: \\x1b[2J clears the screen ({CONTROL})", "added: memory: Prefers ruff"]


def test_with_20_rules_pinned_the_dry_run_says_the_rule_is_refused(home):
    data = home / "data"
    standing = StandingStore.in_data_dir(data)
    for n in range(20):
        assert standing.add(f"rule number {n} stays").success
    config = home / "home" / ".claude"
    config.mkdir(parents=True)
    (config / "CLAUDE.md").write_text("- Always run the linter\n- Always rule number 3 stays\n", encoding="utf-8")
    dry = run(home, "import", "claude-code-memory", code=1).splitlines()
    assert dry[0] == f"would be refused: standing: Always run the linter ({PINNED})"
    applied = run(home, "import", "claude-code-memory", "--apply", code=1).splitlines()
    assert applied[0] == f"refused: standing: Always run the linter ({PINNED})"
    assert len(standing.rules()) == 20


def _stores(tmp_path, limit=None):
    store = MemoryStore(tmp_path / "data", memory_char_limit=limit or 2200)
    store.load_from_disk()
    return store, StandingStore.in_data_dir(tmp_path / "data")


def test_preview_predicts_apply_for_a_store_filling_up_rules_and_duplicates_in_the_plan(tmp_path):
    """Entry by entry against the stores as the ones before leave them: the third entry no longer fits the
    80-character MEMORY.md once the first two are in; the 2,000 characters of rules fill up; a repeat in the plan
    is already there."""
    planned = [Planned("memory", "a" * 30, "f"), Planned("memory", "b" * 30, "f"), Planned("memory", "c" * 30, "f"),
               Planned("memory", "a" * 30, "f"), Planned("memory", "d\x1b[8m hidden", "f"),
               *(Planned("standing", f"Always keep rule {n} " + "x" * 600, "f") for n in range(4)),
               Planned("standing", "Always keep rule 0 " + "x" * 600, "f"), Planned("nowhere", "e", "f")]
    store, standing = _stores(tmp_path, limit=80)
    rows = preview(store, planned, standing)
    assert [r["status"] for r in rows] == ["would add", "would add", "would be refused", "already there",
                                          "would be refused", "would add", "would add", "would add",
                                          "would be refused", "already there", "would be refused"]
    assert rows[2]["message"].startswith("MEMORY.md is full")
    assert rows[8]["message"].startswith("With this rule the instructions would take 2,479 of 2,000 characters.")
    assert not (tmp_path / "data" / "MEMORY.md").exists() and standing.rules() == []
    results = apply(store, planned, standing)
    assert [r["status"] for r in results] == [APPLIED[r["status"]] for r in rows]
    assert [r["message"] for r in results if r["status"] == "refused"] == [
        r["message"] for r in rows if r["status"] == "would be refused"]
