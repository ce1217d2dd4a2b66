"""A CLI command meets a hung team project server once: `pi-memory add project ...` read the stores (one
timeoutSeconds), then sent the write (another): two waits, and a write sent to a server that had just not
answered. A one-shot command now does not ask a server found down again (``team_client.ask_once``); a server
that answers gets every request. Real servers on 127.0.0.1 (``tests/team_sockets.py``)."""

from __future__ import annotations

import pytest

from read_only_folder import text_cli  # tests/, on sys.path by the conftest
from team_sockets import cli_in_this_process as in_this_process

TIMEOUT = 1.0


def not_asked_again(url: str) -> str:
    return (f"the team project store 'acme' on {url} did not answer within {TIMEOUT:g} s when this command first "
            "asked it, so nothing more was sent to it and nothing was changed there. Check that the server runs and "
            "can be reached, then run the command again.")


@pytest.mark.parametrize("args", [["add", "project", "Tag releases"],
                                  ["replace", "project", "Deploys", "Deploys go out on Fridays"],
                                  ["remove", "project", "Deploys"]])
def test_a_write_waits_once_for_a_hung_server_and_is_not_sent(tmp_path, monkeypatch, team_socket, args):
    in_this_process(monkeypatch, tmp_path, team_socket.url, TIMEOUT)
    code, out, err = text_cli(args)
    assert code == 1, (out, err)
    assert len(team_socket.spans) == 1  # the read at open (one timeoutSeconds); the write was not sent
    assert err.splitlines()[-1] == f"refused (io_error): {not_asked_again(team_socket.url)}"


def test_a_server_that_answers_gets_every_request(tmp_path, monkeypatch, team_socket):
    team_socket.mode, team_socket.answer = "answer", {"entries": ["Deploys go out on Tuesdays"], "version": 1,
                                                     "limit": 2200}
    in_this_process(monkeypatch, tmp_path, team_socket.url, TIMEOUT)
    text_cli(["add", "project", "Tag releases"])
    assert len(team_socket.spans) == 2  # the read at open and the write
