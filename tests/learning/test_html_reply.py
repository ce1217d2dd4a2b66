"""The tester's HTML reply: a review against a server answering `<html>hi</html>` said `its reply has no
"choices" (an empty object)`; it now says the reply is an HTML page, not JSON, quoting it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from learning_helpers import cli, write_settings

from pi_memory.devtools.transcripts import write_pi_session


class _Page(BaseHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"<html>hi</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def page_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def test_a_review_against_an_html_page_says_so(agent, project, monkeypatch, page_server):
    write_settings(agent, {"llm": {"provider": "openai-compatible", "baseUrl": page_server, "model": "m",
                                   "apiKey": "sk-none"}})
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, [("user", "I prefer tabs"), ("assistant", "ok")])
    code, data = cli("review", str(path), "--json")
    assert (code, data["outcome"], data["writes"]) == (1, "error", [])
    assert data["message"] == (f"the model call failed: The server at {page_server} answered, but not with a chat "
                               "completion: its reply is an HTML page, not JSON (it begins \"<html>hi</html>\"). "
                               "Check that baseUrl points at an OpenAI-compatible API (…/v1).")
