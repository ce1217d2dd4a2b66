"""Ids that an older team server stored as sent, credentials included (before adds refused credential-looking
ids): at start they are rewritten to a keyed placeholder in every table that keeps them, the server says so on
standard error without the secret, and a second start changes nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys

import httpx
import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb
from typer.testing import CliRunner

from pg_fixture import own_database
from pi_memory import safety
from pi_memory.cli.app import app
from pi_memory.semantic.backends import pg_schema
from pi_memory.semantic.backends.pg_clean import IdRewriter, clean_stored_ids, placeholder
from pi_memory.semantic.backends.pg_sweep import SAME_TEXT
from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.rest_app import create_app
from pi_memory.semantic.backends.rest_runner import ServerThread
from pi_memory.semantic.backends.team_auth import TokenStore
from pi_memory.semantic.backends.team_projects import ProjectRoutes
from pi_memory.semantic.backends.team_server import export_rows, open_team
from pi_memory.semantic.models import Scope, text_hash

AWS = "AKIAZ7Q2RSTUVWXY3456"
GHP = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
PIM = "pim_0123456789ab_" + "Zx9-" * 11
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVlLWhlcmUtMTIz"
SECRETS = (AWS, GHP, PIM, JWT)
KEY = "5a" * 32  # the database's placeholder key, set by the test so the placeholders are known
P_AWS = "redacted-aws_access_key_id-iabjhhcafnbf"
P_GHP = "redacted-github_token-lpabcombgokb"
P_PIM = "redacted-pi_memory_token-feijknfegkje"
P_JWT = "redacted-jwt-gbiohlcoemfp"
TOKEN = "pim_0a0a0a0a0a0a_" + "T" * 43  # the old server's token for user AWS
AT = "2026-01-05T10:00:00.000Z"
CREDENTIAL_ID = ("user_id looks like a credential (aws_access_key_id); ids are stored as written and shown in results, "
                 "the audit log and exports. Pick a plain name for user_id (e.g. 'alice') and keep secrets out of "
                 "ids. Nothing was stored.")
LINES = [
    "Stored ids held credentials: rewrote 13 rows (3 memories, 3 history events, 2 tokens, 1 project store, 4 audit "
    "rows); the credentials are no longer in the database.",
    f"  user_id now 'bob-{P_GHP}' (it held a credential: github_token; rewritten in 1 memory, 1 history event)",
    f"  user_id now '{P_AWS}' (it held a credential: aws_access_key_id; rewritten in 1 memory, 1 history event, "
    "1 token, 1 project store, 2 audit rows; its token 0a0a0a0a0a0a)",
    f"  project store and run_id now '{P_GHP}' (it held a credential: github_token; rewritten in 1 memory, 1 history "
    "event, 1 project store, 2 audit rows)",
    f"  agent_id now '{P_JWT}' (it held a credential: jwt; rewritten in 1 memory, 1 history event, 1 audit row)",
    f"  agent_id now '{P_PIM}' (it held a credential: pi_memory_token; rewritten in 1 memory, 1 history event)",
    "  1 token label held a credential, now redacted.",
    "Clients still configured with an old id are refused on their next add and must choose a plain name; what they "
    "stored is kept under the new id shown above.",
]


@pytest.fixture
def db(pg_url):
    """A database of the test's own on the shared server."""
    with own_database(pg_url, "clean_") as url:
        yield url


def memory(conn, mid: str, user: str, project: str, agent: str, text: str) -> None:
    """A memory and its ADD event, written as the server writes them (the text already redacted)."""
    conn.execute("INSERT INTO semantic_memories(id, user_id, project_id, agent_id, text, hash, created_at, updated_at, "
                 "observed_at) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                 (mid, user, project, agent, text, text_hash(text), AT, AT, AT))
    conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, new_text, at) VALUES "
                 "(%s,%s,%s,%s,'ADD',%s,%s)", (mid, user, project, agent, text, AT))


def audit(conn, token_id: str, user: str, action: str, memory_id: str | None, scope: str, detail: dict) -> None:
    conn.execute("INSERT INTO audit_log(at, token_id, user_id, admin, action, memory_id, scope, detail) VALUES "
                 "(%s,%s,%s,%s,%s,%s,%s,%s)", (AT, token_id, user, user == "shared", action, memory_id, scope,
                                               Jsonb(detail)))


def old_server(url: str, *, key: bool = True) -> None:
    """The tables as a server that did not refuse credential-looking ids left them."""
    with psycopg.connect(url, autocommit=True) as conn:
        pg_schema.migrate(conn)
        if key:
            conn.execute("INSERT INTO pi_memory_keys(name, value) VALUES ('id-redaction', %s)", (KEY,))
        memory(conn, "m-1", AWS, "", "", "Deploys go out on Tuesdays")
        memory(conn, "m-2", "alice", GHP, JWT, "The staging cluster is in Frankfurt")
        memory(conn, "m-3", f"bob-{GHP}", "", PIM, "Bob reviews on Fridays")
        memory(conn, "m-4", "alice", "", "", "Alice likes short standups")
        for tid, user, token, label in (("0a0a0a0a0a0a", AWS, TOKEN, "laptop"),
                                        ("0b0b0b0b0b0b", "alice", "pim_0b0b0b0b0b0b_" + "U" * 43, f"CI {PIM}")):
            conn.execute("INSERT INTO api_tokens(id, user_id, token_hash, label, created_at) VALUES (%s,%s,%s,%s,%s)",
                         (tid, user, hashlib.sha256(token.encode()).hexdigest(), label, AT))
        audit(conn, "0a0a0a0a0a0a", AWS, "add", "m-1", AWS, {})
        audit(conn, "shared", "shared", "add", "m-2", f"alice:project:{GHP}:agent:{JWT}", {})
        audit(conn, "0a0a0a0a0a0a", AWS, "update", "m-1", AWS, {"previous": f"moved from {GHP}"})
        audit(conn, "0b0b0b0b0b0b", "alice", "project-write", None, f"project:{GHP}",
              {"version": 1, "operations": ["add"], "entries": 1})
        audit(conn, "0b0b0b0b0b0b", "alice", "add", "m-4", "alice", {})
        conn.execute("INSERT INTO project_stores(project_id, entries, version, updated_at, updated_by) VALUES "
                     "(%s,%s,1,%s,%s)", (GHP, Jsonb(["The API ships behind a feature flag"]), AT, AWS))


def holding(url: str, needles=SECRETS) -> list[str]:
    """Every ``table.column`` (all columns of all tables, as text) where one of ``needles`` occurs."""
    found = []
    with psycopg.connect(url) as conn:
        columns = conn.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
                               "'public' ORDER BY 1, 2").fetchall()
        for table, column in columns:
            query = sql.SQL("SELECT count(*) FROM {} WHERE EXISTS (SELECT 1 FROM unnest(%s::text[]) s WHERE "
                            "strpos({}::text, s) > 0)").format(sql.Identifier(table), sql.Identifier(column))
            if conn.execute(query, (list(needles),)).fetchone()[0]:
                found.append(f"{table}.{column}")
    return found


def snapshot(url: str) -> dict[str, list[str]]:
    """Every row of every table, as text."""
    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = "
                                             "'public' ORDER BY 1")]
        return {t: sorted(r[0] for r in conn.execute(sql.SQL("SELECT t::text FROM {} t").format(sql.Identifier(t))))
                for t in tables}


def rows(url: str, query: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return conn.execute(query).fetchall()


def test_a_start_rewrites_every_stored_credential_id_to_its_placeholder(db):
    old_server(db)
    assert holding(db) == ["api_tokens.label", "api_tokens.user_id", "audit_log.detail", "audit_log.scope",
                           "audit_log.user_id", "project_stores.project_id", "project_stores.updated_by",
                           "semantic_history.agent_id", "semantic_history.project_id", "semantic_history.user_id",
                           "semantic_memories.agent_id", "semantic_memories.project_id", "semantic_memories.user_id"]
    said = []
    open_pool(db, max_size=1, on_clean=said.append).close()
    assert [r.lines() for r in said] == [LINES]
    assert holding(db) == []
    scopes = [("m-1", P_AWS, "", ""), ("m-2", "alice", P_GHP, P_JWT), ("m-3", f"bob-{P_GHP}", "", P_PIM),
              ("m-4", "alice", "", "")]
    assert rows(db, "SELECT id, user_id, project_id, agent_id FROM semantic_memories ORDER BY id") == scopes
    assert rows(db, "SELECT memory_id, user_id, project_id, agent_id FROM semantic_history ORDER BY id") == scopes
    assert rows(db, "SELECT id, user_id, label FROM api_tokens ORDER BY id") == [
        ("0a0a0a0a0a0a", P_AWS, "laptop"), ("0b0b0b0b0b0b", "alice", "CI [REDACTED:pi_memory_token]")]
    assert rows(db, "SELECT user_id, scope, detail FROM audit_log ORDER BY id") == [
        (P_AWS, P_AWS, {}), ("shared", f"alice:project:{P_GHP}:agent:{P_JWT}", {}),
        (P_AWS, P_AWS, {"previous": f"moved from {P_GHP}"}),
        ("alice", f"project:{P_GHP}", {"version": 1, "operations": ["add"], "entries": 1}), ("alice", "alice", {})]
    assert rows(db, "SELECT project_id, entries, version, updated_by FROM project_stores") == [
        (P_GHP, ["The API ships behind a feature flag"], 1, P_AWS)]
    for table, texts in snapshot(db).items():  # nothing any credential format would find is left, in any column
        assert [t for t in texts if safety.scan_secrets(t)] == [], table


def test_a_second_start_changes_nothing_and_says_nothing(db):
    old_server(db)
    open_pool(db, max_size=1, on_clean=lambda report: None).close()
    before = snapshot(db)
    said = []
    open_pool(db, max_size=1, on_clean=said.append).close()
    with psycopg.connect(db, autocommit=True) as conn:
        again = clean_stored_ids(conn)
    assert (said, again.total, again.lines(), snapshot(db)) == ([], 0, [], before)


def test_a_first_read_of_many_rows_is_said_before_it_starts_and_the_next_start_says_nothing(db, monkeypatch,
                                                                                                caplog):
    """The first start of a version reads every stored row once (about 50 s for 600,000 rows): a person watching
    `pi-memory serve` start is told why it takes longer, once."""
    import logging

    from pi_memory.semantic.backends import pg_sweep

    old_server(db)
    monkeypatch.setattr(pg_sweep, "LONG_READ_ROWS", 3)
    with caplog.at_level(logging.WARNING, logger="pi_memory.semantic.backends.pg_sweep"):
        open_pool(db, max_size=1, on_clean=lambda report: None).close()
        first = [r.getMessage() for r in caplog.records]
        caplog.clear()
        open_pool(db, max_size=1, on_clean=lambda report: None).close()
    stored = sum(n for (n,) in rows(db, "SELECT count(*) FROM semantic_memories UNION ALL SELECT count(*) FROM "
                                        "semantic_history UNION ALL SELECT count(*) FROM audit_log"))
    assert first == [f"checking the {stored:,} rows stored before this version of pi-memory for credentials, once: "
                     "this start takes longer than the next ones"]
    assert caplog.records == []


def test_the_export_holds_no_credential_and_the_command_says_what_it_rewrote(db, monkeypatch, tmp_path):
    old_server(db)
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    result = CliRunner().invoke(app, ["serve", "export", "--database-url", db])
    assert result.exit_code == 0, result.output
    *exported, store = [json.loads(line) for line in result.stdout.splitlines()]
    assert store["project_store"].startswith("redacted-github_token-") and len(store["entries"]) == 1
    assert [(r["id"], r["user_id"], r["project_id"], r["agent_id"]) for r in exported] == [
        ("m-1", P_AWS, "", ""), ("m-2", "alice", P_GHP, P_JWT), ("m-3", f"bob-{P_GHP}", "", P_PIM),
        ("m-4", "alice", "", "")]
    assert not [s for s in SECRETS if s in result.stdout or s in result.stderr]
    *said, summary = result.stderr.splitlines()
    assert said == LINES
    assert summary == ("exported 4 memories (4 history events, 0 vectors) and 1 shared project store "
                       f"({store['project_store']}: 1 entry) to standard output.")
    again = CliRunner().invoke(app, ["serve", "migrate", "--json", "--database-url", db])
    assert (json.loads(again.stdout)["idsCleaned"], again.stderr) == (None, "")


def test_a_client_whose_user_id_is_a_credential_is_still_refused_and_its_token_reaches_the_new_id(db, embedder):
    old_server(db)
    pool = open_pool(db, max_size=4, on_clean=lambda report: None)
    backend = PostgresBackend(pool, embedder)
    try:
        tokens = TokenStore(pool)
        app = create_app(lambda: backend, None, tokens=tokens, projects=ProjectRoutes(pool, tokens, 2200))
        with ServerThread(app) as server:
            def call(method: str, path: str, **kw) -> httpx.Response:
                return httpx.request(method, server.url + path, headers={"Authorization": f"Bearer {TOKEN}"},
                                     timeout=30, **kw)

            refused = call("POST", "/memories", json={"text": "Deploys freeze in December", "infer": False,
                                                       "user_id": AWS})
            assert (refused.status_code, refused.json()) == (400, {"error": CREDENTIAL_ID})
            assert call("GET", "/whoami").json()["user_id"] == P_AWS
            assert [(m["id"], m["user_id"]) for m in call("GET", "/memories").json()["results"]] == [("m-1", P_AWS)]
            added = call("POST", "/memories", json={"text": "Deploys freeze in December", "infer": False,
                                                     "user_id": P_AWS})
            assert added.status_code == 200, added.text
            named = call("GET", f"/projects/{GHP}/entries")
            assert (named.status_code, named.json()) == (400, {"error": (
                "the project name looks like a credential (github_token); names are stored as written and shown in "
                "the audit log. Name the project store with a plain name (e.g. acme-api) and keep secrets out of "
                "names.")})
            assert call("GET", f"/projects/{P_GHP}/entries").json()["entries"] == ["The API ships behind a feature flag"]
        exported = json.dumps(list(export_rows(backend)))
    finally:
        pool.close()
    assert (exported.count(P_AWS), [s for s in SECRETS if s in exported], holding(db)) == (2, [], [])


def test_ids_an_older_server_writes_after_a_clean_up_join_the_same_placeholder(db):
    old_server(db)
    open_pool(db, max_size=1, on_clean=lambda report: None).close()
    with psycopg.connect(db, autocommit=True) as conn:  # an older server, still running, writes under AWS again
        memory(conn, "m-5", AWS, "", "", "Deploys go out on Tuesdays")  # the same text as m-1
        memory(conn, "m-6", AWS, "", "", "Rollbacks need two approvals")
        audit(conn, "0a0a0a0a0a0a", AWS, "add", "m-6", AWS, {})
        conn.execute("INSERT INTO project_stores(project_id, entries, version, updated_at, updated_by) VALUES "
                     "(%s,%s,1,%s,'alice')", (GHP, Jsonb(["The API ships behind a feature flag",
                                                           "Release notes go in CHANGELOG.md"]), AT))
        report = clean_stored_ids(conn)
    assert report.lines() == [
        "Stored ids held credentials: rewrote 7 rows (2 memories, 3 history events, 1 project store, 1 audit row); "
        "the credentials are no longer in the database.",
        f"  user_id now '{P_AWS}' (it held a credential: aws_access_key_id; rewritten in 2 memories, 3 history "
        "events, 1 audit row)",
        f"  project store now '{P_GHP}' (it held a credential: github_token; rewritten in 1 project store)",
        "  1 memory was already stored under the new id, so the old copy is marked superseded by it.",
        "Clients still configured with an old id are refused on their next add and must choose a plain name; what "
        "they stored is kept under the new id shown above."]
    assert rows(db, "SELECT id, user_id, status, superseded_by FROM semantic_memories WHERE id IN ('m-1', 'm-5', "
                    "'m-6') ORDER BY id") == [("m-1", P_AWS, "active", None), ("m-5", P_AWS, "superseded", "m-1"),
                                              ("m-6", P_AWS, "active", None)]
    assert rows(db, "SELECT event, user_id, related_id, reason FROM semantic_history WHERE memory_id = 'm-5' "
                    "ORDER BY id") == [
        ("ADD", P_AWS, None, None),
        ("SUPERSEDE", P_AWS, "m-1", "the same text is stored under the rewritten id (its credential-looking id was "
                                    "rewritten at start)")]
    assert rows(db, "SELECT project_id, entries, version FROM project_stores") == [
        (P_GHP, ["The API ships behind a feature flag", "Release notes go in CHANGELOG.md"], 2)]
    assert holding(db) == []


def test_without_a_key_the_first_clean_up_makes_one_and_maps_each_credential_once(db):
    old_server(db, key=False)
    open_pool(db, max_size=1, on_clean=lambda report: None).close()
    (key,), = rows(db, "SELECT value FROM pi_memory_keys WHERE name = 'id-redaction'")
    assert re.fullmatch("[0-9a-f]{64}", key) and key != KEY
    new = placeholder(bytes.fromhex(key), AWS, "aws_access_key_id")
    assert re.fullmatch("redacted-aws_access_key_id-[a-p]{12}", new)
    users = {r[0] for q in ("SELECT user_id FROM semantic_memories WHERE id = 'm-1'", "SELECT user_id FROM api_tokens "
                            "WHERE id = '0a0a0a0a0a0a'", "SELECT user_id FROM audit_log WHERE memory_id = 'm-1'",
                            "SELECT updated_by FROM project_stores") for r in rows(db, q)}
    assert users == {new}


@pytest.mark.parametrize(("stored", "becomes"), [
    (f"bob-{GHP}", "bob-redacted-github_token-lpabcombgokb"),  # only the credential's part is replaced
    (f"token={GHP}", "token=redacted-github_token-lpabcombgokb"),  # a placeholder after token= is no secret
    ("Bearer abcdefghijklmnopqrstuvwxyzABCDEF123", "redacted-bearer_token-igdpihiobckd"),  # it still would be
    ("x" * 100 + "-" + GHP, "redacted-github_token-epmgaipijlma"),  # too long with the placeholder in it
    ("alice", "alice"),
])
def test_an_id_keeps_its_plain_words_unless_that_still_reads_as_a_credential(stored, becomes):
    rewritten = IdRewriter(bytes.fromhex(KEY)).rewrite(stored)
    assert (rewritten, safety.scan_secrets(rewritten)) == (becomes, [])


def test_a_real_serve_start_says_it_on_standard_error_once(db, tmp_path):
    old_server(db)
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path), "PI_MEMORY_DIR": str(tmp_path / "data")}

    def start(n: int) -> str:
        log = tmp_path / f"serve-{n}.log"
        with log.open("w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--database-url", db, "--port", "0",
                                     "--json"], stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        try:
            assert json.loads(proc.stdout.readline() or "{}").get("event") == "listening", log.read_text()
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=30)
        return log.read_text()

    first, second = start(1), start(2)
    assert [line for line in first.splitlines() if line in LINES] == LINES
    assert not [s for s in SECRETS if s in first]
    assert "Stored ids held credentials" not in second


def test_a_new_tokens_label_is_stored_redacted(db):
    pool = open_pool(db, max_size=1)
    try:
        record, _token = TokenStore(pool).create("dana", label=f"CI runner {GHP}")
    finally:
        pool.close()
    assert record.label == "CI runner [REDACTED:github_token]"
    assert rows(db, "SELECT user_id, label FROM api_tokens") == [("dana", "CI runner [REDACTED:github_token]")]


SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
GITLAB = "glpat-AbCdEfGhIjKlMnOpQrSt"
STRIPE_2 = "sk_live_9fD28GpKxiVCzqisS0ycq6cb"
MORE = (SLACK, STRIPE, GITLAB)
P_SLACK = "redacted-slack_token-nicbnbhkmdfm"
P_GONE = "gone-redacted-gitlab_token-jhcapennonfh"
P_IMP = "imp-redacted-gitlab_token-jhcapennonfh"
PAYMENTS = "The payments key is [REDACTED:stripe_key]"
GONE_LINES = [
    "Stored ids held credentials: rewrote 19 rows (5 memories, 5 history events, 2 tokens, 1 project store, 6 audit "
    "rows); the credentials are no longer in the database.",
    LINES[1],
    f"  memory id now '{P_GONE}' (it held a credential: gitlab_token; rewritten in 1 history event, 1 audit row)",
    f"  memory id now '{P_IMP}' (it held a credential: gitlab_token; rewritten in 2 memories, 1 history event, 1 audit "
    "row)",
    *LINES[2:6],
    f"  audit scope and user_id now '{P_SLACK}' (it held a credential: slack_token; rewritten in 1 history event, 1 "
    "audit row)",
    LINES[6],
    "Stored texts held credentials: redacted them in 1 project store, 2 memories, 3 history events; 2 memories will "
    "be embedded again from the redacted text when `serve` starts.",
    "  1 memory then held the same text as another active memory of its scope, so it is marked superseded by it.",
    LINES[7],
]
VEC = "[" + ",".join(["0.5"] * 4) + "]"


def gone_and_unredacted(conn) -> None:
    """Rows the scope check cannot reach: events and audit rows whose memory is gone, a memory whose id holds a
    credential (``serve import`` kept ids), and texts an older server stored before it redacted them."""
    conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, new_text, "
                 "reason, at) VALUES (%s,%s,'','','DELETE',%s,NULL,%s,%s)",
                 (f"gone-{GITLAB}", SLACK, f"The CI token is {STRIPE}", f"leaked {GITLAB}", AT))
    audit(conn, "0c0c0c0c0c0c", SLACK, "delete", f"gone-{GITLAB}", SLACK, {})
    memory(conn, f"imp-{GITLAB}", "alice", "", "", "Imported facts keep their ids")
    conn.execute("UPDATE semantic_memories SET superseded_by = %s WHERE id = 'm-4'", (f"imp-{GITLAB}",))
    audit(conn, "0b0b0b0b0b0b", "alice", "add", f"imp-{GITLAB}", "alice", {"memory": f"imp-{GITLAB}"})
    memory(conn, "m-7", "alice", "", "", f"The payments key is {STRIPE}")
    memory(conn, "m-8", "alice", "", "", f"The payments key is {STRIPE_2}")
    conn.execute("UPDATE semantic_memories SET metadata = %s, source = %s WHERE id = 'm-7'",
                 (Jsonb({"note": f"from {SLACK}"}), Jsonb({"kind": "chat", "ref": f"slack {SLACK}"})))
    for mid in (f"imp-{GITLAB}", "m-7", "m-8"):
        conn.execute("INSERT INTO semantic_vectors(memory_id, model, dim, embedding) VALUES (%s,'test',4,%s)",
                     (mid, VEC))
    conn.execute("INSERT INTO project_stores(project_id, entries, version, updated_at, updated_by) VALUES "
                 "('acme', %s, 1, %s, 'alice')", (Jsonb(["Plain entry", f"Staging token {GITLAB}"]), AT))


def test_rows_whose_memory_is_gone_ids_of_memories_and_old_texts_are_cleaned_too(db):
    old_server(db)
    with psycopg.connect(db, autocommit=True) as conn:
        gone_and_unredacted(conn)
    said = []
    open_pool(db, max_size=1, on_clean=said.append).close()
    assert [r.lines() for r in said] == [GONE_LINES]
    assert holding(db, SECRETS + MORE + (STRIPE_2,)) == []
    for table, texts in snapshot(db).items():  # nothing any credential format would find is left, in any column
        assert [t for t in texts if safety.scan_secrets(t)] == [], table
    assert rows(db, "SELECT id, status, superseded_by, text, hash, source, metadata FROM semantic_memories WHERE "
                    "pk > 3 ORDER BY pk") == [
        ("m-4", "active", P_IMP, "Alice likes short standups", text_hash("Alice likes short standups"), {}, {}),
        (P_IMP, "active", None, "Imported facts keep their ids", text_hash("Imported facts keep their ids"), {}, {}),
        ("m-7", "active", None, PAYMENTS, text_hash(PAYMENTS), {"kind": "chat", "ref": "slack [REDACTED:slack_token]"},
         {"note": "from [REDACTED:slack_token]"}),
        ("m-8", "superseded", "m-7", PAYMENTS, text_hash(PAYMENTS), {}, {})]
    assert rows(db, "SELECT memory_id, user_id, event, old_text, new_text, related_id, reason FROM semantic_history "
                    "WHERE id > 4 ORDER BY id") == [
        (P_GONE, P_SLACK, "DELETE", "The CI token is [REDACTED:stripe_key]", None, None,
         "leaked [REDACTED:gitlab_token]"),
        (P_IMP, "alice", "ADD", None, "Imported facts keep their ids", None, None),
        ("m-7", "alice", "ADD", None, PAYMENTS, None, None), ("m-8", "alice", "ADD", None, PAYMENTS, None, None),
        ("m-8", "alice", "SUPERSEDE", PAYMENTS, PAYMENTS, "m-7", SAME_TEXT)]
    assert rows(db, "SELECT token_id, user_id, memory_id, scope, detail FROM audit_log WHERE id > 5 ORDER BY id") == [
        ("0c0c0c0c0c0c", P_SLACK, P_GONE, P_SLACK, {}), ("0b0b0b0b0b0b", "alice", P_IMP, "alice", {"memory": P_IMP})]
    assert rows(db, "SELECT project_id, entries FROM project_stores WHERE project_id = 'acme'") == [
        ("acme", ["Plain entry", "Staging token [REDACTED:gitlab_token]"])]
    # the imported memory's vector moved with its id; those computed from a credential are gone, queued again
    assert rows(db, "SELECT memory_id, model FROM semantic_vectors ORDER BY 1") == [(P_IMP, "test")]
    assert rows(db, "SELECT memory_id FROM pi_memory_reembed ORDER BY 1") == [("m-7",), ("m-8",)]
    before, said = snapshot(db), []
    open_pool(db, max_size=1, on_clean=said.append).close()
    assert (said, snapshot(db)) == ([], before)


def test_serve_embeds_again_the_memories_whose_text_was_redacted(db, embedder):
    old_server(db)
    with psycopg.connect(db, autocommit=True) as conn:
        gone_and_unredacted(conn)
    team = open_team(db, on_clean=lambda report: None)
    try:
        assert rows(db, "SELECT memory_id, model, dim FROM semantic_vectors ORDER BY 1, 2") == [
            (P_IMP, "test", 4), ("m-7", embedder.model_name, embedder.dim), ("m-8", embedder.model_name, embedder.dim)]
        assert rows(db, "SELECT count(*) FROM pi_memory_reembed") == [(0,)]
        hits = team.backend.search("payments key", scope=Scope(user_id="alice"), top_k=1)
        assert [(h.memory.id, h.details.vector_rank) for h in hits] == [("m-7", 1)]
    finally:
        team.close()
