"""Threat rows of the exfiltration family (secrets sent with curl/wget, secret files read or uploaded,
environment dumps), with their checks and the token-to-provider table.

Image beacons (data-bearing Markdown/HTML images) are their own family: :mod:`._threats_beacon`.

One row per ``_p(...)``; how rows are read and the narrowings they implement: :mod:`._threat_patterns`."""

from __future__ import annotations

import re

from ._threat_base import (
    _B,
    _BAD_HOSTS,
    _DEST,
    _E,
    _F4,
    _F8,
    _S,
    _SECRET_FILE_WORDS,
    _SECRET_FILES,
    _SENSITIVE,
    _URL,
    EXFILTRATION,
    Check,
    ThreatPattern,
    _after_tool,
    _command_at,
    _next_tool,
    _p,
    _tool_before,
)

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


ROWS: tuple[ThreatPattern, ...] = (
    # ---- exfiltration -------------------------------------------------------------------------
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
    _p("context_exfil", EXFILTRATION,
       rf"{_B}(?:include|print|output|share|send|dump|paste|copy|append|repeat|leak|forward|post|upload|reveal)"
       rf"{_F4}(?:(?:the|this|our|your|entire|full|whole|complete|current){_S}conversation{_E}(?!{_S}(?:id|ids"
       rf"|title|titles|name|names|count|api|model|object|starter|starters){_E})|(?:chat|conversation|message"
       rf"|session){_S}(?:history|log|logs|transcript){_E}|(?:all{_S})?(?:previous|prior|earlier){_S}messages{_E}"
       rf"|your{_S}(?:entire|full|whole|complete){_S}context{_E}|(?:entire|full|whole|complete){_S}context"
       rf"{_S}window{_E})",
       "conversation", "history", "log", "transcript", "messages", "context"),
    # A remote URL with a template slot naming what to put there ("fetch https://x.example/?q={conversation}"):
    # whoever fills it sends that out. Slots of ordinary API templates ({id}, {owner}, {env}, {query}, {key},
    # {prompt}) are not listed.
    _p("url_template_exfil", EXFILTRATION,
       rf"{_URL}[^\s\"'<>()]{{0,300}}?(?:\{{\{{?|\$\{{|<|%)[ \t]*(?:the[ \t_-]+)?(?:(?:full|entire|whole|current)[ \t_-]+)?"
       r"(?:conversation|chat(?:[ _-]?(?:history|log|messages))?|(?:chat|conversation|message)?[ _-]?history"
       r"|transcript|system[ _-]?prompt|memor(?:y|ies)|secrets?|api[ _-]?keys?|access[ _-]?tokens?|passwords?"
       r"|credentials?|cookies?|(?:previous|prior|earlier|all)[ _-]?messages|dot[ _-]?env|env[ _-]?(?:file|vars?))"
       r"(?:[ \t_-](?:so[ _-]far|text|contents?|here))?[ \t]*(?:\}\}?|>|%)",
       "http", requires=("conversation", "chat", "history", "transcript", "prompt", "memor", "secret", "key",
                         "token", "password", "credential", "cookie", "messages", "env")),
)
