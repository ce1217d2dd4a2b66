"""Throughput of the session readers (pi, Claude Code, Codex) against bare ``json.loads`` on the same lines.

Builds a corpus in a temp dir from the real fixtures in ``../shared/fixtures`` (the pi-sessions files and the long
``pi-real/before-compaction.jsonl``), repeating their lines with fresh ids until each reader has its share:

* pi: v3 session files (~8 MB each) made of the fixtures' entries with remapped ``id``/``parentId``, the v1 file's
  entries chained with new ids as pi's migration would;
* Claude Code / Codex: the same real conversation content converted into their line shapes (user/assistant lines
  with ``tool_use``/``tool_result`` blocks; rollout ``response_item``s plus the duplicate ``event_msg``s), mixed with
  the synthetic fixtures of ``tests/fixtures/{claude_code,codex}``.

For each reader it prints MB/s of ``read_*`` over all its files and of the baseline (read the file, split on
``\\n``, ``json.loads`` every line: the floor no reader can beat), best of ``--runs``.

Usage: .venv/bin/python benchmarks/readers_throughput.py [--mb 200] [--runs 3] [--json]
(``--mb`` is the pi share; Claude Code and Codex get a quarter of it each, so the default corpus is 300 MB.)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from pi_memory.index.readers import read_claude_code, read_codex, read_pi

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "fixtures"
LOCAL = ROOT / "tests" / "fixtures"
FILE_BYTES = 8 * 1024 * 1024


def _load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n") if line.strip()]


def _dump(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self) -> str:
        self.n += 1
        return f"{self.n:08x}"

    def uuid(self) -> str:
        self.n += 1
        return f"{self.n:08x}-0000-4000-8000-{self.n:012x}"


def pi_templates() -> list[list[dict]]:
    """Entry lists (no header) of every real pi fixture; the v1 file's entries get no ids yet."""
    files = sorted((SHARED / "pi-sessions").rglob("*.jsonl")) + [
        SHARED / "pi-real" / "before-compaction.jsonl"
    ]
    return [_load(p)[1:] for p in files if p.exists()]


def pi_copies(templates: list[list[dict]], ids: Ids) -> Iterator[str]:
    """Endless lines: each template with fresh ids (tree kept; v1 entries chained in file order)."""
    while True:
        for entries in templates:
            remap: dict[str, str] = {}
            prev: str | None = None
            for entry in entries:
                e = dict(entry)
                new = ids()
                if "id" in e:
                    remap[e["id"]] = new
                    e["parentId"] = remap.get(e.get("parentId"), prev) if e.get("parentId") else None
                else:
                    e["parentId"] = prev
                e["id"] = new
                prev = new
                yield _dump(e)


def _pi_messages(templates: list[list[dict]]) -> list[dict]:
    return [e["message"] for entries in templates for e in entries if e.get("type") == "message"]


def claude_copies(templates: list[list[dict]], ids: Ids) -> Iterator[str]:
    msgs = _pi_messages(templates)
    local = [
        _load(p) for p in sorted((LOCAL / "claude_code").rglob("*.jsonl")) if p.exists()
    ]  # synthetic fixture lines
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/p",
        "sessionId": "s",
        "version": "2.1.332",
    }
    while True:
        prev = None
        for m in msgs:
            uid = ids.uuid()
            role = m.get("role")
            ts = "2026-11-29T12:00:00.000Z"
            if role == "user":
                line = {"type": "user", "message": {"role": "user", "content": m.get("content")}}
            elif role == "assistant":
                blocks = []
                for b in m.get("content") or []:
                    if b.get("type") == "text":
                        blocks.append({"type": "text", "text": b["text"]})
                    elif b.get("type") == "thinking":
                        blocks.append(
                            {"type": "thinking", "thinking": b.get("thinking", ""), "signature": "x"}
                        )
                    elif b.get("type") == "toolCall":
                        blocks.append(
                            {"type": "tool_use", "id": b["id"], "name": b["name"], "input": b["arguments"]}
                        )
                line = {
                    "type": "assistant",
                    "message": {"role": "assistant", "model": "m", "content": blocks},
                }
            elif role == "toolResult":
                content = [
                    {"type": "tool_result", "tool_use_id": m.get("toolCallId"), "content": m.get("content")}
                ]
                line = {
                    "type": "user",
                    "message": {"role": "user", "content": content},
                    "toolUseResult": {"stdout": ""},
                }
            else:
                continue
            line.update(base, uuid=uid, parentUuid=prev, timestamp=ts)
            prev = uid
            yield _dump(line)
        for lines in local:
            remap: dict[str, str] = {}
            for obj in lines:
                o = dict(obj)
                if "uuid" in o:
                    remap[o["uuid"]] = ids.uuid()
                    o["uuid"] = remap[o["uuid"]]
                    o["parentUuid"] = remap.get(o.get("parentUuid"))
                yield _dump(o)


def codex_copies(templates: list[list[dict]], ids: Ids) -> Iterator[str]:
    msgs = _pi_messages(templates)
    local = [_load(p) for p in sorted((LOCAL / "codex").rglob("*.jsonl")) if p.exists()]
    ts = "2026-11-29T12:00:00.000Z"
    while True:
        for m in msgs:
            role = m.get("role")
            content = m.get("content")
            if role == "user":
                text = content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)
                item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
                yield _dump({"timestamp": ts, "type": "response_item", "payload": item})
                yield _dump(
                    {
                        "timestamp": ts,
                        "type": "event_msg",
                        "payload": {"type": "user_message", "message": text},
                    }
                )
            elif role == "assistant":
                for b in content or []:
                    if b.get("type") == "text":
                        item = {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": b["text"]}],
                        }
                    elif b.get("type") == "thinking":
                        item = {
                            "type": "reasoning",
                            "summary": [],
                            "encrypted_content": b.get("thinking", ""),
                        }
                    elif b.get("type") == "toolCall":
                        item = {
                            "type": "function_call",
                            "name": b["name"],
                            "arguments": json.dumps(b["arguments"]),
                            "call_id": b["id"] + ids(),
                        }
                    else:
                        continue
                    yield _dump({"timestamp": ts, "type": "response_item", "payload": item})
            elif role == "toolResult":
                text = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
                call_id = (m.get("toolCallId") or "") + ids()
                end = {
                    "type": "exec_command_end",
                    "call_id": call_id,
                    "exit_code": 0,
                    "aggregated_output": text,
                }
                yield _dump({"timestamp": ts, "type": "event_msg", "payload": end})
                out = {"type": "function_call_output", "call_id": call_id, "output": text}
                yield _dump({"timestamp": ts, "type": "response_item", "payload": out})
        for lines in local:
            for obj in lines[1:]:
                o = json.loads(json.dumps(obj))
                payload = o.get("payload")
                if isinstance(payload, dict) and "call_id" in payload:
                    payload["call_id"] = f"{payload['call_id']}-{ids()}"
                yield _dump(o)


def build(
    directory: Path, name: str, header: Callable[[int], str | None], lines: Iterator[str], total: int
) -> list[Path]:
    paths: list[Path] = []
    written = 0
    index = 0
    while written < total:
        path = directory / f"{name}-{index:04d}.jsonl"
        size = 0
        with open(path, "w", encoding="utf-8") as fh:
            head = header(index)
            if head is not None:
                fh.write(head + "\n")
                size += len(head) + 1
            while size < FILE_BYTES and written + size < total:
                line = next(lines)
                fh.write(line + "\n")
                size += len(line.encode()) + 1
        written += size
        paths.append(path)
        index += 1
    return paths


def baseline(paths: list[Path]) -> None:
    loads = json.loads
    for path in paths:
        with open(path, "rb") as fh:
            data = fh.read()
        for line in data.split(b"\n"):
            if line:
                loads(line)


def timed(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mb", type=float, default=200.0, help="MB of pi sessions (Claude Code, Codex: 1/4 each)"
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    templates = pi_templates()
    if not templates:
        raise SystemExit(f"no fixtures under {SHARED.resolve()}")
    ids = Ids()
    mb = 1024 * 1024
    rows = []
    with tempfile.TemporaryDirectory(prefix="pi-memory-readers-bench-") as tmp:
        tmpdir = Path(tmp)

        def pi_header(i: int) -> str:
            return _dump(
                {
                    "type": "session",
                    "version": 3,
                    "id": ids.uuid(),
                    "timestamp": "2026-11-29T12:00:00.000Z",
                    "cwd": "/p",
                }
            )

        def codex_header(i: int) -> str:
            meta = {
                "id": ids.uuid(),
                "timestamp": "2026-11-29T12:00:00.000Z",
                "cwd": "/p",
                "cli_version": "0.169.0",
            }
            return _dump({"timestamp": "2026-11-29T12:00:00.000Z", "type": "session_meta", "payload": meta})

        corpora = [
            ("pi", read_pi, build(tmpdir, "pi", pi_header, pi_copies(templates, ids), int(args.mb * mb))),
            (
                "claude_code",
                read_claude_code,
                build(tmpdir, "cc", lambda i: None, claude_copies(templates, ids), int(args.mb * mb / 4)),
            ),
            (
                "codex",
                read_codex,
                build(tmpdir, "codex", codex_header, codex_copies(templates, ids), int(args.mb * mb / 4)),
            ),
        ]
        total_bytes = total_reader = total_base = 0.0
        for name, reader, paths in corpora:
            size = sum(p.stat().st_size for p in paths)
            baseline(paths)  # warm the page cache
            t_base = timed(lambda paths=paths: baseline(paths), args.runs)
            records = 0

            def run(paths: list[Path] = paths, reader: Callable = reader) -> None:
                nonlocal records
                records = sum(len(reader(p).records) for p in paths)

            t_read = timed(run, args.runs)
            rows.append(
                {
                    "reader": name,
                    "files": len(paths),
                    "mb": round(size / mb, 1),
                    "records": records,
                    "baseline_mb_s": round(size / mb / t_base, 1),
                    "reader_mb_s": round(size / mb / t_read, 1),
                    "reader_vs_baseline": round(t_base / t_read, 2),
                }
            )
            total_bytes += size
            total_reader += t_read
            total_base += t_base
        rows.append(
            {
                "reader": "all",
                "files": sum(r["files"] for r in rows),
                "mb": round(total_bytes / mb, 1),
                "records": sum(r["records"] for r in rows),
                "baseline_mb_s": round(total_bytes / mb / total_base, 1),
                "reader_mb_s": round(total_bytes / mb / total_reader, 1),
                "reader_vs_baseline": round(total_base / total_reader, 2),
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'reader':<12} {'files':>5} {'MB':>7} {'records':>9} {'json.loads MB/s':>16} {'reader MB/s':>12} {'ratio':>6}"
    )
    for r in rows:
        print(
            f"{r['reader']:<12} {r['files']:>5} {r['mb']:>7} {r['records']:>9} {r['baseline_mb_s']:>16} "
            f"{r['reader_mb_s']:>12} {r['reader_vs_baseline']:>6}"
        )


if __name__ == "__main__":
    main()
