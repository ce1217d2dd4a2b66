"""Skill names in any script (a fresh tester's finding: the skill tool's create with name "部署预发布" or
"Развертывание" answered "has no letter or digit to make a folder name from"). The folder name stays ASCII (the
Agent Skills name rules pi checks); letters with no ASCII form are replaced by a hash of the name, and the name
as given is kept as ``display_name``, by which the skill is found."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest

from pi_memory.skills import slugify


@pytest.mark.parametrize(("name", "slug"), [
    ("部署预发布", "skill-6ecc37b7"),
    ("Развертывание", "skill-2db4abb3"),
    ("РАЗВЕРТЫВАНИЕ", "skill-2db4abb3"),  # case folded, as for ASCII names
    (unicodedata.normalize("NFD", "Развёртывание"), "skill-9b31c6e6"),  # any normal form: one slug
    ("Развёртывание", "skill-9b31c6e6"),
    ("Deploy 预发布", "deploy-ed474f3f"),  # what is left in ASCII, then the hash: not the bare 'deploy'
    ("Deploy 生产", "deploy-6edd8909"),
    ("Øl", "l-fddbe7cb"),
    ("Straße", "strasse"),  # folds to ASCII: no hash
    ("x" * 60 + " 部署", "x" * 55 + "-4acce0ca"),  # 64 characters at most
])
def test_names_with_letters_that_have_no_ascii_form(name: str, slug: str) -> None:
    assert slugify(name) == slug


def test_the_hash_is_of_the_names_words() -> None:
    assert slugify("部署预发布") == "skill-" + hashlib.sha256("部署预发布".encode()).hexdigest()[:8]
    assert slugify("  部署 -- 预发布 ") == "skill-" + hashlib.sha256("部署 预发布".encode()).hexdigest()[:8]


def test_the_skill_tool_creates_views_and_patches_them(tool) -> None:
    spec, store = tool
    out = spec.call({"action": "create", "name": "部署预发布", "description": "把服务部署到预发布环境",
                     "scope": "global", "procedure_steps": ["运行 make deploy-staging"]})
    assert (out.is_error, out.result["message"]) == (False, "Saved skill global:skill-6ecc37b7.")
    out = spec.call({"action": "create", "name": "Развертывание", "description": "Развертывание сервиса на стенд",
                     "scope": "global", "procedure_steps": ["make deploy"]})
    assert (out.is_error, out.result["skill"]["id"]) == (False, "global:skill-2db4abb3")
    path = store.roots["global"] / "skill-6ecc37b7" / "SKILL.md"
    assert path.read_text(encoding="utf-8") == (
        "---\nname: skill-6ecc37b7\ndescription: 把服务部署到预发布环境\nversion: 1\ncreated: '2026-04-26'\n"
        "updated: '2026-04-26'\ndisplay_name: 部署预发布\n---\n\n## Procedure\n1. 运行 make deploy-staging\n")
    view = spec.call({"action": "view", "skill_id": "部署预发布"}).result
    assert (view["skill"]["id"], view["content"]) == ("global:skill-6ecc37b7", "## Procedure\n1. 运行 make deploy-staging")
    out = spec.call({"action": "patch", "skill_id": "развертывание", "section": "pitfalls",
                     "content": "- не в пятницу"})
    assert (out.is_error, out.result["message"]) == (False, "Updated skill global:skill-2db4abb3 (version 2).")
    out = spec.call({"action": "create", "name": "部署预发布", "description": "把服务部署到预发布环境",
                     "scope": "global", "procedure_steps": ["again"]})
    assert (out.result["code"], out.result["skill_id"]) == ("duplicate", "global:skill-6ecc37b7")


def test_a_name_with_no_letter_or_digit_is_still_refused_for_that_reason(tool) -> None:
    spec, _ = tool
    out = spec.call({"action": "create", "name": "!!! ???", "description": "d", "scope": "global",
                     "procedure_steps": ["a"]})
    assert out.result["error"] == ("The name '!!! ???' has no letter or digit to make a folder name from; give a "
                                   "short name such as 'deploy-staging'.")


@pytest.mark.parametrize(("name", "slug"), [
    ("İstanbul", "istanbul"),  # the folded dotted capital I left a combining dot that split the word: i-stanbul
    ("de\u200bploy", "deploy"),  # a zero-width space split the word: de-ploy
    ("re\u0301sume\u0301 tips", "resume-tips"),  # decomposed accents, as a macOS file name holds them
])
def test_invisible_characters_and_combining_marks_do_not_split_a_word(name, slug):
    assert slugify(name) == slug
