"""Secret rows that read a credential out of a text's layout rather than one line of it (:mod:`.secrets` holds the
table): a value alone on the line after its label, and the cells of a Markdown table under a column named for a
password or a token. The value checks are :mod:`._secret_keys`' own (``password_like``, ``key_material``); the
next-line form shares its row with the same-line form of :mod:`._secret_keys` (one look for the labels' places).

A value on the next line (``password_in_prose`` / ``secret_assignment``, their next-line form)
----------------------------------------------------------------------------------------------
``Password:\\nXk29!fpQ7zz``, ``password:\\n  Xk29!fpQ7zz``, ``API key:\\n\\n4Gx7…``, ``**Password:**\\n`Xk29…```:
a label line holding a password label (password, passwd, passphrase, passcode, pwd, pw, Passwort, Kennwort,
contraseña, senha, пароль) or a key label (secret, token, key, cookie, seed, salt), perhaps a
qualifier in brackets and ``**``, then ``:`` and the end of the line, or, with no colon, a Markdown heading that
ends with the label (``## Password``, ``### API token``, a bold ``**Password**`` line); at most one blank line and a
fence line (```` ``` ````, ``~~~``); then a line holding one value and nothing else (indented, or in quotes or
backticks). Before the label on its line stand at most four
words and list or quote marks ("- Prod DB password:", "The backup encryption key:"): a sentence that ends in a
label is prose. The value must read as a password (``password_like``, short values and capitalised words that no
form puts there too: ``Password:\\ntoor``, ``Password:\\nSunflower``, not ``Password:\\nRequired``) or as
key material after that label (``key_material``; a key of data, "sort key:\\ncreated_at", is none). Form dumps and
YAML stay: "Password:\\nRemember me" and "password:\\n  valueFrom:" hold no lone value.

A Markdown table (``password_in_prose`` / ``secret_assignment``, their table form)
---------------------------------------------------------------------------------
``| host | user | password |\\n|---|---|---|\\n| db | admin | Xk29!fpQ7zz |``: a separator row (``|---|:--:|``, with
or without the outer pipes) under a header row of as many cells, one of which names a password (its last word is a
password label: "password", "DB Password", "root pw") or a secret ("token", "API token", "secret", "API key",
"cookie": ``label_named``); every row after it with the header's number of cells, up to the first line without a
pipe, gives the cell in that column when it reads as a password or as key material. A second password column of one
table is missed.

A table row with no header (``password_in_prose``, its row form)
----------------------------------------------------------------
``| prod-db | admin | Xk29!fpQ7zz |``: nothing names the column, so the row itself or the line above its table must
show that it lists logins. A cell counts when

* it comes right after a cell holding an account name people log in with (admin, root, deploy, postgres, ubuntu,
  ec2-user, sa, …: ``_ACCOUNTS``) and reads as a password that is not a word (``password_like``, letters mixed
  with digits or symbols, not an identifier, a hyphenated term, an e-mail address, a version or a hex id): "| db |
  admin | hunter2 |"; or
* it comes after an e-mail address and also looks random (three kinds of character, or letters with 3+ digits);
* the first line above the table's block names credentials (credentials, creds, passwords, logins, Zugangsdaten,
  пароли, …), or the block's first row does as a header with no separator ("| host | user | pass |"), and the cell
  also looks random: "Staging logins\n| web-1 | jsmith | Fq83!zLw0p |".

* it is the row's last cell, comes right after a known account name, and is a word or words joined by hyphens
  (``| admin | sunflower |``, ``| root | toor |``, ``| deploy | correct-horse |``) in a table with no separator
  row above it (a header would name the column), none of them a word a table of accounts puts there (a role, a
  permission, a team, a shell, a state, an environment: ``_ROW_WORDS``; prose words and -ed, -ly, -ing, …
  endings), 4 to 40 letters, not the account name again.

An ordinary table ("| user | string | required |", "| admin | read-write |", "| root | /root | 0700 |", "| staging |
eu-west-1 |", "| alice | backend |") gives nothing. Costs: a random password under an account name that is not a
known one with no credential word above the table is missed, and so is a word password under a header that does
not name it; a word under a known account in a headerless table that the role list lacks ("| admin | sunflower |"
meaning a team) is replaced.
"""

from __future__ import annotations

import re

from ._secret_keys import (
    _NOT_SHORT,
    KEY_TAIL,
    SHORT_TAIL,
    _words,
    key_material,
    label_named,
    password_like,
    short_password,
)
from ._secret_keys import key_value as same_line_key
from ._secret_phrases import _EMAIL, _IDENTIFIER, _TERM, _VERSION, _random_looking
from ._secret_values import _COMMON_WORDS, _NOT_A_PASSWORD, _PROSE_SUFFIX, _PROSE_WORDS, _in_marker
from ._text import fold


def _folded(*words: str) -> str:
    return "|".join(re.escape(fold(w).text).replace(r"\ ", r"[ \t]+") for w in words)


_PASSWORD_LABELS = _folded("password", "passwd", "passphrase", "passcode", "passwort", "pwd", "pw", "kennwort",
                           "contraseña", "senha", "пароль")
_KEY_LABELS = "secret|token|key|cookie|seed|salt"
_SHORT_LABELS = frozenset(("password", "passwd", "pwd", "pw", "pass"))
_NEXT_LINE = (r"[ \t]*(?:\([^)\n]{1,30}\)[ \t]*)?(?:\**[ \t]*:[ \t]*\**|(?P<nh>\**))[ \t]*\r?\n(?:[ \t]*\r?\n)?"
              r"(?:[ \t]*(?:```|~~~)[\w-]{0,20}[ \t]*\r?\n)?[ \t]*"  # a fence may open the value's block
              r"(?:(?P<nqc>[\"'`])(?P<nq>[^\s\"'`]{4,400})(?P=nqc)|(?P<nv>[^\s\"'`]{4,400}))[ \t]*(?=\r?\n|$)")
# One row a label family, each with its same-line form (``_secret_keys``) and its next-line form: one look for the
# keywords' places serves both.
PASSWORD_PATTERN = rf"(?P<key>{_PASSWORD_LABELS}|pass)(?![A-Za-z0-9])(?:{SHORT_TAIL}|{_NEXT_LINE})"
KEY_PATTERN = rf"(?<![A-Za-z0-9])(?P<key>{_KEY_LABELS})(?![A-Za-z0-9])(?:{KEY_TAIL}|{_NEXT_LINE})"
PASSWORD_KEYWORDS = tuple(fold(w).text.lower() for w in ("pass", "pw", "kennwort", "contrase", "senha", "пароль"))
KEY_KEYWORDS = ("secret", "token", "key", "cookie", "seed", "salt")
# What may stand before the label on its line: list, quote or heading marks, a number, at most four words.
_LINE_HEAD = re.compile(r"[ \t>#*+-]*(?:\d{1,2}[.)][ \t]*)?\**(?:[^\W\d_][\w'.-]{0,20}[ \t_-]+){0,4}$")


def _label_line(text: str, key_start: int) -> bool:
    line_start = text.rfind("\n", 0, key_start) + 1
    return key_start - line_start <= 80 and _LINE_HEAD.match(text, line_start, key_start) is not None


# A heading: the label line starts with "#" marks, or is bold as a whole ("**Password**").
_HEADING = re.compile(r"[ \t]{0,3}(?:#{1,6}[ \t]|\*\*)")


def _next_line_value(m: re.Match[str], text: str, *, password: bool) -> tuple[int, int] | None:
    key_start = m.start("key")
    if (key_start > 0 and text[key_start - 1].isalnum()) or not _label_line(text, key_start):
        return None
    if m.group("nh") is not None:  # no colon: only a heading names what the next line holds ("## Password")
        heading = _HEADING.match(text, text.rfind("\n", 0, key_start) + 1)
        if heading is None or heading.group().endswith("**") != (m.group("nh") == "**"):
            return None
    group = "nq" if m.group("nq") is not None else "nv"
    start, end = m.span(group)
    value = text[start:end]
    if _in_marker(text, start):
        return None
    if password:
        return (start, end) if password_like(value, short=True, capital=True) else None
    named = label_named(m.group("key").lower(), text, key_start)
    return (start, end) if named is not None and key_material(value, named) else None


def password_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A short password on the label's line (``pw: toor``) or any password on the line after it."""
    label = m.group("key").lower()
    if m.group("sep") is not None or m.group("sis") is not None:
        return short_password(m, text) if label in _SHORT_LABELS else None
    return None if label == "pass" else _next_line_value(m, text, password=True)


def key_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """Key material on the label's line (``encryption key: …``) or on the line after it (``secret:\\n…``)."""
    if m.group("v") is not None:  # "secret: X" and "token is X" on one line are the assignment row's
        return None if m.group("key").lower() in ("secret", "token") else same_line_key(m, text)
    return _next_line_value(m, text, password=False)


# ---- Markdown tables ------------------------------------------------------------------------------------
_CELL_RULE = r"[ \t]*:?-{3,}:?[ \t]*"
# A separator row at a line's start, indented by at most 8: its first "---" stands at most ``TABLE_ANCHOR``
# characters after the match's start, so the row is tried only there (``_secret_search.anchored``); the header's
# words are the validator's to read.
TABLE_PATTERN = (rf"(?<![^\n])[ \t]{{0,8}}(?:\|[ \t]{{0,4}}:?-{{3,}}:?[ \t]*(?:\|{_CELL_RULE})*\|?"
                 rf"|:?-{{3,}}:?[ \t]*(?:\|{_CELL_RULE})+\|?)[ \t]*\r?(?=\n|\Z)")
TABLE_KEYWORDS = ("---",)
TABLE_ANCHOR = 14
TABLE_HINT = r"\|[ \t]*:?---|---:?[ \t]*\|"
_HEADER_WORDS = re.compile(r"pass|pw|kennwort|contrase|senha|пароль|secret|token|key|cookie|seed|salt".replace(
    "пароль", fold("пароль").text.lower()), re.IGNORECASE)
_PIPE = re.compile(r"(?<!\\)\|")
_HEADER_PASSWORD = re.compile(rf"(?:^|[ \t_-])(?:{_PASSWORD_LABELS})$", re.IGNORECASE)
_HEADER_KEY = re.compile(rf"(?:^|[ \t_-])(?P<key>{_KEY_LABELS})$", re.IGNORECASE)
_MAX_ROWS = 1000


def _cells(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The cells of the table line ``text[start:end]`` as stripped spans, without the outer pipes' empty cells."""
    bounds = [start] + [p.start() for p in _PIPE.finditer(text, start, end)] + [end]
    cells = []
    for i in range(len(bounds) - 1):
        low, high = bounds[i] + (i > 0), bounds[i + 1]
        while low < high and text[low] in " \t":
            low += 1
        while high > low and text[high - 1] in " \t\r":
            high -= 1
        cells.append((low, high))
    if cells and cells[0][0] == cells[0][1] and text[start:bounds[1]].strip() == "":
        cells.pop(0)
    if cells and cells[-1][0] == cells[-1][1]:
        cells.pop()
    return cells


def _header_columns(text: str, cells: list[tuple[int, int]], password: bool) -> list[int]:
    """The columns of a header row named for a password (``password``) or a secret."""
    columns = []
    for i, (low, high) in enumerate(cells):
        name = text[low:high].strip("*_` \t")
        name = re.sub(r"[ \t]*\([^)]*\)$", "", name)  # "Password (prod)"
        if len(name.split()) > 3:
            continue
        if password:
            named = _HEADER_PASSWORD.search(name) is not None
        else:
            key = _HEADER_KEY.search(name)
            named = key is not None and bool(label_named(key.group("key").lower(), name, key.start("key")))
        if named:
            columns.append(i)
    return columns


def _table_cells(m: re.Match[str], text: str, *, password: bool) -> list[tuple[int, int]] | None:
    rule_start = m.start()
    if rule_start == 0:
        return None
    header_start = text.rfind("\n", 0, rule_start - 1) + 1
    if _HEADER_WORDS.search(text, header_start, rule_start) is None:
        return None  # no column can name a secret
    header = _cells(text, header_start, rule_start - 1)
    if len(header) != len(_cells(text, rule_start, m.end())) or "|" not in text[header_start:rule_start]:
        return None
    columns = _header_columns(text, header, password)
    if not columns:
        return None
    spans = []
    pos = m.end()
    for _ in range(_MAX_ROWS):
        if not text.startswith("\n", pos):
            break
        line_end = text.find("\n", pos + 1)
        line_end = len(text) if line_end < 0 else line_end
        if "|" not in text[pos + 1:line_end]:
            break
        row = _cells(text, pos + 1, line_end)
        pos = line_end
        if len(row) != len(header):
            continue
        for col in columns:
            low, high = row[col]
            if high - low >= 2 and text[low] == text[high - 1] and text[low] in "`\"'":
                low, high = low + 1, high - 1
            value = text[low:high]
            if not value or any(c.isspace() for c in value) or _in_marker(text, low):
                continue
            if password_like(value, short=True, capital=True) if password else key_material(value, True):
                spans.append((low, high))
    return spans or None


def table_password(m: re.Match[str], text: str) -> list[tuple[int, int]] | None:
    return _table_cells(m, text, password=True)


def table_key(m: re.Match[str], text: str) -> list[tuple[int, int]] | None:
    return _table_cells(m, text, password=False)


# ---- a table row with no header --------------------------------------------------------------------------------
# The row is tried at each "|" that starts a line (indented by at most 8); the validator reads the cells.
ROW_PATTERN = r"(?<![^\n])[ \t]{0,8}\|[^\n]{3,2000}\|[ \t]*\r?(?=\n|\Z)"
ROW_KEYWORDS = ("|",)
ROW_ANCHOR = 8
ROW_HINT = r"\|[^|\n]+\|[^|\n]+\|"
_ACCOUNTS = frozenset((
    "admin", "administrator", "root", "deploy", "deployer", "postgres", "ubuntu", "ec2-user", "centos", "debian", "sa",
    "sysadmin", "dba", "dbadmin", "operator", "superuser", "jenkins", "gitlab-runner", "oracle", "elastic", "kibana",
    "grafana", "rabbitmq", "ci", "svc", "service", "www-data", "ftp", "sftp", "backup", "readonly", "readwrite", "app",
    "appuser", "webadmin", "manager", "owner", "master"))
_CREDENTIAL_WORDS = re.compile(
    r"credential|creds|password|passwort|kennw|login|zugangsdaten|contrase|senha|mot de passe|" + fold("пароль").text,
    re.IGNORECASE)
_HEX_ID = re.compile(r"[0-9a-fA-F]{7,64}")
# The block's first row read as a header with no separator under it ("| host | user | pass |").
_HEADER_NAMES_PASSWORD = re.compile(r"(?<![^\W_])(?:pass|pw|pwd|password|passwort|kennwort|secret|creds?)(?![^\W_])",
                                    re.IGNORECASE)


def _not_a_word(value: str) -> bool:
    """A password that is not a word, an id or a name: ``password_like`` with letters mixed with something else."""
    if value.isalpha() or not password_like(value, short=False):
        return False
    return not (_IDENTIFIER.fullmatch(value) or _TERM.fullmatch(value) or _EMAIL.fullmatch(value)
                or _VERSION.fullmatch(value) or _HEX_ID.fullmatch(value))


def _credentials_above(text: str, line_start: int) -> bool:
    """Whether the first line above the table block holding ``line_start`` (one blank line between) names
    credentials."""
    pos, blank, top = line_start, False, None
    for _ in range(50):
        if pos == 0:
            break
        above = text.rfind("\n", 0, pos - 1) + 1
        line = text[above:pos - 1]
        if not line.strip() and not blank:
            pos, blank = above, True
            continue
        if "|" not in line:
            if _CREDENTIAL_WORDS.search(line) is not None:
                return True
            break
        pos, top = above, line
    return top is not None and _HEADER_NAMES_PASSWORD.search(top) is not None


# What a table of accounts puts after an account name that is no password: roles, permissions, teams, shells,
# states, environments, branches.
_ROW_WORDS = _words("""
    read write readonly readwrite rw ro full access admin administrator owner owners member members maintainer developer
    developers reporter guest guests viewer viewers editor editors contributor author reader writer user users group
    groups staff wheel sudo sudoers root superuser operator operators manager lead none all any enabled disabled active
    inactive locked unlocked yes no true false required optional default allowed denied allow deny grant granted
    revoked pending approved expired valid invalid internal external public private shared backend frontend fullstack
    ops devops sre platform infra infrastructure security support sales billing finance marketing design product
    engineering qa data analytics team primary secondary replica master leader follower local remote global
    production staging development test testing prod dev stage shell bash zsh sh fish nologin interactive service
    system daemon human bot robot machine scheduled manual auto automatic only limited restricted unrestricted
    superadmin sysadmin disabled suspended deleted archived main trunk release develop everyone nobody self other
    home login logins password passwords key keys token tokens ssh sftp ftp web api cli ui console portal dashboard
    database db server servers host hosts node nodes cluster region zone east west north south central
""")


def _block_has_header(text: str, line_start: int) -> bool:
    """Whether a separator row (``|---|``) stands in the table block above the line starting at ``line_start``."""
    pos = line_start
    for _ in range(_MAX_ROWS):
        if pos == 0:
            return False
        above = text.rfind("\n", 0, pos - 1) + 1
        line = text[above:pos - 1]
        if "|" not in line:
            return False
        if re.fullmatch(r"[ \t|:-]*-{3,}[ \t|:-]*\r?", line):
            return True
        pos = above
    return False


def _word_password(value: str, user: str) -> bool:
    """A password of words after a known account name (module docstring): "sunflower", "toor", "correct-horse"."""
    low = value.lower()
    parts = low.split("-")
    if not 4 <= len(value) <= 40 or low == user or not all(p.isalpha() and p.isascii() for p in parts):
        return False
    if not (value.islower() or (value[0].isupper() and value[1:].islower())):
        return False
    if any(len(p) < 2 or p in _ROW_WORDS or p in _NOT_SHORT for p in parts):
        return False
    prose = [p in _PROSE_WORDS or p in _NOT_A_PASSWORD or (p not in _COMMON_WORDS and _PROSE_SUFFIX.search(p) is not None)
             for p in parts]
    return not any(prose) if len(parts) == 1 else not all(prose)  # "correct-horse": one word of prose is a phrase


def row_password(m: re.Match[str], text: str) -> list[tuple[int, int]] | None:
    """The password cells of a table row with no header naming them (module docstring)."""
    line_start = text.rfind("\n", 0, m.start() + 1) + 1
    cells = _cells(text, line_start, m.end())
    if len(cells) < 2:
        return None
    above = None
    spans = []
    for i, (low, high) in enumerate(cells):
        if high - low >= 2 and text[low] == text[high - 1] and text[low] in "`\"'":
            low, high = low + 1, high - 1
        value = text[low:high]
        if not value or any(c.isspace() for c in value) or _in_marker(text, low):
            continue
        user = text[cells[i - 1][0]:cells[i - 1][1]].strip("`*_ ").lower() if i else ""
        if not _not_a_word(value):
            if (i == len(cells) - 1 and user in _ACCOUNTS and _word_password(value, user)
                    and not _block_has_header(text, line_start)):
                spans.append((low, high))
            continue
        if user in _ACCOUNTS or (_EMAIL.fullmatch(user) and _random_looking(value)):
            spans.append((low, high))
            continue
        if above is None:
            above = _credentials_above(text, line_start)
        if above and _random_looking(value):
            spans.append((low, high))
    return spans or None
