"""How the secret scanner judges a candidate value (:mod:`.secrets` holds the patterns): entropy, placeholders
and default values, prose that is not a password, code references, and the per-pattern validators (password in
prose, assignments, key blocks, bearer tokens, CLI passwords, URL userinfo, AWS keys in prose, card numbers with
their Luhn check). Each validator takes the match and the text and returns the secret's span, or ``None``."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

_TRAILING = ".,;:)]}>"  # sentence punctuation trimmed from an unquoted value ("!" and "?" are kept)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(c / len(value) * math.log2(c / len(value)) for c in counts.values())


# ---- placeholders ---------------------------------------------------------------------------------
_DEFAULTS = frozenset({
    "password", "passwd", "secret", "changeme", "change_me", "change-me", "changeit", "admin", "root", "pass",
    "test", "guest", "postgres", "mysql", "user", "default", "example", "placeholder", "dummy", "redacted",
    "none", "null", "undefined",
})
_PLACEHOLDER_PARTS = ("example", "placeholder", "changeme", "change_me", "redacted", "dummy")


def _placeholder(value: str) -> bool:
    low = value.lower()
    return (
        value[0] in "$<{%*[("
        or low in _DEFAULTS
        or any(p in low for p in _PLACEHOLDER_PARTS)
        or low.startswith("your")
        or len(set(low)) <= 2
    )


# ---- password_in_prose ------------------------------------------------------------------------------
_NOT_A_PASSWORD = frozenset({
    "required", "optional", "hidden", "masked", "redacted", "unknown", "none", "null", "empty", "prompt",
    "stored", "managed", "rotated", "reset", "expired", "policy", "length", "manager", "field", "protected",
    "encrypted", "provided", "missing", "invalid", "incorrect", "changed", "wrong",
})
# Words that continue a sentence after "the password is": "… is mandatory", "… is too short", ….
_PROSE_WORDS = frozenset({
    "mandatory", "necessary", "correct", "different", "identical", "available", "unavailable", "sensitive",
    "temporary", "permanent", "confidential", "private", "public", "visible", "secure", "insecure", "complex",
    "simple", "obvious", "somewhere", "something", "whatever", "anything", "everything", "nothing", "outdated",
    "deprecated", "compromised", "elsewhere", "important", "critical", "personal", "separate", "possible",
    "impossible", "random", "strong", "unchanged", "uppercase", "lowercase", "alphanumeric", "plaintext",
    "cleartext", "numeric", "case-sensitive", "irrelevant", "inherited", "forbidden", "blank", "weak",
    "expiring", "somebody", "someone", "tomorrow", "today", "currently", "probably", "definitely",
    # a plain word of 6+ letters after "password is" is a password unless prose puts it there: these, the words
    # of ``_NOT_A_PASSWORD`` and those with an ending of ``_PROSE_SUFFIX`` (the value is 6+ characters)
    "unique", "stolen", "broken", "common", "unsafe", "better", "longer", "shorter", "weaker", "stronger", "enough",
    "always", "nowhere", "within", "inside", "before", "static", "global", "trivial", "present", "absent", "hashed",
    "unclear", "garbage", "rubbish", "sometimes", "either", "neither", "otherwise", "instead", "already", "yourself",
})
_PROSE_SUFFIX = re.compile(r"(?:ed|ly|ing|able|ible|ive|ful|less|ous|ent|ant|ary|ory|ic|al|tion|sion|ness)$")
# Words people choose as passwords that the prose rules above would take for prose ("geheim" is "secret",
# "butterfly" ends in -ly): after a label in a definite form, ending the clause, they are the password.
_COMMON_WORDS = frozenset({
    "geheim", "sesam", "secreto", "segreto", "butterfly", "dragonfly", "blessing", "darling", "sterling", "starling",
    "lovely", "amazing", "sparkling",
})
# A value that is code, not a password: a call or index ("getpass(", "cfg["), a dotted reference
# ("settings.db_password"), or a CONSTANT name ("DB_PASSWORD", "PASSWORD").
_CODE_REF = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[(\[]|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$|[A-Z_]+$")
_CLAUSE_ENDS = re.compile(r"[ \t]*(?:[.!?;,)\n]|$)")


# Words of 3+ letters and 2+ digits joined by hyphens ("Gato-Azul-77"): a passphrase after a qualifier and a copula
# or in a login pair (``_secret_qualified`` says why), a term ("CVE-2023-27350") elsewhere.
_WORD = r"[A-Za-z]?[a-z]{2,}"
_WORD_PASS = re.compile(rf"(?:{_WORD}-){{2,}}\d{{2,}}|\d{{2,}}(?:-{_WORD}){{2,}}")


def word_passphrase(value: str, text: str, end: int) -> bool:
    """Whether ``value`` (ending at ``end`` in ``text``) is words and digits joined by hyphens that end the
    clause."""
    return _WORD_PASS.fullmatch(value) is not None and _CLAUSE_ENDS.match(text, end) is not None


# What a note about passwords names in the value's place that is no secret (a tester's cases: "password:
# bcrypt12", "Passwort: sha256", "contraseña: utf8mb4", "Passwort ist 12Zeichen lang", "secret: ConfigMap2"): a
# hash or cipher, an encoding, a protocol or platform, a length, a Kubernetes kind; a date or time.
_TECHNICAL = re.compile(
    r"(?:sha-?(?:1|224|256|384|512)|sha3-?(?:224|256|384|512)|md[45]|bcrypt(?:-?\d{1,2})?|scrypt"
    r"|argon2(?:i|d|id)?|pbkdf2(?:-sha(?:1|256|512))?|hmac-sha(?:1|256|384|512)|aes-?(?:128|192|256)(?:-(?:gcm|cbc|ctr))?"
    r"|rsa-?(?:1024|2048|3072|4096)?|ed25519|ecdsa|3?des|blowfish|chacha20(?:-poly1305)?|utf-?8(?:mb[34])?|utf-?16"
    r"|latin-?1|ascii|base64|hex|oauth2?|oidc|saml2?|ldaps?|kerberos|x86_64|x64|arm64|amd64|i386|http/?[123]"
    r"|tls-?1\.?[0-3]|ssl-?[23]?|configmap\d*|opaque|pkcs-?#?\d{1,2})"
    r"|(?:min|max|mind|mindestens)?[-_.]?\d{1,3}[-_]?(?:chars?|characters?|zeichen|caracteres|caractères"
    r"|символ\w*|digits?|stellen|letters?|bits?|bytes?)"
    r"|\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?(?:Z|[+-]\d\d:?\d\d)?",
    re.IGNORECASE)


def technical(value: str) -> bool:
    """Whether ``value`` names a hash, cipher, encoding, protocol, platform, length or time (``_TECHNICAL``):
    what a note about a password says in the value's place, never a password."""
    return _TECHNICAL.fullmatch(value.strip(".,;:!?()[]")) is not None


_ESCAPES = re.compile(r"\\+[nrt]?")


def no_value(value: str) -> bool:
    """Whether ``value`` holds no letter or digit once backslash escapes are taken out: "...\\\\n" (an ellipsis
    and an escaped line break in a docstring) is no password."""
    return not any(c.isalnum() for c in _ESCAPES.sub("", value))


def _in_marker(text: str, start: int) -> bool:
    """Whether a value starting at ``start`` is the id inside a ``[REDACTED:<id>]`` marker ("password to
    [REDACTED:x]" reads as "password to [REDACTED" + ":" + value): a redacted text must stay as it is."""
    return text.endswith("[REDACTED:", max(0, start - 10), start)


_QUOTE_OPENERS = frozenset({"for", "of", "to", "in", "on", "at", "from", "with", "is", "was", "the", "a", "an"})


def _quoted_passphrase(value: str) -> bool:
    """Whether a quoted value right after "passphrase" ("use passphrase 'purple monkey dishwasher 42'") gives one:
    2+ words and 10+ characters, three words or a digit among them, not a phrase of prose that quotes a prompt
    ("passphrase 'for key id_rsa'") or a state ("passphrase 'required'")."""
    words = value.split()
    if len(words) < 2 or len(value) < 10 or words[0].lower() in _QUOTE_OPENERS or "/" in value:
        return False
    if any(w.lower() in _NOT_A_PASSWORD for w in words):
        return False
    return len(words) >= 3 or any(c.isdigit() for c in value)


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
    if len(value) < 6 or value[0] in "/~" or value.startswith(("./", "os.", "process.env")) or _placeholder(value):
        return None
    if _in_marker(text, start):
        return None
    if value.lower() in _NOT_A_PASSWORD or set(value) <= set("*x•.") or _CODE_REF.match(value) or technical(value):
        return None
    if no_value(value):
        return None  # an ellipsis and an escape in a docstring: no password
    plain_word = value.isalpha() and value.islower()
    # "the password is managed by IT" is prose; "the db password is correcthorsebatterystaple" is not.
    if key.lower() == "pass" and "=" not in (m.group("sep") or ""):
        return None  # "mountain pass: Stelvio", "the pass is valid": only "pass=" counts (module docstring)
    if m.group("bare") is not None and (
        not _quoted_passphrase(value) if quoted
        else len(value) < 8 or value.startswith("-") or not any(not c.isalpha() for c in value)
    ):
        return None  # "passphrase protected", "passphrase --stdin": a bare value must not read as a word
    # "password is letmein" / "password: swordfish": a plain lower-case word right after "is" is a password when
    # it ends the clause and is not a word prose puts there (``_NOT_A_PASSWORD``, ``_PROSE_WORDS``, or an -ed,
    # -ly, -ing, -able, ... ending): "the password is stored in Vault", "… is required", "… is unique." stay.
    if m.group("is") and not quoted and plain_word and (
        (value not in _COMMON_WORDS and (value in _PROSE_WORDS or _PROSE_SUFFIX.search(value)))
        or not _CLAUSE_ENDS.match(text, end)
    ):
        return None
    if plain_word and not quoted and re.match(r"[ \t]+[a-z]", text[end : end + 2]):
        return None  # the sentence goes on: "password: stored in the keychain"
    return (start, end)


def assignment_like(value: str) -> bool:
    """What ``api_key = <value>`` takes as a secret: 16+ characters with letters and digits, entropy >= 3
    bits/char, not a URL or a code reference."""
    if len(value) < 16 or value.lower().startswith(("http", "www.", "os.", "process.")):
        return False
    has_letter = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return has_letter and has_digit and _entropy(value) >= 3.0


def _assignment_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span("v")
    value = text[start:end].rstrip(".")
    return (start, start + len(value)) if assignment_like(value) else None


# One more line of a key body after the header's line: base64 alone on its line (the last one may be short,
# as ``head`` cuts it), a PEM header line (``Proc-Type:``, ``DEK-Info:``, ``Comment:``) or the blank line a PGP
# block has after its header.
_KEY_LINE = re.compile(r"\r?\n[ \t]*(?:[A-Za-z0-9+/]{4,}={0,3}|(?:Proc-Type|DEK-Info|Comment|Version):[^\n]{0,200}|)"
                       r"[ \t]*(?=\r?\n|$)")

# A short last line is base64 only when it does not read as a word: a digit, "+", "/", "=", or a lower-case
# letter followed by a capital ("AAAAFAKE0" or "QyNTUxOQ", not "next" or "Done").
_BASE64_LOOK = re.compile(r"[0-9+/=]|[a-z][A-Z]")


def _key_block(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The whole block when its END line follows (within 20,000 chars); else, for a key cut short (``head``
    of a key file, a paste that stops early), the header's line and every base64 line after it."""
    if m.group("body") is not None:
        return m.span()
    line_end = text.find("\n", m.end())
    end = len(text) if line_end == -1 else line_end
    last_body = end
    while (line := _KEY_LINE.match(text, end)) is not None and line.end() - end <= 300:
        body = text[line.start() : line.end()].strip()
        if 0 < len(body) < 16 and ":" not in body and not _BASE64_LOOK.search(body):
            break  # a short line that reads as a word ("next", "Done") ends the key
        end = line.end()
        if body:
            last_body = end  # a blank line is taken only when base64 follows it
    return (m.start(), last_body)


_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def _bearer_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span(1)
    value = text[start:end]
    if _CONSTANT_NAME.fullmatch(value) or _entropy(value) < 3.0:
        return None
    return (start, end)


def _first_group_value(min_len: int):
    """Validator: the first named value group that matched, unless it is a placeholder or too short."""

    def validate(m: re.Match[str], text: str) -> tuple[int, int] | None:
        for name, value in m.groupdict().items():
            if name.startswith("v") and value is not None:
                start, end = m.span(name)
                if not value.startswith('"'):
                    stripped = value.rstrip(_TRAILING)
                    end -= len(value) - len(stripped)
                    value = stripped
                if len(value) < min_len or _placeholder(value):
                    return None
                return (start, end)
        return None

    return validate


def _basic_credentials(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A base64 ``user:password`` (HTTP Basic auth, a Docker ``config.json`` ``auth``): the value must decode to
    printable UTF-8 text holding a colon with a password after it that is not a placeholder or a default."""
    start, end = m.span("v")
    value = text[start:end]
    try:
        plain = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    _user, colon, password = plain.partition(":")
    if not colon or not password or not plain.isprintable() or _placeholder(password):
        return None
    return (start, end)


_VAULT_CONTEXT = re.compile(r"vault|token", re.IGNORECASE)


def _vault_legacy(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A Vault token of the format before 1.10 (``s.`` + 24 letters and digits) counts only with "vault" or
    "token" within 60 characters and with upper, lower case and a digit (``s.`` starts many other words)."""
    start, end = m.span()
    value = text[start + 2 : end]
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
        return None
    if not (_VAULT_CONTEXT.search(text, max(0, start - 60), start) or _VAULT_CONTEXT.search(text, end, end + 60)):
        return None
    return (start, end)


_TELEGRAM_CONTEXT = re.compile(r"telegram|\bbot|botfather", re.IGNORECASE)


def _telegram_token(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """``<bot id>:<30-40 chars>``: the secret part of every token BotFather issues starts with ``AA``; another one
    counts only with "telegram"/"bot" within 80 characters. Either way it must look random (mixed case, a
    digit, entropy >= 3.5 bits/char), so ``1234567:`` followed by a word is not a token."""
    start, end = m.span()
    secret = m.group("v")
    if not (any(c.isupper() for c in secret) and any(c.islower() for c in secret)) or _entropy(secret) < 3.5:
        return None
    if not secret.startswith("AA") and not (
        _TELEGRAM_CONTEXT.search(text, max(0, start - 80), start) or _TELEGRAM_CONTEXT.search(text, end, end + 80)
    ):
        return None
    return (start, end)


_SOURCE_FILE = re.compile(r"\.(?:py|pyi|js|mjs|ts|tsx|jsx|md|txt|go|rs|c|h|cc|cpp|hpp|java|kt|rb|php|cs|swift|json"
                          r"|ya?ml|toml|cfg|ini|conf|log|sh|sql|html|css|lock)$", re.IGNORECASE)


def _pgpass_line(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A ``.pgpass`` line ``host:port:database:user:password`` (the password field); placeholders and defaults
    (``*``, ``postgres``, ``<password>``) are not secrets, nor a last field that reads as a word in prose."""
    if _SOURCE_FILE.search(m.group("host")):
        return None  # "app.py:12:4:name:value" is a grep or compiler line, not a host
    start, end = m.span("v")
    value = text[start:end].rstrip(_TRAILING)
    if len(value) < 4 or _placeholder(value) or value.lower() in ("password", "passwd", "pass"):
        return None
    return (start, start + len(value))


_SSHPASS = re.compile(r"(?<![\w-])sshpass\b")
_MYSQL = re.compile(r"(?<![\w-])(?:sshpass|mysql(?:dump|admin|import|sh)?|mariadb(?:-dump|-admin)?)\b")
# A registry login: "docker login -u bob -p pw" (also podman, nerdctl, buildah, skopeo, oras, "helm registry
# login", "crane auth login"); "-p" elsewhere in docker is a port ("docker run -p 8080:80").
_REGISTRY_LOGIN = re.compile(r"(?<![\w-])(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry"
                             r"|crane[ \t]+auth)(?:[ \t]+-{1,2}[\w-]+(?:[ \t=]+(?!login\b)[^\s-][^\s]*)?)*[ \t]+login\b",
                             re.IGNORECASE)  # global options may come first: "docker --config /tmp/c login"
# Tools whose "-p" is a password (in mongosh, mongodump, ... "--port" is the port; in twine, "-p" is
# "--password"): the value counts when it looks like a credential, as after a registry login.
_P_TOOLS = re.compile(r"(?<![\w-])(?:twine[ \t]+upload|mongo(?:sh|dump|restore|export|import|stat|top|files)?)\b",
                      re.IGNORECASE)
_REDIS = re.compile(r"(?<![\w-])redis-cli\b")
_CURL = re.compile(r"(?<![\w-])curl\b")
_VALUE_4 = _first_group_value(4)


def _cli_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """``-p``/``-a``/``-u`` values count only after sshpass/mysql/a registry login/twine upload/mongosh and its
    tools, redis-cli and curl respectively."""
    if m.group("p"):
        names, tool = (("sshpass",), _SSHPASS) if m.group("sp") else (("sshpass", "mysql", "mariadb"), _MYSQL)
    elif m.group("a"):
        names, tool = ("redis-cli",), _REDIS
    elif m.group("u"):
        names, tool = ("curl",), _CURL
    else:
        return _VALUE_4(m, text)
    if (span := _VALUE_4(m, text)) is None:
        return None
    start = max(0, m.start() - 300)
    start = max(start, max(text.rfind(c, start, m.start()) for c in "\n;&|") + 1)
    command = text[start : m.start()]
    if any(n in command for n in names) and tool.search(text, start, m.start()):
        return span
    low = command.lower()
    if m.group("p") and (("login" in low and _REGISTRY_LOGIN.search(text, start, m.start()))
                         or (("twine" in low or "mongo" in low) and _P_TOOLS.search(text, start, m.start()))):
        value = text[span[0]:span[1]].strip("\"'")
        if value.startswith(("=", "$")) or value.isdigit() or (value.isalpha() and value.islower() and len(value) < 8):
            return None  # "-p=$(aws ecr get-login-password)" is no literal; "the -p flag leaks" is prose
        return span
    return None


_SCHEME = re.compile(r"(?<![\w+.-])[a-z][a-z0-9+.-]{1,30}$", re.IGNORECASE)


def _url_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    if not _SCHEME.search(text[max(0, m.start() - 32) : m.start()]):
        return None
    return _VALUE_4(m, text)


# The row's keywords, and its ``near=(80, 40)`` in ``secrets``: a value is only looked for within 80 characters
# of one of these words (change the three together).
_AWS_CONTEXT = re.compile(r"aws|secret|amazon", re.IGNORECASE)


def _aws_prose(m: re.Match[str], text: str) -> tuple[int, int] | None:
    value = m.group()
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return None  # hex digests and upper-case ids are not AWS secrets
    if not any(c.isdigit() or c in "/+" for c in value) or _entropy(value) < 3.5:
        return None
    start, end = m.span()
    if not (_AWS_CONTEXT.search(text, max(0, start - 80), start) or _AWS_CONTEXT.search(text, end, end + 40)):
        return None
    return (start, end)


def _luhn(digits: str) -> bool:
    """The Luhn check digit test (ISO/IEC 7812-1) on a string of digits."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


# Issuer prefixes of the card networks whose numbers people paste (ISO/IEC 7812 IINs as the networks publish
# them): Visa 4; Mastercard 51-55 and 2221-2720; Amex 34, 37; Discover 6011, 644-649, 65; JCB 3528-3589;
# Diners 300-305, 36, 38-39; UnionPay 62.
_CARD_IIN = re.compile(r"4|5[1-5]|2(?:2[2-9][1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)|3[47]|6011|64[4-9]|65"
                       r"|35(?:2[89]|[3-8]\d)|30[0-5]|3[689]|62")
_CARD_WORDS = re.compile(r"\b(?:card|credit|debit|visa|mastercard|master card|amex|american express|discover"
                         r"|cc|cvv|cvc|pan|kreditkarte|carte|tarjeta)\b", re.IGNORECASE)


def _card_number(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A payment card number: 13-19 digits with a known issuer prefix that pass the Luhn check, written in
    groups (``4111 1111 1111 1111``, ``3782-822463-10005``) or, as one run of digits, with a card word
    (card, credit, visa, cvv…) within 40 characters: a bare run of digits is more often an id or a timestamp
    (one in ten random numbers passes Luhn)."""
    raw = m.group()
    digits = raw.replace(" ", "").replace("-", "")
    if not 13 <= len(digits) <= 19 or not _CARD_IIN.match(digits) or not _luhn(digits):
        return None
    start, end = m.span()
    grouped = raw != digits
    if not grouped and not (_CARD_WORDS.search(text, max(0, start - 40), start)
                            or _CARD_WORDS.search(text, end, end + 40)):
        return None
    return (start, end)
