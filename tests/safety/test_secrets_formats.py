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


# ---- formats a tester found coming back from redact() unchanged (XML configs, CLI flags, vendor tokens) ----
PYPI = ("pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAACKlszLCJmYWtlIl0AAAYgFAKE"
        "exampleFAKEexample0000aaaaBBBBccccDDDDeeeeFFFFgggg0000hhhhIIIIjjjj1111kkkk")
DOCKER_PAT = "dckr_pat_Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5"
SHOPIFY = "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"
GOOGLE_SECRET = "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"
GITLAB_RUNNER = "glrt-Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy"
DISCORD = "MTEyMjMzNDQ1NTY2Nzc4ODk5.GFakeX.Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEaQm"  # base64 of 112233445566778899


@pytest.mark.parametrize(("text", "expected"), [
    # Maven settings.xml and other XML configs
    ("<password>hunter2-very-secret-pw</password>", "<password>[REDACTED:xml_secret]</password>"),
    ("<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>hunter2-very-secret-pw</password>\n"
     "</server>",
     "<server>\n  <id>nexus</id>\n  <username>deploy</username>\n  <password>[REDACTED:xml_secret]</password>\n"
     "</server>"),
    ("<password>{COQLCE6DU6GtcS5P=}</password>", "<password>[REDACTED:xml_secret]</password>"),  # mvn -ep output
    ("<secret>hunter2-very-secret-pw</secret>", "<secret>[REDACTED:xml_secret]</secret>"),
    ("<token>q8Zr2LmN4vB7xK1pT9wE3yU6</token>", "<token>[REDACTED:xml_secret]</token>"),
    ("<apiKey>q8Zr2LmN4vB7xK1pT9wE3yU6</apiKey>", "<apiKey>[REDACTED:xml_secret]</apiKey>"),
    ("<keystorePassword> S3cret-Store!9 </keystorePassword>", "<keystorePassword> [REDACTED:xml_secret] </keystorePassword>"),
    ('<add key="PaymentApiKey" value="q8Zr2LmN4vB7xK1pT9wE3yU6" />',
     '<add key="PaymentApiKey" value="[REDACTED:xml_secret]" />'),
    ("<property name='db.password' value='hunter2-very'/>", "<property name='db.password' value='[REDACTED:xml_secret]'/>"),
    # tokens and passwords given to a command
    ("mycli --api-token q8Zr2LmN4vB7xK1pT9wE3yU6", "mycli --api-token [REDACTED:cli_token]"),
    ("deploy --token=q8Zr2LmN4vB7xK1pT9wE3yU6 --env prod", "deploy --token=[REDACTED:cli_token] --env prod"),
    ('gh-release --github-token "q8Zr2LmN4vB7xK1pT9wE3yU6"', 'gh-release --github-token "[REDACTED:cli_token]"'),
    ("terraform apply -var client -client-secret q8Zr2LmN4vB7xK1pT9wE3yU6",
     "terraform apply -var client -client-secret [REDACTED:cli_token]"),
    ("setup --secret q8Zr2LmN4vB7xK1pT9wE3yU6", "setup --secret [REDACTED:cli_token]"),
    ("createdb --admin-password Hq7wV2xM9pL4 app", "createdb --admin-password [REDACTED:cli_password] app"),
    ("twine upload -u deploy -p Xq8Zr2LmN4vB7 dist/*", "twine upload -u deploy -p [REDACTED:cli_password] dist/*"),
    ("mongosh -u admin -p Hq7wV2xM9pL4 --authenticationDatabase admin",
     "mongosh -u admin -p [REDACTED:cli_password] --authenticationDatabase admin"),
    # vendor tokens
    (f"twine upload -u __token__ -p {PYPI} dist/*", "twine upload -u __token__ -p [REDACTED:pypi_token] dist/*"),
    (f"password = {PYPI}", "password = [REDACTED:pypi_token]"),
    (f"echo {DOCKER_PAT} | docker login -u bob --password-stdin",
     "echo [REDACTED:dockerhub_token] | docker login -u bob --password-stdin"),
    (f"SHOPIFY_ACCESS_TOKEN={SHOPIFY}", "SHOPIFY_ACCESS_TOKEN=[REDACTED:shopify_token]"),
    ("app secret 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 here", "app secret [REDACTED:shopify_token] here"),
    (f'"client_secret": "{GOOGLE_SECRET}"', '"client_secret": "[REDACTED:google_oauth_secret]"'),
    (f"gitlab-runner register --token {GITLAB_RUNNER}", "gitlab-runner register --token [REDACTED:gitlab_token]"),
    ("runner token glrt-t1_Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0Ts.01abc2def for staging",
     "runner token [REDACTED:gitlab_token] for staging"),
    ("deploy token gldt-Zq7Lm2Xp9Vt4Rk8Wn3Bc6H", "deploy token [REDACTED:gitlab_token]"),
    ("SIE-glpat-Zq7Lm2Xp9Vt4Rk8Wn3Bc6H", "SIE-[REDACTED:gitlab_token]"),  # an instance prefix before it
    (f"DISCORD_BOT_TOKEN={DISCORD}", "DISCORD_BOT_TOKEN=[REDACTED:discord_bot_token]"),
    (f'client.run("{DISCORD}")', 'client.run("[REDACTED:discord_bot_token]")'),
])
def test_reported_formats_are_redacted_exactly(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    # XML that names credentials without holding one
    "<password>${env.DEPLOY_PASSWORD}</password>",
    "<password></password>",
    "<password>changeme</password>",
    "<tokenType>Bearer</tokenType>",
    "<secret>my-tls</secret>",
    "<secretName>db-creds</secretName>",
    "<privateKey>${user.home}/.ssh/id_rsa</privateKey>",
    "<passwordMinLength>12</passwordMinLength>",
    "<maxTokens>4096</maxTokens>",
    "<tokenizer>bert-base-uncased-v2-large</tokenizer>",
    '<add key="ApiKeyHeader" value="X-Api-Key" />',
    '<input type="password" value="">',
    # flags without a literal secret
    "gh auth login --with-token < token.txt",
    "mycli --token $GITHUB_TOKEN",
    "mycli --api-token \"$(cat ~/.config/token)\"",
    "kubectl create secret generic db --from-literal=user=app",
    "deploy --token-file /run/secrets/token",
    "helm install --set secret.name=db-creds-2024",
    "vault kv get -field=token secret/ci",
    "mongodump -p 27017 --db shop",
    "twine upload -p secret dist/*",
    "psql -h db -p 5432 -U app",
    # vendor prefixes in prose, placeholders and look-alikes
    "pypi- tokens start with pypi-AgEIcHlwaS5vcmc",
    "dckr_pat_ is the Docker Hub token prefix",
    "shpat_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "GOCSPX- marks a Google OAuth client secret",
    "glrt-runner-for-the-staging-cluster",
    "the runner token starts with glrt-",
    "see release v1.2.3.tar.gz and MTEyMjMz.abcdef.ghijk",
    "MTEyMjMzNDQ1NTY2Nzc4ODk5.abcdef.ghijklmnopqrstuvwxyzabcdefgh",
    "NotAToken1234567890abcde.GFakeX.Zq7Lm2Xp9Vt4Rk8Wn3Bc6Hy1Jd5Fg0TsEa",
])
def test_reported_formats_have_near_misses_that_stay(text):
    assert scan_secrets(text) == []
    assert redact(text) == text
