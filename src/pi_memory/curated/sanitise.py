"""What a model may be shown of a stored entry.

An entry that trips the threat scanner is replaced by the blocked marker (its pattern ids plus a short
reference hash, so two blocked entries can be told apart and removed with ``memory_remove`` by quoting the
marker). Secrets are redacted. Control characters (C0/C1 but tab and newline: ``ESC[8m`` conceals text in a
terminal, a NUL cuts a string short) cannot be written with ``add``, but a hand-edited file can hold them: they
are shown as ``\\xNN`` escapes, as ``pi-memory read`` shows them, so the snapshot, every host's session start,
``preview-context`` and the tools' results never carry one raw (the text hidden behind ``ESC[8m`` is then in
plain sight, for the threat scan and for a person). The raw entry stays on disk and in the live list so a
person can read it with ``pi-memory read`` and the agent can remove it (quoting the escaped text matches).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pi_memory import safety
from pi_memory.curated.entries import printable


@lru_cache(maxsize=4096)
def sanitise_entry(filename: str, entry: str) -> str:
    """``entry`` as it may appear in a prompt or a tool result (cached: scanning is the costly part); the rule
    is :func:`pi_memory.safety.for_model`'s, with the marker of a store entry, then control characters
    escaped (:func:`pi_memory.curated.entries.printable`)."""
    return printable(safety.for_model(entry, lambda ids: safety.blocked_marker(filename, ids)))


_MARKER = re.compile(r"^\[BLOCKED: (?P<file>\S+) entry contained threat pattern\(s\): (?P<ids>[\w+, -]+?)\. .* Ref [0-9a-f]{8}\.\]$")


def is_our_marker(line: str) -> bool:
    """True only for a line that is exactly a marker :func:`sanitise_entry` produces (text after the ids is
    compared with the template, so a forged ``[BLOCKED: ...`` line carrying other text is not skipped)."""
    m = _MARKER.match(line)
    if not m:
        return False
    ids = [i.strip() for i in m.group("ids").split(",")]
    expected = safety.blocked_marker(m.group("file"), ids)[:-1]
    return line.startswith(expected + " Ref ") and len(line) == len(expected) + len(" Ref 12345678.]")
