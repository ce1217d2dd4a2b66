"""A ``SKILL.md`` edited by hand reaches readers no write checked:

* a YAML alias bomb in its frontmatter made ``skills list`` take 2.5 GB: the file is now unreadable, said why,
  and every other skill is listed;
* control characters (``ESC[2J``, a window title ``ESC]0;PWNED BEL``, a YAML-escaped ``\\e``) came back raw from
  ``skill_manage view`` and were copied by ``skills export``: the tool now shows them as escapes, as blocks and
  curated entries do, and export (and pi's list) refuse the skill with the reason;
* export copied a killed writer's temp file ``.SKILL.md.abcd1234.tmp`` into the host's folder: never now."""

from __future__ import annotations

import json
import time

import pytest

from pi_memory.front_matter import ALIASES
from pi_memory.skills import SkillStore
from pi_memory.skills.export import export_skills
from pi_memory.terminal_text import CONTROL
from pi_memory.tools.skills import create_skill_tools

NAMES = "abcdefghi"
BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
    f"{NAMES[i]}: &{NAMES[i]} [" + ",".join([f"*{NAMES[i - 1]}"] * 9) + "]" for i in range(1, 9)])


@pytest.fixture
def store(tmp_path):
    store = SkillStore(tmp_path / "data", clock=lambda: "2026-04-26")
    assert store.create("deploy", "Deploys the app", "global", "1. Run make.\n")["success"]
    return store


def hand_made(store: SkillStore, slug: str, text: str):
    path = store.roots["global"] / slug / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def view(store: SkillStore, skill_id: str | None = None) -> dict:
    [spec] = create_skill_tools(store)
    return json.loads(spec.call({"action": "view", **({"skill_id": skill_id} if skill_id else {})}).text)


@pytest.mark.parametrize("front", [
    f"name: bomb\n{BOMB}\ndescription: *i",
    f"{BOMB}\nname: *i\ndescription: Bombs",
    f"name: bomb\ndescription: Bombs\n{BOMB}\nmetadata: *i",
    "name: bomb\ndescription: &d [*d]",
])
def test_a_skill_with_yaml_aliases_is_unreadable_and_the_others_still_work(store, tmp_path, front):
    path = hand_made(store, "bomb", f"---\n{front}\n---\n\n1. lol\n")
    started = time.perf_counter()
    skills = {s.id: s for s in store.skills()}
    listed = view(store)
    one = view(store, "global:bomb")
    items = {i.skill_id: i for i in export_skills(store, "claude-code", tmp_path / "home")}
    assert time.perf_counter() - started < 3
    why = f"{path} cannot be read: {ALIASES}"
    assert skills["global:bomb"].error == why and skills["global:deploy"].doc is not None
    assert [s.get("error") for s in listed["skills"]] == [why, None]
    assert (one["success"], one["code"]) == (False, "invalid_content")
    assert "lol" not in json.dumps(listed) + json.dumps(one)
    assert (items["global:bomb"].action, items["global:bomb"].code) == ("skipped", "unreadable")
    assert items["global:deploy"].action == "copied"
    assert path.parent not in store.discoverable()


@pytest.mark.parametrize(("body", "description", "part", "shown_body", "shown_description"), [
    ("1. Run make.\x1b[2J\x1b]0;PWNED\x07\n", "Deploys it", "body", "1. Run make.\\x1b[2J\\x1b]0;PWNED\\x07",
     "Deploys it"),
    ("1. Run make.\n", '"Deploys \\e]0;PWNED\\a it"', "description", "1. Run make.", "Deploys \\x1b]0;PWNED\\x07 it"),
    ("1. step \x9b2J one\n2. two\x00\n", "Two steps", "body", "1. step \\x9b2J one\n2. two\\x00", "Two steps"),
])
def test_control_characters_are_escaped_for_the_model_and_refused_by_export(store, tmp_path, body, description,
                                                                            part, shown_body, shown_description):
    path = hand_made(store, "ctrl", f"---\nname: ctrl\ndescription: {description}\n---\n{body}")
    one = view(store, "global:ctrl")
    assert (one["content"], one["skill"]["description"]) == (shown_body, shown_description)
    listed = {s["id"]: s for s in view(store)["skills"]}
    assert listed["global:ctrl"]["description"] == shown_description
    assert not CONTROL.search(one["content"] + one["skill"]["description"] + listed["global:ctrl"]["description"])
    [item] = [i for i in export_skills(store, "codex", tmp_path / "home") if i.skill_id == "global:ctrl"]
    found = "\\x1b" if "\x1b" in body + description.replace("\\e", "\x1b") else "\\x9b"
    assert (item.action, item.code) == ("refused", "control")
    assert item.reason == (
        f"not exported: its {part} holds a control character ({found}: terminal escape codes or similar), which "
        "can hide or change text where a host shows it. Codex reads a skill's description into its prompt and its "
        f"body into the conversation. To export it, fix {path}: remove the control characters (a hand edit put "
        "them there); then export again. Or delete it: `pi-memory skills delete global:ctrl`.")
    assert not (tmp_path / "home" / ".agents" / "skills" / "ctrl").exists()
    assert path.parent not in store.discoverable()


@pytest.mark.parametrize("names", [
    [".SKILL.md.abcd1234.tmp"],
    [".SKILL.md.zz_9x0ab.tmp", "scripts/.run.sh.k2j4h5g6.tmp"],
])
def test_export_never_copies_the_temp_files_of_our_writes(store, tmp_path, names):
    folder = store.roots["global"] / "deploy"
    (folder / "scripts").mkdir()
    (folder / "scripts" / "run.sh").write_text("make deploy\n")
    for name in names:
        (folder / name).write_text("half writt")
    [item] = export_skills(store, "claude-code", tmp_path / "home")
    assert item.action == "copied"
    copy = tmp_path / "home" / ".claude" / "skills" / "deploy"
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*") if p.is_file()) == [
        ".pi-memory-export", "SKILL.md", "scripts/run.sh"]
    [again] = export_skills(store, "claude-code", tmp_path / "home")
    assert again.action == "unchanged"


@pytest.mark.parametrize(("text", "quoted"), [
    ("deploy: Deploys \x1b]0;PWNED\x07 the app", '"deploy: Deploys \\\\x1b]0;PWNED\\\\x07 the app"'),
    ("deploy: clears \x9b2J the screen", '"deploy: clears \\\\x9b2J the screen"'),  # C1: JSON leaves it raw
    ("deploy: rubs out\x7f a letter", '"deploy: rubs out\\\\x7f a letter"'),  # DEL: JSON leaves it raw too
])
def test_the_recalled_skill_line_shows_control_characters_as_escapes(text, quoted):
    from types import SimpleNamespace

    from pi_memory.retrieval.sources_skills import render_line

    line = render_line(SimpleNamespace(id="global:deploy", text=text, source_text=text))
    assert line == (f"- skill:global:deploy: {quoted} (a saved skill; its steps load with skill_manage "
                    '{"action": "view", "skill_id": "global:deploy"})')


@pytest.mark.parametrize(("description", "shown"), [
    ('"Deploys \\e[2J it"', "Deploys \\x1b[2J it"),
    ('"Rings \\a twice"', "Rings \\x07 twice"),
])
def test_pis_skill_manager_lists_control_characters_as_escapes(store, description, shown):
    from pi_memory.integrations.pi.skills_host import handle

    hand_made(store, "ctrl", f"---\nname: ctrl\ndescription: {description}\n---\n1. step\n")
    listed = {s["id"]: s for s in handle(store, "list", {})["skills"]}
    assert (listed["global:ctrl"]["description"], listed["global:deploy"]["description"]) == (shown, "Deploys the app")
