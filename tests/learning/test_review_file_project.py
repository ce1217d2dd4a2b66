"""`pi-memory review FILE` puts project facts in the project of the folder the session ran in (its transcript's
cwd, as the hooks and the session index read it), not the current folder's: reviewing the shop session from
another repository wrote the shop's invoice rule into that repository's PROJECT store. A transcript that does not
say where it ran is reviewed for the current folder's project, and the command says so."""

from __future__ import annotations

import json
from pathlib import Path

from learning_helpers import cli, llm_block, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.project import project_folder

FIXTURE = next((Path(__file__).parent.parent / "fixtures" / "claude_code" / "-home-dev-shop").glob("9b2f0c1e-*.jsonl"))
FACT = {"operations": [{"target": "project", "action": "add", "content": "Invoice totals round half-even"}]}


def _project_file(agent: Path, cwd: Path) -> Path:
    return agent.parent / "data" / "projects" / project_folder(cwd) / "MEMORY.md"


def test_a_session_of_another_project_is_reviewed_for_that_project(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    brain.replies.append(FACT)
    code, data = cli("review", str(FIXTURE), "--json")
    assert (code, data["outcome"]) == (0, "ok")
    assert data["writes"][0]["store"] == f"projects/{project_folder(Path('/home/dev/shop'))}/MEMORY.md"
    assert data["project"] == {"name": "shop", "cwd": "/home/dev/shop", "from": "session"}
    assert data["projectNote"] == "project facts go to project shop, where the session ran (/home/dev/shop)."
    assert _project_file(agent, Path("/home/dev/shop")).read_text(encoding="utf-8") == "Invoice totals round half-even\n"
    assert not _project_file(agent, project).exists()  # the current folder's project is left alone
    assert "# Current memory" in brain.prompts[0][1] and "project (projects/shop-" in brain.prompts[0][1]


def test_the_text_output_names_the_session_s_project(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    brain.replies.append(FACT)
    result = CliRunner().invoke(app, ["review", str(FIXTURE)])
    folder = project_folder(Path("/home/dev/shop"))
    assert (result.exit_code, result.stdout.splitlines()[:3]) == (0, [
        "project facts go to project shop, where the session ran (/home/dev/shop).",
        "review: ok (job 1): 1 write(s)",
        f"  add to projects/{folder}/MEMORY.md: Invoice totals round half-even"])


def test_a_session_of_the_current_project_says_nothing_more(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project / "..")  # the command runs elsewhere; the session ran in the repository
    path = write_pi_session(project / "s.jsonl", project, [("user", "we round half-even"), ("assistant", "ok")])
    monkeypatch.chdir(project)
    brain.replies.append(FACT)
    code, data = cli("review", str(path), "--json")
    assert (code, data["outcome"], data["projectNote"]) == (0, "ok", None)
    assert data["project"] == {"name": "repo", "cwd": str(project), "from": "session"}
    assert _project_file(agent, project).read_text(encoding="utf-8") == "Invoice totals round half-even\n"


def test_a_session_without_its_folder_is_reviewed_for_the_current_one_and_says_so(agent, llm, brain, project,
                                                                                  tmp_path, monkeypatch):
    write_settings(agent, llm_block(llm))
    folder = tmp_path / "-home-dev-shop"
    folder.mkdir()
    path = folder / FIXTURE.name
    lines = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines()]
    path.write_text("".join(json.dumps({k: v for k, v in d.items() if k != "cwd"}) + "\n" for d in lines),
                    encoding="utf-8")
    monkeypatch.chdir(project)
    brain.replies.append(FACT)
    result = CliRunner().invoke(app, ["review", str(path)])
    note = (f"note: {path} does not say which folder the session ran in, so its project facts go to this folder's "
            "project (repo).\n")
    assert (result.exit_code, result.stderr) == (0, note)
    assert _project_file(agent, project).read_text(encoding="utf-8") == "Invoice totals round half-even\n"
    brain.replies.append(FACT)
    code, data = cli("review", str(path), "--json")
    assert data["project"] == {"name": "repo", "cwd": str(project), "from": "current folder"}
    assert data["projectNote"] == note.strip()

