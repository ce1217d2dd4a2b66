"""No bound held the memory blocks together: 60 global blocks filled to ~94,000 characters each (each within its
own ``--limit 100000``) put 5.6 million characters into every pi run, and the Claude Code session start took 7.3 s
and answered ``{}``. Now the blocks of one prompt stay within ``blocksCharBudget`` (default 100,000), taken in
their order, each whole or left out; the model reads a note naming what was left out, a person a warning in
``blocks list``, ``status`` and ``preview-context``; a new block whose limit alone passes the budget is refused."""

from __future__ import annotations

import json

import pytest

from cli_homes import isolated_cli  # tests/: on sys.path by the conftest
from pi_memory.blocks import BlockStore
from pi_memory.blocks.budget import fit, model_note, person_warning
from pi_memory.config import SettingsError, load_settings
from pi_memory.prompt import blocks_text
from pi_memory.prompt.pieces import run_pieces


def filled(store: BlockStore, sizes: dict[str, int], limit: int = 100_000) -> None:
    store.global_dir.mkdir(parents=True, exist_ok=True)
    for key, size in sizes.items():
        line = f"{key} fact, one of many in this block. "
        value = (line * (size // len(line) + 1))[:size]
        (store.global_dir / f"{key}.md").write_text(f"---\ndescription: {key}\nlimit: {limit}\n---\n\n{value}\n")


@pytest.mark.parametrize(("budget", "sizes", "shown", "left_out"), [
    (100_000, {"a": 60_000, "b": 60_000, "c": 30_000}, ["a", "c"], ["b"]),  # a later, smaller block still fits
    (100_000, {"a": 50_000, "b": 50_000}, ["a", "b"], []),  # exactly the budget
    (10_000, {"a": 20_000, "b": 3_000, "c": 8_000}, ["b"], ["a", "c"]),
    (100_000, {f"big{i:02d}": 94_000 for i in range(60)}, ["big00"], [f"big{i:02d}" for i in range(1, 60)]),
])
def test_the_blocks_that_fit_are_shown_whole_in_order_and_the_rest_named(tmp_path, budget, sizes, shown, left_out):
    store = BlockStore(tmp_path / "blocks", budget=budget)
    filled(store, sizes)
    fitted = store.in_prompt()
    assert ([b.key for b in fitted.shown], [b.key for b in fitted.left_out]) == (shown, left_out)
    assert fitted.used == sum(sizes[k] for k in shown) <= budget
    text = blocks_text(fitted.shown, model_note(fitted))
    assert len(text) < budget + 2_000
    for key in left_out:
        assert f"{key} fact" not in text
    if left_out:
        assert text.endswith(model_note(fitted) + "\n</memory-blocks>")


def test_the_note_and_the_warning_name_what_was_left_out(tmp_path):
    store = BlockStore(tmp_path / "blocks", budget=10_000)
    filled(store, {"alpha": 6_000, "beta": 5_000, "gamma": 4_000})
    fitted = store.in_prompt()
    assert model_note(fitted) == (
        "[!] 1 memory block(s) are NOT shown here: together the blocks pass the 10,000-character budget for memory "
        "blocks in this prompt. Left out: beta (5,000 chars). memory_search with target \"block\" still finds their "
        "text. Tell the user, so they can shorten or delete blocks, or raise blocksCharBudget.")
    assert person_warning(fitted) == (
        "1 memory block(s) are left out of every prompt: the blocks together pass the budget of 10,000 characters "
        "for memory blocks (the 2 shown hold 10,000). Left out: beta (5,000 chars). Shorten or delete blocks, or "
        "raise \"blocksCharBudget\" in the \"pi-memory\" settings (settings.json).")
    assert person_warning(fit(store.blocks(), 20_000)) == model_note(fit(store.blocks(), 20_000)) == ""


def test_an_over_limit_block_counts_only_what_the_prompt_holds_of_it(tmp_path):
    store = BlockStore(tmp_path / "blocks", budget=5_000)
    filled(store, {"a": 9_000, "b": 2_000}, limit=3_000)  # hand-edited past its limit: the prompt cuts it at 3,000
    fitted = store.in_prompt()
    assert ([b.key for b in fitted.shown], fitted.used) == (["a", "b"], 5_000)


def test_the_pieces_of_a_capped_host_end_with_the_note(tmp_path):
    store = BlockStore(tmp_path / "blocks", budget=30_000)
    filled(store, {"a": 12_000, "b": 12_000, "c": 12_000})
    fitted = store.in_prompt()
    joined, pieces = run_pieces(fitted.shown, "", 9_000, note=model_note(fitted))
    assert pieces[-1].endswith(model_note(fitted) + "\n</memory-blocks>")
    assert "c fact" not in joined and all(len(p) <= 9_000 for p in pieces)


@pytest.mark.parametrize(("budget", "limit", "ok"), [(5_000, 5_001, False), (5_000, 5_000, True),
                                                     (100_000, 100_000, True), (1_000, 2_000, False)])
def test_a_new_block_whose_limit_alone_passes_the_budget_is_refused(tmp_path, budget, limit, ok):
    store = BlockStore(tmp_path / "blocks", budget=budget)
    result = store.create("notes", "Notes", limit=limit)
    assert result.success is ok
    if not ok:
        assert (result.code, result.error) == ("over_budget", (
            f"A limit of {limit:,} characters is over the {budget:,} that all memory blocks together may hold in a "
            f"prompt (\"blocksCharBudget\"), so the block could never be shown whole. Nothing was created. Use a "
            f"limit of at most {budget:,}, or raise \"blocksCharBudget\" in the \"pi-memory\" settings "
            "(settings.json)."))
        assert not (store.global_dir / "notes.md").exists()


@pytest.mark.parametrize(("value", "ok"), [(50_000, True), (1_000_000, True), (0, False), (1_000_001, False),
                                           ("100000", False), (True, False)])
def test_the_setting_is_read_at_the_composition_root(tmp_path, monkeypatch, value, ok):
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"blocksCharBudget": value}}))
    if ok:
        assert load_settings(tmp_path).blocks_char_budget == value
    else:
        with pytest.raises(SettingsError):
            load_settings(tmp_path)


def test_a_person_is_warned_in_blocks_list_status_and_preview_context(tmp_path, monkeypatch):
    run = isolated_cli(tmp_path, monkeypatch)
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "settings.json").write_text(json.dumps({"pi-memory": {"blocksCharBudget": 50_000}}))
    store = BlockStore(tmp_path / "mem" / "blocks", budget=50_000)
    filled(store, {f"big{i:02d}": 20_000 for i in range(12)})
    warning = person_warning(store.in_prompt())
    assert warning.startswith("10 memory block(s) are left out of every prompt: the blocks together pass the budget "
                              "of 50,000 characters for memory blocks (the 2 shown hold 40,000). Left out: big02 "
                              "(20,000 chars), big03 (20,000 chars)")
    listed = run("blocks", "list").stdout
    assert listed.startswith(f"warning: {warning}\n\nbig00 (global)")
    assert "big02 (global) [████░░░░░░░░░░░░░░░░] 20% — 20,000/100,000 chars  (LEFT OUT of the prompt: over the " \
           "blocks' budget)" in listed
    assert f"warning: {warning}" in run("status").stdout
    assert run("preview-context").stdout.rstrip().endswith(f"warning: {warning}")
    context = json.loads(run("preview-context", "--json").stdout)
    assert context["blocksLeftOut"]["leftOut"][0] == {"key": "big02", "scope": "global", "chars": 20_000}
    assert 40_000 < len(context["systemPrompt"]) < 45_000 and "big02 fact" not in context["systemPrompt"]
    [part] = [p for p in context["parts"] if p["name"] == "blocks"]
    assert part["note"] == ("2 block(s); 10 block(s) left out: over the budget of 50,000 characters for memory "
                            "blocks (see pi-memory blocks list)")
    refused = run("blocks", "create", "huge", "--limit", "60000")
    assert refused.exit_code == 1 and "over the 50,000 that all memory blocks together" in refused.output
