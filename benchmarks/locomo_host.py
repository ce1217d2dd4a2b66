"""The host's side of ``locomo_recall.py``: LoCoMo read and written as pi v3 session files, and what a host
injects before a run (``recall()``) and what its model's ``session_search`` returns, as ranked searchers.

Speakers: a pi session file has roles (the first LoCoMo speaker is the user, the other the assistant), not names,
so each message's text is ``"<speaker>: <text>"`` (+ ``[image: caption]``) -- what a real session's text holds
when people are named in it (a chat pasted in, a meeting transcript), and the same text the baseline row and
the turn index read. Nothing else of LoCoMo (speaker fields, session numbers) reaches the product.

Read in place from ``locomo_recall.py``; kept apart so that script stays under 500 lines."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from locomo_report import CATEGORIES

EVIDENCE = re.compile(r"D\d+:\d+")


def parse_date(text: str) -> datetime:
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        with contextlib.suppress(ValueError):
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
    return datetime(2023, 1, 1, tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def sessions_of(sample: dict) -> Iterator[tuple[int, datetime, list[dict]]]:
    conv = sample["conversation"]
    numbers = sorted(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    for n in numbers:
        turns = conv.get(f"session_{n}") or []
        if turns:
            yield n, parse_date(conv.get(f"session_{n}_date_time", "")), turns


def write_sessions(samples: list[dict], folder: Path) -> None:
    for sample in samples:
        sid = sample["sample_id"]
        speaker_a = sample["conversation"]["speaker_a"]
        for n, when, turns in sessions_of(sample):
            lines = [{"type": "session", "version": 3, "id": f"{sid}-s{n}", "timestamp": iso(when),
                      "cwd": f"/locomo/{sid}"}]
            parent = None
            for i, turn in enumerate(turns):
                role = "user" if turn["speaker"] == speaker_a else "assistant"
                msg = {"role": role, "content": [{"type": "text", "text": turn_text(turn)}], "timestamp": 0}
                if role == "assistant":
                    msg["stopReason"] = "stop"
                lines.append({"type": "message", "id": turn["dia_id"], "parentId": parent,
                              "timestamp": iso(when + timedelta(seconds=i)), "message": msg})
                parent = turn["dia_id"]
            path = folder / f"--locomo-{sid}--" / f"{sid}-session-{n:02d}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")


def questions(samples: list[dict]) -> list[tuple[str, str, int, set[str]]]:
    out = []
    for sample in samples:
        for qa in sample.get("qa", []):
            cat = qa.get("category")
            evidence = {m for e in qa.get("evidence", []) for m in EVIDENCE.findall(str(e))}
            if cat in CATEGORIES and evidence:
                out.append((sample["sample_id"], qa["question"], cat, evidence))
    return out


def product_searchers(conn: sqlite3.Connection, embedder, pids: dict[str, str], as_of: dict[str, str] | None = None
                      ) -> dict[str, Callable[[str, str, int], list[str]]]:
    """What a host serves, as ranked searchers over the indexed pi sessions (every turn embedded first, as
    ``pi-memory semantic embed-sessions`` and the session worker do):

    * ``host``: :func:`pi_memory.retrieval.engine` with ``include=("sessions",)``, the evidence floor on as
      shipped (``recallMinSimilarity`` default; what the floor drops counts as missed) -- what pi, MCP and the
      hooks inject before a run;
    * ``host_no_floor``: the same ranking without the floor;
    * ``session_search``: the model's ``session_search`` tool (:func:`pi_memory.retrieval.session_search` with
      the semantic embedder and the ``recallMinSimilarity`` default, as ``runtime`` passes them; a turn found by
      meaning alone below that floor is left out), the question as its query, within the conversation.
    """
    from pi_memory.retrieval import DEFAULT_MIN_SIMILARITY, recall, session_search
    from pi_memory.semantic import turn_vectors
    from pi_memory.semantic.embedded import EmbeddedBackend
    from pi_memory.semantic.models import Scope

    backend = EmbeddedBackend(conn, embedder)  # creates the vector tables
    start = time.perf_counter()
    reports, _ = turn_vectors.backfill(conn, embedder)
    print(f"host path: embedded {reports[-1].embedded} turns in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    def host(floor: float) -> Callable[[str, str, int], list[str]]:
        def search(sample: str, question: str, k: int) -> list[str]:
            scope = Scope(user_id="locomo", project_id=pids[sample])
            hits = recall(backend, question, scope=scope, top_k=k, include=("sessions",), conn=conn,
                          min_similarity=floor, as_of=(as_of or {}).get(sample))
            return [h.id.rsplit("#", 1)[-1] for h in hits]

        return search

    def tool(sample: str, question: str, k: int) -> list[str]:
        r = session_search(conn, question, limit=min(k, 50), project=pids[sample], snippet_chars=40,
                           as_of=(as_of or {}).get(sample), embedder=embedder, min_similarity=DEFAULT_MIN_SIMILARITY)
        return [h.entry_id for h in r.results]

    return {"host": host(DEFAULT_MIN_SIMILARITY), "host_no_floor": host(0.0), "session_search": tool}
