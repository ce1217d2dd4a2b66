"""Credentials a tester found in clear after recall, ``session_search`` and curated entries: a password named with a
qualifier before its copula or value in German, Spanish, French, Portuguese, Italian and Russian, a login pair
(``login: admin / hunter2``, ``creds are admin:Sup3rS3cret!``), a long random value right after a token or key word,
and a plain word right after "password is". Every value below is fake. The prose about passwords next to them must
stay as it is."""

from __future__ import annotations

import pytest

from pi_memory.safety import redact, scan_secrets

LEAKS = [
    # the tester's lines
    ("Das Passwort für den SMTP-Server lautet Sommer2026!Berlin",
     "Das Passwort für den SMTP-Server lautet [REDACTED:password_phrase]"),
    ("la contraseña del servidor es Invierno2026#Madrid", "la contraseña del servidor es [REDACTED:password_phrase]"),
    ("пароль от сервера Zima2026!Moskva", "пароль от сервера [REDACTED:password_phrase]"),
    ("login: admin / hunter2", "login: admin / [REDACTED:credential_pair]"),
    ("creds are admin:Sup3rS3cret!", "creds are admin:[REDACTED:credential_pair]"),
    ("use token 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c for the api", "use token [REDACTED:secret_assignment] for the api"),
    ("password is letmein", "password is [REDACTED:password_in_prose]"),
    # a qualifier before the copula, in each language
    ("Das Kennwort vom Router ist Fr1tz!Box2026", "Das Kennwort vom Router ist [REDACTED:password_phrase]"),
    ("la contraseña de la base de datos es Invierno2026#Madrid",
     "la contraseña de la base de datos es [REDACTED:password_phrase]"),
    ("le mot de passe du serveur est Hiver2026!Paris", "le mot de passe du serveur est [REDACTED:password_phrase]"),
    ("le mot de passe pour le VPN est Hiver2026!Paris", "le mot de passe pour le VPN est [REDACTED:password_phrase]"),
    ("a senha do servidor é Verao2026!Rio", "a senha do servidor é [REDACTED:password_phrase]"),
    ("a senha do banco de dados é Verao2026!Rio", "a senha do banco de dados é [REDACTED:password_phrase]"),
    ("la password del server è Estate2026!Roma", "la password del server è [REDACTED:password_phrase]"),
    ("пароль от сервера — Zima2026!Moskva", "пароль от сервера — [REDACTED:password_phrase]"),
    # a qualifier and then the value (it ends the line, or a comma or a full stop follows)
    ("пароль от нового сервера Zima2026!Moskva.", "пароль от нового сервера [REDACTED:password_phrase]."),
    ("пароль к серверу Zima2026!Moskva, логин root", "пароль к серверу [REDACTED:password_phrase], логин root"),
    ("password for the SMTP server Xy7!kLm2q", "password for the SMTP server [REDACTED:password_phrase]"),
    # login pairs: the user name stays
    ("Login: admin/hunter2", "Login: admin/[REDACTED:credential_pair]"),
    ("credentials: deploy:Xk9#mP2q", "credentials: deploy:[REDACTED:credential_pair]"),
    ("creds for staging are admin:Sup3rS3cret!", "creds for staging are admin:[REDACTED:credential_pair]"),
    ("user/pass: admin / hunter2", "user/pass: admin / [REDACTED:credential_pair]"),
    ("Zugangsdaten: admin / Geheim123", "Zugangsdaten: admin / [REDACTED:credential_pair]"),
    ("логин/пароль: admin / Qwerty123", "логин/пароль: admin / [REDACTED:credential_pair]"),
    ("identifiants : admin / Secret2026!", "identifiants : admin / [REDACTED:credential_pair]"),
    # a token or key word, a space, a long random value
    ("the api key 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b", "the api key [REDACTED:secret_assignment]"),
    ("use the access token `Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA` here",
     "use the access token `[REDACTED:secret_assignment]` here"),
    ("secret Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==", "secret [REDACTED:secret_assignment]"),
    ("client secret 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "client secret [REDACTED:secret_assignment]"),
    # a plain lower-case word after "password is" / "password:"
    ("password: letmein", "password: [REDACTED:password_in_prose]"),
    ("the password is swordfish.", "the password is [REDACTED:password_in_prose]."),
    ("password is dragon", "password is [REDACTED:password_in_prose]"),
]


@pytest.mark.parametrize(("text", "expected"), LEAKS)
def test_leaked_value_is_redacted_and_the_sentence_stays(text, expected):
    assert redact(text) == expected
    assert scan_secrets(text)
    assert redact(expected) == expected  # a redacted text stays as it is


PROSE = [
    # the tester's prose about passwords
    "never print the password",
    "use the password manager",
    "passwords live in 1Password",
    "rotate the db password monthly",
    "the password is stored in Vault",
    "the password is in the .env file",
    "password reset emails go to support@example.com",
    "das Passwort ist im Tresor",
    "la contraseña está en 1Password",
    # words after "password is" that prose puts there
    "the password is required",
    "the password is wrong",
    "the password is expired",
    "the password is unique.",
    "the password is longer",
    "password is hashed",
    "password is secret",
    # a qualifier with no secret after it
    "le mot de passe du serveur est dans le coffre",
    "пароль от почты знает только админ",
    "пароль от сервера в 1Password",
    "Passwort für den Server ist nicht gesetzt",
    "la contraseña del servidor es muy larga",
    "password for user Bob2024 expired",
    "the password for the account - 2FA-enabled",
    "password for the SMTP server is in Vault",
    # login words with no pair after them, or a pair that is no credential
    "login: GET /api/v1/login",
    "login: OAuth2/OIDC",
    "login: SAML/OIDC2",
    "login: Google/GitHub",
    "credentials: LDAP/Kerberos",
    "login at 10:45:12 failed",
    "login: admin:8080",
    "login: user:password",
    "user/pass: root / root",
    "credentials: ${USER}:${PASS}",
    "login: admin/v2.3.1",
    "creds: deploy/readonly",
    # token and key words in prose; a hash called a key
    "the token is refreshed hourly",
    "token budget 128000",
    "cache key 3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "the secret KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH is mounted",
    "token: SomeConfigurationValue",
]


@pytest.mark.parametrize("text", PROSE)
def test_prose_about_credentials_is_unchanged(text):
    assert redact(text) == text
    assert scan_secrets(text) == []
