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


def test_seed_003_blocks_are_read_in_place(machine) -> None:
    """pi-memory-blocks' files, as its README writes them, load as they are (no import step)."""
    from pi_memory.blocks import BlockStore
    from pi_memory.config import load_settings

    project = machine["tmp"] / "app"
    folder = project / ".pi" / "memory-blocks"
    folder.mkdir(parents=True)
    (folder / "user.md").write_text("---\ndescription: Information about the user\nlimit: 2000\n---\n\n"
                                    "Prefers functional programming style. Uses TypeScript and Deno.\nName is Gordon.\n")
    (folder / "decisions.md").write_text("---\ndescription: Current project architecture decisions\nlimit: 4000\n---\n")
    blocks = {b.key: b for b in BlockStore.from_settings(load_settings(project), project, project_trusted=True).blocks()}
    assert blocks["user"].description == "Information about the user" and blocks["user"].limit == 2000
    assert blocks["user"].value.strip() == ("Prefers functional programming style. Uses TypeScript and Deno.\n"
                                            "Name is Gordon.")
    assert (blocks["decisions"].limit, blocks["decisions"].value) == (4000, "")
    assert {b.scope for b in blocks.values()} == {"project"}
