"""What capture costs per session: extraction calls and input tokens, before and after the skip rules.

Turns come from the fixture sessions (``/work/shared/fixtures/pi-sessions`` when present, ``tests/fixtures``)
read with the index's readers (a user message and the assistant messages after it, text only, as the pi
extension sends them), plus one chit-chat session of our own (the issue's case: thanks / "You're welcome!",
``/compact``, ok / "Done." among a few real turns).

* **before**: the pipeline before issue 9: one extraction call for every turn with text on both sides, each
  side clipped to its first 4,000 and last 2,000 characters;
* **after**: :func:`pi_memory.semantic.capture.capture_turn` run for real against a scripted model on
  127.0.0.1 that extracts nothing (so only extraction calls are made; decision calls depend on the facts a
  real model finds and are the same before and after), counting the requests the server received.

Tokens are estimated the same way on both sides (:func:`pi_memory.retrieval.recall.estimate_tokens` of the
system prompt and the turn message). Run::

    .venv/bin/python benchmarks/capture_cost.py
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_ROOTS = [Path("/work/shared/fixtures/pi-sessions"), ROOT / "tests" / "fixtures"]
OLD_SIDE_CHARS = 6000

CHIT_CHAT = [
    ("thanks!", "You're welcome!"),
    ("The integration tests need Postgres 16 running on port 5433.", "Noted: Postgres 16 on port 5433."),
    ("ok", "Done."),
    ("/compact", "Compacted the conversation."),
    ("thank you so much", "Glad I could help! Let me know if there's anything else."),
    ("great 👍", "🙂"),
    ("We release every second Tuesday; never merge on release day.", "Got it, no merges on release Tuesdays."),
    ("lgtm", "Merged."),
    ("thx", "Anytime!"),
    ("yes", "Sure thing."),
    ("/model", "Switched model."),
    ("cool, thanks", "You're welcome!"),
]


def fixture_turns() -> list[tuple[str, str]]:
    from pi_memory.index.readers import read_session

    turns: list[tuple[str, str]] = []
    for root in FIXTURE_ROOTS:
        for path in sorted(root.rglob("*.jsonl")) if root.is_dir() else []:
            user, assistant = None, []
            for rec in read_session(path).records:
                if rec.kind != "message":
                    continue
                if rec.role == "user":
                    if user is not None:
                        turns.append((user, "\n\n".join(assistant)))
                    user, assistant = rec.text, []
                elif rec.role == "assistant" and user is not None:
                    assistant.append(rec.text)
            if user is not None:
                turns.append((user, "\n\n".join(assistant)))
    return turns


def _clip(text: str) -> str:
    head = OLD_SIDE_CHARS * 2 // 3
    return text if len(text) <= OLD_SIDE_CHARS else text[:head] + "\n[…]\n" + text[-(OLD_SIDE_CHARS - head):]


def measure(turns: list[tuple[str, str]]) -> dict[str, tuple[int, int]]:
    """``{"before": (calls, tokens), "after": (calls, tokens)}`` and the skips by rule (module docstring)."""
    from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM, text_of
    from pi_memory.embed import get_embedder
    from pi_memory.index import open_index
    from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel
    from pi_memory.retrieval.recall import estimate_tokens
    from pi_memory.semantic.capture import EXTRACT_MAX_TOKENS, EXTRACT_PROMPT, Facts, capture_turn
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    queued = [(u, a) for u, a in turns if u.strip() and a.strip()]  # AgentSession.after_run queues only these
    system = EXTRACT_PROMPT.format(date="2026-11-29", weekday="Sunday")
    out: dict = {"skips": {}}
    with tempfile.TemporaryDirectory() as tmp, \
            ScriptedLLM(responder=lambda _m, _t: Reply(text=json.dumps({"facts": []}))) as llm:
        conn = open_index(Path(tmp))
        backend = EmbeddedBackend(conn, get_embedder())
        model = OpenAICompatibleChatModel("fake-model", base_url=llm.base_url, timeout_s=10, max_retries=0)

        def sent() -> tuple[int, int]:
            bodies = llm.chat_requests
            tokens = sum(estimate_tokens(text_of(m.get("content"))) for b in bodies for m in b["messages"])
            llm.clear()
            return len(bodies), tokens

        for user, assistant in queued:  # the old pipeline's one extraction call per turn, through the same client
            model.complete_json(f"Observation date: 2026-11-29\n\n<conversation>\nuser: {_clip(user)}\n\n"
                                f"assistant: {_clip(assistant)}\n</conversation>", Facts, system=system,
                                max_tokens=EXTRACT_MAX_TOKENS)
        out["before"] = sent()
        for user, assistant in queued:
            report = capture_turn(backend, model, user_text=user, assistant_text=assistant,
                                  scope=Scope(user_id="bench", project_id="bench"), observed_at="2026-11-29T10:00:00Z")
            if report.status == "skipped":
                out["skips"][report.skip_rule] = out["skips"].get(report.skip_rule, 0) + 1
        out["after"] = sent()
        model.close()
        conn.close()
    return out


def main() -> int:
    print(f"{'corpus':<26}{'turns':>6}{'calls before':>14}{'calls after':>13}{'tokens before':>15}"
          f"{'tokens after':>14}  skipped by rule")
    for name, turns in (("fixture sessions", fixture_turns()), ("chit-chat session", CHIT_CHAT)):
        found = measure(turns)
        (calls_0, tokens_0), (calls_1, tokens_1) = found["before"], found["after"]
        rules = ", ".join(f"{n} {rule}" for rule, n in sorted(found["skips"].items())) or "-"
        print(f"{name:<26}{len(turns):>6}{calls_0:>14}{calls_1:>13}{tokens_0:>15,}{tokens_1:>14,}  {rules}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
