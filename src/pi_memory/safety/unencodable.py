"""Text that cannot be encoded as UTF-8: lone surrogates.

A Python ``str`` may hold UTF-16 surrogate code points (U+D800–U+DFFF) that no UTF-8 file, SQLite row, HTTP
body or terminal can take: JSON escapes such as ``"\\ud83d"`` decode to one (a JavaScript string cut in the
middle of an emoji), and so does every byte of a command-line argument that is not UTF-8 (Python decodes
``argv`` with ``surrogateescape``: ``b"\\xff"`` becomes ``"\\udcff"``). Left in, they fail the write that meets
them (``UnicodeEncodeError: … surrogates not allowed``) and the whole turn, entry or request is lost.

:func:`replace_unencodable` is called once at every edge where outside text comes in (the tools, CLI
arguments and text read from standard input, the pi bridge, MCP, the host hooks, the REST server, the
transcript readers, semantic capture, the mem0 importer), so nothing behind
those edges ever sees a surrogate. The rule: a high surrogate followed by a low one is the character the pair
stands for (``"\\ud83d\\ude00"`` -> 😀, what the sender meant); every other surrogate (lone high, lone low, a
reversed pair, an escaped byte) becomes U+FFFD, one per code point, and the rest of the text is kept as it is.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

_SURROGATE = re.compile("[\ud800-\udfff]")

T = TypeVar("T")


def replace_unencodable(value: T) -> T:
    """``value`` with every surrogate code point replaced (see the module docstring): a ``str``, or the
    strings inside lists, tuples and dicts (keys too), as ``json.loads`` returns them. Anything else is
    returned as it is; values without a surrogate are returned unchanged (the same object)."""
    return _scrub(value)  # type: ignore[no-any-return]


def _scrub(value: Any) -> Any:
    if type(value) is str:
        if _SURROGATE.search(value) is None:
            return value
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_scrub(v) for v in value)
    if isinstance(value, str):  # a str subclass
        return _scrub(str(value))
    return value


UNREADABLE = ("every character is one that could not be decoded (bytes that are not UTF-8, or half of an emoji), "
              "shown as \ufffd")


def is_unreadable(text: str) -> bool:
    """True when ``text`` holds nothing but U+FFFD and blanks (and is not empty): every character was a byte
    that is not UTF-8 or a lone surrogate, replaced at the input edge. Stores refuse it (a row of ``\ufffd`` in
    every prompt is nothing anyone can read); the refusal says :data:`UNREADABLE`."""
    return bool(text) and "\ufffd" in text and not text.replace("\ufffd", "").strip()
