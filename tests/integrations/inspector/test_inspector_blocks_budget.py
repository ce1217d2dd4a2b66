"""The Stores page listed every memory block alike, also one the blocks' budget (``blocksCharBudget``) leaves out
of every prompt: a person saw its text there and could not tell the model never does. Now a left-out block is
marked with why, under a warning naming them all; rendered over HTTP and in a real browser (Playwright and
Debian's chromium, as ``test_inspector_browser.py``)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from markupsafe import escape

from pi_memory.integrations.inspector import Running, run_inspector
from pi_memory.runtime import open_memory

CHROMIUM = os.environ.get("PI_MEMORY_CHROMIUM", "/usr/bin/chromium")
REASON = ("Left out of every prompt: with its 6,500 characters the memory blocks would pass their budget of 10,000 "
          "characters (\"blocksCharBudget\"), and the 2 shown hold 7,000. The model does not see it, though "
          "memory_search still finds its text. Shorten or delete blocks, or raise \"blocksCharBudget\" in the "
          "\"pi-memory\" settings (settings.json).")
WARNING = ("1 memory block(s) are left out of every prompt: the blocks together pass the budget of 10,000 characters "
           "for memory blocks (the 2 shown hold 7,000). Left out: beta (6,500 chars). Shorten or delete blocks, or "
           "raise \"blocksCharBudget\" in the \"pi-memory\" settings (settings.json).")


def write_block(folder: Path, key: str, size: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{key}.md").write_text(f"---\ndescription: {key}\nlimit: 10000\n---\n\n{key[0] * size}\n")


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    tmp = tmp_path_factory.mktemp("blocks-budget")
    agent, data = tmp / "agent", tmp / "data"
    agent.mkdir()
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {"blocksCharBudget": 10_000}}))
    for key, size in (("alpha", 4_000), ("beta", 6_500), ("gamma", 3_000)):  # beta does not fit after alpha
        write_block(data / "blocks", key, size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PI_CODING_AGENT_DIR", str(agent))
        mp.setenv("HOME", str(tmp / "home"))
        memory = open_memory(tmp, override_dir=data)
        try:
            with run_inspector(memory) as site:
                yield site
        finally:
            memory.close()


def entries(page: str) -> dict[str, str]:
    """``{block key: its entry's HTML}`` of the blocks card."""
    card = page[page.index('id="blocks"'):]
    card = card[:card.index("</section>")]
    parts = re.split(r'<div class="entry[^"]*"><strong>', card)[1:]
    return {part[:part.index("<")]: part for part in parts}


def test_the_stores_page_marks_the_blocks_the_budget_leaves_out(running) -> None:
    with httpx.Client(base_url=running.base, timeout=30) as client:
        client.get(running.url)
        page = client.get("/stores").text
    assert "Memory blocks <span class=\"muted\">— 3, 1 left out of the prompt</span>" in page
    assert f'<p class="refused budget-warning">{escape(WARNING)}</p>' in page
    shown = entries(page)
    assert list(shown) == ["alpha", "beta", "gamma"]
    assert '<span class="tag bad">not in the prompt</span>' in shown["beta"]
    assert f'<div class="refused left-out-reason">{escape(REASON)}</div>' in shown["beta"]
    for key in ("alpha", "gamma"):
        assert "not in the prompt" not in shown[key] and "left-out" not in shown[key]


def test_nothing_is_marked_when_every_block_fits(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "agent"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    write_block(tmp_path / "data" / "blocks", "alpha", 4_000)
    memory = open_memory(tmp_path, override_dir=tmp_path / "data")
    try:
        with run_inspector(memory) as site, httpx.Client(base_url=site.base, timeout=30) as client:
            client.get(site.url)
            page = client.get("/stores").text
    finally:
        memory.close()
    assert "Memory blocks <span class=\"muted\">— 1</span>" in page
    assert "not in the prompt" not in page and "budget-warning" not in page


@pytest.mark.e2e
def test_a_browser_shows_the_left_out_block_and_why(running) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        pytest.skip(f"{CHROMIUM} is missing: run scripts/setup-e2e.sh (apt-get install chromium)")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.goto(running.url)
            left = page.locator("#blocks .entry.left-out")
            assert left.count() == 1
            assert left.locator("strong").inner_text() == "beta"
            assert left.locator(".tag.bad").inner_text() == "not in the prompt"
            assert left.locator(".left-out-reason").inner_text() == REASON
            assert page.locator("#blocks .budget-warning").inner_text() == WARNING
            assert page.locator("#blocks .entry").count() == 3
        finally:
            browser.close()
