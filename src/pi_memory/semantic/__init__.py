"""Semantic memory: facts captured from conversations, recalled by hybrid search before each agent run.

Modules: :mod:`.models` (shapes), :mod:`.backend` (the backend protocol), :mod:`.embedded` (the default,
SQLite backend), :mod:`.vectors` (vector matrices), :mod:`.prompt_gate` (the prompts recall skips; ranking and
the injected text live in :mod:`pi_memory.retrieval`), :mod:`.capture` (the two-step extraction pipeline; :mod:`.capture_gate`: the turns it
skips, :mod:`.capture_windows`: how long turns are read, :mod:`.supersession`: when a memory may be retired),
:mod:`.outcomes` (capture and recall outcomes in the index), :mod:`.dedup`, :mod:`.config` (settings),
:mod:`.service` (one object per host session), :mod:`.tools` (the ``mem0_memory`` tool).

Typical host use::

    from pi_memory.semantic import open_semantic

    sem = open_semantic(cwd=cwd)
    outcome = sem.recall_for_prompt(prompt, session_state)   # inject outcome.text; persist outcome.marker
    report = sem.capture(user_text, assistant_text, observed_at=turn_time, source={"session_id": sid})
"""

from pi_memory._lazy import lazy_exports

# Every name loads its module on first use: `import pi_memory.semantic.prompt_gate` (the prompt hook) must not
# pull in pydantic (the models) and the index, embedder and model layers (the service).
__getattr__, __dir__ = lazy_exports(__name__, {
    ".backend": "BackendError MemoryChangedError MemoryNotFoundError SemanticBackend",
    ".models": "CaptureReport HistoryEvent MemoryEvent Scope SemanticHit SemanticMemory",
    ".service": "open_semantic SemanticService RecallOutcome RECALL_MARKER_KEY",
})

__all__ = [
    "RECALL_MARKER_KEY",
    "BackendError",
    "CaptureReport",
    "HistoryEvent",
    "MemoryChangedError",
    "MemoryEvent",
    "MemoryNotFoundError",
    "RecallOutcome",
    "Scope",
    "SemanticBackend",
    "SemanticHit",
    "SemanticMemory",
    "SemanticService",
    "open_semantic",
]
