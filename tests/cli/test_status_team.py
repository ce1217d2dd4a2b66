"""``pi-memory status`` with a team project store (teamProjectStore) that cannot be read: it asked a hung server
twice (opening the stores read them, then the status read each again: two timeoutSeconds) and said only
"drift: unreadable". Now it asks once and says in a person's words what happened (no answer within N s, a
refused connection, an HTTP status) and what to do next. Real servers on 127.0.0.1 (``tests/team_sockets.py``)."""

from __future__ import annotations

import socket

import pytest

from read_only_folder import cli, text_cli  # tests/, on sys.path by the conftest
from team_sockets import cli_in_this_process as in_this_process

MARGIN = 1.0
AGAIN = "then run `pi-memory status` again"


def project_lines(out: str, url: str) -> list[str]:
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"team project store 'acme' on {url}: "))
    return lines[at:at + 2]


@pytest.mark.parametrize("timeout", [1.0, 1.5])
def test_a_hung_server_is_asked_once_and_the_wait_is_said(tmp_path, monkeypatch, team_socket, timeout):
    in_this_process(monkeypatch, tmp_path, team_socket.url, timeout)
    code, out, err = text_cli(["status"])
    assert code == 0, err
    assert len(team_socket.spans) == 1  # one timeoutSeconds, not two
    held = team_socket.held_for(0)
    assert held is not None and timeout - 0.5 <= held < timeout + MARGIN
    assert project_lines(out, team_socket.url) == [
        f"team project store 'acme' on {team_socket.url}: 0 entries, 0% — 0/2,200 chars — could not be read",
        f"  The team server at {team_socket.url} did not answer within {timeout:g} s "
        "(teamProjectStore.timeoutSeconds). It may be down or overloaded: check that it runs and that this machine "
        f"can reach it, {AGAIN}. If it is only slow, raise teamProjectStore.timeoutSeconds.",
    ]


def test_the_json_status_has_the_problem_too(tmp_path, monkeypatch, team_socket):
    in_this_process(monkeypatch, tmp_path, team_socket.url, 1.0)
    code, result, _ = cli(["status"])
    assert code == 0 and len(team_socket.spans) == 1
    project = result["stores"]["project"]
    assert (project["drift"], project["problem"]) == ("unreadable", (
        f"The team server at {team_socket.url} did not answer within 1 s (teamProjectStore.timeoutSeconds). It may "
        f"be down or overloaded: check that it runs and that this machine can reach it, {AGAIN}. If it is only slow, "
        "raise teamProjectStore.timeoutSeconds."))


def test_a_refused_connection_says_nothing_listens(tmp_path, monkeypatch):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()
    in_this_process(monkeypatch, tmp_path, url)
    code, out, _ = text_cli(["status"])
    assert code == 0
    assert project_lines(out, url)[1] == (
        f"  The team server at {url} refused the connection: nothing listens at that address and port. Start it "
        "(`pi-memory serve` on its machine, or ask whoever runs it) or correct teamProjectStore.url, then run "
        "`pi-memory status` again.")


@pytest.mark.parametrize(("status", "what"), [
    (401, "it did not accept the token. Check the token in $PI_MEMORY_SERVER_TOKEN (or the variable "
          "teamProjectStore.tokenEnv names)"),
    (403, "the token may not read this project. Ask whoever runs the server for access, or check "
          "teamProjectStore.project"),
    (404, "there is no such address on it. Check teamProjectStore.url (the server's address, without "
          "/projects/...) and that it is a pi-memory team server"),
    (500, "a problem on the server: tell whoever runs it (the server's log says more)"),
    (503, "a problem on the server: tell whoever runs it (the server's log says more)"),
    (418, "an answer pi-memory did not expect: check teamProjectStore.url, and tell whoever runs the server"),
])
def test_an_http_error_is_named_with_what_to_do(tmp_path, monkeypatch, team_socket, status, what):
    team_socket.mode, team_socket.status, team_socket.answer = "answer", status, {"error": "no"}
    in_this_process(monkeypatch, tmp_path, team_socket.url)
    code, out, _ = text_cli(["status"])
    assert code == 0 and len(team_socket.spans) == 1
    assert project_lines(out, team_socket.url) == [
        f"team project store 'acme' on {team_socket.url}: 0 entries, 0% — 0/2,200 chars — could not be read",
        f"  The team server at {team_socket.url} answered HTTP {status}: {what}; {AGAIN}.",
    ]


def test_a_server_that_answers_is_read_once_and_ok(tmp_path, monkeypatch, team_socket):
    team_socket.mode = "answer"
    in_this_process(monkeypatch, tmp_path, team_socket.url)
    code, result, _ = cli(["status"])
    assert code == 0 and len(team_socket.spans) == 1
    assert (result["stores"]["project"]["entryCount"], result["stores"]["project"]["drift"]) == (1, None)
    assert "problem" not in result["stores"]["project"]


def test_read_project_asks_once(tmp_path, monkeypatch, team_socket):
    in_this_process(monkeypatch, tmp_path, team_socket.url, 1.0)
    code, _, err = text_cli(["read", "project"])
    assert code == 1 and len(team_socket.spans) == 1
    assert err.startswith(f"refused (io_error): the team project store 'acme' on {team_socket.url} did not answer "
                          "within 1 s")


NOT_OURS = [b"<html><body>Please log in to the guest network</body></html>", b"", b"[1, 2, 3]",
            b'{"version": 3}', b'{"entries": "Deploys go out on Tuesdays", "version": 1}']


@pytest.mark.parametrize("body", NOT_OURS)
def test_an_answer_that_is_no_team_servers_is_not_an_empty_store(tmp_path, monkeypatch, team_socket, body):
    """A login page answering HTTP 200 read as a healthy, empty team store: `status` said "0 entries — ok" and
    `read project` exited 0 with no entries."""
    team_socket.mode, team_socket.answer = "answer", body
    in_this_process(monkeypatch, tmp_path, team_socket.url, 1.0)
    code, out, err = text_cli(["status"])
    assert code == 0, err
    assert project_lines(out, team_socket.url) == [
        f"team project store 'acme' on {team_socket.url}: 0 entries, 0% — 0/2,200 chars — could not be read",
        f"  The team server at {team_socket.url} answered, but not as a pi-memory team server does: the address may "
        "reach another program, a proxy or a login page. Check that teamProjectStore.url is the address of "
        f"`pi-memory serve`, {AGAIN}."]
    code, result, _ = cli(["read", "project"])
    assert (code, result["success"]) == (1, False)
