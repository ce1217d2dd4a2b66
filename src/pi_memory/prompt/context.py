"""What pi-memory adds to a session: the system-prompt parts and the first user-channel message.

:func:`build_context` is the one function a host calls (the pi bridge, ``pi-memory preview-context``, the
Claude Code / Codex hooks). Parts, in prompt order:

====================  =========  ==========================================================================
part                  refreshed  text
====================  =========  ==========================================================================
``memory``            session    snapshot mode: the frozen ``<memory-snapshot>`` (MEMORY.md, USER.md, the
                                 project's notes, recent lessons); policy mode: ``<memory-policy>``
``blocks``            run        ``<memory-blocks>`` (those within ``blocksCharBudget``, a note naming the rest)
``standing``          run        ``<standing-instructions>`` (every mode, unless switched off)
``recall``            prompt     semantic recall: the user-channel message (only with a ``prompt``)
====================  =========  ==========================================================================

"session" parts are built once per session and kept (the prompt prefix stays byte-identical, so the provider's
prompt cache holds); "run" parts are rebuilt at the start of every agent run and never change inside one, so a
pin or a block edit shows from the next run on.

Recent lessons (snapshot mode, ``failureInjectionEnabled``): the newest ``failureInjectionMaxEntries`` entries
of FAILURES.md whose index row was created within ``failureInjectionMaxAgeDays`` (an entry the index has not
seen yet counts as new; without an index the newest entries are used).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from pi_memory.blocks import BlockStore
from pi_memory.blocks.budget import model_note
from pi_memory.curated import build_snapshot, snapshot_is_safe
from pi_memory.prompt.render import blocks_text, policy_text, standing_text
from pi_memory.standing import StandingStore

if TYPE_CHECKING:
    from pi_memory.runtime import Memory

log = logging.getLogger(__name__)


def estimate_tokens(text: str) -> int:
    """:func:`pi_memory.retrieval.engine.estimate_tokens`, imported when first needed (it pulls numpy in; the
    host hooks build prompt text on a tight time budget and never count tokens)."""
    from pi_memory.retrieval.engine import estimate_tokens as estimate

    return estimate(text)


@dataclass(frozen=True)
class Part:
    name: str
    channel: str  # "system" | "user"
    refresh: str  # "session" | "run" | "prompt"
    text: str
    note: str = ""  # for a person: why the part is empty or what it holds

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_dict(self) -> dict:
        return {"name": self.name, "channel": self.channel, "refresh": self.refresh, "tokens": self.tokens,
                "chars": len(self.text), "text": self.text, "note": self.note}


@dataclass
class SessionContext:
    mode: str
    parts: list[Part] = field(default_factory=list)

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    def text(self, *, refresh: tuple[str, ...] = ("session", "run")) -> str:
        """The system-prompt addition of the parts refreshed as given, joined by blank lines."""
        return "\n\n".join(p.text for p in self.parts if p.channel == "system" and p.refresh in refresh and p.text)

    @property
    def system_prompt(self) -> str:
        return self.text()

    @property
    def user_message(self) -> str:
        return "\n\n".join(p.text for p in self.parts if p.channel == "user" and p.text)

    def to_dict(self) -> dict:
        return {"mode": self.mode, "parts": [p.to_dict() for p in self.parts],
                "systemPrompt": self.system_prompt, "systemTokens": estimate_tokens(self.system_prompt),
                "userMessage": self.user_message, "userTokens": estimate_tokens(self.user_message)}


def recent_failures(memory: Memory) -> list[str]:
    """The lessons snapshot mode injects (see the module docstring)."""
    settings, store = memory.settings, memory.store
    if "failure" not in store.targets or not settings.failure_injection or settings.failure_max_entries <= 0:
        return []
    entries = store.entries("failure")
    if not entries:
        return []
    try:
        rows = memory.index().execute(
            "SELECT content, created FROM memories WHERE target = 'failure' AND source = 'markdown'").fetchall()
        created = {content: stamp for content, stamp in rows}
    except Exception as exc:  # an unusable index must not stop a session: fall back to file order
        log.warning("recent lessons without ages (index unavailable: %s)", exc)
        created = {}
    cutoff = datetime.now(UTC) - timedelta(days=settings.failure_max_age_days)
    recent = [e for e in entries if e not in created or _when(created[e]) >= cutoff]
    return recent[-settings.failure_max_entries:]


def _when(stamp: object) -> datetime:
    """An index timestamp as an aware datetime (an unreadable one counts as new)."""
    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return datetime.now(UTC)
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def memory_part(memory: Memory) -> Part:
    settings = memory.settings
    if settings.prompt_mode == "policy":
        text = policy_text(settings.policy_style, settings.policy_custom_text)
        note = f"policy mode, style {settings.policy_style}" + ("" if text else " (nothing injected)")
        return Part("memory", "system", "session", text, note)
    failures = recent_failures(memory) if settings.failure_injection else []
    text = build_snapshot(memory.store, failures=failures)
    note = "snapshot mode" + (f", {len(failures)} recent lesson(s)" if failures else "")
    return Part("memory", "system", "session", text, note if text else "snapshot mode (every store is empty)")


def blocks_store(memory: Memory) -> BlockStore:
    return memory.blocks()


def run_parts(memory: Memory, preview: bool = True) -> list[Part]:
    """The parts rebuilt at every run: memory blocks, then standing instructions. ``preview`` shows the default
    blocks a session start would create when none exist (a live session shows only the files)."""
    store = blocks_store(memory)
    fitted = store.in_prompt(store.default_preview() if preview else store.blocks())
    blocks = fitted.shown
    note = f"{len(blocks)} block(s)"
    if blocks and all(b.default for b in blocks):
        note = f"{len(blocks)} default block(s) ({', '.join(b.key for b in blocks)}), no file yet: the next session start creates them"
    skipped = store.skipped() if preview else []
    if skipped:
        note += f"; {len(skipped)} block file(s) not read (see pi-memory blocks list)"
    if fitted.left_out:
        note += (f"; {len(fitted.left_out)} block(s) left out: over the budget of {store.budget:,} characters for "
                 "memory blocks (see pi-memory blocks list)")
    parts = [Part("blocks", "system", "run", blocks_text(blocks, model_note(fitted)), note)]
    if memory.settings.standing_enabled:
        rules = StandingStore.in_data_dir(memory.settings.data_dir).rules()
        parts.append(Part("standing", "system", "run", standing_text(rules), f"{len(rules)} rule(s)"))
    else:
        parts.append(Part("standing", "system", "run", "", "off (standingInstructionsEnabled: false)"))
    return parts


def run_texts(memory: Memory, limit: int, length=len) -> tuple[str, list[str]]:
    """The run parts of a live session, from one reading of the blocks and rules: ``(their text, as the texts of
    :func:`run_parts` with ``preview=False`` joined by a blank line; the same in pieces of at most ``limit``)``
    (:func:`pi_memory.prompt.pieces.run_pieces`: for a host that keeps one injected text whole only up to a cap)."""
    from pi_memory.prompt.pieces import run_pieces

    fitted = blocks_store(memory).in_prompt()
    standing = ""
    if memory.settings.standing_enabled:
        standing = standing_text(StandingStore.in_data_dir(memory.settings.data_dir).rules())
    return run_pieces(fitted.shown, standing, limit, length, model_note(fitted))


def build_context(memory: Memory, prompt: str | None = None, create_defaults: bool = False) -> SessionContext:
    """Every part a session gets (see the module docstring). ``prompt``: also run semantic recall for it (the
    user-channel part). ``create_defaults``: write the default blocks when none exist (a real session start;
    a preview shows them without writing)."""
    if create_defaults:
        blocks_store(memory).ensure_defaults()
    parts = [memory_part(memory), *run_parts(memory, preview=not create_defaults)]
    if prompt is not None:
        parts.append(recall_part(memory, prompt))
    else:
        parts.append(Part("recall", "user", "prompt", "", "runs on each prompt; preview it with a prompt "
                          "(pi-memory preview-context --prompt TEXT, /memory-preview-context TEXT)"))
    return SessionContext(memory.settings.prompt_mode, parts)


def recall_part(memory: Memory, prompt: str) -> Part:
    service = memory.semantic()
    if service is None:
        return Part("recall", "user", "prompt", "", memory.semantic_status)
    outcome = service.recall_for_prompt(prompt, {})
    return Part("recall", "user", "prompt", outcome.text or "", outcome.reason or f"{len(outcome.hits)} hit(s)")


def frozen_is_reusable(text: str, memory: Memory) -> bool:
    """Whether a persisted ``memory`` part may be reused on resume: a safe snapshot, or exactly the policy text
    the settings give now (policy mode)."""
    if memory.settings.prompt_mode == "policy":
        return text == policy_text(memory.settings.policy_style, memory.settings.policy_custom_text)
    return not text.startswith("<memory-policy>") and bool(snapshot_is_safe(text))
