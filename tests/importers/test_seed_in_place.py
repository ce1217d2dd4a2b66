"""Seed 000 (@amaster.ai/pi-memory) needs no import: its <agentDir>/memories/ folder is our default data root."""

from __future__ import annotations

from pi_memory.runtime import open_memory


def test_seed_000_memories_folder_is_read_in_place(machine) -> None:
    folder = machine["agent"] / "memories"
    folder.mkdir()
    (folder / "MEMORY.md").write_text("Build with make\n§\nTests run with pytest -q\n")
    (folder / "USER.md").write_text("Prefers short answers\n")
    memory = open_memory()
    try:
        assert memory.settings.data_dir == folder.resolve()
        assert memory.store.entries("memory") == ["Build with make", "Tests run with pytest -q"]
        assert memory.store.entries("user") == ["Prefers short answers"]
    finally:
        memory.close()
    report = machine["cli"]("read", "memory")
    assert report["entries"] == ["Build with make", "Tests run with pytest -q"]
