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


def test_local_postgres_says_when_its_postgresql_exits_and_cleans_its_folder(tmp_path):
    """A tester killed the PostgreSQL under `serve local-postgres`: it stayed silent and claimed "running" for
    over a minute. It now looks every second, says in one line what happened, where the log is kept and what to
    do, removes its folder and exits 2."""
    import os
    import time

    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "local-postgres"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    kept = None
    try:
        url = _started(proc)
        with psycopg.connect(url, connect_timeout=10) as conn:
            data = Path(conn.execute("SHOW data_directory").fetchone()[0])
        pid = int((data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, signal.SIGKILL)  # the postmaster this test's command started
        killed = time.monotonic()
        rest, err = proc.communicate(timeout=30)
        took = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, err
    assert took < 5
    assert "Stopped" not in rest
    found = re.fullmatch(r"error: the local PostgreSQL on 127\.0\.0\.1:(\d+) \(pid (\d+)\) exited by itself(; its "
                         r"log's last line: [^\n]*)?; its log is kept in (\S+)\. Its folder and the memories in it "
                         r"are removed; start a new one with `pi-memory serve local-postgres` and export the URL it "
                         r"prints\.\n", err)
    assert found, err
    assert found.group(1) == url.rsplit(":", 1)[1].split("/")[0] and int(found.group(2)) == pid
    kept = Path(found.group(4))
    try:
        assert "database system is ready to accept connections" in kept.read_text()
        assert kept.stat().st_mode & 0o077 == 0
    finally:
        kept.unlink()
    assert not data.parent.exists()
