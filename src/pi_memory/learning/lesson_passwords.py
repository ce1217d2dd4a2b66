"""A password given in plain letters in a correction's lesson ("password swordfish", "my password is swordfish",
"the db password: swordfish", "Passwort schwertfisch", "mot de passe espadon", "пароль рыбамеч", "密码 swordfish").

The credential check of :func:`.corrections.unusable` finds a value that holds a digit or a sign (``hunter2``) or one
the shared scanner finds; a word of letters alone after "password" passed, and the lesson was saved with the
password in it. A word after "password" is as often what the sentence says about passwords ("use the password
manager", "rotate the db password monthly", "never log the password anywhere"), so :func:`gives_password` takes it
for a value only when all of these hold:

* it follows a password word of one of the capture's languages (password, passphrase, passwd, Passwort, Kennwort,
  contraseña, mot de passe, пароль, 密码, 口令; singular: "passwords live in 1Password" gives none), after ``:`` /
  ``=``, a copula ("is", "ist", "es", "est", "это", 是, 为) or a space;
* it is one word of 4 or more letters, and it ends the clause: the end of the lesson, a punctuation mark, or a
  word that links to what follows ("password swordfish for staging");
* it is no word the rules know: a function word, a directive verb, a word about passwords (:data:`ABOUT`: manager,
  vault, reset, policy, secret, monthly, anywhere...); no word formed the way such words are (:data:`_DERIVED`:
  "monthly", "stored", "hashing", "rotation", "manager", "hashes", "forgotten", "chiffré"); after a Chinese
  password word, no Chinese word (密码管理器 is "password manager"); and in Cyrillic, no word ending as a
  genitive or an adjective does ("пароль администратора", "пароль надёжный").

Besides: a quoted word after a password word or an ``…_PASSWORD`` variable is a value whatever the word
('use the password "swordfish"'), and so are ``DB_PASSWORD to swordfish`` and "use swordfish as the password".

Why here and not in the shared scanner (:mod:`pi_memory.safety`): the scanner refuses and redacts every memory
write and every text a model is shown, where "password" followed by a plain word is ordinary prose, and its
password rule takes a bare value only when it looks random (``benchmarks/scanner_accuracy.py``: 0.0 % of its
benign lines blocked). A lesson is one short directive sentence captured without a person or a model reading it,
and a false positive here costs one lesson not saved automatically (``pi-memory learning detect`` says why),
while a password saved is in every later prompt. Costs: a password that is an English-looking word ("tigers",
"hidden", "manager"), a Cyrillic word ending in a vowel ("собака") or a role name ("admin") is missed; "password
root" (root's password) is taken for a value.
"""

from __future__ import annotations

import re

from pi_memory.learning import correction_languages as langs

_NAME = (r"(?<![\w-])(?:passwor[dt]|passphrase|passwd|kennwort|contraseña|mot\s+de\s+passe|пароль|паролем)"
         r"(?:[^\S\n]*[:=：][^\S\n]*|[^\S\n]+(?:(?:is|ist|lautet|es|est|это|—|-)[^\S\n]+)?)"
         r"|(?:密码|口令)[^\S\n]*(?:[:=：是为][^\S\n]*)?")
_GIVEN = re.compile(
    rf"(?:{_NAME})(?P<value>[^\W\d_]{{4,}})"
    r"(?=[^\S\n]*(?:$|[,;.!?)\]，；。！？:\n])|[^\S\n]+(?P<next>[^\W\d_]+))",
    re.IGNORECASE | re.MULTILINE)
# A quoted word after a password word or an env variable's name is a value whatever the word ('use the password
# "swordfish"', "set DB_PASSWORD to 'swordfish'"); so is a word given "as the password" ("use swordfish as the
# password").
_QUOTED = re.compile(r"(?:(?<![\w-])(?:passwor[dt]|passphrase|passwd|kennwort|contraseña|mot\s+de\s+passe|пароль)"
                     r"|密码|口令|[A-Z][A-Z0-9]*_PASS(?:WORD|WD)?)"
                     r"[^\S\n]*(?:[:=：]|is|ist|lautet|to)?[^\S\n]*[\"'“‘«`][^\W\d_]{4,}[\"'”’»`]", re.IGNORECASE)
_AS_THE = re.compile(r"(?<![\w-])(?P<value>[^\W\d_]{4,})[^\S\n]+as[^\S\n]+(?:the|my|our|your)[^\S\n]+"
                     r"(?:\w+[^\S\n]+)?password\b", re.IGNORECASE)
_ENV_TO = re.compile(r"\b[A-Z][A-Z0-9]*_PASS(?:WORD|WD)?[^\S\n]*(?:=|[^\S\n]to[^\S\n])[^\S\n]*[^\W\d_]{4,}\b")

# What a sentence says about a password, in the capture's languages (lower case).
_ABOUT = """
manager managers vault keychain keyring store safe file files field fields prompt prompts box input entry hash salt
value values itself flag flags hook hooks though too also variable param parameter argument option setting config
token key column attribute property string check logic handling requirement there here again instead ever yet now
properly please first anyway
reset policy policies rules rule length strength change changes rotation expiry expiration hint hints recovery
login logon auth check protection protected complexity history strong weak secret private secure plain plaintext
cleartext default temporary temp master current new old same wrong correct right invalid valid empty blank unset
required optional mandatory needed anywhere everywhere somewhere nowhere elsewhere twice once later today tomorrow
weekly inline offline online securely locally separately anyway anymore either root admin user users sudo env
grant flow type mode method form page screen dialog text phrase access directly
geheim sicher neues neue alte aktuelle falsche richtige ändern vergessen zurücksetzen speichern direkt
segura seguro fuerte débil nueva nuevo actual anterior maestra maestro temporal correcta incorrecta cifrada
fort forte faible nouveau nouvelle actuel actuelle ancien maître temporaire correct incorrect oublié
"""
ABOUT = frozenset(_ABOUT.split())
# Words formed as a word about something is ("monthly", "stored", "hashing", "rotation", "manager", "hashes",
# "forgotten", "chiffré"), in Latin letters.
_DERIVED = re.compile(r"(?:ed|ly|ing|ings|tion|sion|ment|ness|less|able|ible|ful|ity|cy|er|or|s|en|ern|eln|ée?s?|é)$")
# In Cyrillic, a genitive ("пароль сервера", "пароль администратора") or an adjective ("пароль надёжный").
_CYRILLIC_FORM = re.compile(r"(?:[аяыиуюеоё]|ов|ев|ей|ой|ий|ый|ом|ем|ам|ям|ах|ях)$")
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
# Words that link a value to what follows, besides the function words ("password swordfish für staging").
_LINK_WORDS = "for and or on in at to with when und für bei auf oder para con por pour sur avec et для на в и с при или"
_LINKS = frozenset(_LINK_WORDS.split())


def gives_password(lesson: str, function_words: frozenset[str], directives: frozenset[str]) -> bool:
    """Whether ``lesson`` gives a password in letters alone (the module's rules)."""
    if _QUOTED.search(lesson) or _ENV_TO.search(lesson):
        return True
    for m in _AS_THE.finditer(lesson):
        value = m.group("value").lower()
        if value not in function_words and value not in directives and value not in ABOUT:
            return True
    for m in _GIVEN.finditer(lesson):
        value = m.group("value").lower()
        following = (m.group("next") or "").lower()
        if following and following not in function_words and following not in _LINKS:
            continue  # more words follow: the word names a kind of password ("password reset link")
        if value in function_words or value in directives or value in ABOUT:
            continue
        if langs.is_cjk(value):
            continue
        if _CYRILLIC.match(value):
            if _CYRILLIC_FORM.search(value):
                continue
        elif _DERIVED.search(value):
            continue
        return True
    return False
