"""Secrets a tester found in clear when a qualifier stands between the credential word and its verb ("the api token
for sentry is X", "la contraseña del wifi es X", "пароль от wifi — X"), in ``creds for X are user / pass``,
``login user:pass on X`` and a quoted passphrase after "passphrase", while the plain phrasing was caught. Every
value is made up. Next to them stand look-alikes that name no secret and must stay untouched."""

from __future__ import annotations

import pytest

from pi_memory.safety import redact, scan_secrets

ASSIGN = "[REDACTED:secret_assignment]"
PHRASE = "[REDACTED:password_phrase]"
PAIR = "[REDACTED:credential_pair]"
PROSE = "[REDACTED:password_in_prose]"
HEX = "4f9c2a7e8b1d3f6a0c5e9b2d7f1a3c8e"


def _clean(text: str) -> None:
    assert scan_secrets(text) == []
    assert redact(text) == text


# ---- 1. a token, key or secret label with a qualifier -----------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    (f"the api token for sentry is {HEX}", f"the api token for sentry is {ASSIGN}"),
    (f"The deploy token of the release bot was {HEX}.", f"The deploy token of the release bot was {ASSIGN}."),
    (f"el token de sentry es {HEX}", f"el token de sentry es {ASSIGN}"),
    (f"der API-Token für Sentry ist {HEX}", f"der API-Token für Sentry ist {ASSIGN}"),
    (f"o token do sentry é {HEX}", f"o token do sentry é {ASSIGN}"),
    ("the client secret of the github app: Zq8vN3kLp0Rt7wYx2Bc5", f"the client secret of the github app: {ASSIGN}"),
    ("the access key for the bucket = AKx93LmQ2pV7tR4nW8zY", f"the access key for the bucket = {ASSIGN}"),
])
def test_a_token_named_with_a_qualifier_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["secret_assignment"]


@pytest.mark.parametrize("text", [
    "the token for the meetup is a sticker",
    "the key for the office is at reception",
    "the api key for the demo is in the vault",
    "the secret of success is patience",
    "the token for the arcade is a brass coin",
    "the access token for the api is refreshed every hour",
    "the api token for sentry is <your-sentry-token-here>",
])
def test_a_token_word_with_a_qualifier_and_prose_stays(text):
    _clean(text)


# ---- 2. a password label with a qualifier, in every language, and words and digits as the value ------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("la contraseña del wifi es Gato-Azul-77", f"la contraseña del wifi es {PHRASE}"),
    ("das Passwort vom WLAN ist Katze-Blau-77", f"das Passwort vom WLAN ist {PHRASE}"),
    ("le mot de passe du wifi est Chat-Bleu-77", f"le mot de passe du wifi est {PHRASE}"),
    ("a senha do wifi é Gato-Azul-77", f"a senha do wifi é {PHRASE}"),
    ("пароль от wifi — Kot-Sin-77", f"пароль от wifi — {PHRASE}"),
    ("la password del wifi è Gatto-Blu-77.", f"la password del wifi è {PHRASE}."),
    ("la clave del wifi es Gato-Azul-77", f"la clave del wifi es {PHRASE}"),
    ("Das Passwort für den Drucker lautet Hund-Gruen-42, bitte merken",
     f"Das Passwort für den Drucker lautet {PHRASE}, bitte merken"),
])
def test_a_words_and_digits_password_after_a_qualifier_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["password_phrase"]


def test_the_english_qualified_form_is_redacted_as_before():
    text = "the password for the office wifi is Gato-Azul-77"
    assert redact(text) == f"the password for the office wifi is {PROSE}"


@pytest.mark.parametrize("text", [
    "la contraseña del wifi es la misma de siempre",
    "das Passwort vom WLAN ist im Schrank",
    "le mot de passe du wifi est sur l'étiquette",
    "a senha do wifi é a mesma de sempre",
    "пароль от wifi — на обороте роутера",
    "la contraseña del wifi es WPA2-Personal",
    "la contraseña del wifi es Gato-Azul-77 o algo así",  # the sentence goes on: no passphrase
    "das Passwort vom Server ist ISO-8859-1 kodiert",
    "la clave del éxito es la constancia",
])
def test_a_password_word_with_a_qualifier_and_prose_stays(text):
    _clean(text)


# ---- 3. login pairs: after a qualifier, and with no separator ---------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("creds for grafana are admin / Cat-Blue-80", f"creds for grafana are admin / {PAIR}"),
    ("login admin:Cat-Blue-81 on grafana", f"login admin:{PAIR} on grafana"),
    ("log in as deploy:Xk9#mP2q first", f"log in as deploy:{PAIR} first"),
    ("login ops:hunter22 then restart", f"login ops:{PAIR} then restart"),
])
def test_a_login_pair_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["credential_pair"]


@pytest.mark.parametrize("text", [
    "login admin on grafana to see the dashboards",
    "login node:18-alpine is the image we pin",
    "login postgres:5432 from the bastion",
    "login ubuntu:22.04 image",
    "login root:x:0:0:root",
    "login docker:dind service",
    "creds for grafana are admin / read-only",
    "creds for jenkins are in the team vault",
    "login user:password on the demo box",
])
def test_a_login_word_with_no_password_stays(text):
    _clean(text)


# ---- 4. a quoted passphrase after "passphrase" ------------------------------------------------------------------
@pytest.mark.parametrize(("text", "expected"), [
    ("use passphrase 'purple monkey dishwasher 42' for the gpg key",
     f"use passphrase '{PROSE}' for the gpg key"),
    ('use passphrase "seven orange kites" to unlock it', f'use passphrase "{PROSE}" to unlock it'),
])
def test_a_quoted_passphrase_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["password_in_prose"]


@pytest.mark.parametrize("text", [
    "the passphrase for the gpg key is in 1Password",
    "Enter passphrase for key '/root/.ssh/id_rsa':",
    "the passphrase 'is required' here",
    "gpg asks for the passphrase 'twice' on import",
    "the passphrase 'correct horse' is a famous example",
    "passphrase 'your passphrase here' is a placeholder",
])
def test_a_passphrase_word_with_no_passphrase_stays(text):
    _clean(text)
