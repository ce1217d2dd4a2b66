"""Patterns and validators of the secret rows that read a credential out of its wording rather than a vendor
format (:mod:`.secrets` holds the table): a password phrase in any of the languages the injection scanner
covers, a ``.netrc`` entry, and the private part of a PuTTY key file. Each validator takes the match and the
text and returns the secret value's span, or ``None``.

The password phrase rule (``password_phrase``)
----------------------------------------------
Words like "password" appear in prose far more often than passwords do, so a value counts only when two things
hold:

* it is introduced in a definite form: a label and ``:``/``=`` (``password: X``, ``Passwort: X``, ``пароль: X``,
  ``密码：X``), a copula (``password is X``, ``Passwort ist X``, ``contraseña es X``, ``密码是X``,
  ``パスワードはX``, ``비밀번호는 X``), or a set verb (``set the password to X``, ``password changed to X``);
  or, in a looser form, an arrow (``password -> X``, ``→``, ``==>``), a copula with "now"/"still" or its
  equivalent (``password is now X``, ``Passwort ist jetzt X``, ``la contraseña ahora es X``, ``пароль теперь X``,
  ``密码现在是X``), or nothing but a space or tab (``пароль Qwerty123``, ``password Qwerty123``);
* the value looks like a secret: one token without spaces, not a placeholder (``<...>``, ``${...}``, ``****``),
  a default, an env or code reference, a path, a URL, an e-mail address, a version, a date or a secret store's name
  ("1Password", "Vault"), and either
  - 6+ characters mixing letters with digits or symbols (``Sup3rS3cretPw``, ``Xy7!kLm2``), or
  - after ``:``/``=`` only: 6+ digits, or 12+ ASCII letters that do not end like a derived English word
    (-ing, -tion, -ment, ...): ``correcthorsebattery`` but not ``authentication``.
  A copula or a set verb is ordinary grammar ("the secret is to cache it", "reset your password to continue"),
  so after one only the mixed form counts, or
  - after ``:``/``=`` or a copula (not "now"), with a label of another language: a plain word that ends the
    clause and is not one prose puts there (``Passwort ist sommerwiese``, ``пароль: подсолнух``, ``密码是向日葵``,
    ``رمز عبور من آفتابگردان است``; rule and word lists in ``_secret_words.plain_password``).
  A value may be written in Cyrillic, Arabic or CJK letters (``пароль: подсолнух77``, ``密码：向日葵2020``); a CJK
  sentence ending glued to it stays (``パスワードはひまわりです``), and the looser forms read Latin values only.

The looser forms are what prose and code look like most ("password reset link", "password VARCHAR(255)",
"password -> passwd_hash" in a rename, "password 2FA-enabled"), so after them the value must also look random:
three of upper case, lower case, digits and symbols (``-``, ``_``, ``.``, ``/``, ``:`` join words and do not count
as symbols), or letters with 3+ digits (``qwerty123``); not a lower-case identifier (``db_password``), a file
name (``secrets.yaml``), a hyphenated term (``CVE-2023-27350``, ``ISO-8859-1``, ``JIRA-1234``, ``256-bit``), a
character range (``A-Za-z0-9``) or a UUID, and not glued to a word of another script (``Router2-сети``). Digits
alone never count there, and an arrow needs a space after it (``conn->password->data`` is a member access). The
weak labels below, "암호" (also "cipher") and "MDP" in capitals (a Markov decision process) take no bare value.
A qualifier may also stand before a copula (``Das Passwort für den SMTP-Server lautet X``, ``la contraseña del
servidor es X``, ``a senha do servidor é X``) or before a bare value that ends the line or clause (``пароль от
сервера X``); both are looser forms, and the bare one also needs a symbol that does not join words or 12+
characters: "password for user Bob2024 expired" names a user, "пароль от сервера Zima2026!Moskva" gives a password.
After a qualifier and a copula, words and digits joined by hyphens that end the clause count too (``la contraseña
del wifi es Gato-Azul-77``, ``пароль от wifi — Kot-Sin-77``; ``_secret_values.word_passphrase``), and "clave"
takes this form ("la clave del wifi es ..."; its value still needs 8+ characters).
Costs: a random-looking token right after the word is taken for a password even when prose names it ("the
password P@ssw0rd is in every breach list"); a hyphenated passphrase (``Fake-Registry-Pass-42``) after an arrow,
"now" or a space, a PIN, or a short value without a symbol after a qualifier ("пароль от почты Qwerty123") is
missed in these forms.

Arabic-script qualifiers follow the label (``رمز عبور سرور`` "the server's password", ``كلمة المرور الجديدة``
"the new password"): one to three such words may stand before the ``:``/``=`` or the copula ``هي``. Persian puts
its copula last (``رمز عبور سرور Kf93!xQ2 است``, "the server password is Kf93!xQ2"): a label, qualifier words
and a value count when ``است``/``هست``/``می‌باشد`` follows the value; without a qualifier the bare form covers it.

"pass", "secret" and "clave" also have everyday meanings (a mountain pass, a k8s secret's name, "palabra
clave"), so after them the value needs 8+ characters and must not be a lower-case identifier or path
(``tls-secret``, ``test_login``, ``kubernetes.io/tls``); "pass" needs ``:``/``=`` and a credential word before it
(``wifi pass:``, ``db pass:``) unless it is ``pass=``; ``PASS:`` in capitals is a test runner's status line.
"""

from __future__ import annotations

import re

from ._secret_values import (
    _CODE_REF,
    _NOT_A_PASSWORD,
    _PROSE_WORDS,
    _TRAILING,
    _in_marker,
    _placeholder,
    no_value,
    technical,
    word_passphrase,
)
from ._secret_words import SCRIPT_CHARS, counted_length, plain_password, trim_wide
from ._text import fold


def _folded(*words: str) -> str:
    """``words`` as a regex alternation, each written the way :func:`._text.fold` leaves it (the rows run on
    folded text: "пароль" becomes "пapoль" with Latin look-alikes, "パスワード" loses its dakuten, "é" its
    accent), with any space matching spaces or tabs."""
    return "|".join(re.escape(fold(w).text).replace(r"\ ", r"[ \t]+") for w in words)


# ---- password_phrase ------------------------------------------------------------------------------------
# Labels written in a script with word boundaries (Latin, Cyrillic, Arabic): the match must not sit inside a
# longer word ("1Password", "bypass", "passwords"); "_" may join it ("db_password").
_WORD_LABELS = r"secret(?:[_-]?key)?|" + _folded(
    "password", "passwd", "passphrase", "passcode", "pass", "passwort", "kennwort", "contraseña", "clave",
    "senha", "palavra-passe", "mot de passe", "mdp", "пароль", "كلمة المرور", "كلمة السر", "كلمة مرور",
    "رمز عبور", "رمز ورود", "کلمه عبور", "گذرواژه")
# Labels in scripts written without spaces (Chinese, Japanese, Korean): no boundary.
_CJK_LABELS = _folded("密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "패스워드", "암호")
# Prepositions that may put a short qualifier between the label and its colon or copula ("password for the VPN:
# X", "Passwort für den Server lautet X", "contraseña del servidor es X").
_PREP_QUALIFIER = (r"[ \t]+(?:" + _folded("for", "of", "on", "at", "to", "in", "für", "von", "vom", "zum", "zur",
                                        "des", "der", "de", "del", "della", "dello", "do", "da", "dos", "para", "pour", "du", "от", "для", "к")
                   + r")[ \t]+[^\n:=.!?]{1,30}?")
_QUALIFIER = _PREP_QUALIFIER + r"|[ \t]*[(（][^)）\n]{1,30}[)）]"
# Arabic or Persian words after the label: a qualifier ("رمز عبور سرور", "كلمة المرور الجديدة").
_AR_WORDS = r"(?:[ \t]+[\u0620-\u064a\u066e-\u06d3\u06d5\u06fa-\u06ff]+){1,3}"
_QUALIFIER += "|" + _AR_WORDS
# "now", "still": a copula with one of them is a looser form (module docstring).
_ADVERBS = _folded("now", "still", "currently", "jetzt", "nun", "immer noch", "weiterhin", "ahora", "todavía",
                   "actualmente", "maintenant", "désormais", "toujours", "agora", "ainda", "atualmente", "теперь",
                   "сейчас", "всё ещё", "الآن")
_CJK_ADVERBS = _folded("现在", "現在", "目前", "이제", "지금", "현재")
_COPULA = (rf"(?<=[ \t])(?:(?:{_ADVERBS})[ \t]+)?(?:"
           + _folded("is", "was", "ist", "lautet", "war", "es", "era", "est", "était", "é", "это", "теперь", "сейчас",
                     "هي", "—", "–", "-")
           + rf")(?:[ \t]+(?:{_ADVERBS}))?[ \t]*:?[ \t]+"
           + rf"|(?:{_CJK_ADVERBS})?(?:" + _folded("是", "为", "為", "は", "는", "은") + rf")[ \t]*(?:(?:{_CJK_ADVERBS})[ \t]*)?")
_ADVERB = re.compile(rf"(?<![^\W_])(?:{_ADVERBS})(?![^\W_])|{_CJK_ADVERBS}", re.IGNORECASE)
_SET_TO = r"[ \t]+(?:(?:is|was|has[ \t]+been|been|got)[ \t]+)?(?:(?P<verb>set|changed|reset|updated)[ \t]+)?to[ \t]+"
_ARROW = r"-{1,2}>|==>|[→⇒⟶➔➜]"
# A bare value: printable ASCII and Latin letters, no quotes, commas or semicolons (CJK punctuation ends it).
_BARE_CHARS = r"A-Za-z0-9!#$%&()*+\-./:<=>?@\[\]\\^_{|}~\u00c0-\u024f"
_BARE = rf"[{_BARE_CHARS}]{{4,200}}"
_NARROW = re.compile(rf"[{_BARE_CHARS}]*")
# A value holding letters of another script (Cyrillic, Arabic, CJK): ``пароль: подсолнух77``, ``密码：向日葵2020``;
# never the Persian copula itself ("... X است").
_WIDE = (rf"(?!(?:{_folded('است', 'هست')})(?![^\W_]))(?=[{_BARE_CHARS}]{{0,200}}[{SCRIPT_CHARS}])"
         rf"[{_BARE_CHARS}{SCRIPT_CHARS}]{{2,200}}")


def _value(p: str) -> str:
    """The value after a label, in groups named with the prefix ``p``: quoted (``q``), in curly or CJK quotes
    (``q2``) or bare (``v``)."""
    return (rf"(?:(?P<{p}qc>[\"'`])(?P<{p}q>[^\s\"'`]{{4,200}})(?P={p}qc)|[“‘「『](?P<{p}q2>[^\s”’」』]{{4,200}})[”’」』]"
            rf"|(?P<{p}w>{_WIDE})|(?P<{p}v>{_BARE}))")


# What may follow the value of the qualifier-space-value form ("пароль от сервера X"): the end of the line, a
# comma, semicolon or closing bracket, or a space after sentence punctuation the value ends with.
_LINE_END = r"(?:[ \t]*(?:\r?\n|$|[,;)，；。])|(?<=[.!?])[ \t])"

# The value of the label-space-value form is only looked at (a lookahead), so a match that is no secret
# ("Passwort Kennwort") does not swallow a label right after it ("Passwort Kennwort: X").
PHRASE_PATTERN = (
    rf"(?:(?<![^\W_])(?P<key>{_WORD_LABELS})(?![^\W_])|(?P<ckey>{_CJK_LABELS}))[\"'”」]?"
    rf"(?:(?:(?:{_QUALIFIER})?(?P<sep>[ \t]*(?:=>|:=|[:=])[ \t]*)"
    rf"|(?:(?P<cqual>{_PREP_QUALIFIER})|{_AR_WORDS})?[ \t]*(?P<is>{_COPULA})"
    rf"|(?P<to>{_SET_TO})|[ \t]*(?P<arrow>{_ARROW})[ \t]+){_value('')}"
    rf"|(?P<qbare>{_PREP_QUALIFIER}[ \t]+)(?={_value('c')}{_LINE_END})"
    rf"|(?P<bare>(?:{_AR_WORDS})?[ \t]+)(?={_value('b')}))"
)
# Every match starts with one of these (so the row can run from their places only, see ``secrets._ANCHOR_BACK``).
PHRASE_KEYWORDS = tuple(fold(w).text.lower() for w in (
    "pass", "secret", "palavra", "mot", "kennwort", "contrase", "clave", "senha", "mdp", "пароль", "كلمة", "رمز", "کلمه", "گذرواژه",
    "密码", "密碼", "口令", "パスワード", "暗証番号", "비밀번호", "패스워드", "암호"))

_ENGLISH_LABELS = frozenset({"password", "passwd", "passphrase", "passcode"})
_WEAK_LABELS = frozenset({"pass", "secret", "secret_key", "secret-key", "secretkey", "clave"})
_SECRET_STORES = frozenset({
    "1password", "lastpass", "bitwarden", "keepass", "keepassxc", "dashlane", "vault", "keychain",
    "keyring", "passbolt", "secretsmanager", "ssm",
})
# Words before "pass" that make it a credential ("wifi pass: X"), not a mountain or boarding pass.
_PASS_CONTEXT = re.compile(
    r"(?:wi-?fi|wlan|router|db|database|admin|root|user|login|account|ssh|ftp|sftp|smtp|imap|mail|e-?mail|vpn"
    r"|server|host|app|api|web|portal|guest|network)[ \t_-]*$", re.IGNORECASE)
_SET_VERB = re.compile(r"\b(?:set|change|changed|reset|update|updated)\b", re.IGNORECASE)
_VERSION = re.compile(r"[vV]?\d+(?:\.\d+)+(?:[-+.]\w+)*")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?(?:Z|[+-]\d\d:?\d\d)?")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(?:[-_./:][a-z0-9]+)+")
_FILE_NAME = re.compile(r"\.[A-Za-z]{1,5}$")
_LONG_PROSE_SUFFIX = re.compile(
    r"(?:ed|ly|ing|able|ible|ive|ful|less|ous|ent|ant|ary|ory|ic|al|tion|sion|ness|ment|ship|ism|ist|ity|ise|ize"
    r"|ance|ence|ure|age|ate)s?$")


def _credential_like(value: str, *, weak: bool, after_sep: bool) -> bool:
    """Whether ``value`` looks like a credential rather than a word, a reference or a placeholder (module
    docstring)."""
    low = value.lower()
    if len(value) < (8 if weak else 6) or _placeholder(value) or set(value) <= set("*x•.") or no_value(value):
        return False
    if low in _NOT_A_PASSWORD or low in _PROSE_WORDS or low in _SECRET_STORES or technical(value):
        return False
    if value[0] in "/~!-\\" or value.startswith("./") or "://" in value or _CODE_REF.match(value):
        return False
    if _VERSION.fullmatch(value) or _TIMESTAMP.fullmatch(value) or _EMAIL.fullmatch(value):
        return False
    if weak and (_IDENTIFIER.fullmatch(value) or "/" in value or low.startswith("test")):
        return False
    has_alpha = any(c.isalpha() for c in value)
    if has_alpha and any(not c.isalpha() for c in value):
        return not ("/" in value and _FILE_NAME.search(value))  # "config/db.yml" is a file, not a password
    if not after_sep:
        return False
    if value.isdigit():
        return not weak
    return value.isascii() and value.isalpha() and len(value) >= 12 and not _LONG_PROSE_SUFFIX.search(low)


# Terms that look mixed but are names: words, numbers and short capital codes joined by hyphens ("2FA-enabled",
# "CVE-2023-27350", "ISO-8859-1", "256-bit", "JIRA-1234"), character ranges ("A-Za-z0-9"), a UUID.
_TERM = re.compile(r"(?:[A-Za-z]+|\d+|[A-Z0-9]{1,5})(?:-(?:[A-Za-z]+|\d+|[A-Z0-9]{1,5}))+|(?:[A-Za-z0-9]-[A-Za-z0-9])+"
                   r"|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_SOFT_SYMBOLS = frozenset("-_./:'")  # they join words ("e-mail", "Single-Sign-On"): no sign of a secret
# The Persian copula after the value ("... Kf93!xQ2 است"); "می‌باشد" is folded without its ZWNJ.
_FA_COPULA = re.compile(r"[ \t]+(?:" + _folded("است", "هست", "می‌باشد", "می باشد") + r")(?![^\W_])")
_ARABIC = re.compile(r"[\u0600-\u06ff]")
_HARD_SYMBOL = re.compile(r"[^\w\-./:']")  # a symbol that does not join words (``_SOFT_SYMBOLS``)


def _random_looking(value: str) -> bool:
    """The extra test of a value in a looser form (module docstring): three kinds of character among upper
    case, lower case, digits and symbols, or letters with 3+ digits; not an identifier, a file name or a term
    (``_TERM``)."""
    if _IDENTIFIER.fullmatch(value) or _FILE_NAME.search(value) or _TERM.fullmatch(value):
        return False
    digits = sum(c.isdigit() for c in value)
    kinds = (any(c.isupper() for c in value) + any(c.islower() for c in value) + (digits > 0)
             + any(not c.isalnum() and c not in _SOFT_SYMBOLS for c in value))
    return kinds >= 3 or (digits >= 3 and any(c.isalpha() for c in value))


def _loose_form(m: re.Match[str], label: str) -> bool | None:
    """Whether the match is one of the looser forms (arrow, bare, a qualifier before a copula or a bare value,
    copula with "now"); ``None`` when it is one that ``label`` does not take."""
    if m.group("bare") is not None or m.group("qbare") is not None:
        if label in _WEAK_LABELS or label == fold("암호").text or m.group("key") == "MDP":
            return None
        return True
    if m.group("cqual") is not None:
        return None if label in _WEAK_LABELS and label != "clave" else True
    return m.group("arrow") is not None or (m.group("is") is not None and _ADVERB.search(m.group("is")) is not None)


def phrase_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    key = m.group("key")
    label = (key or m.group("ckey")).lower()
    weak = label in _WEAK_LABELS
    after_sep = m.group("sep") is not None
    if (loose := _loose_form(m, label)) is None:
        return None
    if m.group("to") is not None and (
        label == "pass" or not (m.group("verb") or _SET_VERB.search(text, max(0, m.start() - 40), m.start()))
    ):
        return None  # "reset your password to continue" reads on; "set the password to X" does not
    if label == "clave" and re.search(r"(?i)palabras?[ \t]+$", text[max(0, m.start() - 12): m.start()]):
        return None  # "palabra clave": a keyword
    if label == "pass":
        if not after_sep or key == "PASS":
            return None
        if "=" not in m.group("sep") and not _PASS_CONTEXT.search(text, max(0, m.start() - 20), m.start()):
            return None
    group = next(g for g in ("q", "q2", "w", "v", "cq", "cq2", "cw", "cv", "bq", "bq2", "bw", "bv")
                 if m.group(g) is not None)
    start, end = m.span(group)
    value = text[start:end]
    # Persian puts its copula last: "رمز عبور من آفتابگردان است" gives a word as definitely as "password is"
    persian = (m.group("bare") is not None and group == "bw" and _ARABIC.search(value) is not None
               and _ARABIC.search(m.group("bare")) is not None and _FA_COPULA.match(text, end) is not None)
    if group.endswith("w"):
        value = trim_wide(value)
        if loose and not persian:  # the looser forms read Latin values only, as before wide values were read
            value = _NARROW.match(value).group()
            if len(value) < 4:
                return None
        end = start + len(value)
    if loose and end < len(text) and text[end].isalpha() and ord(text[end]) < 0x2E80:
        return None  # glued to a word of another script: "пароль Router2-сети" (CJK, from U+2E80, runs on)
    if group.endswith(("v", "w")):
        stripped = value.rstrip(_TRAILING)
        if stripped.rstrip("!?").isalpha():
            stripped = stripped.rstrip("!?")  # "Passwort: Zeichen!" ends a sentence
        end -= len(value) - len(stripped)
        value = stripped
    if not value or _in_marker(text, start) or counted_length(value):
        return None
    # a word alone after a label of another language (``_secret_words.plain_password``); English is read by the
    # password_in_prose row
    plain = (value.isalpha() and not weak and label not in _ENGLISH_LABELS
             and (persian or not loose and (after_sep or m.group("is") is not None)))
    if not _credential_like(value, weak=weak, after_sep=after_sep) and not (
            plain and plain_password(value, text, end, closed=persian)):
        return None
    if loose and not persian and not _random_looking(value) and not (
            m.group("cqual") is not None and word_passphrase(value, text, end)):
        return None  # "la contraseña del wifi es Gato-Azul-77" ends the clause: words and digits, not a term
    if m.group("qbare") is not None and not (_HARD_SYMBOL.search(value) or len(value) >= 12):
        return None  # "password for user Bob2024" names a user; "пароль от сервера Zima2026!Moskva" gives one
    if m.group("bare") is not None and _ARABIC.search(m.group("bare")) and not _FA_COPULA.match(text, end):
        return None  # "رمز عبور سرور X" needs its copula: "... X است"
    return (start, end)


# ---- netrc_password -------------------------------------------------------------------------------------
# A .netrc entry: "machine <host>" (or "default"), then login/account/port pairs, then "password <value>",
# on one line or several. The tokens are lower-case in every netrc reader.
NETRC_PATTERN = (
    r"(?<![\w.-])(?:machine[ \t\r\n]+(?P<host>[^\s]{1,253})|default)"
    r"(?P<pairs>(?:\s+(?:login|account|port)[ \t]+[^\s]{1,200}){0,3})\s+password[ \t]+(?P<v>[^\s\"'`]{1,200})"
)


def netrc_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The password of a ``.netrc`` entry. "machine" is an ordinary word, so the host must look like one (a dot,
    a digit, "localhost") or a ``login`` pair must be there; the value is not a placeholder, default or prose."""
    host = m.group("host")
    if host is not None and not (re.search(r"[.\d:]", host) or host == "localhost" or "login" in m.group("pairs")):
        return None
    start, end = m.span("v")
    value = text[start:end].rstrip(_TRAILING)
    if len(value) < 4 or _placeholder(value) or value.lower() in _NOT_A_PASSWORD:
        return None
    if host is None and "login" not in m.group("pairs") and value.isalpha():
        return None  # "default" is an ordinary word too: "change the default password immediately" is prose
    return (start, start + len(value))


# ---- putty_private_key ----------------------------------------------------------------------------------
# PuTTY .ppk (format 2 and 3): "Private-Lines: N" then N lines of base64, then "Private-MAC: <hex>" (format 1:
# "Private-Hash:"). The public half and the header before it are not secret and stay.
PUTTY_PATTERN = r"(?<![\w-])Private-Lines:[ \t]*(?P<n>\d{1,4})[ \t]*(?=\r?\n)"
_B64_LINE = re.compile(r"\r?\n[ \t]*([A-Za-z0-9+/]{4,}={0,2})[ \t]*(?=\r?\n|$)")
_MAC_LINE = re.compile(r"\r?\n[ \t]*Private-(?:MAC|Hash):[ \t]*[0-9A-Fa-f]{16,128}[ \t]*(?=\r?\n|$)")
_BASE64_LOOK = re.compile(r"[0-9+/=]|[a-z][A-Z]")


def putty_private_key(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The private lines of a PuTTY key (at most the number the label gives; a short line that reads as a word
    ends them) and the MAC line after them; ``None`` when no base64 line follows the label."""
    pos, taken = m.end(), 0
    while taken < min(int(m.group("n")), 400) and (line := _B64_LINE.match(text, pos)) is not None:
        body = line.group(1)
        if len(body) < 16 and not _BASE64_LOOK.search(body):
            break
        pos, taken = line.end(), taken + 1
    if not taken:
        return None
    if (mac := _MAC_LINE.match(text, pos)) is not None:
        pos = mac.end()
    start = m.end() + (2 if text.startswith("\r\n", m.end()) else 1)
    return (start, pos)
