"""The inspector over HTTP (the real server on 127.0.0.1) with what a fresh-eyes tester sent it: an Unpin from a
page loaded before another rule was removed (it removed a different rule), numbers past what SQLite holds (HTTP
500), a skill refusal in a model's words, a block whose hand-written limit is not used, a turn that names a
command that does not exist."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from pi_memory.integrations.inspector import CSRF_HEADER, Running, run_inspector
from pi_memory.runtime import open_memory
from pi_memory.skills import SkillStore, render_body
from pi_memory.standing import StandingStore
from pi_memory.standing.store import RULE_GONE

RULES = ["Ask before force-pushing any branch", "Run the tests before committing", "never run find / on this machine"]
HUGE = "99999999999999999999"


@dataclass
class Site:
    running: Running
    client: httpx.Client
    data: Path

    def post(self, path: str, data: dict) -> httpx.Response:
        return self.client.post(path, data=data, headers={CSRF_HEADER: self.running.tokens.csrf})


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    tmp = tmp_path_factory.mktemp("fresh-eyes")
    data = tmp / "data"
    (data / "blocks").mkdir(parents=True)
    (data / "blocks" / "ok_key.md").write_text("---\ndescription: Notes\nlimit: 200000\n---\n\n" + "abcd " * 1000,
                                               encoding="utf-8")
    skills = SkillStore(data)
    body = render_body("When it applies", ["Do the step"], ["A pitfall"], ["It worked"])
    for i in range(22):  # more than a refusal lists by id
        assert skills.create(f"procedure {i} {'abcdefghijklmnopqrstuv'[i]}", f"Does thing number {i} well {i * 7}",
                             "global", body)["success"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PI_CODING_AGENT_DIR", str(tmp / "agent"))
        mp.setenv("HOME", str(tmp / "home"))
        memory = open_memory(tmp, override_dir=data)
        try:
            with run_inspector(memory) as running, httpx.Client(base_url=running.base, timeout=30) as client:
                client.get(running.url)
                yield Site(running, client, data)
        finally:
            memory.close()


def _keys(page: str) -> list[str]:
    standing = page.split('id="standing"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'name="key" value="([0-9a-f]{16})"', standing)


def test_unpin_from_a_page_loaded_before_another_removal_removes_the_rule_it_showed(site: Site) -> None:
    store = StandingStore.in_data_dir(site.data)
    for rule in RULES:
        assert store.add(rule).success
    keys = _keys(site.client.get("/stores").text)  # the page as loaded: rule 3 is "never run find /..."
    assert len(keys) == 3
    assert store.remove(1).success  # meanwhile: pi-memory pin remove 1
    r = site.post("/standing/remove", {"key": keys[2]})
    assert r.status_code == 200 and f"Removed rule 2: {RULES[2]}" in r.text
    assert store.rules() == [RULES[1]]  # "Ask before force-pushing" was already gone; "Run the tests" is kept
    again = site.post("/standing/remove", {"key": keys[2]})  # the same out-of-date page
    assert again.status_code == 200 and f"<strong>Refused:</strong> {RULE_GONE}</div>" in again.text
    gone = site.post("/standing/remove", {"key": keys[0]})  # removed elsewhere: never another rule instead
    assert f"<strong>Refused:</strong> {RULE_GONE}</div>" in gone.text
    old_form = site.post("/standing/remove", {"number": "1"})  # a page from before keys: refused, nothing removed
    assert f"<strong>Refused:</strong> {RULE_GONE}</div>" in old_form.text
    assert store.rules() == [RULES[1]]
    assert RULE_GONE == ("That rule is no longer pinned: it was changed or removed since this page was loaded. "
                         "Nothing was removed; the rules below are the current ones.")
    assert store.remove_rule(RULES[1]).success and store.rules() == []


@pytest.mark.parametrize("query", [
    {"file": "/x/session.jsonl", "line": HUGE},
    {"file": "/x/session.jsonl", "line": "-" + HUGE},
    {"file": "/x/session.jsonl", "line": "9" * 10_000},
    {"session": "s1", "entry": "e1", "window": HUGE},
    {"session": "s1", "window": "-5"},
])
def test_a_turn_with_a_number_past_sqlite_is_no_such_turn(site: Site, query: dict) -> None:
    r = site.client.get("/sessions/turn", params=query)
    assert r.status_code == 200
    assert ("That message is not in this computer's index: its session file may have been removed or not indexed "
            "yet (run <code>pi-memory index-sessions</code>)") in r.text


def test_undo_of_a_job_id_past_sqlite_is_no_such_job(site: Site) -> None:
    r = site.post(f"/learning/{HUGE}/undo", {})
    assert r.status_code == 200
    assert f"undo: refused — there is no learning job {HUGE}; `pi-memory learning log` lists them" in r.text
    largest = site.post("/learning/9223372036854775807/undo", {})  # the largest SQLite holds: asked as it is
    assert "undo: refused — there is no learning job 9223372036854775807;" in largest.text
    # 5,000 digits: Starlette's int convertor raised past Python's 4,300-digit limit (HTTP 500); not a number: 404
    longest = site.post("/learning/" + "9" * 5000 + "/undo", {})
    assert longest.status_code == 200 and f"there is no learning job {'9' * 24}…;" in longest.text
    assert site.post("/learning/abc/undo", {}).status_code == 200


def test_a_skill_refusal_on_the_page_is_in_a_persons_words(site: Site) -> None:
    r = site.post("/skills/delete", {"id": "nonexist"})
    assert r.status_code == 200 and "Refused: No skill &#39;nonexist&#39;. Skills that exist:" in r.text
    assert "and 2 more (`pi-memory skills list` lists them). Give one of these ids exactly." in r.text
    assert "action &#39;view&#39;" not in r.text and "action 'view'" not in r.text
    viewed = site.client.get("/skills", params={"id": "nonexist"}).text
    assert "and 2 more (`pi-memory skills list` lists them). Give one of these ids exactly." in viewed
    assert "action &#39;view&#39;" not in viewed


def test_a_block_whose_limit_is_not_used_says_so_on_the_page(site: Site) -> None:
    page = site.client.get("/stores").text
    assert ('<div class="refused">limit 200000 is not a whole number from 1 to 100,000; the default limit 2,000 is '
            'used instead</div>') in page
