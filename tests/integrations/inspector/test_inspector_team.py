"""The inspector against a team server: a real ``pi-memory serve`` on PostgreSQL with per-user tokens (fixtures
in ``conftest.py``). alice's inspector shows alice's memories and never bob's, in the list and in search; each
memory's history comes from the server; health names the server and the token's user; a revoked token, a
server that does not answer and a token of the wrong user are messages for a person; the token is never in a
page or a URL; a hostile stored memory is shown as text. The browser test is in ``test_inspector_browser.py``."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from markupsafe import escape

from pi_memory.integrations.inspector import Running, ServerChoice, run_inspector
from pi_memory.semantic.backends.rest_client import RestBackend

PAGES = ("/stores", "/semantic", "/semantic?q=billing+deployed", "/semantic?all=1", "/recall",
         "/recall?prompt=How+is+billing+deployed%3F", "/health", "/sessions", "/learning", "/skills")


@contextmanager
def login(running: Running) -> Iterator[httpx.Client]:
    """An httpx client holding the inspector's cookie (the token URL opened once)."""
    with httpx.Client(base_url=running.base, timeout=30) as client:
        assert client.get(running.url).status_code == 303
        yield client


@pytest.fixture(scope="module")
def client(team_inspector):
    with login(team_inspector) as c:
        yield c


def test_alices_inspector_lists_her_memories_and_never_bobs(client, team_server) -> None:
    page = client.get("/semantic").text
    assert f'memories of <strong id="team-user">{team_server.alice}</strong> (this token\'s user)' in page
    assert team_server.url in page
    for text in ("Billing is deployed from the release branch", "Alice edits code in Zed"):
        assert text in page
    assert "Alice edits code in Helix" not in page  # superseded: only with "superseded and deleted too"
    assert "Alice edits code in Helix" in client.get("/semantic?all=1").text
    assert "3 memories in scope" in page
    for bobs in ("Helm charts", "vault", team_server.bob):
        assert bobs not in page and bobs not in client.get("/semantic?all=1").text


@pytest.mark.parametrize("query", ["billing deployed", "Bob keeps the staging deploy keys in the vault", "Helm",
                                   "vault"])
def test_search_never_finds_bobs_memories(client, team_server, query) -> None:
    page = client.get("/semantic", params={"q": query, "floor": "0"}).text
    assert "Helm charts" not in page and "vault</td>" not in page and team_server.bob not in page
    if query == "billing deployed":
        assert "Billing is deployed from the release branch" in page


def test_a_memory_history_comes_from_the_server_with_its_turn(client, team_server) -> None:
    page = client.get(f"/semantic/{team_server.ids['editor-new']}").text
    assert [s.split('"', 1)[0] for s in page.split('data-event="')[1:]] == ["ADD", "UPDATE", "SUPERSEDE"]
    assert "Alice edits code in Helix" in page and "Alice edits code in Zed" in page and "switched" in page
    deploy = client.get(f"/semantic/{team_server.ids['deploy']}").text
    step = deploy.split('data-event="ADD"', 1)[1].split("</li>", 1)[0]
    assert '<a class="source-turn" href="/sessions/turn?session=sess-team&amp;entry=e7">' in step
    bobs = client.get(f"/semantic/{team_server.ids['bob-vault']}").text  # bob's id, asked by alice
    assert f"No memory {team_server.ids['bob-vault']} in this scope." in bobs and "vault" not in bobs


def test_health_names_the_server_and_the_tokens_user(client, team_server) -> None:
    page = client.get("/health").text
    assert f'<td id="team-url">{team_server.url}</td>' in page
    token_id = team_server.tokens["alice"].split("_")[1]
    assert f'<td id="team-user">{team_server.alice} <span class="muted">— token id {token_id}</span></td>' in page
    assert "backend self-hosted" in page


def test_the_token_is_never_in_a_page_or_a_url(client, team_server) -> None:
    token = team_server.tokens["alice"]
    secret = token.split("_", 2)[2]  # pim_<id>_<secret>: the secret may hold "_" too
    for path in PAGES:
        r = client.get(path, follow_redirects=False)
        assert r.status_code == 200, path
        assert secret not in r.text, path
        assert secret not in str(r.headers), path
        for link in r.text.split('href="')[1:]:
            assert secret not in link.split('"', 1)[0], path


def test_a_hostile_memory_from_the_server_is_shown_as_text(client, team_server) -> None:
    for path in ("/semantic", f"/semantic/{team_server.ids['hostile']}"):
        page = client.get(path).text
        assert str(escape(team_server.hostile)) in page, path
        assert "<script>document.title" not in page and "<img src=x" not in page, path


def clear_message(page: str) -> str:
    """The team problem of a page, checked to be for a person (no exception names, no stack trace)."""
    assert 'id="team-problem"' in page
    text = page.split('id="team-problem">', 1)[1].split("</p>", 1)[0]
    for word in ("Traceback", "Error:", "BackendError", "httpx", "ConnectError", "Exception"):
        assert word not in text, text
    return text


def test_a_revoked_token_is_a_clear_message(team_server, team_memory) -> None:
    record, token = team_server.store.create(team_server.alice, label="inspector test")
    with RestBackend(team_server.url, token) as backend, \
            run_inspector(team_memory, server=ServerChoice(backend, token_origin="the file ~/.team-token")) as ui, \
            login(ui) as c:
        assert "Billing is deployed from the release branch" in c.get("/semantic").text
        assert team_server.store.revoke(record.id)
        for path in ("/semantic", "/semantic?q=billing", f"/semantic/{team_server.ids['deploy']}", "/health",
                     "/recall?prompt=billing"):
            r = c.get(path)
            assert r.status_code == 200, path
            text = clear_message(r.text)
            assert text.startswith(f"The team server at {team_server.url} refused the token: it was revoked"), path
            assert "put it in the file ~/.team-token, and start `pi-memory ui` again" in text
            assert "Billing is deployed" not in r.text
        gone = c.post(f"/semantic/{team_server.ids['deploy']}/delete", headers={"X-PI-Memory-CSRF": ui.tokens.csrf})
        assert "Nothing was deleted: The team server" in gone.text


def test_a_server_that_does_not_answer_is_a_clear_message(team_memory) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with RestBackend(f"http://127.0.0.1:{port}", "pim_x_y", connect_retries=0) as backend, \
            run_inspector(team_memory, server=ServerChoice(backend)) as ui, login(ui) as c:
        for path in ("/semantic", "/health", "/recall?prompt=x"):
            text = clear_message(c.get(path).text)
            assert text == (f"The team server at http://127.0.0.1:{port} does not answer: nothing accepts "
                            "connections at that address. Check that `pi-memory serve` runs there and that the "
                            "address (--server) is right, then reload this page."), path


def test_a_token_of_another_user_shows_that_users_memories_only(team_server, team_memory) -> None:
    with RestBackend(team_server.url, team_server.tokens["bob"]) as backend, \
            run_inspector(team_memory, server=ServerChoice(backend)) as ui, login(ui) as c:
        page = c.get("/semantic").text
        assert f'<strong id="team-user">{team_server.bob}</strong>' in page
        assert "Bob keeps the staging deploy keys in the vault" in page
        assert "release branch" not in page and "Alice edits" not in page


def test_ui_server_option_reads_the_token_from_a_file(team_server, tmp_path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(team_server.tokens["alice"] + "\n", encoding="utf-8")
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data")}
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "ui", "--no-browser", "--json", "--server",
                             team_server.url, "--token-file", str(token_file)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=team_server.project)
    try:
        event = json.loads(proc.stdout.readline())
        assert team_server.tokens["alice"] not in json.dumps(event)
        with httpx.Client(timeout=30) as c:
            page = c.get(event["url"], follow_redirects=True).text
            assert page  # the token URL set the cookie
            health = c.get(event["base"] + "/health").text
            semantic = c.get(event["base"] + "/semantic").text
        assert f'<td id="team-user">{team_server.alice}' in health
        assert "Billing is deployed from the release branch" in semantic and "vault" not in semantic
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize(("args", "message"), [
    (["--token-file", "t"], "add --server URL"),
    (["--server", "http://127.0.0.1:9", "--token-file", "missing-file"], "cannot read the token file missing-file"),
    (["--server", "http://127.0.0.1:9", "--token-env", "PI_MEMORY_NO_SUCH_VAR"],
     "no token for --server in $PI_MEMORY_NO_SUCH_VAR"),
    (["--server", "ftp://x", "--token-env", "HOME"], "must start with http:// or https://"),
    (["--server", "http://127.0.0.1:9", "--demo"], "leave --server out"),
    (["--server", "http://127.0.0.1:9", "--token-file", "t", "--token-env", "HOME"], "not both"),
])
def test_ui_server_option_refuses_bad_input_in_words(tmp_path, args, message) -> None:
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data")}
    env.pop("PI_MEMORY_SERVER_TOKEN", None)
    run = subprocess.run([sys.executable, "-m", "pi_memory", "ui", "--no-browser", *args], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    assert message in " ".join(run.stderr.split()), run.stderr
    assert "Traceback" not in run.stderr


def test_settings_naming_another_user_than_the_token_say_so(team_server, tmp_path, monkeypatch) -> None:
    from pi_memory.runtime import open_memory

    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"semantic": {"userId": "carol", "backend": {
        "type": "self-hosted", "baseUrl": team_server.url, "apiKey": team_server.tokens["alice"]}}}}),
        encoding="utf-8")
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("PI_MEMORY_DIR", str(tmp_path / "data"))
    memory = open_memory(team_server.project)
    try:
        with run_inspector(memory) as ui, login(ui) as c:
            page = c.get("/semantic").text
            health = c.get("/health").text
    finally:
        memory.close()
    note = page.split('id="team-note">', 1)[1].split("</p>", 1)[0]
    assert note == str(escape(
        f"The semantic settings name user 'carol', but this token belongs to '{team_server.alice}': this page "
        f"shows {team_server.alice}'s memories, and the agent's own requests for 'carol' will be refused. Set "
        f"\"userId\": \"{team_server.alice}\" in the settings, or put carol's own token in \"apiKey\" in the "
        f"\"backend\" of the semantic settings ({agent / 'settings.json'})."))
    assert "Billing is deployed from the release branch" in page and 'id="team-note"' in health


def test_the_source_turn_of_a_team_memory_says_where_it_is(client, team_server) -> None:
    page = client.get("/sessions/turn", params={"session": "sess-team", "entry": "e7"}).text
    assert "session sess-team ran on another computer" in page


def test_the_recall_preview_reads_the_team_server_for_the_token_user(client, team_server) -> None:
    page = client.get("/recall", params={"prompt": "How is billing deployed?"}).text
    hits = page.split('id="recall-hits"', 1)[1].split("</table>", 1)[0]
    assert "Billing is deployed from the release branch" in hits
    assert "Helm charts" not in page and "vault" not in page


def test_an_admin_token_shows_the_settings_user(team_server, team_memory) -> None:
    record, token = team_server.store.create(team_server.alice.replace("alice-", "ops-"), admin=True)
    try:
        with RestBackend(team_server.url, token) as backend, \
                run_inspector(team_memory, server=ServerChoice(backend)) as ui, login(ui) as c:
            page = c.get("/semantic").text
            health = c.get("/health").text
    finally:
        team_server.store.revoke(record.id)
    assert f'memories of <strong id="team-user">{team_server.alice}</strong> (an admin token of ops-' in page
    assert "release branch" in page and "Helm charts" not in page
    assert "(admin: may act for every user)" in health
