"""A prompt naming one day ("two days ago", "yesterday", "vorgestern", "前天") asks about that day. Its date window
is widened by a day on each side (:data:`pi_memory.retrieval.dates.MARGIN_DAYS`: a misremembered day, a time
zone), and a tester found the margin days' turns ranked above the day asked: "what did we do two days ago?" on
December 5th injected only December 2nd's turns, whose vectors happened to be nearer. The ``dates`` list now holds
the days the phrase names and ranks up the margin days only when the day asked has nothing
(:func:`pi_memory.retrieval.dates.asked_days`). Vectors come from a table."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest
from semantic_helpers import ALICE, TableEmbedder

from pi_memory.index import transaction
from pi_memory.index.indexer import insert_messages
from pi_memory.retrieval import dates
from pi_memory.retrieval.engine import recall
from pi_memory.semantic import sources
from pi_memory.semantic import turn_vectors as tv
from pi_memory.semantic.embedded import EmbeddedBackend

AS_OF = "2026-12-05T10:00:00.000Z"
DAYS = {  # day -> the session's turns; the margin days' turns are nearer to every prompt than the asked day's
    "2026-12-02": ["backed up the staging volumes", "rotated the backup keys"],
    "2026-12-03": ["fixed the nightly import job", "the importer now retries twice"],
    "2026-12-04": ["reviewed the dashboard colours", "merged the chart legend change"],
}
NEAR = {"2026-12-02": 0.35, "2026-12-03": 0.2, "2026-12-04": 0.3}
TWO_DAYS_AGO = ["what did we do two days ago?", "was haben wir vorgestern gemacht?", "前天我们做了什么？"]
YESTERDAY = ["what did we do yesterday?", "was haben wir gestern gemacht?", "昨天我们做了什么？"]


def _v(c: float) -> np.ndarray:
    return np.asarray([c, np.sqrt(1 - c * c), 0, 0], dtype=np.float32)


@pytest.fixture
def backend(conn):
    sources.forget()
    table = {p: _v(1.0) for p in TWO_DAYS_AGO + YESTERDAY}
    with transaction(conn):
        for n, (day, texts) in enumerate(DAYS.items()):
            sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                               "VALUES ('pi', ?, '/w', ?, 'demo') RETURNING id", (day, ALICE.project_id)).fetchone()[0]
            fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES (?, ?, 0, 0) "
                               "RETURNING id", (f"/{day}.jsonl", sid)).fetchone()[0]
            insert_messages(conn, [(sid, fid, f"d{n}e{i}", None, i + 1, f"{day}T1{i}:00:00.000Z", "user", "message",
                                    None, "active", text) for i, text in enumerate(texts)])
            table.update({t: _v(NEAR[day] - 0.01 * i) for i, t in enumerate(texts)})
    embedder = TableEmbedder(table)
    backend = EmbeddedBackend(conn, embedder)
    tv.embed_turns(conn, embedder)
    yield backend
    sources.forget()


def _days(conn, hits) -> list[str]:
    ids = [h.message_id for h in hits]
    day = dict(conn.execute(f"SELECT id, substr(timestamp, 1, 10) FROM messages WHERE id IN ({','.join('?' * len(ids))})",
                            ids).fetchall())
    return [day[i] for i in ids]


@pytest.mark.parametrize(("prompts", "asked"), [(TWO_DAYS_AGO, "2026-12-03"), (YESTERDAY, "2026-12-04")])
def test_the_day_a_prompt_names_is_what_a_bare_prompt_recalls(conn, backend, prompts, asked):
    for prompt in prompts:
        hits = recall(backend, prompt, scope=ALICE, top_k=6, include=("sessions",), conn=conn, as_of=AS_OF)
        # the margin days' turns have nothing but their day (cosine under the floor, no keyword): not injected
        assert _days(conn, hits) == [asked, asked], prompt
        assert [h.ranks["dates"] for h in hits] == [1, 2]


def test_a_window_keeps_the_days_its_phrase_names():
    [window], _rest = dates.date_windows("what did we do two days ago?", AS_OF)
    assert (tuple(window), window.core) == ((date(2026, 12, 2), date(2026, 12, 4)),
                                            (date(2026, 12, 3), date(2026, 12, 3)))
    [window], _rest = dates.date_windows("what did we do this week?", AS_OF)
    assert window.core == (date(2026, 11, 30), date(2026, 12, 5))  # capped at the day asked on
    days = {"a": "2026-12-02T09:00", "b": "2026-12-03T09:00", "c": "2026-12-04T09:00", "d": "2026-12-03T23:00"}
    [two] = dates.date_windows("what did we do two days ago?", AS_OF)[0]
    assert dates.asked_days(["a", "b", "c", "d"], days, [two]) == ["b", "d"]
    assert dates.asked_days(["a", "c"], days, [two]) == ["a", "c"]  # nothing on the day asked: the margin's
    [week] = dates.date_windows("what did we do this week?", AS_OF)[0]  # several days: the margin stays
    assert dates.asked_days(["e", "b"], {**days, "e": "2026-11-29T09:00"}, [week]) == ["e", "b"]
