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
    # "default" begins a .netrc entry and is an ordinary word: "default password <word>" in prose is no entry
    "Always change the default password immediately", "Reset the default password afterwards",
    "the router's default password remains unchanged",
])
def test_prose_is_not_a_credential(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


# ---- looser forms: label and value with only a space, an arrow, "is now", the Persian copula last --------------
R = "[REDACTED:password_phrase]"
LOOSE_FORMS = [
    # label, a space, the value
    ("пароль Qwerty123", f"пароль {R}"),
    ("мой пароль Zx9!mTq4 никому не говори", f"мой пароль {R} никому не говори"),
    ("guest wifi password Gr33n!Tea at the front desk", f"guest wifi password {R} at the front desk"),
    ("Passwort Wolke7#Berg für den Router", f"Passwort {R} für den Router"),
    ("mot de passe Azerty123 pour le NAS", f"mot de passe {R} pour le NAS"),
    ("contraseña Nube2025x para el portal", f"contraseña {R} para el portal"),
    ("senha Praia#2024 do roteador", f"senha {R} do roteador"),
    ("密码 Sup3rS3cretPw，别外传", f"密码 {R}，别外传"),
    ("비밀번호 Fake6Pass!x 입니다", f"비밀번호 {R} 입니다"),
    ("the vpn password qwerty123 still works", f"the vpn password {R} still works"),
    ("admin password 'Hunter2!x9'", f"admin password '{R}'"),
    ("Passwort Kennwort: Geheim!2025", f"Passwort Kennwort: {R}"),  # a rejected bare value does not hide a label
    # an arrow
    ("db password -> Hunter2!x9", f"db password -> {R}"),
    ("VPN password → Vpn#2025zz (rotated Monday)", f"VPN password → {R} (rotated Monday)"),
    ("пароль --> Qwerty123", f"пароль --> {R}"),
    ("mot de passe ==> Soleil#42x", f"mot de passe ==> {R}"),
    ("密码 -> Xy7!kLm2", f"密码 -> {R}"),
    ("contraseña ⇒ Luna$2025", f"contraseña ⇒ {R}"),
    # a copula with "now", "still" or their equivalent
    ("the staging password is now Tr0ub4dor&3", f"the staging password is now {R}"),
    ("the root password is still Hunter2!x9 on the old box", f"the root password is still {R} on the old box"),
    ("Das Passwort ist jetzt Geheim!2025.", f"Das Passwort ist jetzt {R}."),
    ("la contraseña ahora es Nube#2025x", f"la contraseña ahora es {R}"),
    ("le mot de passe est désormais Soleil#42x", f"le mot de passe est désormais {R}"),
    ("a senha agora é Praia#2024", f"a senha agora é {R}"),
    ("пароль теперь Qwerty123", f"пароль теперь {R}"),
    ("密码现在是Xy7!kLm2", f"密码现在是{R}"),
    ("비밀번호는 이제 Fake6Pass!x", f"비밀번호는 이제 {R}"),
    ("كلمة المرور الآن هي Kf93!xQ2", f"كلمة المرور الآن هي {R}"),
    # Persian: the copula last, qualifier words after the label; Arabic qualifiers before ":" or "هي"
    ("رمز عبور سرور Kf93!xQ2 است", f"رمز عبور سرور {R} است"),
    ("رمز عبور من Wq8#zLp4 هست", f"رمز عبور من {R} هست"),
    ("گذرواژه وای\u200cفای دفتر Kf93!xQ2 است.", f"گذرواژه وای\u200cفای دفتر {R} است."),
    ("کلمه عبور ایمیل Tz7$kPw9 می\u200cباشد", f"کلمه عبور ایمیل {R} می\u200cباشد"),
    ("رمز عبور Kf93!xQ2 است", f"رمز عبور {R} است"),
    ("رمز عبور سرور: Kf93!xQ2", f"رمز عبور سرور: {R}"),
    ("كلمة المرور الجديدة هي Kf93!xQ2", f"كلمة المرور الجديدة هي {R}"),
    ("كلمة مرور الخادم: Kf93!xQ2", f"كلمة مرور الخادم: {R}"),
]

LOOSE_PROSE = [
    # the testers' prose cases
    "the password is stored in vault", "password reset link", "change your password now", "пароль от почты",
    "password -> see 1Password",
    # no value after a bare label, an arrow or "is now": words, code, names, terms
    "password -> 1Password", "the password is now required", "the password is now e-mail based",
    "the password is still missing", "Passwort ist jetzt abgelaufen", "la contraseña ahora es obligatoria",
    "пароль теперь хранится в менеджере", "密码现在是用户的生日", "password Manager", "password e-mail template",
    "password Single-Sign-On flow", "CREATE TABLE users (id INT, password VARCHAR(255) NOT NULL)",
    "rename password -> passwd_hash", "password -> DB_PASSWORD", "password -> secrets.yaml",
    "password -> validate(password)", "password -> PasswordEncoder::encode", "login -> password -> dashboard",
    "conn->password->data42", "password step2 of the wizard", "password field1 is hidden", "password 123456789",
    "password 2FA-enabled accounts", "the password CVE-2023-27350 bypass", "the password JIRA-1234 ticket",
    "password ISO-8859-1 encoding bug", "password 256-bit key", "password A-Za-z0-9 only",
    "password 550e8400-e29b-41d4-a716-446655440000 in Bitwarden", "password PKCS#12 bundle", "password SHA256",
    "password Argon2id", "password v1.2.3", "password ${DB_PASSWORD}", "password <your-password>",
    "password ChangeMe123", "password k8s-cluster", "password WPA2-PSK", "пароль Router2-сети", "пароль qwerty",
    # labels that take no bare value: everyday "pass"/"secret"/"clave", "암호" (cipher), MDP (Markov)
    "pass Qwerty123 to the helper", "secret Sauce4242 recipe", "clave Qwerty123", "암호 Curve25519 사용",
    "MDP Gridworld4x4 results",
    # Persian and Arabic: no copula after the value, a value that is a term, a rule about characters
    "رمز عبور سرور Kf93!xQ2", "رمز عبور سرور SSH-Key است", "رمز عبور باید شامل A-Z و 0-9 باشد",
    "رمز عبور هست", "كلمة المرور الجديدة مطلوبة",
]


@pytest.mark.parametrize(("text", "expected"), LOOSE_FORMS)
def test_looser_forms_redact_a_random_looking_value(text, expected):
    assert redact(text) == expected
    assert [f.id for f in scan_secrets(text)] == ["password_phrase"]
    assert redact(expected) == expected


@pytest.mark.parametrize("text", LOOSE_PROSE)
def test_looser_forms_leave_prose_and_code(text):
    assert scan_secrets(text) == []
    assert redact(text) == text


@pytest.mark.parametrize(("text", "expected"), [
    # near misses next to a secret: only the value goes
    ("password reset link sent; new password -> Hunter2!x9",
     f"password reset link sent; new password -> {R}"),
    ("пароль от почты сменён, пароль теперь Qwerty123", f"пароль от почты сменён, пароль теперь {R}"),
    ("the password is now required; the password is now Tr0ub4dor&3",
     f"the password is now required; the password is now {R}"),
    ("رمز عبور باید قوی باشد. رمز عبور سرور Kf93!xQ2 است", f"رمز عبور باید قوی باشد. رمز عبور سرور {R} است"),
])
def test_looser_forms_next_to_prose(text, expected):
    assert redact(text) == expected


def test_looser_forms_anchored_search_finds_what_every_position_finds():
    from pi_memory.safety import secrets as S
    from pi_memory.safety._text import fold

    for text in [t for t, _ in LOOSE_FORMS] + LOOSE_PROSE:
        folded = fold(text).text
        assert S._folded_matches(folded) == S._folded_matches(folded, anchored=False), text
