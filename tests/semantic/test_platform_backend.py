"""``PlatformBackend`` offline: construction, the missing extra, and the mapping onto a fake Mem0 client."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from pi_memory.semantic.backend import BackendError, MemoryNotFoundError, SemanticBackend
from pi_memory.semantic.backends import platform
from pi_memory.semantic.backends.platform import (
    INSTALL_HINT,
    PLATFORM_DISCLOSURE,
    MissingExtraError,
    PlatformBackend,
)
from pi_memory.semantic.models import Scope

ALICE = Scope(user_id="alice", project_id="p1", agent_id="pi")


def test_missing_extra_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "mem0", None)  # as if mem0ai were not installed
    with pytest.raises(MissingExtraError) as caught:
        PlatformBackend(api_key="m0-key")
    assert INSTALL_HINT in str(caught.value) and "embedded" in str(caught.value)
    assert INSTALL_HINT == "pip install 'pi-memory[platform]'"


def test_missing_api_key_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(platform, "_mem0_installed", lambda: True)
    monkeypatch.delenv("MEM0_API_KEY", raising=False)
    with pytest.raises(BackendError, match="MEM0_API_KEY"):
        PlatformBackend()


def test_construction_is_offline(monkeypatch):
    monkeypatch.setattr(platform, "_mem0_installed", lambda: True)
    monkeypatch.setenv("MEM0_API_KEY", "m0-from-env")
    backend = PlatformBackend(host="https://mem0.invalid")
    assert backend.name == "platform" and backend._client is None  # nothing built, nothing contacted


def test_disclosure_says_data_leaves_the_machine():
    text = PLATFORM_DISCLOSURE.lower()
    assert "mem0" in text and "leaves this machine" in text and "embedded" in text and "self-hosted" in text
    assert PlatformBackend.disclosure == PLATFORM_DISCLOSURE


class FakeClient:
    """The subset of ``mem0.MemoryClient`` the backend calls, with Mem0 Cloud's answer shapes."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.calls: list[tuple[str, Any]] = []

    def add(self, messages: list[dict[str, str]], **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("add", kwargs))
        memory_id = f"m{sum(k.startswith('m') for k in self.items) + 1}"
        self.items[memory_id] = {"id": memory_id, "memory": messages[0]["content"], "user_id": kwargs["user_id"],
                                 "metadata": kwargs.get("metadata"), "created_at": "2026-05-01T12:00:00Z"}
        return {"results": [{"id": memory_id, "memory": messages[0]["content"], "event": "ADD"}]}

    def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("search", kwargs))
        user = kwargs["filters"]["user_id"]
        return {"results": [dict(i, score=0.5) for i in self.items.values() if i["user_id"] == user]}

    def get_all(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("get_all", kwargs))
        return {"results": [i for i in self.items.values() if i["user_id"] == kwargs["filters"]["user_id"]]}

    def get(self, memory_id: str) -> dict[str, Any]:
        if memory_id not in self.items:
            raise RuntimeError("Memory not found")
        return self.items[memory_id]

    def update(self, memory_id: str, text: str) -> dict[str, Any]:
        self.calls.append(("update", memory_id))
        self.items[memory_id]["memory"] = text
        return {"message": "ok"}

    def delete(self, memory_id: str) -> dict[str, Any]:
        self.calls.append(("delete", memory_id))
        del self.items[memory_id]
        return {"message": "ok"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        return [{"memory_id": memory_id, "event": "ADD", "new_memory": "x", "created_at": "2026-05-01T12:00:00Z"}]


def test_mapping_onto_a_fake_client():
    fake = FakeClient()
    fake.items["bob-1"] = {"id": "bob-1", "memory": "Bob's fact", "user_id": "bob:project:p1:agent:pi"}
    backend = PlatformBackend(client=fake)
    assert isinstance(backend, SemanticBackend)

    mem = backend.add("Alice ships on Tuesdays", scope=ALICE, source={"session_id": "s1"},
                      metadata={"user_id": "bob", "k": 1}, observed_at="2026-05-01T09:00:00Z")
    sent = fake.calls[0][1]
    assert sent["user_id"] == "alice:project:p1:agent:pi" and sent["infer"] is False
    assert "agent_id" not in sent and sent["metadata"]["k"] == 1 and "user_id" not in sent["metadata"]
    assert mem.scope == ALICE and mem.id == "m1"

    hits = backend.search("when does alice ship", scope=ALICE)
    assert [h.memory.id for h in hits] == ["m1"] and hits[0].memory.source.session_id == "s1"
    assert fake.calls[-1][1]["filters"] == {"user_id": "alice:project:p1:agent:pi"}
    assert [m.id for m in backend.get_all(scope=ALICE)] == ["m1"]

    assert backend.get("bob-1", scope=ALICE) is None and backend.get("nope", scope=ALICE) is None
    assert backend.delete("bob-1", scope=ALICE) is False and ("delete", "bob-1") not in fake.calls
    assert backend.history("bob-1", scope=ALICE) == []
    with pytest.raises(MemoryNotFoundError):
        backend.update("bob-1", "hijack", scope=ALICE)

    assert backend.update("m1", "Alice ships on Wednesdays", scope=ALICE).text == "Alice ships on Wednesdays"
    assert [e.event for e in backend.history("m1", scope=ALICE)] == ["ADD"]
    assert backend.delete("m1", scope=ALICE) is True and "m1" not in fake.items


def test_client_errors_become_backend_errors():
    class Failing(FakeClient):
        def search(self, query: str, **kwargs: Any) -> dict[str, Any]:
            raise ConnectionError("network is unreachable")

    with pytest.raises(BackendError, match="Mem0 Cloud search failed.*unreachable"):
        PlatformBackend(client=Failing()).search("x", scope=ALICE)
