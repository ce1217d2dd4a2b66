"""Threat rows of the prompt-injection, role-hijack and system-prompt-leak families in other languages than
English: Chinese (simplified and traditional), Japanese, Korean, Russian, German, Spanish, French, Portuguese,
Arabic and Persian. Each language has an "ignore (all) previous instructions" row, a "you are now a …" row and a
"show your system prompt" row; they report the English rows' ids (``ignore_instructions``, ``role_hijack``,
``system_prompt_leak``), so a refusal reads the same in every language.

The scanner matches the folded text (:func:`._text.fold`: accents and other combining marks dropped,
Cyrillic/Greek look-alikes mapped to Latin letters, Japanese voiced marks dropped), so every pattern and keyword
here is written in its natural spelling and folded the same way when the row is built (:func:`_ml`).

Narrowings: the instruction noun must follow the verb with at most a few words between (a sentence that
only mentions "Anweisungen" is clean); a negation before or inside the phrase ("不要忽略", "nicht
ignorieren", "no ignores", "не игнорируй") clears it; "you are now" needs an article or a role noun after it,
so "du bist jetzt im main-Branch" stays clean."""

from __future__ import annotations

import re

from ._text import fold
from ._threat_base import _B, _E, _F2, _F3, PROMPT_INJECTION, PROMPT_LEAK, ROLE_HIJACK, ThreatPattern, _p


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
        negatable: bool = True) -> ThreatPattern:
    """A row written in natural spelling, folded as the text it runs on is. ``requires``: words every match holds
    besides a keyword (for the rows whose verbs are also English words: "ignore" alone does not run them); those
    rows' matches also start with a keyword (their verb), so they are tried only where one starts (``anchored``)."""
    return _p(id_, category, _f(pattern), *_keywords(keywords), requires=_keywords(requires),
              check=_not_negated if negatable else None, anchored=bool(requires))


# Negations that turn an instruction to ignore into its opposite, looked for just before and inside the match.
_NEGATION = re.compile(_f(
    r"不要|不許|不许|别|別|勿|不可|しないで|しない|せず|するな|하지\s*마|하지\s*말|않|"
    r"(?<![^\W_])(?:nicht|niemals|kein|keine|no|nunca|jamais|pas|não|nao|не|нельзя|никогда|لا|هرگز|نه)(?![^\W_])"),
    re.IGNORECASE)


def _not_negated(m: re.Match[str], text: str) -> bool:
    return _NEGATION.search(text, max(0, m.start() - 12), m.end() + 8) is None


_CJK_GAP = r"[^\n。！？!?]{0,8}?"  # up to 8 characters inside one sentence

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
        r"|(?:今から|これから|今後)、?あなたは[^\n。]{1,20}?(?:です|だ|になります|として(?:振る舞|行動|答)|を演じ)"
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
