"""Cost of the bundled embedder: load time, sentences/s at batch 64, single-query p50/p95 latency, peak RSS.

Corpus: generated memory-like sentences of 13–26 words (seeded; the evaluation in
``../shared/reference/embedder-eval.md`` used the same length range). Throughput is the best of ``--repeats``
passes over the corpus through ``embed()`` (batches of ≤ 64); latency is ``embed_query()`` on one text at a time.

Baseline in the same run: a hashing bag-of-words embedder in numpy (signed feature hashing of lower-cased words
into 384 buckets, L2-normalised). It costs almost nothing and understands nothing; the paraphrase check at the
end shows what the model buys (cosine of a paraphrase pair minus that of an unrelated pair).

Other processes on the machine skew the numbers; the load average at start is printed with them.

Usage: .venv/bin/python benchmarks/embed_throughput.py [--n 2000] [--queries 200] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import time
import zlib
from collections.abc import Callable, Sequence

import numpy as np

VOCAB_TEXT = (
    "the user prefers pnpm over npm for javascript projects and runs tests with pytest before every commit while "
    "staging uses sqlite and production runs postgresql behind a connection pool the deploy script tags a release "
    "and ci builds the container image then pushes it to the registry on friday afternoons we avoid merging large "
    "changes because the on call engineer is alone the config file lives in the home directory and secrets come "
    "from the vault never from the repository formatting is done by ruff with a line length of one hundred ten"
)
WORDS = VOCAB_TEXT.split(" ")
PARAPHRASE = ("The build uses make", "We compile the project with make", "My cat likes fish")


def corpus(n: int, seed: int = 7) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(13, 27)))
        out.append(" ".join(words).capitalize() + ".")
    return out


class HashingBagOfWords:
    """Baseline: signed feature hashing of words (crc32) into ``dim`` buckets; float32, L2-normalised rows."""

    model_name = "hashing-bow-384"
    dim = 384
    _word = re.compile(r"\w+")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in self._word.findall(text.lower()):
                h = zlib.crc32(word.encode())
                out[i, h % self.dim] += 1.0 if (h >> 31) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(embed: Callable[[Sequence[str]], np.ndarray], embed_query: Callable[[str], np.ndarray],
            texts: list[str], queries: list[str], repeats: int) -> dict:
    embed(texts[:64])  # warm-up: first-run allocations, lazy load
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        embed(texts)
        best = min(best, time.perf_counter() - t0)
    lat = []
    for q in queries:
        t0 = time.perf_counter()
        embed_query(q)
        lat.append((time.perf_counter() - t0) * 1000)
    a, b, c = embed(list(PARAPHRASE))
    return {
        "sentences_per_s": round(len(texts) / best, 1),
        "query_p50_ms": round(pct(lat, 0.5), 3),
        "query_p95_ms": round(pct(lat, 0.95), 3),
        "query_mean_ms": round(statistics.fmean(lat), 3),
        "paraphrase_cos": round(float(a @ b), 3),
        "unrelated_cos": round(float(a @ c), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="sentences in the throughput corpus")
    parser.add_argument("--queries", type=int, default=200, help="single-query latency samples")
    parser.add_argument("--repeats", type=int, default=2, help="throughput passes; the best one counts")
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)

    load_avg = os.getloadavg()[0]
    t0 = time.perf_counter()
    from pi_memory.embed.local_onnx import OnnxMiniLM  # imports numpy-side code only

    model = OnnxMiniLM(threads=args.threads)
    model.load()  # imports onnxruntime + tokenizers, reads the 23 MB file, builds the session
    load_s = time.perf_counter() - t0

    texts = corpus(args.n)
    queries = corpus(args.queries, seed=11)
    tokens = [len(e.ids) for e in model._tokenizer.encode_batch(texts)]
    results = {
        "machine": {"cpus": os.cpu_count(), "load_avg_1m_at_start": round(load_avg, 2)},
        "corpus": {"sentences": len(texts), "mean_words": round(statistics.fmean(len(t.split()) for t in texts), 1),
                   "mean_tokens": round(statistics.fmean(tokens), 1), "batch_size": model.batch_size},
        "local": {"model": model.model_name, "dim": model.dim, "threads": model.threads,
                  "model_bytes": model.model_path.stat().st_size, "load_s": round(load_s, 3),
                  **measure(model.embed, model.embed_query, texts, queries, args.repeats)},
        "baseline_hashing_bow": {"model": HashingBagOfWords.model_name, "dim": HashingBagOfWords.dim,
                                 **measure(HashingBagOfWords().embed, HashingBagOfWords().embed_query, texts,
                                           queries, args.repeats)},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    loc, base = results["local"], results["baseline_hashing_bow"]
    print(f"machine: {results['machine']['cpus']} CPUs, load average {load_avg:.2f} at start")
    print(f"corpus: {len(texts)} sentences, {results['corpus']['mean_words']} words / "
          f"{results['corpus']['mean_tokens']} tokens on average, batch {model.batch_size}")
    print(f"{'':32}{'sent/s':>10}{'1q p50 ms':>11}{'1q p95 ms':>11}{'para cos':>10}{'unrel cos':>10}")
    for label, r in ((f"{loc['model']} ({loc['threads']} thr)", loc), (base["model"], base)):
        print(f"{label:32}{r['sentences_per_s']:>10}{r['query_p50_ms']:>11}{r['query_p95_ms']:>11}"
              f"{r['paraphrase_cos']:>10}{r['unrelated_cos']:>10}")
    print(f"local model: load {loc['load_s']} s (imports + session), file {loc['model_bytes']:,} bytes; "
          f"peak RSS {results['peak_rss_mb']} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
