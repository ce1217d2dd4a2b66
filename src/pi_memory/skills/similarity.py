"""The similarity guard that keeps an agent from saving the same procedure twice under two names.

Tokeniser (:func:`tokens`): the text is NFKC-folded and lowercased; a token is a run of letters or digits
(``\\w`` without ``_``, so ``debug_ts`` and ``debug-ts`` both give ``debug``, ``ts``; CJK and accented letters
count as letters); tokens of one character and the stop-words below are dropped, and a trailing plural ``s``
of a token longer than three characters is removed (``errors`` = ``error``, ``tests`` = ``test``; ``less``
and ``class`` keep theirs because ``ss`` is left alone). The stop-words are the filler a skill name is padded
with (``how``, ``to``, ``workflow``, ``procedure``, ``guide``, ``skill``...), so "how to deploy staging" and
"deploy-staging-workflow" are the same name.

Thresholds (the peer's, curated-memory-anchors §2.11): two skills whose names' token sets have a Jaccard index
above ``NAME_THRESHOLD`` (0.7) are the same *name*; if their descriptions are also above
``DESCRIPTION_THRESHOLD`` (0.75) the new one is ``similar`` (improve the existing skill instead), otherwise it
is a ``name-collision`` (choose a clearer, distinct name).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

NAME_THRESHOLD = 0.7
DESCRIPTION_THRESHOLD = 0.75

_STOP = (
    "a an the and or of for to in on with by from at as is are be it this that these those my our your "
    "how use using used when what which do does doing done "
    "workflow workflows procedure procedures process step steps guide guides skill skills "
    "repo repository project tip tips way ways checklist"
)
STOP_WORDS = frozenset(_STOP.split())
_TOKEN = re.compile(r"[^\W_]+")


def _stem(token: str) -> str:
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def tokens(text: str) -> frozenset[str]:
    """The token set of ``text`` (see the module docstring)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return frozenset(
        _stem(t) for t in _TOKEN.findall(folded) if len(t) > 1 and t not in STOP_WORDS
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """``|a ∩ b| / |a ∪ b|``; two empty sets score 0 (nothing in common to speak of)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


@dataclass(frozen=True)
class Clash:
    """An existing skill too close to a new one: ``kind`` is ``"similar"`` or ``"name-collision"``."""

    kind: str
    skill_id: str
    name_score: float
    description_score: float


def find_clash(name: str, description: str, existing: list[tuple[str, str, str]]) -> Clash | None:
    """The first of ``existing`` (``(skill_id, name, description)``) that clashes with the new skill, the one
    with the highest name score first; ``None`` when none does."""
    new_name, new_desc = tokens(name), tokens(description)
    best: Clash | None = None
    for skill_id, other_name, other_desc in existing:
        name_score = jaccard(new_name, tokens(other_name))
        if name_score <= NAME_THRESHOLD:
            continue
        desc_score = jaccard(new_desc, tokens(other_desc))
        kind = "similar" if desc_score > DESCRIPTION_THRESHOLD else "name-collision"
        clash = Clash(kind, skill_id, round(name_score, 3), round(desc_score, 3))
        if best is None or clash.name_score > best.name_score:
            best = clash
    return best
