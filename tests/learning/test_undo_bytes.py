"""A learning job's write normalises a hand-made store (CRLF, a byte-order mark, blank lines, spaces, copies of
exact duplicates); its undo gives back the file's exact bytes when the file is still as the job left it, and says
so when it cannot (the file changed since, or an entry comes back redacted)."""

from __future__ import annotations

import json

import pytest
from learning_helpers import write_settings

from pi_memory.learning import PlannedOp, undo_job
from pi_memory.runtime import open_memory

CRLF = b"A-one\r\n\xc2\xa7\r\nB-two\r\nits second line\r\n\xc2\xa7\r\nC-three\r\n"
BOM = "\ufeffA-one\n§\nB-two\n§\nC-three\n".encode()
BLANK = b"A-one\n\n\n\n\xc2\xa7\nB-two\n\xc2\xa7\n\n\n\nC-three\n"  # three blank lines before / after a delimiter
MIX = ("\ufeff  A-dup\r\n\r\n\r\n\r\n§\r\nB-two\r\nits second line\r\n§\n§\n\tA-dup \r\n§\r\nC-three\r\r\n\n"
       ).encode()  # BOM, spaces, CRLF and LF and CR, blank lines, an empty entry, a copy of an exact duplicate
FILES = {"crlf": CRLF, "bom": BOM, "blank": BLANK, "mix": MIX}
ENTRIES = {  # the entries each file holds, as the store reads them (first copy of a duplicate only)
    "crlf": ["A-one", "B-two\nits second line", "C-three"],
    "bom": ["A-one", "B-two", "C-three"],
    "blank": ["A-one", "B-two", "C-three"],
    "mix": ["A-dup", "B-two\nits second line", "C-three"],
}
OPS = {
    "add": PlannedOp(target="memory", action="add", content="Z-new"),
    "remove": PlannedOp(target="memory", action="remove", old_text="C-three"),
    "replace": PlannedOp(target="memory", action="replace", old_text="B-two", content="B-2"),
}


def _canonical(entries: list[str]) -> bytes:
    return ("\n§\n".join(entries) + "\n").encode("utf-8")


def _memory(project, agent, raw: bytes, target: str = "memory"):
    write_settings(agent, {})
    memory = open_memory(project)
    path = memory.store.path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    return memory, path


def _after_job(kind: str, op: str) -> list[str]:
    entries = ENTRIES[kind]
    if op == "add":
        return [*entries, "Z-new"]
    if op == "remove":
        return [e for e in entries if e != "C-three"]
    return ["B-2" if e.startswith("B-two") else e for e in entries]


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("kind", list(FILES))
def test_the_undo_gives_back_the_exact_bytes(agent, project, kind, op):
    raw = FILES[kind]
    memory, path = _memory(project, agent, raw)
    learner = memory.learner()
    report = learner.run("review", "test", lambda ctx: [OPS[op]], needs_model=False)
    assert report.outcome == "ok"
    assert path.read_bytes() == _canonical(_after_job(kind, op))  # the job writes the store's format
    undo = undo_job(learner, report.job_id)
    merged = ", 1 exact duplicate entry given back" if kind == "mix" else ""
    assert (undo.outcome, undo.message) == ("ok", f"undid job {report.job_id} (review): 1 write(s) reversed{merged}")
    assert path.read_bytes() == raw
    redo = undo_job(learner, undo.job_id)  # undoing the undo: the job's write again, in the store's format
    assert redo.outcome == "ok" and path.read_bytes() == _canonical(_after_job(kind, op))
    again = undo_job(learner, report.job_id)  # and the job, undone again, gives the hand-made bytes back again
    assert again.outcome == "ok" and path.read_bytes() == raw


def test_a_user_md_with_crlf_comes_back_too(agent, project):
    raw = b"Name is Ada\r\n\xc2\xa7\r\nPrefers tabs\r\n"
    memory, path = _memory(project, agent, raw, "user")
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [PlannedOp(target="user", action="add", content="Works in UTC")],
                      needs_model=False).job_id
    assert path.read_bytes() == b"Name is Ada\n\xc2\xa7\nPrefers tabs\n\xc2\xa7\nWorks in UTC\n"
    assert undo_job(learner, job).outcome == "ok"
    assert path.read_bytes() == raw


def test_the_log_keeps_the_layout_without_entry_text(agent, project):
    memory, path = _memory(project, agent, MIX)
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [OPS["add"]], needs_model=False).job_id
    (layout, left), = learner.conn.execute("SELECT layout, left_sha256 FROM learning_layouts WHERE job_id = ?",
                                           (job,)).fetchall()
    import hashlib

    assert left == hashlib.sha256(path.read_bytes()).hexdigest()
    assert json.loads(layout) == {
        "gaps": ["\ufeff  ", "\r\n\r\n\r\n\r\n§\r\n", "\r\n§\n§\n\t", " \r\n§\r\n", "\r\r\n\n"],
        "breaks": [None, ["\r\n"], None, None], "sha256": hashlib.sha256(MIX).hexdigest()}
    for text in ("A-dup", "B-two", "its second line", "C-three"):
        assert text not in layout


def test_a_file_in_the_store_format_keeps_no_layout(agent, project):
    memory, _ = _memory(project, agent, _canonical(["A-one", "B-two"]))
    learner = memory.learner()
    learner.run("review", "test", lambda ctx: [OPS["add"]], needs_model=False)
    assert learner.conn.execute("SELECT count(*) FROM learning_layouts").fetchone() == (0,)


def test_a_file_changed_since_gets_the_undo_in_the_store_format_and_says_so(agent, project):
    memory, path = _memory(project, agent, CRLF)
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [OPS["add"]], needs_model=False).job_id
    memory.store.load_from_disk()
    assert memory.store.add("memory", "D-later").success  # someone's entry since the job
    undo = undo_job(learner, job)
    assert (undo.outcome, undo.message) == ("ok", f"undid job {job} (review): 1 write(s) reversed; MEMORY.md keeps "
                                                  "the store's format: its own line endings, byte-order mark and blank "
                                                  "lines were not given back because it changed after the job")
    assert path.read_bytes() == _canonical(["A-one", "B-two\nits second line", "C-three", "D-later"])


def test_a_layout_only_edit_since_counts_as_a_change(agent, project):
    memory, path = _memory(project, agent, BOM)
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [OPS["add"]], needs_model=False).job_id
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # the user's editor made it CRLF since
    undo = undo_job(learner, job)
    assert undo.outcome == "ok" and undo.message.endswith("because it changed after the job")
    assert path.read_bytes() == _canonical(["A-one", "B-two", "C-three"])


def test_an_entry_given_back_redacted_keeps_the_store_format_and_says_why(agent, project):
    key = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    raw = f"A-one\r\n§\r\nCI token is {key}\r\n".encode()
    memory, path = _memory(project, agent, raw)
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [PlannedOp(target="memory", action="remove",
                                                               old_text="CI token")], needs_model=False).job_id
    undo = undo_job(learner, job)
    assert undo.outcome == "ok"
    assert undo.message.endswith("because its entries do not come back exactly as they were (an entry holding a "
                                 "credential comes back redacted)")
    assert key.encode() not in path.read_bytes() and path.read_bytes().startswith(b"A-one\n\xc2\xa7\nCI token is ")


def test_a_refused_undo_leaves_the_bytes_alone(agent, project):
    memory, path = _memory(project, agent, CRLF)
    learner = memory.learner()
    job = learner.run("review", "test", lambda ctx: [OPS["add"]], needs_model=False).job_id
    memory.store.load_from_disk()
    assert memory.store.remove("memory", "Z-new").success  # the entry the job wrote is gone
    left = path.read_bytes()
    undo = undo_job(learner, job)
    assert undo.outcome == "refused" and "has changed since" in undo.message
    assert path.read_bytes() == left
