"""A store file's own layout, kept apart from its entries, so that a learning undo can give back its exact bytes.

A write publishes the store's format (entries joined by ``\\n§\\n``, one trailing newline), and the reader takes
more (:mod:`.entries`): CRLF or CR line endings, a byte-order mark, blank lines and spaces around entries, empty
entries (``§`` twice in a row). A write normalises all that, silently. :class:`Layout` is what a file holds besides
its entries: the text between them (the *gaps*: BOM, blank lines, ``§`` lines, spaces and line endings) and the line
breaks inside each entry, with the SHA-256 of the file's bytes. It holds no entry text, so the learning log that
keeps it (:mod:`pi_memory.learning.log`) still keeps no credential. :meth:`Layout.fill` puts entries back into it
and gives bytes only when they are exactly the bytes it was taken from (their SHA-256 says so).

A learning job's write records the layout of the bytes it replaced and the SHA-256 of the bytes it published
(:class:`Published`); the job's undo asks for them back (:class:`Restore`), and the store gives them back, under its
lock, only when the file still holds exactly what the job left and the undo leaves the entries the file held then.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

from pi_memory.curated import entries as fmt

BOM = "\ufeff"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Normalised:
    """``text`` with CRLF and CR as LF (:func:`.entries.normalise_newlines`), and where each of its characters
    starts in ``text``: only a CRLF changes the length, so the offset is the position plus the CRLFs before it."""

    def __init__(self, text: str):
        self.text = fmt.normalise_newlines(text)
        self._crlf = [m.start() - i for i, m in enumerate(re.finditer("\r\n", text))]  # their positions here

    def start(self, k: int) -> int:
        """Where character ``k`` of the normalised text starts in the original (``k`` may be its length)."""
        return k + bisect.bisect_left(self._crlf, k)


def _newlines(text: str, start: int, end: int):
    """The positions of ``"\\n"`` in ``text[start:end]``."""
    k = text.find("\n", start, end)
    while k != -1:
        yield k
        k = text.find("\n", k + 1, end)


@dataclass(frozen=True)
class Layout:
    """``gaps``: the text before, between and after the entries (one more than there are entries); ``breaks``: for
    each entry, its line breaks in order (``"\\r\\n"``, ``"\\r"``, ``"\\n"``), or ``None`` when they are all ``"\\n"``;
    ``digest``: the SHA-256 of the file's bytes."""

    gaps: tuple[str, ...]
    breaks: tuple[tuple[str, ...] | None, ...]
    digest: str

    @classmethod
    def of(cls, raw: bytes | None) -> Layout | None:
        """The layout of a store file's bytes; ``None`` when there is no file, when it is not UTF-8, or when it is
        in the store's own format already (its entries written out again give the same bytes)."""
        if not raw:
            return None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None
        skip = 1 if text.startswith(BOM) else 0  # the reader drops a BOM at the start only
        if raw == fmt.serialise(fmt.parse(text[skip:])).encode("utf-8"):
            return None
        body = _Normalised(text[skip:])
        norm = body.text
        spans = []  # (start, end) of each entry in ``norm``: the pieces between '§' lines, stripped, empty ones left
        edges = [0, *(x for m in fmt.DELIMITER_LINE.finditer(norm) for x in m.span()), len(norm)]
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            piece = norm[a:b]
            if entry := piece.strip():
                start = a + len(piece) - len(piece.lstrip())
                spans.append((start, start + len(entry)))
        gaps, breaks, entries, at = [], [], [], 0
        for a, b in spans:
            lo, hi = skip + body.start(a), skip + body.start(b)
            gaps.append(text[at:lo])
            found = tuple(text[skip + body.start(k):skip + body.start(k + 1)] for k in _newlines(norm, a, b))
            breaks.append(found if any(br != "\n" for br in found) else None)
            entries.append(norm[a:b])
            at = hi
        gaps.append(text[at:])
        layout = cls(tuple(gaps), tuple(breaks), sha256(raw))
        return layout if layout.fill(entries) == raw else None  # never keeps a layout it could not give back

    def fill(self, entries: list[str]) -> bytes | None:
        """The bytes this layout was taken from, when ``entries`` are the entries the file held (copies of exact
        duplicates included, in their order); else ``None``."""
        if len(entries) != len(self.gaps) - 1:
            return None
        parts = [self.gaps[0]]
        for entry, breaks, gap in zip(entries, self.breaks, self.gaps[1:], strict=True):
            if breaks is not None:
                lines = entry.split("\n")
                if len(lines) != len(breaks) + 1:
                    return None
                entry = lines[0] + "".join(br + line for br, line in zip(breaks, lines[1:], strict=True))
            parts += [entry, gap]
        data = "".join(parts).encode("utf-8")
        return data if sha256(data) == self.digest else None

    def to_json(self) -> str:
        return json.dumps({"gaps": list(self.gaps), "breaks": [list(b) if b else None for b in self.breaks],
                           "sha256": self.digest})

    @classmethod
    def from_json(cls, text: str) -> Layout:
        data = json.loads(text)
        return cls(tuple(data["gaps"]), tuple(tuple(b) if b else None for b in data["breaks"]), data["sha256"])


Outcome = Literal["restored", "changed", "entries"]


@dataclass(frozen=True)
class Restore:
    """A learning undo's request to a store's write: the bytes ``layout`` was taken from, when the file holds
    exactly the bytes whose SHA-256 is ``left`` (what the job's write published)."""

    layout: Layout
    left: str

    def attempt(self, raw: bytes | None, entries: list[str]) -> tuple[Outcome, bytes | None]:
        """``("restored", bytes)``; ``("changed", None)``: the file is not as the job left it; ``("entries",
        None)``: the entries after the batch are not the ones the file held (one given back redacted, say)."""
        if raw is None or sha256(raw) != self.left:
            return "changed", None
        data = self.layout.fill(entries)
        return ("restored", data) if data is not None else ("entries", None)


@dataclass(frozen=True)
class Published:
    """What a file store's write replaced and published: ``replaced``, the bytes it replaced (``None``: no file);
    ``digest``, the SHA-256 of the bytes it wrote; ``restored``, the outcome of a :class:`Restore` it was given
    (``None``: none was)."""

    replaced: bytes | None = field(repr=False)
    digest: str
    restored: Outcome | None = None

    @cached_property
    def before(self) -> Layout | None:
        """The layout of the bytes the write replaced (``None``: they were in the store's format, or no file).
        Worked out when asked (a learning job asks), not on every write."""
        return Layout.of(self.replaced)
