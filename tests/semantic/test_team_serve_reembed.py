"""`pi-memory serve` embeds, while it runs, what an import from another process queued (its embedding loop was
tested through `Team.start_reembed` only; its wiring into `serve` was checked by hand). `--reembed-every` /
`$PI_MEMORY_REEMBED_EVERY` sets the time between passes (default 30 s), read by the command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import httpx
import pytest

from pi_memory.semantic.backends.postgres import PostgresBackend, open_pool
from pi_memory.semantic.backends.team_import import import_rows


def _row(mid: str, user: str, text: str) -> dict:
    return {"id": mid, "user_id": user, "text": text, "status": "active", "created_at": "2026-01-05T10:00:00.000Z",
            "updated_at": "2026-01-05T10:00:00.000Z", "observed_at": "2026-01-05T10:00:00.000Z"}


def test_a_running_serve_embeds_rows_imported_by_another_process(pg_url, embedder, tmp_path):
    from pg_fixture import own_database

    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data"),
           "PI_MEMORY_SERVER_TOKEN": "serve-reembed-token"}
    env.pop("PI_MEMORY_REEMBED_EVERY", None)
    log = tmp_path / "serve.log"  # a file: a full stderr pipe would stall the server
    with own_database(pg_url, "serve_reembed") as url:
        with log.open("w") as err:
            proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--database-url", url, "--port", "0",
                                     "--json", "--reembed-every", "0.5"], stdout=subprocess.PIPE, stderr=err,
                                    text=True, env=env)
        pool = open_pool(url, max_size=2)
        try:
            line = proc.stdout.readline()
            assert line, "serve did not start: " + log.read_text()
            base = json.loads(line)["url"]
            user = "served-" + uuid.uuid4().hex[:8]
            texts = ["The staging database runs on PostgreSQL 16", "Priya prefers tabs over spaces for indentation",
                     "Lunch is served at noon on Fridays"]
            store = PostgresBackend(pool, embedder)  # this test's process: not the server's
            report = import_rows(store, [(f"row {i}", _row(f"{user}-{i}", user, t)) for i, t in enumerate(texts)])
            assert report.queued == 3
            said = "embedded 3 queued memories (imported or redacted without a vector of this server's model); 0 " \
                   "still queued"
            deadline = time.monotonic() + 30
            while said not in log.read_text() and time.monotonic() < deadline:
                time.sleep(0.1)
            assert said in log.read_text().splitlines()
            assert proc.poll() is None  # the same server, no restart
            assert store.queued_count() == 0
            with pool.connection() as conn:
                models = conn.execute("SELECT memory_id, model FROM semantic_vectors WHERE memory_id LIKE %s "
                                      "ORDER BY memory_id", (user + "-%",)).fetchall()
            assert models == [(f"{user}-{i}", embedder.model_name) for i in range(3)]
            found = httpx.post(base + "/search", json={"query": "which whitespace character does she indent code "
                                                                "with", "user_id": user},
                               headers={"Authorization": "Bearer serve-reembed-token"}, timeout=30)
            assert [m["id"] for m in found.json()["results"]][:1] == [f"{user}-1"]
        finally:
            pool.close()
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=20)


@pytest.mark.parametrize("value", ["soon", "0", "nan"])
def test_an_unusable_reembed_period_in_the_environment_stops_serve(invoke_cli, monkeypatch, value):
    monkeypatch.setenv("PI_MEMORY_REEMBED_EVERY", value)
    result = invoke_cli("serve", "--database-url", "postgresql://127.0.0.1:9/none")
    assert result.exit_code == 2
    assert " ".join(result.output.split()) == (
        f"error: $PI_MEMORY_REEMBED_EVERY must be a number of seconds from 0.1 to 86400, not {value!r}.")
