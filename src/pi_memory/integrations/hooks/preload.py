"""The prompt hook's query embedder, loaded on a thread of its own while the hook imports the recall stack.

A cold prompt hook spends most of its time importing what recall needs (numpy, the safety scanner, the pydantic
models: about 0.6 s of Python, which holds the interpreter lock) and then loading the bundled embedding model
(onnxruntime's session: about 0.25 s, mostly native code that lets other threads run). Recall asked for the
model only once those imports were done, so the two ran one after the other. :func:`start` begins the load at
the start of the recall path, when the settings say this recall will embed with the bundled model; recall then
finds it loaded, or waits on the model's own lock for the rest of the load. Nothing else changes: the same
object (:func:`pi_memory.embed.default_embedder`, one per process) embeds the query, with the same deadline.

The thread imports onnxruntime, tokenizers and :mod:`pi_memory.embed` (numpy and its own modules) while the
calling thread reads the settings (pydantic: about 0.15 s), and loads the model once they say recall will use
it; only pi-memory's settings modules are imported on the calling thread meanwhile, so the two threads never
import the same modules of pi-memory in a different order. When the settings say otherwise, the two imports
(about 60 ms of CPU on that thread) are all it cost. On busy cores (:func:`_core_free`) nothing is started: the
model loads when recall asks for it, as before. A failure here is ignored: recall loads the model itself and
reports what went wrong.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_LOCAL = ("local", "onnx", "default")  # the names pi_memory.embed.get_embedder reads as the bundled model


def start(cwd: Path, prompt: str, recalled_before: bool) -> threading.Thread | None:
    """Start loading the bundled model for ``prompt``'s recall in ``cwd`` (the thread, or ``None`` when recall
    will not use it: a prompt recall skips, recall off, another backend or embedding provider, or
    ``recallFrequency: "session"`` with this host session's recall done: ``recalled_before``; or when no core is
    free)."""
    from pi_memory.semantic.prompt_gate import skip_reason

    if skip_reason(prompt) is not None or not _core_free():
        return None
    go = threading.Event()
    plan: dict = {}

    def load() -> None:
        try:
            import onnxruntime  # noqa: F401 - what the load imports first, while the settings are read
            import tokenizers  # noqa: F401

            from pi_memory import embed

            go.wait()
            config = plan.get("embedder")
            if config is not None and embed.get_embedder(config or None) is embed.default_embedder():
                embed.default_embedder().load()
        except Exception:  # noqa: BLE001, S110 - recall loads it again and says what failed
            pass

    thread = threading.Thread(target=load, name="pi-memory-embedder", daemon=True)
    thread.start()
    try:
        plan["embedder"] = _bundled_config(cwd, recalled_before)
    except Exception:  # noqa: BLE001 - invalid settings: recall says so
        pass
    finally:
        go.set()
    return thread


def _core_free() -> bool:
    """Whether a whole core was idle over the last minute (1-minute load average at most the CPU count less
    one; never on one CPU). The load beside the imports is a win only then: on busy cores it takes CPU time
    from the imports and the keyword lists, and a hook under its 2 s ceiling that answered by keyword in time
    was cut off empty (at load 5-8 on 2 cores: 18 of 28 empty answers, against 8 of 28 with the load after the
    imports; ``benchmarks/hook_preload_overlap.py`` at load 8: side by side p50 1.9 s, one after the other
    1.7 s)."""
    try:
        return os.getloadavg()[0] <= (os.cpu_count() or 1) - 1
    except OSError:  # no load average on this system
        return True


def _bundled_config(cwd: Path, recalled_before: bool) -> dict | None:
    """The embedder settings of this recall when it embeds locally (``None``: it will not)."""
    from pi_memory.semantic.config import load_semantic_settings

    settings = load_semantic_settings(cwd)
    if not settings.enabled or not settings.auto_recall or settings.backend.type != "embedded":
        return None
    if settings.recall_frequency == "session" and recalled_before:
        return None
    config = dict(settings.embedder or {})
    return config if str(config.get("provider") or "local").strip().lower() in _LOCAL else None
