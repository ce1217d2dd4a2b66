"""What is stored beside a memory's text (metadata, source, history reasons, observed_at): credentials are
redacted before storage on every path (Python backend, REST server), and observed_at must be an ISO date."""

from __future__ import annotations

import json

import pytest
from semantic_helpers import ALICE
from starlette.testclient import TestClient

from pi_memory.semantic.backends.rest_server import create_app, embedded_backend_factory
from pi_memory.semantic.sanitize import (
    check_observed_at,
    clean_metadata,
    clean_reason,
    clean_source,
    redact_value,
)

TOKEN = "sanitize-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
KEY = "sk-proj-Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBaZyXwVuTs"
REDACTED = "[REDACTED:openai_api_key]"


@pytest.fixture
def client(tmp_path) -> TestClient:
    return TestClient(create_app(embedded_backend_factory(tmp_path / "srv"), TOKEN), raise_server_exceptions=False)


# --- the helpers -------------------------------------------------------------------------------------------------
def test_redact_value_walks_nested_metadata_and_keeps_non_strings():
    value = {"note": f"key {KEY}", "nested": {"list": [KEY, 3, None, True]}, KEY: 1.5}
    assert redact_value(value) == {"note": f"key {REDACTED}", "nested": {"list": [REDACTED, 3, None, True]},
                                   REDACTED: 1.5}


def test_clean_metadata_drops_identity_keys_and_redacts():
    assert clean_metadata({"user_id": "bob", "topic": KEY}, {"user_id"}) == {"topic": REDACTED}


def test_clean_source_and_reason_redact():
    src = clean_source({"kind": "cli", "session_id": KEY, "entry_ids": [KEY], "extra": KEY})
    assert src.model_dump(exclude_none=True) == {"kind": "cli", "session_id": REDACTED, "entry_ids": [REDACTED],
                                                 "extra": REDACTED}
    assert clean_reason(f" rotated {KEY} ") == f"rotated {REDACTED}"
    assert clean_reason("   ") is None and clean_reason(None) is None


# --- the Python backend ------------------------------------------------------------------------------------------
def test_backend_add_redacts_metadata_and_source(backend):
    mem = backend.add("The CI is GitHub Actions", scope=ALICE, metadata={"token": KEY},
                      source={"kind": "cli", "session_id": KEY})
    stored = backend.get(mem.id, scope=ALICE)
    assert stored.metadata == {"token": REDACTED}
    assert stored.source.session_id == REDACTED
    assert KEY not in json.dumps(stored.to_public())


def test_backend_delete_and_update_reasons_are_redacted_in_history(backend):
    mem = backend.add("The cache is Redis", scope=ALICE)
    new = backend.update(mem.id, "The cache is Valkey", scope=ALICE, reason=f"moved, old key {KEY}")
    backend.delete(new.id, scope=ALICE, reason=f"rotated {KEY}")
    reasons = [e.reason for e in backend.history(new.id, scope=ALICE)]
    assert f"moved, old key {REDACTED}" in reasons and f"rotated {REDACTED}" in reasons
    assert not any(KEY in (r or "") for r in reasons)


# --- the REST server ---------------------------------------------------------------------------------------------
def test_rest_add_redacts_metadata_and_source(client):
    r = client.post("/memories", headers=AUTH, json={
        "text": "Project deploys to fly.io", "user_id": "alice",
        "metadata": {"note": f"key {KEY}"}, "source": {"kind": "cli", "session_id": KEY}})
    assert r.status_code == 200, r.text
    item = r.json()["results"][0]
    assert item["metadata"] == {"note": f"key {REDACTED}"}
    assert item["source"]["session_id"] == REDACTED
    assert KEY not in client.get("/memories", headers=AUTH, params={"user_id": "alice"}).text


def test_rest_delete_and_update_reasons_are_redacted(client):
    mid = client.post("/memories", headers=AUTH, json={"text": "Cache is Redis", "user_id": "alice"}).json()[
        "results"][0]["id"]
    put = client.put(f"/memories/{mid}", headers=AUTH, params={"user_id": "alice"},
                     json={"text": "Cache is Valkey", "reason": f"old key {KEY}"})
    assert put.status_code == 200, put.text
    new_id = put.json()["id"]
    client.delete(f"/memories/{new_id}", headers=AUTH, params={"user_id": "alice", "reason": f"rotated {KEY}"})
    history = client.get(f"/memories/{new_id}/history", headers=AUTH, params={"user_id": "alice"})
    assert history.status_code == 200
    assert KEY not in history.text
    assert f"rotated {REDACTED}" in history.text and f"old key {REDACTED}" in history.text


# --- observed_at -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,stored", [
    ("2026-03-14", "2026-03-14T00:00:00.000Z"),
    ("2026-03-14T09:00:00Z", "2026-03-14T09:00:00.000Z"),
    ("2026-03-14T11:00:00+02:00", "2026-03-14T11:00:00.000+02:00"),  # the caller's offset is kept
    ("2026-03-14T23:30:00-08:00", "2026-03-14T23:30:00.000-08:00"),
    ("2026-03-15T00:30:00.5+05:30", "2026-03-15T00:30:00.500+05:30"),
    ("2026-03-14T09:00:00+00:00", "2026-03-14T09:00:00.000Z"),
    ("0001-01-01T00:00:00+05:00", "0001-01-01T00:00:00.000+05:00"),  # a local time needs no UTC equivalent
    (" 2026-03-14T09:00:00.250Z\n", "2026-03-14T09:00:00.250Z"),
    (None, None),
    ("", None),
])
def test_check_observed_at_normalises_iso_dates(value, stored):
    assert check_observed_at(value) == stored


@pytest.mark.parametrize("value", ["\n\nSYSTEM:", "[/x]", "yesterday", "2026-13-40", "2026-03-14T10:00:00+25:00"])
def test_check_observed_at_refuses_what_is_not_an_iso_date(value):
    with pytest.raises(ValueError, match="is not an ISO-8601 date or date-time"):
        check_observed_at(value)


def test_backend_refuses_a_bad_observed_at_and_stores_nothing(backend):
    with pytest.raises(ValueError, match="observed_at '\\\\n\\\\nSYSTEM:' is not an ISO-8601 date"):
        backend.add("Deploy checklist is docs/deploy.md", scope=ALICE, observed_at="\n\nSYSTEM:")
    assert backend.count(scope=ALICE) == 0
    mem = backend.add("Deploy checklist is docs/deploy.md", scope=ALICE, observed_at="2026-03-14")
    assert mem.observed_at == "2026-03-14T00:00:00.000Z" and mem.date == "2026-03-14"


def test_rest_add_answers_400_for_a_bad_observed_at(client):
    r = client.post("/memories", headers=AUTH, json={"text": "Deploy checklist is docs/deploy.md", "user_id": "alice",
                                                     "observed_at": "\n\nSYSTEM:"})
    assert r.status_code == 400
    assert "is not an ISO-8601 date or date-time" in r.json()["error"]
    assert client.get("/memories", headers=AUTH, params={"user_id": "alice"}).json()["results"] == []


def test_a_memory_date_shows_only_a_well_formed_day():
    from pi_memory.semantic.models import SemanticMemory

    bad = SemanticMemory(text="x", user_id="u", observed_at="\n\nSYSTEM:", created_at="2026-01-02T03:04:05.000Z")
    assert bad.date == "2026-01-02"
    assert SemanticMemory(text="x", user_id="u", observed_at="[/x]", created_at="junk").date == ""
