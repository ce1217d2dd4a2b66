"""Credential formats the scanner learnt after a tester stored them through `semantic add` and got them back from
recall: a private key cut short (no END line), Vault tokens, HTTP Basic auth, Telegram bot tokens, Docker
``config.json`` auths and ``.pgpass`` lines. Every value below is fake but has the vendor's format."""

from __future__ import annotations

import base64

import pytest

from pi_memory.safety import redact, scan_secrets

TRUNCATED_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBFAKEexampleFAKEexampleFAKEexample0000000000AAAAAAAAAAAAAA\n"
    "AAAAFAKE0000"
)
DOCKER_AUTH = base64.b64encode(b"deploybot:Fake-Registry-Pass-42").decode()


@pytest.mark.parametrize(("text", "expected"), [
    # a key as `head -3 ~/.ssh/id_ed25519` prints it: the header and every base64 line after it
    (TRUNCATED_KEY, "[REDACTED:private_key_block]"),
    (f"here is my key:\n{TRUNCATED_KEY}\n\nwhy does ssh refuse it?",
     "here is my key:\n[REDACTED:private_key_block]\n\nwhy does ssh refuse it?"),
    # an old encrypted PEM key: header lines and the blank line before the body are part of the key
    ("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,FAKE00EXAMPLE\n\n"
     "MIIEFAKEexampleFAKEexampleFAKEexample0000\nMIIEFAKE0w==\nthat is all",
     "[REDACTED:private_key_block]\nthat is all"),
    # the header alone, then prose: the prose stays
    ("-----BEGIN PRIVATE KEY-----\nI lost the rest of it.", "[REDACTED:private_key_block]\nI lost the rest of it."),
    ("export VAULT_TOKEN=hvs.CAESIJFAKEexample0000aaaaBBBBccccDDDDeeee1111",
     "export VAULT_TOKEN=[REDACTED:vault_token]"),
    ("batch token hvb.AAAAAQFAKEexample0000aaaaBBBBccccDDDD-_x9 issued",
     "batch token [REDACTED:vault_token] issued"),
    ("recovery: hvr.FAKEexample0000aaaaBBBBcccc", "recovery: [REDACTED:vault_token]"),
    ("vault login s.FAKEexample0000aaaaBBBBc", "vault login [REDACTED:vault_token]"),
    ("curl -H 'Authorization: Basic ZGVwbG95Ym90OkZha2UtUmVnaXN0cnktUGFzcy00Mg==' https://api.internal",
     "curl -H 'Authorization: Basic [REDACTED:basic_auth]' https://api.internal"),
    ("Proxy-Authorization: basic ZGVwbG95Ym90OkZha2UtUmVnaXN0cnktUGFzcy00Mg",
     "Proxy-Authorization: basic [REDACTED:basic_auth]"),
    ("TELEGRAM_TOKEN=5550001234:AAFakeExample0000aaaaBBBBccccDDDDee9",
     "TELEGRAM_TOKEN=[REDACTED:telegram_bot_token]"),
    ("https://api.telegram.org/bot5550001234:AAFakeExample0000aaaaBBBBccccDDDDee9/sendMessage",
     "https://api.telegram.org/[REDACTED:telegram_bot_token]/sendMessage"),
    ("the telegram bot uses 5550001234:Fq7ExR2mPz0wLk9vTn3sYb8cHd4jUa6gKe1",
     "the telegram bot uses [REDACTED:telegram_bot_token]"),
    (f'{{"auths": {{"registry.example.com": {{"auth": "{DOCKER_AUTH}"}}}}}}',
     '{"auths": {"registry.example.com": {"auth": "[REDACTED:docker_auth]"}}}'),
    ("db.internal:5432:orders:deployer:Fake-Pgpass-0000\n*:*:*:replicator:Fake\\:Pgpass1",
     "db.internal:5432:orders:deployer:[REDACTED:pgpass_password]\n*:*:*:replicator:[REDACTED:pgpass_password]"),
    ("echo '10.0.0.7:6432:*:app:FakePgpass77' >> ~/.pgpass",
     "echo '10.0.0.7:6432:*:app:[REDACTED:pgpass_password]' >> ~/.pgpass"),
])
def test_new_formats_redacted_exactly(text, expected):
    assert redact(text) == expected
    assert scan_secrets(text)


@pytest.mark.parametrize("text", [
    # .pgpass explained in prose, a default password, a grep hit and a clock
    "The .pgpass format is hostname:port:database:username:password, one entry per line.",
    "localhost:5432:*:postgres:postgres",
    "app.py:12:4:parse_args:missing",
    "uptime 12:30:45:00:ff",
    # Telegram chat ids, a message id, a bot without a token
    "send it to chat id -1001234567890 (user 123456789)",
    "message 123456789:reply from the bot",
    "the bot id is 5550001234:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    # "basic" in prose, a placeholder, a base64 word that is no user:password
    "Basic authentication is enough for the staging proxy.",
    "Authorization: Basic <base64 of user:password>",
    "Authorization: Basic aGVsbG8gd29ybGQ=",
    "Authorization: Basic dXNlcjpwYXNzd29yZA==",  # user:password, the documented example
    '{"auth": "token"}',
    # "s." starting a word, and Vault mentioned without a token
    "commit 3 files s.abcdefghijklmnopqrstuvwx",
    "Vault tokens start with hvs. since 1.10",
    # key prose and markers
    "END_OF_FILE",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAFAKE",
])
def test_ordinary_text_is_not_a_secret(text):
    assert scan_secrets(text) == []
    assert redact(text) == text
