"""``redact`` gives exactly what the plain reading of the scanner gives, on the test corpora and on generated text
(secrets in config files inside JSON strings quoted one to four times, ``\\uXXXX`` escapes, CRLF, stray backslashes,
stretches of prose that put escapes near and far from the secrets).

The reference here is the scanner without its shortcuts: every row's regex over the whole text (no hint, anchor
or reach), the escapes decoded by the first version of ``_escapes`` (kept below), folding one character at a
time. With ``PI_MEMORY_REFERENCE_SRC`` set to another checkout's ``src`` folder, the same inputs are also redacted
by that checkout's code in a subprocess and must come out the same (how a change of the scanner's speed is
checked against the code before it)."""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from bisect import bisect_left
from pathlib import Path

import pytest

from pi_memory.safety import redact
from pi_memory.safety import secrets as S
from pi_memory.safety._escapes import merge_spans, view_spans
from pi_memory.safety._text import _fold_char, fold

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


# ---- the reference: the first version of the escape views, and every row over the whole text -------------------
class _View:
    def __init__(self, text: str, at: list[int], shift: list[int]) -> None:
        self.text, self._at, self._shift = text, at, shift

    def windows(self, reach: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for at in self._at:
            start, end = max(0, at - reach), min(len(self.text), at + reach + 1)
            if out and start <= out[-1][1]:
                out[-1] = (out[-1][0], end)
            else:
                out.append((start, end))
        return out

    def outer(self, offset: int) -> int:
        k = bisect_left(self._at, offset)
        return offset + (self._shift[k - 1] if k else 0)


_SIMPLE = {'"': '"', "'": "'", "\\": "\\", "/": "/", "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def _unescape(text: str) -> _View | None:
    import re

    escape = re.compile(r"\\(?:u(?P<hi>[dD][89abAB][0-9a-fA-F]{2})\\u(?P<lo>[dD][c-fC-F][0-9a-fA-F]{2})"
                        r"|u(?P<u>[0-9a-fA-F]{4})|(?P<c>[\"'\\/nrtbf]))")
    parts, at, shift = [], [], []
    pos = out = saved = 0
    for m in escape.finditer(text):
        parts.append(text[pos : m.start()])
        out += m.start() - pos
        if m.group("c") is not None:
            ch = _SIMPLE[m.group("c")]
        elif m.group("u") is not None:
            ch = chr(int(m.group("u"), 16))
        else:
            ch = chr(0x10000 + ((int(m.group("hi"), 16) - 0xD800) << 10) + int(m.group("lo"), 16) - 0xDC00)
        parts.append(ch)
        saved += m.end() - m.start() - 1
        at.append(out)
        shift.append(saved)
        out += 1
        pos = m.end()
    if not at:
        return None
    parts.append(text[pos:])
    return _View("".join(parts), at, shift)


def _plain(text: str) -> list[tuple[int, int, int, str]]:
    norm = fold(text)
    out: list[tuple[int, int, int, str]] = []
    for start, end, prio, ident in S._folded_matches(norm.text, anchored=False):
        raw_start, raw_end = norm.raw_span(start, end)
        if not out or raw_start >= out[-1][1]:
            out.append((raw_start, raw_end, prio, ident))
    return out


def reference_redact(text: str) -> str:
    if not text:
        return text
    taken = _plain(text)
    if "\\" in text:
        levels, chain, current = [], [], text
        for _ in range(3):
            view = _unescape(current)
            if view is None:
                break
            chain = [*chain, view]
            levels.append((view.text, chain))
            current = view.text
        if levels:
            plain, taken = taken, []
            for decoded, views in reversed(levels):
                merge_spans(taken, view_spans(decoded, views, _plain), text)
            merge_spans(taken, plain, text)
    out, pos = [], 0
    for start, end, _prio, ident in taken:
        out.append(text[pos:start])
        out.append(f"[REDACTED:{ident}]")
        pos = end
    return "".join(out) + text[pos:]


# ---- the inputs --------------------------------------------------------------------------------------------------
def _corpus() -> list[str]:
    return [json.loads(line)["text"] for f in sorted((HERE / "corpus").glob("*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


def _fixture_strings() -> list[str]:
    """The string literals of the secret tests (their credentials and the texts around them)."""
    out: list[str] = []
    for path in sorted(HERE.glob("test_secret*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) >= 6:
                out.append(node.value)
    return sorted(set(out))


VALUES = ["hunter2-very-secret-pw", "q8Zr2LmN4vB7xK1pT9wE3yU6", "Tq7wV2xM9pL4", "Kf93!xQ2zP", "P@ss w0rd",
          "sk-proj-Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya", "ghp_R7kQ2mZ9xL4vT8nW3pB6cH1jD5fG0sYaEe",
          "AKIAQ7KZ2M4N6P8R3T5V", "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm/K7+",
          "xoxb-2048-4096-Qm4Tz8Lp2Vx7Nc3R", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "glpat-Xq7Lm2Zp9Vt4Rk8Wn3Bc",
          "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r",
          "123456789:AAHn3Zq7Lm2Xp9Vt4Rk8Wn3Bc5Df6Gh7Jk", "4111 1111 1111 1111", "${DB_PASSWORD}", "changeme",
          "ZmFrZXVzZXI6RmFrZVBhc3MwMDAw", "required", "C:\\new\\temp", "Fake\\nPass99", "пароль123Q", "密码Xy12"]
LABELS = ["password", "passwd", "api_key", "apiKey", "token", "secret", "client_secret", "auth", "pw", "pass",
          "aws_secret_access_key", "Passwort", "пароль", "note", "db_password", "refresh_token", "AccountKey"]
NOISE = ["C:\\new\\table\\x.txt", "\\bword\\b", "\\\\server\\share", "a \\ b", "\\q", "\\u00", "\\uD83D",
         "\\ud83d\\ude00", "\\\\n", "é", "…", "😀", "\r\n", "\t", '"', "'", "=", ": ", "\n"]


def _config(rnd: random.Random) -> str:
    fields = [(rnd.choice(LABELS), rnd.choice(VALUES)) for _ in range(rnd.randint(1, 4))]
    kind = rnd.randrange(9)
    if kind == 0:
        return json.dumps(dict(fields), indent=rnd.choice([None, 2]), ensure_ascii=rnd.random() < 0.5)
    if kind == 1:
        return "db:\n" + "".join(f"  {k}: {v}\n" for k, v in fields)
    if kind == 2:
        return "[auth]\n" + "".join(f"{k} = {v}\n" for k, v in fields)
    if kind == 3:
        attribute = '<add key="ApiKey" value="q8Zr2LmN4vB7xK1pT9wE3yU6"/>'
        return "".join(f"<{k}>{v}</{k}>\n" for k, v in fields) + attribute
    if kind == 4:
        return f"machine api.example.com login bob password {fields[0][1]}\nmysql -u root -p{fields[0][1]} db"
    if kind == 5:
        return f"db.example.com:5432:app:bob:{fields[0][1]}\ncurl -u bob:{fields[0][1]} https://x.example"
    if kind == 6:
        return f"Authorization: Bearer {fields[0][1]}\n--api-token {fields[-1][1]}\npostgres://u:{fields[0][1]}@h/db"
    if kind == 7:
        return "-----BEGIN RSA PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAx7Lm2Zp9Vt4Rk8Wn3Bc5Df6Gh7Jk\n" * 3 \
            + "-----END RSA PRIVATE KEY-----\n"
    return " ".join(f"the {k} is {v}" for k, v in fields)


def _wrapped(rnd: random.Random, words: list[str]) -> str:
    body = _config(rnd)
    if rnd.random() < 0.3:
        body = body.replace("\n", "\r\n")
    if rnd.random() < 0.3:
        body = rnd.choice(NOISE) + body + rnd.choice(NOISE)
    for _ in range(rnd.choice([1, 1, 1, 2, 2, 3, 4])):  # quoted once to four times (three levels are read)
        args = {"path": rnd.choice(["cfg.json", "C:\\new\\cfg.ini", "a/b.yml"]), "content": body}
        body = json.dumps(args, ensure_ascii=rnd.random() < 0.5, separators=rnd.choice([(",", ":"), (", ", ": ")]))
        if rnd.random() < 0.3:
            body = f"write: {body}"
    pad = lambda n: " ".join(rnd.choice(words) for _ in range(n))  # noqa: E731
    return pad(rnd.choice([0, 5, 40, 40, 350])) + body + pad(rnd.choice([0, 5, 40, 40, 350]))


def _fragments(rnd: random.Random) -> str:
    """Short random strings of labels, separators, escapes and values: edges of the escape reading."""
    parts = LABELS + VALUES + NOISE + ['\\"', "\\n", "\\t", "\\\\", "\\u0070", "\\/", "://", "@", " is ", "-p "]
    parts += ["\\u0073k-", "s\\u00e9cret", "pa\\u200bssword", "\\u0041KIA", "\\uff50ass", '\\"auth\\"', "\\u003a//"]
    return "".join(rnd.choice(parts) for _ in range(rnd.randint(1, 25)))


def _long(rnd: random.Random, words: list[str]) -> str:
    """A few thousand characters with escapes far apart: the decoded reading is cut into stretches."""
    pieces = []
    for _ in range(rnd.randint(3, 8)):
        pieces.append(" ".join(rnd.choice(words) for _ in range(rnd.randint(50, 700))))
        pieces.append(rnd.choice([_wrapped(rnd, words), rnd.choice(NOISE), f"password: {rnd.choice(VALUES)}"]))
    return " ".join(pieces)


def inputs() -> list[str]:
    rnd = random.Random(11)
    words = (ROOT / "README.md").read_text(encoding="utf-8").split()[:4000]
    out = _corpus() + _fixture_strings()
    out += [_wrapped(rnd, words) for _ in range(450)]
    out += [_fragments(rnd) for _ in range(800)]
    out += [_long(rnd, words) for _ in range(12)]
    return out


INPUTS = inputs()


def test_redact_gives_what_the_plain_reading_gives():
    escaped_secrets = 0
    for text in INPUTS:
        expected = reference_redact(text)
        assert redact(text) == expected, text
        escaped_secrets += "\\" in text and "[REDACTED:" in expected
    assert escaped_secrets > 500  # the inputs do hold secrets in escaped text


ROW_SAMPLES = [
    "| host | pw |\n|---|:--:|\n| db | Xk29!fpQ7zz |", "        |  ---- | --- |\n| a | b |", "token\n---|---\nci|3f9a8b7c6d5e4f3a2b1c",
    "Password:\n\n  Xk29!fpQ7zz\n", "API key :\n`4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA`", "pw: toor)", "pass=abcd&",
    "the unseal key is 4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA==", "Cookie: sid=Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1Jf6Gs0Ya",
    "aws_secret_access_key = Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm/K7+",
    "AWSSecretAccessKey: 'Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm/K7+'",
    "https://hooks.slack.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX",
    "https://" + "a" * 63 + ".webhook.office.com/webhookb2/" + "x" * 30,
    "HTTPS://Ab-1.WEBHOOK.office.com/webhookb2/" + "y" * 25,
    "https://canary.discord.com/api/webhooks/123456789/abcdefghijklmnopqrstuvwxyz",
    "bot123456789:AAHn3Zq7Lm2Xp9Vt4Rk8Wn3Bc5Df6Gh7Jk", "telegram 1234567:Hn3Zq7Lm2Xp9Vt4Rk8Wn3Bc5Df6Gh7JkQ",
    "bot1234567:AAHn3Zq7Lm2Xp9Vt4Rk8Wn3Bc5Df6H",
    "MTEyMjMzNDQ1NTY2Nzc4ODk5.GFakeX.Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm",
    "machine api.example.com login bob password hunter22", "default login x password y1234z",
    "Authorization: Basic ZmFrZXVzZXI6RmFrZVBhc3MwMDAw", "BASIC ZmFrZXVzZXI6RmFrZVBhc3MwMDAw",
    "<DbPassword >hunter2-pw</dbpassword>", "<ns:apiKey a='1'>q8Zr2LmN4vB7xK1pT9wE3yU6</ns:APIKEY >",
    '<add key="ApiKey" VALUE = "q8Zr2LmN4vB7xK1pT9wE3yU6"/>', "<property name='password' value='hunter2-pw'/>",
    "SK0123456789abcdef0123456789abcdef", "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm/K7+", "Amazon", "AWS", "SECRET",
    "4111 1111 1111 1111", "db.example.com:5432:app:bob:pw9", "Bearer Qm4Tz8Lp2Vx7Nc3Rb9Wk5Hd1", "://u:pw1234@h",
]


def test_each_rows_shortcut_finds_what_its_regex_over_the_whole_text_finds():
    """Hints, anchors and reaches (``_secret_search``) on the rows' own shapes, cut and glued at random, with the
    words the AWS row looks for at every distance from a value."""
    from pi_memory.safety._secret_search import matches

    rnd = random.Random(5)
    glue = [" ", "", "\n", "\n", ": ", "x", "-", "'", "é", "secret ", " aws", "AMAZON"]
    texts = ["".join(rnd.choice(ROW_SAMPLES + glue) for _ in range(rnd.randint(1, 6))) for _ in range(1500)]
    texts += [rnd.choice(ROW_SAMPLES)[rnd.randrange(30):] for _ in range(200)]
    value = "Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm/K7+"
    texts += [f"{'x ' * 70}aws{' ' * d}{value}{' ' * e}SECRET"
              for d in range(0, 90, 3) for e in (0, 1, 2, 38, 40, 41)]
    texts += [f"{value}{' ' * d}amazon" for d in range(0, 50)] + [f"Secret{' ' * d}{value}." for d in range(70, 90)]
    for text in texts:
        lowered = text.lower()
        for row in S.PATTERNS:
            def accepted(found, row=row, text=text):
                spans = (row.validate(m, text) if row.validate else m.span(row.group) for m in found)
                return [span for span in spans if span]

            assert accepted(matches(row, text, lowered)) == accepted(row.regex.finditer(text)), (row.id, text)


def test_what_an_escaped_text_lacks_its_decoded_text_lacks_too():
    """``still_missing``: the keywords the redaction does not look for again in a decoded text are not in it."""
    from pi_memory.safety._escapes import still_missing, views

    words = {w for row in S.PATTERNS for w in row.keywords}
    claimed = 0
    for text in INPUTS[::4]:
        missing = frozenset(w for w in words if w not in fold(text).text.lower())
        for decoded, chain in views(text):
            missing = still_missing(missing, chain[-1])
            lowered = fold(decoded).text.lower()
            assert not [w for w in missing if w in lowered], text
            claimed += len(missing)
    assert claimed > 10_000


def test_no_folded_character_reads_as_an_ascii_letter_case_blind_but_the_letter():
    """What lets a case-blind row find its keywords with ``str.find`` in the lower-cased folded text: Python's
    case-blind regex also reads ``ſ`` as ``s``, the Kelvin sign as ``k`` and ``İ``/``ı`` as ``i``."""
    import re

    letter = re.compile("[a-z]", re.IGNORECASE)
    for ch in "\u017f\u212a\u0130\u0131\u212b\u00b5\u03bc\ufb05\ufb06":
        assert all(c.isascii() or not letter.fullmatch(c) for c in _fold_char(ch)), ch
        assert all(c.isascii() or not letter.fullmatch(c) for c in _fold_char(ch).lower()), ch


def test_folding_is_one_character_at_a_time():
    texts = INPUTS[:: 7] + ["x" * 300 + "é" + "y" * 600 + "ｐａｓｓ" + "\u00ad" * 3, "пароль " * 100]
    for text in texts:
        assert fold(text).text == "".join(map(_fold_char, text)), text


@pytest.mark.skipif(not os.environ.get("PI_MEMORY_REFERENCE_SRC"), reason="PI_MEMORY_REFERENCE_SRC not set")
def test_redact_gives_what_the_reference_checkout_gives():
    code = ("import json, sys\nfrom pi_memory.safety import redact\n"
            "print(json.dumps([redact(t) for t in json.load(sys.stdin)]))")
    env = {**os.environ, "PYTHONPATH": os.environ["PI_MEMORY_REFERENCE_SRC"]}
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(INPUTS), capture_output=True, text=True,
                          env=env, check=True)
    for text, expected in zip(INPUTS, json.loads(done.stdout), strict=True):
        assert redact(text) == expected, text

