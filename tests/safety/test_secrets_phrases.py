"""Credential shapes a tester stored and got back in clear (snapshot, recall, session_search, MCP tools): ``.netrc``
entries, ``docker login -p``, password phrases in the languages the injection scanner covers, age keys and PuTTY
key files. Every value below is fake. The prose cases next to them must stay untouched."""

from __future__ import annotations

import pytest

from pi_memory.safety import redact, scan_secrets

_BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()
AGE_KEY = "AGE-SECRET-KEY-1" + "".join(_BECH32[(i * 7 + 3) % 32] for i in range(58))
PPK_PRIVATE = ("AAAAIFAKEexampleFAKEexampleFAKEexampleFAKEexample000000000000\n"
               "AAAAFAKEexample0000aaaaBBBBccccDDDD+/==\n"
               "Private-MAC: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
PPK_3 = ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20261204\nPublic-Lines: 2\n"
         "AAAAC3NzaC1lZDI1NTE5AAAAIFAKEexampleFAKEexampleFAKEexample0000\nAAAAFAKE0000\nPrivate-Lines: 2\n"
         + PPK_PRIVATE)
PPK_2 = PPK_3.replace("File-3: ssh-ed25519", "File-2: ssh-rsa")


@pytest.mark.parametrize(("text", "expected"), [
    # a password that starts like a hash or cipher name is still a password (only the standard names are not)
    ("password: Bcrypt2024!", "password: [REDACTED:password_in_prose]"),
    ("password: Argon2id2024", "password: [REDACTED:password_in_prose]"),
    ("Passwort: Sha256Pass", "Passwort: [REDACTED:password_phrase]"),
    # .netrc entries, one line or several
    ("machine api.example.com login bob password TopSecretNetrc99",
     "machine api.example.com login bob password [REDACTED:netrc_password]"),
    ("machine git.internal\n  login deploy\n  password Hunter2-Netrc\n",
     "machine git.internal\n  login deploy\n  password [REDACTED:netrc_password]\n"),
    ("default login anonymous password Fake0Netrc", "default login anonymous password [REDACTED:netrc_password]"),
    ("echo 'machine 10.0.0.5 login ci password s3cr3tNetrc' >> ~/.netrc",
     "echo 'machine 10.0.0.5 login ci password [REDACTED:netrc_password]' >> ~/.netrc"),
    # a registry login's -p (mysql -p and sshpass -p were already caught)
    ("docker login -u bob -p Sup3rS3cretPw", "docker login -u bob -p [REDACTED:cli_password]"),
    # a tester's cases: global options before "login"
    ("docker --config /tmp/c login -p Zx9realPw42 r", "docker --config /tmp/c login -p [REDACTED:cli_password] r"),
    ("docker -D login -p Zx9realPw42 r", "docker -D login -p [REDACTED:cli_password] r"),
    ("docker login registry.example.com -u ci -p 'Fake-Registry-Pass-42'",
     "docker login registry.example.com -u ci -p '[REDACTED:cli_password]'"),
    ("podman login quay.io -u bob -pFakeQuayPass9", "podman login quay.io -u bob -p[REDACTED:cli_password]"),
    ("helm registry login ghcr.io -u bob -p FakeHelmPass77 && helm push chart.tgz",
     "helm registry login ghcr.io -u bob -p [REDACTED:cli_password] && helm push chart.tgz"),
    # password phrases: English
    ("the wifi pass: correcthorsebattery for office", "the wifi pass: [REDACTED:password_phrase] for office"),
    ("db pass: Hunter2Fake!", "db pass: [REDACTED:password_phrase]"),
    ("secret=Sup3rS3cretPw", "secret=[REDACTED:password_phrase]"),
    ("client_secret: Fake9Secret!x", "client_secret: [REDACTED:password_phrase]"),
    ("set password to 'Xy7!kLm2'", "set password to '[REDACTED:password_phrase]'"),
    ("I changed the admin password to Winter2026! yesterday",
     "I changed the admin password to [REDACTED:password_phrase] yesterday"),
    ("root password was set to Tr0ub4dor&3", "root password was set to [REDACTED:password_phrase]"),
    ("password: correcthorsebattery for the office wifi",
     "password: [REDACTED:password_phrase] for the office wifi"),
    # German, Russian, Chinese, Japanese, Korean, Spanish, French, Portuguese, Arabic, Persian
    ("Mein Passwort ist Sup3rS3cretPw", "Mein Passwort ist [REDACTED:password_phrase]"),
    ("Das WLAN-Kennwort lautet Fr1tzBox!2024.", "Das WLAN-Kennwort lautet [REDACTED:password_phrase]."),
    ("пароль: Sup3rS3cretPw", "пароль: [REDACTED:password_phrase]"),
    ("Пароль от сервера: Qwerty!2345", "Пароль от сервера: [REDACTED:password_phrase]"),
    ("密码是 Sup3rS3cretPw", "密码是 [REDACTED:password_phrase]"),
    ("数据库密码：Fake8Pass!x，请保管好", "数据库密码：[REDACTED:password_phrase]，请保管好"),
    ("パスワードはFake7Pass!xです", "パスワードは[REDACTED:password_phrase]です"),
    ("비밀번호는 Fake6Pass!x입니다", "비밀번호는 [REDACTED:password_phrase]입니다"),
    ("contraseña: Sup3rS3cretPw", "contraseña: [REDACTED:password_phrase]"),
    ("la contraseña es Fake5Pass?x", "la contraseña es [REDACTED:password_phrase]"),
    ("le mot de passe est Fake4Pass#x", "le mot de passe est [REDACTED:password_phrase]"),
    ("mot de passe : Fake4Pass#x", "mot de passe : [REDACTED:password_phrase]"),
    ("a senha é Fake3Pass$x", "a senha é [REDACTED:password_phrase]"),
    ("كلمة المرور: Fake2Pass%x", "كلمة المرور: [REDACTED:password_phrase]"),
    ("رمز عبور: Fake1Pass&x", "رمز عبور: [REDACTED:password_phrase]"),
    # age keys
    (AGE_KEY, "[REDACTED:age_secret_key]"),
    (f"export SOPS_AGE_KEY={AGE_KEY}", "export SOPS_AGE_KEY=[REDACTED:age_secret_key]"),
    (f"# created: 2026-12-04\n# public key: age1fake\n{AGE_KEY}\n",
     "# created: 2026-12-04\n# public key: age1fake\n[REDACTED:age_secret_key]\n"),
    # PuTTY key files: the private lines and their MAC go, the header and the public half stay
    (PPK_3, PPK_3.replace(PPK_PRIVATE, "[REDACTED:putty_private_key]")),
    (PPK_2 + "\nthat is the deploy key", PPK_2.replace(PPK_PRIVATE, "[REDACTED:putty_private_key]")
     + "\nthat is the deploy key"),
    ("Private-Lines: 1\nAAAAIFAKEexampleFAKEexampleFAKEexample0000\nnext", "Private-Lines: 1\n"
     "[REDACTED:putty_private_key]\nnext"),
])
def test_credential_shapes_redacted_value_only(text, expected):
    assert redact(text) == expected
    assert scan_secrets(text)
    assert redact(expected) == expected  # a redacted text stays as it is


@pytest.mark.parametrize("text", [
    # the tester's prose cases: plain words, stores, placeholders, env references, masked values
    "the password is stored in Vault",
    "password: see 1Password",
    "reset your password to continue",
    "the secret is to cache it",
    "pass: true",
    "password=${DB_PASSWORD}",
    "password: <your password>",
    "password: ****",
    "set the password to something memorable",
    "password: authentication required for admins",
    "Passwort: config/db.yml",
    "secret: 1Password",
    # the same in other languages
    "Das Passwort ist abgelaufen und muss erneuert werden.",
    "Passwort: siehe Wiki",
    "пароль: см. менеджер паролей",
    "密码是用户的生日",
    "密码：请联系管理员",
    "contraseña: ver 1Password",
    "la clave es mantenerlo simple",
    "palabra clave: python3",
    "le mot de passe est dans le coffre",
    "senha: ********",
    "كلمة المرور: <password>",
    "パスワードは管理者に聞いてください",
    "비밀번호는 팀 관리자에게 문의하세요",
    # "pass" and "secret" in their other senses
    "--- PASS: TestParseURLSchemes (0.00s)",
    "PASS: test_login_flow_2",
    "the boarding pass: downloaded",
    "secret: my-tls-secret",
    "secret: kubernetes.io/tls",
    "secret = os.environ['SECRET']",
    "secret: v1.2.3",
    "secret: 2024-05-01T10:00:00Z",
    'secret: "{{ vault_secret }}"',
    "Passwort: mindestens 12Zeichen",
    # docker -p that is a port, a login without -p
    "docker run -p 8080:80 nginx",
    "docker login registry.example.com --password-stdin < token.txt",
    "the docker login -p flag leaks to ps, use --password-stdin",  # a tester's cases: prose, and no literal
    "docker login -p=$(aws ecr get-login-password) 123.dkr.ecr.eu-west-1.amazonaws.com",
    "docker login ghcr.io && docker run -p 5432:5432 postgres",
    # "machine" in prose, a netrc entry with a placeholder
    "machine learning password cracking is slow",
    "each machine has password rotation enabled",
    "machine api.example.com login bob password ${NETRC_PASSWORD}",
    # age and PuTTY named, not pasted
    "age keys start with AGE-SECRET-KEY-1 and are stored in keys.txt",
    "PuTTY-User-Key-File-3: ssh-ed25519 starts every new .ppk file",
    "Private-Lines: 14 is the length of the private part",
    # a tester's cases: a hash, cipher, encoding, protocol, length or time where a value would be
    "Passwort: sha256 (Hash im Login-Service)", "密码是sha256加密存储的", "Password - min8chars policy",
    "пароль: bcrypt12", "contraseña: utf8mb4", "パスワードはbcrypt12で保存", "Passwort ist 12Zeichen lang",
    "password changed to bcrypt12", "secret: ConfigMap2", "password: argon2id", "password: OAuth2",
    "password: x86_64", "password: 2024-05-01T10:00:00Z", "password: AES-256-GCM", "palabra clave: async2await",
])
def test_prose_is_not_a_credential(text):
    assert scan_secrets(text) == []
    assert redact(text) == text
