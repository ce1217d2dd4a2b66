"""Durability under concurrency: 8 processes × 200 mixed operations on one store (issue #2, "Done when").

Every acknowledged add must be present exactly once at the end unless the same process later removed or
replaced it with an acknowledged call; readers never see a torn file.
"""

from __future__ import annotations

import multiprocessing as mp
import random
from pathlib import Path

from filelock import FileLock

from pi_memory.curated import MemoryStore
from pi_memory.curated.entries import parse

WORKERS = 8
OPS = 200


def worker(folder: str, wid: int, queue) -> None:
    rng = random.Random(wid)
    store = MemoryStore(folder, memory_char_limit=10_000_000, lock_timeout=60)
    mine: list[str] = []  # entries this worker added and has not removed (acknowledged)
    removed: list[str] = []
    torn = 0
    for i in range(OPS):
        roll = rng.random()
        if roll < 0.55 or not mine:
            text = f"w{wid}-e{i} fact {rng.randint(0, 10**6)}"
            r = store.add("memory", text)
            assert r.success, r.error
            mine.append(text)
        elif roll < 0.7:
            victim = mine.pop(rng.randrange(len(mine)))
            r = store.remove("memory", victim)
            assert r.success, r.error
            removed.append(victim)
        elif roll < 0.85:
            victim = mine.pop(rng.randrange(len(mine)))
            new = victim + " (updated)"
            r = store.replace("memory", victim, new)
            assert r.success, r.error
            removed.append(victim)
            mine.append(new)
        else:
            raw = (Path(folder) / "MEMORY.md").read_bytes().decode("utf-8")
            if raw and not raw.endswith("\n"):
                torn += 1
            parse(raw)
        store.begin_turn()
    queue.put((wid, mine, removed, torn))


def test_eight_processes_two_hundred_ops_each(tmp_path):
    ctx = mp.get_context("fork")  # spawn would re-import this test module by name, which pytest's importlib mode does not allow
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(str(tmp_path), w, queue)) for w in range(WORKERS)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    final = parse((tmp_path / "MEMORY.md").read_text(encoding="utf-8"))
    expected = [e for _, mine, _, _ in results for e in mine]
    assert sorted(final) == sorted(expected)  # each acknowledged live write exactly once, nothing else
    assert len(final) == len(set(final))
    assert sum(t for *_, t in results) == 0


def test_lock_timeout_gives_clear_error_and_changes_nothing(tmp_path):
    store = MemoryStore(tmp_path, lock_timeout=0.2)
    store.add("memory", "before")
    lock = FileLock(str(tmp_path / "MEMORY.md.lock"))
    with lock:
        r = store.add("memory", "blocked write")
    assert not r.success and r.code == "locked"
    assert "MEMORY.md.lock" in r.error and "retry" in r.error
    assert (tmp_path / "MEMORY.md").read_text() == "before\n"


def symlink_worker(folder: str, wid: int, queue) -> None:
    store = MemoryStore(folder, memory_char_limit=10_000_000, lock_timeout=60)
    for i in range(100):
        assert store.add("memory", f"link{wid}-{i}").success
    queue.put(wid)


def test_stores_sharing_one_file_through_symlinks_share_its_lock(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "MEMORY.md").write_text("")
    folders = []
    for name in ("a", "b"):
        d = tmp_path / name
        d.mkdir()
        (d / "MEMORY.md").symlink_to(shared / "MEMORY.md")
        folders.append(str(d))
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=symlink_worker, args=(folders[w % 2], w, queue)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    assert len(parse((shared / "MEMORY.md").read_text())) == 400
