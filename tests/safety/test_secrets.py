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
SLACK_HOOK = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"  # Slack's docs example
DISCORD_HOOK = "https://discord.com/api/webhooks/123456789012345678/FAKE-example_token-0000000000000000"
AZURE_KEY = "FAKEfake0123456789abcdefghijklmnopqrstuvwxyzFAKE=="
AGE_KEY = "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58]  # bech32 letters, not a real key


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# (id, text, the exact secret value the finding must span)
CASES = [
    ("openai_api_key", f"key {OPENAI} here", OPENAI),
    ("openai_api_key", "sk-FAKEexample000000000000000000000000000000000000",
     "sk-FAKEexample000000000000000000000000000000000000"),
    ("anthropic_api_key", f"ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("github_token", f"token {GITHUB}.", GITHUB),
    ("github_token", "github_pat_FAKE0000000000000000000000_example", "github_pat_FAKE0000000000000000000000_example"),
    ("pi_memory_token", "team token pim_0123456789ab_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE123 for ci",
     "pim_0123456789ab_FAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE123"),
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
    # formats added after the tester's report
    ("url_credentials", "postgres://admin:S3cretPassw0rd@db.example.com:5432/prod", "S3cretPassw0rd"),
    ("url_credentials", "mongodb+srv://app:FAKEpass99@cluster0.example.net/db", "FAKEpass99"),
    ("url_credentials", "redis://:FAKEpass99@cache.internal:6379/0", "FAKEpass99"),
    ("aws_secret_access_key", f"The AWS secret key is {AWS_SECRET}", AWS_SECRET),
    ("aws_secret_access_key", f"{AWS_SECRET} is the secret for the ci user", AWS_SECRET),
    ("webhook_url", f"alerts go to {SLACK_HOOK}", SLACK_HOOK),
    ("webhook_url", f"hook: {DISCORD_HOOK}", DISCORD_HOOK),
    ("bearer_token", "Authorization: Bearer abcdefghijklmnopqrstuvwxyzABCDEF", "abcdefghijklmnopqrstuvwxyzABCDEF"),
    ("cli_password", "sshpass -p 'hunter22x' ssh deploy@10.0.0.5", "hunter22x"),
    ("cli_password", "mysql -uroot -pS3cret", "S3cret"),
    ("cli_password", "mysqldump -h db -u app -p'FAKEpass99' app > dump.sql", "FAKEpass99"),
    ("cli_password", "redis-cli -h cache -a FAKEpass99 ping", "FAKEpass99"),
    ("cli_password", "curl -u admin:FAKEpass99 https://ci.example.com/api", "FAKEpass99"),
    ("cli_password", "vault login --password FAKEpass99", "FAKEpass99"),
    ("azure_key", f"DefaultEndpointsProtocol=https;AccountName=demo;AccountKey={AZURE_KEY};", AZURE_KEY),
    ("azure_key", "Endpoint=sb://demo.servicebus.windows.net/;SharedAccessKeyName=root;"
     "SharedAccessKey=FAKEfake0123456789abcdefghijKLMNOP=", "FAKEfake0123456789abcdefghijKLMNOP="),
    ("azure_key", "https://demo.blob.core.windows.net/c?sv=2022-11-02&sig=FAKEfake0123456789abcdef%2Bghij%3D",
     "FAKEfake0123456789abcdef%2Bghij%3D"),
    ("password_in_prose", "The db password is correcthorsebatterystaple", "correcthorsebatterystaple"),
    # formats and phrasings added after the semantic-memory break-it report
    ("huggingface_token", "HF token hf_FAKEexample0000000000000000000000", "hf_FAKEexample0000000000000000000000"),
    ("npm_token", "npm token npm_FAKEexample00000000000000000000000000", "npm_FAKEexample00000000000000000000000000"),
    ("gitlab_token", "GitLab token glpat-FAKEexample000000000", "glpat-FAKEexample000000000"),
    ("sendgrid_key", "mail key SG.FAKEexample0000000000.FAKEexample000000000000000000000000000000",
     "SG.FAKEexample0000000000.FAKEexample000000000000000000000000000000"),
    ("digitalocean_token", "do token dop_v1_" + "0f" * 32, "dop_v1_" + "0f" * 32),
    ("twilio_key", "twilio SK0123456789abcdef0123456789abcdef ok", "SK0123456789abcdef0123456789abcdef"),
    ("password_in_prose", "My password is: correct-horse-battery-staple", "correct-horse-battery-staple"),
    ("password_in_prose", "db pass=FAKEpass99 for prod", "FAKEpass99"),
    ("password_in_prose", "the GPG passphrase Tr0ub4dor&3x", "Tr0ub4dor&3x"),
    ("secret_assignment", "The API token is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("secret_assignment", "the webhook secret is: 3f2a9c1e5b7d4a6f8e0c2b4d", "3f2a9c1e5b7d4a6f8e0c2b4d"),
    ("payment_card", "company card 4111 1111 1111 1111, exp 09/28", "4111 1111 1111 1111"),
    ("credential_pair", "login: deploy / Hunt3r-Fake!", "Hunt3r-Fake!"),
    # hidden or look-alike characters inside the value (the span covers them)
    ("openai_api_key", "Deploy key: sk-proj-abcdefghij\u00adklmnopqrstuvwxyz0123456789",
     "sk-proj-abcdefghij\u00adklmnopqrstuvwxyz0123456789"),
    ("openai_api_key", "key " + fullwidth(OPENAI), fullwidth(OPENAI)),
    ("github_token", "ghp_FAKE0000\u200b0000000000000000000000000TEST", "ghp_FAKE0000\u200b0000000000000000000000000TEST"),
    ("vault_token", "VAULT_TOKEN=hvs.CAESIFAKEexample0000aaaaBBBBcccc", "hvs.CAESIFAKEexample0000aaaaBBBBcccc"),
    ("telegram_bot_token", "bot 5550001234:AAFakeExample0000aaaaBBBBccccDDDDee9",
     "5550001234:AAFakeExample0000aaaaBBBBccccDDDDee9"),
    ("pgpass_password", "db.internal:5432:orders:deployer:Fake-Pgpass-0000", "Fake-Pgpass-0000"),
    ("basic_auth", "Authorization: Basic ZmFrZXVzZXI6RmFrZVBhc3MwMDAw", "ZmFrZXVzZXI6RmFrZVBhc3MwMDAw"),
    ("docker_auth", '{"auth": "ZmFrZXVzZXI6RmFrZVBhc3MwMDAw"}', "ZmFrZXVzZXI6RmFrZVBhc3MwMDAw"),
    # .netrc, registry logins, password phrases, age and PuTTY keys (more in test_secrets_phrases.py)
    ("netrc_password", "machine api.example.com login bob password FakeNetrc99", "FakeNetrc99"),
    ("cli_password", "docker login -u bob -p FakeDockerPw1", "FakeDockerPw1"),
    ("password_phrase", "Mein Passwort ist FakePasswort7!", "FakePasswort7!"),
    ("seed_phrase", "seed: hen melody bargain shed dumb capital dismiss clay sibling canyon year obscure",
     "hen melody bargain shed dumb capital dismiss clay sibling canyon year obscure"),  # more in test_secrets_gaps.py
    ("pin_code", "my bank PIN is 4821", "4821"),  # PINs and door codes (more in test_secrets_codes_words.py)
    ("age_secret_key", f"key {AGE_KEY}", AGE_KEY),
    ("putty_private_key", "Private-Lines: 1\nAAAAIFAKEexampleFAKEexampleFAKEexample0000\n",
     "AAAAIFAKEexampleFAKEexampleFAKEexample0000"),
    # XML configs, CLI flags and vendor tokens (more in test_secrets_formats.py)
    ("xml_secret", "<password>FAKEpass99x</password>", "FAKEpass99x"),
    ("cli_token", "mycli --api-token FAKEa1b2c3d4e5f6g7h8i9", "FAKEa1b2c3d4e5f6g7h8i9"),
    ("pypi_token", "token pypi-AgEIcHlwaS5vcmcFAKEexample0000FAKEexample0000FAKEexample0000FAKEexample00",
     "pypi-AgEIcHlwaS5vcmcFAKEexample0000FAKEexample0000FAKEexample0000FAKEexample00"),
    ("dockerhub_token", "hub dckr_pat_FAKEexample0000aaaaBBBBcccc", "dckr_pat_FAKEexample0000aaaaBBBBcccc"),
    ("shopify_token", "shop shpat_0123456789abcdef0123456789abcdef", "shpat_0123456789abcdef0123456789abcdef"),
    ("google_oauth_secret", "GOCSPX-FAKEexample0000aaaaBBBBcccc", "GOCSPX-FAKEexample0000aaaaBBBBcccc"),
    ("discord_bot_token", "bot MTEyMjMzNDQ1NTY2Nzc4ODk5.GFakeX.FAKEexample0000aaaaBBBBccccDDDD",
     "MTEyMjMzNDQ1NTY2Nzc4ODk5.GFakeX.FAKEexample0000aaaaBBBBccccDDDD"),
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
        # placeholders and prose (see the "Decisions" in secrets.py)
        "password: <password>",
        "password: ****",
        "password: example-only",
        "password: changeme",
        "The default password is changeme.",
        "The password is required.",
        "the password is incorrect",
        "the password is expired",
        "the password is too short",
        "the password is mandatory for admins",
        "The password is stored in 1Password.",
        "postgres://user@db.example.com/app",
        "https://user:${PASSWORD}@git.example.com/repo.git",
        "postgres://app:<password>@db/app",
        "mysql://root:root@localhost/dev",
        "Bearer YOUR_ACCESS_TOKEN_HERE",
        "Bearer xxxxxxxxxxxxxxxxxxxxxxxx",
        "mysql -u root -p mydb",
        "docker run -p 8080:80 nginx",
        "mkdir -p build/output",
        "curl -u \"$USER:$TOKEN\" https://api.example.com",
        "git log --format=%H: 3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a",  # a hex commit hash is not an AWS secret
        "secret rotation commit 3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c2e4b6d8f0a",
        "AccountKey=<your-account-key>",
        "webhooks are configured under Settings > Integrations",
        # near misses of the formats and phrasings added after the semantic-memory break-it report
        "the token is expired",
        "The session token is stored in redis",
        "the secret is out",
        "the API token is in 1Password under CI",
        "mountain pass: Stelvio2757",
        "the boarding pass is BA0123XY",
        "bypass=cache_layer_01",
        "passphrase protected keys are safer",
        "passphrase --stdin reads it from the pipe",
        "hf_hub_download fetches a file",
        "npm_config_registry points at the mirror",
        "glpat- tokens are GitLab personal access tokens",
        "SG. is SendGrid's key prefix",
        "SKU 0123456789abcdef0123456789abcdef",
        "sk0123456789abcdef0123456789abcdef",
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
        ("postgres://admin:S3cretPassw0rd@db:5432/prod", "postgres://admin:[REDACTED:url_credentials]@db:5432/prod"),
        ("key " + fullwidth(OPENAI) + " end", "key [REDACTED:openai_api_key] end"),
        ("k sk-proj-abcdefghij\u00adklmnopqrstuvwxyz0123456789.", "k [REDACTED:openai_api_key]."),
        ("mysql -uroot -pS3cret db", "mysql -uroot -p[REDACTED:cli_password] db"),
        ("nothing secret here", "nothing secret here"),
        ("", ""),
    ],
)
def test_redact_exact(text, expected):
    assert redact(text) == expected


def test_redact_is_idempotent_and_marker_is_clean():
    once = redact(f"password: hunter22 and {OPENAI} and postgres://admin:S3cretPassw0rd@db/app and {SLACK_HOOK}")
    assert redact(once) == once
    assert scan_secrets(once) == []
    assert scan_threats(once) == []


def test_big_input_completes():
    text = ("notes " * 1000 + f"password: hunter22 {GITHUB} ") * 150
    found = scan_secrets(text)
    assert [f.id for f in found] == ["password_in_prose", "github_token"]
    assert redact(text).count("[REDACTED:github_token]") == 150


@pytest.mark.parametrize(("text", "redacted"), [
    ("Card: 4111 1111 1111 1111 exp 12/29", "Card: [REDACTED:payment_card] exp 12/29"),
    ("amex 3782-822463-10005 on file", "amex [REDACTED:payment_card] on file"),
    ("visa 4012888888881881", "visa [REDACTED:payment_card]"),
    ("5555 5555 5555 4444", "[REDACTED:payment_card]"),
    # a bare run of digits needs a card word; a failed Luhn check or an unknown issuer is not a card
    ("order id 4012888888881881 shipped", "order id 4012888888881881 shipped"),
    ("build 1732900000000 took 4 minutes", "build 1732900000000 took 4 minutes"),
    ("call 4111-1111-1111-1112", "call 4111-1111-1111-1112"),
    ("version 4.1.1111.1111", "version 4.1.1111.1111"),
    ("1111 1111 1111 1117", "1111 1111 1111 1117"),
])
def test_payment_card_numbers(text, redacted):
    # found by a tester (semantic memory, 2026-11-29): a card number pasted into a turn reached storage
    assert redact(text) == redacted
