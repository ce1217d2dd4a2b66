"""The default embedder: all-MiniLM-L6-v2 (int8 ONNX) bundled in this package, run with onnxruntime.

No PyTorch and no network: the tokenizer comes from the bundled ``tokenizer.json`` (``tokenizers`` never calls
the Hugging Face hub when given a file) and the model from ``models/all-MiniLM-L6-v2/model_int8.onnx``. The
folder's README.md says where the weights came from and how the file was made (``scripts/export_minilm_onnx.py``).

What it computes is what sentence-transformers computes for this model (``modules.json`` of the upstream model:
BertModel → mean pooling → L2 normalisation), with the input cut at 256 tokens.

Cost on the 2-core evaluation machine (``../shared/reference/embedder-eval.md``; rerun with
``benchmarks/embed_throughput.py``): load about 0.25 s, about 600 sentences/s at batch 64, 1–2 ms per short query,
about 200 MB peak RSS.

Threads: onnxruntime runs each call on **one** thread, and ``threads`` batches run at once (a batch of up to 64
texts is split into ``threads`` parts of at least :data:`MIN_SPLIT`). A query (one short text) therefore costs
one core and no thread hand-offs: with two intra-op threads the same query took 2.5 ms of CPU instead of 1.9,
and on the shared 2-core machine, busy with other jobs, p50 5.5 ms of wall time instead of 2.0, because the
recall's keyword searches and vector scans run beside it (``benchmarks/semantic_latency.py``). Batch throughput
is the same or better: parallel batches do not wait for each other at every operator.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from .base import EmbeddingError, check_texts, l2_normalise

__all__ = ["BATCH_SIZE", "DIM", "MAX_TOKENS", "MODEL_DIR", "MODEL_NAME", "MODEL_SHA256", "OnnxMiniLM", "file_sha256"]

MODEL_DIR = Path(__file__).resolve().parent / "models" / "all-MiniLM-L6-v2"
MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
#: sha256 of the shipped ``model_int8.onnx`` (22,991,955 bytes); also in the model folder's README.md.
MODEL_SHA256 = "1818c9b151c765b7ead33279fb4b7a39c3c2122b9ad970dd002b69e9eb17e4dd"
#: Stored beside every vector. Change it whenever the model file changes in a way that moves vectors.
MODEL_NAME = "all-MiniLM-L6-v2-int8"
#: Hidden size of MiniLM-L6-H384 (config.json ``hidden_size``; 1_Pooling ``word_embedding_dimension``).
DIM = 384
#: sentence-transformers ``max_seq_length`` of this model (sentence_bert_config.json), special tokens included.
#: The bundled tokenizer.json says 128; upstream sentence-transformers uses 256, and so do we.
MAX_TOKENS = 256
#: Texts per onnxruntime call: the batch size the evaluation measured (590 sentences/s on 2 cores).
BATCH_SIZE = 64
#: ``[PAD]`` id in the vocabulary (config.json ``pad_token_id``).
PAD_ID = 0
UNK_ID, CLS_ID, SEP_ID = 100, 101, 102  # the bundled vocabulary's special pieces (tokenizer.json)
#: Texts tokenised at once before sorting into batches; bounds the memory held by token lists.
TOKENIZE_CHUNK = 2048
#: A batch is split between threads only into parts of at least this many texts.
MIN_SPLIT = 8
#: Query vectors remembered (least recently used dropped first), for queries up to QUERY_CACHE_CHARS characters.
QUERY_CACHE = 256
QUERY_CACHE_CHARS = 2000
#: A git-lfs pointer file starts like this; a checkout without LFS leaves one in place of the model.
_LFS_POINTER = b"version https://git-lfs"

_REINSTALL = (
    "reinstall pi-memory (`pip install --force-reinstall --no-deps pi-memory`). In a git checkout the file is "
    "stored in the repository itself; restore it with `git checkout -- src/pi_memory/embed/models`, or "
    "regenerate it with scripts/export_minilm_onnx.py. Or configure another embedding provider."
)


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_threads() -> int:
    """Batches embedded at once (each on one onnxruntime thread): min(4, CPUs). More than 4 barely help a
    6-layer model at these batch sizes and take cores from the agent that runs beside us."""
    return max(1, min(4, os.cpu_count() or 1))


class OnnxMiniLM:
    """all-MiniLM-L6-v2 int8 on onnxruntime; see the module docstring.

    Loads on first use (or ``load()``), once, under a lock; after that ``embed`` may be called from many threads
    at once (onnxruntime sessions and tokenizers encoders are safe for concurrent use).

    ``model_dir`` / ``model_file``: another export with the same inputs and outputs (e.g. ``model.onnx``, fp32,
    from ``scripts/export_minilm_onnx.py --keep-fp32``); pass a ``model_name`` that tells it apart.
    ``threads``: batches run at once, each on one onnxruntime thread (default ``min(4, cpu_count)``; module
    docstring).
    """

    dim: int = DIM

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        model_file: str = MODEL_FILE,
        model_name: str | None = None,
        threads: int | None = None,
        batch_size: int = BATCH_SIZE,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        if batch_size < 1 or max_tokens < 2:
            raise ValueError("batch_size must be ≥ 1 and max_tokens ≥ 2 (room for [CLS] and [SEP])")
        self.model_dir = Path(model_dir) if model_dir is not None else MODEL_DIR
        self.model_path = self.model_dir / model_file
        self.tokenizer_path = self.model_dir / TOKENIZER_FILE
        if model_name is None:
            custom = model_dir is not None or model_file != MODEL_FILE
            model_name = f"{self.model_dir.name}/{Path(model_file).stem}" if custom else MODEL_NAME
        self.model_name: str = model_name
        self.threads = threads if threads is not None else default_threads()
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()  # text -> vector (embed_query's cache)
        self._queries_lock = threading.Lock()

    def __repr__(self) -> str:
        state = "loaded" if self.loaded else "not loaded"
        return f"OnnxMiniLM({self.model_name!r}, dim={self.dim}, {state}, path={str(self.model_path)!r})"

    # -- loading ------------------------------------------------------------------------------------------

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        """Load the tokenizer and the ONNX session now (otherwise the first ``embed`` does). Idempotent."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                tokenizer, session = self._open()
                self._tokenizer = tokenizer
                self._session = session  # set last: other threads test it without the lock

    def _fix(self) -> str:
        if self.model_dir.resolve() == MODEL_DIR:
            return _REINSTALL
        return (f'check "modelPath"/"modelFile" in the embedding settings: {self.model_dir} must hold the .onnx '
                "file and tokenizer.json (as made by scripts/export_minilm_onnx.py).")

    def _check_files(self) -> None:
        for path, what in ((self.model_path, "model file"), (self.tokenizer_path, "tokenizer file")):
            if not path.is_file():
                raise EmbeddingError(f"the embedding {what} is missing: {path}.", self._fix(), provider="local")
        with self.model_path.open("rb") as handle:
            head = handle.read(len(_LFS_POINTER))
        if head == _LFS_POINTER:
            raise EmbeddingError(
                f"{self.model_path} is a git-lfs pointer, not the model.",
                "run `git lfs pull`, or " + self._fix(), provider="local",
            )

    def _open(self) -> tuple[Any, Any]:
        self._check_files()
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:  # both are core dependencies; a broken environment
            raise EmbeddingError(
                f"the default embedder needs onnxruntime and tokenizers, and importing them failed ({exc}).",
                "reinstall pi-memory's dependencies: `pip install --force-reinstall pi-memory`.",
                provider="local",
            ) from exc
        try:
            tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        except Exception as exc:
            raise EmbeddingError(f"cannot read the tokenizer {self.tokenizer_path}: {exc}.", self._fix(),
                                 provider="local") from exc
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()  # the file asks for fixed padding to 128; we pad each batch to its longest text

        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # one thread per run; ``threads`` runs at once (module docstring)
        # No spin-waiting after a run: spinning threads kept burning CPU after each query embedding and slowed
        # the vector search that follows (hybrid recall p95 at 100k: 30.6 -> 20.8 ms in an A/B on 2 cores).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: no optimiser chatter on the user's terminal
        try:
            session = ort.InferenceSession(str(self.model_path), options, providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise EmbeddingError(
                f"onnxruntime could not load {self.model_path} ({type(exc).__name__}: {exc}); the file may be "
                "damaged or truncated.", self._fix(), provider="local",
            ) from exc
        names = {i.name for i in session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= names:
            raise EmbeddingError(
                f"{self.model_path} is not a BERT-style encoder export (its inputs are {sorted(names)}).",
                "point model_dir/model_file at a file made by scripts/export_minilm_onnx.py.", provider="local",
            )
        self._needs_token_types = "token_type_ids" in names
        return tokenizer, session

    # -- embedding ----------------------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 ``(len(texts), 384)``, rows L2-normalised. Texts over 256 tokens are cut (the tail is lost).

        Texts are sorted by token length and run in batches of ≤ 64, so padding stays small. Because the int8
        model scales activations per batch, a text's vector varies slightly with its batch-mates (cosine ≥ 0.98
        against the text alone); compare with a tolerance.
        """
        items = check_texts(texts)
        out = np.zeros((len(items), self.dim), dtype=np.float32)
        if not items:
            return out
        self.load()
        for start in range(0, len(items), TOKENIZE_CHUNK):
            chunk = items[start:start + TOKENIZE_CHUNK]
            encodings = self._tokenizer.encode_batch(chunk)
            token_ids = [e.ids for e in encodings]
            order = sorted(range(len(chunk)), key=lambda i: len(token_ids[i]), reverse=True)
            size = self.batch_size
            if self.threads > 1 and MIN_SPLIT * 2 <= len(order) <= self.batch_size * (self.threads - 1):
                size = max(MIN_SPLIT, -(-len(order) // self.threads))  # too few batches to go round: split them
            jobs = [order[b:b + size] for b in range(0, len(order), size)]
            batches = [[token_ids[r] for r in rows] for rows in jobs]
            runs = self._parallel().map(self._run, batches) if len(jobs) > 1 else map(self._run, batches)
            for rows, vecs in zip(jobs, runs, strict=True):
                out[[start + r for r in rows]] = vecs
        return out

    def _parallel(self) -> ThreadPoolExecutor:
        """The worker threads that run batches at once (``threads`` of them, started on first need)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="pi-memory-embed")
            return self._pool

    def embed_query(self, text: str) -> np.ndarray:
        """float32 ``(384,)``, L2-normalised; the query alone in its batch. The last :data:`QUERY_CACHE` query
        vectors are kept, so a prompt searched by several paths (recall, then a search tool with the same words)
        is embedded once; each call returns its own copy."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query() takes a str, not {type(text).__name__}")
        with self._queries_lock:
            known = self._queries.get(text)
            if known is not None:
                self._queries.move_to_end(text)
                return known.copy()
        vec = self.embed([text])[0]
        if len(text) <= QUERY_CACHE_CHARS:
            with self._queries_lock:
                self._queries[text] = vec.copy()
                while len(self._queries) > QUERY_CACHE:
                    self._queries.popitem(last=False)
        return vec

    def unknown_share(self, text: str) -> float:
        """Share (0..1) of ``text``'s word pieces the model does not know (``[UNK]``: emoji, Thai, Korean and
        most of the world's scripts for this English model); ``1.0`` for a text without pieces. Every text made
        only of unknown pieces embeds to the same vector, so two of them have a cosine of 1.0 whatever they say:
        :func:`pi_memory.embed.carries_meaning` reads this before a cosine is trusted."""
        self.load()
        ids = self._tokenizer.encode(text or "").ids
        pieces = [i for i in ids if i not in (CLS_ID, SEP_ID, PAD_ID)]
        return sum(i == UNK_ID for i in pieces) / len(pieces) if pieces else 1.0

    def clear_query_cache(self) -> None:
        """Forget the remembered query vectors (benchmarks time every query as new)."""
        with self._queries_lock:
            self._queries.clear()

    def embed_tokens(self, texts: Sequence[str]) -> list[tuple[list[str], np.ndarray]]:
        """Token-level outputs for late interaction (ColBERT-style MaxSim, Khattab & Zaharia 2020): per text,
        its word pieces (``[CLS]`` and ``[SEP]`` included) and float32 ``(n_tokens, 384)`` last hidden states,
        not normalised. Mean-pooling a text's states over its tokens and L2-normalising gives its :meth:`embed`
        vector when the text is alone in its batch. Each text runs alone (no padding), so texts over 256 tokens
        are cut as in :meth:`embed`."""
        items = check_texts(texts)
        self.load()
        out = []
        for encoding in self._tokenizer.encode_batch(items):
            hidden, _ = self._hidden([encoding.ids])
            out.append((list(encoding.tokens), hidden[0]))
        return out

    def _hidden(self, batch: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """One onnxruntime call padded to the longest row: ``(hidden (batch, width, 384), mask (batch, width))``."""
        width = max(len(ids) for ids in batch)
        input_ids = np.full((len(batch), width), PAD_ID, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for i, ids in enumerate(batch):
            input_ids[i, :len(ids)] = ids
            mask[i, :len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if self._needs_token_types:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            hidden = self._session.run(None, feeds)[0]  # (batch, width, 384) float32
        except Exception as exc:
            raise EmbeddingError(f"onnxruntime failed on a batch of {len(batch)} texts: {exc}.",
                                 "report this as a bug, with the text if you can share it.",
                                 provider="local") from exc
        return hidden, mask

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pool the last hidden state of one batch over its real tokens, L2-normalised."""
        hidden, mask = self._hidden(batch)
        weights = mask.astype(np.float32)
        summed = np.einsum("bld,bl->bd", hidden, weights)
        pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        return l2_normalise(pooled)

    # -- status -------------------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """What a status line needs: name, dim, file, size, threads, loaded. Does not load the model."""
        size = self.model_path.stat().st_size if self.model_path.is_file() else None
        return {"provider": "local", "model": self.model_name, "dim": self.dim, "path": str(self.model_path),
                "bytes": size, "threads": self.threads, "loaded": self.loaded}
