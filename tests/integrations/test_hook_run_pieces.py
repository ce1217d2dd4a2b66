"""Claude Code keeps one hook's ``additionalContext`` whole only up to ``CLAUDE_CONTEXT_CAP`` (10,000 characters).
A session start over it already sent the snapshot alone and the run parts (memory blocks, standing instructions)
with the first prompt; but run parts over the cap on their own (blocks with large limits) were only logged, and
reached the model as a preview and a file path. A prompt's recall plus those run parts could pass the cap too.

Now the run parts are split, not cut (``pi_memory.prompt.pieces``): pieces of at most ``RUN_PIECE_CHARS``, each
whole, marked "Part i of n", in order, over the first prompts; the recall fills what is left of the cap, its
lowest-ranked lines left out. The blocks here are real oversized blocks (24,000 and 9,000 characters)."""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pi_memory.integrations import hooks
from pi_memory.integrations.hooks.protocol import CLAUDE_CONTEXT_CAP, RUN_PIECE_CHARS, claude_length
from pi_memory.prompt.pieces import run_pieces
from pi_memory.retrieval.fenced import FENCE_CLOSE, FENCE_OPEN, NOTICE, trim_recall
from pi_memory.runtime import open_memory
from pi_memory.standing import StandingStore

DESIGN_LINES = 400  # "Design 0: ..." to "Design 399: ...", 60 characters each: 24,000 characters
RUNBOOK_LINES = 150
RULES = 6
PART = re.compile(r"\[Part (\d+) of (\d+) of your memory blocks and standing instructions")


def context_of(answer: str) -> str | None:
    return json.loads(answer).get("hookSpecificOutput", {}).get("additionalContext")


def start(env, sid: str, host: str = "claude-code") -> str | None:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "source": "startup", "hook_event_name": "SessionStart"}
    return context_of(hooks.run_hook(host, "session-start", json.dumps(payload), ceiling=60))


def prompt(env, sid: str, text: str = "ok", host: str = "claude-code") -> str | None:
    payload = {"session_id": sid, "cwd": str(env / "proj"), "prompt": text}
    return context_of(hooks.run_hook(host, "prompt", json.dumps(payload), ceiling=60))


def big_blocks(env) -> None:
    """Two blocks with large limits and full values (one line each fact), the default blocks, six rules."""
    (env / "data" / "MEMORY.md").write_text("Project uses uv, never pip\n", encoding="utf-8")
    memory = open_memory(env / "proj", load=False)
    try:
        blocks = memory.blocks()
        blocks.ensure_defaults()
        design = "\n".join(f"Design {i:03d}: the ledger service settles invoices in batches." for i in
                           range(DESIGN_LINES))
        runbook = "\n".join(f"Runbook {i:03d}: restart the worker, then check the dead queue." for i in
                            range(RUNBOOK_LINES))
        assert blocks.create("design", "How the billing system is built", limit=30_000, value=design).success
        assert blocks.create("runbook", "What to do when billing breaks", limit=12_000, value=runbook).success
    finally:
        memory.close()
    standing = StandingStore.in_data_dir(env / "data")
    for i in range(RULES):
        assert standing.add(f"Rule {i}: run the linter and the unit tests before every commit").success


def numbered(texts: list[str], word: str) -> list[int]:
    return [int(n) for text in texts for n in re.findall(rf"{word} (\d{{3}}):", text)]


def test_run_parts_over_the_cap_come_whole_in_marked_pieces_over_the_first_prompts(env):
    big_blocks(env)
    first = start(env, "c1")  # the snapshot, and the first piece beside it
    assert first.startswith("<memory-snapshot>") and PART.findall(first)[0][0] == "1"
    answers = [first]
    while (answer := prompt(env, "c1")) is not None:  # "ok": no recall, only what the session is owed
        answers.append(answer)
        assert len(answers) < 10
    assert all(claude_length(a) <= CLAUDE_CONTEXT_CAP for a in answers)  # was: one 35,000-character answer
    parts = [(int(i), int(n)) for a in answers for i, n in PART.findall(a)]
    total = parts[0][1]
    assert parts == [(i, total) for i in range(1, total + 1)]  # each marked, in order, none missing
    assert len(answers) == total  # one piece a message (two never fit in 10,000 characters)
    assert numbered(answers, "Design") == list(range(DESIGN_LINES))  # every line once, in order
    assert numbered(answers, "Runbook") == list(range(RUNBOOK_LINES))
    joined = "\n\n".join(answers)
    assert all(f"Rule {i}: run the linter" in joined for i in range(RULES))
    assert joined.count("<standing-instructions>") == 1 and answers[-1].rstrip().endswith("</standing-instructions>")
    assert joined.count("## design [") == 1 and "## design (continued)" in joined  # cut at line ends
    for answer in answers[1:]:  # each piece a whole fence of its own
        assert answer.count("<memory-blocks>") == answer.count("</memory-blocks>") == 1
    assert prompt(env, "c1") is None  # the session has them all


def test_without_a_snapshot_the_start_carries_the_first_pieces_itself(env):
    big_blocks(env)
    (env / "data" / "MEMORY.md").unlink()  # an empty store: the frozen part is the empty snapshot's text
    first = start(env, "c3")
    assert claude_length(first) <= CLAUDE_CONTEXT_CAP and PART.search(first)[1] == "1"
    rest = []
    while (answer := prompt(env, "c3")) is not None:
        rest.append(answer)
    parts = [int(i) for a in [first, *rest] for i, _ in PART.findall(a)]
    assert parts == list(range(1, parts[-1] + 1)) and numbered([first, *rest], "Design") == list(range(DESIGN_LINES))


def test_a_changed_block_sends_the_run_parts_again_in_pieces(env):
    big_blocks(env)
    start(env, "c2")
    while prompt(env, "c2") is not None:
        pass
    memory = open_memory(env / "proj", load=False)
    try:
        assert memory.blocks().update("runbook", "Runbook 150: page the on-call first.").success  # appended
    finally:
        memory.close()
    again = []
    while (answer := prompt(env, "c2")) is not None:
        again.append(answer)
    assert numbered(again, "Runbook") == list(range(RUNBOOK_LINES + 1))
    assert all(claude_length(a) <= CLAUDE_CONTEXT_CAP for a in again) and len(again) > 1


def test_codex_still_gets_everything_at_the_start(env):
    big_blocks(env)
    first = start(env, "x1", host="codex")
    assert numbered([first], "Design") == list(range(DESIGN_LINES)) and "Part 1 of" not in first
    assert prompt(env, "x1", host="codex") is None


def test_pieces_of_one_line_longer_than_a_piece_and_of_wide_characters():
    from pi_memory.blocks import Block

    wide = "😀" * 9_000  # 18,000 UTF-16 units on one line
    block = Block(key="emoji", scope="global", path=Path("/nonexistent/emoji.md"), limit=20_000, value=wide)
    joined, pieces = run_pieces([block], "", RUN_PIECE_CHARS, claude_length)
    assert "😀" * 9_000 in joined and len(pieces) == 3
    assert all(claude_length(p) <= RUN_PIECE_CHARS for p in pieces)
    assert "".join(re.sub(r"[^😀]", "", p) for p in pieces) == wide


# -- recall beside the run parts ------------------------------------------------------------------------------

DIM = 8
TOPIC = "ledger batch settlement"


class Embeddings(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        data = [{"object": "embedding", "index": i, "embedding": [b / 255 + 0.01 for b in
                                                                  hashlib.sha256(t.encode()).digest()[:DIM]]}
                for i, t in enumerate(request["input"])]
        body = json.dumps({"object": "list", "model": request["model"], "data": data}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def embedder() -> Iterator[int]:
    with ThreadingHTTPServer(("127.0.0.1", 0), Embeddings) as srv:
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        yield srv.server_address[1]
        srv.shutdown()


@pytest.fixture
def big_recall(env, embedder):
    """``env`` with a recall of about 24,000 characters for the prompt (a budget of 20,000 tokens, 24 memories of
    1,000 characters), and the oversized blocks."""
    settings = env / "home" / ".pi" / "agent" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"pi-memory": {
        "recallSources": ["semantic"], "topK": 30, "recallTokenBudget": 20_000, "recallMinSimilarity": 0.0,
        "embedder": {"provider": "openai-compatible", "baseUrl": f"http://127.0.0.1:{embedder}/v1",
                     "model": "test-embedder", "dim": DIM, "timeout": 30, "maxRetries": 0}}}), encoding="utf-8")
    memory = open_memory(env / "proj")
    try:
        service = memory.semantic()
        for i in range(24):
            service.add(f"Memory {i:02d} about {TOPIC}: " + f"fact {i} on how the {TOPIC} job runs nightly. " * 18)
    finally:
        memory.close()
    big_blocks(env)
    return env


def recall_lines(context: str) -> list[str]:
    block = context[context.index(FENCE_OPEN):]
    lines = block.split("\n")
    assert lines[1] == NOTICE and lines[-1] == FENCE_CLOSE
    return lines[2:-1]


def test_the_prompt_answer_stays_within_the_cap_with_recall_and_run_parts(big_recall):
    env = big_recall
    owed = PART.findall(start(env, "r1"))  # the first piece came with the snapshot
    question = f"How does the {TOPIC} work?"
    full = recall_lines(prompt(env, "x1", question, host="codex"))  # Codex: no cap, the whole recall
    assert len(full) == 24 and claude_length("\n".join(full)) > 2 * CLAUDE_CONTEXT_CAP
    kept = []
    while True:
        answer = prompt(env, "r1", question)
        assert claude_length(answer) <= CLAUDE_CONTEXT_CAP  # was: run part + a 28,000-character recall
        lines = recall_lines(answer)
        assert len(lines) >= 1 and lines == full[:len(lines)]  # each prompt keeps recall, its best lines
        kept.append(len(lines))
        if "<memory-blocks>" not in answer and "<standing-instructions>" not in answer:
            break
        owed += PART.findall(answer)
        assert len(owed) < 10
    total = int(owed[0][1])
    assert [int(i) for i, _ in owed] == list(range(1, total + 1))  # every piece came, in order
    assert answer.startswith(FENCE_OPEN)  # nothing owed any more: the recall alone, given the whole cap
    assert kept[-1] == max(kept) and kept[-1] > min(kept)
    log = (env / "state" / "hooks.log").read_text(encoding="utf-8")
    assert "lowest-ranked line(s) were left out" in log


def test_trim_recall_drops_the_lowest_ranked_lines_and_keeps_the_fence():
    lines = [json.dumps(f"memory {i} " + "x" * 90) for i in range(5)]
    text = "\n".join([FENCE_OPEN, NOTICE, *lines, FENCE_CLOSE])
    cut = trim_recall(text, len(text) - 50)
    assert cut == "\n".join([FENCE_OPEN, NOTICE, *lines[:4], FENCE_CLOSE])
    assert trim_recall(text, len(text)) == text
    assert trim_recall(text, len(FENCE_OPEN) + len(NOTICE) + 40) == ""
    assert trim_recall("not a recall block " * 10, 20) == ""
