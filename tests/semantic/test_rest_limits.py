"""How much one request may ask of the REST server (a tester's finding): `POST /memories` with 20,000 tiny
messages (about 600 KB, under the 1 MiB body cap) ran for about 4 minutes, past every client's timeout. One add
now holds at most 200 messages; more is a 413 that says the limit and to split the request."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from pi_memory.semantic.backends.rest_requests import MAX_MESSAGES
from pi_memory.semantic.backends.rest_server import create_app, embedded_backend_factory

TOKEN = "test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def client(tmp_path) -> TestClient:
    return TestClient(create_app(embedded_backend_factory(tmp_path), TOKEN), raise_server_exceptions=False)


def _messages(n: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"fact {i}"} for i in range(n)]


@pytest.mark.parametrize(("count", "infer", "shown"), [
    (20_000, False, "20,000"), (201, False, "201"), (201, True, "201"), (5_000, None, "5,000"),
])
def test_more_messages_than_the_limit_is_a_413_that_says_to_split(client, count, infer, shown):
    body = {"messages": _messages(count), "user_id": "alice", **({} if infer is None else {"infer": infer})}
    answer = client.post("/memories", json=body, headers=AUTH)
    assert (answer.status_code, answer.json()) == (413, {"error": (
        f"the request holds {shown} messages; one request may hold at most 200 (a conversation turn needs a few). "
        "Nothing was stored; split the messages into requests of at most 200 each and send them one after "
        "another.")})
    assert client.get("/memories?user_id=alice", headers=AUTH).json()["results"] == []


def test_the_limit_itself_is_stored(client):
    assert MAX_MESSAGES == 200
    answer = client.post("/memories", json={"messages": _messages(200), "user_id": "alice", "infer": False},
                         headers=AUTH)
    assert answer.status_code == 200 and len(answer.json()["results"]) == 200


# --- what a refused request is told (a tester's finding: "instance of AddBody"; "project_id" for a run_id) ----
MESSAGES = ('messages: must be a list of messages such as [{"role": "user", "content": "…"}], one such message, '
            "or a string")


@pytest.mark.parametrize(("method", "path", "body", "error"), [
    ("POST", "/memories", [1, 2], 'invalid request body: the request body must be one JSON object (with fields '
                                  'such as "user_id"), not a list'),
    ("POST", "/memories", "x", 'invalid request body: the request body must be one JSON object (with fields such '
                               'as "user_id"), not a string'),
    ("POST", "/search", [], 'invalid request body: the request body must be one JSON object (with fields such as '
                            '"user_id"), not a list'),
    ("POST", "/memories", {"text": 5, "user_id": "a"}, "invalid request body: text: must be a string"),
    ("POST", "/memories", {"messages": 5, "user_id": "a"}, "invalid request body: " + MESSAGES),
    ("POST", "/memories", {"messages": [{"role": "user", "content": 5}], "user_id": "a"},
     'invalid request body: messages.0.content: must be a string or a list of parts such as [{"type": "text", '
     '"text": "…"}]'),
    ("POST", "/memories", {"text": "x", "user_id": "a", "infer": "maybe"},
     "invalid request body: infer: must be true or false"),
    ("POST", "/search", {"user_id": "a"}, "invalid request body: query: is required"),
    ("POST", "/memories", {"text": "x", "user_id": "a", "run_id": "r" * 600},
     "run_id: run_id is longer than 256 characters"),
    ("PUT", "/memories/x", {"text": "y", "user_id": "a", "run_id": "r" * 600},
     "run_id: run_id is longer than 256 characters"),
    ("GET", "/memories?user_id=a&run_id=" + "r" * 600, None, "run_id: run_id is longer than 256 characters"),
])
def test_a_refusal_names_the_requests_own_fields(client, method, path, body, error):
    answer = client.request(method, path, json=body, headers=AUTH)
    assert (answer.status_code, answer.json()) == (400, {"error": error})
