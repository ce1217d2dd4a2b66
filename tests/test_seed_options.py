"""The README's table of pi-hermes-memory's options stays true: every option is listed, what it says we accept is
a key the settings know, what it says we do not read is not (so adding one means updating the table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pi_memory.config import known_keys, load_settings

README = Path(__file__).resolve().parents[1] / "README.md"
TABLE = README.read_text(encoding="utf-8").split("<!-- seed-options:start -->")[1].split("<!-- seed-options:end -->")[0]
ROWS = [line.split("|")[1:4] for line in TABLE.splitlines() if line.startswith("| `")]
# the options pi-hermes-memory's README documents (its configuration example and table)
SEED_OPTIONS = [
    "lazyInitialization", "memoryMode", "memoryPolicyStyle", "memoryPolicyCustomText", "standingInstructionsEnabled",
    "memoryCharLimit", "userCharLimit", "projectCharLimit", "memoryDir", "projectsMemoryDir", "sessionSearch",
    "sessionRetentionDays", "quickCheckOnOpen", "llmModelOverride", "llmThinkingOverride", "childExtensionPaths",
    "nudgeInterval", "nudgeToolCalls", "reviewRecentMessages", "reviewEnabled", "reviewTransport",
    "memoryOverflowStrategy", "autoConsolidate", "correctionDetection", "correctionStrongPatterns",
    "correctionWeakPatterns", "correctionNegativePatterns", "correctionDirectiveWords", "failureInjectionEnabled",
    "failureInjectionMaxAgeDays", "failureInjectionMaxEntries", "consolidationTimeoutMs", "consolidationChunking",
    "consolidationChunkChars", "usageHitTrackingEnabled", "consolidationUsageSignals", "overflowGraceMs",
    "autoConsolidationWarnOnFailure", "flushOnCompact", "flushCompactTimeoutMs", "flushOnShutdown", "flushMinTurns",
    "flushRecentMessages",
]


def keys(cell: str) -> list[str]:
    return re.findall(r"`([A-Za-z]+)`", cell)


def test_every_seed_option_is_in_the_table():
    listed = [k for option, _, _ in ROWS for k in keys(option)]
    assert sorted(listed) == sorted(SEED_OPTIONS)


@pytest.mark.parametrize(("option", "status"), [(k, s.strip()) for o, s, _ in ROWS for k in keys(o)])
def test_the_table_says_what_the_settings_do(option, status):
    assert status in ("accepted", "not read")
    assert (option in known_keys()) is (status == "accepted"), option


def test_seed_values_for_the_new_options_are_read(tmp_path, monkeypatch):
    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    block = {"lazyInitialization": True, "memoryMode": "policy-only", "sessionSearch": {"variant": "anchors"},
             "sessionRetentionDays": 0, "quickCheckOnOpen": False, "llmModelOverride": "local/m",
             "llmThinkingOverride": "off"}
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}))
    s = load_settings(tmp_path)
    assert (s.lazy_initialization, s.prompt_mode, s.session_search_variant, s.session_retention_days,
            s.quick_check_on_open, s.llm_model_override, s.llm_thinking_override) == (
        True, "policy", "anchors", None, False, "local/m", "off")
    assert s.warnings == ()


@pytest.mark.parametrize(("block", "words"), [
    ({"sessionSearch": {"variant": "snippets"}}, "sessionSearch.variant"),
    ({"sessionSearch": "anchors"}, "sessionSearch"),
    ({"sessionRetentionDays": -1}, "sessionRetentionDays"),
    ({"lazyInitialization": "yes"}, "lazyInitialization"),
])
def test_bad_values_are_settings_errors(tmp_path, monkeypatch, block, words):
    from pi_memory.config import SettingsError

    agent = tmp_path / "agent"
    agent.mkdir()
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(agent))
    (agent / "settings.json").write_text(json.dumps({"pi-memory": block}))
    with pytest.raises(SettingsError, match=words):
        load_settings(tmp_path)
