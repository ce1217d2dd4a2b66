"""``pi-memory serve`` without ``--database-url`` serves the embedded store: ids stored there before the server
refused credential-looking ids are rewritten when it opens the store, as the team store's are."""

from __future__ import annotations

import json
import sqlite3

from pi_memory import safety
from pi_memory.index import open_index
from pi_memory.semantic.backends.rest_runner import embedded_backend_factory
from pi_memory.semantic.embedded import EmbeddedBackend
from pi_memory.semantic.embedded_ids import clean_embedded_ids
from pi_memory.semantic.models import Scope

AWS = "AKIAZ7Q2RSTUVWXY3456"
GHP = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVlLWhlcmUtMTIz"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
KEY = "5a" * 32
P_AWS = "redacted-aws_access_key_id-iabjhhcafnbf"
P_GHP = "redacted-github_token-lpabcombgokb"
P_JWT = "redacted-jwt-gbiohlcoemfp"
P_SLACK = "redacted-slack_token-nicbnbhkmdfm"
AT = "2026-01-05T10:00:00.000Z"
SEMANTIC = ("semantic_memories", "semantic_history", "semantic_vectors")
LINES = [
    "Stored ids held credentials: rewrote 10 rows (3 memories, 4 history events, 3 vectors); the credentials are no "
    "longer in the database.",
    f"  memory id now 'imp-{P_GHP}' (it held a credential: github_token; rewritten in 2 memories, 1 history event, 1 "
    "vector)",
    f"  user_id now '{P_AWS}' (it held a credential: aws_access_key_id; rewritten in 1 memory, 1 history event, 1 "
    "vector)",
    f"  agent_id now '{P_JWT}' (it held a credential: jwt; rewritten in 1 memory, 1 history event, 1 vector)",
    f"  user_id now '{P_SLACK}' (it held a credential: slack_token; rewritten in 1 history event)",
    "Clients still configured with an old id are refused on their next add and must choose a plain name; what they "
    "stored is kept under the new id shown above.",
]


def old_store(data, embedder) -> None:
    """An embedded store as a server that did not refuse credential-looking ids left it."""
    backend = EmbeddedBackend(open_index(data), embedder)
    backend.add("Deploys go out on Tuesdays", scope=Scope(user_id=AWS))
    backend.add("The staging cluster is in Frankfurt", scope=Scope(user_id="alice", agent_id=JWT))
    imported = backend.add("Imported facts keep their ids", scope=Scope(user_id="alice"))
    backend.conn.close()
    conn = sqlite3.connect(data / "index.sqlite3")
    with conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        for table, column in (("semantic_memories", "id"), ("semantic_history", "memory_id"),
                              ("semantic_vectors", "memory_id")):
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (f"imp-{GHP}", imported.id))
        conn.execute("UPDATE semantic_memories SET superseded_by = ? WHERE user_id = ?", (f"imp-{GHP}", AWS))
        conn.execute("INSERT INTO semantic_history(memory_id, user_id, project_id, agent_id, event, old_text, at) "
                     "VALUES ('gone-1', ?, '', '', 'DELETE', 'Rollbacks need two approvals', ?)", (SLACK, AT))
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('id-redaction-key', ?)", (KEY,))
    conn.close()


def holding(data) -> list[str]:
    conn = sqlite3.connect(data / "index.sqlite3")
    try:
        found = []
        for table in SEMANTIC:
            for column, kind in conn.execute(f"SELECT name, type FROM pragma_table_info('{table}')").fetchall():
                if kind == "BLOB":
                    continue
                values = [r[0] for r in conn.execute(f"SELECT CAST({column} AS TEXT) FROM {table}")]
                if any(v and (safety.scan_secrets(v) or any(s in v for s in (AWS, GHP, JWT, SLACK))) for v in values):
                    found.append(f"{table}.{column}")
        return found
    finally:
        conn.close()


def test_serve_rewrites_the_embedded_stores_credential_ids_once(tmp_path, embedder):
    data = tmp_path / "data"
    old_store(data, embedder)
    assert sorted(holding(data)) == [
        "semantic_history.agent_id", "semantic_history.memory_id", "semantic_history.user_id",
        "semantic_memories.agent_id", "semantic_memories.id", "semantic_memories.superseded_by",
        "semantic_memories.user_id", "semantic_vectors.agent_id", "semantic_vectors.memory_id",
        "semantic_vectors.user_id"]
    said = []
    backend = embedded_backend_factory(data, on_clean=said.append)()
    try:
        assert [r.lines() for r in said] == [LINES]
        assert holding(data) == []
        assert [(m.user_id, m.superseded_by) for m in backend.get_all(scope=Scope(user_id=P_AWS),
                                                                      include_superseded=True)] == [
            (P_AWS, f"imp-{P_GHP}")]
        assert [m.id for m in backend.get_all(scope=Scope(user_id="alice"))] == [f"imp-{P_GHP}"]
        hits = backend.search("staging cluster", scope=Scope(user_id="alice", agent_id=P_JWT), top_k=1)
        assert [(h.memory.text, h.details.vector_rank) for h in hits] == [("The staging cluster is in Frankfurt", 1)]
        sweep = json.loads(backend.conn.execute("SELECT value FROM meta WHERE key = 'semantic_id_sweep'").fetchone()[0])
        assert sorted(sweep) == ["history", "memories", "version"]
        again = clean_embedded_ids(backend.conn)
    finally:
        backend.conn.close()
    assert (again.total, again.lines()) == (0, [])
    said = []
    embedded_backend_factory(data, on_clean=said.append)().conn.close()
    assert said == []
