"""Secrets a tester found in clear in prompts and search results: a value on the line after its label, key material
after a label naming a key, cookie, seed or salt, a password column of a Markdown table, and a short password after
an abbreviation (``pw: toor``, ``pass=toor``). Every value below is made up. The prose next to them (a primary key,
a cache key, a commit hash, a request id, a file's checksum, "pass=true", "pw: see 1password") must stay
untouched."""

from __future__ import annotations

import pytest

from pi_memory.safety import redact, scan_secrets

PROSE = "[REDACTED:password_in_prose]"
ASSIGN = "[REDACTED:secret_assignment]"
KEY = "4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA=="
HEX = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize(("text", "expected"), [
    ("Prod DB login\nuser: deploy\nPassword:\nXk29!fpQ7zz", f"Prod DB login\nuser: deploy\nPassword:\n{PROSE}"),
    ("password:\n  Xk29!fpQ7zz", f"password:\n  {PROSE}"),
    ("Password:\n\nhunter2\n", f"Password:\n\n{PROSE}\n"),
    ("Password:\nletmein", f"Password:\n{PROSE}"),
    ("**Password:**\n`Xk29!fpQ7zz`", f"**Password:**\n`{PROSE}`"),
    ("- Prod DB password:\n  Xk29!fpQ7zz\n- Port: 5432", f"- Prod DB password:\n  {PROSE}\n- Port: 5432"),
    ("Wifi pw:\r\nXk29!fpQ7zz\r\n", f"Wifi pw:\r\n{PROSE}\r\n"),
    ("Passwort:\nGeheim!2024", f"Passwort:\n{PROSE}"),
    ("API key:\n\n4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA", f"API key:\n\n{ASSIGN}"),
    (f"secret:\n{KEY}", f"secret:\n{ASSIGN}"),
    (f"The backup encryption key:\n  {KEY}\n", f"The backup encryption key:\n  {ASSIGN}\n"),
    ("token:\n3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", f"token:\n{ASSIGN}"),
])
def test_a_value_on_the_line_after_its_label_is_redacted(text, expected):
    assert redact(text) == expected


def test_a_stripe_key_after_an_empty_label_line_keeps_its_own_id():
    text = "API key:\n\nsk_live_4eC39HqLyjWDarjtT1zdp7dc "
    assert redact(text) == "API key:\n\n[REDACTED:stripe_key] "


@pytest.mark.parametrize("text", [
    "Password:\nRequired",
    "Password:\nrequired",
    "Password:\nForgot password?",
    "Email:\nPassword:\nRemember me",
    "password:\n  valueFrom:\n    secretKeyRef:\n      name: db",
    "password:\n  ${DB_PASSWORD}",
    "Password:\n********",
    "Password:\n/etc/app/secret.txt",
    "secret:\n  name: tls-cert",
    "token:\n  type: string",
    "sort key:\ncreated_at",
    "Public key:\nMCowBQYDK2VwAyEA4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA",
    "Cache key:\n3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "Password:\nThe one in the vault",
    "def check(password):\n    pass",
    "Steps:\n1. run tests",
    "Password:\nsecurely",
    "Enter password:\nAuthenticating...",
    "Password:\nWelcome!",
    "pw: Done!",
])
def test_a_label_line_before_prose_or_structure_stays(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    (f"The backup encryption key: {KEY}", f"The backup encryption key: {ASSIGN}"),
    (f"the vault unseal key is {KEY}", f"the vault unseal key is {ASSIGN}"),
    ("session cookie is 4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA", f"session cookie is {ASSIGN}"),
    (f"Unseal Key 1: {KEY}", f"Unseal Key 1: {ASSIGN}"),
    (f"the signing key: {HEX}", f"the signing key: {ASSIGN}"),
    (f"private key: {KEY}", f"private key: {ASSIGN}"),
    (f"API key: {KEY}.", f"API key: {ASSIGN}."),
    (f"encryption_key = '{KEY}'", f"encryption_key = '{ASSIGN}'"),
    ("wallet seed: 4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA", f"wallet seed: {ASSIGN}"),
    ("salt: 4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA", f"salt: {ASSIGN}"),
    (f"Cookie: sessionid={KEY}", f"Cookie: sessionid={ASSIGN}"),
    (f"the key is {KEY}", f"the key is {ASSIGN}"),
    (f"the HMAC key was {HEX} until Monday", f"the HMAC key was {ASSIGN} until Monday"),
])
def test_key_material_after_a_label_naming_a_secret_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["secret_assignment"]


@pytest.mark.parametrize("text", [
    "the primary key is customer_id",
    "sort key: created_at",
    "the API key is in the vault",
    "the key is to cache aggressively",
    "partition key: tenant_id",
    "cache key: user:{id}:profile",
    "fixed in commit 4f9c2a1b7e3d",
    "request id 3f2b1c9e-8a7d-4e6f-9b0a-1c2d3e4f5a6b",
    f"checksum: sha256:{HEX}",
    f"cache key: {HEX}",
    f"the key is {HEX}",
    "public key: MCowBQYDK2VwAyEA4Gx7pQ2mZ9vB1nL8kR3tY6wE0uI5oA",
    "encryption key: projects/prod-123/locations/us-east1/keyRings/main/cryptoKeys/db2",
    "encryption key: AES-256-GCM",
    "the signing key id is 4F9C2A1B7E3D5F6A",
    "random seed: 1234567890123456",
    "seed: 42",
    "salt: random per user",
    "the session cookie is HttpOnly and Secure",
    "the primary key is customer_id_2024_v2",
    "idempotency key: 3f2b1c9e-8a7d-4e6f-9b0a-1c2d3e4f5a6b",
])
def test_keys_of_data_and_public_values_stay(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("| host | user | password |\n|---|---|---|\n| db | admin | Xk29!fpQ7zz |",
     f"| host | user | password |\n|---|---|---|\n| db | admin | {PROSE} |"),
    ("| host | user | password |\n|------|:----:|---------|\n| db | admin | Xk29!fpQ7zz |\n| cache | ops | letmein |\n",
     f"| host | user | password |\n|------|:----:|---------|\n| db | admin | {PROSE} |\n| cache | ops | {PROSE} |\n"),
    ("host | pw\n--- | ---\ndb | hunter2", f"host | pw\n--- | ---\ndb | {PROSE}"),
    ("| Service | API token |\n| --- | --- |\n| ci | `3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c` |",
     f"| Service | API token |\n| --- | --- |\n| ci | `{ASSIGN}` |"),
    ("| user | DB Password | note |\n|---|---|---|\n| bob | Xk29!fpQ7zz | rotated |\n\nDone.",
     f"| user | DB Password | note |\n|---|---|---|\n| bob | {PROSE} | rotated |\n\nDone."),
])
def test_a_cell_under_a_password_or_token_header_is_redacted(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "| field | password |\n|---|---|\n| web | required |",
    "| method | password |\n|---|---|\n| basic | yes |\n| sso | no |",
    "| user | password |\n|---|---|\n| admin | see vault |",
    "| user | password |\n|---|---|\n| admin | `$ADMIN_PASSWORD` |",
    "| user | password |\n|---|---|\n| admin | - |\n| ops | n/a |",
    "| name | token |\n|---|---|\n| plus | `+` |\n| ident | IDENT |",
    "| key | value |\n|---|---|\n| sort | created_at |",
    "| password policy | value |\n|---|---|\n| min length | 12 |",
    "| users | password | sso |\n|---|---|---|\n| 2024 | 1200 | 300 |",
    "| db | sso | Xk29!fpQ7zz |",  # a row with no header and no account name (one with "admin": test_secrets_gaps)
])
def test_tables_without_a_secret_in_a_secret_column_stay(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("ssh root@10.0.0.5 (pw: toor)", f"ssh root@10.0.0.5 (pw: {PROSE})"),
    ("pass=toor", f"pass={PROSE}"),
    ("pwd: hunter2", f"pwd: {PROSE}"),
    ("passwd=letmein", f"passwd={PROSE}"),
    ("user=bob&pass=abcd&x=1", f"user=bob&pass={PROSE}"),  # the password row takes the rest of the query
    ("user=bob&pass=abcd", f"user=bob&pass={PROSE}"),
    ("password: 1234", f"password: {PROSE}"),
    ("PGPASSWORD=toor psql -h db", f"PGPASSWORD={PROSE} psql -h db"),
    ("login root, pw: toor.", f"login root, pw: {PROSE}."),
    ("pass=toor port=22", f"pass={PROSE} port=22"),
])
def test_a_short_password_after_an_abbreviation_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["password_in_prose"]


@pytest.mark.parametrize("text", [
    "pass=true",
    "pass: 3 of 4 tests",
    "pw: see 1password",
    "pass the --verbose flag",
    "pass=1234 fail=0",
    "pass=False",
    "password: none",
    "password: same as ssh",
    "pwd: /tmp",
    "pw: TBD",
    "password: unset",
    "password=auto",
    "pass=skip",
    "PASS: test_login",
    "1Password: toor",
    "password: 0000",
    "``password: x\\n``",
])
def test_short_values_that_are_no_password_stay(text):
    assert scan_secrets(text) == []
    assert redact(text) == text
