"""The same-line forms of two secret rows (:mod:`._secret_layout` joins each with its next-line form and
:mod:`.secrets` holds the table), and the value checks they share: key material after a label naming a key,
cookie, seed or salt, and a short password after ``pw``, ``pwd``, ``pass``, ``passwd`` or ``password``. Each
validator takes the match and the text and returns the secret value's span, or ``None``.

Key material (``secret_assignment``, its key form)
--------------------------------------------------
``The backup encryption key: 4Gx7…==``, ``the vault unseal key is …``, ``Unseal Key 1: …``, ``session cookie is
…``, ``Cookie: sessionid=…``, ``wallet seed: …``, ``salt: …``, ``encryption_key = '…'``: the word ``key``, ``cookie``,
``seed`` or ``salt``, then ``:``/``=`` or ``is``/``was``, then 16+ characters of base64, base64url or hex. What the
value must look like depends on the word before the label (joined by a space, ``_`` or ``-``):

* a word naming a secret (encryption, signing, private, secret, unseal, master, recovery, HMAC, session, API, access,
  wallet, …: ``_SECRET_WORDS``), or the labels ``cookie`` and ``salt`` themselves: what an assignment takes
  (16+ characters with letters and digits, entropy >= 3 bits/char; a hex digest counts);
* a word naming a key of data or a public value (primary, sort, partition, cache, public, foreign, idempotency,
  routing, …: ``_DATA_WORDS``): never;
* any other word ("the key is …", "seed: …"): only random base64 (24+ characters with upper case, lower case and
  3+ digits, entropy >= 3.8 bits/char); a hex digest there is a hash or an id, not a secret, except
* hex of a key's length (32, 48 or 64 digits: 128, 192 or 256 bits) after a word naming what a key of its own
  locks (disk, volume, LUKS, BitLocker, tenant, database, …: ``_HOLDER_WORDS``), or after any other word of content
  the lists lack on a line that speaks of encryption (encrypt, decrypt, cipher, unlock, AES, …: ``_CRYPT_LINE``);
  never on a line naming a hash (sha, md5, digest, checksum, hash, commit, fingerprint, etag, …: ``_HASH_WORDS``).
  A 40-digit value (a SHA-1, a commit) never counts there, nor after a determiner alone ("the key is <sha256>"),
  nor after a word that names no lock ("the widget key is <sha256>", "the fixture key is …").

Never a UUID (an id), a path of words (``projects/p-1/locations/…/cryptoKeys/k``), a file name, a URL or a
CONSTANT_NAME. ``Cookie: name=value`` keeps the cookie's name. Costs: "the key is <random base64>" in a note about a
cache is replaced, and so is a 64-digit digest called "the disk key" (or "the <word> key" on a line about
encryption) on a line that does not say it is a hash; hex after "the <word> key" with a word the list lacks and no
word of encryption on its line ("the escrow key was <hex>") is missed.

Short passwords (``password_in_prose``, its short form)
-------------------------------------------------------
``ssh root@10.0.0.5 (pw: toor)``, ``pass=toor``, ``user=bob&pass=abcd``, ``PGPASSWORD=toor``, ``password: 1234``:
the password row takes 6+ characters; this one takes 4-5 after ``:``/``=`` (``pass`` only with ``=``), when the
value ends there (end, a space, a quote, ``,``/``;``/``&``/a closing bracket). The value has a letter (digits alone
only after ``pw``/``pwd``/``passwd``/``password``: ``pass=1234`` is a count of tests) and is not a placeholder, a
default, a boolean, a word a form or note puts there (``same``, ``unset``, ``auto``, ``skip``, ``none``: ``_NOT_SHORT``)
or a path; a plain word must end the sentence or be followed by another ``name=`` pair ("pass=toor port=22",
not "password: same as ssh"). Also:

* ``pw is toor``, ``the pwd was r00t``: 4-5 characters after ``pw``/``pwd``/``passwd``/``password`` and ``is``/``was``,
  ending the clause, and none of the words a sentence puts there (``fine``, ``safe``, ``long``, ``here``, …);
* ``password: 42x``, ``pw=a1``, ``password: 123``: 2-3 characters after the same labels or ``pass`` and ``:``/``=``,
  ending the clause, that mix letters with digits or symbols, or three digits that are not all one digit;
* ``pass = x``, ``password: q``: one letter after ``=`` or, but for ``pass``, ``:`` (not ``y``/``n``, an answer) after a label that is a word of its own
  (``first_pass = x`` is code), ending the clause;
* ``pass: toor``: ``pass`` with ``:`` and 4-5 characters (not "pass: 42x", a score) counts when nothing but list marks, a bracket, a comma, a pipe, a slash or a
  user name given just before stands before it on its line (``user: root pass: toor``, ``(pass: toor)``): "tests
  pass: 42 of 42", "mountain pass: Furka" have a word before it.

Costs: two or three letters alone ("password: abc"), one digit and two digits are missed; "password: 2x" or
"password = q" in a note that ends there is replaced.
"""

from __future__ import annotations

import re

from ._secret_values import (
    _CODE_REF,
    _NOT_A_PASSWORD,
    _PROSE_SUFFIX,
    _PROSE_WORDS,
    _entropy,
    _in_marker,
    _placeholder,
    assignment_like,
    technical,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# ---- key material ---------------------------------------------------------------------------------------
# What follows the label (``_secret_layout`` puts the label before it, and the next-line form beside it).
KEY_TAIL = (
    r"(?:[ \t]+\d{1,2})?(?:[\"']?[ \t]*[:=][ \t]*|[ \t]+(?:is|was)[ \t]*:?[ \t]*)[\"'`]?"
    r"(?P<v>[A-Za-z0-9_\-+/=.~]{16,400})"
)
_SECRET_WORDS = _words("""
    encryption decryption encrypt decrypt crypto cipher signing sign private secret unseal master recovery hmac aes
    symmetric shared preshared psk wallet session api access auth authentication license root kek dek jwt vault
    backup webhook admin otp totp 2fa mfa client app
""")
_DATA_WORDS = _words("""
    public primary foreign sort partition cache caching object row routing idempotency lookup composite unique index
    hash map dict dictionary registry redis s3 bucket translation i18n shard sharding dedup deduplication range
    natural surrogate candidate compound search group message config json yaml table column field entry record react
    list gpg pgp ssh deploy host verify verification fingerprint cluster storage sorting hot content blob file chunk
    layer image artifact build commit tree manifest git etag request trace span correlation event job task lock
    legend keyboard hotkey shortcut piano music song mapping join ordering merge version node
    document doc item asset media upload download payload cursor page pagination query element sequence
""")
# Determiners and pronouns: "the key is <hex>" names no key, so its hex is a hash or an id.
_DETERMINERS = _words("the a an this that its my our your his her their which whose same each every any one")
# A line naming a hash: hex on it is a digest, whatever the key word before it says.
_HASH_WORDS = re.compile(r"(?<![^\W_])(?:sha-?\d*|sha3\w*|md5|blake\w*|digests?|checksums?|hash\w*|commits?|fingerprints?"
                         r"|etags?|integrity|sums?|crc\d*|rev(?:ision)?s?)(?![^\W_])", re.IGNORECASE)
# What a key of its own locks: hex of a key's length after these is that key ("the disk key was 9f86…").
_HOLDER_WORDS = _words("""
    disk disks drive drives volume volumes luks bitlocker filevault veracrypt truecrypt dm-crypt dmcrypt tenant tenants
    customer database db vault keystore keyring wrapping wrap wrapped data dek kek tde kms hsm archive backup device
    partition ssd usb laptop phone firmware boot bootloader bios uefi tpm wallet
""")
# A line about encryption: hex of a key's length after any content word there is a key.
_CRYPT_LINE = re.compile(r"(?<![^\W_])(?:(?:en|de)?crypt\w*|ciphers?|unlock\w*|unseal\w*|aes(?:-?\d+)?|xts|gcm|cbc"
                         r"|luks\d?)(?![^\W_])", re.IGNORECASE)
_KEY_HEX = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F]{48}|[0-9a-fA-F]{64}")
_WORD_BEFORE = re.compile(r"([A-Za-z0-9]+)[ \t_-]+$")
_UUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")
_FILE_NAME = re.compile(r"\.[A-Za-z]{2,5}$")
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_COOKIE_NAME = re.compile(r"[A-Za-z_][\w-]{0,40}=(?=[^=])")


def word_before(text: str, start: int) -> str:
    """The word right before ``start`` (joined to it by spaces, ``_`` or ``-``), lower-cased, or ``""``."""
    m = _WORD_BEFORE.search(text, max(0, start - 40), start)
    return m.group(1).lower() if m else ""


def _path_of_words(value: str) -> bool:
    """A resource path ("projects/p-1/locations/global/keyRings/r/cryptoKeys/k"): 3+ parts, half of them words."""
    parts = value.split("/")
    return len(parts) >= 3 and sum(p.isalpha() for p in parts) * 2 >= len(parts)


def random_base64(value: str) -> bool:
    """24+ characters with upper case, lower case, 3+ digits and entropy >= 3.8 bits/char."""
    return (len(value) >= 24 and sum(c.isdigit() for c in value) >= 3 and any(c.isupper() for c in value)
            and any(c.islower() for c in value) and _entropy(value) >= 3.8)


def key_material(value: str, named: bool) -> bool:
    """Whether ``value`` is key material after a label; ``named``: the label names a secret (module docstring)."""
    if not value or _placeholder(value) or _UUID.fullmatch(value) or _CONSTANT_NAME.fullmatch(value):
        return False
    if _path_of_words(value) or _FILE_NAME.search(value) or value.lower().startswith(("http", "www.")):
        return False
    return assignment_like(value) if named else random_base64(value)


def label_named(label: str, text: str, start: int) -> bool | None:
    """For the label ``label`` starting at ``start``: ``True`` when it names a secret, ``False`` when it names
    nothing either way, ``None`` when the word before it names a key of data or a public value."""
    before = word_before(text, start)
    if before in _DATA_WORDS:
        return None
    return label in ("cookie", "salt", "secret", "token") or before in _SECRET_WORDS


def _line_of(text: str, start: int, end: int) -> str:
    low = max(text.rfind("\n", 0, start) + 1, start - 120)
    high = text.find("\n", end)
    return text[low: min(high if high >= 0 else len(text), end + 120)]


def key_hex(value: str, text: str, label_start: int, value_end: int) -> bool:
    """Hex of a key's length after a word of content the lists lack, on a line naming no hash (module docstring)."""
    if not _KEY_HEX.fullmatch(value) or not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    before = word_before(text, label_start)
    if not before or before in _DETERMINERS or before.isdigit():
        return False
    line = _line_of(text, label_start, value_end)
    if _HASH_WORDS.search(line) is not None:
        return False
    return before in _HOLDER_WORDS or _CRYPT_LINE.search(line) is not None


def key_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span("v")
    label = m.group("key").lower()
    if _in_marker(text, start) or (named := label_named(label, text, m.start("key"))) is None:
        return None
    value = text[start:end].rstrip(".")
    if label == "cookie" and (name := _COOKIE_NAME.match(value)) is not None:
        start, value = start + name.end(), value[name.end():]
    if not key_material(value, named) and not (label == "key" and key_hex(value, text, m.start("key"), end)):
        return None
    return (start, start + len(value))


# ---- short passwords ------------------------------------------------------------------------------------
SHORT_TAIL = (
    r"(?:[\"']?[ \t]*(?P<sep>[:=])[ \t]*|[ \t]+(?P<sis>is|was)[ \t]+)"
    r"(?:(?P<qc>[\"'`])(?P<q>[^\s\"'`]{1,5})(?P=qc)|(?P<v>(?!\*)[^\s\"'`,;&()\[\]{}<>]{1,6}))"
    r"(?![^ \r\n\"'`,;&)\]}>])"  # not a tab: in a decoded reading it is an escape inside a longer value
)
_NOT_SHORT = _words("""
    true false yes no on off skip skipped fail ok okay done todo tbd same auto unset empty blank any all see nil ask
    env file vault none null here there below above later soon n/a unknown set hash salt plain text hidden mask
    given sent stdin ldap sso oauth saml token key keys cert pin otp totp prompt input bool str string int char
    bytes void new old long short weak strong good bad valid ready yours mine both each same none mfa twofa
    sshkey local type hint value field label name 2fa u2f sso otp n/a tba
""")
# What a sentence puts after "pw is": "the pw is fine", "… is long enough", "… is here".
_NOT_AFTER_IS = _words("""
    fine safe easy hard long here there gone lost known used wrong right okay cool nice good open free full real fake
    sent set same weak also just only very too still what this that when case dead live less more much most
""")
_SHORT_LABELS = frozenset(("pw", "pwd", "passwd", "password", "pass"))
# What may stand before "pass:" on its line for it to be a label: nothing (list or quote marks), a bracket, a comma,
# a pipe or a slash, or a user name given just before ("user: root pass: toor"); "tests pass: 42 of 42", "mountain
# pass: Furka" and "boarding pass: A12" have a word before it.
_PASS_HEAD = re.compile(r"(?:^|[(\[,;|/]|(?<![^\W_])(?:user(?:name)?|login|u)[ \t]*[:=][ \t]*[^\s,;]{1,64})[ \t>*+-]*$",
                        re.IGNORECASE)
_CLAUSE_END = re.compile(r"[ \t]*(?:[.!?;,)\]}>\"'`\n]|$)")
_HARD = re.compile(r"[^A-Za-z0-9\-_./:']")
_GOES_ON = re.compile(r"[ \t]+[A-Za-z][\w-]*(?![\w-]*[=:])")


# Words a form or a page puts under "Password" (a capitalised word there is one of these or a password).
_FORM_WORDS = _words("""
    submit signin signup register cancel confirm continue remember forgot forget username email hidden visible
    strength medium excellent invalid warning success loading please verify repeat retype generate random change
    update create delete unlock login logout account profile settings security privacy details sample unchanged
    another choose select toggle button caption tooltip minimum maximum characters numbers letters symbols digits
    policy rules requirements criteria format pattern expires expiry expiration never always reveal mask unmask
    spaces allowed session access recovery backup manager vault keychain keyring lastpass bitwarden welcome
""")


def password_like(value: str, *, short: bool, capital: bool = False) -> bool:
    """Whether ``value``, given right under or after a password label (a column header, a label on the line
    before, ``pw:``), reads as a password: 6+ characters mixing letters with digits or symbols, 6+ digits, or a
    small-letter word of 6+ letters that prose does not put there; with ``short``, also 4-5 characters with a
    letter that are none of ``_NOT_SHORT``; with ``capital``, also a capitalised word of 6+ letters that is none of
    the words a form puts there (``_FORM_WORDS``: "Password:\nSunflower", not "Password:\nRequired"). A word with
    sentence punctuation ("Welcome!", "Authenticating...") is read as the word."""
    if (core := value.rstrip(".!?")) != value and core.isalpha():
        value, capital = core, False  # "Welcome!", "Done.": a sentence, not a capitalised password
    low = value.lower()
    if len(value) < 4 or _placeholder(value) or low in _NOT_A_PASSWORD or low in _PROSE_WORDS or low in _NOT_SHORT:
        return False
    if value[0] in "/~.\\-" or "://" in value or value.endswith(":") or technical(value) or _CODE_REF.match(value):
        return False
    has_alpha = any(c.isalpha() for c in value)
    if value.isdigit():
        return len(value) >= 6
    if not has_alpha:
        return False
    if value.isalpha():
        if capital and len(value) >= 6 and value[0].isupper() and value[1:].islower() and low not in _FORM_WORDS:
            value = low
        if not value.islower():
            return False  # "Required", "Remember": a form's words
        return (len(value) >= 6 and _PROSE_SUFFIX.search(value) is None) or (short and len(value) < 6)
    return len(value) >= 6 or short


def short_password(m: re.Match[str], text: str) -> tuple[int, int] | None:
    key = m.group("key")
    key_start = m.start("key")
    if key_start > 0 and text[key_start - 1].isalnum() and not key.isupper():
        return None  # "1Password:", "bypass=": another word
    if key.lower() == "pass" and m.group("sep") != "=" and (
            m.group("sep") != ":" or _PASS_HEAD.search(text[text.rfind("\n", 0, key_start) + 1:key_start]) is None):
        return None  # "tests pass: 42 of 42", "the pass is valid"
    if key.lower() == "pass" and m.group("sep") == ":" and not 4 <= len(m.group("q") or m.group("v")) <= 5:
        return None  # "pass: 42x", "pass: x": a score or a grade; "pass: toor" is a password
    group = "q" if m.group("q") is not None else "v"
    start, end = m.span(group)
    value = text[start:end]
    if group == "v":
        value = value.rstrip(".")
        end = start + len(value)
        if not value:
            return None  # "password: ..": dots, no value (this once raised IndexError)
    if "\\" in value or _in_marker(text, start):
        return None  # a backslash: an escape ("password: x\\n" in a docstring), read decoded elsewhere
    if len(value) == 1:
        # one letter ("pass = x"), the label a word of its own (not "first_pass = x" in code, not "``password: x``"
        # quoting an example), not an answer (y/n)
        alone = key_start == 0 or not (text[key_start - 1].isalnum() or text[key_start - 1] in "_.`\"'")
        return (start, end) if (alone and m.group("sep") is not None and value.isalpha() and value.lower() not in "yn"
                                and _CLAUSE_END.match(text, end)) else None
    if m.group("sis") is not None or len(value) < 4:
        return _short_or_said(key.lower(), value, m.group("sis") is not None, text, start, end)
    if len(value) > 5:
        return None
    if value.isdigit():
        if key.lower() == "pass" or len(set(value)) <= 2:
            return None  # "pass=1234 fail=0" counts tests
    elif not password_like(value, short=True):
        return None
    if value.isalpha() and m.group("sep") == ":" and _GOES_ON.match(text, end):
        return None  # "password: same as ssh": the sentence goes on ("PGPASSWORD=toor psql" is a command)
    return (start, end)


def _short_or_said(label: str, value: str, said: bool, text: str, start: int, end: int) -> tuple[int, int] | None:
    """``pw is toor`` (``said``: 4-5 characters after "is"/"was") and ``password: 42x`` (2-3 characters after
    ``:``/``=``): module docstring."""
    if label not in _SHORT_LABELS or _CLAUSE_END.match(text, end) is None:
        return None
    low = value.lower()
    if said:
        if not 4 <= len(value) <= 5 or low in _NOT_AFTER_IS:
            return None
        if value.isdigit():
            return (start, end) if len(set(value)) > 2 else None
        return (start, end) if password_like(value, short=True) else None
    if len(value) > 3 or low in _NOT_SHORT or value[0] in "$<{%*[(?-." or len(set(low)) == 1:
        return None
    if value.isdigit():
        return (start, end) if len(value) == 3 else None
    letters = any(c.isalpha() for c in value)
    return (start, end) if letters and (any(c.isdigit() for c in value) or _HARD.search(value)) else None
