"""A reply body that is not JSON (an HTML page from a proxy, a plain-text error) was described as `its reply has
no "choices" (an empty object)`: the SDK hands such a body back as text. It is now said to be an HTML page or
text, not JSON, quoting its first words (at most 80 characters, credentials redacted, control characters
escaped)."""

from __future__ import annotations

import pytest

from pi_memory.llm import LLMRequestError
from pi_memory.llm.openai_compatible import OpenAICompatibleChatModel, not_json

GITHUB = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
GATEWAY = (b"<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n<body><center><h1>502 Bad Gateway"
           b"</h1></center><hr><center>nginx</center></body></html>")


def make(server) -> OpenAICompatibleChatModel:
    return OpenAICompatibleChatModel("test-model", base_url=server.base_url, sleep=lambda s: None)


def _said(server, clause: str) -> str:
    return (f"The server at {server.base_url} answered, but not with a chat completion: {clause}. Check that "
            "baseUrl points at an OpenAI-compatible API (…/v1).")


@pytest.mark.parametrize(("body", "content_type", "clause"), [
    pytest.param(b"<html>hi</html>", "text/html", 'its reply is an HTML page, not JSON (it begins "<html>hi</html>")',
                 id="tester"),
    pytest.param(GATEWAY, "text/html", 'its reply is an HTML page, not JSON (it begins "<!DOCTYPE html> <html> '
                 '<head><title>502 Bad Gateway</title></head> <body><center…")', id="gateway-page"),
    pytest.param(b"Bad Gateway", "text/plain", 'its reply is text, not JSON (it begins "Bad Gateway")', id="text"),
    pytest.param(f"denied for {GITHUB}".encode(), "text/plain",
                 'its reply is text, not JSON (it begins "denied for [REDACTED:github_token]")', id="credential"),
    pytest.param(b"\x1b[31mred\x1b[0m alert", "text/plain",
                 'its reply is text, not JSON (it begins "\\x1b[31mred\\x1b[0m alert")', id="escape-codes"),
])
def test_a_reply_that_is_not_json_is_said_as_what_it_is(server, body, content_type, clause) -> None:
    server.script({"body": body, "content_type": content_type})
    with pytest.raises(LLMRequestError) as caught:
        make(server).complete("hi", max_tokens=5)
    assert str(caught.value) == _said(server, clause)


def test_the_words_quoted_are_bounded() -> None:
    said = not_json("<html>" + "word " * 10_000)
    assert said == 'its reply is an HTML page, not JSON (it begins "<html>' + "word " * 14 + 'word…")'
    assert not_json(" \n\t") == "its reply was empty, not JSON"
    assert not_json(b"<?xml version='1.0'?><error/>") == "its reply is text, not JSON (it begins \"<?xml version='1.0'?><error/>\")"
