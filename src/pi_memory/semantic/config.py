"""Semantic-memory settings: the ``"pi-memory"`` block of pi's ``settings.json``.

Keys (camelCase, as pi users write them); they may also sit in a nested ``"semantic": {...}`` object, whose
keys win over the same keys at the top level (``"semantic": false`` turns semantic memory off)::

    "pi-memory": {
      "memoryMode": "hybrid",          # preset: hybrid (default) | active | passive
      "autoCapture": true,             # override of the preset (unset: inherit)
      "autoRecall": false,             # override of the preset (unset: inherit)
      "toolEnabled": true,             # override of the preset (unset: inherit)
      "topK": 5,                       # integer 1..100; results for recall and mem0_memory search
      "recallFrequency": "user-input", # or "session": only the first prompt of a persistent session
      "userId": "alice",               # default: the OS user name
      "userIdScope": "project",        # or "exact": one identity across projects
      "agentId": "reviewer",           # optional extra partition
      "customInstructions": "...",     # appended to the fact-extraction prompt
      "captureMaxInputTokens": 40000,  # extraction input per turn (estimated tokens); longer turns are read in
                                       # windows until it runs out, and status says what was left unread
      "recallTokenBudget": 1500,       # cap on the injected recall text (estimated tokens)
      "recallMinSimilarity": 0.4,      # cosine a memory needs without keyword evidence; 0 turns the floor off
      "recallSources": ["semantic"],   # add "curated", "sessions", "skills" (default: by host, see
                                       # HOST_RECALL_SOURCES)
      "embedder": {...},               # passed to pi_memory.embed.get_embedder
      "backend": {"type": "embedded"}  # or "self-hosted" / "platform" with their own keys
    }

Presets (the seed's table): each control is independent; an explicit value wins, an unset one inherits::

    memoryMode  autoCapture autoRecall toolEnabled
    hybrid      true        true       true
    active      false       false      true
    passive     true        true       false

Files: ``<agentDir>/settings.json`` always (``${VAR}`` interpolated, as :mod:`pi_memory.config` does), then a
*trusted* project's ``.pi/settings.json`` (not interpolated) whose keys win key by key. The ``llm`` key is read
by :mod:`pi_memory.llm.config`, not here.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError, field_validator

from pi_memory import config as core_config
from pi_memory.retrieval.floors import DEFAULT_MIN_SIMILARITY
from pi_memory.semantic.capture_windows import DEFAULT_MAX_INPUT_TOKENS

MemoryMode = Literal["hybrid", "active", "passive"]
PRESETS: dict[str, dict[str, bool]] = {
    "hybrid": {"auto_capture": True, "auto_recall": True, "tool_enabled": True},
    "active": {"auto_capture": False, "auto_recall": False, "tool_enabled": True},
    "passive": {"auto_capture": True, "auto_recall": True, "tool_enabled": False},
}
DEFAULT_TOP_K = 5
MAX_TOP_K = 100  # the self-hosted server's cap per search (rest_handlers.MAX_TOP_K); recall injects far fewer
DEFAULT_RECALL_BUDGET = 1500
TOP_K_HINT = "topK must be an integer greater than 0; to turn automatic recall off set autoRecall: false, not topK: 0"
SEMANTIC_KEYS = ("memoryMode", "autoCapture", "autoRecall", "toolEnabled", "topK", "recallFrequency", "userId",
                 "userIdScope", "agentId", "customInstructions", "recallTokenBudget", "recallMinSimilarity",
                 "recallSources", "embedder", "backend", "enabled", "captureMaxInputTokens")
MIN_CAPTURE_INPUT_TOKENS = 1_000  # below this not even the extraction prompt and a short window fit
DEFAULT_RECALL_SOURCES = ("semantic",)
# What recall includes when ``recallSources`` is not set, per host (the composition root names its host:
# ``runtime.open_memory(host=...)``). Skills are recalled where the host does not list them: pi lists every
# skill of ours by name and description in its system prompt (``resources_discover``), so recalling one there
# would say it twice; Claude Code and Codex see our skills only when ``pi-memory skills export`` put them in
# their folders (those exported ones are left out of recall there, ``skills.export.listed_by``), so recall is
# how a relevant skill reaches them. Memory blocks are no recall source: every host that recalls injects them
# whole at every run (``docs/architecture.md``); ``memory_search`` searches them.
HOST_RECALL_SOURCES: dict[str, tuple[str, ...]] = {"claude-code": ("semantic", "skills"),
                                                   "codex": ("semantic", "skills")}


def host_recall_sources(settings: SemanticSettings, host: str | None) -> SemanticSettings:
    """``settings`` with ``host``'s default recall sources (:data:`HOST_RECALL_SOURCES`) when the user did not
    set ``recallSources``; unchanged otherwise (an explicit list always wins)."""
    default = HOST_RECALL_SOURCES.get(host or "")
    if default is None or "recall_sources" in settings.model_fields_set:
        return settings
    return settings.model_copy(update={"recall_sources": list(default)})


class SemanticSettingsError(ValueError):
    """Invalid semantic settings; the message names the file, the key and the fix."""


def default_user_id() -> str:
    """The OS user name (``getpass.getuser``), else ``$USER``, else ``"default-user"``."""
    try:
        name = getpass.getuser()
    except Exception:  # noqa: BLE001 - no passwd entry in some containers
        name = os.environ.get("USER") or ""
    return name.strip() or "default-user"


class BackendSettings(BaseModel):
    """``backend``: ``type`` plus the backend's own keys (``baseUrl``, ``apiKey``... kept in ``model_extra``)."""

    model_config = ConfigDict(extra="allow")

    type: Literal["embedded", "self-hosted", "platform"] = "embedded"

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SemanticSettings(BaseModel):
    """Resolved semantic settings. ``auto_capture`` / ``auto_recall`` / ``tool_enabled`` are the effective
    values (preset + overrides); ``overrides`` lists the controls that were set explicitly."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")

    enabled: StrictBool = True
    memory_mode: MemoryMode = Field("hybrid", alias="memoryMode")
    auto_capture: StrictBool | None = Field(None, alias="autoCapture")
    auto_recall: StrictBool | None = Field(None, alias="autoRecall")
    tool_enabled: StrictBool | None = Field(None, alias="toolEnabled")
    top_k: StrictInt = Field(DEFAULT_TOP_K, alias="topK")
    recall_frequency: Literal["user-input", "session"] = Field("user-input", alias="recallFrequency")
    user_id: str = Field(default_factory=default_user_id, alias="userId", min_length=1)
    user_id_scope: Literal["project", "exact"] = Field("project", alias="userIdScope")
    agent_id: str | None = Field(None, alias="agentId")
    custom_instructions: str | None = Field(None, alias="customInstructions")
    capture_max_input_tokens: StrictInt = Field(DEFAULT_MAX_INPUT_TOKENS, alias="captureMaxInputTokens",
                                                ge=MIN_CAPTURE_INPUT_TOKENS, le=10_000_000)
    recall_token_budget: StrictInt = Field(DEFAULT_RECALL_BUDGET, alias="recallTokenBudget", gt=0, le=100_000)
    recall_min_similarity: float = Field(DEFAULT_MIN_SIMILARITY, alias="recallMinSimilarity", ge=0.0, le=1.0,
                                         strict=True)
    recall_sources: list[Literal["semantic", "curated", "sessions", "skills"]] = Field(
        default_factory=lambda: list(DEFAULT_RECALL_SOURCES), alias="recallSources", min_length=1)
    embedder: dict[str, Any] = Field(default_factory=dict)
    backend: BackendSettings = Field(default_factory=BackendSettings)
    overrides: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    @field_validator("top_k")
    @classmethod
    def _top_k(cls, v: int) -> int:
        if v <= 0:
            raise ValueError(f"{TOP_K_HINT} (got {v})")
        if v > MAX_TOP_K:
            raise ValueError(f"topK is {v}, but at most {MAX_TOP_K} results can be fetched per search (the memory "
                             f"server's limit); set topK to a number from 1 to {MAX_TOP_K} (recall uses 5 by default)")
        return v

    @field_validator("user_id", "agent_id")
    @classmethod
    def _ident(cls, v: str | None) -> str | None:
        if v is None:
            return v
        v = v.strip()
        if not v:
            raise ValueError("must not be empty or only whitespace")
        return v

    def model_post_init(self, _ctx: Any) -> None:
        preset = PRESETS[self.memory_mode]
        explicit = []
        for name in ("auto_capture", "auto_recall", "tool_enabled"):
            if getattr(self, name) is None:
                object.__setattr__(self, name, preset[name])
            else:
                explicit.append(name)
        if not self.overrides:
            object.__setattr__(self, "overrides", tuple(explicit))

    def controls(self) -> dict[str, bool]:
        """The effective ``autoCapture`` / ``autoRecall`` / ``toolEnabled``."""
        return {"autoCapture": bool(self.auto_capture), "autoRecall": bool(self.auto_recall),
                "toolEnabled": bool(self.tool_enabled)}

    def describe(self, capture_model: bool = True) -> str:
        """``hybrid (autoCapture on, autoRecall off*, toolEnabled on)`` -- ``*`` marks an explicit override.
        ``capture_model=False``: no chat model is configured, so an ``autoCapture on`` is said to be inactive
        (``autoCapture on but inactive: no chat model``) and never reads as if turns were captured."""
        names = {"auto_capture": "autoCapture", "auto_recall": "autoRecall", "tool_enabled": "toolEnabled"}
        parts = [f"{label} {'on' if getattr(self, key) else 'off'}{'*' if key in self.overrides else ''}"
                 for key, label in names.items()]
        if self.auto_capture and not capture_model:
            parts[0] += " but inactive: no chat model"
        return f"{self.memory_mode} ({', '.join(parts)})"


def parse_semantic(block: dict[str, Any], *, where: str = "settings") -> SemanticSettings:
    """Build :class:`SemanticSettings` from one merged ``"pi-memory"`` block. Raises
    :class:`SemanticSettingsError` naming ``where`` and the key."""
    data = _flatten(block, where)
    if isinstance(data.get("userId"), str) and not data["userId"].strip():
        data.pop("userId")  # an unset ${USER} interpolates to "": fall back to the OS user name
    try:
        return SemanticSettings.model_validate(data)
    except ValidationError as exc:
        problems = []
        for e in exc.errors(include_url=False):
            loc = ".".join(str(p) for p in e["loc"]) or "pi-memory"
            msg = e["msg"].removeprefix("Value error, ")
            if loc == "topK" and "integer" in msg.lower() and TOP_K_HINT not in msg:
                msg = TOP_K_HINT
            problems.append(f"{loc}: {msg}")
        raise SemanticSettingsError(f'Invalid "pi-memory" semantic settings in {where}: {"; ".join(problems)}.') from exc


def load_semantic_settings(cwd: Path | None = None, agent_dir: Path | None = None) -> SemanticSettings:
    """Read and merge the user and (trusted) project files; see the module docstring."""
    adir = agent_dir or core_config.agent_dir()
    cwd = (cwd or Path.cwd()).resolve()
    warnings: list[str] = []
    user_path = adir / "settings.json"
    try:
        user = core_config._interpolate(core_config._read_block(user_path), warnings, user_path)
        merged = _flatten(user)
        sources = [str(user_path)] if any(k in user for k in (*SEMANTIC_KEYS, "semantic")) else []
        project_path = cwd / ".pi" / "settings.json"
        if project_path.is_file() and core_config.is_trusted(cwd):
            project = core_config._read_block(project_path)
            if any(k in project for k in (*SEMANTIC_KEYS, "semantic")):
                merged.update(_flatten(project))
                sources.append(str(project_path))
    except core_config.SettingsError as exc:
        raise SemanticSettingsError(str(exc)) from exc
    settings = parse_semantic(merged, where=" and ".join(sources) or str(user_path))
    return settings.model_copy(update={"sources": tuple(sources)})


def _flatten(block: dict[str, Any], where: str | None = None) -> dict[str, Any]:
    """Top-level semantic keys overlaid with the nested ``semantic`` object (which may disable the feature).
    Raises :class:`SemanticSettingsError` (naming ``where`` when given) for a ``semantic`` of another type."""
    out = {k: block[k] for k in SEMANTIC_KEYS if k in block}
    if out.get("memoryMode") in core_config.PROMPT_MODES:  # the prompt mode shares the key (pi_memory.config)
        del out["memoryMode"]
    nested = block.get("semantic")
    if nested is False:
        out["enabled"] = False
    elif isinstance(nested, dict):
        out.update({k: v for k, v in nested.items() if k in SEMANTIC_KEYS})
    elif nested not in (None, True):
        place = f"In {where}, " if where else ""
        raise SemanticSettingsError(f'{place}"pi-memory.semantic" must be an object or a boolean.')
    return out
