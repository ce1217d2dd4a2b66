"""`pi-memory learning log --limit 0` and `--limit -5` listed one job (typer clamped them to 1): a limit below 1
is refused with a sentence, exit 2; a limit past 10,000 is still taken as 10,000."""

from __future__ import annotations

import pytest
from learning_helpers import cli, write_settings
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.learning.log import finish_job, start_job
from pi_memory.runtime import open_memory


def _two_jobs(agent, project, monkeypatch) -> None:
    write_settings(agent, {})
    monkeypatch.chdir(project)
    learner = open_memory(project).learner()
    for detail in ("first", "second"):
        job = start_job(learner.conn, "review", "manual", project=None, dry_run=False, model=None)
        finish_job(learner.conn, job, outcome="nothing", detail=detail, duration_ms=1.0, writes=[], session_ids=[],
                   entry_ids=[])


@pytest.mark.parametrize("limit", ["0", "-5"])
def test_a_limit_below_1_is_refused_in_words(agent, project, monkeypatch, limit):
    _two_jobs(agent, project, monkeypatch)
    said = (f"--limit is the number of newest jobs to show, so it must be 1 or more; {limit} shows none. Leave it "
            "out to show the newest 20.")
    result = CliRunner().invoke(app, ["learning", "log", "--limit", limit])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"error: {said}\n")
    assert cli("learning", "log", "--limit", limit, "--json") == (2, {"success": False, "error": said,
                                                                      "exitCode": 2})


@pytest.mark.parametrize(("limit", "shown"), [("1", ["second"]), ("2", ["second", "first"]),
                                              ("99999", ["second", "first"])])
def test_a_limit_of_1_or_more_lists_that_many(agent, project, monkeypatch, limit, shown):
    _two_jobs(agent, project, monkeypatch)
    code, data = cli("learning", "log", "--limit", limit, "--json")
    assert code == 0 and [j["detail"] for j in data["jobs"]] == shown
