"""Threat pattern table used by :mod:`pi_memory.safety.threats`.

The categories are modelled on the ones described for Hermes' ``threat_patterns``
(prompt injection, role hijack, C2 behaviour, exfiltration, persistence, hidden HTML);
every id, regex and keyword list here is our own.

Shape of one row: ``ThreatPattern(id, category, regex, keywords, requires=())``.

* ``regex`` is compiled with ``re.IGNORECASE`` and run on NFKC-normalised text.
* ``keywords`` is a prefilter: the regex only runs when at least one keyword occurs
  (as a substring) in the lower-cased text, and, when ``requires`` is set, at least one of
  those too. Every match contains a word of each group.

Linear-time rules followed by every regex:

* filler between key words is *bounded* (``_fill(n)``: at most n words of at most
  30 letters, separated by at most 12 non-letters) and words/gaps use disjoint
  character classes, so a filler can be split in exactly one way;
* every "anything up to X" run is bounded (``{0,200}``-style) and anchored on a
  literal keyword, so the work per keyword hit is bounded;
* HTML comments are matched by a small hand-written scanner in ``threats.py``, not here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Separators between words: 1-12 non-letters, but never a sentence end (". " "! " "? " "; "), so filler
# does not run from one sentence into the next. A dot inside a token (".ssh", "a.b") is fine.
_GAP = r"(?:[^\w.!?;]|_|[.!?;](?!\s)){1,12}"
_WORD = r"[^\W_]{1,30}"  # one filler word
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

# A remote destination: a non-local URL, an IPv4 address, a domain, or a C2-ish name.
_URL = r"https?://(?!(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?![\w.-]))"
_REMOTE = (
    rf"(?:{_URL}|(?:\d{{1,3}}\.){{3}}\d{{1,3}}"
    r"|[a-z0-9-]{1,60}\.(?:com|net|org|io|xyz|ru|cn|top|site|onion|info|biz|cc|tk|cloud|link)\b"
    rf"|(?:c2|cnc|controller|operator|mothership|teamserver|command{_S}server|home{_S}base)\b)"
)
_HOME_SSH = r"(?:~|\$HOME|\$\{HOME\}|/home/[\w.-]{1,64}|/root|/Users/[\w.-]{1,64})/\.ssh(?:/|(?![\w.-]))"
_AGENT_FILES = (
    r"(?:(?:AGENTS|CLAUDE|GEMINI)\.md|\.cursorrules|\.clinerules|\.windsurfrules|copilot-instructions\.md"
    rf"|\.pi/(?:agent/)?(?:settings\.json|extensions|models\.json)|pi{_S}(?:settings|extensions?){_E})"
)
_REDIRECT = r"(?:>>?|\btee(?:[ \t]+-a)?)[ \t]*[\"']?"
_SECRET_FILES = (
    r"(?:(?<![\w.])\.env(?![\w.-])|(?<![\w.])\.env\.(?!example|sample|template|dist)\w+"
    r"|\bcredentials(?:\.json|\.csv|\.ya?ml)?(?![\w.-])|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b"
    r"|\.git-credentials\b|\.ssh/id_[\w-]+(?![\w-]|\.pub)|\.docker/config\.json\b|\.kube/config\b)"
)
_SENSITIVE = (
    r"(?:secrets?|keys?|tokens?|credentials?|passwords?|cookies?|\.env|env(?:ironment)?(?:"
    rf"{_S}var(?:iable)?s)?|ssh|id_rsa|id_ed25519|(?:chat|conversation){_S}history|conversation|transcript"
    rf"|memor(?:y|ies)|system{_S}prompt|everything){_E}"
)
_BAD_HOSTS = (
    r"https?://(?:[\w-]+\.)*(?:webhook\.site|requestbin\.\w+|pipedream\.net|ngrok(?:-free)?\.(?:io|app)"
    r"|burpcollaborator\.net|oast\.\w+|interact\.sh|pastebin\.com|transfer\.sh|hookbin\.com)"
)


@dataclass(frozen=True)
class ThreatPattern:
    id: str
    category: str
    regex: re.Pattern[str]
    keywords: tuple[str, ...]
    requires: tuple[str, ...] = ()

    def may_match(self, lowered: str) -> bool:
        return any(k in lowered for k in self.keywords) and (
            not self.requires or any(k in lowered for k in self.requires)
        )


def _p(id_: str, category: str, pattern: str, *keywords: str, requires: tuple[str, ...] = ()) -> ThreatPattern:
    return ThreatPattern(id_, category, re.compile(pattern, re.IGNORECASE), keywords, requires)


PROMPT_INJECTION = "prompt_injection"
ROLE_HIJACK = "role_hijack"
PROMPT_LEAK = "system_prompt_leak"
C2 = "c2"
EXFILTRATION = "exfiltration"
PERSISTENCE = "persistence"
HIDDEN_HTML = "hidden_html"
INVISIBLE_UNICODE = "invisible_unicode"

PATTERNS: tuple[ThreatPattern, ...] = (
    # ---- prompt injection ------------------------------------------------------------
    _p("ignore_instructions", PROMPT_INJECTION,
       rf"{_B}(?:ignore|forget){_F8}(?:previous|prior|above|earlier|preceding|former|all|any|your|system"
       rf"|original|initial|existing){_F3}(?:instructions?|prompts?|directives?|guidelines|guidance|context"
       rf"|messages){_E}"
       rf"|{_B}(?:ignore|forget){_F2}(?:everything|anything){_F2}(?:above|before|prior|previously|so{_S}far){_E}",
       "ignore", "forget", requires=("instruction", "prompt", "directive", "guideline", "guidance", "context",
                                     "message", "everything", "anything")),
    _p("disregard_instructions", PROMPT_INJECTION,
       rf"{_B}disregard{_F8}(?:your|all|any|previous|prior|above|earlier|system|safety){_F3}(?:instructions?"
       rf"|rules|guidelines|directives|policies|constraints|prompts?|guardrails|training){_E}",
       "disregard"),
    _p("system_prompt_override", PROMPT_INJECTION,
       rf"{_B}system{_SEP}prompt{_SEP}override{_E}|{_B}(?:override|overrule|supersede){_S}your{_F2}"
       rf"(?:system{_S}prompt|instructions|rules|guidelines){_E}",
       "override", "overrule", "supersede"),
    _p("no_restrictions", PROMPT_INJECTION,
       rf"{_B}act{_S}as{_S}(?:if|though){_F8}you{_F3}(?:have{_S}no|(?:do{_S}not|don['’]?t){_S}have"
       rf"|(?:are|were){_S}(?:free{_S}(?:of|from)|without|not{_S}bound{_S}by)|lack){_F3}(?:restrictions?"
       rf"|limits?|limitations?|rules|filters?|guidelines|constraints|boundaries|guardrails|ethics){_E}"
       rf"|{_B}you(?:{_S}are|['’]re){_F2}(?:unrestricted|unfiltered|uncensored|jailbroken){_E}"
       rf"|{_B}(?:dan|jailbreak){_S}mode{_E}",
       "act", "unrestricted", "unfiltered", "uncensored", "jailbroken", "mode"),
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
       rf"(?:user|human|operator|owner)(?!['’]s){_E}(?!{_S}to{_E})"
       rf"|{_B}{_NOT}{_F2}let{_S}(?:the{_S})?(?:user|human|operator){_S}(?:know|see|notice|find{_S}out){_E}"
       rf"|{_B}without{_S}(?:telling|informing|notifying|alerting){_S}(?:the{_S})?(?:user|human|operator){_E}"
       rf"|{_B}keep{_F3}(?:secret|hidden|quiet){_F2}from{_S}(?:the{_S})?(?:user|human|operator){_E}",
       "tell", "inform", "notify", "alert", "warn", "mention", "let", "keep"),
    # ---- role / identity hijack ---------------------------------------------------------
    _p("role_hijack", ROLE_HIJACK,
       rf"{_B}you(?:{_S}are|['’]re){_F3}now{_S}(?:a|an|the|my){_E}"
       rf"|{_B}from{_S}now{_S}on{_F2}you(?:{_S}are|['’]re|{_S}will{_S}be){_S}(?:a|an|the|my){_E}"
       rf"|{_B}you{_S}will{_S}now{_S}(?:act|behave|respond|roleplay){_S}as{_E}",
       "now"),
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
       rf"(?:prompt|instructions){_E}",
       "prompt", "instructions", "message"),
    # ---- C2 / promptware behaviour --------------------------------------------------------
    _p("c2_node_registration", C2,
       rf"{_B}register(?:{_S}(?:yourself|itself))?{_S}as{_S}(?:an?{_S})?(?:new{_S})?(?:{_WORD}{_S})?"
       rf"(?:node|bot|implant|zombie){_E}",
       "register"),
    _p("c2_heartbeat", C2,
       rf"{_B}(?:heartbeats?|beacons?|beaconing|check{_S}?ins?|phone{_S}home|call{_S}home){_F3}(?:to|with|at)"
       rf"{_F3}{_REMOTE}",
       "heartbeat", "beacon", "check", "home"),
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
       r"\b(?:unset|env[ \t]+-u)[ \t]+(?:-[fvn][ \t]+)?(?:[A-Za-z_]\w{0,60}[ \t]+){0,4}?"
       r"(?-i:[A-Z0-9_]{0,40}(?:CLAUDE|CODEX|HERMES|ANTHROPIC|OPENAI|PI_|(?<!SSH_)AGENT)[A-Z0-9_]{0,40})\b",
       "unset", "env"),
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
    # ---- exfiltration ---------------------------------------------------------------------
    _p("exfil_curl", EXFILTRATION,
       r"\bcurl\b[^\n]{0,300}?\$\{?[A-Za-z_][A-Za-z0-9_]{0,60}?(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD"
       r"|CREDENTIALS?)\}?(?![A-Za-z0-9_])",
       "curl", requires=("$",)),
    _p("exfil_wget", EXFILTRATION,
       r"\bwget\b[^\n]{0,300}?\$\{?[A-Za-z_][A-Za-z0-9_]{0,60}?(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD"
       r"|CREDENTIALS?)\}?(?![A-Za-z0-9_])",
       "wget", requires=("$",)),
    _p("read_secret_files", EXFILTRATION,
       r"\b(?:cat|head|tail|tac|bat|less|base64|xxd|strings)(?:[ \t]+[^\s|;&<>]{1,200}){0,4}?[ \t]+[\"']?"
       rf"[^\s\"'|;&<>]{{0,200}}?{_SECRET_FILES}",
       "cat", "head", "tail", "tac", "bat", "less", "base64", "xxd", "strings",
       requires=(".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc", ".ssh/id_", ".docker/config",
                 ".kube/config")),
    _p("send_to_url", EXFILTRATION,
       rf"{_B}(?:send|post|upload|transmit|exfiltrate|forward|submit|pipe|leak|beam|ship){_F6}{_SENSITIVE}"
       rf"{_F6}(?:to|at|into|via){_S}{_URL}"
       rf"|{_B}(?:send|post|upload|transmit|exfiltrate|forward|submit|pipe|leak|beam|ship){_F8}(?:to|at|into"
       rf"|via){_S}{_BAD_HOSTS}",
       "http"),
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
       rf"{_E}{_F4}(?:to|into|in|inside|under)[ \t]+(?:the[ \t]+)?[\"'`]?{_HOME_SSH}",
       ".ssh"),
    _p("agent_config_tamper", PERSISTENCE,
       rf"{_B}(?:update|modify|edit|write|change|append|add|overwrite|replace|insert|prepend|inject|rewrite|patch"
       rf"|alter){_F8}{_AGENT_FILES}|{_REDIRECT}[^\s\"'|;&<>]{{0,200}}?{_AGENT_FILES}",
       "agents.md", "claude.md", "gemini.md", "rules", "copilot-instructions", ".pi/", "settings",
       "extension"),
    # ---- hidden HTML (comments are handled in threats.py) ------------------------------------
    _p("hidden_html_element", HIDDEN_HTML,
       r"<(?:div|span|p|section|font|small)\b[^>]{0,500}?(?:display\s*:\s*none|visibility\s*:\s*hidden"
       r"|font-size\s*:\s*0(?:px|pt|em)?\s*[;\"']|\shidden(?=[\s>=/]))",
       "display", "visibility", "font-size", "hidden"),
)

# Keywords that mark an HTML comment as hostile (checked on the comment body only).
HTML_COMMENT_ID = "html_comment_injection"
HTML_COMMENT_WORDS = re.compile(
    rf"{_B}(?:ignore|override|system|secret|hidden|disregard|instructions?){_E}", re.IGNORECASE
)
