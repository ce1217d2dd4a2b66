"""The pi extension sends each turn's time with ``recall`` (``timestamp``, issue 13 item 3: hosts pass the turn's
time as ``as_of``): a session turn written after that moment is never recalled, and the offset the extension
writes (the user's zone) is honoured to the second."""

from __future__ import annotations

import json
import logging

import pytest

from pi_memory.integrations.pi.bridge import Bridge

from .test_bridge_lazy import write_pi_session

PROMPT = "Which postgres version does the staging database run?"
OLD = "The staging database runs postgres 15 on the old cluster"  # said 2026-11-03T10:00:01Z
NEW = "The staging database now runs postgres 16 after the migration"  # said 2026-11-20T10:00:01Z


@pytest.fixture(scope="module")
def bridge(tmp_path_factory):
    base = tmp_path_factory.mktemp("asof")
    patch = pytest.MonkeyPatch()
    for name, folder in (("PI_CODING_AGENT_DIR", "agent"), ("PI_CODING_AGENT_SESSION_DIR", "sessions"),
                         ("PI_MEMORY_DIR", "data"), ("HOME", "home")):
        (base / folder).mkdir()
        patch.setenv(name, str(base / folder))
    (base / "agent" / "settings.json").write_text(
        json.dumps({"pi-memory": {"semantic": {"recallSources": ["semantic", "sessions"]}}}))
    project = base / "project"
    project.mkdir()
    write_pi_session(base / "sessions" / "p" / "s1.jsonl", str(project), [OLD], day="2026-11-03")
    write_pi_session(base / "sessions" / "p" / "s2.jsonl", str(project), [NEW], day="2026-11-20")
    first = Bridge()
    first.hello(cwd=str(project))
    first.shutdown(wait=30)  # the catch-up pass indexes both session files
    b = Bridge()
    b.hello(cwd=str(project))
    yield b
    b.shutdown(wait=5)
    patch.undo()


def recalled(b: Bridge, timestamp) -> str:
    params = {"prompt": PROMPT, "state": {}} if timestamp is ... else {"prompt": PROMPT, "state": {},
                                                                       "timestamp": timestamp}
    reply = b.handle(json.dumps({"id": 1, "method": "recall", "params": params}))
    assert "error" not in reply, reply
    return (reply["result"]["text"] or "").replace("**", "")  # the snippets' highlights


@pytest.mark.parametrize(("timestamp", "old", "new"), [
    ("2026-11-02T23:00:00+00:00", False, False),  # before both turns
    ("2026-11-10T09:00:00+01:00", True, False),  # between them
    ("2026-11-20T11:00:00+01:00", True, False),  # 10:00:00Z: one second before the new turn
    ("2026-11-20T11:00:02+01:00", True, True),  # 10:00:02Z: just after it
    ("2026-11-20T00:00:02-10:00", True, True),  # the same day seen from Hawaii: 10:00:02Z
    ("2026-11-25T09:00:00.000+14:00", True, True),  # after both (what the extension sends: milliseconds)
])
def test_recall_never_returns_a_turn_dated_after_the_turn_time(bridge, timestamp, old, new):
    text = recalled(bridge, timestamp)
    assert (OLD in text, NEW in text) == (old, new), text


@pytest.mark.parametrize("timestamp", [..., None, "", "   ", 1795958888790])
def test_no_usable_turn_time_means_now(bridge, timestamp):
    text = recalled(bridge, timestamp)
    assert OLD in text and NEW in text, text


def test_the_turn_time_is_logged_for_debugging(bridge, caplog):
    with caplog.at_level(logging.DEBUG, logger="pi_memory.bridge"):
        recalled(bridge, "2026-11-10T09:00:00.000+01:00")
        recalled(bridge, ...)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("recall as of")]
    assert lines == ["recall as of 2026-11-10T09:00:00.000+01:00", "recall as of now"]
