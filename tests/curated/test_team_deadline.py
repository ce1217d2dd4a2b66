"""Every request to a team project server ends within its time, whatever the server does: one that dribbles a
byte a second (which httpx's per-read timeouts never trip) is cut off at ``timeoutSeconds`` in its headers or
its body, over HTTP and HTTPS, with the same "did not answer within N s" as a silent one. ``bounded`` gives a
start less time and gives the requests after it ``timeoutSeconds`` again. Real servers on 127.0.0.1
(``tests/team_sockets.py``), no stand-in for httpx."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated.team_client import TeamProjectClient, TeamProjectError, bounded
from team_sockets import ENTRIES, HEADERS, STATUS_LINE, TeamSocket  # tests/, on sys.path by the conftest

TIMEOUT = 2.5
MARGIN = 1.0  # the cut-off is a timer: thread start-up and a loaded machine's scheduling


def store_on(tmp_path: Path, url: str, timeout: float = TIMEOUT) -> MemoryStore:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    return MemoryStore(tmp_path / "data", project_root=repo,
                       team_project=TeamProjectClient(url, "acme", "team-token", timeout=timeout))


def read_error(url: str, seconds: float) -> str:
    return (f"the team project store 'acme' on {url} did not answer within {seconds:g} s, so its entries could not "
            "be read. The server may be down or overloaded: retry later (teamProjectStore.timeoutSeconds sets how "
            "long pi-memory waits).")


def entries_or_error(client: TeamProjectClient) -> tuple[list[str] | str, float]:
    started = time.monotonic()
    try:
        got: list[str] | str = client.entries()
    except TeamProjectError as exc:
        got = str(exc)
    return got, time.monotonic() - started


@pytest.mark.parametrize("head", [STATUS_LINE, HEADERS], ids=["headers", "body"])
def test_a_server_dribbling_a_byte_a_second_is_cut_off_at_the_timeout(team_socket, head):
    team_socket.mode, team_socket.head = "dribble", head
    client = TeamProjectClient(team_socket.url, "acme", "team-token", timeout=TIMEOUT)
    got, took = entries_or_error(client)
    assert got == read_error(team_socket.url, TIMEOUT)
    assert TIMEOUT - 0.05 <= took < TIMEOUT + MARGIN
    held = team_socket.held_for(0)
    assert held is not None and held < TIMEOUT + MARGIN + 2 * team_socket.every  # let go, not left dribbling


def test_a_write_to_a_dribbling_server_ends_at_the_timeout_and_says_the_outcome_is_unknown(tmp_path, team_socket):
    team_socket.mode, team_socket.head = "dribble", HEADERS
    store = store_on(tmp_path, team_socket.url)
    started = time.monotonic()
    result = store.add("project", "Releases are tagged on Fridays")
    took = time.monotonic() - started
    assert TIMEOUT - 0.05 <= took < TIMEOUT + MARGIN
    assert (result.success, result.code) == (False, "io_error")
    assert result.error == (f"the team project store 'acme' on {team_socket.url} did not answer within 2.5 s, so it "
                            "is unknown whether the change was applied. Read the project store again (memory_read, or "
                            "`pi-memory read project`) before you retry; if the server keeps not answering, tell the "
                            "user.")
    assert not (tmp_path / "data" / "projects").exists()  # nothing written locally instead


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test certificate")
@pytest.mark.parametrize("head", [STATUS_LINE, HEADERS], ids=["headers", "body"])
def test_an_https_server_dribbling_is_cut_off_at_the_timeout_too(tmp_path, monkeypatch, head):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
                   check=True, capture_output=True)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # httpx trusts the test's certificate through it
    server = TeamSocket(tls=(str(cert), str(key)))
    try:
        server.mode, server.head = "dribble", head
        got, took = entries_or_error(TeamProjectClient(server.url, "acme", "team-token", timeout=TIMEOUT))
        assert got == read_error(server.url, TIMEOUT)
        assert TIMEOUT - 0.05 <= took < TIMEOUT + MARGIN
        server.mode = "answer"  # the same client setup reads a server that answers
        assert TeamProjectClient(server.url, "acme", "team-token", timeout=TIMEOUT).entries() == ENTRIES["entries"]
    finally:
        server.close()


def test_an_answer_within_the_time_is_read_and_the_cut_off_never_fires_after_it(team_socket):
    team_socket.mode = "answer"
    client = TeamProjectClient(team_socket.url, "acme", "team-token", timeout=0.5)
    for _ in range(3):  # a new connection each time (none kept alive), each answered
        assert client.entries() == ENTRIES["entries"]
    time.sleep(0.7)  # past each request's time: a cut-off left running would have nothing to shut, and says nothing
    assert client.entries() == ENTRIES["entries"] and client.version == 1
    assert len(team_socket.spans) == 4


def test_bounded_gives_a_start_its_seconds_asks_once_then_gives_back_the_timeout(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url)
    started = time.monotonic()
    with bounded(store, 0.6):
        store.load_from_disk()
        store.load_from_disk()  # a second read in the same start: not sent, the first one's error again
    took = time.monotonic() - started
    assert 0.55 <= took < 0.6 + MARGIN
    assert len(team_socket.spans) == 1
    drift = store.drift("project")
    assert drift is not None and drift.drift == "unreadable"
    assert drift.detail == (f"the team project store 'acme' on {team_socket.url} did not answer within 0.6 s, so its "
                            "entries could not be read. The server may be down or overloaded. A start waits only "
                            "this long for it; memory_read with target 'project' asks again with the full "
                            "teamProjectStore.timeoutSeconds.")
    started = time.monotonic()
    result = store.read("project")  # after the start: the full timeoutSeconds
    took = time.monotonic() - started
    assert TIMEOUT - 0.05 <= took < TIMEOUT + MARGIN
    assert (result.code, result.error) == ("io_error", read_error(team_socket.url, TIMEOUT))
    assert len(team_socket.spans) == 2


def test_bounded_keeps_the_earlier_of_its_seconds_and_latest(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url)
    started = time.monotonic()
    with bounded(store, 5.0, latest=started + 0.4):
        got, _ = entries_or_error(store.team_project)
    took = time.monotonic() - started
    assert 0.35 <= took < 0.4 + MARGIN
    assert got.startswith(f"the team project store 'acme' on {team_socket.url} did not answer within 0.4 s")
    assert store.team_project.deadline is None


def test_bounded_does_nothing_for_a_local_project_store_or_without_a_bound(tmp_path, team_socket):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    local = MemoryStore(tmp_path / "data", project_root=repo)
    with bounded(local, 0.1):
        local.load_from_disk()
    assert local.drift("project") is None
    store = store_on(tmp_path / "team", team_socket.url)
    with bounded(store, None):
        assert store.team_project.deadline is None


def test_an_answer_longer_than_any_store_is_not_read_to_its_end(tmp_path, team_socket):
    """A broken or hostile server sending 64 MB made the client hold it all in memory; it stops at 8 MB."""
    from pi_memory.curated.team_client import MAX_ANSWER_BYTES

    team_socket.mode = "flood"
    client = TeamProjectClient(team_socket.url, "acme", "team-token", timeout=30)
    got, took = entries_or_error(client)
    assert got == (f"the team project store 'acme' on {team_socket.url} sent an answer of more than "
                   f"{MAX_ANSWER_BYTES // (1024 * 1024)} MB, far more than a project store holds, so it was not read "
                   "and its entries could not be read. The server may be a different program or a broken one: tell "
                   "the user.")
    assert team_socket.held_for(0, wait=10) is not None
    assert team_socket.flooded < 32 * 1024 * 1024  # let go once past the cap (and the sockets' buffers), not at 64 MB
    store = store_on(tmp_path, team_socket.url, timeout=30)
    result = store.add("project", "Releases are tagged on main")
    assert result.success is False and result.error.startswith(
        f"the team project store 'acme' on {team_socket.url} sent an answer of more than 8 MB")
