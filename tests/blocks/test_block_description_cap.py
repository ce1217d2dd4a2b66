"""A block's description is capped at 200 characters (breaker finding F5: a 100,000-character description was
created and went whole into every prompt): refused on create, cut with an ellipsis when a hand-written file
holds a longer one."""

from __future__ import annotations

from typer.testing import CliRunner

from pi_memory.blocks import MAX_DESCRIPTION, BlockStore
from pi_memory.cli.app import app
from pi_memory.prompt import blocks_text


def test_create_refuses_a_description_over_200_characters(tmp_path):
    store = BlockStore(tmp_path / "global")
    result = store.create("bigdesc", "d" * 100_000)
    assert (MAX_DESCRIPTION, result.success, result.code) == (200, False, "description_too_long")
    assert result.error == ("The description is 100,000 characters, over the maximum of 200: it goes into every "
                            "prompt. Nothing was created; say in a sentence what the block is for, and put the "
                            "details in the block's text.")
    assert not (tmp_path / "global" / "bigdesc.md").exists()
    assert store.create("okdesc", "d" * 200).success  # the maximum itself is fine
    assert store.get("okdesc").description == "d" * 200


def test_the_cli_refuses_it_with_exit_code_1(tmp_path, monkeypatch):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["blocks", "create", "bigdesc", "--description", "d" * 100_000, "--dir",
                                 str(tmp_path / "mem")])
    assert r.exit_code == 1 and "over the maximum of 200" in r.output
    assert not (tmp_path / "mem" / "blocks" / "bigdesc.md").exists()


def test_a_hand_written_long_description_is_cut_in_the_prompt(tmp_path):
    store = BlockStore(tmp_path / "global")
    store.global_dir.mkdir()
    (store.global_dir / "notes.md").write_text("---\ndescription: " + "d" * 100_000 + "\n---\nBuild with make.\n")
    text = blocks_text(store.blocks())
    assert "## notes [16/2,000 chars]\n" + "d" * 200 + "…\nBuild with make.\n" in text
    assert len(text) < 700
