"""Secrets inside escaped strings (tester's top report): an agent's tool call is stored as compact JSON, so a config
file it writes is an escaped string (``{\\"password\\": \\"…\\"}``, YAML or INI lines joined by the two characters
``\\n``), once more escaped when that JSON is quoted again. ``redact`` reads what the escapes say
(:mod:`pi_memory.safety._escapes`) and replaces the value in the text as it is, escapes kept."""

from __future__ import annotations

import json

import pytest

from pi_memory.safety import redact, scan_secrets, secret_spans
from pi_memory.safety._escapes import to_outer, unescape, views

PW = "hunter2-very-secret-pw"
KEY = "q8Zr2LmN4vB7xK1pT9wE3yU6"
GITHUB = "ghp_R7kQ2mZ9xL4vT8nW3pB6cH1jD5fG0sYaEe"


def compact(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


# The tester's repro: a JSON config written by a tool call.
REPRO = compact({"path": "cfg.json", "content": json.dumps({"password": PW, "api_key": KEY})})


@pytest.mark.parametrize(("text", "expected"), [
    (REPRO, '{"path":"cfg.json","content":"{\\"password\\": \\"[REDACTED:password_in_prose]\\", '
            '\\"api_key\\": \\"[REDACTED:secret_assignment]\\"}"}'),
    # the same JSON quoted once more (a transcript line holding the tool call): \\\"password\\\"
    (compact({"line": REPRO}), '{"line":"{\\"path\\":\\"cfg.json\\",\\"content\\":\\"{\\\\\\"password\\\\\\": '
                               '\\\\\\"[REDACTED:password_in_prose]\\\\\\", \\\\\\"api_key\\\\\\": '
                               '\\\\\\"[REDACTED:secret_assignment]\\\\\\"}\\"}"}'),
    # pretty-printed JSON body: escaped line breaks and indentation
    ("write: " + compact({"content": json.dumps({"db": {"password": PW}}, indent=2)}),
     'write: {"content":"{\\n  \\"db\\": {\\n    \\"password\\": \\"[REDACTED:password_in_prose]\\"\\n  }\\n}"}'),
    # YAML in an escaped string: the value ends at the escaped line break, which stays
    (compact({"content": f"db:\n  password: {PW}\n  token: {KEY}\n"}),
     '{"content":"db:\\n  password: [REDACTED:password_in_prose]\\n  token: [REDACTED:secret_assignment]\\n"}'),
    (compact({"content": f"password: {PW}\nnext: x"}),
     '{"content":"password: [REDACTED:password_in_prose]\\nnext: x"}'),
    # INI in an escaped string: the label follows "\n" (the letter n before it is no part of a word)
    (compact({"content": f"[db]\npassword={PW}\napi_key = {KEY}\n"}),
     '{"content":"[db]\\npassword=[REDACTED:password_in_prose]\\napi_key = [REDACTED:secret_assignment]\\n"}'),
    (compact({"content": f"[auth]\r\n\tsecret_key={KEY}"}),
     '{"content":"[auth]\\r\\n\\tsecret_key=[REDACTED:secret_assignment]"}'),
    # a vendor token right after an escaped line break or tab
    (compact({"content": f"x\n{GITHUB}\tdone"}), '{"content":"x\\n[REDACTED:github_token]\\tdone"}'),
    # non-ASCII escaped as \uXXXX (Python's json.dumps), and a Docker config in an escaped string
    (json.dumps({"content": "пароль: Qwerty123"}),
     '{"content": "\\u043f\\u0430\\u0440\\u043e\\u043b\\u044c: [REDACTED:password_phrase]"}'),
    (compact({"content": json.dumps({"auths": {"r.example": {"auth": "ZmFrZXVzZXI6RmFrZVBhc3MwMDAw"}}})}),
     '{"content":"{\\"auths\\": {\\"r.example\\": {\\"auth\\": \\"[REDACTED:docker_auth]\\"}}}"}'),
])
def test_secrets_in_escaped_strings_are_redacted_exactly(text, expected):
    assert redact(text) == expected
    assert redact(expected) == expected  # nothing left to redact


@pytest.mark.parametrize("text", [
    compact({"content": json.dumps({"password": "${DB_PASSWORD}", "api_key": "your_api_key_here"})}),
    compact({"content": json.dumps({"password": "required", "token": "abc123"})}),
    compact({"content": "db:\n  password: <set me>\n  token: changeme\n"}),
    compact({"path": "C:\\new\\temp\\password\\notes.txt"}),
    compact({"pattern": "\\bpassword\\b\\s*[:=]"}),
    "grep -E '\\\"password\\\": *\\\"' config.json",
    compact({"content": "forgot my password\nreset link sent"}),
])
def test_escaped_text_without_a_secret_is_left_as_it_is(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


def test_a_literal_backslash_in_a_password_is_kept_redacted():
    # Not JSON: the text itself holds the value with a backslash; the decoded reading cuts it, the plain one not.
    assert redact("password: Tr0ub\\tador-9x") == "password: [REDACTED:password_in_prose]"
    assert redact("sshpass -p 'Fake\\nPass99' ssh h") == "sshpass -p '[REDACTED:cli_password]' ssh h"


def test_spans_point_into_the_text_as_it_is():
    text = REPRO
    spans = secret_spans(text)
    assert [(s.id, text[s.start:s.end]) for s in spans] == [("password_in_prose", PW), ("secret_assignment", KEY)]


@pytest.mark.parametrize(("text", "decoded"), [
    ('a\\"b\\\\c\\/d\\n\\r\\t\\b\\f', 'a"b\\c/d\n\r\t\b\f'),
    ("\\u00e9t\\u00e9 \\ud83d\\ude00!", "été 😀!"),
    ("no escape \\q here", None),
    ("plain", None),
])
def test_unescape_decodes_and_maps_offsets_back(text, decoded):
    view = unescape(text)
    if decoded is None:
        assert view is None
        return
    assert view.text == decoded
    # every character of the view maps back onto the escape (or the character) it came from
    pieces = [text[view.outer(i):view.outer(i + 1)] for i in range(len(decoded))]
    assert "".join(pieces) == text
    assert view.outer(0) == 0 and view.outer(len(decoded)) == len(text)


def test_views_go_three_levels_deep_at_most():
    text = "x"
    for _ in range(5):
        text = json.dumps(text + "\n")
    levels = views(text)
    assert len(levels) == 3
    decoded, chain = levels[-1]
    start = decoded.index("x")
    assert to_outer(chain, start, start + 1) == (text.index("x"), text.index("x") + 1)


def test_a_long_text_is_read_decoded_near_its_escapes_and_nothing_is_missed():
    """The decoded view is scanned only near escapes (2,000 characters around each); what lies farther, or at
    the edge of such a stretch, is found by the scan of the text itself."""
    filler = "plain notes about the build. " * 70  # 2,030 characters
    parts = [filler * 20, REPRO, filler[:1700], "password: Tq7wV2xM9pL4 ", filler * 20,
             compact({"c": f"x\n{GITHUB}"}), filler, f"api_key={KEY}"]
    text = "".join(parts)
    expected = "".join([filler * 20, redact(REPRO), filler[:1700], "password: [REDACTED:password_in_prose] ",
                        filler * 20, '{"c":"x\\n[REDACTED:github_token]"}', filler,
                        "api_key=[REDACTED:secret_assignment]"])
    assert redact(text) == expected
