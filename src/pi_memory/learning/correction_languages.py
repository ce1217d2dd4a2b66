"""The correction rules' words in German, Spanish, French, Russian and Chinese (:mod:`.corrections`).

Each language gives what its users type when they correct an agent: the openers ("nein,", "non,", "нет,",
"不对，"), the imperative forms a lesson directs with ("nimm", "usa", "utilise", "используй", "用"), the
markers that make an instruction a standing one ("immer"/"nie" after the verb, "nunca"/"no" + subjunctive,
"n'... jamais", "никогда не", "不要", "以后"), and the look-alikes that are no correction (thanks, "no problem",
"it's fine", leaving the choice to the agent, a one-off "again"/"now"). Another language (Dutch, Japanese...)
is not captured: the review, with the whole conversation, can still save what it teaches.

The verbs join the directive words (``correctionDirectiveWords``), the chit-chat the negative patterns and the
openers a weak pattern, so settings replace them as they replace the English ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{CJK}]")


def is_cjk(word: str) -> bool:
    return bool(word) and _CJK_CHAR.match(word) is not None


@dataclass(frozen=True)
class Language:
    code: str
    verbs: tuple[str, ...]  # imperative forms (lower case), the language's directive words
    time: str  # "from now on": a regex, ``""`` for none
    before: str = ""  # always / never / don't before the verb
    after: str = ""  # always / never / not after the verb (German, French)
    negated: tuple[str, ...] = ()  # forms that follow a bare "no" ("no uses npm"): a standing "don't"
    needs_after: str = ""  # a ``before`` marker that counts only with an ``after`` one ("ne ... pas")


GERMAN = Language(
    "de",
    ("nimm", "nehmt", "benutze", "benutz", "benutzt", "verwende", "verwendet", "nutze", "nutz", "führe", "fuehre",
     "installiere", "lösche", "lösch", "entferne", "schreib", "schreibe", "füge", "setze", "setz", "mach", "mache",
     "lass", "lasse", "behalte", "teste", "committe", "pushe", "ändere", "vermeide", "bevorzuge", "starte", "halte",
     "leg", "lege", "nenne", "importiere", "aktualisiere", "frag", "antworte", "prüfe", "baue", "pinne", "rufe",
     "formatiere", "dokumentiere", "erstelle", "verschiebe", "benenne"),
    r"ab\s+(?:jetzt|sofort)|von\s+(?:jetzt|nun)\s+an|in\s+zukunft|künftig|zukünftig",
    after=r"immer|nie|niemals|nicht\s+mehr|nicht|keine[nmrs]?|kein",
)
SPANISH = Language(
    "es",
    ("usa", "utiliza", "utilice", "emplea", "ejecuta", "corre", "instala", "pon", "escribe", "añade", "agrega",
     "borra", "elimina", "quita", "cambia", "evita", "prefiere", "haz", "deja", "mantén", "guarda", "prueba", "crea",
     "mueve", "renombra", "actualiza", "importa", "llama", "responde", "pregunta", "revisa", "sigue", "formatea"),
    r"a\s+partir\s+de\s+ahora|de\s+ahora\s+en\s+adelante|desde\s+ahora|en\s+(?:el\s+)?futuro",
    before=r"siempre|nunca|jamás|no",
    negated=("uses", "utilices", "ejecutes", "corras", "instales", "pongas", "escribas", "añadas", "agregues",
             "borres", "elimines", "quites", "cambies", "hagas", "dejes", "toques", "edites", "modifiques", "subas",
             "mezcles", "llames", "importes", "crees", "muevas", "mezcles", "confíes", "asumas", "inventes"),
)
FRENCH = Language(
    "fr",
    ("utilise", "utilisez", "emploie", "prends", "prenez", "lance", "lancez", "exécute", "exécutez", "installe",
     "installez", "mets", "mettez", "écris", "écrivez", "ajoute", "ajoutez", "supprime", "supprimez", "enlève",
     "retire", "évite", "évitez", "préfère", "préférez", "garde", "gardez", "fais", "faites", "teste", "crée",
     "déplace", "renomme", "modifie", "touche", "touchez", "laisse", "laissez", "importe", "appelle", "réponds",
     "répondez", "demande", "vérifie", "commite", "pousse", "suis", "suivez", "formate", "écrase"),
    r"à\s+partir\s+de\s+maintenant|désormais|dorénavant|à\s+l'avenir|dès\s+maintenant",
    before=r"ne|n'",
    after=r"toujours|jamais|pas|plus",
    needs_after=r"ne|n'",
)
RUSSIAN = Language(
    "ru",
    ("используй", "используйте", "применяй", "бери", "возьми", "запускай", "запусти", "запустите", "выполни",
     "ставь", "поставь", "установи", "устанавливай", "пиши", "напиши", "добавь", "добавляй", "удали", "удаляй",
     "убери", "избегай", "делай", "сделай", "сохраняй", "сохрани", "оставь", "оставляй", "меняй", "измени",
     "трогай", "редактируй", "коммить", "закоммить", "пушь", "создай", "переименуй", "перенеси", "проверяй",
     "проверь", "отвечай", "ответь", "спрашивай", "спроси", "следуй", "импортируй", "вызывай", "называй",
     "тестируй", "обнови", "обновляй", "пользуйся", "пушь", "мерджи", "форматируй"),
    r"впредь|отныне|с\s+этого\s+момента|с\s+этих\s+пор|в\s+будущем|теперь\s+всегда",
    before=r"всегда|никогда\s+не|ни\s+в\s+коем\s+случае\s+не|не",
)
CHINESE = Language(
    "zh",
    ("用", "使用", "改用", "换成", "换用", "运行", "跑", "执行", "安装", "装", "删除", "删掉", "删", "去掉", "移除",
     "添加", "加上", "加", "写", "放", "放在", "保留", "保持", "设置", "设为", "修改", "改", "改成", "提交", "推送",
     "合并", "创建", "新建", "测试", "重命名", "移动", "避免", "遵守", "遵循", "回答", "回复", "检查", "更新", "导入",
     "调用", "碰", "动", "依赖", "格式化"),
    r"以后|今后|从现在开始|从现在起|从今以后|往后",
    before=r"总是|始终|一直|每次都|都|一律|永远不要|永远别|绝对不要|千万不要|千万别|绝不要|不要|别|不许|不准|不能|务必|一定要",
)
LANGUAGES = (GERMAN, SPANISH, FRENCH, RUSSIAN, CHINESE)

# The openers of a weak pattern ("nein, ...", "нет, ..."), each needing a directive verb after it.
LEAD_WORDS = r"nein|falsch|non|faux|нет|неправильно|неверно|не\s+так|incorrecto|不对|不是|错了|不行|不"
DEFAULT_WEAK = (
    r"^\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\s+так|incorrecto)[\s,.!:;-]",
    "^\\s*(不对|不是|错了|不行|不)\\s*[，,。.！!：:；;、]",
    # a dash after the opener: "不对 - 用 uv", "nein — nimm uv"
    "^\\s*(nein|falsch|non|faux|нет|неправильно|неверно|не\\s+так|incorrecto|不对|不是|错了|不行)\\s*[-\u2013\u2014]",
)
# Words between an opener and the verb ("bitte", "por favor", "пожалуйста", "请").
FILLERS = (r"(?:(?:bitte|einfach|dann|por\s+favor|simplemente|s'il\s+(?:te|vous)\s+pla[iî]t|stp|svp|juste|"
           r"пожалуйста|просто)[\s,]+|请|就)")
# "... instead of ..." in each language (a directive that rejects an alternative is a standing one).
REJECTS = (r"\ben\s+(?:lugar|vez)\s+de\b|\b(?:an)?statt\b|\banstelle\s+von\b|\bau\s+lieu\s+de\b|\bplutôt\s+que\b|"
           r"\bвместо\b|而不是|不要用")
THANKS = r"danke|gracias|merci|спасибо|谢谢|谢了|bitte|por\s+favor|s'il\s+(?:te|vous)\s+pla[iî]t|stp|svp|пожалуйста"

# Chit-chat and leaving the choice to the agent (negative patterns: they win).
NEGATIVE = (
    r"^\s*nein\W+danke\b|\bkein\s+(problem|stress)\b|\b(passt\s+schon|schon\s+gut|alles\s+(gut|klar)|"
    r"ist\s+(schon\s+)?(gut|ok|okay|in\s+ordnung|richtig))\b|\bwie\s+du\s+(willst|meinst|möchtest)\b|"
    r"\begal\b|\bvergiss\s+es\b|\bkeine\s+sorge\b|\bmach\s+dir\s+keine\s+sorgen\b",
    r"^\s*no\W+gracias\b|\bno\s+(pasa\s+nada|hay\s+(problema|prisa)|te\s+preocupes|importa)\b|"
    r"\b(est[aá]\s+bien|todo\s+bien|est[aá]\s+perfecto)\b|\bcomo\s+(quieras|prefieras|veas)\b|\bda\s+igual\b|"
    r"\bolv[ií]dalo\b",
    r"^\s*non\W+merci\b|\bpas\s+(de\s+(probl[eè]me|souci)|grave)\b|\b(c'est|ça)\s+(bon|bien|parfait|ok|correct)\b|"
    r"\bça\s+va\b|\bcomme\s+(tu\s+veux|vous\s+voulez|tu\s+préfères|tu\s+le\s+sens)\b|\bt'inquiète\b|"
    r"\blaisse\s+tomber\b|\bpeu\s+importe\b",
    r"^\s*нет\W+спасибо|нет\s+проблем|ничего\s+страшного|\b(всё|все)\s+(хорошо|нормально|в\s+порядке|ок)\b|"
    r"\bкак\s+(хочешь|хотите|считаешь|решишь)\b|\bне\s+(важно|за\s+что|волнуйся|переживай)\b|\bневажно\b|"
    r"\bзабудь\b",
    r"不用了|不用谢|没关系|不客气|没问题|随便|不错|都可以|都行|你(决定|看着办)|算了|没事|挺好",
    # "let me think": the user takes the turn, nothing to learn
    r"\blass\s+mich\s+(nachdenken|überlegen|kurz)\b|\bd[ée]jame\s+(pensar|ver)\b|\blaisse[sz]?[-\s]moi\b|"
    r"\bдай(те)?\s+мне\s+подумать\b|让我想",
)
# What only the conversation explains, in these languages ("the other one", "as before").
CONTEXT = (
    r"\b(die|das|den)\s+andere\b|\bwie\s+vorher\b|\bel\s+otro\b|\bla\s+otra\b|\bcomo\s+antes\b|"
    r"\bl'autre\b|\bcomme\s+avant\b|\bдругой\b|\bкак\s+раньше\b|另一个|像之前|跟之前一样",
)
# After an opener these make the instruction a one-off ("nochmal", "otra vez", "encore", "ещё раз", "再").
ONE_OFF = (r"\bnoch\s*(?:ein)?mal\b|\b(?<!ab )jetzt\b|\bdiesmal\b|\bvorerst\b|\bsofort\b",
           r"\botra\s+vez\b|\bde\s+nuevo\b|\b(?<!partir de )(?<!desde )ahora\b|\besta\s+vez\b",
           r"\bencore\b|\b[àa]\s+nouveau\b|\bde\s+nouveau\b|\b(?<!partir de )maintenant\b|\bcette\s+fois\b|"
           r"\bpour\s+l'instant\b",
           r"\bснова\b|\bопять\b|\bещ[её]\s+раз\b|\bсейчас\b|\bв\s+этот\s+раз\b|\bпока\b",
           r"再|重新|这次|(?<!从)现在|先")

# Words that name nothing on their own, for the vague check (lower case).
FUNCTION_WORDS = frozenset(["das", "dies", "diese", "dieser", "dieses", "diesen", "es", "ihn", "sie", "den", "die", "der", "dem", "des", "ein", "eine", "einen", "einem", "so", "bitte", "nein", "ja", "nicht", "kein", "keine", "keinen", "immer", "nie", "niemals", "mal", "doch", "hier", "da", "dann", "wieder", "noch", "nochmal", "jetzt", "einfach", "auch", "nur", "lieber", "zurück", "weg", "damit", "davon", "dafür", "dran", "du", "dir", "mich", "mir", "eso", "esto", "esta", "este", "ese", "esa", "lo", "la", "el", "los", "las", "le", "les", "un", "una", "no", "sí", "si", "por", "favor", "siempre", "nunca", "jamás", "así", "otra", "otro", "vez", "aquí", "ahí", "allí", "ahora", "de", "que", "y", "o", "como", "más", "solo", "también", "nuevo", "ça", "cela", "ce", "cet", "cette", "ceci", "le", "les", "l", "un", "une", "des", "du", "non", "oui", "pas", "ne", "plus", "jamais", "toujours", "comme", "ici", "là", "maintenant", "encore", "juste", "aussi", "s'il", "te", "vous", "plaît", "stp", "svp", "y", "en", "это", "этот", "эта", "эти", "этого", "эту", "то", "тот", "та", "те", "того", "ту", "так", "не", "нет", "да", "всегда", "никогда", "пожалуйста", "просто", "снова", "опять", "здесь", "там", "сейчас", "его", "её", "ее", "их", "им", "ему", "вот", "тут", "и", "или", "же", "уже", "тоже", "ещё", "еще", "раз"])
# Mood and effort, which name nothing a coding agent does ("mach weiter so", "haz lo mejor", "fais de ton mieux",
# "garde le sourire", "ne laisse pas tomber", "haz lo que quieras"): a lesson of nothing else is chit-chat.
ATTITUDE = frozenset([
    "weiter", "gut", "besser", "beste", "besten", "lächeln", "lernen", "lerne", "nett", "freundlich", "höflich",
    "geduldig", "ruhig", "positiv", "mut", "aufgeben", "locker", "dranbleiben", "durchhalten", "überlegen",
    "nachdenken",
    "mejor", "mejores", "aprender", "aprendiendo", "sonreír", "sonrisa", "amable", "paciente", "tranquilo",
    "positivo", "ánimo", "rendirte", "quieras", "quieres", "prefieras", "esfuerzo", "intentarlo", "pensar",
    "mieux", "meilleur", "ton", "ta", "tes", "mon", "ma", "mes", "votre", "vos", "sourire", "réfléchir", "moi",
    "tomber", "courage", "calme", "gentil", "poli", "apprendre", "abandonner", "patience", "patient",
    "лучше", "лучшее", "возможное", "всё", "все", "улыбаться", "улыбку", "учиться", "стараться", "подумать",
])
# Demonstratives: "diese Datei", "ese archivo", "ce fichier", "этот файл" name nothing without the conversation.
DEICTIC = r"diese[snmr]?|jene[snmr]?|este|esta|estos|estas|ese|esa|esos|esas|aquel|aquella|ce|cet|cette|ces|" \
          r"этот|эта|это|эти|тот|та|те|того|этого|эту|ту"
# Chinese: what names nothing, taken out of a run of characters before asking what is left; a demonstrative
# takes the noun after it ("那个文件": "that file").
CJK_DEICTIC = re.compile(f"[这那][个些]?[{CJK}]{{0,2}}|它们?")
CJK_FUNCTION = ("加油", "放弃", "努力", "开心", "微笑", "坚持", "认真", "一定要", "一定", "永远", "务必", "从现在开始", "从今以后", "从现在起", "永远不要", "绝对不要", "千万不要", "一下", "一直", "总是", "始终",
                "以后", "今后", "不要", "不对", "不是", "错了", "不行", "我们", "吧", "了", "的", "啊", "呢", "请", "就",
                "都", "也", "要", "别", "不", "再", "一", "个", "把", "给", "我", "你", "吗")


def cjk_verb(word: str, verbs: frozenset[str]) -> str:
    """The directive a run of Chinese characters starts with ("用uv" -> "用", "改用" over "改"), else ``word``."""
    found = [v for v in verbs if word.startswith(v) and is_cjk(v)]
    return max(found, key=len) if found else word


def cjk_names_something(word: str, verbs: frozenset[str]) -> bool:
    """Whether a run of Chinese characters holds something besides verbs, demonstratives and function words."""
    rest = CJK_DEICTIC.sub("", word)
    for piece in sorted({*CJK_FUNCTION, *(v for v in verbs if is_cjk(v))}, key=len, reverse=True):
        rest = rest.replace(piece, "")
    return bool(rest.strip())


def all_verbs() -> tuple[str, ...]:
    """Every language's directive words: its imperatives and the forms that follow "no"."""
    return tuple(dict.fromkeys(v for lang in LANGUAGES for v in (*lang.verbs, *lang.negated)))
