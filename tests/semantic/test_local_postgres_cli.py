"""``pi-memory serve local-postgres``: the README's way to try the team server starts a real PostgreSQL with
pgvector on 127.0.0.1, says the URL to export, and on Ctrl-C stops it and removes its folder."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path

import psycopg


def _started(proc: subprocess.Popen) -> str:
    lines = []
    for line in proc.stdout:
        lines.append(line)
        found = re.search(r"PI_MEMORY_DATABASE_URL=(postgresql://\S+)", line)
        if found:
            return found.group(1)
    raise AssertionError("no URL printed: " + "".join(lines) + proc.stderr.read())


def test_local_postgres_serves_pgvector_on_loopback_and_removes_its_folder_on_ctrl_c():
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "local-postgres"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = _started(proc)
        assert url.startswith("postgresql://postgres@127.0.0.1:")
        with psycopg.connect(url, connect_timeout=10) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            assert conn.execute("SELECT '[1,0]'::vector <=> '[0,1]'::vector").fetchone()[0] == 1.0
            folder = Path(conn.execute("SHOW data_directory").fetchone()[0]).parent
        assert folder.is_dir()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Stopped; the local PostgreSQL's folder is removed." in rest
    assert not folder.exists()
    try:
        psycopg.connect(url, connect_timeout=3).close()
    except psycopg.OperationalError:
        pass
    else:
        raise AssertionError("the server still answers after Ctrl-C")
