"""A hand-made store holding the same entry twice: the next write merges the copies (no text is lost) and says
so, to the model (the message and ``duplicatesMerged``) and to a person (the CLI's words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from pi_memory.cli.app import app
from pi_memory.curated import MemoryStore, Operation

DONE = " This change is complete; do not repeat it."

CASES = [  # (target, the file's entries, copies merged)
    ("memory", ["A-dup", "A-dup", "B-two"], 1),  # the duplicate at the start
    ("memory", ["A-one", "B-dup", "B-dup", "C-three"], 1),  # in the middle
    ("memory", ["A-one", "B-two", "C-dup", "C-dup"], 1),  # at the end
    ("memory", ["A-dup", "B-two", "A-dup", "C-three", "A-dup"], 2),  # three copies
    ("memory", ["A-dup", "B-dup", "A-dup", "B-dup"], 2),  # two entries, each twice, interleaved
    ("user", ["Name is Ada", "Prefers tabs", "Name is Ada"], 1),  # USER.md
]


def hand_made(tmp_path: Path, target: str, entries: list[str]) -> Path:
    path = tmp_path / ("USER.md" if target == "user" else "MEMORY.md")
    path.write_text("\n§\n".join(entries) + "\n", encoding="utf-8")
    return path


def merged_note(name: str, n: int) -> str:
    what = "1 exact duplicate entry" if n == 1 else f"{n} exact duplicate entries"
    return f" Also merged {what} in {name} (the same text as an earlier entry; no text was lost)."


@pytest.mark.parametrize(("target", "entries", "merged"), CASES)
def test_an_add_that_merges_duplicates_says_how_many(tmp_path, target, entries, merged):
    path = hand_made(tmp_path, target, entries)
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    r = store.add(target, "Z-new")
    name = path.name
    assert (r.success, r.code, r.duplicates_merged) == (True, "ok", merged)
    assert r.message == f"Saved to {name}." + merged_note(name, merged) + DONE
    assert r.to_dict()["duplicatesMerged"] == merged
    assert r.for_person().message == f"Saved to {name}." + merged_note(name, merged)
    assert path.read_text(encoding="utf-8") == "\n§\n".join([*dict.fromkeys(entries), "Z-new"]) + "\n"
    again = store.add(target, "Y-newer")  # the copies are gone: nothing more to say
    assert again.duplicates_merged is None
    assert again.message == f"Saved to {name}." + DONE


def test_a_replace_remove_and_batch_say_it_too(tmp_path):
    path = hand_made(tmp_path, "memory", ["A-dup", "B-two", "A-dup"])
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    r = store.replace("memory", "B-two", "B-2")
    assert r.message == "Replaced the entry in MEMORY.md." + merged_note("MEMORY.md", 1) + DONE
    hand_made(tmp_path, "memory", ["A-dup", "B-2", "A-dup", "A-dup"])
    r = store.remove("memory", "B-2")
    assert (r.message, r.duplicates_merged) == ("Removed the entry from MEMORY.md." + merged_note("MEMORY.md", 2)
                                                + DONE, 2)
    hand_made(tmp_path, "memory", ["A-dup", "A-dup"])
    r = store.apply("memory", [Operation(action="add", content="C"), Operation(action="add", content="D")])
    assert r.message == "Applied 2 operation(s) to MEMORY.md." + merged_note("MEMORY.md", 1) + DONE
    assert path.read_text(encoding="utf-8") == "A-dup\n§\nC\n§\nD\n"


def test_a_write_that_changes_nothing_keeps_the_copies_and_says_nothing_of_them(tmp_path):
    path = hand_made(tmp_path, "memory", ["A-dup", "B-two", "A-dup"])
    store = MemoryStore(tmp_path)
    store.load_from_disk()
    r = store.add("memory", "B-two")
    assert (r.code, r.duplicates_merged, r.message) == ("duplicate", None,
                                                        "This exact entry is already in MEMORY.md; nothing was written.")
    assert path.read_text(encoding="utf-8") == "A-dup\n§\nB-two\n§\nA-dup\n"


def test_the_cli_tells_a_person(tmp_path):
    hand_made(tmp_path, "memory", ["A-dup", "B-two", "A-dup", "A-dup"])
    result = CliRunner().invoke(app, ["add", "memory", "C-new", "--dir", str(tmp_path)])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "Saved to MEMORY.md." + merged_note("MEMORY.md", 2)
