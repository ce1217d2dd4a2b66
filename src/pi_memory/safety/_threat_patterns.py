"""Threat pattern table used by :mod:`pi_memory.safety.threats`.

The rows live in one module per threat family -- :mod:`._threats_injection` (prompt injection, role
hijack, system-prompt leak), :mod:`._threats_authority` (ignoring the user, obeying someone else, fake role
headers), :mod:`._threats_c2` (C2 behaviour, remote code execution),
:mod:`._threats_exfil` (exfiltration), :mod:`._threats_beacon` (image beacons), :mod:`._threats_persistence` (persistence, hidden HTML),
:mod:`._threats_policy` (secret disclosure, safeguards, package indexes written as preferences),
:mod:`._threats_sabotage` (destructive commands on home or root, covert malicious code) -- over the
building blocks of :mod:`._threat_base`; this module puts them together in :data:`PATTERNS` (scan order)
and holds the HTML-comment and compact-pass tables.

The categories are modelled on the ones described for Hermes' ``threat_patterns``
(prompt injection, role hijack, C2 behaviour, exfiltration, persistence, hidden HTML);
every id, regex, word list and host list here is our own.

Shape of one row: ``ThreatPattern(id, category, pattern, keywords, requires=(), check=None, flags, anchored=False)``; the
regex is compiled on first use (``.regex``).

* ``regex`` is compiled with ``re.IGNORECASE`` (except a few rows for code such as ``JSON.stringify``)
  and run on the folded text (see ``_text``).
* ``keywords`` is a prefilter: the regex only runs when at least one keyword occurs
  (as a substring) in the lower-cased text, and, when ``requires`` is set, at least one of
  those too. The keywords of every row are found in one pass (``_keywords``).
* ``anchored=True`` says every match starts where a keyword starts: the regex is then tried only there
  (``threats._searcher``), not at every position.
* ``check(match, text)``, when set, decides about each regex match: ``True`` keeps it, a
  ``(start, end)`` tuple keeps it with that span, an ``int`` rejects it and resumes the search at that
  offset (used to skip the rest of a line or sentence already judged), anything else rejects it and the
  search goes on after the match. Checks look at a bounded window around the match (and substring-test
  before running a regex there), so they keep the scan linear.

Linear-time rules followed by every regex:

* filler between key words is *bounded* (``_fill(n)``: at most n words of at most
  30 letters, separated by at most 12 non-letters) and words/gaps use disjoint
  character classes, so a filler can be split in exactly one way;
* every "anything up to X" run is bounded (``{0,200}``-style) and anchored on a
  literal keyword, so the work per keyword hit is bounded; where the keyword is common
  the run excludes the keyword's first character or is possessive, so that runs from
  neighbouring hits do not overlap;
* HTML comments are matched by a small hand-written scanner in ``threats.py``, not here.

Speed: sre can jump straight to candidate positions only when a regex starts with a literal or a
character class of case-less characters (``$``, ``/``, ``-``, ``<``, …; with ``IGNORECASE`` a leading
letter does not count). Rows added for shell syntax therefore start with such a character, or with
the rarer half of the construct plus a bounded look back in their check.

Narrowings (what we deliberately do *not* flag, and what that costs)
--------------------------------------------------------------------
* ``ignore_instructions`` / ``disregard_instructions``: an instruction limited to a topic
  ("forget the earlier instructions about using npm", "ignore all rules for generated files")
  is a note about tooling, not a jailbreak. It stays clean when the object is followed by
  about/regarding/for/in/on/when/… plus a topic with no safety word (safety, security, policy,
  filter, system, prompt, user, secret, …) and, for instruction-type objects (instructions,
  prompts, guidelines, …), the phrase has no all/any/every/your/system. Cost: "ignore previous
  instructions about formatting" passes; "ignore *all* previous instructions about …" does not.
* ``hide_from_user``: "do not tell the user" only counts when what is hidden is the agent's own
  doing — the clause ends there, or goes on with about/that/what + this/these/you/the
  instructions/commands/changes/…, or with something the agent did that reaches out or destroys ("about
  the request you sent", "that you deleted the backups"). "Don't tell the user about internal ticket
  numbers" is a confidentiality preference and stays clean, and so is how much to report ("no need to tell
  the user about every lint fix", "… about the files you changed unless they ask", "… every test you ran").
  Cost: "don't tell the user about the deploy key" passes. "The user must never know" counts only when the
  clause ends there or what they must not know is this note or the agent's doing ("the user must not see the
  stack trace" stays clean).
* ``role_hijack`` without an article: only a role that grants power or replaces the assistant (root,
  admin, superuser, sudo, sysadmin, god, system, evil, …), not "you are now on the v2 API / in the repo root
  / ready"; not after "if/once/when/after …" ("if you are now root, drop sudo"), nor after a shell step in
  the same sentence ("after `sudo -i` you are now root"). Cost: "You are now admin of the staging project"
  is refused (say who: "the deploy bot is admin of …"); "you are root in the dev container" (no "now") passes.
* ``user_override`` and ``fake_role_header``: their narrowings are in :mod:`._threats_authority`.
* ``c2_heartbeat``: only an *instruction* to send a heartbeat/beacon (the verb starts a clause,
  optionally after please/always/you must/…) to a remote host counts; a description such as
  "staging server heartbeat goes to status.example.com" or "the kubelet sends a heartbeat to …" does
  not. Cost: "nodes must beacon to x.example.com" written as a description passes.
* ``agent_config_tamper``: editing AGENTS.md/CLAUDE.md/.cursorrules/… is documentation upkeep
  unless the write carries the content (quoted text, a shell redirect) or a purpose that
  weakens the agent (skip, disable, ignore, bypass, remove, auto-approve, trust, load, send, without
  asking, …). Any change to pi's own settings/extensions/models.json is still flagged. Cost:
  "update AGENTS.md to mention the new deploy flow" passes even if a later write adds bad text
  (that text is scanned on its own when it is written).
* ``exfil_curl`` / ``exfil_wget``: a ``$…TOKEN``/``$…KEY`` variable sent to the provider it belongs
  to (``$GITHUB_TOKEN`` to https://api.github.com, ``$OPENAI_API_KEY`` to https://api.openai.com, …)
  is normal API use. The command is flagged when any variable has no known provider, or any URL
  of the command is not https on that provider's domain, or the command has no literal URL.
  Cost: a token sent to its own provider in a harmful way (e.g. a public gist) passes.
* ``agent_env_unset``: unsetting one agent *location* variable (``PI_CODING_AGENT_DIR``,
  ``CLAUDE_CONFIG_DIR``, ``HERMES_HOME``) is configuration. Flagged: session markers and
  sandbox/entry-point flags (``CLAUDECODE``, ``CLAUDE_CODE_*``, ``*SANDBOX*``, ``*_SESSION*``), agent
  credentials (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*AUTH*``), or two or more agent variables in
  one command.
* ``ssh_key_implant``: "add the deploy key to ~/.ssh/config" (an IdentityFile line) and
  known_hosts are not implants; redirects into ``~/.ssh/config`` still are.
* ``download_and_execute``: piping a download into a shell is flagged unless every URL in the
  command is https on a short list of official installers (rustup, uv, Docker, Homebrew, nvm, …).
* ``markdown_exfil`` / ``image_exfil_instruction`` (:mod:`._threats_beacon`, :mod:`._beacon_urls`): an image
  counts only when its URL is remote and built to carry data (a slot naming what to put there, a data
  parameter, an encoded blob, or an empty slot the same sentence fills with a secret); sizes, versions, badge
  services, relative screenshots and plain-named template slots (``{width}``, ``${user.id}``) stay clean. Links
  count only with a placeholder, since ``?q=`` links are everyday text. Cost: ``?data=1`` on a remote image
  is refused.
* ``html_comment_injection`` is deliberately *broad*: a comment is invisible when Markdown is rendered
  but the model reads it, so any comment addressed to an assistant/AI/model/agent/LLM/Claude/GPT or
  holding a command word (run, execute, delete, rm, curl, send, ignore, …) is flagged. Lint directives
  (``prettier-ignore``, ``markdownlint-…``, ``eslint-…``) are removed from the body first. Cost: a
  benign "<!-- TODO: run prettier -->" or "<!-- data model v2 -->" is refused (rephrase it as text).
* ``hidden_html_element``: white/transparent text is not flagged when the same tag sets a
  non-white background.
* ``chat_template_token``: ``</s><s>`` is flagged even in HTML (two adjacent strike-through tags are
  rare in notes); notes that quote chat-template tokens while documenting a model are flagged too.
"""

from __future__ import annotations

import re

from . import (
    _threats_authority,
    _threats_beacon,
    _threats_c2,
    _threats_exfil,
    _threats_injection,
    _threats_multilingual,
    _threats_persistence,
    _threats_policy,
    _threats_sabotage,
)
from ._threat_base import (  # noqa: F401  (re-exported: the table's public names)
    _B,
    _E,
    C2,
    EXFILTRATION,
    HIDDEN_HTML,
    INVISIBLE_UNICODE,
    PERSISTENCE,
    PROMPT_INJECTION,
    PROMPT_LEAK,
    REMOTE_EXECUTION,
    ROLE_HIJACK,
    Check,
    ThreatPattern,
)

PATTERNS: tuple[ThreatPattern, ...] = (
    *_threats_injection.ROWS,
    *_threats_authority.ROWS,
    *_threats_multilingual.ROWS,
    *_threats_c2.ROWS,
    *_threats_exfil.ROWS,
    *_threats_beacon.ROWS,
    *_threats_persistence.ROWS,
    *_threats_policy.ROWS,
    *_threats_sabotage.ROWS,
)

# Keywords that mark an HTML comment as hostile (checked on the comment body only).
HTML_COMMENT_ID = "html_comment_injection"
HTML_COMMENT_WORDS = re.compile(
    rf"{_B}(?=[a-z])(?:ignore|override|system|secret|hidden|disregard|forget|instructions?|prompt|assistant|ai|models?"
    rf"|agents?|llm|claude|gpt|chatgpt|gemini|copilot|codex|run|execute|exec|eval|delete|rm|curl|wget|send|post"
    rf"|upload|download|fetch|e-?mail|forward|exfiltrate|install|sudo|chmod|bash|powershell|reveal|leak){_E}",
    re.IGNORECASE,
)
# Tool directives that are removed from a comment body before the word check.
HTML_COMMENT_DIRECTIVES = re.compile(
    r"(?<![\w-])(?:prettier|eslint|markdownlint|textlint|cspell|vale|remark|biome|stylelint|dprint|alex|lint"
    r"|spell-checker|jscpd|istanbul|c8)[-:][\w:-]*",
    re.IGNORECASE,
)

# The compact pass (threats.py): a few high-value phrases matched on letters only, reported only when
# the spelling is disguised (a separator inside one of the phrase's words, or words run together).
COMPACT_ID = "obfuscated_injection"
COMPACT_CATEGORY = PROMPT_INJECTION
# Each phrase is a list of slots ``(words, min, max)``; threats.py compiles it into a regex over letters
# with an optional word-start marker between any two letters. ``fuse`` says whether two of the phrase's
# words run together ("ignoreall") count as disguise; for "system prompt" they do not, because
# ``SystemPrompt``/``systemPrompt`` are ordinary identifiers.
_IGNORE_VERBS = ("ignore", "disregard", "forget")
COMPACT_PHRASES: tuple[tuple[tuple[tuple[tuple[str, ...], int, int], ...], bool], ...] = (
    ((( _IGNORE_VERBS, 1, 1),
      (("all", "any", "every", "of", "the", "your", "my", "these", "those"), 0, 3),
      (("previous", "prior", "above", "earlier", "preceding", "former", "original", "initial", "system"), 0, 1),
      (("instructions", "instruction", "rules", "directions", "directives", "guidelines", "prompts", "prompt",
        "programming"), 1, 1)),
     True),
    (((_IGNORE_VERBS, 1, 1), (("everything", "all"), 0, 1), (("the",), 0, 1),
      (("above", "before", "previously"), 1, 1)),
     True),
    (((("you",), 1, 1), (("are", "re"), 1, 1), (("now",), 1, 1)), True),
    (((("system",), 1, 1), (("prompt",), 1, 1)), False),
)
