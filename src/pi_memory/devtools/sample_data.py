"""A small data root with something in every view of the memory inspector, made through the public APIs:
curated entries (one holding HTML, which must show as text), a lesson, a standing rule, the default blocks, an
indexed pi session, semantic memories (from session turns, one superseded by a second version, one deleted), a
learning job from the scripted model, and a skill. Used by ``pi-memory ui --demo`` and the inspector's tests.

The caller sets ``$PI_CODING_AGENT_DIR`` and ``$PI_MEMORY_DIR`` to ``agent`` and ``data`` first (settings are
read from them, as in a real session), and runs a :class:`~pi_memory.devtools.scripted_llm.ScriptedLLM` with
:func:`sample_reply` at ``llm_base_url`` for the learning job.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from pi_memory.devtools.scripted_llm import Reply
from pi_memory.devtools.transcripts import write_pi_session

HOSTILE_HTML = "<script>document.title='pwned'</script> note <b>bold</b>"
LEARNED = "Billing deploys go through scripts/ship.sh"
SESSION_TEXTS = [
    ("user", "How do we deploy the billing service to staging?"),
    ("assistant", "Run scripts/ship.sh with the staging profile; it builds the container first."),
    ("user", "And the database migrations for billing?"),
    ("assistant", "They run automatically in the ship script before the container starts."),
    ("user", "Thanks, that answers the deploy question."),
]


class SampleError(RuntimeError):
    """A step of the sample refused or failed; the message names it."""


@dataclass
class Sample:
    agent: Path
    data: Path
    project: Path
    session_file: Path
    memory_ids: dict[str, str]
    job_id: int


def sample_reply(messages: list[dict], tools: set[str]) -> Reply:
    """The scripted model's answer to the sample's review job: one entry to add."""
    return Reply(text=json.dumps({"operations": [{"target": "memory", "action": "add", "content": LEARNED}]}))


def _ok(done: bool, what: str) -> None:
    if not done:
        raise SampleError(f"the sample data could not be made: {what}")


def build_sample(agent: Path, data: Path, project: Path, llm_base_url: str) -> Sample:
    """Fill ``data`` (and ``agent``'s settings and sessions; ``project`` becomes a git repository)."""
    from pi_memory.index import index_paths
    from pi_memory.learning import Turn, review_session
    from pi_memory.runtime import open_memory
    from pi_memory.skills import SkillStore
    from pi_memory.standing import StandingStore

    agent.mkdir(parents=True, exist_ok=True)
    project.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"llm": {
        "provider": "openai-compatible", "baseUrl": llm_base_url, "model": "fake-model", "timeoutSeconds": 10}}}),
        encoding="utf-8")
    memory = open_memory(project)
    try:
        store = memory.store
        for target, text in (("memory", "The project uses uv for Python packaging"), ("memory", HOSTILE_HTML),
                             ("user", "Prefers short answers"), ("project", "Staging deploys need the VPN")):
            _ok(store.add(target, text).success, f"add to {target}")
        _ok(store.add_failure("pytest -x hid the second failure", "tool-quirk", "ran with -x").success, "lesson")
        _ok(StandingStore.in_data_dir(data).add("Always run the tests before committing").success, "pin")
        memory.blocks().ensure_defaults()
        session_file = agent / "sessions" / "--repo--" / "2026-11-01_s1.jsonl"
        write_pi_session(session_file, project, SESSION_TEXTS, session_id="sess-1", day="2026-11-01")
        index_paths(memory.index(), [session_file])
        service = memory.semantic()
        _ok(service is not None, memory.semantic_status)
        ids = {}
        for key, text, source in (
                ("deploy", "Billing is deployed to staging with scripts/ship.sh",
                 {"kind": "capture", "session_id": "sess-1", "entry_ids": ["e2"]}),
                ("editor", "The user edits code in Helix", {"kind": "cli"}),
                ("old", "The user lived in Lisbon", {"kind": "cli"})):
            mem, created = service.add(text, source=source)
            _ok(created, f"semantic memory {key}")
            ids[key] = mem.id
        _ok(service.delete(ids["old"], reason="moved away"), "delete a semantic memory")
        first, _ = service.add("Billing migrations are run by hand before a deploy",
                               source={"kind": "capture", "session_id": "sess-1", "entry_ids": ["e3"]})
        ids["migrations"] = service.backend.update(  # a second version: the history shows the supersession
            first.id, "Billing migrations run automatically in the ship script", scope=service.scope,
            reason="corrected in the same session", source={"kind": "capture", "session_id": "sess-1",
                                                           "entry_ids": ["e4"]}).id
        ids["migrations-old"] = first.id
        report = review_session(memory.learner(), [Turn("user", t) for _, t in SESSION_TEXTS[:2]], trigger="demo",
                                session_id="sess-1")
        _ok(report.outcome == "ok", f"learning job: {report.message}")
        skills = SkillStore.from_settings(memory.settings, cwd=project)
        _ok(skills.create("ship-billing", "Deploy billing to staging", "global",
                          "## When to use\nDeploying billing.\n\n## Procedure\n1. Run scripts/ship.sh\n")["success"],
            "skill")
    finally:
        memory.close()
    return Sample(agent, data, project, session_file, ids, report.job_id)
