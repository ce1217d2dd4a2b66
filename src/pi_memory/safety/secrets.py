"""Secret detection and redaction for text about to be stored or handed to another service.

Shapes
------
* ``scan_secrets(text) -> list[Finding]`` — one ``Finding(id, "secret", span)`` per id (first occurrence),
  ordered by position. ``span`` covers the secret *value* only (not the ``password:`` label).
* ``redact(text) -> str`` — every secret value replaced by ``[REDACTED:<id>]``; the words around it stay.

Ids (ours; the formats are the vendors' public token formats):

=======================  =============================================================================
id                       detects
=======================  =============================================================================
private_key_block        ``-----BEGIN … PRIVATE KEY-----`` (the whole block up to its END line)
anthropic_api_key        ``sk-ant-…`` (20+ chars)
openai_api_key           ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…`` (20+ chars with letters and digits)
github_token             ``ghp_/gho_/ghu_/ghs_/ghr_`` + 30+ chars, ``github_pat_`` + 22+ chars
aws_access_key_id        ``AKIA``/``ASIA`` + 16 upper-case letters or digits
aws_secret_access_key    ``aws_secret_access_key = <40 chars>`` (assignment form)
google_api_key           ``AIza`` + 35 chars
slack_token              ``xoxb-/xoxp-/xoxa-/xoxr-/xoxs-/xapp-`` + 10+ chars
stripe_key               ``sk_live_/rk_live_/sk_test_/rk_test_`` + 16+ chars (publishable ``pk_`` keys are not secret)
jwt                      three base64url segments, the first starting ``eyJ``
bearer_token             ``Bearer <20+ token chars with a digit>`` (e.g. an Authorization header)
password_in_prose        ``password: x``, ``Password for Test WebUI: x``, ``pw = "x"``, ``the password is x``
                         (6+ chars; not "forgot my password", "password policy", "password: required")
secret_assignment        ``api_key/secret/token/… = <16+ chars, letters and digits, entropy ≥ 3 bits/char>``
=======================  =============================================================================

Only values count: an environment variable *name* (``OPENAI_API_KEY``) is where a secret lives, not a secret.
When two patterns cover the same text, the earlier row of the table wins (so ``OPENAI_API_KEY=sk-proj-…``
reports ``openai_api_key``, not ``secret_assignment``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .threats import Finding

SECRET = "secret"

_TRAILING = ".,;:)]}>"  # sentence punctuation trimmed from an unquoted value ("!" and "?" are kept)


@dataclass(frozen=True)
class _SecretPattern:
    id: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]  # prefilter, matched against the lower-cased text
    group: str | int = 0  # the group holding the secret value
    validate: Callable[[re.Match[str], str], tuple[int, int] | None] | None = None


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


_NOT_A_PASSWORD = frozenset({
    "required", "optional", "hidden", "masked", "redacted", "unknown", "none", "null", "empty", "prompt",
    "stored", "managed", "rotated", "reset", "expired", "policy", "length", "manager", "field", "protected",
    "encrypted", "provided", "missing", "invalid", "incorrect", "changed", "wrong",
})
# A value that is code, not a password: a call or index ("getpass(", "cfg["), a dotted reference
# ("settings.db_password"), or a CONSTANT name ("DB_PASSWORD", "PASSWORD").
_CODE_REF = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[A-Z_]+$")


def _password_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    key_start = m.start("key")
    key = m.group("key")
    # "PGPASSWORD" is an env var; "1Password" or "xpassword" is not a password label.
    if key_start > 0 and text[key_start - 1].isalnum() and not key.isupper():
        return None
    quoted = m.group("q") is not None
    group = "q" if quoted else "v"
    start, end = m.span(group)
    value = text[start:end]
    if not quoted:
        stripped = value.rstrip(_TRAILING)
        end -= len(value) - len(stripped)
        value = stripped
    if len(value) < 6 or value[0] in "$<{%*[(/~" or value.startswith(("./", "os.", "process.env")):
        return None
    if value.lower() in _NOT_A_PASSWORD or set(value) <= set("*x•.") or _CODE_REF.match(value):
        return None
    plain_word = value.isalpha() and value.islower()
    if m.group("is") and not quoted and plain_word:
        return None  # "the password is managed by IT" is prose, "the password is Summer2024!" is not
    if plain_word and not quoted and re.match(r"[ \t]+[a-z]", text[end : end + 2]):
        return None  # the sentence goes on: "password: stored in the keychain"
    return (start, end)


def _assignment_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span("v")
    value = text[start:end].rstrip(".")
    if len(value) < 16 or value.lower().startswith(("http", "www.", "os.", "process.")):
        return None
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    if not (has_letter and has_digit) or _entropy(value) < 3.0:
        return None
    return (start, start + len(value))


def _key_block(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The whole block when its END line follows (within 20,000 chars), else the header's line."""
    if m.group("body") is not None:
        return m.span()
    line_end = text.find("\n", m.end())
    return (m.start(), len(text) if line_end == -1 else line_end)


def _digit_required(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span(1)
    return (start, end) if any(c.isdigit() for c in text[start:end]) else None


def _sp(id_: str, pattern: str, *keywords: str, flags: int = 0, group: str | int = 0, validate=None):
    return _SecretPattern(id_, re.compile(pattern, flags), keywords, group, validate)


_I = re.IGNORECASE

# Literal-first patterns ("sk-(?<![\w-]sk-)…") check the word boundary *after* the prefix so that the
# regex engine can jump between prefix hits instead of trying every position.
PATTERNS: tuple[_SecretPattern, ...] = (
    _sp("private_key_block",
        r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?P<body>(?:(?!-----(?:BEGIN|END))[\s\S])"
        r"{0,20000}-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----)?",
        "private key", flags=_I, validate=_key_block),
    _sp("anthropic_api_key", r"sk-ant-(?<![\w-]sk-ant-)[A-Za-z0-9_-]{20,}", "sk-ant-"),
    _sp("openai_api_key",
        r"sk-(?<![\w-]sk-)(?!ant-)(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]{0,200}?\d)"
        r"(?=[A-Za-z0-9_-]{0,200}?[A-Za-z])[A-Za-z0-9_-]{20,}",
        "sk-"),
    _sp("github_token",
        r"(?:gh[pousr]_(?<![A-Za-z0-9_]gh._)[A-Za-z0-9]{30,}"
        r"|github_pat_(?<![A-Za-z0-9_]github_pat_)[A-Za-z0-9_]{22,})",
        "gh", "github_pat_"),
    _sp("aws_access_key_id", r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])", "akia", "asia"),
    _sp("aws_secret_access_key",
        r"aws_?secret_?access_?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        "secret", flags=_I, group=1),
    _sp("google_api_key", r"AIza(?<![\w-]AIza)[0-9A-Za-z_-]{35}(?![\w-])", "aiza"),
    _sp("slack_token", r"(?<![\w-])x(?:ox[abprs]|app)-[A-Za-z0-9-]{10,}", "xox", "xapp-"),
    _sp("stripe_key", r"(?<![\w-])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "_live_", "_test_"),
    _sp("jwt", r"eyJ(?<![\w-]eyJ)[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}", "eyj"),
    _sp("bearer_token", r"\bBearer[ \t]+([A-Za-z0-9._~+/=-]{20,})", "bearer",
        flags=_I, group=1, validate=_digit_required),
    _sp("password_in_prose",
        r"(?P<key>password|passwd|passphrase|passcode|pwd|pw)(?![A-Za-z0-9])"
        r"(?:[ \t]+(?:for|of|on|at|to)[ \t]+[^:=\n\"]{1,40}?)?[\"']?"
        r"(?:[ \t]*[:=][ \t]*|[ \t]+(?P<is>is|was)[ \t]+)"
        r"(?:([\"'`])(?P<q>[^\"'`\n]{6,200}?)\3|(?P<v>[^\s\"'`,;]{6,200}))",
        "pass", "pw", flags=_I, validate=_password_value),
    _sp("secret_assignment",
        r"(?<![A-Za-z0-9])(?:api[_-]?key|apikey|secret(?:[_-]?key)?"
        r"|client[_-]?secret|access[_-]?key|private[_-]?key|signing[_-]?key|(?:access|auth|api|bearer|refresh"
        r"|session|bot|id)?[_-]?token)(?:[_.-][A-Za-z0-9]{1,24}){0,2}[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<v>[A-Za-z0-9_\-+/=.~]{16,400})",
        "key", "secret", "token", flags=_I, validate=_assignment_value),
)


def _matches(text: str) -> list[tuple[int, int, int, str]]:
    """All accepted (start, end, priority, id) value spans, overlaps resolved by table order."""
    lowered = text.lower()
    taken: list[tuple[int, int, int, str]] = []  # kept sorted and non-overlapping
    for prio, pat in enumerate(PATTERNS):
        if not any(k in lowered for k in pat.keywords):
            continue
        for m in pat.regex.finditer(text):
            span = pat.validate(m, text) if pat.validate else m.span(pat.group)
            if span is None or span[0] == span[1]:
                continue
            i = bisect_left(taken, (span[0],))
            if (i > 0 and taken[i - 1][1] > span[0]) or (i < len(taken) and taken[i][0] < span[1]):
                continue
            taken.insert(i, (span[0], span[1], prio, pat.id))
    return taken


def scan_secrets(text: str) -> list[Finding]:
    """Return one ``Finding`` per secret id found in ``text`` (first occurrence), ordered by position."""
    if not text:
        return []
    seen: dict[str, Finding] = {}
    for start, end, _prio, ident in _matches(text):
        seen.setdefault(ident, Finding(ident, SECRET, (start, end)))
    return list(seen.values())


def redact(text: str) -> str:
    """Replace every secret value in ``text`` with ``[REDACTED:<id>]``, keeping the words around it."""
    if not text:
        return text
    out: list[str] = []
    pos = 0
    for start, end, _prio, ident in _matches(text):
        out.append(text[pos:start])
        out.append(f"[REDACTED:{ident}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)
