"""Ids that hold a credential, rewritten to a keyed placeholder, and the report of what was rewritten: shared by
the team store's clean-up (:mod:`pi_memory.semantic.backends.pg_clean`, where the decisions are written down)
and the embedded store's when ``pi-memory serve`` serves it (:mod:`.embedded_ids`). No database here."""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pi_memory import safety

PREFIX = "redacted-"
MAX_ID_CHARS = 128  # a project store's name may hold 128; an id rewritten longer becomes the bare placeholder
_LETTERS = "abcdefghijklmnop"
# what the stores themselves write: a memory id (a UUID) and a time; the scanner reads neither as a credential, and
# reading them costs most of a full sweep (every row has its own), so a sweep passes over them
_OWN_FORMS = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
                        r"|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)?")


def own_form(value: str) -> bool:
    """True for a value in a form the stores write themselves (a UUID, an ISO-8601 time): no credential."""
    return len(value) <= 36 and _OWN_FORMS.fullmatch(value) is not None


def placeholder(key: bytes, secret: str, kind: str) -> str:
    """What ``secret`` (found by the scanner pattern ``kind``) becomes in an id under ``key``."""
    digest = hmac.new(key, secret.encode("utf-8"), hashlib.sha256).digest()[:6]
    return f"{PREFIX}{kind}-" + "".join(_LETTERS[b >> 4] + _LETTERS[b & 15] for b in digest)


class IdRewriter:
    """Ids with their credentials replaced by :func:`placeholder` (the rules: :mod:`.backends.pg_clean`); remembers
    each result."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.kinds: dict[str, list[str]] = {}  # a rewritten id -> the scanner ids of what it held
        self.secrets: set[str] = set()  # what was replaced: to find the rows that hold it elsewhere
        self._done: dict[str, str] = {}

    def rewrite(self, value: str) -> str:
        """``value`` without its credentials (itself when it holds none)."""
        if value in self._done:
            return self._done[value]
        spans = safety.secret_spans(value) if value else []
        new = value
        if spans:
            parts, pos = [], 0
            for span in spans:
                parts += [value[pos:span.start], self._hide(value[span.start:span.end], span.id)]
                pos = span.end
            new = "".join(parts) + value[pos:]
            if len(new) > MAX_ID_CHARS or safety.secret_spans(new):
                new = self._hide(value, spans[0].id)
            self.kinds[new] = sorted({s.id for s in spans})
        self._done[value] = new
        return new

    def _hide(self, secret: str, kind: str) -> str:
        self.secrets.add(secret)
        return placeholder(self.key, secret, kind)

    def rewrite_json(self, value: Any) -> Any:
        """``value`` (a JSON value) with every string in it, keys too, rewritten."""
        if isinstance(value, str):
            return self.rewrite(value)
        if isinstance(value, dict):
            return {self.rewrite(k): self.rewrite_json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.rewrite_json(v) for v in value]
        return value


_NOUNS = {"semantic_memories": ("memory", "memories"), "semantic_history": ("history event", "history events"),
          "api_tokens": ("token", "tokens"), "project_stores": ("project store", "project stores"),
          "audit_log": ("audit row", "audit rows"), "semantic_vectors": ("vector", "vectors"),
          "job_outcomes": ("capture outcome", "capture outcomes")}


def _count(n: int, table: str) -> str:
    one, many = _NOUNS[table]
    return f"{n} {one if n == 1 else many}"


@dataclass
class IdChange:
    """One rewritten id: what it held (``kinds``), where it was (``fields``), the rows per table."""

    kinds: list[str]
    fields: set[str] = field(default_factory=set)
    rows: Counter = field(default_factory=Counter)
    tokens: list[str] = field(default_factory=list)  # the ids of the tokens that act for it (`token list`)


@dataclass
class CleanReport:
    """What :func:`clean_stored_ids` rewrote: ``rows`` per table, ``ids`` by their new value, ``labels``
    (token labels redacted), ``merged`` (memories superseded by the same text under the new id)."""

    rows: Counter = field(default_factory=Counter)
    ids: dict[str, IdChange] = field(default_factory=dict)
    labels: int = 0
    merged: int = 0
    texts: Counter = field(default_factory=Counter)  # rows per table whose texts were redacted (pg_sweep)
    same_text: int = 0  # memories superseded: their redacted text equals another active memory's of the scope
    reembed: int = 0  # memories whose vectors were dropped with their text's credential, queued to embed again

    @property
    def total(self) -> int:
        return sum(self.rows.values()) + sum(self.texts.values())

    def note(self, new: str, kinds: list[str], where: str | None, table: str, rows: int) -> None:
        change = self.ids.setdefault(new, IdChange(kinds))
        if where:
            change.fields.add(where)
        change.rows[table] += rows

    def lines(self) -> list[str]:
        """Sentences for a person (never a credential): the rows rewritten and what each id became."""
        if not self.total:
            return []
        rows = sum(self.rows.values())
        tables = ", ".join(_count(n, t) for t, n in self.rows.items() if n)
        out = [f"Stored ids held credentials: rewrote {rows} {'row' if rows == 1 else 'rows'} "
               f"({tables}); the credentials are no longer in the database."] if rows else []
        for new, change in sorted(self.ids.items()):
            rows = ", ".join(_count(n, t) for t, n in change.rows.items() if n)
            tokens = f"; {'its token' if len(change.tokens) == 1 else 'its tokens'} {', '.join(change.tokens)}" \
                if change.tokens else ""
            out.append(f"  {' and '.join(sorted(change.fields))} now {new!r} (it held a credential: "
                       f"{', '.join(change.kinds)}; rewritten in {rows}{tokens})")
        if self.labels:
            out.append(f"  {self.labels} token {'label' if self.labels == 1 else 'labels'} held a credential, "
                       "now redacted.")
        if self.merged:
            out.append(f"  {self.merged} {'memory was' if self.merged == 1 else 'memories were'} already stored "
                       "under the new id, so the old copy is marked superseded by it.")
        if self.texts:
            texts = ", ".join(_count(n, t) for t, n in self.texts.items() if n)
            again = (f"; {_count(self.reembed, 'semantic_memories')} will be embedded again from the redacted text "
                     "when `serve` starts") if self.reembed else ""
            out.append(f"Stored texts held credentials: redacted them in {texts}{again}.")
        if self.same_text:
            out.append(f"  {_count(self.same_text, 'semantic_memories')} then held the same text as another active "
                       f"memory of its scope, so {'it is' if self.same_text == 1 else 'they are'} marked superseded by it.")
        if self.ids:
            out.append("Clients still configured with an old id are refused on their next add and must choose a "
                       "plain name; what they stored is kept under the new id shown above.")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"rows": dict(self.rows), "labels": self.labels, "merged": self.merged, "texts": dict(self.texts),
                "sameText": self.same_text, "reembed": self.reembed,
                "ids": {new: {"kinds": c.kinds, "fields": sorted(c.fields), "rows": dict(c.rows), "tokens": c.tokens}
                        for new, c in sorted(self.ids.items())}}



__all__ = ["MAX_ID_CHARS", "PREFIX", "CleanReport", "IdChange", "IdRewriter", "own_form", "placeholder"]
