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
    # a tester's cases: a key in the query string, and an address written without its scheme
    ("http://127.0.0.1:9/v1?api_key=QuerySecret99zz&x=1", "http://127.0.0.1:9/v1?api_key=***&x=1"),
    ("https://acct.blob.core.windows.net/c?sv=2020&sig=Abc123%3D", "https://acct.blob.core.windows.net/c?sv=2020&sig=***"),
    ("http://h/x?page=2&q=kafka", "http://h/x?page=2&q=kafka"),
    ("alice:NoScheme99zz@127.0.0.1:9/v1", "alice:***@127.0.0.1:9/v1"),
    ("token123@127.0.0.1:9/v1", "***@127.0.0.1:9/v1"),
    ("127.0.0.1:9/v1", "127.0.0.1:9/v1"),
    # a tester's cases: PostgreSQL addresses in libpq's key=value form, and secrets in a query string
    ("host=db.internal port=5432 password=SuperSecretPw dbname=mem", "host=db.internal port=5432 password=*** dbname=mem"),
    ("host=h password='Super Secret \\' Pw' user=app", "host=h password=*** user=app"),
    (" host = h  password = SuperSecretPw  sslpassword=KeyPw99 ", " host = h  password = ***  sslpassword=***"),
    ("host=h password SuperSecretPw dbname=mem", "host=h ***"),  # unreadable from the typo on: hidden
    ("password='never closed SuperSecretPw", "password= ***"),
    ("dbname=postgresql://app:SuperSecretPw@h/mem user=x", "dbname=postgresql://app:***@h/mem user=x"),
    ("host=h dbname=mem user=app", "host=h dbname=mem user=app"),
    ("postgresql://app@h/mem?password=SuperSecretPw&sslmode=require", "postgresql://***@h/mem?password=***&sslmode=require"),
    ("postgresql://h/mem?PGPASSWORD=SuperSecretPw&sslpassword=KeyPw99", "postgresql://h/mem?PGPASSWORD=***&sslpassword=***"),
])
def test_an_address_is_shown_without_its_credentials(url, shown):
    assert redact_url(url) == shown


@pytest.mark.parametrize(("text", "url", "shown"), [
    ('missing "=" after "SuperSecretPw" in connection info string', "host=h password SuperSecretPw",
     'missing "=" after "***" in connection info string'),
    ("auth failed for p@ss and p%40ss", "postgresql://u:p%40ss@h/db", "auth failed for *** and ***"),
    ("connection refused", "host=h password=SuperSecretPw", "connection refused"),
])
def test_an_error_text_quoting_the_address_loses_what_the_address_hides(text, url, shown):
    from pi_memory.safety.urls import hide_url_secrets

    assert hide_url_secrets(text, url) == shown


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


@pytest.mark.parametrize(("base_url", "why"), [
    ("http://alice:Sup3rS3cretPw@[::1", "Invalid IPv6 URL"),
    ("http://alice:Sup3rS3cretPw@127.0.0.1:99999/v1", "out of range"),
    ("127.0.0.1:11434/v1", "does not start with http:// or https://"),
    ("http:///v1", "names no host"),
])
def test_a_base_url_that_is_no_address_is_a_settings_error_with_the_password_masked(base_url, why):
    """A tester's case: "http://alice:pw@[::1" ended `pi-memory mcp`, `semantic status` and `dream` in the HTTP
    library's InvalidURL traceback."""
    from pi_memory.llm.anthropic_provider import AnthropicChatModel
    from pi_memory.llm.errors import LLMConfigError

    for build in (lambda: OpenAICompatibleChatModel("x", base_url=base_url, api_key="k"),
                  lambda: AnthropicChatModel("x", base_url=base_url, api_key="k")):
        with pytest.raises(LLMConfigError) as err:
            build()
        assert why in str(err.value) and "Sup3rS3cretPw" not in str(err.value)
        assert "write it as http://host:port/v1" in str(err.value)
