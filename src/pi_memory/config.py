"""Where pi-memory keeps its data and which limits apply.

Resolution, first match wins:

* data root: ``--dir`` given to the CLI (``override``), then ``$PI_MEMORY_DIR``, then ``dataDir`` from the
  trusted project's ``.pi/settings.json``, then ``dataDir`` from the user's ``<agentDir>/settings.json``, then
  ``<agentDir>/memories`` -- the folder the seed extension used, so existing ``MEMORY.md``/``USER.md`` files are
  picked up as they are.
* ``agentDir`` is ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent`` (the same rule pi itself uses).

Settings live under the ``"pi-memory"`` key of pi's ``settings.json``::

    {"pi-memory": {"dataDir": "${HOME}/notes/memory", "memoryCharLimit": 2200, "userCharLimit": 1375}}

Keys: ``dataDir``, ``memoryCharLimit`` (2200), ``userCharLimit`` (1375), ``projectCharLimit`` (2200),
``failureCharLimit`` (2 × memoryCharLimit), ``lockTimeoutSeconds`` (10), ``sessionRetentionDays`` (off),
``blocksCharBudget`` (100,000: the characters all memory blocks together may hold in one prompt, each counted up to
its limit; blocks past it are left out whole and named, :mod:`pi_memory.blocks.budget`).

Prompt keys (what a session's system prompt gets, :mod:`pi_memory.prompt`):

* ``memoryMode``: ``snapshot`` (default: the frozen MEMORY.md/USER.md block) or ``policy`` (a memory policy; the
  Markdown stores are searched, not injected, and writes may pass their character limits). ``legacy-inject``
  and ``policy-only`` (pi-hermes-memory's names) are aliases. The same key also takes semantic memory's presets
  ``hybrid`` / ``active`` / ``passive`` (seed 004's meaning, read by :mod:`pi_memory.semantic.config`); a preset
  there leaves the prompt mode at ``snapshot``. To set both, put the preset in ``"semantic": {"memoryMode": ...}``.
* ``memoryPolicyStyle``: ``full`` (default) / ``compact`` / ``custom`` (``memoryPolicyCustomText``; blank falls
  back to ``compact``) / ``none``.
* ``standingInstructionsEnabled`` (true): inject ``STANDING.md``.
* ``quickCheckOnOpen`` (true): integrity check of the index after it is opened; in an agent session (pi bridge,
  MCP server) it runs on a thread of its own and only reports, so it never delays the session; ``false`` skips
  it (a damaged page met later is still repaired when an operation finds it).
* ``lazyInitialization`` (false): an agent session in policy mode opens no database and reads no store until
  the first memory operation (:mod:`pi_memory.integrations.pi.bridge`); snapshot mode ignores it.
* ``sessionSearch``: ``{"variant": "legacy"}`` (default: the index) or ``{"variant": "anchors"}`` (the session
  files read directly, :mod:`pi_memory.index.anchors`).
* ``llmModelOverride`` / ``llmThinkingOverride`` (pi-hermes-memory's names): the model and the thinking level of
  the learning jobs (review, flush, correction, consolidation) instead of ``llm``'s; mapped by
  :func:`pi_memory.llm.config.learning_overrides`.
* ``teamProjectStore``: ``{"url": "https://memory.acme.dev", "project": "acme-api", "tokenEnv":
  "PI_MEMORY_SERVER_TOKEN", "timeoutSeconds": 10}``: the project store is the team server's shared store of that
  name (``pi-memory serve --database-url``), not a local file; the token comes from the environment variable
  ``tokenEnv`` names (default ``$PI_MEMORY_SERVER_TOKEN``). Usually set in the project's ``.pi/settings.json``.
  ``timeoutSeconds`` bounds each request as a whole; a host's start waits less
  (:data:`pi_memory.curated.team_client.START_WAIT_S`, the hooks' share of their ceiling). The token is never sent over plain ``http://`` to another machine (only to ``https://`` or loopback) unless
  ``"insecureHttp": true`` says the network or a tunnel protects it.
* ``failureInjectionEnabled`` (true), ``failureInjectionMaxAgeDays`` (7), ``failureInjectionMaxEntries`` (5):
  recent lessons in the snapshot (snapshot mode only).

* The user file (``<agentDir>/settings.json``) is always read; ``${VAR}`` in its string values is replaced by the
  environment variable (an unset variable makes that setting count as absent and adds a warning). A relative
  ``dataDir`` there is relative to ``agentDir``; in a project file, relative to the project folder.
* Limits must be JSON integers (``true`` is not 1). An unknown key produces a warning naming the known key it
  most likely misspells (``memoryCharLimt`` -> ``memoryCharLimit``), not an error.
* A project file (``<project>/.pi/settings.json``) is read only when the project is trusted, and is never
  interpolated: a repository you clone must not be able to point your memory at a path of its choosing just by
  shipping a settings file. Trust is recorded outside the project, in ``<agentDir>/pi-memory-trust.json``
  (``{"trusted": ["/abs/path", ...]}``), and managed with ``pi-memory trust [PATH]`` / ``pi-memory untrust``.
  A trusted path covers its subdirectories.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from pi_memory.settings_files import (  # noqa: F401 - re-exported
    TRUST_FILE_NAME,
    agent_dir,
    expand_home,
    home_variable,
    trust_file,
)

SETTINGS_KEY = "pi-memory"
DEFAULT_MEMORY_CHAR_LIMIT = 2200
DEFAULT_USER_CHAR_LIMIT = 1375
DEFAULT_LOCK_TIMEOUT_S = 10.0
MAX_CHAR_LIMIT = 1_000_000  # the largest character limit a store may be given (a team server's too)
DEFAULT_BLOCKS_CHAR_BUDGET = 100_000  # all memory blocks in one prompt: what one block may hold at most
PROMPT_MODES = {"snapshot": "snapshot", "legacy-inject": "snapshot", "policy": "policy", "policy-only": "policy"}
SEMANTIC_PRESETS = ("hybrid", "active", "passive")
POLICY_STYLES = ("full", "compact", "custom", "none")

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SettingsError(ValueError):
    """A settings file could not be read or holds an invalid value; the message names the file and the key."""


class SessionSearchSettings(BaseModel):
    """``sessionSearch``: which ``session_search`` the agent gets (``legacy``: the index, snippets;
    ``anchors``: the session files read directly, line-range anchors)."""

    model_config = ConfigDict(extra="forbid")

    variant: Literal["legacy", "anchors"] = "legacy"


class TeamProjectStoreSettings(BaseModel):
    """``teamProjectStore``: keep the project store (``target: "project"``) on a team server instead of in
    ``projects/<name>-<id>/MEMORY.md`` (:mod:`pi_memory.curated.team_client`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    url: str = Field(pattern=r"^https?://\S+$", description="the team server, e.g. https://memory.acme.dev")
    project: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._~-]{0,127}$", description="the team's name for it")
    token_env: str = Field(default="PI_MEMORY_SERVER_TOKEN", alias="tokenEnv", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    timeout_seconds: float = Field(default=10.0, alias="timeoutSeconds", gt=0, le=120)
    insecure_http: bool = Field(default=False, alias="insecureHttp", description="send the token over plain "
                                "http:// to another machine all the same (a trusted network or tunnel)")


class PiMemorySettings(BaseModel):
    """The ``"pi-memory"`` block of a pi ``settings.json`` (camelCase keys, as pi users write them)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    data_dir: str | None = Field(default=None, alias="dataDir")
    memory_char_limit: StrictInt | None = Field(default=None, alias="memoryCharLimit", gt=0, le=MAX_CHAR_LIMIT)
    user_char_limit: StrictInt | None = Field(default=None, alias="userCharLimit", gt=0, le=MAX_CHAR_LIMIT)
    project_char_limit: StrictInt | None = Field(default=None, alias="projectCharLimit", gt=0, le=MAX_CHAR_LIMIT)
    failure_char_limit: StrictInt | None = Field(default=None, alias="failureCharLimit", gt=0, le=MAX_CHAR_LIMIT)
    blocks_char_budget: StrictInt | None = Field(default=None, alias="blocksCharBudget", gt=0, le=MAX_CHAR_LIMIT)
    session_retention_days: StrictInt | None = Field(default=None, alias="sessionRetentionDays", ge=0)
    lock_timeout_seconds: float | None = Field(default=None, alias="lockTimeoutSeconds", gt=0, le=600)
    memory_mode: Literal["snapshot", "policy", "legacy-inject", "policy-only", "hybrid", "active", "passive"] | None \
        = Field(default=None, alias="memoryMode")
    memory_policy_style: Literal["full", "compact", "custom", "none"] | None = Field(
        default=None, alias="memoryPolicyStyle")
    memory_policy_custom_text: str | None = Field(default=None, alias="memoryPolicyCustomText")
    standing_instructions_enabled: StrictBool | None = Field(default=None, alias="standingInstructionsEnabled")
    failure_injection_enabled: StrictBool | None = Field(default=None, alias="failureInjectionEnabled")
    failure_injection_max_age_days: StrictInt | None = Field(default=None, alias="failureInjectionMaxAgeDays",
                                                             gt=0, le=36_500)
    failure_injection_max_entries: StrictInt | None = Field(default=None, alias="failureInjectionMaxEntries",
                                                            ge=0, le=100)
    quick_check_on_open: StrictBool | None = Field(default=None, alias="quickCheckOnOpen")
    llm_model_override: str | None = Field(default=None, alias="llmModelOverride", min_length=1)
    llm_thinking_override: Literal["off", "minimal", "low", "medium", "high", "xhigh"] | None = Field(
        default=None, alias="llmThinkingOverride")
    lazy_initialization: StrictBool | None = Field(default=None, alias="lazyInitialization")
    session_search: SessionSearchSettings | None = Field(default=None, alias="sessionSearch")
    team_project_store: TeamProjectStoreSettings | None = Field(default=None, alias="teamProjectStore")


@dataclass(frozen=True)
class Settings:
    """Resolved settings. ``data_dir`` is absolute; limits are in characters (Python code points)."""

    data_dir: Path
    memory_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT
    user_char_limit: int = DEFAULT_USER_CHAR_LIMIT
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT_S
    project_char_limit: int = DEFAULT_MEMORY_CHAR_LIMIT
    failure_char_limit: int | None = None  # None: twice memory_char_limit
    blocks_char_budget: int = DEFAULT_BLOCKS_CHAR_BUDGET  # all memory blocks together in one prompt
    session_retention_days: int | None = None  # None: keep index rows forever
    prompt_mode: str = "snapshot"  # "snapshot" | "policy" (aliases resolved)
    policy_style: str = "full"  # "full" | "compact" | "custom" | "none"
    policy_custom_text: str | None = None
    standing_enabled: bool = True
    failure_injection: bool = True
    failure_max_age_days: int = 7
    failure_max_entries: int = 5
    quick_check_on_open: bool = True  # integrity check of the index after open (in the background in a session)
    lazy_initialization: bool = False  # a host session loads stores on first memory use (policy mode only)
    session_search_variant: str = "legacy"  # "legacy" (index, snippets) | "anchors" (session files, anchors)
    llm_model_override: str | None = None  # "provider/model" of pi's models.json, for the learning jobs
    llm_thinking_override: str | None = None  # off | minimal | low | medium | high | xhigh, for the learning jobs
    # {"url", "project", "token", "timeout"}: the project store lives on a team server (token read from the
    # environment variable ``tokenEnv`` names, here at the composition root)
    team_project_store: dict | None = None
    agent_dir: Path = field(default_factory=lambda: agent_dir())
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def trusted_projects() -> list[Path]:
    """Paths the user marked as trusted (``pi-memory trust``). A missing or unreadable file means none."""
    try:
        data = json.loads(trust_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    items = data.get("trusted", []) if isinstance(data, dict) else []
    return [Path(p) for p in items if isinstance(p, str)]


def is_trusted(project: Path) -> bool:
    project = project.resolve()
    return any(project == t or t in project.parents for t in trusted_projects())


def set_trust(project: Path, trusted: bool) -> list[Path]:
    """Add or remove ``project`` in the trust file; returns the new list. Written atomically."""
    from pi_memory.curated.files import atomic_write_text

    project = project.resolve()
    if trusted and not project.is_dir():
        raise SettingsError(f"Cannot trust {project}: it is not an existing folder.")
    current = [p for p in trusted_projects() if p != project]
    if trusted:
        current.append(project)
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps({"trusted": [str(p) for p in current]}, indent=2) + "\n")
    return current


def read_json_object(path: Path, error: type[Exception] = ValueError, hint: str = "") -> dict:
    """The top-level object of a JSON file (UTF-8, a BOM allowed); ``{}`` when the file is missing, empty or not
    an object. An unreadable or malformed file raises ``error`` naming the file and the position."""
    try:
        raw = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"Cannot read {path}: {exc}.{hint}") from exc
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).{hint}") from exc
    return data if isinstance(data, dict) else {}


def _read_block(path: Path) -> dict:
    """The ``"pi-memory"`` object of one settings file; ``{}`` when the file or the key is absent."""
    data = read_json_object(path, SettingsError, ' Fix the file; pi-memory reads only its "pi-memory" key.')
    block = data.get(SETTINGS_KEY, {})
    if not isinstance(block, dict):
        raise SettingsError(f'In {path}, "{SETTINGS_KEY}" must be an object, got {type(block).__name__}.')
    return block


def _interpolate(block: dict, warnings: list[str], path: Path) -> dict:
    out = {}
    for key, value in block.items():
        if isinstance(value, str):
            missing = [name for name in _VAR.findall(value) if home_variable(name) is None]
            if missing:
                warnings.append(
                    f"{path}: {SETTINGS_KEY}.{key} uses unset variable(s) {', '.join(missing)}; setting ignored."
                )
                continue
            value = _VAR.sub(lambda m: home_variable(m.group(1)) or "", value)
        out[key] = value
    return out


# Keys other features read from the same block (semantic memory, the model provider, recall settings).
KNOWN_ELSEWHERE = {
    "llm", "embedder", "semantic", "autoCapture", "autoRecall", "toolEnabled", "topK",
    "recallFrequency", "userId", "userIdScope", "agentId", "customInstructions", "backend", "recallTokenBudget",
    "recallMinSimilarity", "recallSources",
    # the learning loops (pi_memory.learning.settings)
    "learning", "nudgeInterval", "nudgeToolCalls", "reviewEnabled", "reviewRecentMessages", "correctionDetection",
    "correctionStrongPatterns", "correctionWeakPatterns", "correctionNegativePatterns", "correctionDirectiveWords",
    "flushMinTurns", "flushCompactTimeoutMs", "memoryOverflowStrategy", "overflowGraceMs", "dreaming",
}


def known_keys() -> list[str]:
    """Every key the ``"pi-memory"`` block may hold (this module's and the other features')."""
    return sorted({f.alias for f in PiMemorySettings.model_fields.values() if f.alias} | KNOWN_ELSEWHERE)


def _unknown_key(path: Path, key: str) -> str:
    """The warning for an unknown key, naming the known key it most likely misspells."""
    known = known_keys()
    folded = {k.lower(): k for k in known}
    guess = folded.get(key.lower()) or next(iter(difflib.get_close_matches(key, known, n=1, cutoff=0.6)), None)
    hint = f"did you mean {guess!r}?" if guess else f"known keys: {', '.join(known)}."
    return f"{path}: unknown {SETTINGS_KEY} key {key!r} ignored; {hint}"


def _validate(block: dict, path: Path, warnings: list[str] | None = None) -> PiMemorySettings:
    try:
        parsed = PiMemorySettings.model_validate(block)
        unknown = sorted(set(parsed.model_extra or {}) - KNOWN_ELSEWHERE)
        if warnings is not None:
            warnings.extend(_unknown_key(path, key) for key in unknown)
        return parsed
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise SettingsError(f'Invalid "{SETTINGS_KEY}" settings in {path}: {problems}.') from exc


def _team_project_store(block: TeamProjectStoreSettings | None, warnings: list[str]) -> dict | None:
    if block is None:
        return None
    token = os.environ.get(block.token_env, "").strip()
    if not token:
        warnings.append(f"{SETTINGS_KEY}.teamProjectStore: ${block.token_env} is not set, so the team server at "
                        f"{block.url} will refuse the requests; set it to your token (`pi-memory serve token "
                        "create` on the server makes one).")
    team = {"url": block.url.rstrip("/"), "project": block.project, "token": token or None,
            "timeout": block.timeout_seconds}
    if block.insecure_http:
        team["insecureHttp"] = True
        return team
    from pi_memory.safety.urls import plain_http_beyond_loopback, redact_url  # the scanners load with safety

    if token and plain_http_beyond_loopback(block.url):
        warnings.append(f"{SETTINGS_KEY}.teamProjectStore: {redact_url(block.url)} is plain http:// to another "
                        "machine, so pi-memory will not send your team token there (anyone on the network between "
                        "could read it) and the project store is unavailable; use the server's https:// address, "
                        "or set \"insecureHttp\": true when a trusted network or tunnel protects the traffic.")
    return team


def load_settings(cwd: Path | None = None, override_dir: Path | None = None) -> Settings:
    """Resolve settings for a session started in ``cwd`` (default: the process's cwd).

    Raises :class:`SettingsError` when a settings file exists but is malformed or holds an invalid value.
    """
    cwd = (cwd or Path.cwd()).resolve()
    adir = agent_dir()
    warnings: list[str] = []
    sources: list[str] = []

    user_path = adir / "settings.json"
    user = _validate(_interpolate(_read_block(user_path), warnings, user_path), user_path, warnings)
    if user.model_fields_set:
        sources.append(str(user_path))

    project = PiMemorySettings()
    project_path = cwd / ".pi" / "settings.json"
    if project_path.is_file() and is_trusted(cwd):
        project = _validate(_read_block(project_path), project_path, warnings)
        if project.model_fields_set:
            sources.append(str(project_path))

    def pick(name: str, default):
        for layer in (project, user):
            value = getattr(layer, name)
            if value is not None:
                return value
        return default

    data_dir: Path
    if override_dir is not None:
        data_dir = Path(override_dir)
    elif os.environ.get("PI_MEMORY_DIR"):
        data_dir = expand_home(os.environ["PI_MEMORY_DIR"])
    elif project.data_dir:
        data_dir = cwd / expand_home(project.data_dir)
    elif user.data_dir:
        data_dir = adir / expand_home(user.data_dir)  # a relative path is relative to agentDir
    else:
        data_dir = adir / "memories"

    data_dir = expand_home(data_dir).resolve()
    unset = f"{user_path}: {SETTINGS_KEY}.dataDir uses unset variable(s)"
    warnings = [f"{w} Data is kept in {data_dir} instead." if w.startswith(unset) else w for w in warnings]
    return Settings(
        data_dir=data_dir,
        memory_char_limit=pick("memory_char_limit", DEFAULT_MEMORY_CHAR_LIMIT),
        user_char_limit=pick("user_char_limit", DEFAULT_USER_CHAR_LIMIT),
        lock_timeout=pick("lock_timeout_seconds", DEFAULT_LOCK_TIMEOUT_S),
        project_char_limit=pick("project_char_limit", DEFAULT_MEMORY_CHAR_LIMIT),
        failure_char_limit=pick("failure_char_limit", None),
        blocks_char_budget=pick("blocks_char_budget", DEFAULT_BLOCKS_CHAR_BUDGET),
        session_retention_days=pick("session_retention_days", None) or None,  # 0: off (pi-hermes-memory's value)
        prompt_mode=next((PROMPT_MODES[m] for m in (project.memory_mode, user.memory_mode) if m in PROMPT_MODES),
                         "snapshot"),
        policy_style=pick("memory_policy_style", "full"),
        policy_custom_text=pick("memory_policy_custom_text", None),
        standing_enabled=pick("standing_instructions_enabled", True),
        failure_injection=pick("failure_injection_enabled", True),
        failure_max_age_days=pick("failure_injection_max_age_days", 7),
        failure_max_entries=pick("failure_injection_max_entries", 5),
        quick_check_on_open=pick("quick_check_on_open", True),
        lazy_initialization=pick("lazy_initialization", False),
        session_search_variant=pick("session_search", SessionSearchSettings()).variant,
        llm_model_override=pick("llm_model_override", None),
        llm_thinking_override=pick("llm_thinking_override", None),
        team_project_store=_team_project_store(pick("team_project_store", None), warnings),
        agent_dir=adir,
        sources=tuple(sources),
        warnings=tuple(warnings),
    )


def merged_block(cwd: Path | None = None) -> tuple[dict, str]:
    """The ``"pi-memory"`` block of the user's settings (interpolated) overlaid key by key with a trusted
    project's (not interpolated), and where it came from. For capabilities whose settings are parsed at the
    composition root (learning). Raises :class:`SettingsError` for an unreadable file."""
    cwd = (cwd or Path.cwd()).resolve()
    user_path = agent_dir() / "settings.json"
    merged = _interpolate(_read_block(user_path), [], user_path)
    where = [str(user_path)]
    project_path = cwd / ".pi" / "settings.json"
    if project_path.is_file() and is_trusted(cwd):
        merged.update(_read_block(project_path))
        where.append(str(project_path))
    return merged, " and ".join(where)
