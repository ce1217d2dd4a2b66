"""``secret_spans`` (every credential's raw span, all occurrences) and the keyword-anchored search behind it,
which must find exactly what trying the patterns at every position finds."""

from __future__ import annotations

import json
import random
from pathlib import Path

from pi_memory.safety import SecretSpan, redact, secret_spans
from pi_memory.safety import secrets as S

CORPUS = Path(__file__).resolve().parent / "corpus"
KEY = "sk-proj-Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya"


def _every_position(text: str) -> list[tuple]:
    """The scanner without its anchoring and hints: each pattern's ``finditer`` over the whole text."""
    return S._folded_matches(text, anchored=False)


def test_every_occurrence_is_reported_with_its_raw_span() -> None:
    text = f"a={KEY} b={KEY}\npassword: Tq7wV2xM9pL4"
    spans = secret_spans(text)
    assert spans == [SecretSpan(2, 2 + len(KEY), "openai_api_key"),
                     SecretSpan(len(KEY) + 5, 2 * len(KEY) + 5, "openai_api_key"),
                     SecretSpan(text.index("Tq7"), len(text), "password_in_prose")]
    assert secret_spans("") == [] and secret_spans("nothing here") == []
    assert redact(redact(text)) == redact(text)  # a redacted text has nothing left to redact


def test_the_anchored_search_finds_what_every_position_finds() -> None:
    texts = [json.loads(line)["text"] for f in sorted(CORPUS.glob("*.jsonl")) for line in f.read_text().splitlines()]
    rnd = random.Random(3)
    words = ["api_key=", "token:", "Bearer", "bearer", "sk", "SK", "password", "pw=", "pass=", "://u:pw12@h",
             "refresh_token=", "the", "API", "token", "is", "A1b2C3d4E5f6G7h8I9j0", "Zq7Lm2Xp9Vt4Rk8Wn3Bc", "=",
             "SK3f9a7c2e5b8d1f4a6c0e9b2d7f5a3c8e", "client-secret:", "İstanbul", "4242 4242 4242 4242", "\n"]
    texts += [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 40))) for _ in range(1500)]
    texts += ["".join(rnd.choice(words) for _ in range(rnd.randint(1, 20))) for _ in range(500)]
    assert sum(1 for t in texts if _every_position(t)) > 500  # the inputs do hold credentials
    for text in texts:
        assert S._folded_matches(text) == _every_position(text), text
