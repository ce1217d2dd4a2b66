"""What the team server refuses in a request, in words (a tester's findings): a NUL character anywhere was a 500
DataError; a credential as agent_id / run_id was stored and echoed by results and `serve audit`; `metadata` on
a PUT was silently ignored; the losers of concurrent PUTs got a 404 "check the id"; a revoked token was told
its token was "wrong"."""

from __future__ import annotations

import threading
import uuid

import httpx
import pytest

from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore

GHP = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
NUL_BODY = "holds a NUL character (\\u0000), which the server cannot store. Nothing was stored; remove the " \
           "character and send the request again."


@pytest.fixture(scope="module")
def team(pg_url, embedder):
    pool = open_pool(pg_url, max_size=8)
    tokens = TokenStore(pool)
    backend = PostgresBackend(pool, embedder)
    alice = "alice-" + uuid.uuid4().hex[:6]
    made = {"alice": tokens.create(alice)[1], "admin": tokens.create("ops-" + alice, admin=True)[1]}
    app = create_app(lambda: backend, None, tokens=tokens)
    with ServerThread(app) as server:
        yield {"url": server.url, "tokens": made, "store": tokens, "alice": alice}
    pool.close()


def call(team, who, method, path, **kw):
    token = team["tokens"].get(who, who)
    return httpx.request(method, team["url"] + path, headers={"Authorization": f"Bearer {token}"}, timeout=30, **kw)


def add(team, text, who="alice", **extra):
    r = call(team, who, "POST", "/memories", json={"text": text, "infer": False, **extra})
    return r


@pytest.mark.parametrize(("body", "where"), [
    ({"text": "nul\u0000byte"}, "text"),
    ({"text": "a fact", "metadata": {"k\u0000": "v"}}, "the key 'k\\x00' of metadata"),
    ({"text": "a fact", "metadata": {"k": "v\u0000"}}, "metadata.k"),
    ({"text": "a fact", "metadata": {"k": ["x", {"deep": "\u0000"}]}}, "metadata.k[1].deep"),
    ({"messages": [{"role": "user", "content": "one\u0000"}]}, "messages[0].content"),
])
def test_a_nul_character_in_a_body_is_a_400_naming_where(team, body, where):
    r = add(team, None, **body) if "text" not in body else call(
        team, "alice", "POST", "/memories", json={"infer": False, **body})
    assert (r.status_code, r.json()) == (400, {"error": f"invalid request body: {where} {NUL_BODY}"})


def test_a_nul_character_in_a_reason_a_query_or_the_address_is_a_400(team):
    mid = add(team, "Alice reviews on Tuesdays").json()["results"][0]["id"]
    put = call(team, "alice", "PUT", f"/memories/{mid}", json={"text": "Alice reviews on Mondays", "reason": "x\u0000"})
    assert (put.status_code, put.json()) == (400, {"error": f"invalid request body: reason {NUL_BODY}"})
    search = call(team, "alice", "POST", "/search", json={"query": "nul\u0000byte"})
    assert (search.status_code, search.json()) == (400, {"error": f"invalid request body: query {NUL_BODY}"})
    in_path = ("the request's path holds a NUL character (%00), which no memory id, user_id, agent_id, run_id or "
               "reason can contain; remove it and send the request again.")
    in_query = in_path.replace("path", "query string")
    for method, path, said in (("GET", "/memories/%00", in_path), ("GET", "/memories/%00/history", in_path),
                               ("DELETE", f"/memories/{mid}?reason=%00", in_query),
                               ("GET", "/memories?user_id=%00", in_query)):
        r = call(team, "alice", method, path)
        assert (r.status_code, r.json()) == (400, {"error": said}), path
    assert call(team, "alice", "GET", f"/memories/{mid}").json()["status"] == "active"  # nothing was changed


@pytest.mark.parametrize(("ids", "name", "finding", "example"), [
    ({"run_id": GHP}, "run_id", "github_token", "'release-2026'"),
    ({"agent_id": "AKIAIOSFODNN7EXAMPLE"}, "agent_id", "aws_access_key_id", "'ci-runner'"),
    ({"agent_id": "pim_0123456789ab_" + "x" * 43}, "agent_id", "pi_memory_token", "'ci-runner'"),
])
def test_an_add_under_an_id_that_looks_like_a_credential_is_refused(team, ids, name, finding, example):
    r = add(team, "A fact under a secret id", **ids)
    assert (r.status_code, r.json()) == (400, {"error": (
        f"{name} looks like a credential ({finding}); ids are stored as written and shown in results, the audit "
        f"log and exports. Pick a plain name for {name} (e.g. {example}) and keep secrets out of ids. Nothing was "
        "stored.")})
    assert not [row for row in team["store"].audit_rows(500, team["alice"]) if GHP in row["scope"]]


def test_an_admins_add_for_a_user_id_with_a_direction_override_is_refused(team):
    r = add(team, "Mallory's fact", who="admin", user_id="alice\u202eecila")
    assert (r.status_code, r.json()) == (400, {"error": (
        "user_id holds an invisible formatting character (U+202E RIGHT-TO-LEFT OVERRIDE) at character 6; an id is "
        "one plain word that reads the same everywhere it is shown. Type it without that character (e.g. "
        "'alice'). Nothing was stored.")})
    assert add(team, "Alice Smith's fact", who="admin", user_id="Alice Smith").status_code == 200  # a space is fine


def test_a_put_with_metadata_is_refused_instead_of_ignored(team):
    mid = add(team, "Alice's laptop is a Framework", metadata={"source": "chat"}).json()["results"][0]["id"]
    r = call(team, "alice", "PUT", f"/memories/{mid}", json={"text": "Alice's laptop is a ThinkPad",
                                                            "metadata": {"source": "review"}, "user_id": team["alice"]})
    assert (r.status_code, r.json()) == (400, {"error": (
        "an update changes a memory's text only: its metadata stays as it was stored. Nothing was changed; send "
        "the update without \"metadata\", or store the fact again with the new metadata (POST /memories) and "
        "delete this one.")})
    assert call(team, "alice", "GET", f"/memories/{mid}").json()["status"] == "active"


def test_concurrent_puts_give_one_winner_and_409s_naming_the_newer_version(team):
    mid = add(team, "Alice's build cache is on S3").json()["results"][0]["id"]
    answers: list[httpx.Response] = []
    start = threading.Barrier(6)

    def put(i: int) -> None:
        start.wait()
        answers.append(call(team, "alice", "PUT", f"/memories/{mid}", json={"text": f"Alice's build cache is v{i}",
                                                                           "user_id": team["alice"]}))

    threads = [threading.Thread(target=put, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in answers)
    assert codes == [200, 409, 409, 409, 409, 409]
    winner = next(r for r in answers if r.status_code == 200).json()["id"]
    for lost in (r for r in answers if r.status_code == 409):
        assert lost.json() == {"error": (
            f"memory {mid!r} was changed meanwhile: it is now superseded by {winner!r}, so this update was not "
            f"applied. Read the memory again and update its newest version (update {winner!r} instead)."),
            "id": mid, "memory_status": "superseded", "superseded_by": winner}
    gone = add(team, "Alice's old VPN is vpn1").json()["results"][0]["id"]
    assert call(team, "alice", "DELETE", f"/memories/{gone}").status_code == 200
    r = call(team, "alice", "PUT", f"/memories/{gone}", json={"text": "Alice's VPN is vpn2", "user_id": team["alice"]})
    assert (r.status_code, r.json()["memory_status"], r.json()["superseded_by"]) == (409, "deleted", None)
    assert call(team, "alice", "PUT", "/memories/no-such-id", json={"text": "x y", "user_id": team["alice"]}
                ).status_code == 404


def test_a_revoked_token_is_told_so_with_its_id(team):
    record, token = team["store"].create(team["alice"], label="laptop")
    assert call(team, token, "GET", "/memories").status_code == 200
    team["store"].revoke(record.id)
    revoked_at = next(r.revoked_at for r in team["store"].list(include_revoked=True) if r.id == record.id)
    r = call(team, token, "GET", "/memories")
    assert (r.status_code, r.json()) == (401, {"error": (
        f"unauthorised: this bearer token (id {record.id}, user {team['alice']!r}) was revoked at {revoked_at}. Ask "
        f"the server's admin for a new one (`pi-memory serve token create --user {team['alice']}`) and put it in "
        "the client's settings.")})
    unknown = call(team, "pim_000000000000_" + "y" * 43, "GET", "/memories")
    assert unknown.json() == {"error": (
        "unauthorised: the bearer token is wrong: it is no token this server knows. Send 'Authorization: Bearer "
        "<token>' with your own token, which the server's admin makes with `pi-memory serve token create --user "
        "NAME`; this server takes per-user tokens only.")}


def test_the_self_hosted_client_reads_a_409_as_a_memory_changed_meanwhile(team):
    from pi_memory.semantic.backend import MemoryChangedError, MemoryNotFoundError
    from pi_memory.semantic.backends.rest_client import RestBackend
    from pi_memory.semantic.models import Scope

    client = RestBackend(team["url"], team["tokens"]["alice"])
    scope = Scope(user_id=team["alice"])
    old = client.add("Alice's CI runs on Jenkins", scope=scope)
    new = client.update(old.id, "Alice's CI runs on Buildkite", scope=scope)
    with pytest.raises(MemoryChangedError) as err:
        client.update(old.id, "Alice's CI runs on Drone", scope=scope)
    assert isinstance(err.value, MemoryNotFoundError)  # callers that know only "not found" still catch it
    assert (err.value.memory_id, err.value.status, err.value.superseded_by) == (old.id, "superseded", new.id)


CONTROL_SAID = ("holds a control character ({char}), which can hide or change text on a screen showing it. Nothing "
                "was stored; remove it (tab and newline are fine) and send the request again.")


@pytest.mark.parametrize(("metadata", "where", "char"), [
    ({"note": "red\u001b[31malert"}, "metadata.note", "U+001B ESC"),
    ({"ti\u0007tle": "x"}, "the key 'ti\\x07tle' of metadata", "U+0007"),
    ({"k": ["ok", {"deep": "a\u009bb"}]}, "metadata.k[1].deep", "U+009B"),
    ({"k": "carriage\rreturn"}, "metadata.k", "U+000D"),
])
def test_a_control_character_in_metadata_is_a_400_naming_the_field(team, metadata, where, char):
    """A tester's finding: an escape sequence in a metadata key or value was stored and came back in every result
    and listing, acting on the screen that showed it; the text of a memory already refused one."""
    text = "The release train leaves on Wednesdays " + uuid.uuid4().hex[:6]
    r = add(team, text, metadata=metadata)
    assert (r.status_code, r.json()) == (400, {"error": f"invalid request body: {where} "
                                                        + CONTROL_SAID.format(char=char)})
    listed = call(team, "alice", "GET", f"/memories?user_id={team['alice']}&limit=1000").json()["results"]
    assert [m for m in listed if m["memory"] == text] == []
    stored = add(team, text, metadata={"note": "tab\tand\nnewline are kept"})
    assert stored.status_code == 200 and stored.json()["results"][0]["metadata"] == {"note": "tab\tand\nnewline are kept"}
    again = add(team, text, metadata=metadata)  # the same text already stored: still refused, not a quiet NOOP
    assert again.status_code == 400


def test_the_backend_refuses_a_control_character_in_metadata_before_anything_is_stored(team, pg_url, embedder):
    pool = open_pool(pg_url, max_size=1)
    try:
        backend = PostgresBackend(pool, embedder)
        scope = __import__("pi_memory.semantic.models", fromlist=["Scope"]).Scope(user_id=team["alice"])
        with pytest.raises(ValueError) as refused:
            backend.add("Builds run on the ARM runners", scope=scope, metadata={"why": "\u001b]0;owned\u0007"})
        assert str(refused.value) == "metadata.why " + CONTROL_SAID.format(char="U+001B ESC")
        assert backend.count(scope=scope, status=None) == len(backend.get_all(scope=scope, include_superseded=True))
        assert [m.text for m in backend.get_all(scope=scope) if "ARM runners" in m.text] == []
    finally:
        pool.close()


@pytest.mark.parametrize(("source", "where", "char"), [
    ({"session_id": "s1\u001b]0;owned\u0007"}, "source.session_id", "U+001B ESC"),
    ({"kind": "api", "entry_ids": ["e1", "e\u009b2"]}, "source.entry_ids[1]", "U+009B"),
    ({"tool\u0007": "x"}, "the key 'tool\\x07' of source", "U+0007"),
])
def test_a_control_character_in_the_source_is_a_400_naming_the_field(team, source, where, char):
    """A gap of the last stop: metadata refused control characters, a memory's `source` (returned by every read as
    metadata is) took them. It is refused the same way, nothing stored."""
    text = "The deploy freeze starts on the 20th " + uuid.uuid4().hex[:6]
    r = add(team, text, source=source)
    assert (r.status_code, r.json()) == (400, {"error": f"invalid request body: {where} "
                                                        + CONTROL_SAID.format(char=char)})
    listed = call(team, "alice", "GET", f"/memories?user_id={team['alice']}&limit=1000").json()["results"]
    assert [m for m in listed if m["memory"] == text] == []
    stored = add(team, text, source={"session_id": "s-1", "kind": "api"})
    assert stored.status_code == 200 and stored.json()["results"][0]["source"] == {
        "session_id": "s-1", "entry_ids": [], "kind": "api"}
    again = add(team, text, source=source)  # the same text already stored: still refused, not a quiet NOOP
    assert again.status_code == 400


def test_both_backends_refuse_a_control_character_in_the_source_before_anything_is_stored(team, pg_url, embedder,
                                                                                        backend):
    from pi_memory.semantic.models import Scope

    pool = open_pool(pg_url, max_size=1)
    try:
        for store in (PostgresBackend(pool, embedder), backend):  # the team store, the embedded one
            scope = Scope(user_id=team["alice"] + "-src")
            with pytest.raises(ValueError) as refused:
                store.add("Builds run on the RISC-V runners", scope=scope, source={"session_id": "a\u001b[2Jb"})
            assert str(refused.value) == "source.session_id " + CONTROL_SAID.format(char="U+001B ESC")
            assert [m.text for m in store.get_all(scope=scope) if "RISC-V" in m.text] == []
    finally:
        pool.close()
