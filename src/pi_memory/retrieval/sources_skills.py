"""Skills as a recall source: the ``skills`` keyword list and the ``skills_vector`` list of
:func:`pi_memory.retrieval.recall`, fused with the other sources by the same RRF and cut by the same evidence
floor (:mod:`pi_memory.retrieval.engine`).

A skill (:class:`pi_memory.skills.Skill`, a ``SKILL.md`` folder) is a candidate with two texts:

* what a model is shown: its name and description, never the body (:func:`candidate`); the fenced line names
  the skill and the ``skill_manage`` call that loads it (:func:`render_line`, a fact rather than an order: the
  fence tells the model to follow nothing inside it), so a recalled skill costs one line of the budget;
* what it is judged by: name, description and body together (``RecallHit.source_text``). Keyword evidence
  (:func:`pi_memory.retrieval.lang.coverage_of`, stems and CJK bigrams as for every source) reads it, and so
  does the threat scan: a skill whose text trips :func:`pi_memory.safety.scan_threats` anywhere, the body
  included, is shown as the blocked marker, since loading it would bring that body into the context.

The keyword list (:func:`keyword_list`) ranks the skills whose text holds some of the prompt's evidence, by
coverage of name and description first, then of the whole text. The vector list (:func:`vector_hits`) ranks
them by the cosine of the query to their name and description (the text the Agent Skills hosts choose a skill
by). Those vectors are kept in the index (``semantic_skill_vectors``, migration ``semantic_005``), one per
skill and model, with the SHA-256 of the embedded text: an unchanged skill is never embedded again (a Claude
Code / Codex prompt hook is a new process each time, so an in-memory cache would embed every prompt), a
changed one once. Writing them takes a short-lived second connection that waits at most
:data:`pi_memory.semantic.sources.WRITE_WAIT_S` for the lock; when it cannot write, the vectors serve this
recall only. Skills are few (tens), so their vectors are read and compared whole at each recall.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from pi_memory.retrieval import lang as recall_lang

log = logging.getLogger(__name__)

KEY = "k:"  # recall keys of skills: ``k:<skill id>`` (``global:<slug>`` / ``project:<slug>``)
EMBED_CHARS = 2000  # as for curated entries: the bundled model reads about 1,000-1,500 characters
LOAD_TOOL = "skill_manage"  # the tool every host serves for skills (:mod:`pi_memory.tools.skills`)


def shown_text(name: str, description: str) -> str:
    """What a model is shown of a skill: ``<name>: <description>`` (also the text its vector is made from)."""
    return f"{name}: {description}"[:EMBED_CHARS]


def candidate(skill: Any) -> Any:
    """The recall hit of one readable skill (``None`` for a skill whose file cannot be read)."""
    from pi_memory.retrieval.engine import RecallHit

    doc = getattr(skill, "doc", None)
    if doc is None:
        return None
    full = "\n".join([doc.name, doc.description, doc.body])
    return RecallHit("skill", skill.id, shown_text(doc.name, doc.description), (doc.updated or "")[:10],
                     source_text=full, path=str(skill.path))


def candidates(skills: Iterable[Any]) -> dict[str, Any]:
    """``recall key -> hit`` of every readable skill."""
    out = {}
    for skill in skills:
        hit = candidate(skill)
        if hit is not None:
            out[KEY + hit.id] = hit
    return out


def keyword_list(items: dict[str, Any], query: str) -> list[str]:
    """Keys of the skills whose text holds some of the prompt's keyword evidence, best first: coverage of name
    and description, then of the whole text, then the id (a stable order)."""
    terms = recall_lang.evidence_terms(query)
    scored = []
    for key, hit in items.items():
        whole = recall_lang.coverage_of(terms, hit.source_text)
        if whole > 0:
            scored.append((-recall_lang.coverage_of(terms, hit.text), -whole, hit.id, key))
    return [key for *_, key in sorted(scored)]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def vector_hits(conn: sqlite3.Connection, embedder: Any, qvec: np.ndarray, items: dict[str, Any],
                limit: int) -> list[tuple[str, float, Any]]:
    """``(key, cosine, hit)`` of the skills nearest to the query vector ``qvec``, best first, at most ``limit``.
    Vectors of skills unchanged since they were embedded are read from the index; the others are embedded now
    (one embedder call) and stored (module docstring)."""
    if not items:
        return []
    model = str(embedder.model_name)
    texts = {key: hit.text for key, hit in items.items()}
    paths = {key: hit.path or hit.id for key, hit in items.items()}
    stored = _stored(conn, model, list(paths.values()))
    vectors: dict[str, np.ndarray] = {}
    missing = []
    for key, text in texts.items():
        row = stored.get(paths[key])
        if row is not None and row[0] == _digest(text) and row[1] == qvec.shape[-1]:
            vectors[key] = np.frombuffer(row[2], dtype="<f4")
        else:
            missing.append(key)
    if missing:
        fresh = np.asarray(embedder.embed([texts[k] for k in missing]), dtype="<f4")
        vectors.update(zip(missing, fresh, strict=True))
        _store(conn, model, [(paths[k], _digest(texts[k]), vectors[k]) for k in missing])
    keys = list(vectors)
    matrix = np.stack([vectors[k] for k in keys])
    norms = np.linalg.norm(matrix, axis=1) * max(float(np.linalg.norm(qvec)), 1e-12)
    cosines = matrix @ qvec.astype(np.float32) / np.maximum(norms, 1e-12)
    order = sorted(range(len(keys)), key=lambda i: (-float(cosines[i]), keys[i]))[:limit]
    return [(keys[i], float(cosines[i]), items[keys[i]]) for i in order]


def _stored(conn: sqlite3.Connection, model: str, paths: Sequence[str]) -> dict[str, tuple[str, int, bytes]]:
    rows = conn.execute(f"SELECT skill, hash, dim, vector FROM semantic_skill_vectors WHERE model = ? AND skill IN "
                        f"({','.join('?' * len(paths))})", [model, *paths]).fetchall()
    return {skill: (digest, dim, vector) for skill, digest, dim, vector in rows}


def _store(conn: sqlite3.Connection, model: str, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
    """Store fresh vectors (replacing a skill's older row) through a short-lived connection, and drop the rows
    of skill files that no longer exist (a skill deleted or moved); a busy or read-only index only means they
    are embedded again by a later recall."""
    from pi_memory.index.db import database_file, now_iso
    from pi_memory.index.read_only import skipped
    from pi_memory.semantic.sources import WRITE_WAIT_S

    if skipped(conn, "storing skill vectors"):  # read-only: embedded again by each recall, never stored
        return
    db = database_file(conn)
    now = now_iso()
    try:
        writer = sqlite3.connect(db, timeout=WRITE_WAIT_S, isolation_level=None) if db else conn
        try:
            with writer:
                writer.executemany(
                    "INSERT OR REPLACE INTO semantic_skill_vectors(skill, model, hash, dim, vector, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(path, model, digest, int(vec.shape[-1]), np.asarray(vec, dtype="<f4").tobytes(), now)
                     for path, digest, vec in rows])
                gone = [(p,) for (p,) in writer.execute("SELECT DISTINCT skill FROM semantic_skill_vectors")
                        if not os.path.exists(p)]  # deleted or moved skills (any project's): their rows go
                writer.executemany("DELETE FROM semantic_skill_vectors WHERE skill = ?", gone)
        finally:
            if writer is not conn:
                writer.close()
    except sqlite3.Error as exc:
        log.info("skill vectors not stored now (%s); a later recall embeds them again", exc)


def render_line(hit: Any) -> str:
    """The fenced line of a recalled skill: the blocked marker when any of its text trips the threat scanner,
    else ``- skill:<id>: "<name>: <description>" (a saved skill; its steps load with skill_manage {"action":
    "view", "skill_id": "<id>"})`` (secrets redacted, control characters shown as escapes). Only the JSON-quoted text is free-form: the id is printed
    as :func:`pi_memory.retrieval.engine.render_line` prints ids."""
    from pi_memory import safety
    from pi_memory.retrieval.engine import blocked_line, quote, safe_id
    from pi_memory.terminal_text import printable

    label = safe_id(f"skill:{hit.id}")
    threats = safety.scan_threats(hit.source_text or hit.text)
    if threats:
        return blocked_line(label, sorted({f.id for f in threats}))
    skill_id = safe_id(hit.id)
    skill_id = skill_id if skill_id.startswith('"') else f'"{skill_id}"'  # a JSON string either way
    # our words say what the line is and which call loads it: a fact, not an order (the fence's notice tells the
    # model to follow no instruction inside it)
    return (f"- {label}: {quote(printable(safety.redact(hit.text)))} (a saved skill; its steps load with {LOAD_TOOL} "
            f'{{"action": "view", "skill_id": {skill_id}}})')
