"""A data root with something in every view, made through the public APIs (module scope: built once per test
module), and a running inspector over it on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_memory.devtools.scripted_llm import Reply, ScriptedLLM
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.integrations.inspector import Running, run_inspector
from pi_memory.runtime import Memory, open_memory

HOSTILE = "<script>document.title='pwned'</script> note <b>bold</b>"
SESSION_TEXTS = [
    ("user", "How do we deploy the billing service to staging?"),
    ("assistant", "Run scripts/ship.sh with the staging profile; it builds the container first."),
    ("user", "And the database migrations for billing?"),
    ("assistant", "They run automatically in the ship script before the container starts."),
    ("user", "Thanks, that answers the deploy question."),
]


@dataclass
class Data:
    tmp: Path
    agent: Path
    data: Path
    project: Path
    memory: Memory
    session_file: Path
    memory_ids: dict[str, str]
    job_id: int


def _reply(messages: list[dict], tools: set[str]) -> Reply:
    return Reply(text=json.dumps({"operations": [
        {"target": "memory", "action": "add", "content": "Billing deploys go through scripts/ship.sh"}]}))


@pytest.fixture(scope="module")
def inspector_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Data]:
    from pi_memory.index import index_paths
    from pi_memory.learning import Turn, review_session
    from pi_memory.skills import SkillStore

    tmp = tmp_path_factory.mktemp("inspector")
    agent, data, project = tmp / "agent", tmp / "data", tmp / "repo"
    agent.mkdir()
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    with pytest.MonkeyPatch.context() as mp, ScriptedLLM(responder=_reply) as llm:
        mp.setenv("PI_CODING_AGENT_DIR", str(agent))
        mp.setenv("PI_MEMORY_DIR", str(data))
        mp.delenv("PI_MEMORY_DEBUG", raising=False)
        (agent / "settings.json").write_text(json.dumps({"pi-memory": {"llm": {
            "provider": "openai-compatible", "baseUrl": llm.base_url, "model": "fake-model",
            "timeoutSeconds": 10}}}), encoding="utf-8")
        memory = open_memory(project)
        store = memory.store
        assert store.add("memory", "The project uses uv for Python packaging").success
        assert store.add("memory", HOSTILE).success  # HTML is not a threat to the scanner: it must show as text
        assert store.add("user", "Prefers short answers").success
        assert store.add("project", "Staging deploys need the VPN").success
        assert store.add_failure("pytest -x hid the second failure", "tool-quirk", "ran with -x").success
        from pi_memory.standing import StandingStore

        assert StandingStore.in_data_dir(data).add("Always run the tests before committing").success
        memory.blocks().ensure_defaults()
        session_file = agent / "sessions" / "--repo--" / "2026-11-01_s1.jsonl"
        write_pi_session(session_file, project, SESSION_TEXTS, session_id="sess-1", day="2026-11-01")
        index_paths(memory.index(), [session_file])
        service = memory.semantic()
        assert service is not None, memory.semantic_status
        ids = {}
        for key, text, source in (
                ("deploy", "Billing is deployed to staging with scripts/ship.sh", {"kind": "capture",
                 "session_id": "sess-1", "entry_ids": ["e2"]}),
                ("editor", "The user edits code in Helix", {"kind": "cli"}),
                ("old", "The user lived in Lisbon", {"kind": "cli"})):
            mem, created = service.add(text, source=source)
            assert created
            ids[key] = mem.id
        assert service.delete(ids["old"], reason="moved away")
        report = review_session(memory.learner(), [Turn("user", t) for _, t in SESSION_TEXTS[:2]], trigger="test",
                                session_id="sess-1")
        assert report.outcome == "ok", report.message
        skills = SkillStore.from_settings(memory.settings, cwd=project)
        assert skills.create("ship-billing", "Deploy billing to staging", "global",
                             "## When to use\nDeploying billing.\n\n## Procedure\n1. Run scripts/ship.sh\n")["success"]
        memory.store.load_from_disk()
        yield Data(tmp, agent, data, project, memory, session_file, ids, report.job_id)
        memory.close()


@pytest.fixture(scope="module")
def inspector(inspector_data: Data) -> Iterator[Running]:
    with run_inspector(inspector_data.memory) as running:
        yield running
