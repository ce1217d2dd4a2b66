"""Session turns ranked in context with vectors: the keyword list and the turn-vector list of one recall, fused
over one candidate pool and re-scored with each turn's window of neighbours.

This is the host's form of :class:`pi_memory.retrieval.TurnIndex` (measured by ``benchmarks/locomo_recall.py``):
the index keeps one vector per turn (its own text, :mod:`pi_memory.semantic.turn_vectors`), and what the turn
index gets from embedding a context-window key is computed at query time from the vectors already stored:

1. **Pool**: the keyword candidates read in context (:mod:`pi_memory.retrieval.context`: each with its score)
   and the nearest turn vectors (each with its cosine). The nearest ``MORE_KEYWORD_TURNS`` turns of the vector
   list that the keyword list lacks are scored as its candidates are (own-text BM25 + window BM25 with the
   search's terms and document frequencies, :meth:`pi_memory.retrieval.context.ContextHits.score_more`), so a
   turn holding the question's words below the keyword search's cut is not at 0 on the keyword side: LoCoMo
   host R@10 0.804 -> 0.810 (all such turns: the same; 10: 0.809), about 0.3 ms CPU a recall.
2. **Window cosine**: each candidate's vector plus ``WINDOW_WEIGHT / d`` times each neighbour turn ``d`` turns
   away, ``WINDOW_TURNS`` each side (the neighbours of :func:`pi_memory.retrieval.context.neighbours`: the
   weights of the keyword spread), normalised, against the query: "what's your favourite game?" / "Catan, I
   love it" -- the answer's window holds the question's meaning. LoCoMo host R@10 (``locomo_recall.py``, floor
   off): one turn each side 0.780, two 0.791 (weights 0.4 / 0.6 instead of 0.5: 0.790 / 0.790; three turns
   each side: 0.791, as two).
3. **Convex fusion** (:func:`pi_memory.retrieval.fusion.convex_fuse`): min-max normalised keyword score
   (``KEYWORD_WEIGHT``), window cosine (``WINDOW_VECTOR_WEIGHT``) and the turn's own cosine
   (``OWN_VECTOR_WEIGHT``); a candidate missing from a list gets 0 from it.
4. **Priors**: a question asking *when* (:func:`pi_memory.retrieval.expand.is_temporal`) lifts turns that carry
   a time expression (:func:`pi_memory.retrieval.turns.time_cue`) by ``TIME_BOOST``; a question naming some but
   not all of the pool's speakers lifts the turns those speakers said by ``SPEAKER_BOOST`` (:func:`said_by`:
   a speaker is a name heading turns of the text, ``Caroline: ...``, the transcript convention of a chat or
   meeting pasted into a session; a coding session has none, so nothing changes there); each session's best
   candidate lifts the session's other candidates (:func:`pi_memory.retrieval.rerank.session_support`,
   ``SESSION_BOOST``).

Turns without a vector (not embedded yet) take part by keyword only. Without a query vector (embedder down,
the hook's deadline) the keyword order is kept with the priors applied.

A prompt naming a date also gets :func:`dated_turns`: the turns written inside its window, nearest by their own
vector, ranked by :func:`rank` as a pool of their own; recall fuses those the pool lacks as its ``dated`` list
(LoCoMo host R@10 0.8201 -> 0.8218, R@25 0.876 -> 0.882; about 1.4 ms per dated prompt, nothing for the others).
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import numpy as np

from pi_memory.retrieval.expand import expand_query, is_temporal
from pi_memory.retrieval.fusion import convex_fuse
from pi_memory.retrieval.rerank import session_support
from pi_memory.retrieval.turns import time_cue

KEYWORD_WEIGHT = 1.5
WINDOW_VECTOR_WEIGHT = 1.0
OWN_VECTOR_WEIGHT = 0.25
WINDOW_WEIGHT = 0.5
WINDOW_TURNS = 2  # neighbours each side in the window cosine (:func:`pi_memory.retrieval.context.neighbours`)
TIME_BOOST = 0.3
SESSION_BOOST = 0.2
# The turn index's ``HybridConfig.speaker_boost``: the same prior, its speakers read from the text (:func:`said_by`)
SPEAKER_BOOST = 0.5
# the nearest turns of the vector list (best cosine first) without a keyword score that get one (step 1)
MORE_KEYWORD_TURNS = 20
# Turns dated inside a window the prompt names that the pool lacks (:func:`dated_turns`): the nearest
# ``DATED_NEAREST`` of the window's turns by their own cosine are ranked as the pool is, and the best ``DATED_TURNS``
# the pool does not hold become recall's ``dated`` list; at most ``DATED_MAX_ROWS`` of the window's turns are read
# (newest first)
DATED_TURNS = 10
DATED_NEAREST = 25
DATED_MAX_ROWS = 1000
# a name of one to three capitalised words, then a colon and a space, at the start of a turn: who says it
_AUTHOR = re.compile(r"([^\W\d_][\w'’.-]{0,40}(?: [^\W\d_][\w'’.-]{0,40}){0,2}):\s")
_AUTHOR_CHARS = 130  # characters of a turn read for its speaker (a name of up to three words and the colon)


@dataclass(frozen=True)
class RankedTurn:
    """One turn of the fused ranking: ``messages.id``, fused ``score`` (higher is better) and the cosine of
    its own vector with the query (``None``: no vector)."""

    id: int
    score: float
    cosine: float | None


def _vectors(conn: sqlite3.Connection, model: str, dim: int, ids: Sequence[int],
             project: str | None = None) -> tuple[dict[int, int], np.ndarray]:
    """``(message id -> row, matrix)``: the stored vectors of ``model`` and ``dim`` of the turns ``ids``, one row
    each (a row of another dimension is never compared with the query, as in :mod:`pi_memory.semantic.sources`).
    The rows come from the project's turn matrix that the recall's vector list has just brought up to date: its
    message map names the vector rows of the turns it holds (:class:`pi_memory.semantic.turn_matrix.TurnMatrix`:
    a message id does not name one vector for good -- ids of the newest messages are used again when their
    transcript is rewritten -- so the map is checked against the index's record of the vector rows that went);
    the vector rows of the other turns are asked of the database (the ``UNIQUE (message_id, model)`` index holds
    them). A turn that matrix lacks (another project, a matrix not loaded, rows past its cap) is read from the
    table. The rows are in the order of their message ids, then those read from the table (the order of the
    products, so of their last bits, is the same whichever way a vector row was found)."""
    if not ids:
        return {}, np.zeros((0, dim), dtype=np.float32)
    from pi_memory.semantic.sources import cached
    from pi_memory.semantic.turn_matrix import TurnMatrix

    mat = cached(conn, "sessions", model, dim, project)
    mapped = mat.message_rows(conn, ids) if isinstance(mat, TurnMatrix) else None
    mids, block, rest = mapped if mapped is not None else ([], np.zeros((0, dim), dtype=np.float32), list(ids))
    if not rest:
        return {mid: i for i, mid in enumerate(mids)}, block
    # (message_id, model) is the UNIQUE index, holding the row id: the rows themselves (1.5 KB each) are not read
    vid_of = {v: m for m, v in sorted((m, v) for v, m in conn.execute(
        f"SELECT id, message_id FROM semantic_turn_vectors WHERE message_id IN ({','.join('?' * len(rest))}) "
        "AND model = ?", [*rest, model]))}  # vector row -> message id, by message id
    held, more = mat.rows_of(list(vid_of)) if mat is not None else ([], block[:0])
    if held:
        mids += [vid_of[v] for v in held]
        block = np.concatenate([block, more])
        if mapped is not None and mapped[0]:  # both found rows: back into message id order
            order = np.argsort(np.array(mids), kind="stable")
            mids, block = [mids[i] for i in order], block[order]
    have = set(held)
    missing = [v for v in vid_of if v not in have]
    if missing:
        size = 4 * dim
        rows = [(mid, blob[:size]) for mid, row_dim, blob in conn.execute(
            f"SELECT message_id, dim, vector FROM semantic_turn_vectors WHERE id IN ({','.join('?' * len(missing))})",
            missing) if row_dim == dim and len(blob) >= size]  # another dimension or a short (damaged) row: left out
        if rows:
            extra = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), dim)
            finite = np.isfinite(extra).all(axis=1)  # a NaN or infinity never reaches a cosine
            block = np.vstack([block, extra[finite].astype(np.float32, copy=False)])
            mids += [mid for (mid, _), ok in zip(rows, finite, strict=True) if ok]
    return {mid: i for i, mid in enumerate(mids)}, block


def _window_cosines(pool: Sequence[int], near: Mapping[int, Sequence[int]], row_of: Mapping[int, int],
                    matrix: np.ndarray, qvec: np.ndarray) -> tuple[dict[int, float], dict[int, float]]:
    """``(own cosine, window cosine)`` of the pool's turns that have a vector, as matrix products: each window
    is the turn's row plus ``WINDOW_WEIGHT / d`` times the row of each neighbour ``d`` turns away (``near``:
    before-side nearest first, then after-side nearest first), normalised (module docstring). The neighbours
    are gathered through one index of ``2 x WINDOW_TURNS`` slots a turn with a weight per slot (a missing
    neighbour: weight 0 on row 0; neighbours past ``WINDOW_TURNS`` on a side are not read)."""
    members = [m for m in pool if m in row_of]
    if not members:
        return {}, {}
    width = 2 * WINDOW_TURNS
    side = np.zeros((len(members), width), dtype=np.intp)
    weight = np.zeros((len(members), width), dtype=np.float32)
    for i, m in enumerate(members):
        before = after = 0  # ids are positions in the session: a smaller id is before
        for n in near.get(m, ()):
            if n < m:
                before += 1
                d, j = before, before - 1
            else:
                after += 1
                d, j = after, WINDOW_TURNS + after - 1
            if d <= WINDOW_TURNS and (r := row_of.get(n)) is not None:
                side[i, j], weight[i, j] = r, WINDOW_WEIGHT / d
    rows = np.fromiter((row_of[m] for m in members), dtype=np.intp, count=len(members))
    scores = matrix @ qvec  # each row's cosine once; a window's dot product is their weighted sum
    own = scores[rows]
    dots = own + (weight * scores[side]).sum(axis=1)
    total = matrix[rows] + np.einsum("ij,ijk->ik", weight, matrix[side])
    norms = np.sqrt(np.einsum("ij,ij->i", total, total))
    window = {m: float(d / n) for m, d, n in zip(members, dots.tolist(), norms.tolist(), strict=True) if n > 0}
    return dict(zip(members, own.tolist(), strict=True)), window


def author(text: str) -> str:
    """The name heading ``text`` (``"Caroline: I went to ..."`` -> ``"Caroline"``; each word capitalised), or
    ``""``."""
    found = _AUTHOR.match(text or "")
    if found is None or not all(w[0].isupper() for w in found.group(1).split()):
        return ""
    return found.group(1)


def said_by(query: str, heads: Mapping[int, str]) -> set[int]:
    """The turns among ``heads`` (message id -> the start of its text) said by a speaker ``query`` names, when
    it names some of the speakers but not all (the turn index's rule, :class:`pi_memory.retrieval.TurnIndex`):
    a speaker is a name heading at least two of the turns (:func:`author`; once is a label such as ``Error:``),
    and it is named as :func:`pi_memory.retrieval.expand.expand_query` reads speakers (whole word, any case,
    or the first name alone). ``set()`` when fewer than two speakers head the turns."""
    authors = {m: a for m, t in heads.items() if (a := author(t))}
    speakers = tuple(a for a, n in Counter(authors.values()).items() if n >= 2)
    if len(speakers) < 2:
        return set()
    named = set(expand_query(query, speakers, stem=False).singled_out(speakers))
    return {m for m, a in authors.items() if a in named}


def rank(conn: sqlite3.Connection, query: str, keyword: Sequence[tuple[int, float]],
         vector: Sequence[tuple[int, float]], qvec: np.ndarray | None, model: str | None,
         until: str | None = None, project: str | None = None,
         known: Mapping[int, Sequence[int]] | None = None,
         score_more: Callable[..., Mapping[int, float]] | None = None) -> list[RankedTurn]:
    """The pool of ``keyword`` (``(message id, score)`` best first) and ``vector`` (``(message id, cosine)``)
    fused and re-scored (module docstring), best first. ``project``: whose turn matrix holds the vectors
    (:func:`_vectors`). ``known``: neighbours already read for some of the pool, as
    :func:`pi_memory.retrieval.context.neighbours` gives them for ``WINDOW_TURNS`` and ``until`` (the keyword
    list in context read them); the others are read here. ``score_more(conn, ids, neighbours)``: the keyword
    score of turns the keyword list lacks (:meth:`pi_memory.retrieval.context.ContextHits.score_more`), asked
    for the best ``MORE_KEYWORD_TURNS`` of ``vector`` (step 1)."""
    from pi_memory.retrieval.context import neighbours

    pool = list(dict.fromkeys([m for m, _ in keyword] + [m for m, _ in vector]))
    if not pool:
        return []
    scored: dict[str, dict[int, float]] = {"keyword": dict(keyword)}
    own: dict[int, float] = dict(vector)
    if qvec is not None and model:
        near = {m: list(known[m]) for m in pool if known and m in known}
        near.update(neighbours(conn, [m for m in pool if m not in near], WINDOW_TURNS, until))
        row_of, matrix = _vectors(conn, model, int(qvec.shape[-1]),
                                  list({*pool, *(n for ns in near.values() for n in ns)}), project)
        own_cos, window = _window_cosines(pool, near, row_of, matrix, qvec.astype(np.float32, copy=False))
        for m, c in own_cos.items():
            own.setdefault(m, c)
        scored["window"] = window
        scored["own"] = own
        unscored = [m for m, _ in vector if m not in scored["keyword"]][:MORE_KEYWORD_TURNS]
        if score_more is not None and keyword and unscored:
            more = score_more(conn, unscored, near)
            scored["keyword"] = {**scored["keyword"], **{m: s for m, s in more.items() if s > 0}}
    fused = convex_fuse(scored, {"keyword": KEYWORD_WEIGHT, "window": WINDOW_VECTOR_WEIGHT, "own": OWN_VECTOR_WEIGHT})
    temporal = bool(TIME_BOOST) and is_temporal(query)
    if temporal or SESSION_BOOST or SPEAKER_BOOST:
        read = "id, session_id, text" if temporal else f"id, session_id, substr(text, 1, {_AUTHOR_CHARS})"
        rows_of = {r[0]: r for r in conn.execute(
            f"SELECT {read} FROM messages WHERE id IN ({','.join('?' * len(pool))})", pool)}
    spoken = said_by(query, {m: r[2] for m, r in rows_of.items()}) if SPEAKER_BOOST else set()
    if temporal or spoken:
        def prior(m: int) -> float:
            time = 1.0 + TIME_BOOST if temporal and m in rows_of and time_cue(rows_of[m][2]) else 1.0
            return time * (1.0 + SPEAKER_BOOST if m in spoken else 1.0)

        fused = sorted(((m, s * prior(m)) for m, s in fused), key=lambda x: -x[1])
    if SESSION_BOOST:
        index = {m: i for i, m in enumerate(pool)}
        rows = [(index[m], s) for m, s in fused]
        sessions = [rows_of[m][1] if m in rows_of else None for m in pool]
        fused = [(pool[i], s) for i, s in session_support(rows, sessions, SESSION_BOOST)]
    return [RankedTurn(m, s, own.get(m)) for m, s in fused]


def dated_turns(conn: sqlite3.Connection, query: str, windows: Sequence[tuple[Any, Any]], qvec: np.ndarray | None,
                model: str | None, until: str, project: str | None = None) -> list[RankedTurn]:
    """The turns written inside ``windows`` (inclusive ``(first, last)`` days, :func:`pi_memory.retrieval.dates.
    date_windows`) and not after ``until``, best first: the ``DATED_NEAREST`` of them whose own vector is nearest
    to ``qvec`` (among the newest ``DATED_MAX_ROWS`` of each window that the project's turn matrix holds), ranked
    by :func:`rank` as a pool of vector candidates (window cosine, priors). ``[]`` without a query vector or a
    loaded matrix. For a prompt naming a date: the pool (keyword and nearest turns of the whole project) can
    miss a turn of that day that neither list ranks high, though it is one of a few dozen of the day."""
    if qvec is None or not model or not windows:
        return []
    from pi_memory.semantic.sources import cached

    mat = cached(conn, "sessions", model, int(qvec.shape[-1]), project)
    if mat is None:
        return []
    scope, extra = ("", []) if project is None else (" AND v.project_id = ?", [project])
    mid_of: dict[int, int] = {}  # vector row id -> message id
    for first, last in windows:
        mid_of.update(conn.execute(
            "SELECT v.id, m.id FROM messages m JOIN semantic_turn_vectors v ON v.message_id = m.id AND v.model = ? "
            f"WHERE m.timestamp >= ? AND m.timestamp < ? AND m.timestamp <= ?{scope} ORDER BY m.timestamp DESC LIMIT ?",
            [model, first.isoformat(), _day_after(last), until, *extra, DATED_MAX_ROWS]))
    held, block = mat.rows_of(list(mid_of))
    if not held:
        return []
    cos = block @ qvec.astype(np.float32, copy=False)
    nearest = np.argsort(-cos, kind="stable")[:DATED_NEAREST]
    vector = [(mid_of[held[i]], float(cos[i])) for i in nearest]
    return rank(conn, query, [], vector, qvec, model, until=until, project=project)


def _day_after(day: date) -> str:
    """The stored-timestamp bound just after every moment of ``day``: the next day's date, or for the last day a
    date can hold (9999-12-31, an ``as_of`` at the end of time) a string above each of its timestamps."""
    return (day + timedelta(days=1)).isoformat() if day < date.max else day.isoformat() + "U"  # 'U' > 'T...'


def session_list(conn: sqlite3.Connection, query: str, matches: Sequence[Any], vector_keys: Sequence[str],
                 items: Mapping[str, Any], pending: Any, until: str | None,
                 project: str | None = None, keys: Mapping[int, str] | None = None) -> list[str]:
    """Recall's ``sessions`` list: the keyword matches read in context (``matches``: ``ContextHit``, their
    recall keys in ``keys``, message id -> key) and the
    turn-vector list (``vector_keys``, their hits in ``items``, cosines and query vector in ``pending``: the
    recall's :class:`~pi_memory.retrieval.vector_lists.VectorLists` or ``None``) ranked by :func:`rank`, as
    recall keys (``t:<session>#<entry>``), best first."""
    from pi_memory.retrieval.context import WINDOW
    from pi_memory.retrieval.vector_lists import turn_keys

    vector = [(items[k].message_id, pending.cosines[k]) for k in vector_keys if items[k].message_id]
    qvec = pending.query_vector.result() if pending is not None else None
    model = pending.model if pending is not None else None
    # the keyword list's windows are this ranking's when both read as many turns each side
    known = {h.id: h.near for h in matches if h.near is not None} if WINDOW == WINDOW_TURNS else {}
    ranked = rank(conn, query, [(h.id, h.score) for h in matches], vector, qvec, model, until=until,
                  project=project, known=known, score_more=getattr(matches, "score_more", None))
    key_of = {**{items[k].message_id: k for k in vector_keys if items[k].message_id}, **(keys or {})}
    key_of.update((mid, key) for key, mid in turn_keys(conn, [r.id for r in ranked if r.id not in key_of]))
    return list(dict.fromkeys(key_of[r.id] for r in ranked if r.id in key_of))
