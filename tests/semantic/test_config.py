"""Semantic settings: presets with independent overrides (the seed's table), topK, scope keys, files and trust."""

from __future__ import annotations

import json

import pytest

from pi_memory.config import set_trust
from pi_memory.semantic.config import (
    SemanticSettingsError,
    default_user_id,
    load_semantic_settings,
    parse_semantic,
)

# (block, expected autoCapture, autoRecall, toolEnabled) -- the seed's presets and its override examples
CASES = [
    ({}, True, True, True),
    ({"memoryMode": "hybrid"}, True, True, True),
    ({"memoryMode": "active"}, False, False, True),
    ({"memoryMode": "passive"}, True, True, False),
    ({"memoryMode": "hybrid", "autoRecall": False}, True, False, True),  # seed example 1
    ({"memoryMode": "passive", "toolEnabled": True}, True, True, True),  # seed example 2
    ({"memoryMode": "active", "autoCapture": True}, True, False, True),
    ({"memoryMode": "active", "autoRecall": True, "toolEnabled": False}, False, True, False),
    ({"memoryMode": "passive", "autoCapture": False, "autoRecall": False}, False, False, False),
    ({"autoCapture": False}, False, True, True),
    ({"semantic": {"memoryMode": "passive"}, "memoryMode": "active"}, True, True, False),  # nested wins
]


@pytest.mark.parametrize(("block", "capture", "recall", "tool"), CASES)
def test_presets_and_independent_overrides(block, capture, recall, tool):
    s = parse_semantic(block)
    assert (s.auto_capture, s.auto_recall, s.tool_enabled) == (capture, recall, tool)
    assert s.controls() == {"autoCapture": capture, "autoRecall": recall, "toolEnabled": tool}


def test_describe_marks_explicit_overrides():
    s = parse_semantic({"memoryMode": "hybrid", "autoRecall": False})
    assert s.overrides == ("auto_recall",)
    assert s.describe() == "hybrid (autoCapture on, autoRecall off*, toolEnabled on)"


@pytest.mark.parametrize("value", [0, -3])
def test_top_k_must_be_positive_and_says_to_use_auto_recall(value):
    with pytest.raises(SemanticSettingsError, match="autoRecall: false"):
        parse_semantic({"topK": value})


@pytest.mark.parametrize("value", [101, 10**21])
def test_top_k_has_an_upper_bound_of_100(value):
    with pytest.raises(SemanticSettingsError, match=f"topK is {value}, but at most 100 results can be fetched per "
                                                    "search"):
        parse_semantic({"topK": value})
    assert parse_semantic({"topK": 100}).top_k == 100


@pytest.mark.parametrize("value", ["5", 2.5, True, None])
def test_top_k_must_be_an_integer(value):
    with pytest.raises(SemanticSettingsError, match="topK"):
        parse_semantic({"topK": value})


@pytest.mark.parametrize(("block", "key"), [
    ({"memoryMode": "aggressive"}, "memoryMode"),
    ({"recallFrequency": "always"}, "recallFrequency"),
    ({"userIdScope": "global"}, "userIdScope"),
    ({"autoRecall": "yes"}, "autoRecall"),
    ({"recallTokenBudget": 0}, "recallTokenBudget"),
    ({"backend": {"type": "qdrant"}}, "backend.type"),
    ({"recallSources": ["web"]}, "recallSources"),
    ({"semantic": "on"}, "semantic"),
])
def test_invalid_values_name_the_key(block, key):
    with pytest.raises(SemanticSettingsError, match=key.split(".")[0]):
        parse_semantic(block)


def test_defaults():
    s = parse_semantic({})
    assert s.enabled and s.top_k == 5 and s.recall_frequency == "user-input" and s.user_id_scope == "project"
    assert s.recall_token_budget == 1500 and s.recall_sources == ["semantic"] and s.backend.type == "embedded"
    assert s.user_id == default_user_id() and s.user_id
    assert parse_semantic({"userId": ""}).user_id == default_user_id()  # an unset ${USER} falls back
    assert parse_semantic({"semantic": False}).enabled is False
    b = parse_semantic({"backend": {"type": "self-hosted", "baseUrl": "http://127.0.0.1:8765"}}).backend
    assert b.type == "self-hosted" and b.options == {"baseUrl": "http://127.0.0.1:8765"}


def test_files_user_then_trusted_project(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    project = tmp_path / "proj"
    (project / ".pi").mkdir(parents=True)
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    monkeypatch.setenv("SEM_TEST_USER", "carol")
    (agent / "settings.json").write_text(json.dumps({"pi-memory": {
        "userId": "${SEM_TEST_USER}", "memoryMode": "passive", "topK": 7}}))
    (project / ".pi" / "settings.json").write_text(json.dumps({"pi-memory": {"topK": 3, "toolEnabled": True}}))
    s = load_semantic_settings(project, agent)
    assert (s.user_id, s.top_k, s.tool_enabled) == ("carol", 7, False)  # untrusted project ignored
    assert s.sources == (str(agent / "settings.json"),)
    set_trust(project, True)
    s = load_semantic_settings(project, agent)
    assert (s.user_id, s.top_k, s.tool_enabled, s.auto_capture) == ("carol", 3, True, True)
    (project / ".pi" / "settings.json").write_text(json.dumps({"pi-memory": {"topK": 0}}))
    with pytest.raises(SemanticSettingsError, match="settings.json"):
        load_semantic_settings(project, agent)
