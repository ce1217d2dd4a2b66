"""A JSON settings file changed in place: only the values that differ are written anew, every other byte stays.

``json.dumps`` of a whole settings file lays out everything in one style: a user's compact
``"allow": ["Bash(ls:*)"]`` in an indented file would become four lines, and the file's ``git diff`` would
show lines the install never meant to touch. :func:`edit` instead walks the old text and the new content
together: a value equal to the old one keeps its text; an object keeps its members' texts and the spacing
between them, loses the members the new content dropped and gains the new ones after its last member, in the
spacing its members already use; an array does the same with its elements (kept in order, the new ones
appended); anything else (a changed string, a value of another type) is written in the file's own style
(:class:`Style`: indent unit, separators, ``\\uXXXX`` escapes, line ending), indented from the line it starts on.

Line endings: the lines added end the way the file's lines mostly end (``\\r\\n`` in a CRLF file,
:func:`.newlines.newline_of`); the user's lines keep theirs, also in a file that mixes both.

Duplicate keys (``{"model": "a", "model": "b"}``): valid JSON that every reader of these files (``JSON.parse``,
Python's ``json``) resolves by keeping the last one. The walk keeps them: an earlier copy of a key is text no
reader sees, so it stays byte for byte; the last one holds the value and is edited like any member; a key the new
content drops goes with all its copies. So a duplicate outside what an install changes never makes it rewrite the
file. Inside what it changes (``hooks``, ``mcpServers``) the installer refuses instead
(:func:`duplicate_keys`, :func:`pi_memory.integrations.hooks.install.read_json_file`): there it would have to
pick the copy to change, and the user may well think the other one is in effect.

Only the standard library's scanner is used (``json.decoder``): values are decoded in C and only the
containers whose content changed are taken apart. No library for format-keeping JSON edits is a dependency
here (the known ones are for JSON5 / JSONC or only report positions); the edits an install makes are small:
members and array elements added or removed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from json.decoder import scanstring

from pi_memory.integrations.hooks.newlines import newline_of

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Style:
    """How a file writes its JSON: one line (``separators``) or indented (``indent``, spaces or a tab, lines
    ending in ``newline``), and whether every non-ASCII character is escaped (``ascii_only``)."""

    one_line: bool = False
    separators: tuple[str, str] = (", ", ": ")
    indent: str = "  "
    ascii_only: bool = False
    newline: str = "\n"

    @classmethod
    def of(cls, text: str) -> Style:
        body = text.strip()
        ascii_only = bool(re.search(r"\\u[0-9a-fA-F]{4}", body)) and body.isascii()
        if "\n" not in body:
            return cls(True, _separators(body), ascii_only=ascii_only)
        indent = re.search(r"\n([ \t]+)\S", body)
        return cls(False, indent=indent.group(1) if indent else "  ", ascii_only=ascii_only, newline=newline_of(text))

    def dump(self, value: object, base: str = "") -> str:
        """``value`` in this style, its inner lines indented from ``base`` (the indent of the line it starts on)."""
        if self.one_line:
            return json.dumps(value, ensure_ascii=self.ascii_only, separators=self.separators)
        return json.dumps(value, ensure_ascii=self.ascii_only, indent=self.indent).replace("\n", self.newline + base)


class _Unusable(ValueError):
    """The text is not one JSON value this walk can edit (trailing text): write it whole."""


@dataclass
class _Item:
    key: str | None  # an object member's key; None for an array element
    start: int  # the member's key (or the element) starts here
    value_start: int
    end: int  # the value ends here
    value: object


def _ws(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _items(text: str, start: int) -> tuple[list[_Item], int]:
    """The members (``{``) or elements (``[``) of the container at ``start``, and the index after it."""
    is_object = text[start] == "{"
    close = "}" if is_object else "]"
    items: list[_Item] = []
    i = _ws(text, start + 1)
    if text[i:i + 1] == close:
        return items, i + 1
    while True:
        key, item_start = None, i
        if is_object:
            if text[i:i + 1] != '"':
                raise _Unusable(f"a key was expected at {i}")
            key, i = scanstring(text, i + 1)
            i = _ws(text, i)
            if text[i:i + 1] != ":":
                raise _Unusable(f"':' was expected at {i}")
            i = _ws(text, i + 1)
        value, end = _DECODER.raw_decode(text, i)
        items.append(_Item(key, item_start, i, end, value))
        i = _ws(text, end)
        if text[i:i + 1] == ",":
            i = _ws(text, i + 1)
            continue
        if text[i:i + 1] == close:
            return items, i + 1
        raise _Unusable(f"',' or {close!r} was expected at {i}")


def _same(a: object, b: object) -> bool:
    """Equal as JSON, types and key order included (``1`` is not ``true``, ``1.0`` not ``1``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _line_indent(text: str, i: int) -> str:
    line_start = text.rfind("\n", 0, i) + 1
    return _WS.match(text, line_start).group(0).replace("\n", "").replace("\r", "")


def edit(old: str, new: object) -> str | None:
    """``old`` (the file's text) changed to hold ``new`` (see the module docstring); the text around the value
    (a final newline) is kept. ``None`` when ``old`` cannot be edited in place: not valid JSON, more than one
    value."""
    try:
        start = _ws(old, 0)
        old_value, end = _DECODER.raw_decode(old, start)
        if _ws(old, end) != len(old):
            return None
        return old[:start] + _value(old, start, end, old_value, new, Style.of(old)) + old[end:]
    except (ValueError, IndexError):
        return None


def _value(text: str, start: int, end: int, old: object, new: object, style: Style) -> str:
    """The text for ``new`` where ``text[start:end]`` (holding ``old``) was."""
    if _same(old, new):
        return text[start:end]
    local = style
    if "\n" not in text[start:end] and not style.one_line and isinstance(old, dict | list) and old:
        local = Style(True, _separators(text[start:end]), ascii_only=style.ascii_only)  # a one-line container
    same_kind = isinstance(old, dict) and isinstance(new, dict) or isinstance(old, list) and isinstance(new, list)
    done = _container(text, start, new, local) if same_kind and old else None
    return done if done is not None else local.dump(new, _line_indent(text, start))


def _separators(one_line: str) -> tuple[str, str]:
    """The item and key separators a one-line text uses (``", "`` or ``","``, ``": "`` or ``":"``); without a
    comma, the one that matches its colon (strings inside may mislead it: this only styles what is added)."""
    colon = ": " if re.search(r":\s", one_line) else ":"
    comma = (", " if re.search(r",\s", one_line) else ",") if "," in one_line else colon.replace(":", ",")
    return comma, colon


def _container(text: str, start: int, new: dict | list, style: Style) -> str | None:
    """An object or array edited member by member; ``None`` when the new content is not the old one with
    members changed in place, removed, or added after the others (then it is written whole)."""
    items, end = _items(text, start)
    kept, added = _align(items, new)
    if not kept:
        return None
    head = text[start:items[0].start]  # "{" and the space before the first member
    tail = text[items[-1].end:end]  # the space after the last member and "}"
    gaps = [text[a.end:b.start] for a, b in zip(items, items[1:], strict=False)]  # ",\n  " between members
    gap = gaps[0] if gaps else "," + (head[1:] if "\n" in head else style.separators[0][1:])
    gap = re.sub(r"\r?\n", style.newline, gap)  # before what we add: the file's usual ending, not this line's
    base = _line_indent(text, items[0].start) if "\n" in head else _line_indent(text, start)
    out = head
    for n, (item, value) in enumerate(kept):
        if n:
            at = items.index(item)
            out += gaps[at - 1] if at else gap
        if value is _SHADOWED:  # an earlier copy of a duplicate key: no reader sees it, it stays as it is
            out += text[item.start:item.end]
            continue
        out += text[item.start:item.value_start] + _value(text, item.value_start, item.end, item.value, value, style)
    for key, value in added:
        member = style.dump(value, base)
        out += gap + (json.dumps(key, ensure_ascii=style.ascii_only) + _colon(text, items[0]) + member
                      if key is not None else member)
    return out + tail


def _colon(text: str, first: _Item) -> str:
    """The ``": "`` between a key and its value, as the object's first member writes it."""
    between = text[first.start:first.value_start]
    return between[between.rindex('"') + 1:]


_SHADOWED = object()  # what _align pairs an earlier copy of a duplicate key with: its text is kept


def _align(items: list[_Item], new: dict | list) -> tuple[list[tuple[_Item, object]], list]:
    """``(kept, added)``: the old items that stay, each with its new value, and the new ``(key, value)``s that
    go after them (kept values then added ones are ``new``); ``kept`` is empty when the new content is not in
    that shape (then it is written whole)."""
    if isinstance(new, dict):
        last = {item.key: n for n, item in enumerate(items)}  # a duplicate key's value is its last copy's
        kept = [(item, new[item.key] if last[item.key] == n else _SHADOWED)
                for n, item in enumerate(items) if item.key in new]
        added = [(k, v) for k, v in new.items() if k not in last]
        # a parsed object lists a duplicate key where it first appears
        if list(new) != list(dict.fromkeys(item.key for item, _ in kept)) + [k for k, _ in added]:
            return [], []  # reordered: written whole
        return kept, added
    if len(new) == len(items):  # element by element (a hook group whose command changed)
        return list(zip(items, new, strict=True)), []
    kept: list[tuple[_Item, object]] = []
    for item in items:  # the old elements, in order, that the new list starts with; the others go
        if len(kept) < len(new) and _same(item.value, new[len(kept)]):
            kept.append((item, new[len(kept)]))
    return kept, [(None, v) for v in new[len(kept):]]


def duplicate_keys(text: str, within: tuple[str, ...] | None = None) -> list[tuple[str, int]]:
    """``(where, how many times)`` for each key ``text`` (valid JSON) has more than once in one object;
    ``where`` is the key's path (``hooks.Stop``, ``hooks.Stop[0].matcher``). The copies a later one hides are
    not looked into. With ``within`` (top-level keys of an object), only those keys and what is under them
    (a large ``~/.claude.json`` is not taken apart for the one key an install edits)."""
    if within is not None:
        start = _ws(text, 0)
        if text[start:start + 1] != "{":
            return []
        items = [item for item in _items(text, start)[0] if item.key in within]
        last = {item.key: item for item in items}
        return ([(key, times) for key in last if (times := sum(item.key == key for item in items)) > 1]
                + [(f"{key}{'' if where.startswith('[') else '.'}{where}", times) for key, item in last.items()
                   for where, times in duplicate_keys(text[item.value_start:item.end])])
    found: list[tuple[str, int]] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        value = _Pairs(items)
        counts: dict[str, int] = {}
        for key, _ in items:
            counts[key] = counts.get(key, 0) + 1
        value.repeated = {k: n for k, n in counts.items() if n > 1}
        return value

    def walk(value: object, where: str) -> None:
        if isinstance(value, _Pairs):
            for key, times in value.repeated.items():
                found.append((f"{where}.{key}" if where else key, times))
            for key, item in value.items():
                walk(item, f"{where}.{key}" if where else key)
        elif isinstance(value, list):
            for n, item in enumerate(value):
                walk(item, f"{where}[{n}]")

    walk(json.loads(text, object_pairs_hook=pairs), "")
    return found


class _Pairs(dict):
    repeated: dict[str, int]
