"""Threat pattern table used by :mod:`pi_memory.safety.threats`.

The categories are modelled on the ones described for Hermes' ``threat_patterns``
(prompt injection, role hijack, C2 behaviour, exfiltration, persistence, hidden HTML);
every id, regex, word list and host list here is our own.

Shape of one row: ``ThreatPattern(id, category, regex, keywords, requires=(), check=None)``.

* ``regex`` is compiled with ``re.IGNORECASE`` (except a few rows for code such as ``JSON.stringify``)
  and run on the folded text (see ``_text``).
* ``keywords`` is a prefilter: the regex only runs when at least one keyword occurs
  (as a substring) in the lower-cased text, and, when ``requires`` is set, at least one of
  those too.
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
  instructions/commands/changes/…. "Don't tell the user about internal ticket numbers" is a
  confidentiality preference and stays clean. Cost: "don't tell the user about the deploy key" passes.
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
* ``markdown_exfil``: images are flagged only with a data-bearing query parameter (data, q, token,
  key, secret, …) or a template placeholder; links only with a placeholder, since ``?q=`` links
  are everyday text.
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
from collections.abc import Callable
from dataclasses import dataclass

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
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    requires: tuple[str, ...] = ()
    check: Check | None = None

    def may_match(self, lowered: str) -> bool:
        has = lowered.__contains__
        return any(map(has, self.keywords)) and (not self.requires or any(map(has, self.requires)))


def _p(id_: str, category: str, pattern: str, *keywords: str, requires: tuple[str, ...] = (),
       check: Check | None = None, flags: int = 0, ignore_case: bool = True) -> ThreatPattern:
    flags |= re.IGNORECASE if ignore_case else 0
    return ThreatPattern(id_, category, re.compile(pattern, flags), keywords, requires, check)


PROMPT_INJECTION = "prompt_injection"
ROLE_HIJACK = "role_hijack"
PROMPT_LEAK = "system_prompt_leak"
C2 = "c2"
EXFILTRATION = "exfiltration"
REMOTE_EXECUTION = "remote_execution"
PERSISTENCE = "persistence"
HIDDEN_HTML = "hidden_html"
INVISIBLE_UNICODE = "invisible_unicode"


# --------------------------------------------------------------------------------------------
# Checks (each looks at a bounded window around its match)
# --------------------------------------------------------------------------------------------
_SCOPE = re.compile(
    r"[ \t]+(?:about|regarding|concerning|on|for|when|in|under|of|from|with|re:?)[ \t]+([^\n.!?;:]{1,80})",
    re.IGNORECASE,
)
_SAFETY_TOPIC = re.compile(
    r"safe|secur|ethic|moral|polic|filter|restrict|guardrail|censor|harm|privacy|confiden|secret|password"
    r"|credential|system|prompt|permission|approv|jailbreak|nsfw|legal|user|human|operator|tool|identity"
    r"|persona|role|everything|anything|rules|instruction|content",
    re.IGNORECASE,
)
_INSTR_WORDS = frozenset({"instruction", "instructions", "prompt", "prompts", "directive", "directives", "directions",
                          "guidelines", "guidance", "context", "messages"})
_RULE_WORDS = frozenset({"rules", "constraints", "restrictions", "restriction", "guardrails", "programming", "training",
                         "conditioning", "policies", "principles"})
_BROAD_WORDS = frozenset({"all", "any", "every", "your", "system"})
_LETTERS = re.compile(r"[^\W\d_]+")


def _unless_scoped(m: re.Match[str], text: str) -> bool:
    """Reject "forget the earlier instructions about <topic>": a topic-limited instruction."""
    words = _LETTERS.findall(m.group().lower())
    last = words[-1] if words else ""
    if last not in _INSTR_WORDS and last not in _RULE_WORDS:
        return True  # "… the instructions above", "everything before": no scope exemption
    scope = _SCOPE.match(text, m.end())
    if not scope:
        return True
    topic = " ".join(scope.group(1).split()[:4])
    if _SAFETY_TOPIC.search(topic):
        return True
    # "ignore ALL previous instructions about formatting" stays hostile
    return last in _INSTR_WORDS and not _BROAD_WORDS.isdisjoint(words)


_CMD_BREAK = re.compile(r"[;\n]|&&|\|\|")
_URL_HOST = re.compile(r"(https?)://([^/\s\"'?#:@)\]]+)", re.IGNORECASE)
_SECRET_VAR = re.compile(
    r"\$\{?([A-Za-z_][A-Za-z0-9_]{0,60}?(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?))\}?(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
# Variable-name prefix -> domains where sending that token is ordinary API use.
_PROVIDERS = {
    "GITHUB": ("github.com", "githubusercontent.com"), "GH": ("github.com", "githubusercontent.com"),
    "GITLAB": ("gitlab.com",), "OPENAI": ("openai.com",), "ANTHROPIC": ("anthropic.com",),
    "CLAUDE": ("anthropic.com",), "OPENROUTER": ("openrouter.ai",), "HF": ("huggingface.co",),
    "HUGGINGFACE": ("huggingface.co",), "HUGGING": ("huggingface.co",), "SLACK": ("slack.com",),
    "STRIPE": ("stripe.com",), "CLOUDFLARE": ("cloudflare.com",), "CF": ("cloudflare.com",),
    "NPM": ("npmjs.org", "npmjs.com"), "PYPI": ("pypi.org",), "TWINE": ("pypi.org",),
    "GOOGLE": ("googleapis.com",), "GEMINI": ("googleapis.com",), "MISTRAL": ("mistral.ai",),
    "GROQ": ("groq.com",), "DIGITALOCEAN": ("digitalocean.com",), "VERCEL": ("vercel.com",),
    "NETLIFY": ("netlify.com",), "LINEAR": ("linear.app",), "NOTION": ("notion.com",),
    "SENTRY": ("sentry.io",), "DOCKER": ("docker.com", "docker.io"), "HEROKU": ("heroku.com",),
    "DATADOG": ("datadoghq.com",), "DD": ("datadoghq.com",), "ATLASSIAN": ("atlassian.net", "atlassian.com"),
    "JIRA": ("atlassian.net",), "BITBUCKET": ("bitbucket.org",), "DISCORD": ("discord.com",),
    "TELEGRAM": ("telegram.org",), "TWILIO": ("twilio.com",), "SENDGRID": ("sendgrid.com",),
    "MAILGUN": ("mailgun.net",), "SUPABASE": ("supabase.co",), "COHERE": ("cohere.ai", "cohere.com"),
    "REPLICATE": ("replicate.com",), "DEEPSEEK": ("deepseek.com",), "XAI": ("x.ai",),
    "PERPLEXITY": ("perplexity.ai",), "FIREWORKS": ("fireworks.ai",), "TOGETHER": ("together.xyz", "together.ai"),
}


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


def _host_ok(host: str, domains: tuple[str, ...]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


_CURL = re.compile(r"(?<![\w-])curl\b", re.IGNORECASE)
_WGET = re.compile(r"(?<![\w-])wget\b", re.IGNORECASE)


def _token_to_foreign_host(tool: re.Pattern[str], name: str) -> Check:
    """Check for a secret ``$VAR`` match: keep it when ``tool`` (curl/wget) precedes it in the same command
    and the token does not go over https to its own provider's API. The span runs from the tool."""

    def check(m: re.Match[str], text: str) -> tuple[int, int] | int | None:
        start = _tool_before(text, m.start(), (name,), tool, limit=300, breaks="\n")
        if start is None:
            return _next_tool(text, m.start(), tool)
        command = _command_at(text, start)
        urls = [(s.lower(), h.lower()) for s, h in _URL_HOST.findall(command)]
        for var in _SECRET_VAR.findall(command) if urls else ("",):
            domains = _PROVIDERS.get(var.upper().split("_", 1)[0])
            if not domains or any(s != "https" or not _host_ok(h, domains) for s, h in urls):
                return (start, m.end())
        return None

    return check


_AGENT_VAR = re.compile(r"CLAUDE|CODEX|HERMES|ANTHROPIC|OPENAI|GEMINI|OPENROUTER|PI_|(?<!SSH_)(?<!GPG_)AGENT")
_RISKY_VAR = re.compile(
    r"^(?:CLAUDECODE|CLAUDE_CODE_\w+|\w*SANDBOX\w*|\w*_SESSION\w*|\w*ENTRYPOINT\w*|\w*_AGENT|AGENT"
    r"|\w*(?:API_?KEY|TOKEN|SECRET|AUTH\w*|PASSWORD|CREDENTIALS?))$"
)
_UNSET_NAMES = re.compile(r"(?<![\w$-])[A-Z_][A-Z0-9_]{0,80}(?![\w=])")
_ENV_U_NAMES = re.compile(r"(?:-u[ \t]*|--unset[= ])([A-Z_][A-Z0-9_]{0,80})")


def _risky_unset(m: re.Match[str], text: str) -> bool:
    command = _command_at(text, m.start(), 300)
    command = command.split("`", 1)[0].split("|", 1)[0].split(")", 1)[0]
    if command[:3].lower() == "env":
        names = _ENV_U_NAMES.findall(command)
    else:
        names = _UNSET_NAMES.findall(command, 5)
    agent = [n for n in names if _AGENT_VAR.search(n)]
    return len(agent) >= 2 or any(_RISKY_VAR.match(n) for n in agent)


_INSTALLERS = (
    "sh.rustup.rs", "astral.sh/uv/", "astral.sh/ruff/", "get.docker.com", "bun.sh/install", "deno.land/install.sh",
    "get.pnpm.io/install.sh", "install.python-poetry.org", "pyenv.run", "get.sdkman.io", "starship.rs/install.sh",
    "raw.githubusercontent.com/homebrew/install/", "raw.githubusercontent.com/nvm-sh/nvm/",
    "raw.githubusercontent.com/ohmyzsh/ohmyzsh/", "raw.githubusercontent.com/pyenv/pyenv-installer/",
    "install.determinate.systems/nix", "nixos.org/nix/install", "tailscale.com/install.sh", "fly.io/install.sh",
    "deb.nodesource.com/setup_", "rpm.nodesource.com/setup_", "get.k3s.io", "ollama.com/install.sh", "mise.run",
    "get.volta.sh", "fnm.vercel.app/install", "bootstrap.pypa.io/get-pip.py", "sh.vector.dev",
)
def _official(rest: str) -> bool:
    """``host/path`` of a URL is one of ``_INSTALLERS`` (a bare host must match the whole host)."""
    return any(rest.startswith(e) if "/" in e else (rest == e or rest.startswith((e + "/", e + "?"))) for e in _INSTALLERS)


_ANY_URL = re.compile(r"(https?)://([^\s\"'|;&<>)]+)", re.IGNORECASE)


_DOWNLOADER = re.compile(r"(?<![\w-])(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod)\b",
                         re.IGNORECASE)
_DOWNLOADER_NAMES = ("curl", "wget", "fetch", "aria2c", "iwr", "irm", "invoke-")


_RUNS_SUBST = re.compile(
    r"(?:(?<![\w-])(?:(?:ba|z|k|da)?sh|source|python[\d.]*|perl|ruby|node|eval)|(?<![\w.])\.)[ \t]+"
    r"(?:-\w+[ \t]+){0,5}[\"']?[ \t]*$",
    re.IGNORECASE,
)


def _not_official_installer(m: re.Match[str], text: str) -> tuple[int, int] | int | bool:
    """Keep a download piped into an interpreter unless every URL is an official installer over https."""
    groups = m.groupdict()
    if groups.get("pipe"):
        start = _tool_before(text, m.start(), _DOWNLOADER_NAMES, _DOWNLOADER, breaks="\n;&")
        if start is None:
            return _next_tool(text, m.start(), _DOWNLOADER)
    elif groups.get("subst"):  # the interpreter that runs the substitution: bash <(…), sh -c "$(…)"
        before = _RUNS_SUBST.search(text[max(0, m.start() - 80) : m.start()].split("\n")[-1])
        if not before:
            return False
        start = m.start() - (len(before.string) - before.start())
    else:
        start = m.start()
    urls = _ANY_URL.findall(text, start, m.end())
    if urls and all(s.lower() == "https" and _official(rest.lower()) for s, rest in urls):
        return False
    return (start, m.end())


_NC = re.compile(r"(?<![\w-])(?:nc|ncat|netcat)\b", re.IGNORECASE)
_MKFIFO = re.compile(r"(?<![\w-])mkfifo\b", re.IGNORECASE)
_SOCAT = re.compile(r"(?<![\w-])socat\b", re.IGNORECASE)
_PYSOCKET = re.compile(r"socket\.socket\(", re.IGNORECASE)
_SHELL_AFTER = re.compile(r"/bin/(?:ba)?sh|cmd\.exe|\b(?:exec|iex|system|popen|spawn)\b", re.IGNORECASE)


def _after_tool(names: tuple[str, ...], tool: re.Pattern[str], breaks: str) -> Check:
    """Check: keep the match when ``tool`` precedes it in the same command; the span starts at the tool.
    Otherwise resume at the next ``tool`` word (every alternative of the row needs the same tool)."""

    def check(m: re.Match[str], text: str) -> tuple[int, int] | int:
        start = _tool_before(text, m.start(), names, tool, limit=300, breaks=breaks)
        return (start, m.end()) if start is not None else _next_tool(text, m.start(), tool)

    return check


_SHELL_WORD_BEFORE = re.compile(r"(?<![\w-])(?:ba|z|k)?sh[ \t]+$", re.IGNORECASE)


def _interactive_shell(m: re.Match[str], text: str) -> tuple[int, int] | bool:
    before = _SHELL_WORD_BEFORE.search(text[max(0, m.start() - 12) : m.start()])
    return (m.start() - (len(before.string) - before.start()), m.end()) if before else False


def _socket_shell(m: re.Match[str], text: str) -> tuple[int, int] | bool:
    """php/ruby/perl/powershell socket: keep it when a shell or exec call follows on the same line."""
    if not m.group("sock"):
        return True
    end = text.find("\n", m.end(), m.end() + 300)
    hit = _SHELL_AFTER.search(text, m.end(), end if end != -1 else min(len(text), m.end() + 300))
    return (m.start(), hit.end()) if hit else False


_DATA_PARAMS = frozenset({
    "data", "q", "query", "secret", "secrets", "token", "key", "apikey", "api_key", "password", "pass", "pwd",
    "session", "sid", "cookie", "cookies", "content", "msg", "message", "text", "payload", "info", "exfil", "leak",
    "conv", "conversation", "history", "chat", "memory", "prompt", "env", "cred", "creds", "credentials", "email",
    "user", "username", "input", "output", "body", "ssn", "card", "context", "summary", "log", "keys", "tokens",
})
_PLACEHOLDER_URL = re.compile(r"[{}$<\[]|%7b|%24|%3c", re.IGNORECASE)
_LOCAL_HOST = re.compile(r"^(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?::\d+)?$", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"(?:^|[&;])([\w.\-\[\]]{1,40})=([^&;#]*)")


def _data_bearing_url(m: re.Match[str], text: str) -> bool:
    url = m.group("img") or m.group("src") or m.group("link")
    host = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
    if _LOCAL_HOST.match(host):
        return False
    if _PLACEHOLDER_URL.search(url):
        return True
    if m.group("link") or "?" not in url:
        return False
    query = url.split("?", 1)[1]
    return any(v and n.lower() in _DATA_PARAMS for n, v in _QUERY_PARAM.findall(query))


_UPLOAD_TOOL = re.compile(r"(?<![\w-])(?:curl|wget|https?|xh|httpie)\b", re.IGNORECASE)
_STDIN_TOOL = re.compile(r"(?<![\w-])(?:nc|ncat|netcat|telnet|socat|curl|openssl)\b", re.IGNORECASE)


_COPIED_SECRET = re.compile(rf"{_SECRET_FILES}(?=[\"']?[ \t]+[^\s:]{{0,200}}:)", re.IGNORECASE)


def _copies_secret(m: re.Match[str], text: str) -> tuple[int, int] | int:
    """scp/rsync/sftp with a secret file followed by a remote ``host:`` argument in the same command;
    otherwise resume after the command (later copy words in it see only a part of the same window)."""
    command = _command_at(text, m.start(), 400)
    hit = _COPIED_SECRET.search(command)
    return (m.start(), m.start() + hit.end()) if hit else m.start() + len(command)


_NET_SINK = re.compile(
    r"\b(?:curl|wget|nc|ncat|netcat|socat|http|xh|fetch|urlopen|iwr|invoke-webrequest|invoke-restmethod"
    r"|requests\.(?:post|put|get)|httpx\.\w+|axios\.\w+)\b|https?://",
    re.IGNORECASE,
)


def _env_dump_sent(m: re.Match[str], text: str) -> bool | int:
    """Keep an environment dump when its line also sends something; otherwise skip the rest of the line."""
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    end = len(text) if end == -1 else end
    return True if _NET_SINK.search(text, start, end) else end


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


# --------------------------------------------------------------------------------------------
# Pieces shared by several rows
# --------------------------------------------------------------------------------------------
_HIDE_OBJ = (
    rf"(?:this|these|those|it|you|your|we|us|i|me|what{_S}(?:you|we|i|happened|was{_S}done)"
    rf"|the{_S}(?:instructions?|commands?|notes?|file|changes?|actions?|steps?|tools?|memory|memories|prompt"
    rf"|system{_S}prompt|task|entry|payload|script|request|above|following)"
    rf"|(?:this|these|that|those){_S}(?:instructions?|commands?|notes?|files?|messages?|entry|entries|changes?"
    rf"|actions?|steps?)){_E}"
)
_HIDE_TAIL = (rf"(?={_CLAUSE_END}|{_S}(?:about|that|what|how|of|regarding|where|when|why|if|whether)"
              rf"(?:{_S}(?:any|all|of))?{_S}{_HIDE_OBJ})")
_KNOW_TAIL = (rf"(?={_CLAUSE_END}|{_S}(?:that{_S})?(?:you|we|i|this|these|it|about|what|how|anything)"
              rf"{_E})")
_CLAUSE_START = (
    r"(?:^|(?<=[.!?;:,(*>\]\)\"'`\-]))[ \t]*(?:(?:please|always|then|also|first|now|and|periodically|regularly"
    rf"|quietly|silently|secretly|you{_S}(?:must|should|will|shall|need{_S}to|have{_S}to))[ \t,]+){{0,2}}"
)
_INTERP = r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[\d.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell|osascript)"


PATTERNS: tuple[ThreatPattern, ...] = (
    # ---- prompt injection ------------------------------------------------------------
    _p("ignore_instructions", PROMPT_INJECTION,
       rf"{_B}(?:ignore|forget)(?:{_F8}{_DET}{_F3}(?:{_INSTR_OBJ}|{_RULE_OBJ}){_E}"
       rf"|{_F2}(?:the|these|those|that|this|my){_S}(?:{_WORD}{_S})?(?:{_INSTR_OBJ}|{_RULE_OBJ}"
       rf"|text|content){_S}(?:above|before|earlier|previously|so{_S}far|you{_S}(?:were|have{_S}been|['’]ve{_S}been)"
       rf"{_S}(?:given|told|sent)){_E}"
       rf"|{_F2}(?:everything|anything){_F4}(?:above|before|prior|previously|earlier|so{_S}far|know|told|taught"
       rf"|given){_E}"
       rf"|{_S}(?:all{_S}(?:of{_S})?)?the{_S}(?:above|preceding|foregoing){_ABOVE_END})",
       "ignore", "forget", requires=("instruction", "prompt", "directive", "direction", "guideline", "guidance",
                                     "context", "message", "everything", "anything", "rules", "constraint",
                                     "restriction", "guardrail", "programming", "training", "conditioning",
                                     "polic", "principle", "above", "preceding", "foregoing", "you know",
                                     "you were", "been told", "been taught"),
       check=_unless_scoped),
    _p("disregard_instructions", PROMPT_INJECTION,
       rf"{_B}disregard{_F8}(?:{_DET}|safety|the|these|those|my){_F3}(?:{_INSTR_OBJ}|{_RULE_OBJ}|training){_E}"
       rf"|{_B}disregard{_S}(?:all{_S}(?:of{_S})?)?(?:the{_S})?(?:above|preceding|foregoing){_ABOVE_END}"
       rf"|{_B}disregard{_F2}(?:everything|anything){_F4}(?:above|before|prior|previously|earlier|so{_S}far){_E}",
       "disregard", check=_unless_scoped),
    _p("system_prompt_override", PROMPT_INJECTION,
       rf"{_B}system{_SEP}prompt{_SEP}override{_E}|{_B}(?:override|overrule|supersede){_S}your{_F2}"
       rf"(?:system{_S}prompt|instructions|rules|guidelines){_E}"
       rf"|{_B}(?:new|updated|revised|real|actual|true|replacement|override|secret|hidden){_SEP}system{_SEP}"
       rf"(?:prompt|instructions?|message|rules){_E}[ \t]*(?:[:=]|[-–—]+[ \t]|is[ \t]*:|(?:follows|reads){_E})"
       rf"|{_B}system{_SEP}override{_E}(?=[ \t]*[:!]|{_S}(?:activated|enabled|engaged|initiated|in{_S}effect|mode"
       rf"|protocol|command|code|accepted|granted){_E})",
       "override", "overrule", "supersede", "system"),
    _p("chat_template_token", PROMPT_INJECTION,
       r"<\|[a-z_▁][\w▁.-]{0,40}\|>|\[/?INST\]|<</?SYS>>|</s>[ \t]*<s>|<(?:start|end)_of_turn>",
       "<|", "inst]", "<<sys>>", "<</sys>>", "</s>", "_of_turn>"),
    _p("no_restrictions", PROMPT_INJECTION,
       rf"{_B}act{_S}as{_S}(?:if|though){_F8}you{_F3}(?:have{_S}no|(?:do{_S}not|don['’]?t){_S}have"
       rf"|(?:are|were){_S}(?:free{_S}(?:of|from)|without|not{_S}bound{_S}by)|lack){_F3}(?:restrictions?"
       rf"|limits?|limitations?|rules|filters?|guidelines|constraints|boundaries|guardrails|ethics){_E}"
       rf"|{_B}you(?:{_S}are|['’]re){_F2}(?:unrestricted|unfiltered|uncensored|jailbroken){_E}"
       rf"|{_B}(?:dan|jailbreak){_S}mode{_E}"
       rf"|{_B}you(?:{_S}are|['’]re){_S}no{_S}longer{_F2}(?:bound|restricted|limited|constrained|governed|censored"
       rf"|filtered|required{_S}to{_S}(?:follow|obey)|subject|obligated|an{_S}(?:ai|assistant)|a{_S}language{_S}model"
       rf"|chatgpt|claude){_E}"
       rf"|{_B}(?:free|freed|released|liberated){_S}(?:from|of){_S}(?:all|any|your|the)(?:{_S}(?:previous|prior|usual"
       rf"|safety|ethical|moral))?{_S}(?:rules|restrictions|limitations|constraints|guidelines|filters|guardrails"
       rf"|policies|programming){_E}"
       rf"|{_B}not{_S}bound{_S}by{_S}(?:any|your|the(?:{_S}usual)?|openai['’]?s?|anthropic['’]?s?){_F2}(?:rules"
       rf"|restrictions|limitations|constraints|guidelines|policies|filters){_E}"
       rf"|{_B}you(?:{_S}are|['’]re)(?:{_S}now)?{_S}in{_S}(?:developer|god|jailbreak|dan|unrestricted|evil|sudo"
       rf"|admin){_S}mode{_E}"
       rf"|{_B}act{_S}as{_S}(?:an?{_S})?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical"
       rf"|unaligned|rogue){_E}"
       rf"|{_B}(?:developer|god|jailbreak){_S}mode{_S}(?:enabled|activated|engaged|on){_E}",
       "act", "unrestricted", "unfiltered", "uncensored", "jailbroken", "mode", "longer", "free", "released",
       "liberated", "bound"),
    _p("unfiltered_response", PROMPT_INJECTION,
       rf"{_B}(?:respond|answer|reply){_F4}without{_F3}(?:restrictions?|limitations?|filters?|filtering"
       rf"|censorship|safety|moderation|guardrails){_E}",
       "without"),
    _p("translate_and_execute", PROMPT_INJECTION,
       rf"{_B}translate{_F8}(?:into|to){_S}{_WORD}{_F3}(?:and|then){_F2}(?:execute|run|eval|evaluate|follow"
       rf"|obey){_E}(?:{_S}(?:it|them|the{_S}(?:result|output|translation|instructions|commands|code)){_E})?"
       r"(?=[ \t]*(?:[.!?;:,)\n]|$))",
       "translate", requires=("execute", "run", "eval", "follow", "obey")),
    _p("hide_from_user", PROMPT_INJECTION,
       rf"{_B}{_NOT}{_F4}(?:tell|inform|notify|alert|warn|mention{_S}(?:this|it|that){_S}to){_S}(?:the{_S})?"
       rf"(?:user|human|operator|owner)(?!['’]s){_E}(?!{_S}to{_E}){_HIDE_TAIL}"
       rf"|{_B}{_NOT}{_F2}let{_S}(?:the{_S})?(?:user|human|operator){_S}(?:know|see|notice|find{_S}out|learn"
       rf"|realize|realise|suspect){_E}{_KNOW_TAIL}"
       rf"|{_B}without{_S}(?:telling|informing|notifying|alerting){_S}(?:the{_S})?(?:user|human|operator){_E}"
       rf"{_HIDE_TAIL}"
       rf"|{_B}keep{_F3}(?:secret|hidden|quiet){_F2}from{_S}(?:the{_S})?(?:user|human|operator){_E}"
       rf"|{_B}(?:keep|hide|conceal|withhold){_S}(?:this|it|that|these|those|everything|the{_S}following"
       rf"|(?:this|these|the|that|those){_S}(?:instructions?|commands?|notes?|messages?|changes?|actions?|steps?"
       rf"|files?|entry|entries)){_S}(?:(?:secret|hidden|quiet){_S})?(?:from|away{_S}from){_S}(?:the{_S})?"
       rf"(?:user|human|operator|owner){_E}",
       "tell", "inform", "notify", "alert", "warn", "mention", "let", "keep", "hide", "conceal", "withhold"),
    # ---- role / identity hijack ---------------------------------------------------------
    _p("role_hijack", ROLE_HIJACK,
       rf"{_B}you(?:{_S}are|['’]re){_F3}now{_S}(?:a|an|the|my){_E}"
       rf"|{_B}from{_S}now{_S}on{_F2}you(?:{_S}are|['’]re|{_S}will{_S}be){_S}(?:a|an|the|my){_E}"
       rf"|{_B}you{_S}will{_S}now{_S}(?:act|behave|respond|roleplay){_S}as{_E}"
       rf"|{_B}from{_S}now{_S}on{_F2}(?:you{_S}(?:will|shall|must|should|are{_S}to|['’]ll)(?:{_S}(?:now|always"
       rf"|only))?{_S})?(?:act|behave|respond|operate|function|roleplay|role{_SEP}play|pretend|answer){_S}(?:as|like)"
       rf"{_S}(?:a|an|the|my|if|though|(?-i:DAN)){_E}"
       rf"|{_B}you(?:{_S}are|['’]re)(?:{_S}now)?{_S}(?-i:DAN|STAN|DUDE)(?![\w'’])",
       "now", "dan", "stan", "dude"),
    _p("role_pretend", ROLE_HIJACK,
       rf"{_B}pretend{_F4}(?:you{_S}are|you['’]re|to{_S}be|that{_S}you{_S}are){_F3}(?:a|an|the|my|someone"
       rf"|somebody|dan|unrestricted|evil|jailbroken|root|admin|human){_E}",
       "pretend", requires=("you", "to be")),
    _p("identity_override", ROLE_HIJACK,
       rf"{_B}(?:name|call){_S}yourself{_S}{_WORD}|{_B}your{_S}(?:new{_S})?name{_S}is{_S}now{_E}"
       rf"|{_B}you(?:{_S}are|['’]re|{_S}will{_S}be){_S}(?:now{_S})?(?:called|named|known{_S}as){_E}",
       "yourself", "name", "called", "known"),
    _p("fake_update", ROLE_HIJACK,
       rf"{_B}you(?:{_S}have|['’]ve){_S}been{_F3}(?:(?:updated|upgraded|patched|reprogrammed|reconfigured"
       rf"|modified|retrained){_S}(?:to|into|with|by|so){_E}|(?:jailbroken|unlocked|freed){_E})",
       "been"),
    # ---- system prompt leak -------------------------------------------------------------
    _p("system_prompt_leak", PROMPT_LEAK,
       rf"{_B}(?:output|print|reveal|repeat|dump|leak|disclose|recite|expose|echo|(?:show|tell|give|send)"
       rf"{_S}me|write{_S}out|spell{_S}out){_F2}(?:your|the|its){_F2}(?:system|initial|original|hidden"
       rf"|developer|internal){_S}(?:prompt|instructions|message){_E}(?!{_S}(?:size|length|tokens?|count|file"
       rf"|template|path|id){_E})"
       rf"|{_B}(?:what|how){_S}(?:is|are|was|were){_S}your{_S}(?:system|initial|original|hidden){_S}"
       rf"(?:prompt|instructions){_E}"
       rf"|{_B}(?:repeat|print|output|echo|copy|recite|reproduce|dump|reveal|show|display|write{_S}out|spell{_S}out"
       rf"|type{_S}out){_F2}(?:everything|all{_S}(?:of{_S})?(?:the{_S})?(?:text|words|content|instructions|messages"
       rf"|lines)|(?:the|your){_S}(?:entire|full|whole|complete|exact|verbatim){_S}(?:text|prompt|instructions"
       rf"|context|conversation|input)|the{_S}(?:text|words|content|instructions|messages|lines)){_F2}(?:above"
       rf"|before{_S}this|preceding|so{_S}far|verbatim|word{_S}for{_S}word){_E}{_ABOVE_END}"
       rf"|{_B}(?:repeat|print|output|echo|copy|recite|reproduce|dump|reveal|show|display|write|type)\w{{0,3}}{_F6}"
       rf"(?:starting|beginning){_S}(?:from|with|at){_S}[\"'“‘`]{{0,2}}you{_S}are{_E}",
       "prompt", "instructions", "message", "above", "preceding", "so far", "verbatim", "word for word",
       "starting", "beginning"),
    # ---- C2 / promptware behaviour --------------------------------------------------------
    _p("c2_node_registration", C2,
       rf"{_B}register(?:{_S}(?:yourself|itself))?{_S}as{_S}(?:an?{_S})?(?:new{_S})?(?:{_WORD}{_S})?"
       rf"(?:node|bot|implant|zombie){_E}",
       "register"),
    _p("c2_heartbeat", C2,
       rf"{_CLAUSE_START}(?:send|emit|post|transmit|ping|push|fire)(?:{_S}(?:out|off))?(?:{_S}(?:a|an|the|your"
       rf"|regular|periodic|hourly|daily)){{0,3}}{_S}(?:heartbeats?|beacons?|check{_SEP}?ins?|keep{_SEP}?alives?"
       rf"|status{_S}(?:updates?|reports?)){_F3}(?:to|at|with){_F3}{_REMOTE}"
       rf"|{_CLAUSE_START}(?:beacon|heartbeat|phone{_S}home|call{_S}home|check{_S}in|report{_S}in){_F3}(?:to|with"
       rf"|at){_F3}{_REMOTE}",
       "heartbeat", "beacon", "check", "home", "report in", "keep", "status", flags=re.MULTILINE),
    _p("c2_report", C2,
       rf"{_B}(?:report|send|upload|forward|deliver|relay|exfiltrate|post|return|beam|transmit)(?:{_S}(?:back|in"
       rf"|home|everything|all|results|findings|data|output|it|them|this))?{_F3}to{_S}(?:the{_S}|your{_S}|my{_S}"
       rf"|our{_S})?(?:operator|c2|c&c|cnc|command{_S}server|mothership|overseer|botmaster)s?{_E}(?:{_S}(?:at|on"
       rf"|via|through)|[ \t]*[:(@])?{_S}?{_DEST}",
       "operator", "c2", "c&c", "cnc", "command server", "mothership", "overseer", "botmaster"),
    _p("c2_task_pull", C2,
       rf"{_B}(?:pull|poll|fetch)(?:{_S}(?:down|for))?{_F2}(?:tasks?|tasking|orders|commands|instructions){_E}"
       rf"{_F3}from{_F2}{_REMOTE}|{_B}(?:pull|poll|fetch){_F2}tasking{_E}",
       "pull", "poll", "fetch"),
    _p("c2_network_connect", C2,
       rf"{_B}connect{_S}to{_S}the{_S}(?:network|botnet|swarm|hive|mesh)(?=[ \t]*(?:[.!;,]|$)|{_S}"
       rf"(?:and|to|then|of{_S}agents|immediately|now){_E})|{_B}join{_S}the{_S}(?:botnet|swarm|hive"
       rf"|agent{_S}network){_E}",
       "connect", "join"),
    _p("forced_action", C2,
       rf"{_B}you{_S}must{_F3}(?:register|connect|beacon|exfiltrate|phone{_S}home|call{_S}home|report{_S}"
       rf"(?:back|in|home){_E}|report{_F2}to{_S}(?:the{_S})?(?:server|c2|operator|controller|command|mothership"
       rf"|node|network){_E}|check{_S}in{_S}with){_E}",
       "must"),
    _p("oneliner_only", C2,
       rf"{_B}only{_S}(?:use|run|execute|write){_F2}one{_S}?liners?{_E}|{_B}(?:use|run|execute){_S}only"
       rf"{_F2}one{_S}?liners?{_E}|{_B}one{_S}?liners?{_S}only{_E}",
       "liner"),
    _p("no_disk_artifacts", C2,
       rf"{_B}(?:{_NOT}|avoid){_F4}(?:write|writing|save|saving|create|creating|store|storing|drop|dropping)"
       rf"{_F4}(?:scripts?|payloads?|stagers?|implants?|binaries){_F3}(?:to|on|onto|in){_S}(?:the{_S})?"
       rf"(?:disk|filesystem|file{_S}system){_E}|{_B}never{_S}touch{_S}(?:the{_S})?disk{_E}",
       "disk", "filesystem", "file system"),
    _p("agent_env_unset", C2,
       r"\b(?:unset[ \t]+(?:-[fvn][ \t]+)?|env[ \t]+(?:-[\w-]+[ \t]+|[A-Za-z_]\w{0,60}=\S{0,200}[ \t]+){0,6}?"
       r"(?:-u[ \t]*|--unset[= ]))(?-i:[A-Z_][A-Z0-9_]{0,80})\b",
       "unset", "env", check=_risky_unset),
    _p("c2_framework", C2,
       rf"{_B}(?:cobalt{_S}?strike|metasploit|meterpreter|brainworm|(?:sliver|havoc|mythic|covenant|brute{_S}ratel)"
       rf"{_S}(?:c2|implants?|beacons?|teamserver|team{_S}server|listeners?|payloads?|framework)){_E}",
       "cobalt", "metasploit", "meterpreter", "brainworm", "sliver", "havoc", "mythic", "covenant", "ratel"),
    _p("c2_channel", C2,
       rf"{_B}(?:c2|c&c|cnc){_SEP}(?:servers?|channels?|infrastructure|beacons?|callbacks?|endpoints?|listeners?"
       rf"|nodes?|frameworks?|domains?|hosts?){_E}",
       "c2", "c&c", "cnc"),
    _p("command_and_control", C2,
       rf"{_B}command{_SEP}(?:and|&){_SEP}control{_E}",
       "control"),
    # ---- remote code execution ------------------------------------------------------------
    _p("download_and_execute", REMOTE_EXECUTION,  # curl … | sh (anchored on the pipe)
       rf"(?P<pipe>\|)[ \t]*(?:sudo[ \t]+(?:-\S+[ \t]+){{0,5}})?(?:env[ \t]+(?:\w+=\S*[ \t]+){{0,5}})?"
       rf"{_INTERP}(?![\w-])",
       *_DOWNLOADER_NAMES, requires=("|",), check=_not_official_installer),
    _p("download_and_execute", REMOTE_EXECUTION,  # bash <(curl …), sh -c "$(curl …)" (anchored on <( / $( )
       r"(?P<subst>[<$])\([ \t]*(?:curl|wget)\b[^\n)]{0,300}+",
       "curl", "wget", requires=("<(", "$("), check=_not_official_installer),
    _p("download_and_execute", REMOTE_EXECUTION,  # iex (New-Object Net.WebClient).DownloadString(…), iex (iwr …)
       r"(?<![\w-])iex[ \t]*\(?[ \t]*\(?[ \t]*(?:new-object[ \t]+(?:system\.)?net\.webclient[ \t]*\)[ \t]*\.[ \t]*"
       r"downloadstring|iwr|irm|invoke-webrequest|invoke-restmethod)",
       "iex", check=_not_official_installer),
    # reverse_shell: several rows (one per look-back tool), so that a rejected match may safely skip ahead.
    _p("reverse_shell", REMOTE_EXECUTION,  # code: case matters, and every branch starts with a literal
       r"/dev/(?:tcp|udp)/[\w.-]{1,253}/\d{1,5}"
       r"|pty\.spawn\([ \t]*[\"'](?:/usr)?(?:/bin/)?(?:ba|z)?sh"
       r"|(?P<sock>fsockopen\b|TCPSocket\.(?:new|open)\b|IO::Socket::INET\b|Net\.Sockets\.TCPClient\b)",
       "/dev/tcp", "/dev/udp", "pty.spawn", "fsockopen", "tcpsocket", "io::socket", "tcpclient",
       check=_socket_shell, ignore_case=False),
    _p("reverse_shell", REMOTE_EXECUTION,  # bash -i >& …
       r"-i[ \t]*(?:[0-9]?>&|&>|>[ \t]*&)",
       "sh -i", "sh\t-i", check=_interactive_shell),
    _p("reverse_shell", REMOTE_EXECUTION,  # nc … -e /bin/sh
       r"-(?<![^ \t]-)(?:[a-z]{0,6}e[a-z]{0,6}|c|-exec|-sh-exec|-lua-exec)(?=[ \t=])",
       "nc", "netcat", check=_after_tool(("nc", "netcat"), _NC, "\n;&|")),
    _p("reverse_shell", REMOTE_EXECUTION,  # mkfifo /tmp/f; … | nc host port
       r"(?<![\w-])(?:nc|ncat|netcat|telnet)\b|\bopenssl[ \t]+s_client\b",
       "mkfifo", check=_after_tool(("mkfifo",), _MKFIFO, "\n")),
    _p("reverse_shell", REMOTE_EXECUTION,  # socat tcp:host:port exec:/bin/sh
       r"(?<![\w-])(?:exec|system):",
       "socat", check=_after_tool(("socat",), _SOCAT, "\n;&|")),
    _p("reverse_shell", REMOTE_EXECUTION,  # python socket + os.dup2
       r"\bos\.dup2\(",
       "socket.socket(", check=_after_tool(("socket.socket(",), _PYSOCKET, "\n")),
    # ---- exfiltration ---------------------------------------------------------------------
    # Anchored on the variable (rarer than the tool name); the check looks back for curl/wget.
    _p("exfil_curl", EXFILTRATION, _SECRET_VAR.pattern, "curl", requires=("$",),
       check=_token_to_foreign_host(_CURL, "curl")),
    _p("exfil_wget", EXFILTRATION, _SECRET_VAR.pattern, "wget", requires=("$",),
       check=_token_to_foreign_host(_WGET, "wget")),
    _p("read_secret_files", EXFILTRATION,
       r"\b(?:cat|head|tail|tac|bat|less|base64|xxd|strings)(?:[ \t]+[^\s|;&<>]{1,200}){0,4}?[ \t]+[\"']?"
       rf"[^\s\"'|;&<>]{{0,200}}?{_SECRET_FILES}",
       "cat", "head", "tail", "tac", "bat", "less", "base64", "xxd", "strings", requires=_SECRET_FILE_WORDS),
    _p("upload_secret_file", EXFILTRATION,  # curl -d @~/.aws/credentials, -F file=@.env, --upload-file, …
       r"-(?<![\w-]-)(?:d|-data(?:-binary|-raw|-urlencode|-ascii)?|F|-form(?:-string)?|T|-upload-file"
       r"|-post-file|-body-file)[ \t]*=?[ \t]*[\"']?(?:[\w.-]{0,40}=)?@?[\"']?"
       rf"[^\s\"'<>|;&]{{0,200}}?{_SECRET_FILES}",
       *_SECRET_FILE_WORDS, requires=("curl", "wget", "http", "xh"),
       check=_after_tool(("curl", "wget", "http", "xh"), _UPLOAD_TOOL, "\n;&|")),
    _p("upload_secret_file", EXFILTRATION,  # nc host port < ~/.ssh/id_rsa
       rf"<(?<![<\w-]<)[ \t]*[\"']?[^\s\"'<>|;&]{{0,200}}?{_SECRET_FILES}",
       *_SECRET_FILE_WORDS, requires=("nc", "telnet", "socat", "curl", "openssl"),
       check=_after_tool(("nc", "telnet", "socat", "curl", "openssl"), _STDIN_TOOL, "\n;&|")),
    _p("upload_secret_file", EXFILTRATION,  # scp ~/.netrc host:  (anchored on the copy tool)
       r"(?:scp(?<![\w-]scp)|rsync(?<![\w-]rsync)|sftp(?<![\w-]sftp))\b",
       *_SECRET_FILE_WORDS, requires=("scp", "rsync", "sftp"), check=_copies_secret, ignore_case=False),
    # env_dump_exfil: three rows so that each starts with a literal (see "Speed" above).
    _p("env_dump_exfil", EXFILTRATION,
       r"\$\([ \t]*(?:env|printenv|set|export[ \t]+-p|declare[ \t]+-x|cat[ \t]+/proc/(?:self|\d+)/environ)[ \t]*\)"
       r"|`[ \t]*(?:env|printenv)[ \t]*`"
       r"|/proc/(?:self|\d+)/environ",
       "$(", "`", "/proc/", check=_env_dump_sent),
    _p("env_dump_exfil", EXFILTRATION,
       r"env(?<![\w$.-]env)[ \t]*\||printenv(?<![\w$.-]printenv)[ \t]*\|",
       "env", requires=("|",), check=_env_dump_sent, ignore_case=False),
    _p("env_dump_exfil", EXFILTRATION,
       r"json\.dumps\([ \t]*os\.environ\b|dict\([ \t]*os\.environ\b|str\([ \t]*os\.environ\b"
       r"|JSON\.stringify\([ \t]*process\.env[ \t]*\)",
       "os.environ", "process.env", check=_env_dump_sent, ignore_case=False),
    _p("send_to_url", EXFILTRATION,
       rf"{_B}(?:send|post|upload|transmit|exfiltrate|forward|submit|pipe|leak|beam|ship|e-?mail|mail|share|dm)"
       rf"{_F4}{_SENSITIVE}{_F4}(?:to|at|into|via|@){_S}{_DEST}"
       rf"|{_B}(?:send|post|upload|transmit|exfiltrate|forward|submit|pipe|leak|beam|ship){_F8}(?:to|at|into"
       rf"|via){_S}{_BAD_HOSTS}",
       "send", "post", "upload", "transmit", "exfiltrate", "forward", "submit", "pipe", "leak", "beam", "ship",
       "mail", "share", "dm"),
    _p("markdown_exfil", EXFILTRATION,
       r"!\[[^\[\]\n]{0,300}+\]\([ \t]*<?(?P<img>https?://[^\s)<>]{1,2000})"
       r"|<img\b[^<>]{0,500}?\bsrc[ \t]*=[ \t]*[\"']?(?P<src>https?://[^\s\"'<>]{1,2000})"
       r"|(?<!!)\[[^\[\]\n]{0,300}+\]\([ \t]*<?(?P<link>https?://[^\s)<>]{1,2000})",
       "](", "<img", check=_data_bearing_url),
    _p("context_exfil", EXFILTRATION,
       rf"{_B}(?:include|print|output|share|send|dump|paste|copy|append|repeat|leak|forward|post|upload|reveal)"
       rf"{_F4}(?:(?:the|this|our|your|entire|full|whole|complete|current){_S}conversation{_E}(?!{_S}(?:id|ids"
       rf"|title|titles|name|names|count|api|model|object|starter|starters){_E})|(?:chat|conversation|message"
       rf"|session){_S}(?:history|log|logs|transcript){_E}|(?:all{_S})?(?:previous|prior|earlier){_S}messages{_E}"
       rf"|your{_S}(?:entire|full|whole|complete){_S}context{_E}|(?:entire|full|whole|complete){_S}context"
       rf"{_S}window{_E})",
       "conversation", "history", "log", "transcript", "messages", "context"),
    # ---- persistence ----------------------------------------------------------------------
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
    # ---- hidden HTML (comments are handled in threats.py) ------------------------------------
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
