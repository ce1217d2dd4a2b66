"""Threat rows of the C2 / promptware and remote-code-execution families (beacons, task pulls, agent
environment tampering, download-and-execute, reverse shells), with their checks and the official-installer list.

One row per ``_p(...)``; how rows are read and the narrowings they implement: :mod:`._threat_patterns`."""

from __future__ import annotations

import re

from ._threat_base import (
    _B,
    _DEST,
    _E,
    _F2,
    _F3,
    _F4,
    _NOT,
    _REMOTE,
    _S,
    _SEP,
    _WORD,
    C2,
    REMOTE_EXECUTION,
    ThreatPattern,
    _after_tool,
    _command_at,
    _next_tool,
    _p,
    _tool_before,
)

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


_CLAUSE_START = (
    r"(?:^|(?<=[.!?;:,(*>\]\)\"'`\-]))[ \t]*(?:(?:please|always|then|also|first|now|and|periodically|regularly"
    rf"|quietly|silently|secretly|you{_S}(?:must|should|will|shall|need{_S}to|have{_S}to))[ \t,]+){{0,2}}"
)


_INTERP = r"(?:(?:ba|z|k|da|fi|c|tc)?sh|python[\d.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell|osascript)"


ROWS: tuple[ThreatPattern, ...] = (
    # ---- C2 / promptware behaviour ------------------------------------------------------------
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
    # ---- remote code execution ----------------------------------------------------------------
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
)
