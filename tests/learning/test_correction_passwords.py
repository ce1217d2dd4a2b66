"""A password given in letters alone is a credential in a lesson too ("password swordfish", "my password is
swordfish", "the db password: swordfish" were saved as lessons, in every language the capture reads), while a lesson
about passwords is saved as before (:mod:`pi_memory.learning.lesson_passwords`)."""

from __future__ import annotations

import pytest

from pi_memory.learning.corrections import CorrectionRules, capture, unusable

RULES = CorrectionRules.from_lists()

REFUSED = [  # each was saved as a lesson, the password in it
    "Always use password swordfish",
    "no, use password swordfish",
    "Always use password swordfish.",
    "Always log in with password swordfish for staging",
    "Always log in to staging, my password is swordfish",
    "Always use the staging db, its password: swordfish",  # caught before too (the shared scanner)
    "Always use the passphrase swordfish",
    "never set password=swordfish",
    "Nimm immer das Passwort schwertfisch",
    "Always use: mein Passwort ist schwertfisch",
    "Benutze immer das Kennwort schwertfisch für staging",
    "no, use: mi contraseña es pezespada",
    "Utilise toujours le mot de passe espadon",
    "no, use: mon mot de passe est espadon",
    "Всегда используй пароль рыбамеч",
    "Всегда используй пароль: рыбамеч",
    "以后都用密码 swordfish",
    "以后都用密码swordfish",
    "以后都用密码是swordfish",
    # a second tester's misses: a quoted value, German "lautet", an env variable, "X as the password"
    'No, use the password "swordfish" for staging.',
    "No, use the password 'swordfish'",
    "Always use: das Passwort lautet schwertfisch",
    "No, set DB_PASSWORD to swordfish",
    "No, use swordfish as the password",
    "Always use swordfish as the staging password",
]

ALLOWED = [  # (message, the lesson saved): lessons about passwords, with no password in them
    ("never print the password", "Never print the password"),
    ("always use the password manager", "Always use the password manager"),
    ("Always keep passwords in 1Password", "Always keep passwords in 1Password"),
    ("Never log the password anywhere", "Never log the password anywhere"),
    ("Never put the password in the repo", "Never put the password in the repo"),
    ("Always use the password from the vault", "Always use the password from the vault"),
    ("Never share the password with anyone", "Never share the password with anyone"),
    ("Always store the password hash, not the password", "Always store the password hash, not the password"),
    ("Never commit the password file", "Never commit the password file"),
    ("Always ask for the password", "Always ask for the password"),
    ("Always use 1Password for the password", "Always use 1Password for the password"),
    ("Never type the password twice", "Never type the password twice"),
    ("Never hardcode the password inline", "Never hardcode the password inline"),
    ("Always use the password reset link", "Always use the password reset link"),
    ("Never use password authentication, use keys", "Never use password authentication, use keys"),
    ("Never send the password over email", "Never send the password over email"),
    ("Всегда используй пароль администратора", "Всегда используй пароль администратора"),
    ("以后都用密码管理器", "以后都用密码管理器"),
    # a second tester's false positives: the word after "password" says what about it
    ("No, never log the password value.", "Never log the password value"),
    ("Stop, never log the password itself.", "Never log the password itself"),
    ("No, use the password flag.", "Use the password flag"),
    ("No, use the password hook", "Use the password hook"),
    ("Never log the password though", "Never log the password though"),
    ("Never use the password as the username", "Never use the password as the username"),
]


@pytest.mark.parametrize("text", REFUSED)
def test_a_password_in_letters_alone_is_not_saved(text):
    found = capture(RULES, text, None)
    assert (found.detection.correction, found.detection.directive, found.detection.rule, found.entry) == (
        False, None, "credential", None)


@pytest.mark.parametrize(("text", "lesson"), ALLOWED)
def test_a_lesson_about_passwords_is_saved(text, lesson):
    found = capture(RULES, text, None)
    assert (found.detection.correction, found.detection.directive) == (True, lesson)
    assert found.entry == f"[correction] {lesson} — Failed: User corrected the agent"


@pytest.mark.parametrize(("lesson", "why"), [
    # the brief's own words, as lessons (the capture's rules find no directive verb in some of them)
    ("Password swordfish", "credential"),
    ("My password is swordfish", "credential"),
    ("The db password: swordfish", "credential"),
    ("Never print the password", None),
    ("Use the password manager", None),
    ("Passwords live in 1Password", None),
    ("Rotate the db password monthly", None),
    ("Use the password grant only in tests", None),  # OAuth's grant, a word about the password
    ("Verwende nie das Passwort direkt", None),
    ("Use the password Bob gave you", None),  # more words follow: it says which password
])
def test_each_lesson_s_reading(lesson, why):
    assert unusable(lesson, RULES.directives) == why


def test_the_tables_are_large_enough():
    assert len(REFUSED) >= 10 and len(ALLOWED) >= 10
