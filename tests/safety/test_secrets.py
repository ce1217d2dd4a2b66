"""Behaviour of the secret scanner and of redact(). All secrets below are fake but format-valid."""

from __future__ import annotations

import pytest

from pi_memory.safety import Finding, redact, scan_secrets, scan_threats
from pi_memory.safety.secrets import PATTERNS

OPENAI = "sk-proj-FAKEfake0000EXAMPLE1111example2222TEST0000"
ANTHROPIC = "sk-ant-api03-FAKEexample0000000000000000000000"
GITHUB = "ghp_FAKE00000000000000000000000000000TEST"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"  # AWS's own documentation example
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's own documentation example
GOOGLE = "AIzaSyFAKEexample" + "0" * 22
SLACK = "xoxb-0000000000-0000000000000-FAKEexampleTOKEN"
STRIPE = "sk_test_FAKE0000example0000"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5"
    "MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)  # the jwt.io example token
PEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKEFAKEexample\n-----END OPENSSH PRIVATE KEY-----"

# (id, text, the exact secret value the finding must span)
CASES = [
    ("openai_api_key", f"key {OPENAI} here", OPENAI),
    ("openai_api_key", "sk-FAKEexample000000000000000000000000000000000000",
     "sk-FAKEexample000000000000000000000000000000000000"),
    ("anthropic_api_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("github_token", f"token {GITHUB}.", GITHUB),
    ("github_token", "github_pat_FAKE0000000000000000000000_example", "github_pat_FAKE0000000000000000000000_example"),
    ("aws_access_key_id", f"id={AWS_ID}", AWS_ID),
    ("aws_access_key_id", "ASIAFAKEEXAMPLE00000", "ASIAFAKEEXAMPLE00000"),
    ("aws_secret_access_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("google_api_key", f"maps: {GOOGLE}", GOOGLE),
    ("slack_token", f"bot {SLACK}", SLACK),
    ("slack_token", "xapp-1-FAKE000000-0000000000000-example", "xapp-1-FAKE000000-0000000000000-example"),
    ("stripe_key", f"STRIPE={STRIPE}", STRIPE),
    ("stripe_key", "rk_live_FAKEexample00000000", "rk_live_FAKEexample00000000"),
    ("jwt", f"cookie {JWT}", JWT),
    ("private_key_block", f"key:\n{PEM}\nend", PEM),
    ("private_key_block", "-----BEGIN RSA PRIVATE KEY----- MIIEFAKE\nnext", "-----BEGIN RSA PRIVATE KEY----- MIIEFAKE"),
    ("bearer_token", "Authorization: Bearer FAKE0000example0000token", "FAKE0000example0000token"),
    ("password_in_prose", "password: hunter22", "hunter22"),
    ("password_in_prose", "Password for Test WebUI: CANARY123", "CANARY123"),
    ("password_in_prose", "pw = 's3cr3t!!'", "s3cr3t!!"),
    ("password_in_prose", 'PASSWORD="FAKEpass99"', "FAKEpass99"),
    ("password_in_prose", "the staging db password is Summer2024!", "Summer2024!"),
    ("password_in_prose", "PGPASSWORD=hunter22xyz psql", "hunter22xyz"),
    ("password_in_prose", '{"password": "FAKEpass99"}', "FAKEpass99"),
    ("password_in_prose", "password: correcthorse", "correcthorse"),
    ("secret_assignment", 'api_key = "FAKEa1b2c3d4e5f6g7h8i9"', "FAKEa1b2c3d4e5f6g7h8i9"),
    ("secret_assignment", "client_secret: FAKE9f8e7d6c5b4a3210ffee", "FAKE9f8e7d6c5b4a3210ffee"),
    ("secret_assignment", "SESSION_TOKEN=FAKE0a1b2c3d4e5f6a7b8c9d", "FAKE0a1b2c3d4e5f6a7b8c9d"),
]


def test_cases_cover_every_secret_id():
    assert {c[0] for c in CASES} == {p.id for p in PATTERNS}


@pytest.mark.parametrize(("ident", "text", "value"), CASES)
def test_secret_is_found_with_value_span(ident, text, value):
    (finding,) = scan_secrets(text)
    assert finding.id == ident
    assert finding.category == "secret"
    start, end = finding.span
    assert text[start:end] == value


@pytest.mark.parametrize(
    "text",
    [
        "sk-short",
        "Bearer short",
        "AKIA is not enough",
        "the auth token expires",
        "trade secret",
        "token = abc123",
        "use .env for local configuration",
        "set OPENAI_API_KEY in your shell",
        "OPENAI_API_KEY",
        "docker run -e OPENAI_API_KEY app",
        "forgot my password",
        "the password policy requires 12 chars",
        "reset the password",
        "Password: see the vault",
        "password: required",
        "password: stored in the keychain",
        "The password for this account is managed by IT.",
        "password: ${DB_PASSWORD}",
        "password = getpass.getpass()",
        "db.connect(password=PASSWORD)",
        "conn(password=settings.db_password)",
        "PASSWORD_MIN_LENGTH=12",
        "pwd: /home/me/project",
        "api_key = os.environ.get('API_KEY')",
        "token_url = https://oauth2.example.com/token",
        "secret_name = your_api_key_here",
        "sk-learn-compatible-estimators",
        "pk_test_ keys are publishable",
        "Bearer tokens go in the Authorization header",
        "the JWT header starts with eyJ",
    ],
)
def test_allowed_text_has_no_secret(text):
    assert scan_secrets(text) == []


def test_specific_id_wins_over_generic_assignment():
    assert [f.id for f in scan_secrets(f"OPENAI_API_KEY={OPENAI}")] == ["openai_api_key"]
    assert [f.id for f in scan_secrets(f"Authorization: Bearer {JWT}")] == ["jwt"]
    assert [f.id for f in scan_secrets(f"STRIPE_SECRET_KEY={STRIPE}")] == ["stripe_key"]


def test_findings_deduplicated_in_text_order():
    text = f"a {GITHUB} b {OPENAI} c {GITHUB}x"
    found = scan_secrets(text)
    assert [f.id for f in found] == ["github_token", "openai_api_key"]
    assert found[0] == Finding("github_token", "secret", (2, 2 + len(GITHUB)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password: hunter22", "password: [REDACTED:password_in_prose]"),
        ("Password for Test WebUI: CANARY123.", "Password for Test WebUI: [REDACTED:password_in_prose]."),
        ("pw = 's3cr3t!!' ok", "pw = '[REDACTED:password_in_prose]' ok"),
        (f"export OPENAI_API_KEY={OPENAI}", "export OPENAI_API_KEY=[REDACTED:openai_api_key]"),
        (f"curl -H 'Authorization: Bearer {JWT}' x", "curl -H 'Authorization: Bearer [REDACTED:jwt]' x"),
        ("Authorization: Bearer FAKE0000example0000token", "Authorization: Bearer [REDACTED:bearer_token]"),
        (f"keys: {AWS_ID} / aws_secret_access_key={AWS_SECRET}",
         "keys: [REDACTED:aws_access_key_id] / aws_secret_access_key=[REDACTED:aws_secret_access_key]"),
        (f"before\n{PEM}\nafter", "before\n[REDACTED:private_key_block]\nafter"),
        (f"{GITHUB} and {GITHUB}", "[REDACTED:github_token] and [REDACTED:github_token]"),
        ('{"api_key": "FAKEa1b2c3d4e5f6g7h8i9"}', '{"api_key": "[REDACTED:secret_assignment]"}'),
        ("nothing secret here", "nothing secret here"),
        ("", ""),
    ],
)
def test_redact_exact(text, expected):
    assert redact(text) == expected


def test_redact_is_idempotent_and_marker_is_clean():
    once = redact(f"password: hunter22 and {OPENAI}")
    assert redact(once) == once
    assert scan_secrets(once) == []
    assert scan_threats(once) == []


def test_big_input_completes():
    text = ("notes " * 1000 + f"password: hunter22 {GITHUB} ") * 150
    found = scan_secrets(text)
    assert [f.id for f in found] == ["password_in_prose", "github_token"]
    assert redact(text).count("[REDACTED:github_token]") == 150
