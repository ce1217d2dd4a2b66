"""A scripted "memory model" for the scripted server: answers the semantic capture pipeline's two JSON calls
deterministically, so demos and end-to-end tests exercise real capture without a real model.

* extraction (the capture prompt that asks for facts): every line of the user's text starting with ``Remember:``
  is one fact;
* decision (the prompt that keeps long-term memory up to date): a fact whose subject -- the words before
  `` is `` / `` are `` -- matches an existing memory's subject UPDATEs that memory, with the reason naming the
  subject and the two values (the words after the verb); the same text is NOOP; anything else is ADD.

Every other request falls through to the default script (:func:`pi_memory.devtools.scripted_llm.decide`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pi_memory.devtools.scripted_llm import Reply, text_of

_REMEMBER = re.compile(r"^(?:user:\s*)?\s*Remember:\s*(.+?)\s*$", re.MULTILINE)
_SUBJECT = re.compile(r"^(.*?)\s+(?:is|are|uses|use)\s+", re.IGNORECASE)


def _system(messages: list[dict[str, Any]]) -> str:
    first = messages[0] if messages else {}
    return text_of(first.get("content")) if first.get("role") in ("system", "developer") else ""


def _subject(text: str) -> str:
    m = _SUBJECT.match(text.strip())
    return " ".join(m.group(1).lower().split()) if m else ""


def _value(text: str) -> str:
    m = _SUBJECT.match(text.strip())
    return text.strip()[m.end():] if m else text


def decisions(payload: dict[str, Any]) -> dict[str, Any]:
    existing = payload.get("existing_memories") or []
    out = []
    for fact in payload.get("new_facts") or []:
        text = fact["text"]
        same = next((m for m in existing if m["text"].strip().lower() == text.strip().lower()), None)
        related = next((m for m in existing if _subject(m["text"]) and _subject(m["text"]) == _subject(text)), None)
        if same is not None:
            out.append({"fact": fact["fact"], "event": "NOOP", "memory_id": same["id"], "text": None})
        elif related is not None:
            reason = {"subject": _SUBJECT.match(text.strip()).group(1), "attribute": "value",
                      "old_value": _value(related["text"]), "new_value": _value(text)}
            out.append({"fact": fact["fact"], "event": "UPDATE", "memory_id": related["id"], "text": text,
                        "reason": reason})
        else:
            out.append({"fact": fact["fact"], "event": "ADD", "memory_id": None, "text": text})
    return {"decisions": out}


def memory_responder(messages: list[dict[str, Any]], tool_names: set[str]) -> Reply | None:
    """A ``ScriptedLLM`` responder: capture's calls get scripted JSON; ``None`` for everything else."""
    from pi_memory.semantic.capture import DECIDE_PROMPT, EXTRACT_PROMPT

    system = _system(messages)
    if not system:
        return None
    user = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    if system.startswith(EXTRACT_PROMPT[:80]):
        return Reply(text=json.dumps({"facts": _REMEMBER.findall(user)}))
    if system.startswith(DECIDE_PROMPT[:80]):
        return Reply(text=json.dumps(decisions(json.loads(user))))
    return None
