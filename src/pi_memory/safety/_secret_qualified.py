"""Secret rows for a credential named with a qualifier between its label and its verb (:mod:`.secrets` holds the
table): "the api token for sentry is X", "login admin:X on grafana", and the test that lets a passphrase of
words joined by hyphens count after such a qualifier. Each validator takes the match and the text and returns the
secret value's span, or ``None``.

The qualified token rule (``secret_assignment``, its qualified form)
--------------------------------------------------------------------
``the api token for sentry is 4f9c…``, ``el token de sentry es 4f9c…``, ``der API-Token für Sentry ist 4f9c…``,
``the client secret of the github app: 4f9c…``: a token, key or secret label (``token``, ``api key``, ``access
key``, ``secret`` …; plain "key" is no label, it names door keys and hashes), then a preposition and up to 30
characters ("for sentry", "de la app", "für Sentry", "du projet", "do sentry", "для sentry"), then ``:``/``=``
or a copula (is, was, ist, lautet, es, est, é, è, a dash), then a value that holds as a plain assignment does:
16+ characters with letters and digits and entropy >= 3 bits/char. Prose puts words there ("the token for the
meetup is a sticker", "the secret of success is patience"), never such a value.

The bare login rule (``credential_pair``, its bare form)
--------------------------------------------------------
``login admin:Cat-Blue-81 on grafana``, ``log in as deploy:Xk9#mP2q``: "login" or "log in" (with "as" or "with"
if written), a space, then ``user:password`` with no spaces. The password part is judged as the login pair's is
(``_secret_pairs.pair_password``: letters with a digit or a symbol, no version, port, file name or term such as
``node:18-alpine``) and nothing but the end of the word may follow it (``root:x:0:0`` is a passwd line).
"login admin on grafana" names no password and stays.

Passphrases of words and digits (``_secret_values.word_passphrase``)
--------------------------------------------------------------------
A value such as ``Gato-Azul-77`` (two or more words of 3+ letters with lower case, then 2+ digits, joined by
hyphens) reads like a term ("CVE-2023-27350", "ISO-8859-1") to the looser forms of the password rows, which skip
terms. After a qualifier and a copula (``la contraseña del wifi es Gato-Azul-77``) or in a login pair (``creds
for grafana are admin / Cat-Blue-80``) it is taken as the password when it ends the clause. Cost: a product or
code name of that shape said to be a password after a qualifier is replaced too.
"""

from __future__ import annotations

import re

from ._secret_pairs import pair_password
from ._secret_values import _TRAILING, _in_marker, _placeholder, assignment_like
from ._text import fold


def _folded(*words: str) -> str:
    """``words`` as a regex alternation in their folded spelling, spaces matching spaces or tabs."""
    return "|".join(re.escape(fold(w).text).replace(r"\ ", r"[ \t]+") for w in words)


# ---- the qualified token form of secret_assignment ------------------------------------------------------
_PREPS = _folded("for", "of", "on", "at", "to", "in", "für", "von", "vom", "zum", "zur", "des", "der", "de", "del",
                 "della", "do", "da", "du", "para", "pour", "per", "от", "для")
_COPULA = _folded("is", "was", "ist", "lautet", "war", "es", "era", "est", "é", "è", "это", "—", "–")
_LABELS = (r"(?:(?:api|access|auth|bearer|refresh|session|bot|deploy|personal[ \t]+access)[ \t_-]?)?token"
           r"|(?:api|access|secret|private|signing|encryption|master)[ \t_-]?key|(?:client[ \t_-]?)?secret")
QUALIFIED_TOKEN_PATTERN = (
    rf"(?<![^\W_])(?:{_LABELS})(?![^\W_])[ \t]+(?:{_PREPS})[ \t]+[^\n:=.!?\"'`]{{1,30}}?"
    rf"(?:[ \t]*[:=][ \t]*|[ \t]+(?:{_COPULA})[ \t]*:?[ \t]+)[\"'`]?(?P<v>[A-Za-z0-9_\-+/=.~]{{16,400}})"
)
QUALIFIED_TOKEN_KEYWORDS = ("token", "key", "secret")  # the assignment row's own: no look of their own
QUALIFIED_TOKEN_ANCHOR = 16  # "personal access token": "token" 16 characters in


def qualified_token(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A token's value after its label, a qualifier and a verb (module docstring)."""
    start, end = m.span("v")
    value = text[start:end].rstrip(_TRAILING)
    if _placeholder(value) or _in_marker(text, start) or not assignment_like(value):
        return None
    return (start, start + len(value))


# ---- the bare form of credential_pair -------------------------------------------------------------------
LOGIN_PATTERN = (
    r"(?<![^\W_])(?:login|log[ \t]+in)[ \t]+(?:(?:as|with)[ \t]+)?"
    r"(?P<user>[^\s/:\"'`,;]{1,64}):(?P<v>[^\s\"'`,;:/]{1,200})(?![:/])"
)
LOGIN_KEYWORDS = ("login", "log in")
LOGIN_ANCHOR = 0


def login_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The password of ``login user:password`` when it looks like one (module docstring)."""
    if m.group("user").lower() in {"as", "with", "to", "at", "via"}:
        return None
    return pair_password(m, text)
