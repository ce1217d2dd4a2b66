"""User query text -> a search plan over an FTS5 index (the word indexes of messages and memories; the rules
for a trigram index are kept). Never raises for any input.

The chain, step by step:

1. **Blank** (empty or whitespace only) -> an empty plan: no results, no error.
2. **Tokens.** ``"double quotes"`` make a phrase (kept as written, spaces included). A quote with no partner is
   dropped and the rest is read as plain words. Outside quotes the text splits on whitespace.
3. **Operators.** ``OR``, ``AND`` and ``NOT`` written in UPPERCASE between terms are operators; lowercase
   ``or``/``and``/``not`` are ordinary words. ``NOT`` negates the next term, ``AND`` is the default between
   terms, ``OR`` separates alternatives. A query made only of operator words searches for them as words.
4. **Cleaning words.** Sentence punctuation at the edges of a word is dropped (``(auth)`` -> ``auth``,
   ``failed?`` -> ``failed``, a trailing ``*`` too); inside a word everything is kept, so ``wrong-book``,
   ``@types/node``, ``100%``, ``user's`` and ``a:b`` are searched as written (the word index reads them as
   the phrases ``wrong book``, ``types node``, ``100``, ``user s``, ``a b``). A word that is only punctuation
   is kept as it is.
5. **Scripts.** An unquoted word mixing CJK and other scripts is cut where the script changes:
   ``修改youer服务端`` -> ``修改`` ``youer`` ``服务端`` (all required), so it matches with or without spaces.
6. **Stop words.** In a query without operators, common English function words (``the``, ``what``, ``did``
   ...) are dropped when at least one other term is left: they match almost every message and only slow the
   search down. A question read for ranking in context (``question=True``) also drops question fillers
   (:data:`QUESTION_STOP_WORDS`: ``kind``, ``type``, ``many``, ``go``...), which match turns that share only
   the question's form (LoCoMo, ``benchmarks/locomo_recall.py``: host recall R@10 +0.008, ``session_search``
   +0.009, every conversation up or level).
7. **Short terms.** A term the index cannot look up becomes a ``LIKE '%term%'`` filter with ``\\ % _``
   escaped: for the word index a term with no letter or digit (``%``, ``--``), for a trigram index one of 1-2
   characters (``go``, ``ui``, ``缓存``). Next to another term it only filters that term's matches (fast);
   alone it scans the rows, newest first (slow on large indexes). In the word index ``go`` and ``ui`` are
   ordinary words (``go`` does not find ``going``), and CJK terms are phrases of single characters.
8. **Expression.** Every other term becomes an FTS5 string (``"..."``, inner quotes doubled), so no user text
   is ever read as FTS5 syntax: ``'`` ``/`` ``@`` ``%`` ``*`` ``(`` ``)`` ``:`` ``-`` are just characters.
   The plan is a list of alternatives (``clauses``), each a conjunction of required and excluded terms.
9. **Broadening** (done by :mod:`.search`): a query without operators whose strict clause finds fewer hits
   than asked for is completed with the ``loose`` plan: any one of its terms (an OR), each term also tried
   without a plural/verb ending (``paintings`` -> ``paint``; ``studies`` -> ``studi``) and, for a compound name
   of code (``celery.exceptions.TimeoutError``, ``src/auth/middleware.py``), each of its words (:func:`compound_parts`):
   the strict phrase misses a text naming the parts apart ("a celery TimeoutError"). For the word index
   a broadened term of 4+ characters is a prefix (``deploy`` also finds ``deployment``); the strict clause
   matches whole words only, because a prefix query merges the rows of every word it starts and costs 5-20x
   a word lookup. Queries with operators are never broadened. If SQLite still rejects an expression, the search retries the query read
   without operators, then returns no results.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pi_memory.index.words import CJK_RANGES, HAS_CJK, cjk_bigrams, fts_form, has_word, word_tokens

MIN_FTS_CHARS = 3
MIN_PREFIX_CHARS = 4
MAX_TERMS = 12
OPERATORS = frozenset({"OR", "AND", "NOT"})

_CJK = CJK_RANGES
_POSSESSIVE = ("'s", "\u2019s")
_SCRIPT_RUNS = re.compile(f"[{_CJK}]+|[^{_CJK}]+")
_CJK_PUNCT = re.compile("[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]+")
_LEADING = "([{<'\"“‘«「『【〔（"
_TRAILING = ")]}>'\"”’»」』】〕）.,;:!?*…。，、；：！？"

_STOP_TEXT = """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
    not of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself yourselves
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
_QUESTION_FILLERS = """
    also ever etc kind kinds type types sort sorts way ways thing things something anything likely might may
    many much get got go went s t d ll re ve m
"""
#: Words dropped from a question read for ranking in context (``plan_query(question=True)``; recall's session
#: turns, a plain-words ``session_search`` with an embedder, the library turn index): the function words and
#: the fillers of questions ("what *kind* of", "how *many*", "did she *go*"). A strict search keeps the
#: fillers: ``go build`` or ``type error`` there mean the words.
QUESTION_STOP_WORDS = STOP_WORDS | frozenset(_QUESTION_FILLERS.split())


@dataclass(frozen=True)
class Term:
    """One search term. ``phrase`` when it came from quotes; ``negated`` when it follows ``NOT``; ``words``
    when it is meant for the word index (:mod:`.words`) rather than a trigram index; ``prefix`` when its last
    word also matches longer words (word index, broadening only)."""

    text: str
    phrase: bool = False
    negated: bool = False
    words: bool = False
    prefix: bool = False

    @property
    def short(self) -> bool:
        """True when the index cannot look the term up and it becomes a ``LIKE`` filter: fewer than 3
        characters for a trigram index, no letter or digit at all for the word index."""
        if self.words:
            return not has_word(self.text)
        return len(self.text) < MIN_FTS_CHARS

    @property
    def can_prefix(self) -> bool:
        """Word index only: whether the term may also match longer words (``deploy`` -> ``deployment``): its
        last word has ``MIN_PREFIX_CHARS`` or more characters and no CJK, and it is not a phrase. A short
        prefix costs a merge of every word it starts (``con*``: 50k rows, 20-30 ms at 100k messages), and so
        does a prefix phrase (``interactive-mode*``: 93 ms at 1M), so only a single word can be a prefix."""
        if not self.words or self.phrase:
            return False
        tokens = word_tokens(self.index_text)
        return len(tokens) == 1 and len(tokens[0]) >= MIN_PREFIX_CHARS and not HAS_CJK.search(tokens[0])

    @property
    def index_text(self) -> str:
        """The text looked up: as written, except that the word index drops a possessive ``'s`` (``love's``
        -> ``love``: the tokenizer would make it the phrase ``love s``, and ``s`` is one of the commonest
        tokens, so the phrase check cost 14-25 ms at 1M messages)."""
        if self.words and not self.phrase and len(self.text) > 2 and self.text[-2:].lower() in _POSSESSIVE:
            return self.text[:-2]
        return self.text

    def fts(self) -> str:
        text = " ".join((fts_form(self.index_text) or self.index_text).split()) if self.words else self.text
        return '"' + text.replace('"', '""') + '"' + ("*" if self.prefix and self.words else "")

    def like(self) -> str:
        escaped = self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return f"%{escaped}%"


@dataclass(frozen=True)
class Clause:
    """A conjunction: every positive term must occur, no negated term may."""

    terms: tuple[Term, ...]

    @property
    def positives(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if not t.negated)

    @property
    def negatives(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.negated)

    def match_expression(self) -> str | None:
        """The FTS5 MATCH text for the clause's long terms, or ``None`` when it has no positive long term."""
        pos = [t.fts() for t in self.positives if not t.short]
        if not pos:
            return None
        expr = " AND ".join(pos)
        neg = [t.fts() for t in self.negatives if not t.short]
        if neg:
            expr = f"({expr}) NOT ({' OR '.join(neg)})"
        return expr

    def like_filters(self) -> list[tuple[str, bool]]:
        """``(pattern, negated)`` for each short term: ``LIKE`` (or ``NOT LIKE``) conditions."""
        return [(t.like(), t.negated) for t in self.terms if t.short]


@dataclass(frozen=True)
class QueryPlan:
    query: str
    clauses: tuple[Clause, ...] = ()
    loose: tuple[Clause, ...] = ()
    operators: bool = False
    dropped: tuple[str, ...] = field(default=())
    excludes: bool = False  # the query had NOT terms (an empty plan then means "only exclusions")

    @property
    def empty(self) -> bool:
        return not self.clauses

    @property
    def terms(self) -> list[Term]:
        """Every distinct positive term of the strict clauses, in query order."""
        seen: dict[str, Term] = {}
        for clause in self.clauses:
            for term in clause.positives:
                seen.setdefault(term.text.lower(), term)
        return list(seen.values())


def _strip_edges(word: str) -> str:
    stripped = word.lstrip(_LEADING).rstrip(_TRAILING)
    return stripped if stripped else word


def _tokens(text: str) -> list[tuple[str, bool]]:
    """``(token, quoted)`` pairs; an unpaired quote is dropped."""
    out: list[tuple[str, bool]] = []
    pos = 0
    while pos < len(text):
        q = text.find('"', pos)
        if q < 0:
            out.extend((w, False) for w in text[pos:].split())
            break
        out.extend((w, False) for w in text[pos:q].split())
        end = text.find('"', q + 1)
        if end < 0:  # unmatched quote: read the rest as plain words
            out.extend((w, False) for w in text[q + 1 :].split())
            break
        phrase = " ".join(text[q + 1 : end].split())
        if phrase:
            out.append((phrase, True))
        pos = end + 1
    return out


def split_scripts(word: str) -> list[str]:
    """Cut a word where it changes between CJK and other scripts (``修改youer`` -> ``修改``, ``youer``) and at
    CJK punctuation (``服务端，配置`` -> ``服务端``, ``配置``)."""
    if not HAS_CJK.search(word):
        return [word]
    parts = [_strip_edges(p) for piece in _CJK_PUNCT.split(word) for p in _SCRIPT_RUNS.findall(piece)]
    return [p for p in parts if p.strip(_LEADING + _TRAILING + " \u3000")]


def light_stem(word: str) -> str:
    """A shorter form that still matches the word and its inflections as a substring (English only).

    ``paintings`` -> ``painting``, ``painted`` -> ``paint``, ``studies`` -> ``studi``. Words under 5 letters
    and non-ASCII words are returned unchanged.
    """
    if len(word) < 5 or not word.isascii() or not word.isalpha():
        return word
    low = word.lower()
    for suffix in ("ings", "ing", "ied", "ies", "ed", "es", "s"):
        if low.endswith(suffix) and len(word) - len(suffix) >= 4:
            if suffix in ("ied", "ies"):
                return word[: -len(suffix)] + "i"
            if suffix == "es" and not low.endswith(("ses", "xes", "zes", "ches", "shes")):
                return word[:-1]
            if suffix == "s" and low.endswith(("ss", "us", "is")):
                return word
            return word[: -len(suffix)]
    return word


# what joins the words of a name in code (a module path, a file path, snake_case, a scope): a hyphen or an
# apostrophe joins words of prose ("self-care", "dairy-free"), whose phrase is the unit (LoCoMo host R@10 0.8185 ->
# 0.8176 when hyphens counted too)
_CODE_JOINS = re.compile(r"[._/\\:][^\W_]|[^\W_]_")


def compound_parts(word: str, stop: frozenset[str] = STOP_WORDS) -> list[str]:
    """The words of a compound name of code that a word index reads as a phrase (``celery.exceptions.TimeoutError``,
    ``src/auth/middleware.py``, ``node_modules``: words joined by ``.`` ``/`` ``_`` ``:`` or ``\\``, not by
    a hyphen) that can stand alone: at least :data:`MIN_FTS_CHARS` letters and no digit, not a stop word; ``[]``
    for a single word, a CJK run, or a compound of fewer than two such words (``svc_ser29``, ``python3.11``).
    A broadened search tries each (module docstring, step 9): a turn saying "celery TimeoutError" holds no
    phrase of the three."""
    if not _CODE_JOINS.search(word) or HAS_CJK.search(word):
        return []
    tokens = word_tokens(word)
    parts = list(dict.fromkeys(t for t in tokens if len(t) >= MIN_FTS_CHARS and t.isalpha() and t.lower() not in stop))
    return parts if len(parts) > 1 else []  # "svc_ser29", "python3.11": a name with a number, no compound


def _dedupe(terms: list[Term]) -> tuple[Term, ...]:
    seen: set[tuple[str, bool]] = set()
    out = []
    for t in terms:
        key = (t.text.lower(), t.negated)
        if key not in seen:
            seen.add(key)
            out.append(t)
    return tuple(out[:MAX_TERMS])


def plan_query(query: str | None, operators: bool = True, words: bool = False, question: bool = False) -> QueryPlan:
    """Turn any user text into a :class:`QueryPlan` (see the module docstring). Never raises.

    ``words``: the plan is for a word index (``messages_fts``, ``memories_fts``: :mod:`.words`), else for an
    FTS5 trigram index (what both were first; kept for trigram tables). ``question``: the text is a question
    read for ranking in context, so question fillers are stop words too (:data:`QUESTION_STOP_WORDS`).
    """
    text = "".join(ch if ch.isprintable() or ch in "\t\n" else " " for ch in (query or ""))
    if not text.strip():
        return QueryPlan(query=query or "")
    tokens = _tokens(text)
    uses_ops = operators and any(not q and w in OPERATORS for w, q in tokens)
    if uses_ops and all(not q and w in OPERATORS for w, q in tokens):
        uses_ops = False

    groups: list[list[Term]] = [[]]
    negate = False
    for word, quoted in tokens:
        if uses_ops and not quoted and word in OPERATORS:
            if word == "OR":
                if groups[-1]:
                    groups.append([])
                negate = False
            elif word == "NOT":
                negate = True
            continue
        if not quoted and len(word) == 1 and not word.isalnum():  # one punctuation mark ("-", "'", "*") is no
            negate = False  # word: as a term it matched every text holding it (LIKE '%-%'); "::" or "->" still do
            continue
        if quoted:
            groups[-1].append(Term(word, phrase=True, negated=negate, words=words))
        elif negate:
            groups[-1].append(Term(_strip_edges(word), negated=True, words=words))
        else:
            groups[-1].extend(Term(piece, words=words) for piece in split_scripts(_strip_edges(word)))
        negate = False

    dropped: list[str] = []
    stop = QUESTION_STOP_WORDS if question else STOP_WORDS
    if not uses_ops:
        terms = groups[0]
        content = [t for t in terms if t.phrase or t.text.lower() not in stop]
        if content and len(content) < len(terms):
            kept = {id(t) for t in content}  # by identity: a list lookup made a long prompt quadratic
            dropped = [t.text for t in terms if id(t) not in kept]
            groups = [content]

    clauses = tuple(Clause(_dedupe(g)) for g in groups if any(not t.negated for t in g))
    loose: tuple[Clause, ...] = ()
    if not uses_ops and clauses:
        positives = clauses[0].positives
        long_terms = [t for t in positives if not t.short]
        pool = long_terms or list(positives)
        variants: list[Term] = []
        for t in pool:
            variants.append(replace(t, prefix=t.can_prefix))
            if not t.phrase:
                stem = light_stem(t.text)
                if stem != t.text:
                    variants.append(Term(stem, words=words, prefix=words))
                if words:  # a CJK sentence is one term: broaden to its character bigrams (words.cjk_bigrams)
                    variants += [Term(gram, words=True) for gram in cjk_bigrams(t.text)]
                    variants += [Term(part, words=True, prefix=len(part) >= MIN_PREFIX_CHARS)
                                 for part in compound_parts(t.text, stop)]
        loose = tuple(Clause((t,)) for t in _dedupe(variants))
        if len(loose) == 1 and loose[0] == clauses[0]:
            loose = ()
    excludes = any(t.negated for g in groups for t in g)
    return QueryPlan(query=query or "", clauses=clauses, loose=loose, operators=uses_ops, dropped=tuple(dropped),
                     excludes=excludes)


def describe(plan: QueryPlan) -> str:
    """A readable form of the plan for results and logs: ``"linear" AND "cli"``, ``LIKE '%go%'``, ..."""
    parts = []
    for clause in plan.clauses:
        bits = []
        for t in clause.terms:
            bit = f"LIKE '{t.like()}'" if t.short else t.fts()
            bits.append(("NOT " if t.negated else "") + bit)
        parts.append(" AND ".join(bits))
    return " OR ".join(f"({p})" if len(plan.clauses) > 1 else p for p in parts)
