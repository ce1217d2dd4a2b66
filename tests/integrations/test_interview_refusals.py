"""An interview answer the store refuses is never echoed as given: `/memory-interview` (the bridge's
`interview_save`) and `pi-memory interview` printed `not saved (secret): Role and work: my password is
hunter2hunter2. — …`, the credential the refusal kept out of USER.md on the screen (a tester's case). The answer is
shown redacted and escaped, with the store's reason in a person's words."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SECRETS = [
    ("my password is hunter2hunter2", "hunter2hunter2", "Role and work: my password is [REDACTED:password_in_prose].",
     "password_in_prose"),
    ("my AWS secret is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "Role and work: my AWS secret is [REDACTED:secret_assignment].", "secret_assignment"),
    ("deploys with ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab",
     "Role and work: deploys with [REDACTED:github_token].", "github_token"),
]


@pytest.fixture
def bridge(make_bridge):
    return make_bridge({"semantic": False})


def save(bridge, answers: dict) -> dict:
    reply = bridge.handle(json.dumps({"id": 1, "method": "command", "params": {
        "name": "interview_save", "args": "", "data": {"answers": answers}}}))
    return reply["result"]


@pytest.mark.parametrize(("answer", "secret", "shown", "finding"), SECRETS)
def test_pi_interview_save_never_echoes_a_refused_credential(bridge, answer, secret, shown, finding):
    r = save(bridge, {"name": "Dana", "role": answer})
    assert r["level"] == "warning" and secret not in r["text"]
    assert r["text"].splitlines()[1] == (
        f"not saved (secret): {shown} — the answer contains a credential ({finding}), and secrets must never be "
        "stored there. Save where the secret lives instead of its value, e.g. \"API key is in ~/.config/x (env "
        "OPENAI_API_KEY)\".")


@pytest.mark.parametrize(("answer", "shown"), [
    ("likes \x1b[31mred\x1b[0m", "Role and work: likes \\x1b[31mred\\x1b[0m."),
    ("bell\x07 ring", "Role and work: bell\\x07 ring."),
])
def test_a_refused_answer_with_control_characters_is_shown_escaped(bridge, answer, shown):
    r = save(bridge, {"role": answer})
    assert "\x1b" not in r["text"] and "\x07" not in r["text"]
    assert r["text"].splitlines()[0].startswith(f"not saved (invalid_content): {shown} — The content holds control")


def test_cli_interview_never_echoes_a_refused_credential(tmp_path):
    env = {**os.environ, "PI_CODING_AGENT_DIR": str(tmp_path / "agent"), "PI_MEMORY_DIR": str(tmp_path / "data")}
    for answer, secret, shown, _ in SECRETS:
        done = subprocess.run([sys.executable, "-m", "pi_memory", "interview"], input=f"Dana\n{answer}\n\n\n\n",
                              capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
        assert done.returncode == 1 and secret not in done.stdout + done.stderr
        assert f"\nnot saved (secret): {shown} — the answer contains a credential" in done.stdout
    assert (tmp_path / "data" / "USER.md").read_text(encoding="utf-8") == "The user's name is Dana.\n"
