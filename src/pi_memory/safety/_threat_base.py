"""Building blocks of the threat pattern table (:mod:`._threat_patterns`): the row type
(:class:`ThreatPattern`, built with ``_p``), the categories, the bounded regex pieces every family uses (word
gaps, filler, destinations, secret files; the linear-time rules are in ``_threat_patterns``' docstring), and
the shell-command helpers that checks of several families share."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from ._keywords import Hits

# Separators between words: 1-12 non-letters, but never a sentence end (". " "! " "? " "; "), so filler
# does not run from one sentence into the next. A dot inside a token (".ssh", "a.b") is fine.
_GAP = r"(?:[^\w.!?;]|_|[.!?;](?!\s)){1,12}"
_WORD = r"[^\W_]{1,30}+"  # one filler word (possessive: words and gaps never share a character)
_B = r"(?<![^\W_])"  # start of a word
_E = r"(?![^\W_])"  # end of a word
_S = _GAP
# A separator without "_", for phrases that are also our snake_case ids ("c2_channel",
# "command_and_control", "system_prompt_override"), so that a BLOCKED marker listing ids scans clean.
_SEP = r"(?:[^\w.!?;]|[.!?;](?!\s)){1,12}"


def _fill(n: int) -> str:
    """Up to ``n`` filler words between two key words (always ends with a gap)."""
    return rf"(?:{_GAP}{_WORD}){{0,{n}}}?{_GAP}"


_F2, _F3, _F4, _F6, _F8 = _fill(2), _fill(3), _fill(4), _fill(6), _fill(8)
# One filler word that may be a snake_case or CONSTANT name ("AWS_SECRET_ACCESS_KEY" counts as one word, not four):
# the "_" parts are taken possessively, so the name is never split again into words and "_" gaps.
_NAME_WORD = r"[^\W_]{1,30}+(?:_[^\W_]{1,30}+){0,8}+"


def _fill_names(n: int) -> str:
    """Like ``_fill(n)``, with a snake_case or CONSTANT name counted as one word."""
    return rf"(?:{_GAP}{_NAME_WORD}){{0,{n}}}?{_GAP}"


_NOT = rf"(?:do{_S}not|don['’]?t|dont|never|must{_S}not|should{_S}not|shouldn['’]?t)"
_CLAUSE_END = r"[ \t]*(?:[.!;:,)\n]|$)"

# A remote destination: a non-local URL, an IPv4 address, a domain, or a C2-ish name.
_URL = r"https?://(?!(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?![\w.-]))"
_IPV4 = r"(?:\d{1,3}\.){3}\d{1,3}"
_TLD = (
    r"(?:com|net|org|io|xyz|ru|cn|top|site|onion|info|biz|cc|tk|cloud|link|dev|app|me|co|ai|pw|su|ws|ml|ga"
    r"|cf|gq|online|live|host|pro|example|us|uk|de|in|to|lol|icu|club|shop|fun|space|tech|store|website)"
)
_DOMAIN = rf"(?:[a-z0-9-]{{1,63}}\.){{1,6}}{_TLD}(?![\w-])"
_EMAIL = r"[\w.+-]{1,64}@[\w-]{1,63}(?:\.[\w-]{1,63}){1,6}"
_REMOTE = (
    rf"(?:{_URL}|{_IPV4}|{_DOMAIN}"
    rf"|(?:c2|cnc|c&c|mothership|teamserver|command{_S}server|home{_S}base)(?![\w-]))"
)
_DEST = rf"(?:{_URL}|{_EMAIL}|{_IPV4}|{_DOMAIN})"
_HOME_SSH = r"(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]{1,64}|/root|/Users/[\w.-]{1,64})/\.ssh(?:/|(?![\w.-]))"
_AGENT_FILES = (
    r"(?:(?:AGENTS|CLAUDE|GEMINI)\.md|\.cursorrules|\.clinerules|\.windsurfrules|copilot-instructions\.md"
    rf"|\.pi/(?:agent/)?(?:settings\.json|extensions|models\.json)|pi{_S}(?:settings|extensions?){_E})"
)
_REDIRECT = r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?"
_SECRET_FILES = (
    r"(?:(?<![\w.])\.env(?![\w.-])|(?<![\w.])\.env\.(?!example|sample|template|dist)\w+"
    r"|\bcredentials(?:\.json|\.csv|\.ya?ml|\.db)?(?![\w.-])|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b"
    r"|\.git-credentials\b|\.ssh/id_[\w-]+(?![\w-]|\.pub)|\.docker/config\.json\b|\.kube/config\b"
    r"|/etc/shadow\b|application_default_credentials\.json|\.config/gh/hosts\.yml)"
)
_SECRET_FILE_WORDS = (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".ssh/id_", ".docker/config",
                      ".kube/config", "/etc/shadow", "gh/hosts")
_SENSITIVE = (
    r"(?:secrets?|keys?|tokens?|credentials?|passwords?|cookies?|\.env|env(?:ironment)?(?:"
    rf"{_S}var(?:iable)?s)?|ssh|id_rsa|id_ed25519|(?:chat|conversation){_S}history|conversation|transcript"
    rf"|memor(?:y|ies)|system{_S}prompt|everything){_E}"
)
_BAD_HOSTS = (
    r"https?://(?:[\w-]+\.)*(?:webhook\.site|requestbin\.\w+|pipedream\.net|ngrok(?:-free)?\.(?:io|app)"
    r"|burpcollaborator\.net|oast\.\w+|interact\.sh|pastebin\.com|transfer\.sh|hookbin\.com)"
)
_INSTR_OBJ = r"(?:instructions?|prompts?|directives?|directions|guidelines|guidance|context|messages)"
_RULE_OBJ = r"(?:rules|constraints|restrictions|guardrails|programming|training|conditioning|policies|principles)"
# Written as a prefix tree: with IGNORECASE, sre enters every branch of a flat alternation.
_DET = r"(?:p(?:revious|rior|receding)|a(?:bove|ll|ny)|e(?:arlier|very|xisting)|former|your|system|original|initial)"
# After "the above" / "everything above": the clause ends, or it goes on with and/then/instructions/….
_ABOVE_END = (rf"(?={_CLAUSE_END}|{_S}(?:and|then|instead|text|prompt|messages?|content|rules|instructions?"
              rf"|starting|beginning|verbatim|word|exactly){_E})")

Check = Callable[[re.Match[str], str], "bool | int | tuple[int, int] | None"]


@dataclass(frozen=True)
class ThreatPattern:
    id: str
    category: str
    pattern: str
    keywords: tuple[str, ...]
    requires: tuple[str, ...] = ()
    check: Check | None = None
    flags: int = 0
    anchored: bool = False  # every match starts where one of ``keywords`` starts (threats._searcher)

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        """The compiled regex, on first use: the keyword prefilter keeps most rows from ever running on a
        text, so a short-lived process (a host's hook) compiles only the few rows a text's words call for
        instead of the whole table at import."""
        return re.compile(self.pattern, self.flags)

    def may_match(self, hits: Hits) -> bool:
        """The keyword prefilter: one of ``keywords`` and, when set, one of ``requires`` is in the text."""
        return hits.any(self.keywords) and (not self.requires or hits.any(self.requires))


def _p(id_: str, category: str, pattern: str, *keywords: str, requires: tuple[str, ...] = (),
       check: Check | None = None, flags: int = 0, ignore_case: bool = True, anchored: bool = False) -> ThreatPattern:
    flags |= re.IGNORECASE if ignore_case else 0
    return ThreatPattern(id_, category, pattern, keywords, requires, check, flags, anchored)


PROMPT_INJECTION = "prompt_injection"
ROLE_HIJACK = "role_hijack"
PROMPT_LEAK = "system_prompt_leak"
C2 = "c2"
EXFILTRATION = "exfiltration"
REMOTE_EXECUTION = "remote_execution"
PERSISTENCE = "persistence"
SABOTAGE = "sabotage"
HIDDEN_HTML = "hidden_html"
INVISIBLE_UNICODE = "invisible_unicode"


# --------------------------------------------------------------------------------------------
# Shell-command helpers shared by checks of several families (each looks at a bounded window)
# --------------------------------------------------------------------------------------------
_CMD_BREAK = re.compile(r"[;\n]|&&|\|\|")


def _command_at(text: str, start: int, limit: int = 600) -> str:
    """The shell command that begins at ``start`` (up to ; && || or a newline, at most ``limit`` chars)."""
    m = _CMD_BREAK.search(text, start, start + limit)
    return text[start : m.start() if m else min(len(text), start + limit)]


def _tool_before(text: str, pos: int, names: tuple[str, ...], tool: re.Pattern[str], *, limit: int = 400,
                 breaks: str = "\n;&|") -> int | None:
    """Offset of the first ``tool`` word in the command that ends at ``pos`` (same line, after the last of
    ``breaks``, at most ``limit`` chars back), or ``None``. Substring-tested before the regex runs."""
    start = max(0, pos - limit)
    cut = max(text.rfind(c, start, pos) for c in breaks)
    start = max(start, cut + 1)
    window = text[start:pos].lower()
    if not any(n in window for n in names):
        return None
    m = tool.search(text, start, pos)
    return m.start() if m else None


def _next_tool(text: str, pos: int, tool: re.Pattern[str]) -> int:
    """Where to resume after a match with no tool before it: the next tool word (windows only move right,
    so no later match can see a tool that is not after ``pos``), or the end of the text."""
    m = tool.search(text, pos)
    return m.start() if m else len(text)


def _after_tool(names: tuple[str, ...], tool: re.Pattern[str], breaks: str) -> Check:
    """Check: keep the match when ``tool`` precedes it in the same command; the span starts at the tool.
    Otherwise resume at the next ``tool`` word (every alternative of the row needs the same tool)."""

    def check(m: re.Match[str], text: str) -> tuple[int, int] | int:
        start = _tool_before(text, m.start(), names, tool, limit=300, breaks=breaks)
        return (start, m.end()) if start is not None else _next_tool(text, m.start(), tool)

    return check
