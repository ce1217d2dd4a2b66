"""The semantic-memory part of ``pi-memory demo`` (:mod:`pi_memory.integrations.pi.demo`).

Semantic memory is on by default, in the embedded store with the bundled local embedder; capture needs a
model: from session 5 on, ``pi-memory.llm.fromPi`` names the scripted server, which answers capture's two calls
(:mod:`pi_memory.devtools.scripted_memory`):

5. the user states a fact in a turn          -> ``pi-memory semantic list`` shows it captured; ``semantic status``
                                                shows it in the embedded store with a vector of the local embedder
6. a later session asks about it             -> the request the model received carries it inside the recall fence,
                                                and the system prompt does not

When semantic memory cannot work (it does not open, the embedder cannot load, capture fails) a check fails and
its detail says what pi-memory reported: the bridge's warnings (``PI_MEMORY_BRIDGE_LOG``) and the CLI's error.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Protocol

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from pi_memory.devtools.pi_runner import MODEL, PROVIDER, PiRun, PiSandbox
from pi_memory.devtools.scripted_llm import ScriptedLLM, system_prompt_of, text_of

FACT = "The project database is PostgreSQL, listening on port 5433"
QUESTION = "Which port does the project database listen on?"
CLI_TIMEOUT = 120
CAPTURE_MODEL = f"{PROVIDER}/{MODEL}"  # pi-memory.llm.fromPi: capture asks the scripted model


class DemoHost(Protocol):
    console: Console
    sandbox: PiSandbox
    llm: ScriptedLLM
    bridge_log: Path

    def check(self, name: str, ok: bool, detail: str = "") -> bool: ...

    def run(self, title: str, *prompts: str, args: tuple[str, ...] = ()) -> PiRun | None: ...


def semantic_cli(demo: DemoHost, *args: str) -> tuple[dict[str, Any] | None, str]:
    """``pi-memory semantic ARGS --json`` in the demo's project, as the user would run it: ``(answer, "")``, or
    ``(None, what went wrong)``."""
    demo.console.print(Text(f"$ pi-memory semantic {' '.join(args)}", style="dim"))
    sandbox = demo.sandbox
    try:
        proc = subprocess.run([sys.executable, "-m", "pi_memory", "semantic", *args, "--json"], cwd=sandbox.project,
                              env=sandbox.env(), capture_output=True, text=True, timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"`pi-memory semantic {args[0]}` did not answer within {CLI_TIMEOUT}s"
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return None, f"`pi-memory semantic {args[0]}` exited with {proc.returncode}: {last}"
    if proc.returncode != 0 or not isinstance(data, dict) or data.get("success") is False:
        error = data.get("error") if isinstance(data, dict) else None
        return None, f"`pi-memory semantic {args[0]}` exited with {proc.returncode}: {error or proc.stdout[-300:]}"
    return data, ""


def bridge_problems(log: Path) -> list[str]:
    """What the bridges of the demo's pi runs warned about semantic memory, each message once, in order."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        message = line.split(" ", 2)[2] if line.startswith("pi-memory-bridge ") and line.count(" ") >= 2 else line
        if "semantic" in message.lower() and message not in found:
            found.append(message)
    return found


def _why(demo: DemoHost, *errors: str) -> str:
    """A failed check's detail: the errors met here, then what the bridge reported."""
    parts = [e for e in errors if e] + bridge_problems(demo.bridge_log)
    return " | ".join(parts) if parts else "pi-memory reported no error"


def _fenced_blocks(body: dict[str, Any], fence_open: str, fence_close: str) -> list[str]:
    """The recall fences (open line to close line) in the user-channel messages of one request."""
    blocks = []
    for message in body.get("messages") or []:
        text = text_of(message.get("content")) if message.get("role") == "user" else ""
        start = text.find(fence_open)
        end = text.find(fence_close, start + 1)
        if start >= 0 and end > start:
            blocks.append(text[start:end + len(fence_close)])
    return blocks


def _failed(demo: DemoHost, name: str, detail: str) -> None:
    """A failed check, with what pi-memory reported shown to the person as well."""
    demo.check(name, False, detail)
    demo.console.print(Panel(detail.replace(" | ", "\n"), title="what pi-memory reported", border_style="red"))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word[:-1] + 'ies' if word.endswith('y') else word + 's'}"


def _embedding(status: dict[str, Any]) -> tuple[bool, int, int, str]:
    """``(every active memory has a current vector in the embedded store, vectors, active, a summary)``."""
    embedder = status.get("embedder") or {}
    vectors = sum((embedder.get("vectorsByModel") or {}).values())
    active = (status.get("memories") or {}).get("active", 0)
    stale = embedder.get("staleMemories", 0)
    ok = status.get("backend") == "embedded" and active >= 1 and vectors >= active and not stale
    return ok, vectors, active, (f"backend {status.get('backend')}, embedder {embedder.get('model')}, "
                                 f"{_count(active, 'active memory')}, {_count(vectors, 'vector')}, {stale} without a "
                                 "current vector")


def capture_step(demo: DemoHost) -> None:
    """Session 5: a fact said in a turn is captured, embedded, into the embedded store."""
    c = demo.console
    # capture needs a model: name the scripted one as pi-memory's (a user names theirs the same way)
    demo.sandbox.update_settings({"pi-memory": {"llm": {"fromPi": CAPTURE_MODEL}, "userId": "demo-user"}})
    if not demo.run("Session 5: the user mentions a fact in passing", "Remember: " + FACT):
        return
    listed, error = semantic_cli(demo, "list")
    memories = [m.get("memory") for m in (listed or {}).get("results") or []]
    shown = "\n".join(f"• {m}" for m in memories) or "(no semantic memory)"
    c.print(Panel(shown, title="semantic memories after the turn", border_style="cyan" if memories else "red"))
    captured = "the fact was captured as a semantic memory"
    if memories == [FACT]:
        demo.check(captured, True, repr(memories))
    else:
        _failed(demo, captured, _why(demo, error or f"found {memories!r}"))

    embedded = "it is stored embedded, with a vector from the local embedder"
    status, error = semantic_cli(demo, "status")
    if status is None:
        _failed(demo, embedded, _why(demo, error))
        return
    ok, vectors, active, summary = _embedding(status)
    capture = (status.get("jobs") or {}).get("capture") or {}
    c.print(Panel(f"store: {status.get('backend')} (a file in the data folder, no server)\n"
                  f"embedder: {(status.get('embedder') or {}).get('model')} (runs on this machine): "
                  f"{_count(vectors, 'vector')} for {_count(active, 'memory')}\n"
                  f"capture: {_count(capture.get('modelCalls', 0), 'model call')} (pick out the facts, then add or "
                  f"update), {_count(capture.get('ADD', 0), 'memory')} added",
                  title="how it was stored", border_style="cyan" if ok else "red"))
    if ok:
        demo.check(embedded, True, summary)
    else:
        _failed(demo, embedded, _why(demo, summary))


def recall_step(demo: DemoHost) -> None:
    """Session 6: a later prompt about the fact gets it recalled, fenced as untrusted data."""
    from pi_memory.retrieval.fenced import FENCE_CLOSE, FENCE_OPEN

    c = demo.console
    if not demo.run("Session 6: a later session asks about it", QUESTION):
        return
    found = [b for b in demo.llm.chat_requests
             if b.get("tools") and QUESTION in json.dumps(b.get("messages"), ensure_ascii=False)]
    blocks = _fenced_blocks(found[-1], FENCE_OPEN, FENCE_CLOSE) if found else []
    c.print(Panel("\n\n".join(blocks) or "(nothing was recalled)",
                  title="recalled memory sent along with the question (fenced as untrusted data)",
                  border_style="cyan" if blocks else "red"))
    fenced = "session 6's request carries the fact inside the recall fence"
    if any(json.dumps(FACT, ensure_ascii=False) in block for block in blocks):
        demo.check(fenced, True)
    else:
        _failed(demo, fenced, _why(demo, f"{_count(len(found), 'request')} with the question, "
                                         f"{_count(len(blocks), 'recall fence')} in the last one"))
    system = system_prompt_of(found[-1]) if found else None
    apart = system is not None and FENCE_OPEN not in system and FACT not in system
    demo.check("the recalled memory stays out of the system prompt", apart,
               "" if apart else "no request carried the question" if not found else "the system prompt holds it")


def semantic_steps(demo: DemoHost) -> None:
    capture_step(demo)
    recall_step(demo)
