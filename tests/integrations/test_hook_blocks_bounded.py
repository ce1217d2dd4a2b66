"""The Claude Code session-start hook answered ``{}`` (the session got no memory at all) when a block file or a
SKILL.md held a YAML alias bomb, and took 7.3 s over 60 full blocks of 94,000 characters. Now the refused file is
skipped, the blocks are bounded by ``blocksCharBudget``, and the session gets its memory in time."""

from __future__ import annotations

import json
import re
import time

from pi_memory.integrations import hooks

NAMES = "abcdefghi"
BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
    f"{NAMES[i]}: &{NAMES[i]} [" + ",".join([f"*{NAMES[i - 1]}"] * 9) + "]" for i in range(1, 9)])


def start(env) -> tuple[str, float]:
    payload = {"session_id": "s1", "cwd": str(env / "proj"), "source": "startup", "hook_event_name": "SessionStart"}
    started = time.perf_counter()
    answer = hooks.run_hook("claude-code", "session-start", json.dumps(payload), ceiling=60)
    return json.loads(answer).get("hookSpecificOutput", {}).get("additionalContext") or "", \
        time.perf_counter() - started


def test_a_block_and_a_skill_with_aliases_leave_the_rest_of_memory_in_the_session(env):
    blocks = env / "data" / "blocks"
    blocks.mkdir()
    (blocks / "team.md").write_text("---\ndescription: Team\nlimit: 2000\n---\n\nWe deploy on Fridays.\n")
    (blocks / "bomb.md").write_text(f"---\n{BOMB}\ndescription: *i\n---\n\nlol\n")
    skill = env / "data" / "skills" / "bomb"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(f"---\nname: bomb\n{BOMB}\ndescription: *i\n---\n\n1. lol\n")
    (env / "data" / "MEMORY.md").write_text("Project uses uv, never pip\n")
    context, took = start(env)
    assert took < 10
    assert "Project uses uv, never pip" in context and "We deploy on Fridays." in context
    assert "lol" not in context


def test_sixty_full_blocks_give_a_session_start_within_the_budget(env):
    blocks = env / "data" / "blocks"
    blocks.mkdir()
    line = "The ledger service settles invoices in nightly batches. "
    for i in range(60):
        value = (f"big{i:02d} " + line * 1700)[:94_000]
        (blocks / f"big{i:02d}.md").write_text(f"---\ndescription: block {i}\nlimit: 100000\n---\n\n{value}\n")
    context, took = start(env)
    assert took < 10
    assert context.startswith("<memory-blocks>\n[Part 1 of ") and "big00 " in context
    parts = int(re.search(r"\[Part 1 of (\d+) ", context).group(1))
    assert parts <= 15  # 100,000 characters of blocks in pieces (5.6 million before: some 750 pieces)
