"""The skill store's refusals (written for the model that calls ``skill_manage``) in words for a person: the CLI's
``pi-memory skills view|delete|move`` and the inspector's Skills page show them. Each pair is a model's phrase and a
person's, as :data:`pi_memory.curated.messages._FOR_PERSON` does for the curated stores."""

from __future__ import annotations

from pi_memory.curated.messages import NO_RETRY
from pi_memory.terminal_text import reworded

EMPTY = ("The agent saves a skill when a task taught it a procedure worth reusing, or when you ask it to save "
         "one.")  # a listing with no skill, for a person (the model is told of skill_manage in its own tool text)

_FOR_PERSON = (
    ("(action 'view' without an id lists them)", "(`pi-memory skills list` lists them)"),
    (NO_RETRY, ""),  # a data root open for reading only: the person is the one who can fix it
)


def for_person(text: str | None) -> str | None:
    """A store's message or refusal (a model's words) in a person's words."""
    return reworded(text, _FOR_PERSON)


def result_for_person(result: dict) -> dict:
    """A store result (``success``, ``message`` or ``error``) with its texts in a person's words."""
    worded = {**result, **{k: for_person(result[k]) for k in ("message", "error") if isinstance(result.get(k), str)}}
    if result.get("code") == "exists" and result.get("existing_path"):  # a move onto a taken id
        from pi_memory.skills.fields import move_clash_for_person

        worded["error"] = move_clash_for_person(result["skill_id"], result["existing"], result["existing_path"])
    return worded
