"""The Markdown store format: ``§``-separated entries, their budget, and drift detection.

Format (compatible with the seed extension and Hermes): entries joined by ``DELIMITER`` = ``"\\n§\\n"``;
we write one trailing newline. An entry may span lines; a lone ``§`` inside text is fine, but a line that is
exactly ``§`` would be read back as a delimiter, so content holding one is refused on write.

Budget: the number of characters (Python code points) of all entries joined with the delimiter -- the
delimiters count. Usage renders as ``"P% — cur/limit chars"`` with ``P = min(100, floor(cur/limit*100))``
when under the limit, and the true percentage when over it.

Drift (the file holds something the tool would mangle) is one of:

* ``not_utf8``: the bytes are not valid UTF-8;
* ``round_trip``: the file would not survive parse -> serialise with its meaning intact: a line that is a
  ``§`` with stray spaces or tabs around it looks like a delimiter to a person but not to the parser, so the
  two entries it separates would be merged on the next write. Differences of line endings (CRLF/CR), a BOM,
  trailing newlines, whitespace around entries, blank lines and empty entries (``§`` twice in a row, a
  trailing delimiter) lose nothing, are normalised silently on the next write and are never drift;
* ``plain_markdown``: an entry alone is longer than the store's limit and the file has no delimiter at all and
  looks like hand-written Markdown notes: the remedy is ``pi-memory split``. An over-long entry in a file that
  does have entries (a limit lowered below what the store holds, a shell append without a ``§`` line) is not
  drift: a write keeps it as it is, so nothing could be lost. The store is then *over budget*: adds are
  refused with the usage and what to do, replaces and removes that do not grow it still work, and the read
  result carries a notice (``MemoryStore.read``);
* ``unreadable``: the file exists but cannot be read (permissions, a directory, a symlink loop). Not drift in
  the strict sense, but handled the same way: reported, never a crash, no write.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pi_memory import safety, terminal_text

DELIMITER = "\n§\n"
SECTION_SIGN = "§"

DELIMITER_LINE = re.compile(r"^§$", re.MULTILINE)  # a line that is exactly a delimiter
_DELIMITER_LINE = re.compile(r"\n§(?=\n)")  # the same, in a text given a \n at each end (parse: faster)
_MD_STRUCTURE = re.compile(r"^\s*(#{1,6}\s|[-*+]\s|\d+[.)]\s)", re.MULTILINE)


normalise_newlines = terminal_text.normalise_newlines  # CRLF and CR as LF


def parse(text: str) -> list[str]:
    """Split store text into entries at every line that is exactly ``§``.

    Newlines are normalised, each entry is stripped and empty pieces are dropped, so a leading or trailing
    delimiter, or two in a row, never produce an empty entry. For a well-formed file this equals splitting on
    ``DELIMITER``.
    """
    # "\n§" is a literal the regex engine looks for at C speed: twice as fast on 16 MB as ^§$ (a line-by-line scan)
    return [entry for entry in map(str.strip, _DELIMITER_LINE.split(f"\n{normalise_newlines(text)}\n")) if entry]


def serialise(entries: list[str]) -> str:
    """Store text for ``entries`` (``""`` when there are none)."""
    return DELIMITER.join(entries) + "\n" if entries else ""


def dedupe(entries: list[str]) -> list[str]:
    """Exact duplicates removed, first copy kept, order kept."""
    seen: set[str] = set()
    out = []
    for entry in entries:
        if entry not in seen:
            seen.add(entry)
            out.append(entry)
    return out


@dataclass(frozen=True)
class Copy:
    """An exact duplicate :func:`dedupe` drops: its text, its index among the file's entries and the entries
    around it there (``before``: ``None`` at the end), so a learning undo can put it back."""

    text: str
    index: int
    after: str
    before: str | None

    def place(self) -> dict:
        return {"index": self.index, "after": self.after, "before": self.before}


def copies(entries: list[str]) -> tuple[Copy, ...]:
    """The exact duplicates in ``entries`` (every copy after the first of a text), in order."""
    seen: set[str] = set()
    out = []
    for i, entry in enumerate(entries):
        if entry in seen:
            out.append(Copy(entry, i, entries[i - 1], entries[i + 1] if i + 1 < len(entries) else None))
        seen.add(entry)
    return tuple(out)


def merged_copies(found: tuple[Copy, ...], layout: list[str]) -> list[Copy]:
    """Which of the copies ``found`` in a file a write of ``layout`` merges: each, unless ``layout`` holds that
    text more than once again (a learning undo giving copies back), for as many copies as it holds."""
    kept = Counter(layout)
    kept.subtract(set(layout))
    out = []
    for copy in found:
        if kept[copy.text] > 0:
            kept[copy.text] -= 1
        else:
            out.append(copy)
    return out


def slot(work: list[str], place: Mapping | None) -> int:
    """Where an entry goes into ``work`` (:class:`pi_memory.curated.operations.Place`): right after the entry
    ``after``, else right before the entry ``before``, else at its ``index`` (first when nothing stood before it,
    last when nothing stood after it); the end with no place."""
    if not place or all(place.get(k) is None for k in ("after", "before", "index")):
        return len(work)
    after, before = place.get("after"), place.get("before")
    if after is not None and after in work:
        return work.index(after) + 1
    if before is not None and before in work:
        return work.index(before)
    if after is None:
        return 0
    index = place.get("index")
    return len(work) if before is None or index is None else min(int(index), len(work))


def joined_length(entries: list[str]) -> int:
    return len(DELIMITER.join(entries))


def usage(current: int, limit: int) -> str:
    """``"P% — cur/limit chars"`` (thousands separators, P floored, capped at 100 unless over budget)."""
    pct = current * 100 // limit if limit > 0 else 100
    if current <= limit:
        pct = min(pct, 100)
    return f"{pct}% — {current:,}/{limit:,} chars"


def content_problem(content: str) -> str | None:
    """Why ``content`` (already stripped) cannot be stored as one entry, or ``None``.

    ``empty``; ``delimiter`` (a line that is only ``§``, with any line break Python knows, U+2028 included, so
    an entry cannot fake an entry boundary on screen); ``control`` (C0/C1 control characters other than tab
    and newline: terminal escape sequences can retitle a terminal or hide text from a person reading it);
    ``unreadable`` (nothing but U+FFFD: every character was a byte that is not UTF-8 or half of an emoji,
    replaced at the input edge, so saving it would put a row of ``\ufffd`` into every prompt).
    """
    if not content:
        return "empty"
    if safety.is_unreadable(content):
        return "unreadable"
    if any(line.strip() == SECTION_SIGN for line in content.splitlines()):
        return "delimiter"
    if holds_control(content):
        return "control"
    return None


holds_control = terminal_text.holds_control  # C0/C1 controls but tab and newline: what every store refuses


def printable(text: str) -> str:
    """``text`` for a terminal: control characters shown as ``\\xNN`` escapes, and the format characters that
    draw nothing or reorder a line (U+202E, U+200B...) as ``\\uXXXX`` (:mod:`pi_memory.terminal_text`)."""
    return terminal_text.printable(text)


@dataclass(frozen=True)
class Analysis:
    """A store file read from disk: its entries (deduplicated: a write merges exact duplicates, and says so) and
    whether it has drifted."""

    entries: list[str]
    drift: str | None = None  # not_utf8 | round_trip | plain_markdown | unreadable
    detail: str = ""
    text: str = ""
    encoding: str | None = None  # not_utf8: the likely encoding, as iconv names it (guess_encoding)
    copies: tuple[Copy, ...] = ()  # the exact duplicates the file holds, which ``entries`` leaves out


_HIGH_RUN = re.compile(rb"[\x80-\xff]+")


def _share(text: str, ranges: tuple[tuple[int, int], ...]) -> float:
    wide = [c for c in text if ord(c) > 0x7F]
    return sum(any(lo <= ord(c) <= hi for lo, hi in ranges) for c in wide) / len(wide) if wide else 0.0


def guess_encoding(raw: bytes) -> str:
    """The likely encoding of text that is not UTF-8, as ``iconv -f`` names it (for the hint that converts it).

    A BOM says UTF-16. Otherwise bytes above 0x7F that stand alone between ASCII (``café``) mean a one-byte
    Western encoding: WINDOWS-1252 when a byte 0x80-0x9F occurs (its curly quotes and dashes, control codes in
    ISO-8859-1), else ISO-8859-1. Runs of high bytes mean a two-byte East Asian encoding: the one that decodes
    the bytes strictly into its own script (kana for SHIFT_JIS, hangul with spaces between words for EUC-KR,
    Han for GB18030 / BIG5, in that order). Detection libraries tried (charset-normalizer) called four-letter Latin-1 words UTF-16."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16"
    runs = _HIGH_RUN.findall(raw)
    single = sum(len(r) == 1 for r in runs)
    if runs and single * 2 < len(runs):
        han, kana, hangul = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF)), ((0x3040, 0x30FF),), ((0xAC00, 0xD7AF),)
        spaced = len(runs) > 1 and b" " in raw  # Korean puts spaces between words, Chinese does not
        for codec, name, script, floor in (("shift_jis", "SHIFT_JIS", kana, 0.2),
                                           ("euc_kr", "EUC-KR", hangul, 0.9 if spaced else 2.0),
                                           ("gb18030", "GB18030", han, 0.5), ("big5", "BIG5", han, 0.5)):
            try:
                if _share(raw.decode(codec), script) >= floor:
                    return name
            except UnicodeDecodeError:
                continue
    return "WINDOWS-1252" if re.search(rb"[\x80-\x9f]", raw) else "ISO-8859-1"


def looks_like_plain_markdown(text: str) -> bool:
    """Hand-written notes: no delimiter anywhere, and Markdown structure or several paragraphs."""
    norm = normalise_newlines(text).strip()
    if DELIMITER in norm or not norm:
        return False
    return len(_MD_STRUCTURE.findall(norm)) >= 2 or norm.count("\n\n") >= 2


def analyse(raw: bytes | OSError | None, limit: int) -> Analysis:
    """Parse raw file bytes for a store of ``limit`` characters and classify drift."""
    if raw is None:
        return Analysis(entries=[])
    if isinstance(raw, OSError):
        return Analysis(entries=[], drift="unreadable", detail=f"{type(raw).__name__}: {raw}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", errors="replace")
        return Analysis(
            entries=dedupe(parse(text)),
            drift="not_utf8",
            detail=f"byte {exc.start} is not valid UTF-8",
            text=text,
            encoding=guess_encoding(raw),
        )
    if text.startswith("\ufeff"):
        text = text[1:]
    entries = parse(text)
    hidden = next((e for e in entries if SECTION_SIGN in e and any(line.strip() == SECTION_SIGN
                                                                   for line in e.split("\n"))), None)
    if hidden is not None:
        norm = normalise_newlines(text)
        line_no = norm[: norm.find(hidden)].count("\n") + 1 + next(
            i for i, line in enumerate(hidden.split("\n")) if line.strip() == SECTION_SIGN
        )
        return Analysis(
            entries=dedupe(entries),
            drift="round_trip",
            detail=f"line {line_no} is a '§' with extra spaces around it, which is not a valid delimiter",
            text=text,
        )
    oversized = [e for e in entries if len(e) > limit]
    if oversized and looks_like_plain_markdown(text):
        return Analysis(
            entries=dedupe(entries),
            drift="plain_markdown",
            detail=f"one entry is {len(oversized[0]):,} chars, over the store limit of {limit:,}",
            text=text,
        )
    return Analysis(entries=dedupe(entries), text=text, copies=copies(entries))


class LastParse:
    """The last :func:`analyse` of each store file: reading the same bytes again (``pi-memory status`` reads
    every store right after the open has) reuses it instead of parsing the file twice (0.3 s a parse of 16 MB)."""

    def __init__(self) -> None:
        self._last: dict[str, tuple[bytes, int, Analysis]] = {}

    def analyse(self, key: str, raw: bytes | OSError | None, limit: int) -> tuple[Analysis, bool]:
        """``(analysis, new)``: ``new`` is ``False`` when ``raw`` and ``limit`` are those of the last call for
        ``key`` and its analysis is returned again."""
        last = self._last.get(key)
        if last is not None and last[1] == limit and last[0] == raw:
            return last[2], False
        analysis = analyse(raw, limit)
        if isinstance(raw, bytes):
            self._last[key] = (raw, limit, analysis)
        else:
            self._last.pop(key, None)
        return analysis, True


def split_plain_markdown(text: str) -> list[str]:
    """Proposed entries for hand-written notes: one per top-level list item or paragraph.

    A heading is kept as a prefix of the items under it (``"Tooling: uses uv"``), so each entry stands alone.
    Used by ``pi-memory split``; the result is shown for review before anything is written.
    """
    entries: list[str] = []
    heading = ""
    block: list[str] = []

    def flush() -> None:
        if block:
            body = "\n".join(block).strip()
            if body:
                entries.append(f"{heading}: {body}" if heading else body)
            block.clear()

    for line in normalise_newlines(text).split("\n"):
        stripped = line.strip()
        if stripped.startswith("#"):
            flush()
            heading = stripped.lstrip("#").strip()
        elif not stripped:
            flush()
        elif re.match(r"^[-*+]\s|^\d+[.)]\s", stripped) and not line.startswith((" ", "\t")):
            flush()
            block.append(re.sub(r"^([-*+]|\d+[.)])\s+", "", stripped))
        else:
            block.append(line.rstrip())
    flush()
    return dedupe([e for e in entries if content_problem(e) is None])


FAILURE_CATEGORIES = ("failure", "correction", "insight", "preference", "convention", "tool-quirk")
FailureCategory = Literal["failure", "correction", "insight", "preference", "convention", "tool-quirk"]


def failure_entry(content: str, category: str = "failure", reason: str | None = None) -> str:
    """The Markdown text of a failure-memory entry: ``[category] content — Failed: reason``."""
    text = f"[{category}] {content.strip()}"
    return f"{text} — Failed: {reason.strip()}" if reason and reason.strip() else text
