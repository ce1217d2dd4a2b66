"""A data root with something in every view (``pi_memory.devtools.sample_data``, module scope: built once per
test module), and a running inspector over it on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pi_memory.devtools.sample_data import build_sample, sample_reply
from pi_memory.devtools.scripted_llm import ScriptedLLM
from pi_memory.integrations.inspector import Running, run_inspector
from pi_memory.runtime import Memory, open_memory


@dataclass
class Data:
    agent: Path
    data: Path
    project: Path
    memory: Memory
    session_file: Path
    memory_ids: dict[str, str]
    job_id: int


@pytest.fixture(scope="module")
def inspector_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Data]:
    tmp = tmp_path_factory.mktemp("inspector")
    agent, data, project = tmp / "agent", tmp / "data", tmp / "repo"
    with pytest.MonkeyPatch.context() as mp, ScriptedLLM(responder=sample_reply) as llm:
        mp.setenv("PI_CODING_AGENT_DIR", str(agent))
        mp.setenv("PI_MEMORY_DIR", str(data))
        mp.delenv("PI_MEMORY_DEBUG", raising=False)
        sample = build_sample(agent, data, project, llm.base_url)
        memory = open_memory(project)
        yield Data(agent, data, project, memory, sample.session_file, sample.memory_ids, sample.job_id)
        memory.close()


@pytest.fixture(scope="module")
def inspector(inspector_data: Data) -> Iterator[Running]:
    with run_inspector(inspector_data.memory) as running:
        yield running
