"""The four tools: schemas, results, invalid arguments, provider formats (issue #2 §5)."""

from __future__ import annotations

import json

import pytest

from pi_memory.curated import MAX_RESULT_BYTES, MemoryStore
from pi_memory.tools import create_memory_tools


@pytest.fixture
def tools(tmp_path):
    store = MemoryStore(tmp_path, memory_char_limit=100_000)
    store.load_from_disk()
    return store, {t.name: t for t in create_memory_tools(store)}


def test_four_tools_with_generated_schemas(tools):
    _, t = tools
    assert list(t) == ["memory_add", "memory_replace", "memory_remove", "memory_read"]
    assert t["memory_replace"].parameters == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "target": {
                "type": "string",
                "enum": ["memory", "user", "project", "failure"],
                "description": t["memory_replace"].parameters["properties"]["target"]["description"],
            },
            "oldText": {"type": "string", "description": "A short piece of text found in exactly one existing entry."},
            "newContent": {"type": "string", "description": "The full new text of that entry (it replaces the whole entry)."},
        },
        "required": ["target", "oldText", "newContent"],
    }
    assert t["memory_read"].read_only and t["memory_remove"].destructive


def test_provider_formats(tools):
    _, t = tools
    oa = t["memory_add"].openai()
    assert oa["type"] == "function" and oa["function"]["name"] == "memory_add"
    assert oa["function"]["parameters"]["required"] == ["target", "content"]
    an = t["memory_add"].anthropic()
    assert set(an) == {"name", "description", "input_schema"}


def test_call_add_then_read(tools):
    _, t = tools
    out = t["memory_add"].call({"target": "user", "content": "Prefers short answers"})
    assert not out.is_error
    assert out.result["success"] is True and out.result["entryCount"] == 1
    assert json.loads(out.text) == out.result
    read = t["memory_read"].call({"target": "user"})
    assert read.result["entries"] == ["Prefers short answers"]
    assert read.result["usage"] == "1% — 21/1,375 chars"


def test_result_keys_are_camel_case_and_none_dropped(tools):
    _, t = tools
    out = t["memory_remove"].call({"target": "memory", "oldText": "nothing"})
    assert out.is_error
    assert set(out.result) == {"success", "code", "target", "error", "entryCount", "usage", "currentEntries"}


def test_missing_old_text_returns_inventory_not_exception(tools):
    store, t = tools
    store.add("memory", "one")
    out = t["memory_replace"].call({"target": "memory", "newContent": "x"})
    assert out.is_error and out.result["code"] == "invalid_arguments"
    assert "oldText" in out.result["error"]
    assert out.result["currentEntries"] == ["one"]


def test_invalid_arguments_count_toward_the_retry_limit(tools):
    store, t = tools
    for _ in range(3):
        t["memory_remove"].call({"target": "memory"})
    out = t["memory_remove"].call({"target": "memory"})
    assert out.result["code"] == "retry_limit"


def test_wrong_target_and_extra_fields(tools):
    _, t = tools
    assert t["memory_add"].call({"target": "notes", "content": "x"}).result["code"] == "invalid_arguments"
    assert t["memory_add"].call({"target": "memory", "content": "x", "bogus": 1}).is_error


def test_large_read_is_capped_with_truncated_and_total(tools):
    store, t = tools
    for i in range(60):
        store.add("memory", f"entry {i} " + "z" * 500)
    out = t["memory_read"].call({"target": "memory"})
    assert len(out.text.encode()) <= MAX_RESULT_BYTES
    assert out.result["truncated"] is True and out.result["total"] == 60
    assert 0 < len(out.result["entries"]) < 60
    assert out.result["entryCount"] == 60


def test_failure_target_with_category_and_reason(tools):
    store, t = tools
    out = t["memory_add"].call(
        {"target": "failure", "content": "pip install breaks the venv", "category": "tool-quirk", "failureReason": "used pip"}
    )
    assert out.result["success"] is True
    assert store.entries("failure") == ["[tool-quirk] pip install breaks the venv — Failed: used pip"]
    bad = t["memory_add"].call({"target": "failure", "content": "x", "category": "gossip"})
    assert bad.result["code"] == "invalid_arguments"
    misuse = t["memory_add"].call({"target": "memory", "content": "x", "category": "insight"})
    assert misuse.result["code"] == "invalid_arguments" and "only to target 'failure'" in misuse.result["error"]


def test_project_target_needs_a_project(tools):
    _, t = tools
    out = t["memory_add"].call({"target": "project", "content": "uses make"})
    assert out.result["code"] == "invalid_target"
    assert "There is no project here" in out.result["error"]
