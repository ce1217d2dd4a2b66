"""The team server on a real PostgreSQL: per-user tokens (a token reaches only its own user, whatever a request
names), the shared token for small teams, the audit log, and the copy from an embedded store."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from pi_memory.index import open_index
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.backends.team_server import export_rows, import_rows, sqlite_rows
from pi_memory.semantic.embedded import EmbeddedBackend
from pi_memory.semantic.models import Scope


@pytest.fixture(scope="module")
def team(pg_url, embedder):
    pool = open_pool(pg_url, max_size=6)
    tokens = TokenStore(pool, shared_token="shared-team-token-0123456789")
    backend = PostgresBackend(pool, embedder)
    suffix = uuid.uuid4().hex[:6]
    alice, bob = f"alice-{suffix}", f"bob-{suffix}"
    made = {"alice": tokens.create(alice)[1], "bob": tokens.create(bob)[1],
            "admin": tokens.create(f"ops-{suffix}", admin=True)[1]}
    app = create_app(lambda: backend, None, tokens=tokens)
    with ServerThread(app) as server:
        yield {"url": server.url, "tokens": made, "store": tokens, "backend": backend, "alice": alice, "bob": bob}
    pool.close()


def call(team, who, method, path, **kw):
    token = team["tokens"].get(who, who)
    return httpx.request(method, team["url"] + path, headers={"Authorization": f"Bearer {token}"}, timeout=30, **kw)


def add(team, who, user, text, **extra):
    body = {"messages": [{"role": "user", "content": text}], "infer": False, **extra}
    if user is not None:
        body["user_id"] = user
    return call(team, who, "POST", "/memories", json=body)


def test_a_users_token_reaches_only_that_user(team):
    alice, bob = team["alice"], team["bob"]
    mine = add(team, "alice", alice, "Alice deploys from the release branch")
    assert mine.status_code == 200, mine.text
    mid = mine.json()["results"][0]["id"]
    assert add(team, "bob", bob, "Bob keeps the staging keys in the vault").status_code == 200
    refused = add(team, "alice", bob, "Alice writes into Bob's memory")
    assert refused.status_code == 403
    assert f"may not act for user {bob!r}" in refused.json()["error"]
    assert call(team, "bob", "GET", f"/memories/{mid}", params={"user_id": alice}).status_code == 403
    assert call(team, "bob", "GET", f"/memories/{mid}", params={"user_id": bob}).status_code == 404
    listed = call(team, "alice", "GET", "/memories")  # no user_id: the token's own user
    assert [m["memory"] for m in listed.json()["results"]] == ["Alice deploys from the release branch"]


@pytest.mark.parametrize("body", [
    {"query": "staging keys", "user_id": "{bob}"},
    {"query": "staging keys", "filters": {"user_id": "{bob}"}},
    {"query": "staging keys", "user_id": "{alice}", "filters": {"user_id": "{bob}"}},
    {"query": "staging keys", "user_id": "{bob}:project:x"},
    {"query": "staging keys", "user_id": " {bob} "},
])
def test_fuzzed_scopes_never_show_bobs_memories_to_alice(team, body):
    add(team, "bob", team["bob"], "Bob keeps the staging keys in the vault")
    body = json.loads(json.dumps(body).replace("{bob}", team["bob"]).replace("{alice}", team["alice"]))
    found = call(team, "alice", "POST", "/search", json=body)
    assert found.status_code in (400, 403), found.text
    assert "vault" not in found.text


def test_metadata_cannot_smuggle_a_scope(team):
    r = add(team, "alice", team["alice"], "Alice prefers tabs", metadata={"user_id": team["bob"]})
    assert r.status_code == 200
    assert r.json()["results"][0]["metadata"] == {}
    bobs = call(team, "bob", "POST", "/search", json={"query": "prefers tabs", "user_id": team["bob"]})
    assert "tabs" not in bobs.text


def test_admin_and_shared_tokens_act_for_anyone_and_revoked_tokens_are_refused(team):
    bob = team["bob"]
    assert add(team, "admin", bob, "Bob's laptop is a ThinkPad").status_code == 200
    assert add(team, "shared-team-token-0123456789", bob, "Bob uses fish shell").status_code == 200
    record, token = team["store"].create(team["alice"], label="temporary")
    assert call(team, token, "GET", "/memories").status_code == 200
    assert team["store"].revoke(record.id) is True
    refused = call(team, token, "GET", "/memories")
    assert refused.status_code == 401
    assert call(team, "not-a-token", "GET", "/memories").status_code == 401
    assert httpx.get(team["url"] + "/memories", timeout=30).status_code == 401


def test_every_write_is_audited_with_its_user(team):
    alice = team["alice"]
    mid = add(team, "alice", alice, "Alice's editor is Helix").json()["results"][0]["id"]
    new = call(team, "alice", "PUT", f"/memories/{mid}", params={"user_id": alice},
               json={"text": "Alice's editor is Zed"}).json()["id"]
    assert call(team, "alice", "DELETE", f"/memories/{new}", params={"user_id": alice}).status_code == 200
    rows = [r for r in team["store"].audit_rows(200, alice) if r["memoryId"] in (mid, new)]
    assert [(r["action"], r["memoryId"], r["userId"]) for r in reversed(rows)] == [
        ("add", mid, alice), ("update", new, alice), ("delete", new, alice)]


def test_copy_from_an_embedded_store_keeps_ids_history_and_vectors(tmp_path, pg_url, embedder):
    conn = open_index(tmp_path / "data")
    local = EmbeddedBackend(conn, embedder)
    scope = Scope(user_id="copy-" + uuid.uuid4().hex[:8], project_id="p1")
    v1 = local.add("The build uses Bazel 6", scope=scope)
    v2 = local.update(v1.id, "The build uses Bazel 7", scope=scope, reason="upgrade")
    gone = local.add("The old VPN is vpn1", scope=scope)
    local.delete(gone.id, scope=scope)
    conn.close()
    pool = open_pool(pg_url, max_size=2)
    team = PostgresBackend(pool, embedder)
    report = import_rows(team, sqlite_rows(tmp_path / "data" / "index.sqlite3"))
    assert (report.memories, report.skipped, report.refused, report.history, report.vectors) == (3, 0, 0, 5, 3)
    assert import_rows(team, sqlite_rows(tmp_path / "data" / "index.sqlite3")).skipped == 3
    assert [m.id for m in team.get_all(scope=scope)] == [v2.id]
    assert team.get(v1.id, scope=scope).superseded_by == v2.id
    assert team.get(gone.id, scope=scope).status == "deleted"
    assert [e.event for e in team.history(v2.id, scope=scope)] == ["ADD", "UPDATE", "SUPERSEDE"]
    assert team.search("which bazel version", scope=scope, top_k=1)[0].memory.id == v2.id
    exported = [r for r in export_rows(team) if r["user_id"] == scope.user_id]
    assert sorted(r["id"] for r in exported) == sorted([v1.id, v2.id, gone.id])
    assert all(len(r["vectors"]) == 1 and len(r["vectors"][0]["vector"]) == embedder.dim for r in exported)
    pool.close()


def test_whoami_names_the_tokens_user_and_never_the_token(team):
    ops = team["alice"].replace("alice-", "ops-")
    for who, user, admin in (("alice", team["alice"], False), ("admin", ops, True)):
        r = call(team, who, "GET", "/whoami")
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["admin"] is admin and body["auth"] is True and body["user_id"] == user
        assert body["token_id"] == team["tokens"][who].split("_")[1]
        assert team["tokens"][who].split("_", 2)[2] not in r.text
    shared = call(team, "shared-team-token-0123456789", "GET", "/whoami").json()
    assert shared == {"user_id": None, "admin": True, "token_id": "shared", "auth": True}
    record, token = team["store"].create(team["alice"], label="whoami")
    team["store"].revoke(record.id)
    assert call(team, token, "GET", "/whoami").status_code == 401
    assert httpx.get(team["url"] + "/whoami", timeout=30).status_code == 401
def test_keyword_list_lets_rare_terms_decide_and_common_ones_fill(pg_url, embedder):
    """A term in ``common_term_rows`` rows or more of the scope is common: the rows of the rare terms come
    first (ranked among themselves), the newest rows of common terms fill what is left."""
    pool = open_pool(pg_url, max_size=2)
    backend = PostgresBackend(pool, embedder, common_term_rows=3)
    scope = Scope(user_id="kw-" + uuid.uuid4().hex[:8])
    common = [backend.add(f"The service number {i} runs in production", scope=scope).id for i in range(5)]
    rare = backend.add("The zephyrine cluster is old", scope=scope).id
    got = [i for i, _ in backend.keyword_candidates("zephyrine production", scope=scope)]
    assert got[0] == rare
    assert got[1:] == common[:1:-1]  # only the newest 3 rows of a common term, equal ranks: newest first
    assert [i for i, _ in backend.keyword_candidates("production", scope=scope, limit=2)] == common[:-3:-1]
    assert backend.keyword_candidates("nothingmatches", scope=scope) == []
    pool.close()


def test_ef_search_is_a_setting_passed_down_from_the_composition_root(pg_url):
    from pi_memory.semantic.backends.rest_runner import ServeError
    from pi_memory.semantic.backends.team_server import open_team

    team = open_team(pg_url, ef_search=40, project_char_limit=3000)
    assert (team.backend.ef_search, team.projects.char_limit) == (40, 3000)
    team.close()
    default = open_team(pg_url)
    assert default.backend.ef_search == 100
    default.close()
    with pytest.raises(ServeError, match="ef_search must be between 1 and 1000"):
        open_team(pg_url, ef_search=5000)


def test_a_write_and_its_audit_row_are_one_transaction(team, pg_url):
    """The audit row used to be inserted after the write, in a transaction of its own: a failure between the
    two left a memory nobody was recorded writing. Now a refused audit row takes its write down with it."""
    alice, backend = team["alice"], team["backend"]
    scope = Scope(user_id=alice)
    pool = open_pool(pg_url, max_size=1)
    try:
        with pool.connection() as conn:
            conn.execute("ALTER TABLE audit_log ADD CONSTRAINT test_no_deletes CHECK (action <> 'delete') NOT VALID")
        kept = add(team, "alice", alice, "Alice's terminal is Ghostty").json()["results"][0]["id"]
        refused = call(team, "alice", "DELETE", f"/memories/{kept}", params={"user_id": alice})
        assert refused.status_code == 500 and "see the server log" in refused.json()["error"]
        assert backend.get(kept, scope=scope).status == "active"  # the delete was rolled back with its audit row
        assert [e.event for e in backend.history(kept, scope=scope)] == ["ADD"]
    finally:
        with pool.connection() as conn:
            conn.execute("ALTER TABLE audit_log DROP CONSTRAINT test_no_deletes")
        pool.close()
    assert call(team, "alice", "DELETE", f"/memories/{kept}", params={"user_id": alice}).status_code == 200
    rows = [r for r in team["store"].audit_rows(200, alice) if r["memoryId"] == kept]
    assert [r["action"] for r in reversed(rows)] == ["add", "delete"]


def test_an_update_is_audited_once_with_the_id_it_replaced(team):
    alice = team["alice"]
    old = add(team, "alice", alice, "Alice's shell is bash").json()["results"][0]["id"]
    new = call(team, "alice", "PUT", f"/memories/{old}", params={"user_id": alice},
               json={"text": "Alice's shell is fish"}).json()["id"]
    rows = [r for r in team["store"].audit_rows(200, alice) if r["memoryId"] in (old, new)]
    assert [(r["action"], r["memoryId"], r["detail"]) for r in reversed(rows)] == [
        ("add", old, {}), ("update", new, {"previous": old})]


def test_writes_outside_a_request_are_not_audited(team):
    """A script or a CLI copy on the backend itself acts for nobody's token: no audit row names a user."""
    backend, alice = team["backend"], team["alice"]
    backend.on_history = team["store"].on_history
    mem = backend.add("Alice's font is Iosevka", scope=Scope(user_id=alice))
    assert [r for r in team["store"].audit_rows(500) if r["memoryId"] == mem.id] == []
