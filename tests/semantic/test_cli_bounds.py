"""``pi-memory semantic`` with what a fresh-eyes tester typed: a --limit past what SQLite holds (a traceback:
OverflowError) and a 2 MB text for one memory (25 s of scanning before the 4,000-character refusal)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import pi_memory.cli.semantic  # noqa: F401  (registers the "semantic" sub-app)
from pi_memory import safety
from pi_memory.cli.app import app

HUGE = "99999999999999999999"


@pytest.fixture
def cli(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.delenv("PI_MEMORY_DIR", raising=False)
    project = tmp_path / "repo"
    (project / ".git").mkdir(parents=True)
    runner = CliRunner()

    def run(*args: str, input: str | None = None):
        return runner.invoke(app, ["semantic", *args, "--dir", str(tmp_path / "data"), "--project", str(project)],
                             input=input)

    return run


@pytest.mark.parametrize("command", [["list"], ["embed-sessions"]])
def test_a_limit_past_the_bound_is_a_usage_error_not_a_traceback(cli, command) -> None:
    r = cli(*command, "--limit", HUGE)
    assert r.exit_code == 2
    assert "Invalid value for '--limit': Input should be less than or equal to 1000000" in r.output
    assert "Traceback" not in r.output and "OverflowError" not in r.output


def test_the_largest_limit_lists(cli) -> None:
    assert cli("add", "The team deploys on Fridays.").exit_code == 0
    r = cli("list", "--limit", "1000000")
    assert r.exit_code == 0 and "The team deploys on Fridays." in r.stdout


def test_a_text_past_the_limit_is_refused_before_any_scan(cli, monkeypatch) -> None:
    def scanned(*_args, **_kwargs):
        raise AssertionError("scanned a text that can never be stored")

    monkeypatch.setattr(safety, "scan_threats", scanned)
    monkeypatch.setattr(safety, "redact", scanned)
    r = cli("add", "-", input="x" * 2_000_000)
    assert r.exit_code == 2
    assert r.output.endswith("error: memory text is 2,000,000 characters; one memory holds at most 4,000. Store "
                             "one short fact per memory.\n")


def test_check_text_refuses_a_long_text_before_redacting() -> None:
    from pi_memory.semantic.embedded import check_text

    checked = check_text("  " + "y" * 4_001 + "  ")
    assert (checked.refusal, checked.message) == ("long", "memory text is 4,001 characters; one memory holds at "
                                                  "most 4,000. Store one short fact per memory.")
    assert check_text("z" * 4_000).refusal is None
