"""``quickCheckOnOpen``: the index is checked after open, in the background of a session, and only reported."""

from __future__ import annotations

import json
import time

import pytest

from pi_memory.index import open_index
from pi_memory.index.db import index_path
from pi_memory.index.integrity import check_integrity
from pi_memory.runtime import open_memory
from pi_memory.session import AgentSession


@pytest.fixture
def env(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def settings(env, **block):
    (env / "agent" / "settings.json").write_text(json.dumps({"pi-memory": block}))


def damage_a_page(data_dir):
    """An index whose header is fine and whose table pages are not: quick_check finds it, a schema probe not."""
    conn = open_index(data_dir)
    conn.execute("CREATE TABLE filler(x TEXT)")
    conn.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,) for _ in range(400)])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    path = index_path(data_dir)
    raw = bytearray(path.read_bytes())
    page = 16384
    middle = len(raw) // page // 2
    raw[middle * page: middle * page + 64] = b"\xff" * 64  # a b-tree page header of the filler table
    path.write_bytes(bytes(raw))


def wait_for(session, seconds=10.0):
    end = time.monotonic() + seconds
    while session.integrity is None and time.monotonic() < end:
        time.sleep(0.01)
    return session.integrity


def test_check_of_a_sound_index_reports_ok(tmp_path):
    open_index(tmp_path).close()
    report = check_integrity(tmp_path)
    assert (report.ok, report.detail, report.ran) == (True, "ok", True)
    assert report.size_bytes == index_path(tmp_path).stat().st_size


def test_check_without_an_index_does_not_create_one(tmp_path):
    report = check_integrity(tmp_path)
    assert (report.ok, report.ran, report.detail) == (True, False, "no index yet")
    assert not index_path(tmp_path).exists()


def test_check_finds_a_damaged_page_and_repairs_nothing(tmp_path):
    damage_a_page(tmp_path)
    before = index_path(tmp_path).read_bytes()
    report = check_integrity(tmp_path)
    assert report.ok is False and report.ran is True and report.detail != "ok"
    assert index_path(tmp_path).read_bytes() == before  # reported, not repaired
    assert not list(tmp_path.glob("index.sqlite3.corrupt-*"))


def test_garbage_file_is_reported_as_damaged(tmp_path):
    index_path(tmp_path).write_bytes(b"not a database at all " * 300)
    report = check_integrity(tmp_path)
    assert report.ok is False and "not a database" in report.detail


def test_session_checks_in_the_background_and_reports_damage(env):
    damage_a_page(env / "data")
    session = AgentSession(env)
    assert session.memory.index_check is False  # nothing checked at open, in the foreground
    started = time.monotonic()
    session.start(catch_up=False, dream=False)
    assert time.monotonic() - started < 0.5
    report = wait_for(session)
    assert report is not None and report["ok"] is False
    session.shutdown(1)


def test_session_check_of_a_sound_index_is_ok(env):
    open_index(env / "data").close()
    session = AgentSession(env)
    session.start(catch_up=False, dream=False)
    assert wait_for(session)["ok"] is True
    session.shutdown(1)


def test_quick_check_off_skips_it_in_sessions_and_the_cli(env):
    settings(env, quickCheckOnOpen=False)
    damage_a_page(env / "data")
    session = AgentSession(env)
    session.start(catch_up=False, dream=False)
    time.sleep(0.1)
    assert session.integrity is None and session._check_thread is None
    session.shutdown(1)
    assert open_memory(env).index_check is False


def test_quick_check_default_keeps_the_cli_check_at_open(env):
    assert open_memory(env).index_check is None
    settings(env, quickCheckOnOpen=True)
    assert open_memory(env).index_check is None


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_quick_check_must_be_a_boolean(env, value):
    from pi_memory.config import SettingsError, load_settings

    settings(env, quickCheckOnOpen=value)
    if value is None:
        assert load_settings(env).quick_check_on_open is True
        return
    with pytest.raises(SettingsError, match="quickCheckOnOpen"):
        load_settings(env)


def test_bridge_status_line_says_the_index_is_damaged(env):
    from pi_memory.integrations.pi.bridge import Bridge

    damage_a_page(env / "data")
    bridge = Bridge()
    bridge.hello(cwd=str(env))
    wait_for(bridge.session)
    status = bridge.status()
    assert status["integrityCheck"]["ok"] is False
    assert status["text"].endswith("index damaged: the next search repairs it (or run `pi-memory reindex`)")
    bridge.shutdown(wait=1)

