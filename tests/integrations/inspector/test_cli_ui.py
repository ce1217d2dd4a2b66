"""``pi-memory ui`` as a person runs it: prints the URL with its token, serves it, stops on Ctrl-C; a
non-loopback --host is refused before anything listens."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import httpx
import pytest


def _env(tmp_path) -> dict:
    return {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data")}


def test_ui_refuses_a_non_loopback_host(tmp_path) -> None:
    run = subprocess.run([sys.executable, "-m", "pi_memory", "ui", "--host", "0.0.0.0", "--no-browser"],
                         capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, timeout=60)
    assert run.returncode == 2
    assert "refusing to listen on 0.0.0.0" in run.stderr and "127.0.0.1" in run.stderr
    assert not (tmp_path / "data").exists()


def test_ui_prints_a_token_url_that_opens_and_stops_on_ctrl_c(tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "ui", "--no-browser", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
                            cwd=tmp_path)
    try:
        event = json.loads(proc.stdout.readline())
        assert event["event"] == "listening" and event["base"].startswith("http://127.0.0.1:")
        assert "?token=" in event["url"]
        assert httpx.get(event["base"] + "/stores").status_code == 403
        page = httpx.get(event["url"], follow_redirects=True)
        assert page.status_code == 200 and "MEMORY.md" in page.text
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
        assert json.loads(out.splitlines()[-1]) == {"event": "stopped"}
        assert proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ui_demo_serves_a_sample_data_root(tmp_path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "ui", "--demo", "--no-browser", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
                            cwd=tmp_path)
    try:
        event = json.loads(proc.stdout.readline())
        assert "pi-memory-ui-demo-" in event["dataDir"]
        with httpx.Client(base_url=event["base"], timeout=30) as client:
            client.get(event["url"], follow_redirects=True)
            assert "Billing deploys go through scripts/ship.sh" in client.get("/learning").text
            assert "The user edits code in Helix" in client.get("/semantic").text
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        assert proc.returncode == 0
        assert not (tmp_path / "data").exists()  # the user's data root was not touched
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ui_refuses_a_port_in_use_in_words(tmp_path) -> None:
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "pi_memory", "ui", "--port", str(port), "--no-browser"],
                             capture_output=True, text=True, env=_env(tmp_path), cwd=tmp_path, timeout=60)
    assert run.returncode == 1
    assert f"port {port} on 127.0.0.1 cannot be used" in run.stderr and "Pick another --port" in run.stderr


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a non-interactive shell starts a background job


@pytest.mark.parametrize(("sig", "preexec"), [(signal.SIGINT, _ignore_sigint), (signal.SIGTERM, None)])
def test_ui_stops_on_sigint_started_in_the_background_and_on_sigterm(tmp_path, sig, preexec) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "ui", "--no-browser", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path),
                            cwd=tmp_path, preexec_fn=preexec)
    try:
        assert json.loads(proc.stdout.readline())["event"] == "listening"
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=20)
        assert json.loads(out.splitlines()[-1]) == {"event": "stopped"} and proc.returncode == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _demo_folders(temp) -> list[str]:
    """The demo's folders left in ``temp`` (a library may keep a file of its own there, such as ``.ses``)."""
    return [name for name in os.listdir(temp) if name.startswith("pi-memory-ui-demo-")]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ui_demo_removes_its_temporary_folder_when_stopped(tmp_path, sig) -> None:
    temp = tmp_path / "tmp"  # the process's temporary folder: what it leaves there is seen
    temp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "pi_memory", "ui", "--demo", "--no-browser", "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**_env(tmp_path), "TMPDIR": str(temp)}, cwd=tmp_path)
    try:
        event = json.loads(proc.stdout.readline())
        root = os.path.dirname(event["dataDir"])
        assert os.path.dirname(root) == str(temp) and os.path.isdir(root)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
        assert json.loads(out.splitlines()[-1]) == {"event": "stopped"} and proc.returncode == 0
        assert _demo_folders(temp) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ui_demo_removes_its_temporary_folder_when_it_cannot_listen(tmp_path) -> None:
    import socket

    temp = tmp_path / "tmp"
    temp.mkdir()
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        run = subprocess.run([sys.executable, "-m", "pi_memory", "ui", "--demo", "--port",
                              str(held.getsockname()[1]), "--no-browser"], capture_output=True, text=True,
                             env={**_env(tmp_path), "TMPDIR": str(temp)}, cwd=tmp_path, timeout=120)
    assert run.returncode == 1 and "cannot be used" in run.stderr
    assert _demo_folders(temp) == []
