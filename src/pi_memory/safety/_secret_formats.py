"""Patterns and validators of the secret rows learnt after a tester's report of credentials that came back from
``redact()`` unchanged (:mod:`.secrets` holds the table): a secret in an XML config (Maven ``settings.xml``,
Spring and .NET app configs), a token given to a command as ``--api-token X``, and vendor tokens whose shape
needs a check beyond their prefix (GitLab's newer prefixes, Discord bot tokens). Each validator takes the match
and the text and returns the secret value's span, or ``None``.

Rules
-----
* XML (``xml_secret``): the text of an element whose name ends in a credential word (``<password>``,
  ``<dbPassword>``, ``<storepass>``, ``<secret>``, ``<token>``, ``<apiKey>``, ``<clientSecret>``, a namespace
  prefix allowed) up to its own closing tag, or the ``value`` of an element whose ``key=``/``name=`` is such a
  word (``<add key="ApiKey" value="…"/>``, ``<property name="password" value="…"/>``). A password element
  takes what a ``password:`` line takes (6+ characters, not a placeholder, default, word of prose, reference or
  path); the others (token, secret, key) what an ``api_key = …`` assignment takes (16+ characters with letters
  and digits, entropy ≥ 3 bits/char), so ``<tokenType>Bearer</tokenType>`` and ``<secret>my-tls</secret>`` are
  not secrets. A value in braces of 16+ base64 characters (``{jSMOWnoPFgsHVpMvz5VrIt5kRbzGpI8u+9EF1iFQyJQ=}``,
  what Maven and Jenkins store encrypted with a key that sits on the same machine) counts in either element.
* Command-line tokens (``cli_token``): a flag whose name ends in token/secret/api-key/access-key/secret-key/
  client-secret (``--token``, ``--api-token``, ``--github-token``, ``-client-secret``) and a value, after a space
  or ``=``, that an assignment would take. ``--token-file path``, ``--token $GITHUB_TOKEN`` and
  ``--secret-name db-creds`` are not secrets.
* GitLab's newer prefixes (``glrt-``, ``gldt-``, ``glptt-``, …; ``glpat-`` as before): the body must look random
  (a digit, or upper and lower case), so a name such as ``glrt-runner-for-staging-builds`` is not a token.
* Discord bot tokens (``discord_bot_token``): three base64url parts joined by dots, the first of which decodes to
  the bot's numeric id (17-20 digits), the second 6 characters, the third 27-38."""

from __future__ import annotations

import base64
import binascii
import re

from ._secret_values import (
    _CODE_REF,
    _NOT_A_PASSWORD,
    _in_marker,
    _placeholder,
    assignment_like,
    technical,
)

# ---- xml_secret -------------------------------------------------------------------------------------------------
_PASSWORD_NAME = r"pass(?:word|wd|phrase|code)|storepass|keypass"
_TOKEN_NAME = (r"secret|token|api[_.-]?key|access[_.-]?key|secret[_.-]?key|private[_.-]?key|auth[_.-]?key"
               r"|client[_.-]?secret|api[_.-]?token|access[_.-]?token|auth[_.-]?token")
_NAME = rf"[\w.:-]{{0,40}}?(?:{_PASSWORD_NAME}|{_TOKEN_NAME})"
# Starts with "<": the engine jumps between tags. The value: no markup, no blank inside, at most 300 characters.
XML_ELEMENT_PATTERN = (rf"<(?P<tag>{_NAME})(?:[ \t][^<>]{{0,200}})?>[ \t\r\n]*(?P<v>[^<>\s]{{1,300}})[ \t\r\n]*"
                       r"</(?P=tag)[ \t]*>")
# Starts with the quote before the name; the validator checks that "key=" or "name=" stands before it.
XML_ATTRIBUTE_PATTERN = (rf"(?P<qn>[\"'])(?P<tag>{_NAME})(?P=qn)[ \t]+value[ \t]*=[ \t]*(?P<qv>[\"'])"
                         r"(?P<v>[^\"'<>\s]{1,300})(?P=qv)")
XML_KEYWORDS = ("pass", "secret", "token", "key")
# What every match holds (the row is skipped on a text without it): an element's closing tag, whose name is the
# opening one's; the quote, blanks and ``value=`` between an attribute's name and its value.
XML_ELEMENT_HINT = rf"</{_NAME}[ \t]*>"
XML_ATTRIBUTE_HINT = r"[\"'][ \t]+value[ \t]*=[ \t]*[\"']"
_PASSWORD_TAG = re.compile(rf"(?:{_PASSWORD_NAME})$", re.IGNORECASE)
_ENCRYPTED = re.compile(r"\{[A-Za-z0-9+/]{16,}={0,2}\}")
_NAME_ATTRIBUTE = re.compile(r"(?<![\w-])(?:key|name)[ \t]*=[ \t]*\Z", re.IGNORECASE)


def _password_like(value: str) -> bool:
    """What a ``password:`` line takes as its value (``_secret_values._password_value``), without the prose
    rules of a sentence: 6+ characters, not a placeholder, default, word of prose, reference, path or URL."""
    return not (
        len(value) < 6 or _placeholder(value) or value.lower() in _NOT_A_PASSWORD or _CODE_REF.match(value)
        or technical(value) or value[0] in "/~\\" or value.startswith("./") or "://" in value
    )


def xml_element(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span("v")
    value = text[start:end]
    if _in_marker(text, start):
        return None
    if _ENCRYPTED.fullmatch(value):
        return (start, end)
    if _PASSWORD_TAG.search(m.group("tag")):
        return (start, end) if _password_like(value) else None
    if value[0] in "/~\\" or "://" in value or _placeholder(value) or not assignment_like(value):
        return None
    return (start, end)


def xml_attribute(m: re.Match[str], text: str) -> tuple[int, int] | None:
    if not _NAME_ATTRIBUTE.search(text, max(0, m.start() - 20), m.start()):
        return None  # a quoted word followed by value="…" that is not a key/name attribute
    return xml_element(m, text)


# ---- cli_token --------------------------------------------------------------------------------------------------
_FLAG_VALUE = r"(?:(?P<q>[\"'])(?P<vq>[^\"'\n]{1,300})(?P=q)|(?P<v>[^\s\"'|;&]{1,300}))"
# Literal first ("-"), then the check that no word or dash stands before it.
CLI_TOKEN_PATTERN = (r"-(?<![\w-]-)-?(?:[A-Za-z0-9]{1,20}-){0,3}(?:token|secret|api-?key|access-key|secret-key"
                     rf"|client-secret)(?:[ \t]+|[ \t]*=[ \t]*){_FLAG_VALUE}")
CLI_TOKEN_KEYWORDS = ("token", "secret", "key")  # the keywords of secret_assignment: no extra search


def cli_token(m: re.Match[str], text: str) -> tuple[int, int] | None:
    group = "vq" if m.group("vq") is not None else "v"
    start, end = m.span(group)
    value = text[start:end]
    if value.startswith("-") or _placeholder(value) or value[0] in "/~." or "://" in value:
        return None
    return (start, end) if assignment_like(value) else None


# ---- gitlab_token, discord_bot_token ------------------------------------------------------------------------------
def random_body(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A GitLab token of the newer prefixes: its body (after the first ``-``) holds a digit or both cases."""
    body = m.group().partition("-")[2]
    if any(c.isdigit() for c in body) or (any(c.isupper() for c in body) and any(c.islower() for c in body)):
        return m.span()
    return None


DISCORD_PATTERN = r"[MNO](?<![\w.-][MNO])[A-Za-z0-9_-]{22,26}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}(?![\w.-])"
DISCORD_HINT = r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27}"  # the second and third parts: every match holds them


def discord_token(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The first part must be the base64url of a bot id: 17-20 ASCII digits."""
    first = m.group().partition(".")[0]
    try:
        decoded = base64.urlsafe_b64decode(first + "=" * (-len(first) % 4))
    except (binascii.Error, ValueError):
        return None
    if not (17 <= len(decoded) <= 20 and decoded.isdigit() and decoded[:1] != b"0"):
        return None
    third = m.group().rpartition(".")[2]
    if not (any(c.isdigit() for c in third) or (any(c.isupper() for c in third) and any(c.islower() for c in third))):
        return None
    return m.span()
