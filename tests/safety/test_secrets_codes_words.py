"""Secrets a tester found in clear in prompts and search results: PINs and numeric codes (a bank card's PIN, a door
or alarm code, a safe's combination, a PUK, a phone's passcode), a password that is a plain word after a label in
another language or script, and a passphrase of several English words. Every value below is made up. The prose
and the electronics next to them (a board's pin 13, "pin the version to 4.2.1", "PIN codes are 4 digits") must
stay untouched."""

from __future__ import annotations

import pytest

from pi_memory.safety import redact, scan_secrets

PIN = "[REDACTED:pin_code]"
PHRASE = "[REDACTED:password_phrase]"
PROSE = "[REDACTED:password_in_prose]"


@pytest.mark.parametrize(("text", "expected"), [
    ("my bank PIN is 4821", f"my bank PIN is {PIN}"),
    ("PIN: 4821", f"PIN: {PIN}"),
    ("card pin 0917 for the office door", f"card pin {PIN} for the office door"),
    ("my pin 4821", f"my pin {PIN}"),
    ("the pin is 4821.", f"the pin is {PIN}."),
    ("SIM PIN 2580, PUK 73915062", f"SIM PIN {PIN}, PUK {PIN}"),
    ("PUK: 12345678", f"PUK: {PIN}"),
    ("passcode 123456", f"passcode {PIN}"),
    ("iPhone passcode: 4821", f"iPhone passcode: {PIN}"),
    ("I changed my PIN to 4821 yesterday", f"I changed my PIN to {PIN} yesterday"),
    ("PIN for the Visa card is 3377", f"PIN for the Visa card is {PIN}"),
    ("the door code is 7731", f"the door code is {PIN}"),
    ("the alarm code is 2468.", f"the alarm code is {PIN}."),
    ("gate code 4412#", f"gate code {PIN}#"),
    ("the code for the front door is 7731", f"the code for the front door is {PIN}"),
    ("safe combination: 12-34-56", f"safe combination: {PIN}"),
    ("the combination to the safe is 36 24 12", f"the combination to the safe is {PIN}"),
    ("mein PIN ist 4821", f"mein PIN ist {PIN}"),
    ("Die PIN-Nummer lautet 9156", f"Die PIN-Nummer lautet {PIN}"),
    ("Türcode: 7731", f"Türcode: {PIN}"),
    ("mi PIN es 4821", f"mi PIN es {PIN}"),
    ("el código de la puerta es 7731", f"el código de la puerta es {PIN}"),
    ("le code de la porte est 7731", f"le code de la porte est {PIN}"),
    ("PIN-код: 4821", f"PIN-код: {PIN}"),
    ("код от домофона 1234", f"код от домофона {PIN}"),
    ("ПИН: 4821", f"ПИН: {PIN}"),  # capitals fold to Latin look-alikes that small letters do not have
    ("Код от домофона: 1234", f"Код от домофона: {PIN}"),
    ("DOOR_CODE=7731\nPIN=4821", f"DOOR_CODE={PIN}\nPIN={PIN}"),
    ("pin_code: 5093", f"pin_code: {PIN}"),
    ("暗証番号は4821です", f"暗証番号は{PIN}です"),
    ("银行卡密码是4821", f"银行卡密码是{PIN}"),
    ("카드 비밀번호는 4821", f"카드 비밀번호는 {PIN}"),
])
def test_a_pin_or_code_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["pin_code"]


@pytest.mark.parametrize("text", [
    "PIN codes are 4 digits",
    "reset your PIN in the app",
    "the PIN is wrong",
    "the PIN is 4 to 8 digits long",
    "the door code changes monthly",
    "the door code is 4 digits",
    "el código postal es 28001",
    "the error code is 4012",
    "exit code: 1337",
    "the code is 4821 lines long",
    "postal code: 90210",
    "the pin on the PCB is GPIO 4",
    "pin the version to 4.2.1",
    "pin numpy to 1.26.4",
    "pin: 13 (LED)",
    "PIN 2 is ground",
    "connect the LED to pin 13",
    "the LED sits on pin 2048 of the header",
    "pin 4821",
    "set pin 4 high",
    "PIN: 0000 is the factory default",
    "PIN: ****",
    "the combination of flags is 12 34",
    "passcode 12",
    "LED_PIN = 2048  # GPIO on the header",
    "the building code is 2021",
    "zip code 28001, area code 0912",
])
def test_pins_of_boards_and_other_codes_stay(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("mein Passwort ist sommerwiese", f"mein Passwort ist {PHRASE}"),
    ("Das Passwort ist Sommerwiese.", f"Das Passwort ist {PHRASE}."),
    ("Passwort: sommerwiese", f"Passwort: {PHRASE}"),
    ("mi contraseña es girasol", f"mi contraseña es {PHRASE}"),
    ("le mot de passe est tournesol", f"le mot de passe est {PHRASE}"),
    ("mdp: tournesol", f"mdp: {PHRASE}"),
    ("a senha é girassol", f"a senha é {PHRASE}"),
    ("мой пароль — подсолнух", f"мой пароль — {PHRASE}"),
    ("мой пароль это подсолнух", f"мой пароль это {PHRASE}"),
    ("пароль: подсолнух77", f"пароль: {PHRASE}"),
    ("пароль: подсолнух", f"пароль: {PHRASE}"),
    ("密码：向日葵2020", f"密码：{PHRASE}"),
    ("密码是向日葵。", f"密码是{PHRASE}。"),
    ("パスワードはひまわりです", f"パスワードは{PHRASE}です"),
    ("비밀번호는 해바라기입니다", f"비밀번호는 {PHRASE}입니다"),
    ("كلمة المرور: عبادالشمس", f"كلمة المرور: {PHRASE}"),
    ("رمز عبور من آفتابگردان است", f"رمز عبور من {PHRASE} است"),
])
def test_a_plain_word_after_a_label_of_another_language_is_redacted(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["password_phrase"]


@pytest.mark.parametrize("text", [
    "Passwort vergessen? Klicken Sie hier",
    "Das Passwort ist falsch",
    "Das Passwort ist abgelaufen.",
    "Das Passwort ist erforderlich",
    "Passwort: siehe Tresor",
    "la contraseña es incorrecta",
    "la contraseña es obligatoria.",
    "le mot de passe est trop court",
    "le mot de passe est incorrect",
    "a senha é obrigatória",
    "пароль должен быть длиннее 8 символов",
    "пароль — неверный",
    "пароль: обязательно",
    "Пароль: не менее 8 символов",
    "密码是什么？",
    "密码是必填的",
    "密码是否正确",
    "密码：至少8位字符",
    "パスワードは管理者に聞いてください",
    "パスワードは8文字以上です",
    "비밀번호는 필수입니다",
    "كلمة المرور هي خاطئة",
    "رمز عبور شما اشتباه است",
    "la clave es girasol",  # "clave" is also a keyword ("palabra clave"): it takes no plain word
])
def test_prose_about_passwords_in_other_languages_stays(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    ("wifi password is correct horse battery staple", f"wifi password is {PROSE}"),
    ("the passphrase is purple monkey dishwasher lamp.", f"the passphrase is {PROSE}."),
    ("password: correct horse battery staple", f"password: {PROSE}"),
    ("the wifi password: correct horse battery staple for guests", f"the wifi password: {PROSE} for guests"),
    ("password for the NAS is tiger lily river stone", f"password for the NAS is {PROSE}"),
    ("Password: Correct Horse Battery Staple", f"Password: {PROSE}"),
])
def test_a_passphrase_of_words_is_redacted_whole(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "the password policy requires 12 chars",
    "my password is in 1password",
    "the password is stored in the vault",
    "the password is too short",
    "the new password is twelve characters long",
    "the password is automatically generated daily",
    "the password is case sensitive",
    "the password is required for admin accounts",
    "your password is never logged or shared",
    "password: see the team vault entry",
    "Password: Enter Your Password Below",
    "Password Is Stored Securely",
    "Password: Click Forgot Password Link",
    "the password is hashed with bcrypt",
])
def test_prose_after_password_is_not_a_passphrase(text):
    assert scan_secrets(text) == []
    assert redact(text) == text
