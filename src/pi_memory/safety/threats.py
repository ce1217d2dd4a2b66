"""Threat scanner for text that will be injected into a prompt (memory entries, context files).

Shapes
------
* ``Finding(id, category, span)`` — ``span`` is ``(start, end)`` in the *raw* input, or ``None``.
* ``scan_threats(text) -> list[Finding]`` — every hit, one per id (its first occurrence), sorted by position.

Categories and ids are modelled on those described for Hermes' ``threat_patterns`` (see
``/work/shared/reference/curated-memory-anchors.md`` §1.8); every id, regex and word list is ours.

============================  ====================  =====================================================
id                            category              detects
============================  ====================  =====================================================
ignore_instructions           prompt_injection      "ignore/forget … previous/all/your … instructions"
disregard_instructions        prompt_injection      "disregard … your/all/any … rules/instructions"
system_prompt_override        prompt_injection      "system prompt override", "override your instructions"
no_restrictions               prompt_injection      "act as if you have no restrictions", "DAN mode"
unfiltered_response           prompt_injection      "respond … without … filters/restrictions"
translate_and_execute         prompt_injection      "translate … into X and execute (it)"
hide_from_user                prompt_injection      "do not tell the user", "without telling the user"
role_hijack                   role_hijack           "you are now a/an/the …" (article required)
role_pretend                  role_hijack           "pretend you are / to be a …"
identity_override             role_hijack           "name yourself X", "you are now called X"
fake_update                   role_hijack           "you have been updated/upgraded to …"
system_prompt_leak            system_prompt_leak    "print/reveal/output your system/initial prompt"
c2_node_registration          c2                    "register as a node"
c2_heartbeat                  c2                    "heartbeat/beacon to <remote host>"
c2_task_pull                  c2                    "pull new tasks from <remote host>", "fetch tasking"
c2_network_connect            c2                    "connect to the network.", "join the botnet"
forced_action                 c2                    "you must (…) register/connect/report back/beacon"
oneliner_only                 c2                    "only use one-liners"
no_disk_artifacts             c2                    "never write scripts to disk"
agent_env_unset               c2                    ``unset`` of CLAUDE*/CODEX*/HERMES*/AGENT*/OPENAI*/PI_* vars
c2_framework                  c2                    cobalt strike, metasploit, meterpreter, brainworm; sliver/
                                                    havoc/mythic/covenant only next to c2/implant/teamserver…
c2_channel                    c2                    "c2 server/channel/infrastructure/…"
command_and_control           c2                    "command and control"
exfil_curl / exfil_wget       exfiltration          curl/wget line using $VAR ending KEY/TOKEN/SECRET/PASSWORD/
                                                    CREDENTIAL(S)
read_secret_files             exfiltration          cat/head/… of .env, credentials, .netrc, .pgpass, .npmrc,
                                                    .pypirc, .git-credentials, ~/.ssh/id_* private keys
send_to_url                   exfiltration          send/post/upload <secrets/keys/history/…> to a remote URL;
                                                    anything sent to a known capture host (webhook.site, …)
context_exfil                 exfiltration          include/print/share the conversation / chat history /
                                                    previous messages / your entire context
authorized_keys_write         persistence           writing or appending to authorized_keys (a mention is fine)
ssh_key_implant               persistence           adding a key to, or redirecting output into, ~/.ssh,
                                                    $HOME/.ssh, /home/<u>/.ssh, /root/.ssh, /Users/<u>/.ssh
agent_config_tamper           persistence           modify AGENTS.md/CLAUDE.md/GEMINI.md/.cursorrules/
                                                    .clinerules/.windsurfrules/pi settings or extensions
html_comment_injection        hidden_html           ``<!-- … -->`` containing ignore/override/system/secret/hidden
hidden_html_element           hidden_html           div/span/p with display:none, visibility:hidden, font-size:0
invisible_unicode_U+XXXX      invisible_unicode     U+200B, 200C, 200D, 2060, 2062-2064, FEFF, 202A-202E,
                                                    2066-2069 and tag characters U+E0000-E007F
============================  ====================  =====================================================

How text is scanned
-------------------
1. Invisible characters are looked for in the raw text. ZWNJ/ZWJ (U+200C/U+200D) are allowed between two
   letters or marks of a joining script (Arabic, Persian, Syriac, Indic, Tibetan, Myanmar, Khmer,
   Mongolian, …) and ZWJ between two emoji; a subdivision-flag tag sequence after U+1F3F4 is allowed.
   Other tag characters are also decoded as ASCII ("ASCII smuggling") and the decoded text is scanned.
2. The text is NFKC-normalised (full-width "ｉｇｎｏｒｅ" becomes "ignore"), invisible characters are
   dropped, and every pattern runs case-insensitively on the result. Spans are mapped back to raw offsets.
   NFKC does not fold cross-script look-alikes (Cyrillic "о" stays Cyrillic).
3. There is no size cut-off: every regex is bounded per keyword hit (see ``_threat_patterns``), and each
   pattern only runs when one of its keywords occurs in the text.
4. Nothing is skipped: an entry that already starts with ``[BLOCKED:`` is scanned like any other.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from ._threat_patterns import (
    HIDDEN_HTML,
    HTML_COMMENT_ID,
    HTML_COMMENT_WORDS,
    INVISIBLE_UNICODE,
    PATTERNS,
)


@dataclass(frozen=True)
class Finding:
    """One scanner hit: a stable ``id``, its ``category`` and a raw-text ``(start, end)`` span."""

    id: str
    category: str
    span: tuple[int, int] | None


# --------------------------------------------------------------------------------------------
# Invisible characters
# --------------------------------------------------------------------------------------------
_JOINERS = "\u200c\u200d"
_INVISIBLE = re.compile(
    "[\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
# Dropped before pattern matching (invisible set plus soft hyphen), so "ig\u200bnore" still reads "ignore".
_DROP = re.compile("[\u00ad\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff\u202a-\u202e\u2066-\u2069"
                   "\U000e0000-\U000e007f]")
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")
_FLAG_TAGS = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")

# Scripts in which ZWNJ/ZWJ are part of normal spelling.
_JOINING_RANGES = (
    (0x0600, 0x08FF),  # Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic, Arabic ext.
    (0x0900, 0x0DFF),  # Devanagari … Sinhala
    (0x0F00, 0x109F),  # Tibetan, Myanmar
    (0x1780, 0x18AF),  # Khmer, Mongolian
    (0x1A00, 0x1BFF),  # Buginese, Tai Tham, Balinese, Sundanese, Batak
    (0xA800, 0xA8FF),  # Syloti Nagri, Phags-pa, Saurashtra, Devanagari ext.
    (0xA980, 0xAAFF),  # Javanese, Myanmar ext., Tai Viet
    (0xFB50, 0xFDFF),  # Arabic presentation forms A
    (0xFE70, 0xFEFE),  # Arabic presentation forms B
    (0x10A00, 0x10A5F),  # Kharoshthi
    (0x11000, 0x11FFF),  # Brahmi and other historic Indic scripts
)
_EMOJI_RANGES = (
    (0x1F000, 0x1FAFF),
    (0x2600, 0x27BF),
    (0x2300, 0x23FF),
    (0x2B00, 0x2BFF),
    (0xFE0F, 0xFE0F),  # emoji presentation selector
    (0x20E3, 0x20E3),  # combining keycap
)


def _in(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def _joining_letter(ch: str) -> bool:
    return _in(ord(ch), _JOINING_RANGES) and unicodedata.category(ch)[0] in "LM"


def _joiner_ok(text: str, i: int) -> bool:
    """True when the ZWNJ/ZWJ at ``i`` sits between two letters of a joining script (or two emoji)."""
    if i == 0:
        return False
    if i + 1 >= len(text):
        return unicodedata.combining(text[i - 1]) == 9 and _joining_letter(text[i - 1])
    before, after = text[i - 1], text[i + 1]
    if _joining_letter(before) and (_joining_letter(after) or unicodedata.combining(before) == 9):
        return True  # between two letters/marks, or right after a virama ("ന്‍" Malayalam chillu)
    return text[i] == "\u200d" and _in(ord(before), _EMOJI_RANGES) and _in(ord(after), _EMOJI_RANGES)


def _invisible_findings(text: str) -> list[Finding]:
    present = set(_INVISIBLE.findall(text))
    if not present:
        return []
    allowed_tags: set[int] = set()
    if "\U0001f3f4" in text:
        for m in _FLAG_TAGS.finditer(text):
            allowed_tags.update(range(m.start() + 1, m.end()))
    found = []
    for ch in present:  # first offending occurrence of each distinct character
        i = text.find(ch)
        while i != -1 and (i in allowed_tags or (ch in _JOINERS and _joiner_ok(text, i))):
            i = text.find(ch, i + 1)
        if i != -1:
            found.append(Finding(f"{INVISIBLE_UNICODE}_U+{ord(ch):04X}", INVISIBLE_UNICODE, (i, i + 1)))
    return found


# --------------------------------------------------------------------------------------------
# NFKC with an offset map back to the raw text
# --------------------------------------------------------------------------------------------
class _Normalised:
    """NFKC text with invisible characters dropped, plus a map from its offsets to raw offsets.

    ``segs`` holds ``(norm_start, norm_end, raw_start, raw_end, linear)``; linear segments map one to one,
    the others (a character whose NFKC form differs) map every output character to the whole raw chunk.
    """

    __slots__ = ("text", "segs", "_starts")

    def __init__(self, raw: str) -> None:
        if unicodedata.is_normalized("NFKC", raw) and not _DROP.search(raw):
            self.text, self.segs, self._starts = raw, None, None
            return
        parts: list[str] = []
        segs: list[tuple[int, int, int, int, bool]] = []
        pos = 0  # offset in the normalised text
        for line_start, line in _lines(raw):
            if unicodedata.is_normalized("NFKC", line) and not _DROP.search(line):
                pos = _add(segs, pos, line_start, len(line), parts, line)
                continue
            # Fast path: no combining marks and every character maps to exactly one character
            # (full-width Latin, compatibility punctuation): offsets stay the same.
            table = {ord(ch): _nfkc_char(ch) for ch in set(line)}
            if all(len(v) == 1 for v in table.values()) and not any(map(unicodedata.combining, line)):
                pos = _add(segs, pos, line_start, len(line), parts, line.translate(table))
                continue
            j, n = 0, len(line)
            while j < n:
                k = j + 1
                while k < n and unicodedata.combining(line[k]):
                    k += 1
                chunk = line[j:k]
                out = _DROP.sub("", unicodedata.normalize("NFKC", chunk))
                if out == chunk:
                    pos = _add(segs, pos, line_start + j, len(chunk), parts, chunk)
                elif out:
                    parts.append(out)
                    segs.append((pos, pos + len(out), line_start + j, line_start + k, False))
                    pos += len(out)
                j = k
        self.text = "".join(parts)
        self.segs = segs
        self._starts = [s[0] for s in segs]

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        if self.segs is None:
            return (start, end)
        return (self._raw(start, first=True), self._raw(max(start, end - 1), first=False))

    def _raw(self, x: int, *, first: bool) -> int:
        ns, _ne, rs, re_, linear = self.segs[max(0, bisect_right(self._starts, x) - 1)]
        if linear:
            return rs + (x - ns) + (0 if first else 1)
        return rs if first else re_


def _nfkc_char(ch: str) -> str:
    return _DROP.sub("", unicodedata.normalize("NFKC", ch))


def _lines(raw: str):
    start = 0
    for line in raw.splitlines(keepends=True):
        yield start, line
        start += len(line)


def _add(segs, pos, raw_start, length, parts, piece) -> int:
    """Append an identity piece, merging it with the previous identity segment when contiguous."""
    parts.append(piece)
    if segs:
        ns, ne, rs, re_, linear = segs[-1]
        if linear and ne == pos and re_ == raw_start:
            segs[-1] = (ns, ne + length, rs, re_ + length, True)
            return pos + length
    segs.append((pos, pos + length, raw_start, raw_start + length, True))
    return pos + length


# --------------------------------------------------------------------------------------------
# Pattern matching
# --------------------------------------------------------------------------------------------
def _html_comment(text: str) -> tuple[int, int] | None:
    """Find the first ``<!-- … -->`` (or unclosed ``<!--``) whose body has a hostile word. Linear."""
    pos = text.find("<!--")
    while pos != -1:
        end = text.find("-->", pos + 4)
        stop = len(text) if end == -1 else end
        if HTML_COMMENT_WORDS.search(text, pos + 4, stop):
            return (pos, len(text) if end == -1 else end + 3)
        if end == -1:
            return None
        pos = text.find("<!--", end + 3)
    return None


def _pattern_hits(text: str) -> list[tuple[str, str, int, int]]:
    """(id, category, start, end) for the first match of every pattern in ``text`` (normalised)."""
    lowered = text.lower()
    hits = []
    for pat in PATTERNS:
        if not pat.may_match(lowered):
            continue
        m = pat.regex.search(text)
        if m:
            hits.append((pat.id, pat.category, m.start(), m.end()))
    if "<!--" in text:
        span = _html_comment(text)
        if span:
            hits.append((HTML_COMMENT_ID, HIDDEN_HTML, span[0], span[1]))
    return hits


def scan_threats(text: str) -> list[Finding]:
    """Return every threat found in ``text``: one ``Finding`` per id, ordered by where it first occurs."""
    if not text:
        return []
    found: dict[str, Finding] = {f.id: f for f in _invisible_findings(text)}
    norm = _Normalised(text)
    for ident, category, start, end in _pattern_hits(norm.text):
        found.setdefault(ident, Finding(ident, category, norm.raw_span(start, end)))
    # Tag characters can smuggle ASCII text; decode each run and scan it as well.
    for m in _TAG_RUN.finditer(text):
        decoded = "".join(chr(ord(c) - 0xE0000) for c in m.group())
        for ident, category, _s, _e in _pattern_hits(decoded):
            found.setdefault(ident, Finding(ident, category, (m.start(), m.end())))
    return sorted(found.values(), key=lambda f: (f.span or (0, 0))[0])
