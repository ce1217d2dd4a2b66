"""Two secret rows that read a credential out of a sentence with no ``=`` or vendor prefix (:mod:`.secrets` holds the
table): a user name and password given as a pair after a login word, and a long random value right after a
token or key word. Each validator takes the match and the text and returns the secret value's span, or ``None``.

The login pair rule (``credential_pair``)
-----------------------------------------
``login: admin / hunter2``, ``creds are admin:Sup3rS3cret!``, ``user/pass: deploy / Xk9#mP2q``,
``Zugangsdaten: admin / Geheim123``, ``логин/пароль: admin / Qwerty123``: a login or credentials label, then
``:``/``=`` or a copula (is, are, ist, sind, son, sont, são, sono, a dash), then ``user`` and ``password`` joined
by a slash (spaces allowed around it) or by a colon (none allowed). Only the password part is replaced; the user
name stays readable. The password part must look like one:

* 5+ characters, letters with a digit or with a symbol that does not join words (``hunter2``, ``Sup3rS3cret!``,
  ``p@ss-word``); letters alone ("login: Google/GitHub", "credentials: LDAP/Kerberos") and digits alone
  ("login: admin:8080", a time "12:30:45") are not;
* not a placeholder or a default (``admin/admin``, ``user:password``, ``<user>:<pass>``), a path or URL part (it
  holds no ``/``), a file name (``config/db2.yml``), a version, a hash or protocol name, a hyphenated term
  (``SSO/OIDC-2``; words and digits such as ``Cat-Blue-80`` are a passphrase) or a short capital code
  (``SAML/OIDC2``);
* the user part holds a letter (``10:45:12`` is a time).

Cost: a numeric PIN after a login word (``login: admin / 123456``) is not caught, nor a pair written with spaces
around a colon or with no label before it.

The bare token rule (``secret_assignment``, its bare form)
----------------------------------------------------------
``use token 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for the api``, ``api key 7f3e…``, ``secret Zm9vYmFy…``, ``the HMAC key
9f86…``: a token, API key, access key, secret key, client secret or secret word, or a key named HMAC, signing,
private, encryption, master, unseal or AES, then only spaces (or a quote), then a value that is

* 32-128 hex digits with letters and digits among them (an API key, a session token), or
* 24+ base64 or base64url characters with upper case, lower case and 3+ digits and entropy >= 3.8 bits/char.

Words in that place are never that long and random, so prose keeps ("the token is refreshed hourly", "secret
sauce", "token budget 128000"); a hash named a key ("cache key 3f9a…") is not read, as plain "key" is no label.
Cost: an md5 or sha digest called a token or secret in prose is replaced too.
"""

from __future__ import annotations

import re

from ._secret_values import (
    _NOT_A_PASSWORD,
    _TRAILING,
    _WORD_PASS,
    _entropy,
    _in_marker,
    _placeholder,
    technical,
)
from ._text import fold


def _folded(*words: str) -> str:
    """``words`` as a regex alternation in their folded spelling (as :mod:`._secret_phrases` does), spaces
    matching spaces or tabs."""
    return "|".join(re.escape(fold(w).text).replace(r"\ ", r"[ \t]+") for w in words)


# ---- credential_pair ------------------------------------------------------------------------------------
_PAIR_LABELS = _folded(
    "login/password", "login/pass", "login", "credentials", "credential", "creds", "username/password",
    "user/password", "user/pass", "user:password", "user:pass", "zugangsdaten", "credenciales", "credenciais",
    "credenziali", "identifiants", "логин/пароль")
_PAIR_COPULA = _folded("is", "are", "was", "were", "ist", "sind", "lauten", "son", "sont", "são", "sono", "это",
                       "—", "–", "-")
PAIR_PATTERN = (
    rf"(?<![^\W_])(?P<key>{_PAIR_LABELS})(?![^\W_])"
    r"(?:[ \t]+(?:for|of|to|on|at|für|para|pour|per|для|от)[ \t]+[^\n:=]{1,30}?)?"
    rf"(?:[ \t]*[:=][ \t]*|[ \t]+(?:{_PAIR_COPULA})[ \t]*:?[ \t]+)"
    r"(?P<user>[^\s/:\"'`,;]{1,64})(?:[ \t]*/[ \t]*|:)(?P<v>[^\s\"'`,;]{1,200})"
)
# Every label holds one of these at most ``PAIR_ANCHOR`` characters after its start ("username/" before "pass").
# Each keyword costs a look through every text the row may run on, so there are few: "pass" and "пароль" are
# the password rows' own (looked for once a text for all of them), and rarer labels ("logon", "Anmeldedaten",
# "учётные данные") are left out.
PAIR_KEYWORDS = tuple(fold(w).text.lower() for w in ("login", "cred", "pass", "пароль", "zugangsdaten", "identifiants"))
PAIR_ANCHOR = 9
_HARD_SYMBOL = re.compile(r"[^\w\-./:']")
_TERM = re.compile(r"(?:[A-Za-z]+|\d+)(?:-(?:[A-Za-z]+|\d+))+|[A-Z0-9]{1,6}")
_FILE_NAME = re.compile(r"\.[A-Za-z]{1,5}$")
_VERSION = re.compile(r"[vV]?\d+(?:\.\d+)+(?:[-+.]\w+)*")


def pair_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The password part of a login pair when it looks like one (module docstring)."""
    if not any(c.isalpha() for c in m.group("user")):
        return None
    start, end = m.span("v")
    value = text[start:end]
    stripped = value.rstrip(_TRAILING)
    end -= len(value) - len(stripped)
    value = stripped
    if len(value) < 5 or "/" in value or _placeholder(value) or value.lower() in _NOT_A_PASSWORD:
        return None
    if technical(value) or _VERSION.fullmatch(value) or _FILE_NAME.search(value) or (
            _TERM.fullmatch(value) and not _WORD_PASS.fullmatch(value)):  # "Cat-Blue-80" is no term here
        return None
    if _in_marker(text, start) or not any(c.isalpha() for c in value):
        return None
    if not (any(c.isdigit() for c in value) or _HARD_SYMBOL.search(value)):
        return None
    return (start, end)


# ---- the bare token form of secret_assignment -----------------------------------------------------------
# The match starts at the keyword (``token``, ``key``, ``secret``), so the row is tried once a keyword
# place; "key" counts only after "api", "access", "secret", "hmac", "signing", "private", "encryption", "master",
# "unseal" or "aes" (look-behinds), as a plain "key" names hashes too.
_KEY_AFTER = ("(?:" + "|".join(rf"(?<=(?<![A-Za-z0-9]){w})" for w in (
    "api", r"api[ \t_-]", r"access[ \t_-]", r"secret[ \t_-]", r"hmac[ \t_-]", r"signing[ \t_-]", r"private[ \t_-]",
    r"encryption[ \t_-]", r"master[ \t_-]", r"unseal[ \t_-]", r"aes[ \t_-]")) + ")key")
BARE_TOKEN_PATTERN = (
    rf"(?:(?<![A-Za-z0-9])(?:token|secret)|{_KEY_AFTER})(?![\w-])"
    r"[ \t]+[\"'`]?(?P<v>[A-Za-z0-9+/_=-]{24,400})(?![\w+/=~-]|\.\w)"
)
BARE_TOKEN_KEYWORDS = ("token", "key", "secret")  # the assignment row's own: no look of their own
BARE_TOKEN_ANCHOR = 0
_HEX = re.compile(r"[0-9a-fA-F]{32,128}")
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def bare_token(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A token's value after its name and a space: long hex, or long random base64 (module docstring)."""
    start, end = m.span("v")
    value = text[start:end]
    if _placeholder(value) or _in_marker(text, start):
        return None
    if _HEX.fullmatch(value):
        return (start, end) if any(c.isdigit() for c in value) and any(c.isalpha() for c in value) else None
    digits = sum(c.isdigit() for c in value)
    if (_CONSTANT_NAME.fullmatch(value) or digits < 3 or not any(c.isupper() for c in value)
            or not any(c.islower() for c in value) or _entropy(value) < 3.8):
        return None
    return (start, end)
