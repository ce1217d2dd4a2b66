"""The OpenAI-compatible HTTP provider against a tiny scripted server on 127.0.0.1 (stdlib http.server).

The server returns fixed, unnormalised vectors derived from each input's length, in reversed ``index`` order,
so the tests see the client's sorting and normalisation. Behaviour is picked by the request's model name.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from pi_memory.embed import EmbeddingError, get_embedder
from pi_memory.embed.openai_compatible import OpenAICompatibleEmbedder

DIM = 4


def fixed_vector(text: str) -> list[float]:
    return [float(len(text)), 1.0, 2.0, 0.0]


class Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def log_message(self, *args) -> None:  # keep pytest output clean
        pass

    def _reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        self.server.requests.append({"path": self.path, "body": request,
                                     "auth": self.headers.get("Authorization")})
        model, inputs = request["model"], request["input"]
        if self.path != "/v1/embeddings":
            return self._reply(404, {"error": {"message": f"no route {self.path}"}})
        if model == "needs-key" and self.headers.get("Authorization") != "Bearer sk-test":
            return self._reply(401, {"error": {"message": "Incorrect API key provided"}})
        if model == "flaky" and sum(r["body"]["model"] == "flaky" for r in self.server.requests) == 1:
            return self._reply(503, {"error": {"message": "model is loading"}})
        if model == "always-500":
            return self._reply(500, {"error": {"message": "boom"}})
        if model == "wrong-count":
            inputs = inputs[:-1]
        if model == "not-json":
            body = b"<html>hello</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        data = [{"object": "embedding", "index": i, "embedding": fixed_vector(t)} for i, t in enumerate(inputs)]
        return self._reply(200, {"object": "list", "model": model, "data": list(reversed(data))})


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[dict] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def expected(texts: list[str]) -> np.ndarray:
    m = np.asarray([fixed_vector(t) for t in texts], dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_embeds_in_order_normalised_and_learns_dim(server: ScriptedServer):
    emb = OpenAICompatibleEmbedder(server.base_url + "/", "nomic-embed-text")
    texts = ["a", "bbb", "cc"]
    out = emb.embed(texts)
    assert out.shape == (3, DIM) and out.dtype == np.float32
    assert np.allclose(out, expected(texts), atol=1e-6)  # sorted by index, unit rows
    assert emb.dim == DIM and emb.model_name == "nomic-embed-text"
    q = emb.embed_query("hello")
    assert q.shape == (DIM,) and np.allclose(q, expected(["hello"])[0], atol=1e-6)
    assert server.requests[0]["path"] == "/v1/embeddings"
    assert server.requests[0]["body"] == {"model": "nomic-embed-text", "input": texts}
    assert server.requests[0]["auth"] is None


def test_batches_requests_and_sends_key_and_dimensions(server: ScriptedServer):
    emb = get_embedder({"provider": "openai-compatible", "baseUrl": server.base_url, "model": "needs-key",
                        "apiKey": "sk-test", "dim": DIM, "batchSize": 2, "sendDimensions": True})
    texts = [f"text {i}" * (i + 1) for i in range(5)]
    out = emb.embed(texts)
    assert np.allclose(out, expected(texts), atol=1e-6)
    assert [len(r["body"]["input"]) for r in server.requests] == [2, 2, 1]
    assert all(r["auth"] == "Bearer sk-test" and r["body"]["dimensions"] == DIM for r in server.requests)


def test_model_name_carries_the_dim_only_when_dimensions_are_sent():
    base = {"provider": "openai-compatible", "baseUrl": "http://127.0.0.1:9/v1", "model": "text-embedding-3-small"}
    assert get_embedder({**base, "dim": 256, "sendDimensions": True}).model_name == "text-embedding-3-small@256d"
    assert get_embedder({**base, "dim": 512, "sendDimensions": True}).model_name == "text-embedding-3-small@512d"
    assert get_embedder({**base, "dim": 256}).model_name == "text-embedding-3-small"  # the server's fixed size
    assert get_embedder({**base, "dim": 256, "sendDimensions": True, "modelName": "mine"}).model_name == "mine"


def test_empty_input_with_known_dim_makes_no_request(server: ScriptedServer):
    emb = OpenAICompatibleEmbedder(server.base_url, "m", dim=DIM)
    assert emb.embed([]).shape == (0, DIM)
    assert server.requests == []


def test_unknown_dim_is_probed_once(server: ScriptedServer):
    emb = OpenAICompatibleEmbedder(server.base_url, "m")
    assert emb.dim == DIM and emb.dim == DIM
    assert len(server.requests) == 1


def test_transient_error_is_retried(server: ScriptedServer):
    emb = OpenAICompatibleEmbedder(server.base_url, "flaky", max_retries=2, backoff=0.01)
    assert emb.embed(["x"]).shape == (1, DIM)
    assert len(server.requests) == 2


def test_retries_are_bounded(server: ScriptedServer):
    emb = OpenAICompatibleEmbedder(server.base_url, "always-500", max_retries=2, backoff=0.01)
    with pytest.raises(EmbeddingError) as err:
        emb.embed(["x"])
    assert len(server.requests) == 3
    assert "HTTP 500" in str(err.value) and "boom" in str(err.value) and "Gave up after 3 attempts" in str(err.value)
    assert err.value.retryable


def test_auth_and_route_errors_fail_at_once_with_advice(server: ScriptedServer):
    with pytest.raises(EmbeddingError) as err:
        OpenAICompatibleEmbedder(server.base_url, "needs-key", api_key="wrong", max_retries=3).embed(["x"])
    assert "HTTP 401" in str(err.value) and "Incorrect API key" in str(err.value) and "apiKey" in str(err.value)
    assert len(server.requests) == 1 and not err.value.retryable
    with pytest.raises(EmbeddingError) as err:
        OpenAICompatibleEmbedder(server.base_url.removesuffix("/v1"), "m").embed(["x"])
    assert "HTTP 404" in str(err.value) and "/v1" in str(err.value)


def test_malformed_replies_are_errors(server: ScriptedServer):
    with pytest.raises(EmbeddingError, match="returned 1 vectors .* for 2 texts"):
        OpenAICompatibleEmbedder(server.base_url, "wrong-count").embed(["a", "b"])
    with pytest.raises(EmbeddingError, match="not an embeddings response"):
        OpenAICompatibleEmbedder(server.base_url, "not-json").embed(["a"])
    with pytest.raises(EmbeddingError, match="returned 4-dimensional vectors, but 768 were expected"):
        OpenAICompatibleEmbedder(server.base_url, "m", dim=768).embed(["a"])


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_dead_server_is_a_fast_clear_error():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    emb = get_embedder({"provider": "openai-compatible", "baseUrl": url, "model": "nomic-embed-text",
                        "timeout": 0.5, "maxRetries": 1})
    emb.backoff = 0.01  # type: ignore[attr-defined]
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as err:
        emb.embed(["hello"])
    assert time.monotonic() - started < 3
    text = str(err.value)
    assert f"cannot reach the embedding server at {url}/embeddings" in text
    assert "What to do:" in text and "ollama serve" in text and '"local"' in text
    assert "Gave up after 2 attempts" in text
    assert err.value.retryable and err.value.provider == "openai-compatible"


def test_silent_server_times_out_quickly():
    with socket.socket() as listener:  # accepts connections (kernel backlog) but never answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        emb = OpenAICompatibleEmbedder(url, "m", timeout=0.3, max_retries=0)
        started = time.monotonic()
        with pytest.raises(EmbeddingError, match=r"did not answer within 0.3 s") as err:
            emb.embed(["hello"])
        assert time.monotonic() - started < 3
        assert err.value.retryable


def test_settings_errors_name_the_key(monkeypatch):
    with pytest.raises(EmbeddingError, match="no baseUrl"):
        get_embedder({"provider": "openai-compatible", "model": "m"})
    with pytest.raises(EmbeddingError, match="no model"):
        get_embedder({"provider": "ollama", "baseUrl": "http://127.0.0.1:1/v1"})
    monkeypatch.delenv("PI_MEMORY_TEST_EMBED_KEY", raising=False)
    with pytest.raises(EmbeddingError, match="PI_MEMORY_TEST_EMBED_KEY"):
        get_embedder({"provider": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m",
                      "apiKeyEnv": "PI_MEMORY_TEST_EMBED_KEY"})
    monkeypatch.setenv("PI_MEMORY_TEST_EMBED_KEY", "sk-env")
    emb = get_embedder({"provider": "openai", "baseUrl": "http://127.0.0.1:1/v1", "model": "m",
                        "apiKeyEnv": "PI_MEMORY_TEST_EMBED_KEY"})
    assert emb._headers["Authorization"] == "Bearer sk-env"  # type: ignore[attr-defined]
