"""Helpers shared by the threat-scanner tests (``test_threats*``)."""

from __future__ import annotations

from pi_memory.safety import (
    scan_threats,
)

ZWNJ, ZWJ = "\u200c", "\u200d"


def ids(text: str) -> list[str]:
    return [f.id for f in scan_threats(text)]


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else ("\u3000" if c == " " else c) for c in text)
