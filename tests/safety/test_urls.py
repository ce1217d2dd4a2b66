"""Server addresses shown in messages and status lines never carry their credentials (pi_memory.safety.urls)."""

from __future__ import annotations

import pytest

from pi_memory.embed.openai_compatible import OpenAICompatibleEmbedder
from pi_memory.llm.errors import LLMConnectionError
from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel
from pi_memory.safety.urls import redact_url
from pi_memory.semantic.backends.rest_client import RestBackend


@pytest.mark.parametrize(("url", "shown"), [
    ("http://user:Sup3rS3cretPw@127.0.0.1:9/v1", "http://user:***@127.0.0.1:9/v1"),
    ("https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x", "https://***@github.com/x"),
    ("postgresql://app:p%40ss@db.internal:5432/mem", "postgresql://app:***@db.internal:5432/mem"),
    ("http://user:@host/v1", "http://user:***@host/v1"),
    ("http://u:p@h:99999/x", "http://u:***@h:99999/x"),  # a port out of range is still masked
    ("http://a:b@[::1/x", "http://***@[::1/x"),  # unparsable: masked up to the last "@"
    ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
    ("not a url", "not a url"),
])
def test_an_address_is_shown_without_its_credentials(url, shown):
    assert redact_url(url) == shown


def test_a_chat_models_description_and_errors_never_show_the_password_of_its_address():
    model = OpenAICompatibleChatModel("x", base_url="http://bob:Sup3rS3cretPw@127.0.0.1:9/v1", api_key="k",
                                      timeout_s=2, max_retries=0)
    assert model.describe() == "openai-compatible model 'x' at http://bob:***@127.0.0.1:9/v1"
    with pytest.raises(LLMConnectionError) as err:  # nothing listens on port 9
        model.complete([{"role": "user", "content": "hi"}], max_tokens=5)
    assert "Sup3rS3cretPw" not in str(err.value) and "http://bob:***@127.0.0.1:9/v1" in str(err.value)


def test_an_embedding_server_and_a_memory_server_are_named_without_their_passwords():
    embedder = OpenAICompatibleEmbedder(base_url="http://bob:Sup3rS3cretPw@127.0.0.1:9/v1", model="m", dim=8)
    assert "Sup3rS3cretPw" not in repr(embedder) and "bob:***@" in repr(embedder)
    with pytest.raises(ValueError) as err:
        RestBackend("ftp://bob:Sup3rS3cretPw@127.0.0.1:9")
    assert "Sup3rS3cretPw" not in str(err.value) and "ftp://bob:***@127.0.0.1:9" in str(err.value)
    assert RestBackend("http://bob:Sup3rS3cretPw@127.0.0.1:9").shown_url == "http://bob:***@127.0.0.1:9"
