"""Resolving a team server's host name is inside a request's time: a lookup that hangs (a DNS server that does
not answer) held a request past its deadline, since the cut-off shuts sockets and there was none yet. Now the
request ends at its time with the same "did not answer within N s" as a silent server. No lookup leaves this
machine: ``socket.getaddrinfo`` is replaced, hanging for ``team.invalid`` and failing for every other name that
is not this machine's."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from pi_memory.curated import MemoryStore
from pi_memory.curated.team_client import TeamProjectClient, TeamProjectError, bounded, forget_down
from pi_memory.curated.team_problems import for_person_problem

MARGIN = 1.0  # thread start-up and a loaded machine's scheduling
HUNG, UNKNOWN = "team.invalid", "nowhere.invalid"


@pytest.fixture
def resolver(monkeypatch):
    """``getaddrinfo`` that hangs for :data:`HUNG` (until the test ends), fails at once for :data:`UNKNOWN` and
    for any name that is not loopback, and resolves loopback as before; the names it was asked, in order."""
    real, release, asked = socket.getaddrinfo, threading.Event(), []

    def lookup(host, *args, **kwargs):
        asked.append(host)
        if host in ("127.0.0.1", "::1", "localhost"):
            return real(host, *args, **kwargs)
        if host == HUNG:
            release.wait(60)
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)  # a proxy would be looked up instead of the host
    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    forget_down()
    yield asked
    release.set()
    forget_down()


def read_error(url: str, seconds: float) -> str:
    return (f"the team project store 'acme' on {url} did not answer within {seconds:g} s, so its entries could not "
            "be read. The server may be down or overloaded: retry later (teamProjectStore.timeoutSeconds sets how "
            "long pi-memory waits).")


def client(url: str, timeout: float, token: str | None = "team-token") -> TeamProjectClient:
    return TeamProjectClient(url, "acme", token, timeout=timeout, insecure_http=True)


def timed(call) -> tuple[object, float]:
    started = time.monotonic()
    try:
        got = call()
    except TeamProjectError as exc:
        got = exc
    return got, time.monotonic() - started


@pytest.mark.parametrize(("url", "timeout", "token"), [
    (f"http://{HUNG}:8765", 1.0, "team-token"),
    (f"https://{HUNG}", 1.0, "team-token"),
    (f"https://{HUNG}:9443", 0.6, None),
    (f"http://{HUNG}", 1.5, "team-token"),
])
def test_a_read_whose_host_name_never_resolves_ends_at_its_timeout(resolver, url, timeout, token):
    got, took = timed(client(url, timeout, token).entries)
    assert isinstance(got, TeamProjectError)
    assert str(got) == read_error(url, timeout)
    assert (got.kind, got.waited, got.connected) == ("timeout", timeout, False)
    assert timeout - 0.05 <= took < timeout + MARGIN
    assert resolver == [HUNG]


def test_a_write_whose_host_name_never_resolves_ends_at_its_timeout(tmp_path: Path, resolver):
    url = f"https://{HUNG}"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    store = MemoryStore(tmp_path / "data", project_root=repo, team_project=client(url, 1.0))
    result, took = timed(lambda: store.add("project", "Releases are tagged on Fridays"))
    assert 0.95 <= took < 1.0 + MARGIN
    assert (result.success, result.code) == (False, "io_error")
    assert result.error == (f"the team project store 'acme' on {url} did not answer within 1 s, so it is unknown "
                            "whether the change was applied. Read the project store again (memory_read, or "
                            "`pi-memory read project`) before you retry; if the server keeps not answering, tell the "
                            "user.")
    assert not (tmp_path / "data" / "projects").exists()


@pytest.mark.parametrize("seconds", [0.3, 0.7])
def test_a_start_whose_host_name_never_resolves_waits_its_start_bound(tmp_path: Path, resolver, seconds):
    url = f"https://{HUNG}"
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    store = MemoryStore(tmp_path / "data", project_root=repo, team_project=client(url, 10.0))
    started = time.monotonic()
    with bounded(store, seconds):
        store.load_from_disk()
    assert seconds - 0.05 <= time.monotonic() - started < seconds + MARGIN
    assert store.drift("project").detail == (
        f"the team project store 'acme' on {url} did not answer within {seconds:g} s, so its entries could not be "
        "read. The server may be down or overloaded. A start waits only this long for it; memory_read with target "
        "'project' asks again with the full teamProjectStore.timeoutSeconds.")


def test_a_host_name_that_does_not_resolve_is_said_so_at_once(resolver):
    url = f"https://{UNKNOWN}"
    got, took = timed(client(url, 10.0).entries)
    assert took < MARGIN
    assert str(got) == (f"the team project store 'acme' on {url} cannot be reached (ConnectError: [Errno -2] Name or "
                        "service not known); nothing was changed. Check that the server runs and "
                        "teamProjectStore.url.")
    assert got.kind == "unresolved"
    assert for_person_problem(got, url) == (
        "The team server's host name 'nowhere.invalid' does not resolve (no DNS answer for it). Check the host name "
        "in teamProjectStore.url and this machine's network, then run `pi-memory status` again.")


def test_a_person_is_told_the_connection_was_not_made_in_time(resolver):
    url = f"https://{HUNG}:9443"
    got, _ = timed(client(url, 0.5).entries)
    assert for_person_problem(got, url) == (
        f"The team server at {url} could not be connected to within 0.5 s: its host name did not resolve in time, "
        "or nothing accepted the connection. Check the host name in teamProjectStore.url and this machine's "
        "network, then run `pi-memory status` again.")
