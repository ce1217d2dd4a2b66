"""Turns and curated entries that say what a superseded memory said, for :func:`pi_memory.retrieval.engine.recall`.

When a semantic memory supersedes another ("Production runs PostgreSQL 15." -> "... 16."), past session turns
and curated entries still say the old thing. :func:`mark_outdated` takes recall's passing hits, best first, and
checks the session turns and curated entries among them against two sets of replaced memories (embedded backend
only: remote services do not expose them):

* the memories each recalled current fact replaced directly (:func:`predecessors`, by the ``superseded_by``
  index), and
* the superseded memories the prompt's keyword search met on its way to the active ones (the rows it read
  anyway: :func:`pi_memory.semantic.keyword.keyword_candidates` hands their keys over), at most
  ``REPLACED_LIMIT``, best BM25 first, each with the active memory its chain of replacements ends at
  (:func:`replacements`: one statement by primary key and the unique ``id``). This finds a turn's replaced
  fact when the current fact itself did not pass the evidence floor ("should I ask Maria to review the invoice
  rounding fix?": the turn about Maria on the payments team is recalled, the fact saying she moved shares too
  few of the prompt's words). A replaced memory the prompt shares no searched word with is not found this way.

**What changed** (:func:`change`): words are case-folded runs of letters or digits (``15`` and ``16`` count)
without stop words; a word of 4+ letters also matches a longer one it starts (``postgres`` ~ ``postgresql``).
The *subject* is the words both texts say; the *old values* are the words only the old text says, the *new
values* those only the new text says (15 vs 16, 8080 vs 9090, payments vs platform). Two kinds of words are no
value: in the new text, an old word among the two content words after ``from``, ``was``, ``were``,
``previously``, ``formerly``, ``replacing``, ``replaced`` or ``instead`` names the old value as the past
("PostgreSQL 16 (upgraded from 15)" leaves 15 an old value), and words that tell of a change rather than a
value (:data:`CHANGE_WORDS`: "moved", "now", "upgraded"...).

**A change by negation** ("We deploy to production on Fridays." -> "We never deploy ..."): the words of
negation (:data:`NEGATIONS`, and "n't") are no value; the change is a *flip* when a clause of one text is negated
and no clause of the other is. A text is then outdated when it holds the whole subject (all of it up to three words,
all but one of more, at least two) and a clause of it holding a subject word says it the old way, none the new way
("let's deploy to prod on Friday" before the change; "we don't deploy on Fridays" is not outdated). The rules
below about who said it when apply as to values.

**When a text is outdated** by a replacement (:func:`outdated_by`), all of:

* it *states* more old values than new ones: a value is stated when it is in a clause of the text (cut at
  ``, ; : . ! ?`` before a space, brackets, line breaks, dashes between spaces, "so", "but", "because"...)
  that also holds a subject word -- "our production database is PostgreSQL 15, so don't use features that need 16" states 15 (beside
  "production database PostgreSQL") and only mentions 16; "postgres 15 and 16 both run" states both (a tie:
  not outdated);
* it is about the same thing: it holds two subject words (one when the texts share only one), or an old value
  right beside a subject word that is beside it in the old text ("compatible with PostgreSQL 15" holds only
  "postgresql" of the subject, but as the old text does: "PostgreSQL 15"); a turn about "the deploy database
  url ...:5432" shares only "database" with "The staging database listens on port 5432" -> "... 6543", and
  is about another database;
* it holds more of the old text's words than of any other recalled current fact's (it matches the replaced
  memory better than anything current);
* it was written before the change: the replacement's time, or the start of the day the memory that replaced
  it was observed on when that is earlier (a fact recorded today as "since November 20 ..." changed on the
  20th; a fact replaced twice changed on its first replacement's day), and that change happened by the moment
  recall is asked about (``as_of``). A later text saying the old thing is left alone: the replacement may be
  what is wrong.

**What recall does with it.** The text carries ``replaced_by`` / ``replaced_on``, which
:func:`pi_memory.retrieval.engine.render_line` prints as ``said before <day>, since replaced by <id>``. A session
turn is moved to just below its current fact. A curated entry keeps its rank: it is the user's own note, which the
user may keep on purpose, so it gets the note but is not reordered. When the current fact is not among the hits
it is brought in just above the first text it outdates (``recalled_for`` names that text): the replacement is
the evidence, and the note must name a fact the agent can read.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pi_memory.index.query import STOP_WORDS

# one pass over a text: a word (a run of letters or digits), or what ends a clause -- a bracket, a line break,
# , ; : . ! ? before a space or the end ("db:5432", "0.74" stay whole), a dash between spaces
_PIECES = re.compile(r"([^\W_]+)|[()\[\]{}\n]|[,;:.!?](?=\s|$)|\s[-\u2013\u2014]+\s", re.UNICODE)
JOINERS = frozenset({"so", "but", "because", "although", "though", "whereas", "while"})  # words that end one too
MIN_PREFIX = 4
PAST_MARKERS = frozenset({"from", "was", "were", "previously", "formerly", "replacing", "replaced", "instead"})
PAST_SPAN = 2  # content words after a past marker that name the old value
# a clause holding one of these (or "n't": "don't" is read as "don", "t") says the opposite of the same clause without
NEGATIONS = frozenset({"not", "never", "no", "nobody", "nothing", "none", "neither", "nor", "without", "cannot",
                       "stopped"})
_NT = frozenset({"don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "shouldn", "can",
                 "couldn", "mustn", "haven", "hasn", "hadn"})
CHANGE_WORDS = frozenset({"now", "currently", "moved", "moves", "since", "upgraded", "downgraded", "changed",
                          "switched", "migrated", "anymore", "longer", "instead", "new", "still", "today"})


def _same(a: str, b: str) -> bool:
    """Equal, or one a 4+ letter start of the other (no digits: 15 is not 150)."""
    if a == b:
        return True
    if a.isdigit() or b.isdigit() or min(len(a), len(b)) < MIN_PREFIX:
        return False
    return a.startswith(b) or b.startswith(a)


def _has(words: Sequence[str] | set[str] | frozenset[str], word: str) -> bool:
    if word in words:
        return True
    if word.isdigit() or len(word) < MIN_PREFIX:
        return False
    return any(len(w) >= MIN_PREFIX and (w.startswith(word) or word.startswith(w)) and not w.isdigit() for w in words)


def _clauses(text: str) -> list[list[str]]:
    """The case-folded words of each clause of ``text``, stop words included (the past markers are some)."""
    out: list[list[str]] = [[]]
    for m in _PIECES.finditer(text or ""):
        word = m.group(1)
        if word is None or word.casefold() in JOINERS:
            if out[-1]:
                out.append([])
        else:
            out[-1].append(word.casefold())
    return [c for c in out if c]


def _content(clause: list[str]) -> list[str]:
    return [w for w in clause if w not in STOP_WORDS and w not in NEGATIONS]


def _negated(clause: list[str]) -> bool:
    """Whether a clause (its words, stop words included) is negated."""
    return any(w in NEGATIONS or (w == "t" and i and clause[i - 1] in _NT) for i, w in enumerate(clause))


@functools.lru_cache(maxsize=256)
def _read(text: str) -> tuple[list[list[str]], frozenset[str]]:
    """``text``'s clauses without stop words and all its words (read once per recall's texts and facts)."""
    clauses = [_content(c) for c in _clauses(text)]
    return clauses, frozenset(w for c in clauses for w in c)


@functools.lru_cache(maxsize=256)
def _negations(text: str) -> tuple[bool, ...]:
    """Per clause of :func:`_read`, whether it is negated."""
    return tuple(_negated(c) for c in _clauses(text))


def _around(words: list[str], i: int) -> list[str]:
    """The words right before and after ``words[i]``."""
    return [words[j] for j in (i - 1, i + 1) if 0 <= j < len(words)]


@dataclass(frozen=True)
class Change:
    """What changed from an old memory text to its replacement (module docstring)."""

    subject: frozenset[str]
    old: frozenset[str]
    new: frozenset[str]
    beside: dict[str, frozenset[str]]  # an old value -> the subject words right next to it in the old text
    flip: bool | None = None  # a change by negation: whether the old text was the negated one (None: no flip)


@functools.lru_cache(maxsize=64)
def change(old: str, new: str) -> Change:
    """The subject and the values that differ between ``old`` and ``new`` (module docstring)."""
    old_clauses = [_content(c) for c in _clauses(old)]
    old_w = {w for c in old_clauses for w in c}
    new_w: set[str] = set()
    for clause in _clauses(new):
        span = 0
        for w in clause:
            if w in PAST_MARKERS:
                span = PAST_SPAN
                continue
            if w in STOP_WORDS or w in NEGATIONS:
                continue
            if span:
                span -= 1
                if w in old_w:  # "upgraded from 15": the old value named as the past
                    continue
            new_w.add(w)
    subject = frozenset(w for w in old_w | new_w if _has(old_w, w) and _has(new_w, w))
    old_vals = frozenset(w for w in old_w if w not in CHANGE_WORDS and not _has(new_w, w))
    new_vals = frozenset(w for w in new_w if w not in CHANGE_WORDS and not _has(old_w, w))
    beside: dict[str, set[str]] = {}
    for c in old_clauses:
        for i, w in enumerate(c):
            if w in old_vals:
                beside.setdefault(w, set()).update(x for x in _around(c, i) if x in subject)
    was_negated, is_negated = any(_negations(old)), any(_negations(new))
    return Change(subject, old_vals, new_vals, {k: frozenset(v) for k, v in beside.items()},
                  was_negated if was_negated != is_negated else None)


def _flipped(text: str, ch: Change) -> bool:
    """Whether ``text`` says the whole subject the old way of a change by negation (module docstring)."""
    clauses, said = _read(text)
    shared = sum(_has(said, w) for w in ch.subject)
    if len(ch.subject) < 2 or shared < (len(ch.subject) if len(ch.subject) <= 3 else len(ch.subject) - 1):
        return False
    ways = {neg for c, neg in zip(clauses, _negations(text), strict=True) if any(_has(ch.subject, w) for w in c)}
    return ways == {ch.flip}


def _stated(clauses: list[list[str]], about: list[bool], values: frozenset[str]) -> int:
    """How many of ``values`` the clauses state: each in a clause that also holds a subject word (``about``)."""
    return sum(any(a and _has(c, v) for c, a in zip(clauses, about, strict=True)) for v in values)


def _bound(clauses: list[list[str]], ch: Change) -> bool:
    """Whether an old value stands right beside a subject word that is beside it in the old text too."""
    for c in clauses:
        for i, w in enumerate(c):
            for v, near in ch.beside.items():
                if near and _same(w, v) and any(_same(x, s) for x in _around(c, i) for s in near):
                    return True
    return False


def outdated_by(text: str, old: str, new: str) -> bool:
    """Whether ``text`` states ``old`` rather than ``new`` and is about the same thing (module docstring, its
    first two rules)."""
    ch = change(old, new)
    if ch.flip is not None and _flipped(text, ch):
        return True
    clauses, said = _read(text)
    if not any(_has(said, v) for v in ch.old):  # most texts: no old value at all
        return False
    subject = {w for w in said if _has(ch.subject, w)}  # the text's words that are subject words
    about = [not subject.isdisjoint(c) for c in clauses]
    if _stated(clauses, about, ch.old) <= _stated(clauses, about, ch.new):
        return False
    shared = sum(_has(subject, w) for w in ch.subject)
    return (shared > 0 and shared >= min(2, len(ch.subject))) or _bound(clauses, ch)


def _overlap(said: frozenset[str], text: str) -> int:
    return sum(_has(said, w) for w in _read(text)[1])


def predecessors(backend: Any, scope: Any, ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
    """``current id -> [(old text, superseded_at)]`` of the scope's memories that ``ids`` replaced directly;
    ``{}`` for a backend without a local table (remote services)."""
    conn = getattr(backend, "conn", None)
    if not ids or conn is None or not hasattr(scope, "columns"):
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    # unary + on the scope columns keeps SQLite on the superseded_by index: with the scope index it read every
    # memory of the scope (313 ms a recall at 100k memories, benchmarks/semantic_latency.py)
    rows = conn.execute("SELECT superseded_by, text, superseded_at FROM semantic_memories WHERE superseded_by IN "
                        f"({','.join('?' * len(ids))}) AND status = 'superseded' AND +user_id = ? "
                        "AND +project_id = ? AND +agent_id = ? ORDER BY pk", (*ids, *scope.columns()))
    for new_id, text, at in rows:
        out.setdefault(new_id, []).append((text, at or ""))
    return out


REPLACED_LIMIT = 8  # superseded memories the prompt's keyword search met that a recall checks, best first
CHAIN_DEPTH = 8  # replacements followed from a superseded memory to the active one


def replacements(backend: Any, scope: Any, pks: Sequence[int], moment: str) -> list[tuple[str, ...]]:
    """``(old text, superseded_at, day its replacement was observed on, current id, current text, current day)``
    for the first ``REPLACED_LIMIT`` of ``pks`` (superseded memories' primary keys, best first: what the prompt's
    keyword search met, :func:`pi_memory.semantic.keyword.keyword_candidates`), each with the active memory of
    the scope its chain of replacements ends at, created by ``moment``. One statement: rows by primary key, the
    chain followed on the unique ``id``. ``[]`` for a remote backend."""
    conn = getattr(backend, "conn", None)
    pks = list(dict.fromkeys(pks))[:REPLACED_LIMIT]
    if not pks or not isinstance(conn, sqlite3.Connection) or not hasattr(scope, "columns"):
        return []
    from pi_memory.semantic.models import fact_day

    rows = conn.execute(
        "WITH RECURSIVE chain(pk, text, at, day, next, depth) AS (SELECT o.pk, o.text, o.superseded_at, "
        "ifnull(r.observed_at, r.created_at), o.superseded_by, 0 FROM semantic_memories o JOIN semantic_memories r "
        f"ON r.id = o.superseded_by WHERE o.pk IN ({','.join('?' * len(pks))}) AND o.status = 'superseded' "
        "UNION ALL SELECT chain.pk, chain.text, chain.at, chain.day, m.superseded_by, chain.depth + 1 FROM chain "
        "JOIN semantic_memories m ON m.id = chain.next WHERE m.status = 'superseded' AND chain.depth < ?) "
        "SELECT chain.pk, chain.text, chain.at, chain.day, n.id, n.text, n.observed_at, n.created_at FROM chain "
        "JOIN semantic_memories n ON n.id = chain.next WHERE n.status = 'active' AND n.user_id = ? "
        "AND n.project_id = ? AND n.agent_id = ? AND (? = '' OR n.created_at <= ?)",
        (*pks, CHAIN_DEPTH, *scope.columns(), moment, moment)).fetchall()
    order = {pk: i for i, pk in enumerate(pks)}
    return [(old, at or "", fact_day(day, None), cid, text, fact_day(observed, created))
            for _pk, old, at, day, cid, text, observed, created in sorted(rows, key=lambda r: order[r[0]])]


def _changed(at: str, day: str) -> str:
    """When the change happened: the replacement's time, or the start of the new fact's day when earlier."""
    observed = f"{day[:10]}T00:00:00.000Z" if len(day or "") >= 10 else ""
    return min(at, observed) if at and observed else at or observed


def mark_outdated(backend: Any, scope: Any, hits: list[Any], *, replaced: Sequence[int] = (), moment: str = "",
                  fact: Callable[[str, str, str], Any] | None = None) -> list[Any]:
    """``hits`` (recall's, best first) with outdated session turns and curated entries marked, turns moved below
    their current fact, and a current fact the hits lack brought in above the first text it outdates (module
    docstring). ``replaced``: primary keys of superseded memories the prompt's keyword search met, best first
    (:func:`replacements`); ``moment``: recall's ``as_of``;
    ``fact(id, text, day)``: a new semantic hit (``None``: only recalled facts count). The list is returned as
    it is when there is nothing to check."""
    texts = [h for h in hits if h.kind in ("session", "curated") and not h.replaced_by]
    if not texts:
        return hits
    facts = [h for h in hits if h.kind == "semantic"]
    direct = predecessors(backend, scope, [h.id for h in facts])
    # (current fact, old text, when it was replaced, the day its replacement was observed on)
    pairs: list[tuple[Any, str, str, str]] = [(f, old, at, f.date) for f in facts for old, at in direct.get(f.id, [])]
    if fact is not None:
        by_id = {f.id: f for f in facts}
        for old, at, first, cid, text, day in replacements(backend, scope, replaced, moment):
            if cid not in by_id:
                by_id[cid] = fact(cid, text, day)
            pairs.append((by_id[cid], old, at, first))
    if not pairs:
        return hits
    out = list(hits)
    moved: dict[str, int] = {}  # turns already placed below a fact keep their order
    for hit in texts:
        said_text = hit.text.split(": ", 1)[-1] if hit.kind == "session" else hit.text  # without "user: "
        said = _read(said_text)[1]
        for current, old, at, first in pairs:
            changed = _changed(at, first)
            if not changed or (hit.when or "") >= changed or (moment and changed > moment):
                continue
            if not outdated_by(said_text, old, current.text):
                continue
            mine = _overlap(said, old)
            if any(_overlap(said, f.text) >= mine for f in out if f.kind == "semantic" and f.id != current.id):
                continue  # it matches a current fact at least as well as the replaced one
            hit.replaced_by, hit.replaced_on = current.id, changed[:10]
            if current not in out:
                current.recalled_for = hit.id
                out.insert(out.index(hit), current)
                moved[current.id] = 1
            elif hit.kind == "session" and out.index(hit) < out.index(current):
                out.remove(hit)
                out.insert(out.index(current) + 1 + moved.get(current.id, 0), hit)
                moved[current.id] = moved.get(current.id, 0) + 1
            break
    return out
