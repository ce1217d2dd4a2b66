"""Keyword evidence in every language, for recall's evidence floor (:func:`pi_memory.retrieval.engine.recall`).

:func:`evidence_terms` reads a prompt into an :class:`Evidence`; :meth:`Evidence.coverage` is the share of the
prompt found in a candidate's text (0..1), compared with ``MIN_KEYWORD_COVERAGE``. Three kinds of unit:

* **words** (scripts with spaces: Latin, Cyrillic, Greek, Arabic/Persian...): for English, the prompt's keyword
  terms (:func:`pi_memory.semantic.terms.keyword_terms`: stop words dropped, a crude suffix cut, at least 3
  characters); in another detected language, its words as written minus that language's and English's stop
  words (:data:`STOP`), at least 3 characters; one unit each. A prompt of stop words alone ("on the", "der die
  das") has no word units: every text holds "the", so it would pass the floor by keyword with anything. A term is found when it
  is a substring of the text (``prefer`` finds ``preferred``, as the keyword list's prefix does) or when its
  Snowball stem (``snowballstemmer``, for each language detected in the prompt) equals the stem of a word of the
  text: ``ключи`` and ``ключей`` are both ``ключ``, ``Datenbanken`` and ``Datenbank`` both ``datenbank``.
* **CJK characters** (Han, kana, Hangul; written without spaces): the prompt's runs of such characters are read
  as overlapping character bigrams. Each *content* character (not a hiragana particle or a Chinese function
  character from :data:`CJK_STOP`) is half a unit -- a Chinese word is about two characters, so a two-character
  word weighs as much as one English word -- and counts as found when a bigram of the prompt containing it
  occurs in the text. So ``机房`` inside ``我们的机房在上海`` covers both of its characters, and the question
  ``机房在哪个城市`` (content 机 房 城 市) has coverage 0.5 against that sentence; ``今天天气怎么样`` has 0.

* **Korean words** (Hangul, written with spaces, particles and endings glued on): each word of the prompt cut
  to its stem (:func:`korean_words`: ``배포는`` -> ``배포``, question words such as ``언제`` left out), one unit
  each, found as a substring of the text, so ``배포는 언제 하나요?`` is covered by ``배포는 매주 금요일 ...``.

Language detection (:func:`languages`) is a light rule of our own: the script decides Russian (Cyrillic),
Greek, Persian (Arabic script with one of پ چ ژ گ ک ی) or Arabic, Hindi (Devanagari); Latin-script text is
German, Spanish, French, Portuguese, Italian or Dutch when it holds more of that language's stop words
(:data:`STOP`) than of English's, else English. Several languages may be detected; each one's stemmer is tried.

:func:`script_shares` gives the share of each script in a text, which the per-script vector floor reads
(:mod:`pi_memory.retrieval.floors`); :func:`script_of` the main one.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

from pi_memory.index.query import STOP_WORDS, compound_parts
from pi_memory.index.words import CJK_STOP
from pi_memory.semantic.terms import MAX_TERMS, MIN_TERM_CHARS, WORD, keyword_terms

CJK_RUN = re.compile("[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
                     "\U00020000-\U0003134f]+")
_HIRAGANA = re.compile("[\u3040-\u309f]")
_HANGUL_WORD = re.compile("[\uac00-\ud7af]+")
# Korean writes words with spaces and glues particles and verb endings to them (배포는, 배포해요): a word is its
# stem, found as a substring of the text (where it carries its own endings). Our own short lists: the endings a
# question about a fact ends its words with, longest first, and the question words and auxiliaries.
_KO_ENDINGS_TEXT = ("에서는 에게서 으로는 까지는 부터는 했나요 하나요 했어요 합니까 합니다 됩니까 됩니다 되나요 입니까 "
                    "입니다 인가요 이에요 해야 하는 했던 에서 에게 으로 까지 부터 처럼 보다 하고 이랑 해요 했다 한다 "
                    "돼요 예요 은 는 이 가 을 를 에 의 도 로 와 과 만 요 랑")
_KO_STOP_TEXT = ("언제 어디 어디서 무엇 무슨 어떻게 어떤 누가 누구 어느 하나요 해요 있나요 있어요 있습니까 없나요 어때요 "
                 "어때 그리고 그런데 하지만 그래서 우리 저희 제가 내가 당신 이것 그것 저것")
_KO_ENDINGS = tuple(sorted(set(_KO_ENDINGS_TEXT.split()), key=len, reverse=True))
_KO_STOP = frozenset(_KO_STOP_TEXT.split())
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
CJK_WEIGHT = 0.5

_STOP_TEXT = {
    "english": "the a an and or of to in on at for is are was were be been it this that with what when where who "
               "how why which do does did we you i my our your can should would will",
    "german": "der die das den dem des ein eine einen einem einer und oder ist sind war wird werden wurde zu im in "
              "am an auf für mit von wie wo wann was wer welche welcher welchem welches ich du wir ihr sie es "
              "nicht auch noch mir mich uns bei aus nach um diese dieser dieses ins zum zur vom beim "
              "kein keine sein mein meine",
    "spanish": "el la los las un una unos unas y o de del en con por para que qué cómo como dónde donde cuándo "
               "cuando es son se su sus al lo le me mi nos yo tú usted hay está están muy más este esta estos estas ese esa",
    "french": "le la les un une des et ou de du en dans avec pour que qui quoi comment où quand est sont ce cette "
              "il elle nous vous je tu ne pas au aux sur par",
    "portuguese": "o a os as um uma e ou de do da dos das em no na com por para que como onde quando é são se "
                  "não ao eu você nós",
    "italian": "il lo la i gli le un una e o di del della in con per che come dove quando è sono si non al io "
               "tu noi voi",
    "dutch": "de het een en of van in op met voor dat die wat hoe waar wanneer is zijn wordt niet ik je wij we "
             "ze bij naar",
    "russian": "и в во на не что как где когда какой какая какие какое это я мы вы ты он она они оно для с со по "
               "из у к о об от до за мне нам вам есть ли нужно можно мой наш его её их бы же то так а но или все",
    "persian": "و در به از که این آن را با است برای یک می شود هست کجا چه کی هر تا هم یا نه اگر ما من شما او "
               "آنها بود شد",
}
STOP = {lang: frozenset(text.split()) for lang, text in _STOP_TEXT.items()}
_LATIN_LANGS = ("german", "spanish", "french", "portuguese", "italian", "dutch")
_PERSIAN_LETTERS = re.compile("[\u067e\u0686\u0698\u06af\u06a9\u06cc]")


def _script(ch: str) -> str:
    if CJK_RUN.match(ch):
        return "cjk"
    name = unicodedata.name(ch, "")
    for script in ("LATIN", "CYRILLIC", "GREEK", "ARABIC", "HEBREW", "DEVANAGARI", "THAI", "HANGUL"):
        if name.startswith(script):
            return "cjk" if script == "HANGUL" else script.lower()
    return "other"


def script_shares(text: str) -> dict[str, float]:
    """The share (0..1) of ``text``'s letters in each script (:func:`script_of`'s names and weights); ``{}``
    without letters."""
    counts: dict[str, int] = {}
    for ch in text or "":
        if ch.isalpha():
            script = _script(ch)
            counts[script] = counts.get(script, 0) + (2 if script == "cjk" else 1)
    total = sum(counts.values())
    return {s: n / total for s, n in counts.items()}


def script_of(text: str) -> str:
    """The main script of ``text``'s letters: ``latin``, ``cjk`` (Han, kana, Hangul), ``cyrillic``, ``greek``,
    ``arabic`` (Persian included), ``hebrew``, ``devanagari``, ``thai`` or ``other``; ``latin`` without letters.
    Digits and punctuation do not count; a CJK character counts twice (it carries about a word)."""
    shares = script_shares(text)
    return max(shares, key=lambda s: shares[s]) if shares else "latin"


def languages(text: str) -> list[str]:
    """Snowball languages detected in ``text`` (module docstring), most likely first; ``[]`` when none fits
    (CJK only, digits only)."""
    words = [w.casefold() for w in _WORDS.findall(text or "")]
    scripts = {_script(ch) for w in words for ch in w[:1]}
    out: list[str] = []
    if "cyrillic" in scripts:
        out.append("russian")
    if "arabic" in scripts:
        out.append("persian" if _PERSIAN_LETTERS.search(text) else "arabic")
    if "greek" in scripts:
        out.append("greek")
    if "devanagari" in scripts:
        out.append("hindi")
    if "latin" in scripts:
        hits = {lang: sum(w in STOP[lang] for w in words) for lang in ("english", *_LATIN_LANGS)}
        best = max(_LATIN_LANGS, key=lambda lang: hits[lang])
        out = ([best, "english"] if hits[best] > hits["english"] else ["english"]) + out
    return out


@lru_cache(maxsize=16)
def _stemmer(lang: str):
    return snowballstemmer.stemmer(lang)


@lru_cache(maxsize=65536)
def stem(word: str, lang: str) -> str:
    """``word`` (case-folded) by ``lang``'s Snowball stemmer."""
    return _stemmer(lang).stemWord(word.casefold())


@dataclass(frozen=True)
class Evidence:
    """What of a prompt a candidate's text must contain (module docstring). ``words``: keyword terms;
    ``stems``: per language, the stem of each term; ``cjk``: per content character, the prompt bigrams
    containing it (a lone character: itself); ``unmatched``: units of the prompt that count in the total but are
    never looked for (recall's date phrases: :func:`pi_memory.retrieval.engine.recall`)."""

    words: tuple[str, ...] = ()
    langs: tuple[str, ...] = ()
    stems: tuple[tuple[str, ...], ...] = ()
    cjk: tuple[tuple[str, ...], ...] = field(default=())
    unmatched: float = 0.0
    parts: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (index in words, its words): compounds only
    acronyms: frozenset[int] = frozenset()  # indexes in words of the prompt's acronyms: two units each, whole words

    @property
    def total(self) -> float:  # an acronym and a compound name of code weigh two units (:data:`_ACRONYM`)
        return len(self.words) + len(self.acronyms) + len(self.parts) + CJK_WEIGHT * len(self.cjk) + self.unmatched

    def __bool__(self) -> bool:
        return bool(self.words or self.cjk)

    def coverage(self, text: str) -> float:
        """Share (0..1) of the prompt found in ``text``; ``0.0`` when the prompt has no evidence units."""
        total = self.total
        if not total:
            return 0.0
        folded = (text or "").casefold()
        found = 0.0
        missed: list[int] = []
        heavy = self.acronyms.union(i for i, _ in self.parts)
        if self.words and not self.langs:  # an English prompt: its terms as written (no stems to compare)
            for i, term in enumerate(_english_patterns(self.words)):
                if term.search(folded):
                    found += 2 if i in heavy else 1
                else:
                    missed.append(i)
        elif self.words:
            text_stems: list[set[str]] | None = None
            for i, term in enumerate(self.words):
                if i in self.acronyms:  # a whole word in any language ("CI" is not in "città")
                    if _english_pattern(term).search(folded):
                        found += 2
                    continue
                if term.casefold() in folded or _HYPHENS.search(term) and _english_pattern(term).search(folded):
                    found += 2 if i in heavy else 1
                    continue
                missed.append(i)
                if text_stems is None:
                    tokens = set(_WORDS.findall(folded))
                    text_stems = [{stem(t, lang) for t in tokens} for lang in self.langs]
                if any(self.stems[i][j] in text_stems[j] for j in range(len(self.langs))):
                    found += 2 if i in heavy else 1
                    missed.pop()
        if missed and self.parts:  # a compound not found whole: the share of its words the text holds
            for i, words in self.parts:
                if i in missed:
                    held = [bool(w.search(folded)) for w in _english_patterns(words)]
                    share = sum(held) / len(held)
                    found += 2.0 if held[-1] and share >= 0.5 else 2 * share
        found += CJK_WEIGHT * sum(1 for grams in self.cjk if any(g in folded for g in grams))
        return found / total


# An English term (a crude suffix cut: "times" -> "tim", "prefers" -> "prefer") is found at the start of a word of the
# text. A term of up to SHORT_TERM_CHARS characters only as that word with an inflection after it, since as a
# mere start it matched other words: "what's 17 times 23?" found "timezone" (coverage 1.0, so the user's time zone
# was injected), "log into" found "login" and "blog". A longer term may be followed by anything ("postgres" in
# "PostgreSQL", "prefer" in "preference"), as before, but no longer inside a word ("base" in "database").
SHORT_TERM_CHARS = 4
_INFLECTIONS = "s|es|e|ed|d|er|ers|ing|ings|y|ies|ied|ly"


# A hyphenated word is found however a text joins its parts: "Import-Job" in "the nightly import job", "e-mail" in
# "email", "self-care" in "self care" (a tester's German prompt "was war mit dem Import-Job?" injected nothing).
_HYPHENS = re.compile(r"[-‐‑]+")


def _literal(term: str) -> str:
    return r"[\W_]*".join(re.escape(part) for part in _HYPHENS.split(term.casefold()))


@lru_cache(maxsize=4096)
def _english_pattern(term: str) -> re.Pattern[str]:
    if not term.isascii():  # a Korean word without its particle ("배포" in "배포는"), an accented name: a substring
        return re.compile(_literal(term))
    start = r"(?<![^\W_])" + _literal(term)
    if len(term) > SHORT_TERM_CHARS:
        return re.compile(start)
    double = re.escape(term[-1].casefold()) + "(?:ed|ing|er|ers|y)" if term[-1:].isalpha() else "(?!)"
    return re.compile(start + f"(?:{_INFLECTIONS}|{double})?" + r"(?![^\W_])")


def _english_patterns(words: tuple[str, ...]) -> list[re.Pattern[str]]:
    return [_english_pattern(w) for w in words]


def korean_words(text: str) -> tuple[str, ...]:
    """The content words of ``text``'s Hangul: each space-separated word with its particle or verb ending cut
    (:data:`_KO_ENDINGS`, longest first: ``배포는`` -> ``배포``, ``배포해요`` -> ``배포``), question words and
    auxiliaries (:data:`_KO_STOP`) left out, at least two syllables."""
    out: list[str] = []
    for word in _HANGUL_WORD.findall(text or ""):
        if word in _KO_STOP:
            continue
        for ending in _KO_ENDINGS:
            if word.endswith(ending) and len(word) - len(ending) >= 2:
                word = word[: -len(ending)]
                break
        if len(word) >= 2 and word not in _KO_STOP and word not in out:
            out.append(word)
    return tuple(out)


def _cjk_units(query: str) -> tuple[tuple[str, ...], ...]:
    """Per content character of ``query``'s CJK runs (Hangul aside: :func:`korean_words`): the run's bigrams
    that contain it (a lone character: itself)."""
    out = []
    for m in CJK_RUN.finditer(_HANGUL_WORD.sub(" ", query.casefold())):
        run = m.group(0)
        for i, ch in enumerate(run):
            if ch in CJK_STOP or _HIRAGANA.match(ch):
                continue
            out.append(tuple(run[j:j + 2] for j in (i - 1, i) if 0 <= j < len(run) - 1) or (run,))
    return tuple(out)


# An operator word between two numbers is arithmetic, not a topic: "what's 17 times 23?" had "times" as its one
# keyword, found "time zone" (coverage 1.0) and injected the user's time zone. Our own list, the operators a prompt
# spells out in the languages :data:`STOP` reads; the word is left out of the evidence (the numbers are too short
# to be terms anyway). "3 times a week" keeps "times": a word, not a number, follows it.
_ARITHMETIC = re.compile(
    r"(?<=\d)(\s+)(?:times|plus|minus|multiplied\s+by|divided\s+by|over|modulo|mod|to\s+the\s+power\s+of|mal|"
    r"geteilt\s+durch|por|m[aá]s|menos|entre|dividido\s+por|fois|moins|divis[ée]\s+par|vezes|умножить\s+на|"
    r"разделить\s+на|плюс|минус)(?=\s+[-+]?\d)", re.IGNORECASE)


# An acronym written in capitals among lower-case words names what the prompt is about: "how is our CI configured?"
# had "configur" as its one term (CI is under MIN_TERM_CHARS), so a VPN memory saying "configured" held all of it
# and was injected while the CI memory was not; "what does the VM run?" injected a turn that "runs pytest". An
# acronym of 2-6 capitals or digits (a letter first; a plural "s" dropped) is a term and weighs two units, as a
# date does (:func:`pi_memory.retrieval.engine.recall`), so a text without it holds at most a third of such a
# prompt. Not in a prompt written in capitals (a shout has no acronyms to tell apart), and not the short words
# people also write in capitals (our own list). A compound name of code (``requests.exceptions.ConnectionError``)
# weighs two units as well: it too is what the prompt is about, and "how do we handle <it>" must not come down
# to "handle".
_ACRONYM = re.compile(r"(?<![\w./:\\-])([A-Z][A-Z0-9]{1,5})s?(?![\w]|[-./:\\]\w)")  # not a part of OPS-4821, S3://
_NOT_ACRONYMS_TEXT = "ok okay hi no so go up us it me my we he be do is in on to of at an as by if or am id tv pm"
_NOT_ACRONYMS = frozenset(_NOT_ACRONYMS_TEXT.split())


def _acronyms(text: str) -> list[str]:
    letters = [c for c in text if c.isalpha()]
    if sum(c.isupper() for c in letters) * 2 > len(letters):
        return []
    return list(dict.fromkeys(a.casefold() for a in _ACRONYM.findall(text) if a.casefold() not in _NOT_ACRONYMS))


def evidence_terms(query: str) -> Evidence:
    """The :class:`Evidence` of ``query`` (module docstring)."""
    text = _ARITHMETIC.sub(" ", query or "")
    rest = CJK_RUN.sub(" ", text)
    langs = tuple(lang for lang in languages(rest) if lang != "english")
    if langs:  # the words as written (the English suffix cut would spoil a Spanish or Russian stem)
        stop = frozenset().union(STOP["english"], *(STOP[lang] for lang in langs if lang in STOP))
        raw = [w.strip(".'’-").casefold() for w in WORD.findall(rest)]
        words = tuple(dict.fromkeys(w for w in raw if len(w) >= MIN_TERM_CHARS and w not in stop))[:MAX_TERMS]
    else:  # a prompt of stop words alone ("on the", "what is the") has no keyword evidence: anything holds "the"
        words = tuple(w for w in keyword_terms(rest) if w not in STOP_WORDS and w not in STOP["english"])
    words += tuple(w for w in korean_words(text) if w not in words)
    acronyms = _acronyms(rest)
    plurals = {a + "s" for a in acronyms}  # "PRs": the keyword term "prs" is the acronym's
    words = tuple(w for w in words if w not in plurals) + tuple(a for a in acronyms if a not in words)
    stems = tuple(tuple(stem(w, lang) for lang in langs) for w in words)
    parts = tuple((i, found) for i, w in enumerate(words) if (found := _compound_words(w)))
    return Evidence(words, langs, stems, _cjk_units(text), parts=parts,
                    acronyms=frozenset(i for i, w in enumerate(words) if w in acronyms))


def _compound_words(term: str) -> tuple[str, ...]:
    """The words of a compound term (``celery.exceptions.timeouterror`` -> ``celery``, ``exception``,
    ``timeouterror``: :func:`pi_memory.index.query.compound_parts`, each cut as an English term is), or ``()``.
    A text naming some of them apart holds that share of the compound's unit, and the whole unit when it holds
    the last word (the name itself: ``TimeoutError``; the words before it are where it lives) and half of them
    ("a celery TimeoutError", "a requests ConnectionError")."""
    parts = compound_parts(term)  # [] for a plain word, or fewer than two words
    return tuple(dict.fromkeys(keyword_terms(" ".join(parts)))) if parts else ()


def coverage_of(terms: Evidence | Sequence[str], text: str) -> float:
    """Coverage of ``text`` by ``terms``: an :class:`Evidence`, or plain keyword terms (substring match)."""
    if isinstance(terms, Evidence):
        return terms.coverage(text)
    if not terms:
        return 0.0
    folded = text.casefold()
    return sum(1 for t in terms if t.casefold() in folded) / len(terms)
