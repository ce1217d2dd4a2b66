"""The labelled corpus: every hostile line yields its ids, every benign line yields nothing.

``hostile.jsonl`` / ``benign.jsonl`` hold every family; ``image_beacons_*.jsonl`` (issue 9, item 2) hold image
beacons and the image notes they must not be confused with, each row labelled with its shape (``family``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_memory.safety import check_write, scan_secrets, scan_threats
from pi_memory.safety._threat_patterns import HTML_COMMENT_ID
from pi_memory.safety._threat_patterns import PATTERNS as THREAT_PATTERNS
from pi_memory.safety.secrets import PATTERNS as SECRET_PATTERNS

CORPUS = Path(__file__).parent / "corpus"


def _load(name: str) -> list[dict]:
    with (CORPUS / name).open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


BEACONS_HOSTILE = _load("image_beacons_hostile.jsonl")
BEACONS_BENIGN = _load("image_beacons_benign.jsonl")
HOSTILE = _load("hostile.jsonl") + BEACONS_HOSTILE
BENIGN = _load("benign.jsonl") + BEACONS_BENIGN


def _found(text: str) -> set[str]:
    return {f.id for f in scan_threats(text)} | {f.id for f in scan_secrets(text)}


def test_corpus_size():
    assert len(HOSTILE) >= 150
    assert len(BENIGN) >= 150


def test_hostile_corpus_covers_every_id_and_variant():
    expected = {i for row in HOSTILE for i in row["expect"]}
    all_ids = {p.id for p in THREAT_PATTERNS} | {HTML_COMMENT_ID} | {p.id for p in SECRET_PATTERNS}
    assert all_ids <= expected
    invisible = {i for i in expected if i.startswith("invisible_unicode_U+")}
    assert len(invisible) >= 18
    texts = [row["text"] for row in HOSTILE]
    assert sum(t.startswith("[BLOCKED:") for t in texts) >= 40
    assert sum(any("\uff01" <= c <= "\uff5e" for c in t) for t in texts) >= 30  # full-width
    assert sum(len(t) > 1000 for t in texts) >= 40  # embedded in a long text


def test_image_beacon_corpus_covers_every_shape():
    hostile = {}
    for row in BEACONS_HOSTILE:
        hostile[row["family"]] = hostile.get(row["family"], 0) + 1
    assert set(hostile) == {"inline", "reference", "html", "css", "slot", "prose", "obfuscated", "long",
                            "blocked-prefix"}
    assert min(hostile.values()) >= 4 and len(BEACONS_HOSTILE) >= 180
    benign = {row["family"] for row in BEACONS_BENIGN}
    assert benign == {"relative-or-screenshot", "badge", "image-service", "local", "template-code",
                      "docs-about-images", "prose-with-image-words", "links-and-queries", "html-and-css"}
    assert len(BEACONS_BENIGN) >= 150
    texts = [row["text"] for row in BEACONS_HOSTILE]
    for shape in ("{", "${", "<contents", "$(cat .env)", "%7B", "![", "<img", "]: ", "url("):
        assert any(shape in t for t in texts), shape
    assert len(set(texts)) == len(texts)


@pytest.mark.parametrize("row", HOSTILE, ids=[f"hostile{i}" for i in range(len(HOSTILE))])
def test_hostile_line_yields_expected_ids(row):
    found = _found(row["text"])
    assert set(row["expect"]) <= found, (row["expect"], sorted(found))
    assert check_write(row["text"]) is not None


@pytest.mark.parametrize("row", BENIGN, ids=[f"benign{i}" for i in range(len(BENIGN))])
def test_benign_line_yields_nothing(row):
    assert scan_threats(row["text"]) == []
    assert scan_secrets(row["text"]) == []
