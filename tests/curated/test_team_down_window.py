"""A team server found down (no answer in time, or no connection) is not waited for again by a start of the
same process for :data:`DOWN_WINDOW_S` (30 s): a pi session's start read it twice (``hello``, then the first
prompt's frozen snapshot) and a hung server cost it 4 s. A start in the window reads it as unreachable at once and
sends nothing; a tool call (or a request with no start bound) still asks; after the window, or once the server
answers, a start asks again. Real servers on 127.0.0.1 (``tests/team_sockets.py``)."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated import team_client as tc
from pi_memory.curated.team_client import DOWN_WINDOW_S, TeamProjectClient, bounded

MARGIN = 1.0
AT_ONCE = 0.2  # a start that sends nothing


def store_on(tmp_path: Path, url: str, timeout: float = 5.0) -> MemoryStore:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    return MemoryStore(tmp_path / "data", project_root=repo,
                       team_project=TeamProjectClient(url, "acme", "team-token", timeout=timeout))


def start(store: MemoryStore, seconds: float = 0.5) -> float:
    """A start's read of the stores (bounded by ``seconds``): how long it took."""
    started = time.monotonic()
    with bounded(store, seconds):
        store.load_from_disk()
    return time.monotonic() - started


def skipped(url: str, what: str) -> str:
    return (f"the team project store 'acme' on {url} was not asked: it {what} less than 30 s ago, and a start does "
            "not wait for it again that soon, so its entries could not be read. memory_read with target 'project' "
            "asks again with the full teamProjectStore.timeoutSeconds.")


def test_the_window_is_thirty_seconds():
    assert DOWN_WINDOW_S == 30.0


@pytest.mark.parametrize("seconds", [0.4, 0.8])
def test_a_second_start_after_a_timeout_does_not_wait(tmp_path, team_socket, seconds):
    store = store_on(tmp_path, team_socket.url)
    assert seconds - 0.05 <= start(store, seconds) < seconds + MARGIN
    assert start(store, seconds) < AT_ONCE
    assert start(store, seconds) < AT_ONCE
    assert len(team_socket.spans) == 1
    assert store.drift("project").detail == skipped(team_socket.url, f"did not answer within {seconds:g} s")


def test_another_client_of_the_same_server_in_the_process_does_not_wait_either(tmp_path, team_socket):
    assert start(store_on(tmp_path / "a", team_socket.url)) >= 0.45
    other = store_on(tmp_path / "b", team_socket.url)  # a new session of the same process (pi's /new)
    assert start(other) < AT_ONCE
    assert len(team_socket.spans) == 1


def test_a_tool_call_and_an_unbounded_read_still_ask(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url, timeout=0.6)
    start(store, 0.4)
    started = time.monotonic()
    with bounded(store, 5.0, bound_for="tool"):
        result = store.read("project")
    assert 0.55 <= time.monotonic() - started < 0.6 + MARGIN  # its timeoutSeconds (0.6 s), asked
    assert result.code == "io_error" and len(team_socket.spans) == 2
    store.read("project")
    assert len(team_socket.spans) == 3


def test_after_the_window_a_start_asks_again(tmp_path, team_socket, monkeypatch):
    monkeypatch.setattr(tc, "DOWN_WINDOW_S", 1.0)
    store = store_on(tmp_path, team_socket.url)
    start(store, 0.4)
    assert start(store, 0.4) < AT_ONCE and len(team_socket.spans) == 1
    time.sleep(1.0)
    assert 0.35 <= start(store, 0.4) < 0.4 + MARGIN
    assert len(team_socket.spans) == 2


def test_an_answer_ends_the_window(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url)
    start(store, 0.4)
    team_socket.mode = "answer"
    assert store.read("project").entries == ["Deploys go out on Tuesdays"]  # a tool call or the CLI: asked
    team_socket.mode = "hang"
    assert 0.35 <= start(store, 0.4) < 0.4 + MARGIN  # asked again, and waited
    assert len(team_socket.spans) == 3


def test_a_server_that_refused_the_connection_is_not_asked_again_by_a_start(tmp_path):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()  # nothing listens there now: a refused connection
    tc.forget_down()
    try:
        store = store_on(tmp_path, url)
        assert start(store) < MARGIN
        assert store.drift("project").detail.startswith(f"the team project store 'acme' on {url} cannot be reached "
                                                        "(ConnectError: ")
        assert store.team_project.last_error.kind == "refused"
        assert start(store) < AT_ONCE
        assert store.drift("project").detail == skipped(url, "could not be reached")
    finally:
        tc.forget_down()


def test_an_http_error_is_no_reason_to_skip_a_start(tmp_path, team_socket):
    team_socket.mode, team_socket.status, team_socket.answer = "answer", 503, {"error": "maintenance"}
    store = store_on(tmp_path, team_socket.url)
    start(store)
    start(store)
    assert len(team_socket.spans) == 2  # it answered: it is up, a start asks it
    assert store.drift("project").detail == (f"the team project store 'acme' on {team_socket.url} answered HTTP 503: "
                                             '"maintenance".')
