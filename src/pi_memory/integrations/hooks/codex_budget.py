"""How much of one hook answer Codex keeps in the model's context, as our handler's entry in
``$CODEX_HOME/hooks.json`` says, and what the person is told when a session start will not arrive whole.

Codex counts a hook's ``additionalContext`` in tokens of about four bytes (UTF-8) and, past the handler's
``additionalContextLimit`` (:data:`DEFAULT_LIMIT` when the entry has none), saves the text to a file and gives the
model its head and tail and the file's path; 0 keeps it whole. ``pi-memory install codex`` writes 0 on our
SessionStart and UserPromptSubmit handlers (:data:`.codex.CONTEXT_LIMIT`); an install by an earlier pi-memory did
not, and a person may set their own number. Light on purpose (JSON and :mod:`.hook_entries` only): the session
start hook reads it when its answer is long.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pi_memory.integrations.hooks.hook_entries import ours_now

TOKEN_BYTES = 4  # Codex's estimate: a token per four bytes, rounded up
DEFAULT_LIMIT = 2_500  # tokens, when the handler's entry has no additionalContextLimit


def hooks_file() -> Path:
    env = os.environ.get("CODEX_HOME")
    return (Path(env).expanduser() if env else Path.home() / ".codex") / "hooks.json"


def tokens(text: str) -> int:
    """Codex's estimate of ``text``'s tokens."""
    return -(-len(text.encode("utf-8")) // TOKEN_BYTES)


def our_limit(host_event: str, path: Path | None = None) -> tuple[int, bool] | None:
    """``(tokens, set)``: the budget Codex gives our handler of ``host_event`` (``SessionStart``) and whether its
    entry sets it (else :data:`DEFAULT_LIMIT`, an install by an earlier pi-memory); 0 is no budget at all.
    ``None`` when the file has no handler of ours there or cannot be read (nothing to say then)."""
    try:
        doc = json.loads((path or hooks_file()).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    handler = ours_now(hooks if isinstance(hooks, dict) else {}, "codex", host_event)
    if not handler:
        return None
    if "additionalContextLimit" not in handler:
        return DEFAULT_LIMIT, False
    limit = handler["additionalContextLimit"]
    return (limit, True) if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0 else None


def start_over_budget(context: str, path: Path | None = None) -> str | None:
    """What to tell the person when Codex will not give the model this session start whole (``None``: it will)."""
    found = our_limit("SessionStart", path)
    if found is None or not found[0] or tokens(context) <= found[0]:
        return None
    limit, chosen = found
    over = (f"pi-memory: this session start is about {tokens(context):,} tokens, more than the {limit:,} Codex keeps "
            "whole for pi-memory's hook, so the agent gets only its beginning and end and a file path. ")
    if chosen:
        return over + (f"That limit is the \"additionalContextLimit\" of the hook's entry in {path or hooks_file()}: "
                       "raise it (0 keeps everything), then trust the hook again in Codex's /hooks.")
    return over + ("The hooks were installed by an earlier pi-memory; run `pi-memory install codex` again to have it "
                   "arrive whole.")
