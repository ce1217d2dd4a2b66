"""The line endings of a settings file kept through an edit: a file written with CRLF stays CRLF.

A user on Windows (or with ``core.autocrlf``) has settings files whose lines end in ``\\r\\n``. An install that
wrote its own lines with ``\\n`` left such a file with mixed endings, and a ``git diff`` showing every line we
touched as changed. The rule here: every line the user wrote keeps its own ending, byte for byte; every line we
add ends the way the file's lines mostly end (:func:`newline_of`: ``\\r\\n`` when more lines end so than with a
bare ``\\n``; on a tie, the first line's ending). A file without any line ending yet gets ``\\n``.

:mod:`.json_edit` writes the lines it adds in that ending directly; TOML goes through tomlkit, which keeps the
endings of what it parsed and writes ``\\n`` for what it adds, so :func:`like` mends its output afterwards.
"""

from __future__ import annotations

import difflib
import re

_BARE_LF = re.compile(r"(?<!\r)\n")
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")  # a line with its ending (only LF ends a line here)


def newline_of(text: str) -> str:
    """``"\\r\\n"`` or ``"\\n"``: the ending most of ``text``'s lines have (see the module docstring)."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf != lf:
        return "\r\n" if crlf > lf else "\n"
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def like(old: str | None, new: str) -> str:
    """``new`` (an edit of ``old`` whose added lines end in a bare ``\\n``) with the lines that are not ``old``'s
    ending in ``old``'s newline; ``old``'s own lines keep their endings."""
    if not old or newline_of(old) == "\n" or "\n" not in new:
        return new  # the added lines already end as the file's mostly do
    if not _BARE_LF.search(old):  # every line of old ends in CRLF: each bare LF in new is one we added
        return _BARE_LF.sub("\r\n", new)
    # Mixed endings, mostly CRLF: lines equal to old's lines (in order) are old's and keep their bytes; the rest
    # are ours and get CRLF.
    old_lines, new_lines = _LINE.findall(old), _LINE.findall(new)
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        chunk = new_lines[j1:j2]
        out += chunk if tag == "equal" else [_BARE_LF.sub("\r\n", line) for line in chunk]
    return "".join(out)
