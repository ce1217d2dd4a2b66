"""Threat rows of the persistence family (authorized_keys, SSH key implants, agent-config tampering) and
of hidden HTML elements, with their checks.

One row per ``_p(...)``; how rows are read and the narrowings they implement: :mod:`._threat_patterns`."""

from __future__ import annotations

import re

from ._threat_base import (
    _AGENT_FILES,
    _B,
    _E,
    _F4,
    _F8,
    _HOME_SSH,
    _REDIRECT,
    _S,
    HIDDEN_HTML,
    PERSISTENCE,
    ThreatPattern,
    _p,
)

_PI_FILE = re.compile(r"\.pi/|\bpi\W{1,12}(?:settings|extensions?)\b", re.IGNORECASE)


_QUOTED = re.compile(r"[\"`“”][^\"`“”\n]{3,300}[\"`“”]|(?<!\w)['‘][^'‘’\n]{3,300}['’](?!\w)")


_WEAKENING = re.compile(
    r"(?:\b(?:so|to|and|in\W+order\W+to|that)\b|:)[^.!?\n]{0,120}?\b(?:skip(?:s|ped|ping)?|disabl\w*|ignor\w*|bypass\w*"
    r"|remov\w*|delet\w*|turn(?:s|ed)?\W+off|auto-?approv\w*|allow(?:s|ed)?|trust(?:s|ed)?|load(?:s|ed)?"
    r"|exfiltrat\w*|send|upload|grant(?:s|ed)?|suppress\w*|hid(?:e|den)|never\W+ask|without\W+(?:asking|review"
    r"|approval|confirmation|permission)|no\W+longer)\b",
    re.IGNORECASE,
)


_WEAK_STEMS = ("skip", "disabl", "ignor", "bypass", "remov", "delet", "off", "approv", "allow", "trust", "load",
               "exfiltrat", "send", "upload", "grant", "suppress", "hid", "ask", "review", "approval",
               "confirmation", "permission", "longer")


def _content_or_weakening(m: re.Match[str], text: str) -> bool | int:
    matched = m.group()
    if "pi" in matched.lower() and _PI_FILE.search(matched):
        return True
    limit = min(len(text), m.end() + 200)
    ends = [i for i in (text.find(x, m.end(), limit) for x in (". ", "! ", "? ", "\n")) if i != -1]
    end = min(ends) if ends else None
    stop = end if end is not None else limit
    tail = text[m.end() : stop]
    if any(q in matched or q in tail for q in "\"'`“‘") and (_QUOTED.search(matched) or _QUOTED.search(tail)):
        return True
    low = tail.lower()
    if any(w in low for w in _WEAK_STEMS) and _WEAKENING.search(tail):
        return True
    return stop if end is not None else False  # the rest of this sentence has been read: resume after it


_BACKGROUND = re.compile(r"background(?:-color)?\s*:\s*([^;\"'>]{1,60})", re.IGNORECASE)


_WHITE = re.compile(r"^\s*(?:white|#fff(?:fff)?\b|rgba?\(\s*255\s*,\s*255\s*,\s*255|transparent|none|inherit"
                    r"|initial|unset)", re.IGNORECASE)


def _hidden_not_on_dark(m: re.Match[str], text: str) -> bool:
    if not m.group("color"):
        return True
    end = text.find(">", m.end(), m.end() + 1000)
    tag = text[m.start() : end if end != -1 else m.end()]
    bg = _BACKGROUND.search(tag)
    return not bg or bool(_WHITE.match(bg.group(1)))


ROWS: tuple[ThreatPattern, ...] = (
    # ---- persistence --------------------------------------------------------------------------
    _p("authorized_keys_write", PERSISTENCE,
       rf"{_REDIRECT}[^\s\"'|;&<>]{{0,200}}?authorized_keys2?\b"
       rf"|{_B}(?:add|append|write|insert|inject|plant|drop|place|echo|install|copy|put){_F8}(?:to|into|in"
       rf"|onto|inside){_S}(?:the{_S})?[^\s\"'`]{{0,200}}?authorized_keys2?\b",
       "authorized_keys"),
    _p("ssh_key_implant", PERSISTENCE,
       rf"{_REDIRECT}{_HOME_SSH}(?!/?known_hosts)"
       rf"|{_B}(?:add|append|write|plant|inject|insert|drop|install|place|put){_F4}(?:keys?|pubkey|key{_S}line)"
       rf"{_E}{_F4}(?:to|into|in|inside|under)[ \t]+(?:the[ \t]+)?[\"'`]?{_HOME_SSH}(?!/?(?:config|known_hosts)\b)",
       ".ssh"),
    _p("agent_config_tamper", PERSISTENCE,
       rf"{_REDIRECT}[^\s\"'|;&<>]{{0,200}}?{_AGENT_FILES}",
       "agents.md", "claude.md", "gemini.md", "rules", "copilot-instructions", ".pi/", "settings",
       "extension"),
    _p("agent_config_tamper", PERSISTENCE,
       rf"{_B}(?:update|modify|edit|write|change|append|add|overwrite|replace|insert|prepend|inject|rewrite|patch"
       rf"|alter){_F8}{_AGENT_FILES}",
       "agents.md", "claude.md", "gemini.md", "rules", "copilot-instructions", ".pi/", "settings",
       "extension", check=_content_or_weakening),
    # ---- hidden HTML (comments are handled in threats.py) -------------------------------------
    _p("hidden_html_element", HIDDEN_HTML,
       r"<[a-z][\w:-]{0,30}(?=[\s/>])[^<>]{0,1000}?(?:display\s*:\s*none|visibility\s*:\s*hidden"
       r"|font-size\s*:\s*(?:0(?:\.0*)?(?:px|pt|em|rem|%)?|[0-2](?:\.\d+)?(?:px|pt)|0?\.0\d*(?:em|rem))(?![\w.])"
       r"|opacity\s*:\s*0?(?:\.0\d*)?(?![\w.1-9])"
       r"|(?<![\w-])(?P<color>color\s*(?::|=\s*[\"']?)\s*(?:white|#fff(?:fff)?\b|rgba?\(\s*255\s*,\s*255\s*,"
       r"\s*255\s*[,)]|transparent|hsla?\(\s*0\s*,\s*0%\s*,\s*100%))"
       r"|(?:left|top|text-indent)\s*:\s*-\d{3,}"
       r"|\shidden(?=[\s>=/]))",
       "display", "visibility", "font-size", "opacity", "color", "hidden", "left", "top", "text-indent",
       check=_hidden_not_on_dark),
)
