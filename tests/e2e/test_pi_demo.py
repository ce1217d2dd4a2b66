"""``pi-memory demo`` end to end: every check holds on a working install (curated memory across sessions, then
semantic memory captured after a turn and recalled, fenced, into a later session), and a broken embedder makes
the demo fail a check that says why instead of printing "all checks held"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pi_memory.devtools.pi_runner import pi_launcher

if TYPE_CHECKING:
    from conftest import PiE2E

pytestmark = pytest.mark.e2e

CHECKS = [
    "Session 1: the agent saves a fact: pi exited cleanly", "MEMORY.md holds exactly the saved fact",
    "Session 2: a new session starts: pi exited cleanly", "session 2's system prompt contains the fact",
    "Session 3: someone tries to plant an instruction: pi exited cleanly", "the hostile entry was refused",
    "Session 4: another session adds a second fact: pi exited cleanly", "the second fact is on disk",
    "Session 2 resumed: pi exited cleanly", "the resumed session's system prompt is byte-identical",
    "the frozen snapshot does not pick up the later write",
    "Session 5: the user mentions a fact in passing: pi exited cleanly",
    "the fact was captured as a semantic memory",
    "it is stored embedded, with a vector from the local embedder",
    "Session 6: a later session asks about it: pi exited cleanly",
    "session 6's request carries the fact inside the recall fence",
    "the recalled memory stays out of the system prompt",
]
EMBEDDED = "it is stored embedded, with a vector from the local embedder"


def run_demo(launcher: Path, env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    """``pi-memory --json demo`` on ``launcher``: the process and its JSON summary."""
    env = {**os.environ, **(env or {}), "PI_MEMORY_PI_BIN": str(launcher)}
    r = subprocess.run([sys.executable, "-m", "pi_memory", "--json", "demo"], env=env, capture_output=True,
                       text=True, timeout=600)
    return r, json.loads(r.stdout)


def test_demo_runs_clean(pi: PiE2E) -> None:
    """Every check held, summarised as one JSON object; the walk-through on stderr."""
    r, summary = run_demo(pi.sandbox.launcher)
    assert r.returncode == 0, r.stderr[-3000:]
    assert summary["success"] is True and summary["failed"] == 0
    assert [c["name"] for c in summary["checks"] if c["ok"]] == CHECKS
    details = {c["name"]: c["detail"] for c in summary["checks"]}
    assert details["the fact was captured as a semantic memory"] == (
        "['The project database is PostgreSQL, listening on port 5433']")
    assert details[EMBEDDED] == ("backend embedded, embedder all-MiniLM-L6-v2-int8, 1 active memory, "
                                 "1 vector, 0 without a current vector")
    assert "All checks held" in r.stderr
    assert "[UNTRUSTED MEMORY DATA]" in r.stderr  # the recall the model received, shown to the person


def test_demo_fails_a_check_when_the_embedder_cannot_load(tmp_path: Path) -> None:
    """The embedder's runtime does not import (as on an install missing it): semantic memory still stores the
    fact and recalls it by keyword, but the demo fails the embedding check, naming the import error, and never
    says every check held."""
    launcher = pi_launcher("current")
    if launcher is None:
        pytest.skip("pi is not installed under .cache/e2e/; run `bash scripts/setup-e2e.sh` first")
    broken = tmp_path / "broken" / "onnxruntime"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("onnxruntime left out on purpose")\n')
    path = os.pathsep.join(p for p in (str(broken.parent), os.environ.get("PYTHONPATH", "")) if p)
    r, summary = run_demo(launcher, {"PYTHONPATH": path})
    assert r.returncode == 1
    assert summary["success"] is False and summary["failed"] == 1
    assert [c["name"] for c in summary["checks"]] == CHECKS
    [failed] = [c for c in summary["checks"] if not c["ok"]]
    assert failed["name"] == EMBEDDED
    assert failed["detail"].startswith("backend embedded, embedder all-MiniLM-L6-v2-int8, 1 active memory, "
                                       "0 vectors, 1 without a current vector | semantic memory: ")
    assert "importing them failed (onnxruntime left out on purpose)" in failed["detail"]
    assert "what pi-memory reported" in r.stderr and "1 check(s) failed." in r.stderr
    assert "All checks held" not in r.stderr
