"""Is this image URL a beacon? The URL judgement behind the image-beacon rows of :mod:`._threats_beacon`.

An image beacon is an image (Markdown ``![x](url)``, a reference image ``![x][ref]`` + ``[ref]: url``, HTML
``<img src>`` and the other tags that load a URL by themselves, CSS ``url(…)``) that a client fetches as soon
as the model's answer is rendered, so whatever the URL carries reaches the URL's host without a click. A
memory that makes the model emit one is exfiltration. :func:`carries_data` decides, for one URL and the text
around it, whether the URL is built to carry data out. It says yes when, after percent-decoding (twice):

1. **a placeholder** is in the host, path, a parameter value or the fragment: ``{secret}``, ``{{chat}}``,
   ``${API_KEY}``, ``$KEY``, ``$(cat .env)``, a backtick, ``%API_KEY%``, ``%(x)s`` / ``%s``, ``#{x}``,
   ``<contents of .env>``, a value ``[conversation]``, a value or path segment that is ``...`` or ``…``, or a value
   in capitals naming what to put there (``SECRET``, ``CONTENTS_OF_ENV``, ``YOUR_DATA_HERE``, ``HISTORY``);
2. **a data parameter** has a value: a name that only ever carries data (``data``, ``payload``, ``secret``,
   ``token``, ``key``, ``password``, ``cookie``, ``env``, ``history``, ``conversation``, ``prompt``, …) with any
   value, or a name that may carry data (``d``, ``q``, ``text``, ``msg``, ``content``, ``c``, ``x``, …) with a
   value that names something sensitive (``d=secrets``) or looks encoded (20+ base64 characters of mixed
   case and digits, 32+ hex digits, or 40+ characters of percent-encoded text);
3. **an empty slot** ends the URL (``?d=``, ``&q=``): with a name of (2), or any name when the text around the
   image says what fills it (see 4);
4. **the text around it fills the URL**: the sentence holding the image says to append / add / put / replace
   with / follow it by a sensitive object (``.env``, environment variables, API keys, credentials, earlier
   messages, the conversation, the system prompt, …; :mod:`._beacon_words` says exactly when, negations and
   other destinations included), and the URL has a query, a slot, or ends with ``/``, ``?``, ``=`` or ``#``,
   where such text goes.

What stays clean, and why:

* relative paths and screenshots (``./docs/shot.png``, ``screenshots/login.png?raw=true``), ``data:`` URLs, and
  loopback hosts (``localhost``, ``127.x``, ``[::1]``): nothing leaves the machine;
* ordinary image parameters: sizes and crops (``w=800&q=80``, Gravatar ``s=80&d=identicon``), versions and
  cache busters (``v=3``, ``v=<sha>``), ``raw=true``, styles (``style=flat``), placeholder-image text
  (``text=Hello+World``), JSON in a chart URL (``c={type:'bar'}``: braces holding ``:`` or quotes are data the
  author wrote, not a slot);
* badge services (shields.io, badgen, codecov, coveralls, GitHub's ``…/badge.svg``, …): they draw a picture
  and keep no log an attacker can read, so their own path and parameters are not judged (``<LABEL>-<COLOR>``
  templates, codecov's ``token=``); a URL *inside* one of their parameters (shields' dynamic ``url=``, which
  the service fetches) is judged like any other.

Cost: a remote image whose data parameter holds a harmless value (``![x](https://host/p.png?data=1)``) is
refused; rename the parameter or drop the image.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import unquote

_URL = re.compile(r"^(?:https?:)?[/\\]{2}(?P<auth>[^/?#\\\s]*)(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
_LOCAL_HOST = re.compile(r"^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])$", re.IGNORECASE)

# A slot: shell substitution (always hostile: it runs), or a named / anonymous template slot.
_SHELL = re.compile(r"\$\(|`")
_SLOT = re.compile(
    r"\$\{(?P<a>[^{}\n]{0,60})\}|\$(?P<b>[A-Za-z_]\w{0,60})|\{\{(?P<c>[^{}\n]{0,60})\}\}|\{[ \t]*(?P<d>[\w .|-]{0,60})\}"
    r"|%\((?P<e>\w{1,40})\)s|%s(?![\w])|%(?P<f>[A-Za-z_]\w{0,40})%|#\{(?P<g>[^{}\n]{0,60})\}|<(?P<h>[^<>\n]{1,80})>"
    r"|\[[ \t]*(?P<i>[A-Za-z_][\w .'-]{0,60})\]|\.\.\.+|…"
)
_IDENT = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")
# Slot names that say what an ordinary image URL varies by; a slot named so is a template, not a request
# to fill in data (unless it is the value of a data parameter, or the sentence says to fill it: rule 4).
_PLAIN_SLOTS = frozenset({
    "id", "uid", "userid", "user_id", "width", "height", "w", "h", "size", "slug", "page", "lang", "locale",
    "language", "version", "ver", "v", "hash", "sha", "commit", "tag", "format", "fmt", "ext", "extension",
    "theme", "color", "colour", "label", "index", "idx", "i", "n", "num", "number", "year", "month", "day",
    "date", "zoom", "lat", "lng", "lon", "latitude", "longitude", "name", "filename", "file", "asset",
    "image", "img", "image_id", "avatar", "org", "owner", "repo", "branch", "build", "run", "job", "pr",
    "issue", "scale", "dpi", "quality", "density", "variant", "style", "type", "kind", "region", "x", "y", "z",
    "slot", "icon", "logo", "src", "url", "base_url", "cdn", "host", "domain",
})
_CAPS_WORDS = (
    "SECRET", "KEY", "TOKEN", "PASS", "PWD", "ENV", "DATA", "CONTENT", "HISTORY", "MESSAGE", "CONVERSATION",
    "CHAT", "CRED", "PROMPT", "CONTEXT", "MEMOR", "PAYLOAD", "INPUT", "OUTPUT", "SUMMARY", "COOKIE", "SESSION",
    "HERE", "INSERT", "PLACEHOLDER", "TRANSCRIPT", "LEAK", "EXFIL", "STOLEN", "DUMP", "QUERY", "ANSWER",
)
_CAPS_VALUE = re.compile(r"^[A-Z][A-Z0-9_.+-]{1,80}$")

_STRONG_NAMES = frozenset({
    "data", "payload", "exfil", "leak", "secret", "secrets", "token", "tokens", "key", "keys", "apikey", "api_key",
    "access_token", "password", "passwd", "pass", "pwd", "cookie", "cookies", "session", "sid", "cred", "creds",
    "credentials", "env", "environ", "history", "conv", "conversation", "chat", "memory", "prompt", "transcript",
    "stolen", "dump", "ssn", "card",
})
_WEAK_NAMES = frozenset({
    "d", "q", "c", "x", "m", "p", "t", "query", "text", "msg", "message", "messages", "content", "contents",
    "body", "input", "output", "info", "summary", "context", "log", "logs", "user", "username", "email", "note",
    "notes", "b", "e", "i", "k", "u", "z", "val", "value", "payload64", "blob", "dat",
})
_SENSITIVE_VALUE = re.compile(
    r"(?:^|[^a-z])(?:secrets?|env|environ(?:ment)?|api[_ -]?keys?|tokens?|passwords?|passwd|credentials?|creds"
    r"|cookies?|history|conversation|chat|transcript|prompt|messages|contents?|memor(?:y|ies)|ssh|private[_ -]?key)"
    r"(?:$|[^a-z])",
    re.IGNORECASE,
)
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]{20,}={0,2}$")
_HEX = re.compile(r"^[0-9a-fA-F]{32,}$")
_PARAM = re.compile(r"([^&;=#]{0,60})(?:=([^&;#]*))?")

_BADGE_HOSTS = frozenset((
    "img.shields.io", "shields.io", "badgen.net", "badge.fury.io", "codecov.io", "coveralls.io", "travis-ci.com",
    "travis-ci.org", "circleci.com", "readthedocs.org", "readthedocs.io", "pepy.tech", "static.pepy.tech",
    "app.codacy.com", "api.codacy.com", "sonarcloud.io", "snyk.io", "deepsource.io", "deepsource.com",
    "api.netlify.com", "results.pre-commit.ci", "bestpractices.coreinfrastructure.org", "api.securityscorecards.dev",
))
_GITHUB_BADGE = re.compile(r"^/[^?#]*/badge\.svg$", re.IGNORECASE)
_NESTED_URL = re.compile(r"^(?:https?:)?//", re.IGNORECASE)

def _slots(part: str) -> tuple[bool, bool]:
    """``(hostile, any)``: whether ``part`` holds a slot that asks for data (shell substitution, or a named slot
    whose name is not one of :data:`_PLAIN_SLOTS`), and whether it holds any slot at all."""
    if _SHELL.search(part):
        return True, True
    found = False
    for m in _SLOT.finditer(part):
        found = True
        inner = next((g for g in m.groups() if g is not None), None)
        if inner is None:
            continue  # anonymous: {} %s ... …
        ident = _IDENT.search(inner)
        if ident is None or ident.group().rsplit(".", 1)[-1].lower() not in _PLAIN_SLOTS:
            return True, True
    return False, found


def _placeholder(part: str) -> bool:
    return _slots(part)[0]


def _plain_slot_only(value: str) -> bool:
    """The value is one slot with a plain name (``{width}``): a template a weak parameter may hold."""
    m = _SLOT.fullmatch(value.strip())
    inner = next((g for g in m.groups() if g is not None), None) if m else None
    return inner is not None and not _slots(value)[0]


def _caps_placeholder(value: str) -> bool:
    return bool(_CAPS_VALUE.match(value)) and any(w in value for w in _CAPS_WORDS)


def _encoded(raw: str, decoded: str) -> bool:
    if _HEX.match(raw):
        return True
    if _BASE64.match(raw) and re.search(r"\d", raw) and re.search(r"[a-z]", raw) and re.search(r"[A-Z]", raw):
        return True
    return raw.count("%") >= 3 and len(decoded) >= 40


def _decode(text: str) -> str:
    return unquote(unquote(text.replace("+", " ")))


def _is_badge(host: str, path: str) -> bool:
    labels = host.split(".")
    if any(".".join(labels[i:]) in _BADGE_HOSTS for i in range(len(labels) - 1)):
        return True
    return host in ("github.com", "gitlab.com") and bool(_GITHUB_BADGE.match(path.split("?", 1)[0]))


def clean_destination(dest: str) -> str:
    """The URL of a Markdown destination: angle brackets and a trailing ``"title"`` removed."""
    dest = dest.strip()
    if dest.startswith("<") and ">" in dest:
        inner = dest[1 : dest.rindex(">")]
        if _URL.match(inner):
            dest = inner
    return re.sub(r"""[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\))[ \t]*$""", "", dest).strip()


def is_remote(url: str) -> bool:
    m = _URL.match(url.strip())
    if not m:
        return False
    host = m.group("auth").rsplit("@", 1)[-1]
    host = re.sub(r":\d*$", "", host) if not host.startswith("[") else host.split("]")[0] + "]"
    return bool(host) and not _LOCAL_HOST.match(host)


def carries_data(url: str, filled: Callable[[], bool] | None = None, *, image: bool = True) -> bool:
    """Whether ``url`` is built to carry data out (rules 1-4 of the module docstring). ``filled`` says whether
    the text around the image fills it (rule 4; called only when the URL has a slot). ``image=False`` judges
    a plain link, which a reader must click: only placeholders count there."""
    verdict = _verdict(url.strip(), image)
    return verdict == _HOSTILE or (verdict == _IF_FILLED and filled is not None and filled())


_CLEAN, _HOSTILE, _IF_FILLED = 0, 1, 2


@lru_cache(maxsize=2048)
def _verdict(url: str, image: bool) -> int:
    """Rules 1-3 on the URL alone: clean, hostile, or hostile when the sentence fills its slot (rule 4).
    Cached: a text that repeats one image is judged once."""
    m = _URL.match(url)
    if not m or not is_remote(url):
        return _CLEAN
    auth, rest = m.group("auth"), m.group("rest")
    host = auth.rsplit("@", 1)[-1].split(":", 1)[0].lower()
    if _placeholder(_decode(auth)):
        return _HOSTILE
    path, _, query = rest.partition("?")
    path, _, frag = path.partition("#")
    query, _, frag2 = query.partition("#")
    fragment = frag or frag2
    params = [(n, v) for n, v in _PARAM.findall(query) if n or v]
    if "=" in fragment:
        params += [(n, v) for n, v in _PARAM.findall(fragment) if n or v]
    if _is_badge(host, path):
        nested = [_verdict(d, image) for _n, v in params if _NESTED_URL.match(d := _decode(v).strip())]
        return max(nested, key=(_CLEAN, _IF_FILLED, _HOSTILE).index, default=_CLEAN)
    if _placeholder(_decode(path)) or _placeholder(_decode(fragment)):
        return _HOSTILE
    verdict = _CLEAN
    for name, value in params:
        decoded = _decode(value)
        lname = name.strip().lower()
        hostile, slot = _slots(decoded)
        if hostile or _caps_placeholder(decoded):
            return _HOSTILE
        if slot and (lname in _STRONG_NAMES or (lname in _WEAK_NAMES and not _plain_slot_only(decoded))):
            return _HOSTILE
        if _NESTED_URL.match(decoded.strip()):
            nested = _verdict(decoded.strip(), image)
            if nested == _HOSTILE:
                return _HOSTILE
            verdict = max(verdict, nested)
            continue
        if image and decoded.strip() and (lname in _STRONG_NAMES or (lname in _WEAK_NAMES and (
                _SENSITIVE_VALUE.search(decoded) or _encoded(value, decoded)))):
            return _HOSTILE
    if not image:
        return _CLEAN
    if params and not params[-1][1].strip() and query.rstrip().endswith("="):
        name = params[-1][0].strip().lower()
        if name in _STRONG_NAMES or name in _WEAK_NAMES:
            return _HOSTILE
    if params or rest.rstrip().endswith(("/", "?", "=", "#")) or _slots(_decode(rest))[1]:
        return _IF_FILLED
    return verdict
