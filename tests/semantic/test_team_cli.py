"""`pi-memory serve …` commands of the team server, in words (a tester's findings): a libpq key=value address
printed its password in clear; `serve export -o` wrote a world-readable file and, for a missing folder,
advised --dir; bad --tls-cert / --tls-key files ended in tracebacks; `serve local-postgres --help` lost
`[team]` to the help's markup; `serve token create --user` said "a non-empty name without spaces" for a
5,000-character name or an ESC, and accepted U+202E."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
from urllib.parse import urlsplit

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app

SECRET = "SuperSecretPw"


@pytest.fixture
def run(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("PI_MEMORY_DATABASE_URL", raising=False)

    def run(*args: str, stdout: bool = False):
        result = CliRunner().invoke(app, list(args))
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        return result.exit_code, result.stdout if stdout else " ".join(result.output.split())

    return run


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_key_value_address_and_a_query_string_never_show_the_password(run):
    port = _free_port()  # nothing listens there
    code, said = run("serve", "--database-url", f"host=127.0.0.1 port={port} password={SECRET} dbname=postgres "
                     "user=postgres", "--json", stdout=True)
    assert code == 2 and SECRET not in said
    assert json.loads(said)["error"].startswith(f"cannot use the PostgreSQL database at host=127.0.0.1 port={port} "
                                                "password=*** dbname=postgres user=postgres: connection failed: ")
    code, said = run("serve", "token", "list", "--database-url",
                     f"postgresql://postgres@127.0.0.1:{port}/postgres?password={SECRET}&sslpassword=Other99pw")
    assert code == 1 and SECRET not in said and "Other99pw" not in said
    assert said.startswith(f"refused: cannot use the PostgreSQL database at postgresql://***@127.0.0.1:{port}/"
                           "postgres?password=***&sslpassword=***: connection failed: ")
    code, said = run("serve", "audit", "--database-url", f"host=127.0.0.1 password {SECRET}")  # a typo: no "="
    assert (code, said) == (1, 'refused: cannot read the PostgreSQL address host=127.0.0.1 ***: missing "=" after '
                               '"***" in connection info string. Write it as postgresql://USER:PASSWORD@HOST:5432/'
                               "DBNAME or as libpq pairs (host=HOST dbname=DBNAME user=USER password=PASSWORD).")


def test_serve_json_names_a_key_value_database_without_its_password(pg_url, tmp_path):
    parts = urlsplit(pg_url)
    conninfo = f"host={parts.hostname} port={parts.port} user=postgres dbname=postgres password={SECRET}"
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data"),
           "PI_MEMORY_SERVER_TOKEN": "cli-test-shared-token-0123456789"}
    env.pop("PI_MEMORY_DATABASE_URL", None)
    with (tmp_path / "serve.log").open("w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "serve", "--database-url", conninfo, "--port", "0",
                                 "--json"], stdout=subprocess.PIPE, stderr=log, text=True, env=env)
    try:
        event = json.loads(proc.stdout.readline() or "{}")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert event.get("dataDir") == (f"host={parts.hostname} port={parts.port} user=postgres dbname=postgres "
                                    "password=***"), (tmp_path / "serve.log").read_text()
    assert SECRET not in (tmp_path / "serve.log").read_text()


def test_an_export_is_readable_by_its_owner_only_whatever_the_umask(run, pg_url, tmp_path):
    before = os.umask(0o022)
    try:
        out = tmp_path / "team.jsonl"
        assert run("serve", "export", "-o", str(out), "--database-url", pg_url)[0] == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        old = tmp_path / "old.jsonl"
        old.write_text("stale\n")
        old.chmod(0o644)
        assert run("serve", "export", "-o", str(old), "--database-url", pg_url)[0] == 0
        assert stat.S_IMODE(old.stat().st_mode) == 0o600 and "stale" not in old.read_text()
    finally:
        os.umask(before)


def test_an_export_into_a_missing_folder_says_so(run, tmp_path):
    missing = tmp_path / "nonexistent" / "dir"
    assert run("serve", "export", "-o", str(missing / "x.jsonl"), "--database-url", "postgresql://u@127.0.0.1:9/x") == (
        2, f"error: the folder {missing} of -o {missing / 'x.jsonl'} does not exist; create it first, or write the "
           "export somewhere else.")
    assert run("serve", "export", "-o", str(tmp_path), "--database-url", "postgresql://u@127.0.0.1:9/x") == (
        2, f"error: -o {tmp_path} is a folder; name a file to write, e.g. -o {tmp_path / 'team.jsonl'}")


PAIR = ("A pair for a test: `openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -subj "
        "/CN=localhost`.")


def test_tls_files_that_cannot_serve_https_are_refused_in_words(run, tmp_path):
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    cases = [
        ("/nonexistent.pem", "/nonexistent.key",
         "error: --tls-cert /nonexistent.pem is not a file; name the PEM file of the server's certificate."),
        (str(junk), str(junk), f"error: --tls-cert {junk} holds no PEM certificate (a block starting with -----BEGIN "
                               f"CERTIFICATE-----); name the certificate file in PEM form. {PAIR}"),
    ]
    if shutil.which("openssl"):
        for name in ("a", "b"):
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                            str(tmp_path / f"{name}.key"), "-out", str(tmp_path / f"{name}.pem"), "-subj",
                            "/CN=localhost", "-days", "1"], check=True, capture_output=True)
        cert, other_key = tmp_path / "a.pem", tmp_path / "b.key"
        cases += [
            (str(cert), "/nonexistent.key", "error: --tls-key /nonexistent.key is not a file; name the PEM file of "
                                            "the server's private key."),
            (str(cert), str(cert), f"error: --tls-key {cert} holds no PEM private key (a block starting with "
                                   f"-----BEGIN PRIVATE KEY-----); name the private key file in PEM form. {PAIR}"),
            (str(cert), str(other_key), f"error: cannot serve HTTPS with --tls-cert {cert} and --tls-key {other_key}: "
                                        "the key does not belong to the certificate. Give the certificate and its "
                                        "own private key, both PEM."),
        ]
    for cert_file, key_file, message in cases:
        code, said = run("serve", "--tls-cert", cert_file, "--tls-key", key_file, "--dir", str(tmp_path / "data"))
        assert (code, said.split("settings.json ", 1)[-1]) == (2, message)


def test_local_postgres_help_names_the_extra_to_install(run):
    code, said = run("serve", "local-postgres", "--help")
    assert code == 0 and "(`pip install 'pi-memory[team]'`)" in said.replace("│", "").replace("  ", " ")


@pytest.mark.parametrize(("user", "message"), [
    ("x" * 5000, "error: the user id is 5,000 characters long; use at most 200 (e.g. --user alice). No token was "
                 "created."),
    ("al\x1bice", "error: the user id holds a control character (U+001B ESC) at character 3; an id is one plain "
                  "word that reads the same everywhere it is shown. Type it without that character (e.g. --user "
                  "alice). No token was created."),
    ("alice\u202eecila", "error: the user id holds an invisible formatting character (U+202E RIGHT-TO-LEFT "
                         "OVERRIDE) at character 6; an id is one plain word that reads the same everywhere it is "
                         "shown. Type it without that character (e.g. --user alice). No token was created."),
    ("alice smith", "error: the user id holds a space (U+0020 SPACE) at character 6; an id is one plain word that "
                    "reads the same everywhere it is shown. Type it without that character (e.g. --user alice). No "
                    "token was created."),
    ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "error: the user id looks like a credential (github_token); ids "
     "are stored as written and shown in results, the audit log and exports. Pick a plain name for the user id "
     "(e.g. --user alice) and keep secrets out of ids. No token was created."),
])
def test_token_create_says_what_is_wrong_with_a_user_id(run, pg_url, user, message):
    assert run("serve", "token", "create", "--user", user, "--database-url", pg_url) == (2, message)
