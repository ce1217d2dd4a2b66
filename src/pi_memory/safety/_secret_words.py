"""Passwords that are words (:mod:`._secret_phrases` and :mod:`.secrets` use these): a plain word after a password
label in another language or script (``Passwort ist sommerwiese``, ``пароль: подсолнух``, ``密码是向日葵``), and a
passphrase of several English words (``wifi password is correct horse battery staple``).

A plain word after a label (``plain_password``)
------------------------------------------------
English "password is <word>" was already read (``_secret_values._password_value``); the other languages only
took a value mixing letters with digits or symbols. Now a value of letters alone counts after a definite form
(``:``/``=`` or a copula, not "now", an arrow or only a space) when

* it is one word of 6+ letters (Latin, Cyrillic, Arabic script) or 3+ characters of one of Han, hiragana,
  katakana or Hangul (Han with kana is a phrase: "管理者に聞いてください"), the CJK run cut before a sentence
  ending glued to it (``です``, ``입니다``, ``이에요``);
* it ends the clause (end of line, ``.``, ``,``, ``;``, ``!``, ``?``, a closing bracket, CJK punctuation; for
  Persian the copula ``است`` after it): "le mot de passe est trop court" goes on after "trop";
* it is not a word that prose puts there: the lists below (wrong, required, expired, new, secret, ... in each
  language) and the endings of adjectives and participles (German -ig, -lich, ge-…-t; Spanish and Portuguese
  -ado, -ida, -ble, -nte; Russian -ый, -ая, -ен, verbs -ет, -ть; ...); a CJK value holds none of the grammar
  characters of ``_CJK_PROSE`` (的, 不, 请, 何, ません, 없, ...), and no digit counted as a length (8位, 8文字).

A word of ``_secret_values._COMMON_WORDS`` (words people choose as passwords: geheim, sesam, secreto, butterfly, …)
counts although prose puts it there, in English too ("the password is butterfly"): "Passwort ist geheim" is
replaced, "Das Passwort ist geheim und wird nicht weitergegeben" is not (the clause goes on), and neither is a word
"geheim" ("secret") after a German label with its article or possessive: "Das Passwort ist geheim.", "Mein
WLAN-Passwort ist geheim" are sentences about a password ("la contraseña es secreto" is not: the adjective would be
"secreta").

Costs: a password that is another such word ("contraseña es segura", "пароль — новый") or that ends like one
("dorado") is missed, and so is one the sentence goes on after ("Passwort ist sommerwiese und …") and "Das Passwort
ist geheim." said of a password whose value is "geheim".

A passphrase (``passphrase_value``)
-----------------------------------
After an English password label and ``:``/``=`` or ``is``/``was``: three to eight words of 2-20 small letters (each
may start with a capital), none of them a word of grammar (articles, prepositions, pronouns, auxiliaries,
negations, adverbs of time or degree, number words, length words: ``_GRAMMAR``), none a word of ``_NOT_A_PASSWORD``
or a default ("password", "user": "Password: Click Forgot Password Link"), at most one with an -ed, -ly, -ing, ...
ending; after ``is`` they must end the clause, after ``:`` a word of grammar may follow ("password: correct horse
battery staple for the guests"). The whole phrase is replaced. "the password is stored in the vault", "… is twelve
characters long", "… is automatically generated daily" are prose. Cost: a passphrase holding a word of grammar
("the cat in the hat"), a digit or capitals inside a word is replaced only up to it, when three words come before
it, or not at all.
"""

from __future__ import annotations

import re

from ._secret_values import _CLAUSE_ENDS, _COMMON_WORDS, _DEFAULTS, _NOT_A_PASSWORD, _PROSE_SUFFIX, _in_marker
from ._text import fold


def _fold_all(words: str) -> frozenset[str]:
    return frozenset(fold(w).text.lower() for w in words.split())


# ---- plain_password ------------------------------------------------------------------------------------------
# Characters of the scripts a wide value may hold (Cyrillic, Arabic, CJK; folded Cyrillic words mix in Latin
# look-alikes): a value token holds at least one of them.
SCRIPT_CHARS = r"\u0400-\u04ff\u0600-\u06ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
# A CJK word is written in one script: Han mixed with kana is a phrase with particles and verb endings
# ("管理者に聞いてください", "ask the administrator").
_CJK_SCRIPTS = (("han", re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")), ("hiragana", re.compile(r"[\u3040-\u309f]")),
                ("katakana", re.compile(r"[\u30a0-\u30ff]")), ("hangul", re.compile(r"[\uac00-\ud7af]")))
# Sentence endings glued to a CJK value, in their folded spelling ("です" folds to "てす").
_CJK_ENDINGS = tuple(sorted(_fold_all("です でした だ だよ よ 입니다 이다 이에요 예요 이야 야 였어요 였다"), key=len,
                            reverse=True))
_CJK_PROSE = re.compile("|".join(re.escape(fold(w).text) for w in (
    "的", "了", "吗", "嗎", "什么", "什麼", "多少", "否", "不", "未", "已", "无", "無", "没", "請", "请", "必", "错", "錯",
    "正确", "正確", "空", "输入", "輸入", "设置", "設置", "修改", "忘", "加密", "存储", "儲存", "字符", "过期", "過期", "长度",
    "何", "必須", "不要", "任意", "間違", "正し", "無効", "有効", "変更", "設定", "入力", "忘れ", "ません", "ない", "ます",
    "され", "文字", "桁", "필수", "틀렸", "잘못", "변경", "설정", "입력", "없", "않", "무엇", "뭐", "자리", "글자", "만료",
    "올바르", "맞", "다르", "되었", "됐", "비어")))
_COUNTED = re.compile(r"\d+[ \t]*(?:" + "|".join(re.escape(fold(w).text) for w in (
    "位", "个", "個", "字", "文字", "桁", "자", "자리", "글자")) + ")")
# Words prose puts after "password is/:" in German, Spanish, French, Portuguese, Russian, Arabic, Persian.
_PROSE = _fold_all("""
    falsch richtig korrekt ungültig gültig abgelaufen erforderlich notwendig optional geheim sicher unsicher leer
    identisch gespeichert geändert vergessen gesperrt veraltet hinterlegt Pflicht schwach stark zufällig anders
    incorrecta incorrecto correcta correcto obligatoria obligatorio válida válido inválida inválido segura seguro
    débil fuerte nueva nuevo antigua requerida necesaria secreta secreto privada privado distinta distinto igual
    larga largo corta corto vacía errónea caducada diferente temporal opcional sensible
    incorrect incorrecte correct correcte obligatoire valide invalide sécurisé sécurisée faible forte nouveau
    nouvelle requis requise expiré expirée différent différente vide secret secrète temporaire identique erroné
    erronée modifié modifiée changé oublié oubliée chiffré chiffrée masqué masquée
    incorreta incorreto correta correto obrigatória obrigatório válida inválida segura fraca forte nova novo
    necessária expirada diferente temporária secreta vazia errada alterada criptografada
    неверный неправильный правильный верный обязательный обязателен слабый надёжный надежный сложный простой
    новый старый пустой другой секретный скрытый истёк истек изменён изменен неверен верен короткий длинный
    обязательно необязательно скрыто зашифрован зашифровано отсутствует требуется нужен задан установлен
    خاطئة صحيحة مطلوبة قوية ضعيفة جديدة قديمة سرية فارغة طويلة قصيرة مشفرة
    اشتباه نادرست درست صحیح الزامی ضروری ضعیف قوی جدید قدیمی کوتاه طولانی منقضی خالی مخفی امن محرمانه لازم معتبر
    نامعتبر""")
_LATIN_ENDINGS = re.compile(
    r"(?:ig|lich|isch|bar|los|sam|haft|iert|ierte|keit|heit|ung"  # German
    r"|ada|ado|ida|ido|adas|ados|idas|idos|oria|orio|aria|ario|ble|vel|nte|ntes|osa|oso|iva|ivo|ica|ico|mente"
    r"|cion|sion|cao|sao|dad|dade|ee|ees|oire|ique|euse|eux)$"  # Spanish, Portuguese, French (folded: no accents)
    r"|^(?:ge|ver|be|zer|ent)[a-z]{3,}(?:t|en)$")  # German participles: gespeichert, verschlüsselt, abgelaufen
_CYRILLIC_ENDINGS = tuple(fold(w).text for w in (
    "ый", "ий", "ой", "ая", "яя", "ое", "ее", "ые", "ие", "ого", "ому", "ен", "ена", "ено", "ны", "ет", "ит", "ут",
    "ют", "ят", "ть", "ся", "ется"))
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_LINE_GOES_ON = re.compile(r"[ \t]*(?:[.!?;,)\]\n。，、！？；）]|$)")


def trim_wide(value: str) -> str:
    """A wide value cut where its sentence goes on: a Latin password followed by glued CJK text
    ("Fake7Pass!xです") keeps its Latin part; a CJK value loses a sentence ending glued to it ("ひまわりです")."""
    first = _CJK.search(value)
    if first is None:
        return value
    if first.start() >= 4 and not _CYRILLIC.search(value, 0, first.start()):
        return value[: first.start()]
    for ending in _CJK_ENDINGS:
        if value.endswith(ending) and len(value) > len(ending):
            return value[: -len(ending)]
    return value


def counted_length(value: str) -> bool:
    """Whether ``value`` gives a length in CJK counters ("8位", "8文字以上", "12자리")."""
    return _COUNTED.search(value) is not None


# A word of ``_COMMON_WORDS`` that also says "secret", and the start of a sentence that says it of a password: an
# article or a possessive right before the label ("Das Passwort ist", "mein WLAN-Passwort ist").
_SAYS_SECRET = frozenset(("geheim",))
_SENTENCE_HEAD = re.compile(
    r"(?<![^\W_])(?:das|dein|mein|unser|euer|ihr|sein|dieses|jedes)[ \t]+[\w-]{0,30}?(?:passwort|kennwort)"
    r"[ \t]+ist[ \t]+$", re.IGNORECASE)


def plain_password(value: str, text: str, end: int, *, closed: bool = False) -> bool:
    """Whether ``value`` (letters only, folded), ending at ``end`` of ``text``, reads as a password after a label
    in a definite form (module docstring). ``closed``: the caller saw the clause end after it (a Persian copula)."""
    low = value.lower()
    if _CJK.search(value):
        scripts = {name for name, rx in _CJK_SCRIPTS if rx.search(value)}
        return (len(value) >= 3 and len(scripts) == 1 and _CJK_PROSE.search(value) is None
                and (_LINE_GOES_ON.match(text, end) is not None or text.startswith(_CJK_ENDINGS, end)))
    if not value.isalpha() or not (closed or _CLAUSE_ENDS.match(text, end) is not None):
        return False
    if low in _COMMON_WORDS:  # "Passwort ist geheim": a word people choose, whatever prose puts there, but
        # "Das Passwort ist geheim.": a sentence saying the password is secret
        start = end - len(value)
        return low not in _SAYS_SECRET or _SENTENCE_HEAD.search(text, max(0, start - 80), start) is None
    if len(value) < 6:
        return False
    if low in _PROSE or low in _NOT_A_PASSWORD or _PROSE_SUFFIX.search(low) is not None:
        return False
    if _CYRILLIC.search(value):
        return not low.endswith(_CYRILLIC_ENDINGS)
    if low.isascii():
        return _LATIN_ENDINGS.search(low) is None
    return True  # Arabic script: its prose words are in ``_PROSE``


# ---- passphrase_value ----------------------------------------------------------------------------------------
_GRAMMAR = _fold_all("""
    a an the this that these those it its is are was were be been being am has have had do does did will would can
    could should must may might shall to of in on at by for from with without within into onto via per as than
    and or but nor so if then else when while because since until unless after before about over under again
    not no never always often sometimes usually also still now already just only very too quite rather really
    each every all any some many much more most less least few several other another same such both either neither
    i you he she we they me him her us them my your his our their mine yours who whom whose which what where why
    how there here one two three four five six seven eight nine ten eleven twelve twenty hundred
    characters character chars char letters letter digits digit symbols symbol words word long short length
    minimum maximum least enough case sensitive see use set reset change changed required stored saved sent
    shared kept hidden given written same different same daily weekly monthly yearly new old
""")
# The label is read in any case, the words in small letters or capitalised ("Correct Horse Battery Staple").
PASSPHRASE_PATTERN = (
    r"(?<![^\W_])(?P<key>(?i:password|passphrase|passwd|pw|pass[ \t]+phrase))(?![^\W_])"
    r"(?:[ \t]+(?i:for|of|on|to)[ \t]+[^:=\n\"]{1,40}?)?"
    r"(?:(?P<sep>[ \t]*[:=][ \t]*)|[ \t]+(?P<is>(?i:is|was))[ \t]+)"
    r"(?P<v>[A-Za-z][a-z]{1,19}(?:[ \t]+[A-Za-z][a-z]{1,19}){2,12})"
)
PASSPHRASE_KEYWORDS = ("pass", "pw")


def passphrase_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """The span of a passphrase of 3-8 words (module docstring), or ``None``."""
    start = m.start("v")
    if _in_marker(text, start):
        return None
    words = list(re.finditer(r"[A-Za-z]+", m.group("v")))
    taken = []
    for word in words:
        if word.group().lower() in _GRAMMAR:
            break
        taken.append(word)
    if len(taken) < 3 or len(taken) > 8:
        return None
    if len(taken) < len(words) and m.group("is") is not None:
        return None  # "the password is correct horse battery in the …": after "is" the phrase must end the clause
    texts = [w.group().lower() for w in taken]
    if any(t in _NOT_A_PASSWORD or t in _DEFAULTS for t in texts) or sum(
            _PROSE_SUFFIX.search(t) is not None for t in texts) > 1:
        return None
    end = start + taken[-1].end()
    if len(taken) == len(words) and _CLAUSE_ENDS.match(text, end) is None:
        return None  # "password: correct horse battery Staple": a capital or digit goes on; not a plain phrase
    return (start, end)
