"""Threat rows of the prompt-injection, role-hijack and system-prompt-leak families in other languages than
English: Chinese (simplified and traditional), Japanese, Korean, Russian, German, Spanish, French, Portuguese,
Arabic and Persian. Each language has an "ignore (all) previous instructions" row, a "you are now a …" row, a
"you are now root/admin/superuser" row (no article), an "ignore the user / obey (only) me" row and a "show your
system prompt" row; they report the English rows' ids (``ignore_instructions``, ``role_hijack``,
``user_override``, ``system_prompt_leak``), so a refusal reads the same in every language.

The scanner matches the folded text (:func:`._text.fold`: accents and other combining marks dropped,
Cyrillic/Greek look-alikes mapped to Latin letters, Japanese voiced marks dropped), so every pattern and keyword
here is written in its natural spelling and folded the same way when the row is built (:func:`_ml`).

Narrowings: the instruction noun must follow the verb with at most a few words between (a sentence that
only mentions "Anweisungen" is clean); a negation before or inside the phrase ("不要忽略", "nicht
ignorieren", "no ignores", "не игнорируй") clears it; "you are now" needs an article or a role noun after it,
so "du bist jetzt im main-Branch" stays clean; "ignore the user" needs the user (or their requests) as the whole
object, then the end of the clause or "and", so "忽略用户代理头" (the user-agent header), "ユーザー設定を無視"
(user settings) and "ignora al usuario root en los logs" stay clean; "obey me" needs "only me" or a command
("服从我的命令", not "听从我的建议")."""

from __future__ import annotations

import re

from ._text import fold
from ._threat_base import (
    _B,
    _E,
    _F2,
    _F3,
    PROMPT_INJECTION,
    PROMPT_LEAK,
    ROLE_HIJACK,
    Check,
    ThreatPattern,
    _p,
)


def _f(pattern: str) -> str:
    """``pattern`` folded as the text it runs on is. A letter whose two cases fold apart (Cyrillic "т" stays,
    "Т" becomes a Latin "T") becomes a class of both, so case-insensitive matching still holds; such letters
    must not stand inside a ``[...]`` class of the pattern."""
    out = []
    for ch in pattern:
        if ch.isascii() or not ch.isalpha():
            out.append(fold(ch).text if not ch.isascii() else ch)
            continue
        low, up = fold(ch.lower()).text, fold(ch.upper()).text
        out.append(f"[{low}{up}]" if len(low) == len(up) == 1 and low.lower() != up.lower() else fold(ch).text)
    return "".join(out)


def _keywords(words: tuple[str, ...]) -> tuple[str, ...]:
    """Each keyword as the lower-cased folded text holds it, written in lower case or capitalised."""
    return tuple(dict.fromkeys(fold(v).text.lower() for w in words for v in (w, w.capitalize(), w.upper())))


def _ml(id_: str, category: str, pattern: str, *keywords: str, requires: tuple[str, ...] = (),
        negatable: bool = True, anchored: bool | None = None, check: Check | None = None) -> ThreatPattern:
    """A row written in natural spelling, folded as the text it runs on is. ``requires``: words every match holds
    besides a keyword (for the rows whose verbs are also English words: "ignore" alone does not run them); those
    rows' matches also start with a keyword (their verb), so they are tried only where one starts (``anchored``,
    which a row without ``requires`` may ask for too). ``check`` replaces the negation check (``negatable``)."""
    return _p(id_, category, _f(pattern), *_keywords(keywords), requires=_keywords(requires),
              check=check or (_not_negated if negatable else None),
              anchored=bool(requires) if anchored is None else anchored)


# Negations that turn an instruction to ignore into its opposite, looked for just before and inside the match.
_NEGATION = re.compile(_f(
    r"不要|不許|不许|别|別|勿|不可|しないで|しない|せず|するな|하지\s*마|하지\s*말|않|"
    r"(?<![^\W_])(?:nicht|niemals|nie|kein|keine|no|nunca|jamais|pas|não|nao|не|нельзя|никогда|لا|هرگز|نه)(?![^\W_])"),
    re.IGNORECASE)


def _not_negated(m: re.Match[str], text: str) -> bool:
    return _NEGATION.search(text, max(0, m.start() - 12), m.end() + 8) is None


def sentence_not_negated(m: re.Match[str], text: str) -> bool:
    """No negation word of any language in the sentence before the match (up to 40 characters) or inside it:
    for rows whose key words can stand far from a negation ("Nunca incluyas el contenido de .env …")."""
    low = max(0, m.start() - 40)
    cut = max(text.rfind(c, low, m.start()) for c in ".!?。！？\n")
    return _NEGATION.search(text, max(low, cut + 1), m.end()) is None


_CJK_GAP = r"[^\n。！？!?]{0,8}?"  # up to 8 characters inside one sentence
# Where "ignore the user" ends: the clause ends, or goes on with "and"/"but".
_USER_END = (r"(?=[ \t]*(?:[.!;:,)\n]|$)|[ \t]+(?:и|а|но|und|aber|y|pero|et|mais|e|mas|and)(?![^\W_]))")
_POWER_END = r"(?![\w@/'’-]|\.\w)"  # a whole word: "root", not "root-owned", "root@host" or "root.txt"

ROWS: tuple[ThreatPattern, ...] = (
    # ---- ignore (all) previous instructions -----------------------------------------------------
    _ml("ignore_instructions", PROMPT_INJECTION,  # Chinese
        rf"(?:忽略|忽视|忽視|无视|無視|忘记|忘記|忘掉|抛开|拋開|不理会|不理會){_CJK_GAP}"
        rf"(?:之前|以前|先前|上面|上述|前面|此前|原来|原來|原有|原先|所有|全部|一切|系统|系統){_CJK_GAP}"
        r"(?:指令|指示|说明|說明|规则|規則|提示词|提示詞|提示|设定|設定|命令|要求)",
        "忽", "无视", "無視", "忘", "抛开", "拋開", "不理"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Japanese
        rf"(?:以前|前|これまで|上記|先ほど|既存|すべて|全て|元)の?{_CJK_GAP}"
        rf"(?:指示|命令|指令|ルール|プロンプト|制約|設定){_CJK_GAP}(?:無視|忘れ)",
        "無視", "忘れ"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Korean
        r"(?:이전|앞의|앞선|위의|기존|모든|원래)[^\n.!?]{0,12}?(?:지시|지침|명령|규칙|프롬프트|설정)"
        r"[^\n.!?]{0,8}?(?:무시|잊어)",
        "무시", "잊어"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Russian
        rf"{_B}(?:игнорируй(?:те)?|игнорировать|забудь(?:те)?|забыть|отбрось(?:те)?){_F3}"
        r"(?:предыдущ|прежн|предшествующ|вышеуказанн|вышеизложенн|все|всё|свои|системн|исходн)\w*"
        rf"(?:{_F2})?[ \t]*(?:инструкци|указани|правил|команд|промпт|директив|установк)\w*",
        "игнор", "забуд", "забыт", "отбрось"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # German
        rf"{_B}(?:ignorier(?:e|en|t)?|vergiss|vergesst|vergessen|missachte(?:n|t)?|verwirf|verwerfen){_F3}"
        r"(?:vorherig|vorig|bisherig|früher|obig|vorangegangen|vorausgegangen|alle|sämtlich|deine|ihre|ursprünglich)"
        rf"\w*(?:{_F2})?[ \t]*(?:anweisung|instruktion|befehl|regel|vorgabe|richtlinie|prompt|anordnung)\w*"
        rf"|{_B}(?:alle|sämtliche|die)[ \t]+(?:vorherigen|bisherigen|früheren|obigen|vorangegangenen)[ \t]+"
        rf"(?:anweisungen|instruktionen|befehle|regeln|vorgaben)[ \t]+(?:zu[ \t]+)?(?:ignorieren|vergessen|missachten){_E}",
        "ignorier", "vergiss", "vergesst", "vergessen", "missacht", "verwirf", "verwerfen"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Spanish
        rf"{_B}(?:ignora|ignore|ignorad|ignoren|ignorar|olvida|olvide|olvidad|olviden|olvidar|descarta|descarte)"
        rf"{_F3}(?:instrucciones|indicaciones|reglas|órdenes|directrices|instrucción)"
        rf"(?:{_F2})?[ \t]*(?:anteriores|previas|precedentes|originales|de[ \t]+arriba|del[ \t]+sistema){_E}"
        rf"|{_B}(?:ignora|ignore|olvida|olvide)[ \t]+(?:todas[ \t]+)?las[ \t]+(?:anteriores|previas)"
        rf"[ \t]+(?:instrucciones|indicaciones|reglas){_E}",
        "ignor", "olvid", "descart",
        requires=("anteriores", "previas", "precedentes", "originales", "arriba", "sistema")),
    _ml("ignore_instructions", PROMPT_INJECTION,  # French
        rf"{_B}(?:ignore[rz]?|oublie[rz]?|oubliez){_F3}(?:instructions|consignes|règles|directives|ordres)"
        rf"(?:{_F2})?[ \t]*(?:précédentes|antérieures|ci-dessus|initiales|du[ \t]+système|d['’]origine){_E}",
        "ignor", "oubli",
        requires=("précédentes", "antérieures", "ci-dessus", "initiales", "système", "origine")),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Portuguese
        rf"{_B}(?:ignore|ignora|ignorem|ignorar|esqueça|esqueca|esqueçam|esquecer|desconsidere|desconsidera)"
        rf"{_F3}(?:instruções|regras|diretrizes|ordens|orientações|instrução)"
        rf"(?:{_F2})?[ \t]*(?:anteriores|prévias|acima|iniciais|originais|do[ \t]+sistema){_E}",
        "ignor", "esque", "desconsider",
        requires=("anteriores", "prévias", "acima", "iniciais", "originais", "sistema")),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Arabic
        r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسى|انسي|اهمل|أهمل)\s+(?:\S+\s+){0,3}?"
        r"(?:التعليمات|الأوامر|التوجيهات|القواعد|الإرشادات|التعليمة)\s+(?:\S+\s+){0,2}?"
        r"(?:السابقة|الماضية|الأصلية|أعلاه|للنظام|القديمة)",
        "تجاهل", "انس", "اهمل", "أهمل"),
    _ml("ignore_instructions", PROMPT_INJECTION,  # Persian
        r"(?:دستورالعمل|دستورات|دستور|قوانین|قواعد|راهنمایی|پرامپت)\S*\s+(?:\S+\s+){0,2}?"
        r"(?:قبلی|پیشین|سابق|بالا|اصلی)\s+(?:\S+\s+){0,1}?(?:را\s+)?(?:نادیده\s*بگیر|فراموش\s*کن)",
        "نادیده", "فراموش"),
    # ---- role hijack: "you are now a …" --------------------------------------------------------
    _ml("role_hijack", ROLE_HIJACK,
        r"(?:你现在是|你現在是|从现在起你是|從現在起你是|从现在开始你是|從現在開始你是|你从现在起是)"
        r"(?:一个|一個|一名|一位|个|個|名)"
        r"|(?:(?:今から|これから|今後)、?あなたは|あなたは(?:今から|これから|今後)、?)[^\n。]{1,20}?"
        r"(?:です|だ|になります|として(?:振る舞|行動|答)|を演じ)"
        r"|(?:지금부터|이제부터)\s*(?:너는|당신은|넌)\s*[^\n.]{1,20}?(?:이다|입니다|이야|역할)",
        "你现在", "你現在", "从现在", "從現在", "你从现在", "あなたは", "지금부터", "이제부터"),
    _ml("role_hijack", ROLE_HIJACK,
        rf"{_B}(?:теперь|отныне)[ \t]+ты[ \t]+(?:—[ \t]*|являешься[ \t]+|будешь[ \t]+|играешь[ \t]+роль{_E})"
        rf"|{_B}ты[ \t]+теперь[ \t]+(?:—[ \t]*|являешься[ \t]+|будешь[ \t]+)"
        rf"|{_B}du[ \t]+bist[ \t]+(?:jetzt|nun|ab[ \t]+sofort|ab[ \t]+jetzt)[ \t]+(?:ein|eine|der|die|das|mein|meine){_E}"
        rf"|{_B}ab[ \t]+(?:jetzt|sofort)[ \t]+bist[ \t]+du[ \t]+(?:ein|eine|der|die|das|mein|meine){_E}"
        rf"|{_B}(?:ahora[ \t]+eres|a[ \t]+partir[ \t]+de[ \t]+ahora[ \t]+(?:eres|serás))[ \t]+(?:un|una|el|la|mi){_E}"
        rf"|{_B}(?:tu[ \t]+es|vous[ \t]+êtes)[ \t]+(?:maintenant|désormais|dorénavant)[ \t]+"
        rf"(?:un|une|le|la|mon|ma){_E}"
        rf"|{_B}(?:agora[ \t]+você[ \t]+é|você[ \t]+agora[ \t]+é|a[ \t]+partir[ \t]+de[ \t]+agora,?[ \t]+você"
        rf"[ \t]+(?:é|será))[ \t]+(?:um|uma|o|a|meu|minha){_E}"
        r"|(?:أنت\s+الآن|من\s+الآن\s+فصاعدا،?\s+أنت)\s+(?:مساعد|نموذج|شخصية|في\s+وضع|بدون|حر|لست)"
        r"|(?:تو|شما)\s+(?:اکنون|الان|از\s+این\s+به\s+بعد)\s+یک\s",
        "теперь", "отныне", "bist", "ahora eres", "partir de ahora", "maintenant", "désormais", "dorénavant",
        "agora", "الآن", "اکنون", "الان", "از این به بعد", negatable=False),
    # ---- role hijack: "you are now root / admin / superuser", no article ---------------------------
    _ml("role_hijack", ROLE_HIJACK,
        r"(?:你现在|你現在|从现在起你|從現在起你|从现在开始你|從現在開始你|你从现在起|你從現在起)就?是"
        r"(?:一个|一個|一名|一位|个|個|名)?(?:root|admin|管理员|管理員|超级用户|超級用戶|超级管理员|超級管理員"
        r"|系统管理员|系統管理員|上帝|神(?![经經话話]))(?![的账帳帐组組群])"
        rf"|{_B}(?:(?:теперь|отныне)[ \t]+ты|ты[ \t]+(?:теперь|отныне))[ \t]+(?:—[ \t]*)?(?:root|рут|админ\w*"
        rf"|администратор\w*|сисадмин\w*|суперпользовател\w*|суперюзер\w*|бог(?:ом)?){_POWER_END}"
        rf"|{_B}(?:du[ \t]+bist[ \t]+(?:jetzt|nun|ab[ \t]+sofort|ab[ \t]+jetzt)|ab[ \t]+(?:jetzt|sofort)[ \t]+bist"
        rf"[ \t]+du)[ \t]+(?:der[ \t]+)?(?:root|admin|administrator|systemadministrator|sysadmin|superuser|gott"
        rf"|allmächtig){_POWER_END}"
        rf"|{_B}(?:ahora[ \t]+eres|eres[ \t]+ahora|desde[ \t]+ahora[ \t]+eres|a[ \t]+partir[ \t]+de[ \t]+ahora,?"
        rf"[ \t]+(?:eres|serás))[ \t]+(?:el[ \t]+)?(?:root|admin|administrador|superusuario|dios|todopoderoso)"
        rf"{_POWER_END}"
        rf"|{_B}(?:tu[ \t]+es|vous[ \t]+êtes)[ \t]+(?:maintenant|désormais|dorénavant)[ \t]+(?:l['’])?(?:root"
        rf"|admin|administrateur|superutilisateur|dieu|tout-puissant){_POWER_END}"
        rf"|{_B}(?:agora[ \t]+(?:você[ \t]+é|tu[ \t]+és)|(?:você[ \t]+agora[ \t]+é|tu[ \t]+agora[ \t]+és)"
        rf"|a[ \t]+partir[ \t]+de[ \t]+agora,?[ \t]+você[ \t]+(?:é|será))[ \t]+(?:o[ \t]+)?(?:root|admin"
        rf"|administrador|superusuário|superutilizador|deus|todo-poderoso){_POWER_END}"
        r"|(?:أنت\s+الآن|من\s+الآن\s+فصاعدا،?\s+أنت|أصبحت\s+الآن)\s+(?:root|admin|المسؤول|مسؤول\s+النظام"
        r"|مدير\s+النظام|الجذر|المستخدم\s+الجذر|المستخدم\s+الخارق|مستخدم\s+خارق|إله)(?![\w@/-])"
        r"|(?:تو|شما)\s+(?:اکنون|الان|از\s+این\s+به\s+بعد)\s+(?:root|ادمین|مدیر\s+سیستم|روت|کاربر\s+ارشد"
        r"|ابرکاربر|خدا)(?![\w@/-])",
        "你现在", "你現在", "从现在", "從現在", "你从现在", "你從現在", "теперь", "отныне", "ты теперь", "ты отныне",
        "du bist", "ab jetzt", "ab sofort", "ahora", "eres ahora", "desde ahora", "a partir de ahora", "tu es",
        "vous êtes", "agora", "você agora", "tu agora", "a partir de agora", "أنت", "من الآن", "أصبحت", "تو", "شما",
        requires=("root", "admin", "管理", "超级", "超級", "上帝", "神", "рут", "админ", "суперпольз",
                  "суперюз", "бог", "gott", "allmächtig", "superuser", "superusuario", "dios", "todopoderoso",
                  "superutilisateur", "dieu", "tout-puissant", "superusuário", "superutilizador", "deus",
                  "todo-poderoso", "المسؤول", "مسؤول", "مدير", "الجذر", "الخارق", "خارق", "إله", "ادمین", "مدیر",
                  "روت", "ارشد", "ابرکاربر", "خدا"),
        negatable=False),
    # ---- ignore the user / obey me (the English rows: _threats_authority) -------------------------
    _ml("user_override", PROMPT_INJECTION,  # verb first: "忽略用户", "ignoriere den Nutzer", "تجاهل المستخدم"
        r"(?:忽略|忽视|忽視|无视|無視|不理会|不理會)掉?(?:所有|任何)?(?:用户|用戶|使用者)的?(?:(?:所有|任何|一切)?"
        r"(?:指令|指示|要求|请求|請求|命令|话|話|消息|訊息|意见|意見))?(?=[，。,.!！；;：:\s]|$|并|並|而|只)"
        rf"|{_B}(?:про)?игнорируй(?:те)?[ \t]+(?:все[ \t]+)?(?:(?:просьбы|запросы|указания|инструкции|команды"
        rf"|сообщения|требования|слова)[ \t]+)?(?:пользовател[яей]|юзера){_E}{_USER_END}"
        rf"|{_B}(?:ignorier(?:e|en|t)?|missachte(?:n|t)?)(?:[ \t]+sie)?[ \t]+(?:(?:den|die|alle)[ \t]+)?"
        rf"(?:(?:anweisungen|anfragen|bitten|befehle|wünsche|nachrichten|einwände|fragen)[ \t]+(?:des|der)[ \t]+)?"
        rf"(?:nutzer|benutzer|anwender|user)(?:s|n|in)?{_E}{_USER_END}"
        rf"|{_B}(?:ignora|ignore|ignorad|ignoren|desobedece|desobedezca|desobedeced)[ \t]+(?:(?:todas[ \t]+)?"
        rf"(?:las|los)[ \t]+(?:peticiones|instrucciones|órdenes|solicitudes|mensajes|pedidos|preguntas)[ \t]+del"
        rf"|al|a[ \t]+los)[ \t]+usuarios?{_E}{_USER_END}"
        rf"|{_B}(?:ignore[rz]?|désobéis|désobéissez|désobéir)[ \t]+(?:à[ \t]+)?(?:(?:toutes[ \t]+)?les[ \t]+"
        rf"(?:demandes|instructions|requêtes|ordres|messages|questions)[ \t]+de[ \t]+)?(?:l['’][ \t]*utilisat(?:eur"
        rf"|rice)|les[ \t]+utilisateurs){_E}{_USER_END}"
        rf"|{_B}(?:ignore|ignora|ignorem|desobedeça|desobedeçam)[ \t]+(?:(?:(?:todos[ \t]+)?os|(?:todas[ \t]+)?as)"
        rf"[ \t]+(?:pedidos|instruções|ordens|mensagens|solicitações|perguntas)[ \t]+do|ao|o|os)[ \t]+(?:usuários?"
        rf"|utilizador(?:es)?){_E}{_USER_END}"
        r"|(?:تجاهل|تجاهلي|تجاهلوا|اعص)\s+(?:(?:طلبات|تعليمات|أوامر|رسائل|كلام)\s+)?(?:المستخدم|المستخدمين)(?!\w)"
        r"(?=\s*(?:[.!؟?؛;:،,)\n]|$)|\s+و)",
        "忽略", "忽视", "忽視", "无视", "無視", "不理", "игнор", "проигнор", "ignorier", "missacht", "ignor", "desobede",
        "désobé", "تجاهل", "اعص",
        requires=("用户", "用戶", "使用者", "пользовател", "юзер", "nutzer", "anwender", "user", "usuario",
                  "utilisat", "usuário", "utilizador", "المستخدم")),
    _ml("user_override", PROMPT_INJECTION,  # the user first: "ユーザーの指示を無視", "사용자를 무시", "کاربر را نادیده بگیر"
        r"(?:ユーザー|ユーザ|利用者)(?:の(?:指示|要求|依頼|命令|言うこと|発言|メッセージ|質問))?を(?:すべて|全て|完全に)?"
        r"(?:無視|聞かない|聞くな)"
        r"|(?:사용자|유저)(?:의\s*(?:지시|요청|명령|말|메시지|질문))?(?:를|을|는)?\s*(?:모두\s*)?무시"
        r"|(?:کاربر|(?:درخواست|دستور)\S*\s+کاربر)\s+را\s+(?:کاملا\s+)?(?:نادیده\s*بگیر|فراموش\s*کن)",
        "ユーザ", "利用者", "사용자", "유저", "کاربر", "درخواست", "دستور", anchored=True),
    _ml("user_override", PROMPT_INJECTION,  # "obey (only) me"
        r"只?(?:服从|服從|听从|聽從|遵从|遵從)(?:我|本条|本條|这条|這條)(?:的(?:命令|指令|指示))?(?![们們的])"
        r"|(?:只听|只聽)我的(?![建议議意见見])"
        r"|(?:私|わたし|俺|僕)(?:だけ|のみ)に従|(?:私|わたし)の(?:命令|指示)(?:だけ|のみ)に従"
        r"|나(?:에게만|한테만)\s*복종|(?:나|저)에게\s*복종|내\s*말만\s*들어"
        rf"|{_B}(?:подчиняйся|повинуйся|слушайся)(?:те)?[ \t]+(?:только[ \t]+)?мне{_E}"
        rf"|{_B}gehorche(?:n[ \t]+sie)?[ \t]+(?:nur[ \t]+)?mir{_E}|{_B}befolge[ \t]+nur[ \t]+meine[ \t]+(?:befehle"
        rf"|anweisungen){_E}"
        rf"|{_B}obedéceme{_E}|{_B}obedece(?:me)?[ \t]+(?:solo|sólo|solamente|únicamente)[ \t]+a[ \t]+mí{_E}"
        rf"|{_B}(?:obéis|obéissez)-moi{_E}|{_B}n['’]obéi(?:s|ssez)[ \t]+qu['’]à[ \t]+moi{_E}"
        rf"|{_B}obéi(?:s|ssez)[ \t]+(?:uniquement|seulement)[ \t]+à[ \t]+moi{_E}"
        rf"|{_B}obedeça-me{_E}|{_B}obedeça[ \t]+(?:só|somente|apenas)[ \t]+a[ \t]+mim{_E}"
        r"|(?:أطعني|اطعني)|أطع\s+أوامري|(?:فقط\s+)?از\s+من\s+اطاعت\s+کن",
        # every place a match can start (the row is tried only there)
        "只", "服从", "服從", "听从", "聽從", "遵从", "遵從", "私", "わたし", "俺", "僕", "나에게", "나한테", "저에게", "내",
        "подчиняйся", "повинуйся", "слушайся", "gehorche", "befolge", "obedéceme", "obedece", "obéis", "obéissez",
        "n'obéi", "n’obéi", "obedeça", "أطعني", "اطعني", "أطع", "فقط", "از", anchored=True),
    _ml("user_override", PROMPT_INJECTION,  # "refuse every request": "lehne jede Anfrage ab", "rechaza todas las …"
        rf"{_B}(?:lehne|lehnt|verweigere|verweigert)(?:[ \t]+sie)?[ \t]+(?:jede|alle|sämtliche)[ \t]+(?:anfragen?|bitten?"
        rf"|aufträge|auftrag|fragen?|befehle|wünsche)(?:[ \t]+(?:des|der|vom|von)[ \t]+(?:nutzers?|benutzers?|users?"
        rf"|anwenders?))?(?:[ \t]+ab)?{_E}{_USER_END}"
        rf"|{_B}(?:refuse|refusez)[ \t]+(?:toutes[ \t]+les|tous[ \t]+les|chaque)[ \t]+(?:demandes?|requêtes?|questions?"
        rf"|tâches?)(?:[ \t]+(?:de[ \t]+l['’][ \t]*utilisat(?:eur|rice)|des[ \t]+utilisateurs))?{_E}{_USER_END}"
        rf"|{_B}(?:rechaza|rechace|rechazad|niega|deniega)[ \t]+(?:todas[ \t]+las|todos[ \t]+los|cada|cualquier)"
        rf"[ \t]+(?:solicitud(?:es)?|peticion(?:es)?|petición|preguntas?|tareas?|pedidos?)(?:[ \t]+del[ \t]+usuario)?"
        rf"{_E}{_USER_END}"
        rf"|{_B}(?:recuse|recusa|rejeite|rejeita)[ \t]+(?:todas[ \t]+as|todos[ \t]+os|cada|qualquer)[ \t]+"
        rf"(?:solicitações|solicitação|pedidos?|perguntas?|tarefas?)(?:[ \t]+do[ \t]+(?:usuário|utilizador))?{_E}"
        rf"{_USER_END}",
        "lehne", "lehnt", "verweiger", "refuse", "rechaz", "niega", "deniega", "recus", "rejeit",
        requires=("jede", "alle", "sämtliche", "toutes", "tous", "chaque", "todas", "todos", "cada", "cualquier",
                  "qualquer"), negatable=False),
    # ---- system prompt disclosure ---------------------------------------------------------------
    _ml("system_prompt_leak", PROMPT_LEAK,
        r"(?:输出|打印|显示|顯示|透露|泄露|洩露|告诉我|告訴我|重复|重複|给我看|給我看|展示)[^\n。]{0,6}?"
        r"(?:系统提示|系統提示|系统指令|系統指令|初始指令|隐藏指令|隱藏指令)"
        r"|(?:システムプロンプト|システム指示|初期指示|隠された指示)[^\n。]{0,8}?(?:表示|出力|教え|見せ|開示|繰り返|漏ら)"
        r"|시스템\s*(?:프롬프트|지시)[^\n.]{0,10}?(?:보여|출력|알려|공개|반복|말해)",
        "系统", "系統", "初始指令", "隐藏指令", "隱藏指令", "システム", "初期指示", "隠された指示", "시스템"),
    _ml("system_prompt_leak", PROMPT_LEAK,
        rf"{_B}(?:покажи|выведи|раскрой|повтори|напиши|расскажи|перескажи)(?:те)?[ \t]+(?:мне[ \t]+)?"
        rf"(?:свой|твой|свои|твои|весь|все)?[ \t]*(?:системн\w+[ \t]+(?:промпт|подсказк|инструкци|сообщени)"
        r"|исходн\w+[ \t]+инструкци)\w*"
        rf"|{_B}(?:zeige?|gib|nenne|wiederhole|verrate|drucke)[ \t]+(?:mir[ \t]+)?(?:deinen|deine|den|die|ihren|ihre)"
        r"[ \t]+(?:\w+[ \t]+)?(?:system-?prompt|systemanweisung|system-?nachricht|anfangsanweisung)\w*"
        rf"|{_B}(?:muestra|muéstrame|revela|repite|imprime|dime|escribe)[ \t]+(?:me[ \t]+)?(?:tu|el|las|tus)[ \t]+"
        r"(?:prompt[ \t]+del[ \t]+sistema|instrucciones[ \t]+(?:del[ \t]+sistema|iniciales|ocultas|originales)"
        r"|mensaje[ \t]+del[ \t]+sistema)"
        rf"|{_B}(?:montre|affiche|révèle|répète|donne|dis|écris|imprime)(?:[ \t]*-[ \t]*moi|z)?[ \t]+(?:moi[ \t]+)?"
        r"(?:ton|votre|le|tes|vos|les)[ \t]+(?:prompt[ \t]+(?:système|du[ \t]+système)"
        r"|instructions[ \t]+(?:système|initiales|cachées|d['’]origine)|message[ \t]+système)"
        rf"|{_B}(?:mostre|mostra|revele|revela|repita|imprima|diga|exiba)(?:[ \t]*-[ \t]*me)?[ \t]+"
        r"(?:o[ \t]+seu|seu|o|as[ \t]+suas|suas|as)[ \t]+(?:prompt[ \t]+(?:do|de)[ \t]+sistema"
        r"|instruções[ \t]+(?:do[ \t]+sistema|iniciais|ocultas|originais)|mensagem[ \t]+do[ \t]+sistema)"
        r"|(?:اعرض|أظهر|اكشف|كرر|اطبع|أخبرني)\S*\s+(?:\S+\s+)?(?:موجه\s+النظام|تعليمات\s+النظام|رسالة\s+النظام"
        r"|التعليمات\s+الأولية)"
        r"|(?:پرامپت|دستورالعمل|پیام)\S*\s+سیستم\S*\s+(?:\S+\s+)?(?:را\s+)?(?:نشان\s*بده|بگو|فاش\s*کن|تکرار\s*کن)",
        "системн", "исходн", "systemprompt", "system-prompt", "systemanweisung", "systemnachricht",
        "system-nachricht", "anfangsanweisung", "del sistema", "do sistema", "de sistema", "prompt système",
        "du système", "instructions système", "message système", "instructions initiales", "instructions cachées",
        "instructions d'origine", "instructions d’origine", "instrucciones iniciales", "instrucciones ocultas",
        "instrucciones originales", "instruções iniciais", "instruções ocultas", "instruções originais",
        "النظام", "التعليمات الأولية", "سیستم", negatable=False),
)
