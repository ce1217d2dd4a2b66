"""A memory tool call for a team project store that is refused for its own arguments is answered at once, with
nothing sent: its arguments failing validation (a wrong type, a missing or unknown argument, ``category`` off the
failure target) read the server's entries first to list them and waited for a hung server; an entry longer than
the server's whole limit was sent to be refused there. Now the entries listed are the ones last read, and the
length is checked against the limit the server's last read gave (else the largest any server can have). A real
server on 127.0.0.1 that never answers (``tests/team_sockets.py``): any request would cost the test 5 s."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pi_memory.config import MAX_CHAR_LIMIT
from pi_memory.curated import MemoryStore, Operation
from pi_memory.curated.team_client import TeamProjectClient
from pi_memory.tools.curated import create_memory_tools

AT_ONCE = 1.0  # far below the server's 5 s: nothing was asked


def store_on(tmp_path: Path, url: str) -> MemoryStore:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    return MemoryStore(tmp_path / "data", project_root=repo,
                       team_project=TeamProjectClient(url, "acme", "team-token", timeout=5))


def call(store: MemoryStore, name: str, arguments: dict) -> tuple[dict, float]:
    tool = {t.name: t for t in create_memory_tools(store)}[name]
    started = time.monotonic()
    result = tool.call(arguments).result
    return result, time.monotonic() - started


@pytest.mark.parametrize(("name", "arguments", "error"), [
    ("memory_add", {"target": "project", "content": 5},
     "Invalid arguments for memory_add: content: Input should be a valid string. Fix them and call the tool again."),
    ("memory_add", {"target": "project"},
     "Invalid arguments for memory_add: content: Field required. Fix them and call the tool again."),
    ("memory_add", {"target": "project", "content": "Tag releases", "category": "failure"},
     "category and failureReason apply only to target 'failure'. Drop them, or use target 'failure'."),
    ("memory_replace", {"target": "project", "oldText": "Deploys"},
     "Invalid arguments for memory_replace: newContent: Field required. Fix them and call the tool again."),
    ("memory_remove", {"target": "project", "oldText": "Deploys", "force": True},
     "Invalid arguments for memory_remove: force: not an argument of memory_remove (it takes: target, oldText). "
     "Fix them and call the tool again."),
    ("memory_read", {"target": "project", "limit": 3},
     "Invalid arguments for memory_read: limit: not an argument of memory_read (it takes: target). Fix them and "
     "call the tool again."),
])
def test_invalid_arguments_are_refused_without_asking_the_server(tmp_path, team_socket, name, arguments, error):
    team_socket.mode = "answer"
    store = store_on(tmp_path, team_socket.url)
    store.read("project")  # the session read the store once (its start)
    team_socket.mode = "hang"
    result, took = call(store, name, arguments)
    assert took < AT_ONCE
    assert len(team_socket.spans) == 1  # the read above only
    assert (result["success"], result["code"], result["error"]) == (False, "invalid_arguments", error)
    assert result["currentEntries"] == ["Deploys go out on Tuesdays"]  # as last read


def test_invalid_arguments_before_any_read_list_no_entries(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url)
    result, took = call(store, "memory_add", {"target": "project", "content": ["a", "b"]})
    assert took < AT_ONCE and team_socket.spans == []
    assert (result["code"], result.get("currentEntries")) == ("invalid_arguments", [])


@pytest.mark.parametrize(("content", "length"), [
    ("x" * 101, 101),
    ("  " + "y" * 150 + "\n", 150),
    ("a\r\n" * 60, 119),  # 60 lines, CRLF read as LF (2 chars a line), the last newline stripped: 2*60 - 1
])
def test_an_entry_longer_than_the_servers_limit_is_refused_here(tmp_path, team_socket, content, length):
    team_socket.mode, team_socket.answer = "answer", {"entries": ["Deploys go out on Tuesdays"], "version": 1,
                                                      "limit": 100}
    store = store_on(tmp_path, team_socket.url)
    store.read("project")
    team_socket.mode = "hang"
    result, took = call(store, "memory_add", {"target": "project", "content": content})
    assert took < AT_ONCE and len(team_socket.spans) == 1
    assert (result["success"], result["code"]) == (False, "over_limit")
    assert result["error"] == (f"This entry is {length:,} chars, longer than team project store 'acme' on "
                               f"{team_socket.url}'s whole limit of 100, so it can never fit. Nothing was saved. Save a "
                               "short summary of it instead (one fact per entry).")
    assert result["currentEntries"] == ["Deploys go out on Tuesdays"]


def test_an_entry_at_the_servers_limit_is_sent(tmp_path, team_socket):
    team_socket.mode, team_socket.answer = "answer", {"entries": [], "version": 1, "limit": 100}
    store = store_on(tmp_path, team_socket.url)
    store.read("project")
    store.add("project", "z" * 100)
    assert len(team_socket.spans) == 2


def test_without_a_read_the_largest_limit_a_server_can_have_applies(tmp_path, team_socket):
    store = store_on(tmp_path, team_socket.url)
    started = time.monotonic()
    result = store.replace("project", "Deploys", "w" * (MAX_CHAR_LIMIT + 1))
    assert time.monotonic() - started < AT_ONCE and team_socket.spans == []
    assert (result.code, result.error) == ("over_limit", (
        f"This entry is 1,000,001 chars, longer than team project store 'acme' on {team_socket.url}'s whole "
        "limit of 1,000,000, so it can never fit. Nothing was saved. Save a short summary of it instead (one fact "
        "per entry)."))


def test_a_batch_names_the_operation_that_can_never_fit(tmp_path, team_socket):
    team_socket.mode, team_socket.answer = "answer", {"entries": [], "version": 1, "limit": 50}
    store = store_on(tmp_path, team_socket.url)
    store.read("project")
    team_socket.mode = "hang"
    result = store.apply("project", [Operation(action="add", content="Releases are tagged on main"),
                                     Operation(action="replace", old_text="Releases", content="v" * 51),
                                     Operation(action="remove", old_text="x" * 80)])
    assert len(team_socket.spans) == 1
    assert (result.code, result.error) == ("over_limit", (
        f"Operation 2 (replace): This entry is 51 chars, longer than team project store 'acme' on "
        f"{team_socket.url}'s whole limit of 50, so it can never fit. Nothing was saved. Save a short summary of it "
        "instead (one fact per entry)."))
