"""Correction capture: rules that spot a user correcting the agent, and the rule-based save.

Precision comes first: what a rule saves lands in FAILURES.md, which every later session reads, so a lesson must
be a standing one and make sense without the conversation around it. Rules (case-insensitive, curly apostrophes
read as straight ones; fenced code and ``>`` quoted lines are not read; each list replaceable in settings, an
empty list meaning none):

* negative patterns first, and they win: chit-chat ("no worries", "no problem", "no thanks", "no, that's
  fine"), praise after "actually" ("actually looks great"), "stop there" / "stop for now", "never mind", "just
  kidding", leaving the choice to the agent ("as you see fit", "up to you", "whatever you think"), and what only
  the conversation explains ("the second approach", "you suggested", "the other one", "option 2", "as before");
* strong patterns: "I said" / "I told you" at the start, "we already discussed", "that's not what I" at the start;
* standing corrections (in code; their verbs are the directive words): a sentence that starts with "don't",
  "do not", "never" or "always" and a directive verb ("Never use sudo in scripts"), "stop" and a verb's -ing form
  ("stop using npm"), "from now on" / "going forward" / "in future" and a directive verb or such a start ("from
  now on, always run ruff"), "you should always ..." / "you must never ...", or a directive verb and an
  alternative it rejects ("use pnpm, not npm", "use X instead of Y", "rather than");
* the same in German, Spanish, French, Russian and Chinese (:mod:`.correction_languages`): their openers ("nein,",
  "нет,", "不对，") as weak patterns, their verbs as directive words, their standing markers before or after the
  verb ("nunca uses", "nimm immer", "n'utilise jamais", "никогда не используй", "以后都用") and their chit-chat as
  negative patterns; a word after "no" that is a sentence's subject ("No, test is failing") is no verb;
* weak patterns: a message starting with "no", "nope", "wrong", "actually" or "stop" followed by punctuation or
  a space (a dash after it is no part of the lesson: "no - use uv" saves "Use uv"), or with "wrong <a few
  words>," ("wrong file, use src/app.py"); they trigger only when what follows
  starts with a directive verb (optionally after "please", "just", "don't", "never", "always", "you should", "we
  always"...), and not for a one-off ("run the tests again", "for now", "this time").

A sentence that is a question is no correction. A lesson must name something a coding agent does: "don't do
that", "not like that", "delete that file" name nothing a later session could act on, nor do mood and effort
("always be nice", "mach weiter so", "fais de ton mieux", "一定要加油"): vague, not saved. A lesson holding a
credential (one the scanner finds, or a credential word in any of the languages followed by a value: "password
hunter2", "contraseña: hunter2", "токен ghp_...", or a password in letters alone, "password swordfish":
:mod:`.lesson_passwords`) is not saved at all: the store keeps no secrets, and a redacted
one teaches nothing.

The saved entry is a ``failure`` entry of category ``correction``: the lesson (from the sentence the rule found to
the end of its line, at most 400 characters, without a leading "no," / "wrong," / "actually" / "stop," or a
trailing "thanks", first letter up, credentials replaced by ``[REDACTED:<kind>]``), reason "User corrected the
agent" (in project NAME). :func:`capture` is the one decision: what the capture of a session saves and what
``pi-memory learning detect`` previews. Every host saves the same entry for the same message, whether it hands
over the message as typed (pi) or with its credentials already redacted (the Claude Code and Codex hooks keep the
prompt that way). An invalid regex in settings is reported once (:attr:`CorrectionRules.problems`) and skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pi_memory.learning import correction_languages as langs
from pi_memory.learning.correction_words import (
    CONTEXT_NEGATIVE,
    CREDENTIAL_VALUE,
    DEFAULT_DIRECTIVES,
    FUNCTION_WORDS,
    ONE_OFF,
)
from pi_memory.learning.lesson_passwords import gives_password

DEFAULT_NEGATIVE = (
    r"^\s*no+\s+(worries|problem|prob|thanks|thank\s+you|need|rush|pressure|biggie)\b",
    r"^\s*(no+|nope|nah)\W+(that'?s|it'?s|this\s+is|that\s+is|it\s+is|all|looks?)\s+(fine|ok|okay|good|great|perfect|"
    r"correct|right|alright|enough)\b",
    r"\bactually\b.{0,10}\b(looks?\s+(great|perfect|good|fine)|perfect|good|correct|right|fine|great|works?)\b",
    r"\bstop\b.{0,5}\b(there|here|for\s+now)\b",
    r"\bnever\s*mind\b|\bnvm\b|\b(just\s+)?kidding\b",
    r"\blet\s+me\s+(think|check|see|look|try)\b",
    r"\b(as\s+you\s+see\s+fit|up\s+to\s+you|your\s+(call|choice)|whatever\s+you\s+(think|prefer|want|like|choose)|"
    r"(either|any)\s+(way|one|option)\s+(is|works)|i\s+don'?t\s+mind|doesn'?t\s+matter|feel\s+free)\b",
    *CONTEXT_NEGATIVE,
    *langs.NEGATIVE,
)
DEFAULT_STRONG = (
    r"^\s*i\s+(said|told\s+you)\b",
    r"\bwe\s+already\s+discussed\b",
    r"^\s*that'?s\s+not\s+what\s+i\b",
)
DEFAULT_WEAK = (
    r"^\s*(no|wrong|actually|stop)[\s,.!:;-]",
    r"^\s*(nope|no{2,})[\s,.!:;-]",
    r"^\s*(wrong|not\s+the\s+right)\s+[\w./-]+(\s+[\w./-]+){0,2}\s*[,:;!-]",
    r"^\s*(no+|nope|wrong|actually|stop)\s*[\u2013\u2014]",  # "no—use uv", "no – use uv"
    *langs.DEFAULT_WEAK,
)
REASON = "User corrected the agent"

_LEADS = r"no+|nope|nah|wrong|stop|" + langs.LEAD_WORDS
_PUNCT = ",.!:;\\-\u2013\u2014，。！：；、"  # "no - use uv", "no — use uv", "不对，用 uv"
_LEAD = re.compile(rf"^\s*(?:(?:{_LEADS})(?:\s*[{_PUNCT}]+|\s+(?=(?:{_LEADS})\b))\s*|[{_PUNCT}]+\s*"
                   r"|actually\b[\s,.!:;-]*|(?:and|but|also|so|oh|ok|okay|hey|btw)\s*,?\s+)+", re.IGNORECASE)
_LEAD_ONLY = re.compile(rf"^\s*(?:{_LEADS}|actually)\W*$", re.IGNORECASE)
# the word alone: a leading run of separators, tried at each of its characters, took minutes on "use uv, , , ..."
_THANKS = re.compile(rf"\b(?:thanks|thank\s+you|thx|ty|please|pls|{langs.THANKS})\b[\s.!。！]*$", re.IGNORECASE)
_THANKS_SEP = ",;:，-"
_SPACES = re.compile(r"\s+")
_READ = 512  # what the lesson's last steps read: its 400 characters and a trailing "thank you" past them
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_QUOTED = re.compile(r"^[^\S\n]*>.*$", re.MULTILINE)  # "\s*" ran over every blank line from each
_SENTENCE_END = re.compile(r"[.!?;](?=\s|$)|\n|[。！？；]")  # "src/app.py" and "os.path" end no sentence
_LESSON_END = re.compile(r"[.!?](?=\s|$)|[。！？]")  # a lesson runs on over ";" ("never commit to main; open a PR")
# where a sentence starts: a run of blank lines is crossed once, from its first character (starting again from
# each of its characters, with "\s*" over the rest, took minutes on 20,000 newlines)
_SENTENCE = r"(?:^|(?<=[.!?;])(?=\s)|(?<!\s)(?=[^\S\n]*+\n)|(?<=[。！？；]))\s*+"
# within its sentence: "no. no. no. ..." is not read as one run of openers from each of its sentences
_OPENER = (rf"(?:(?:no+|nope|wrong|{langs.LEAD_WORDS}|actually|and|but|also|so|ok|okay|hey|oh|btw)\b"
           r"[^\w.!?;\n。！？；]*)")
_START = _SENTENCE + _OPENER + "*"
_IN_SENTENCE = r"(?:[^.!?;\n。！？；]|[.!?;](?!\s|$))"
_WORD = re.compile(r"[\w][\w'-]*")
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")
_TIME = r"(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future)"
_YOU_SHOULD = r"(?:(?:you|we)\s+(?:should|must|need\s+to|have\s+to)\s+)"
_STANDING = re.compile(  # "from now on, always run ruff": a time marker, then "always" / "never" or the verb
    _START + rf"(?P<marker>(?:please\s+)?(?:{_TIME}(?:\s*[,:]\s*|\s+)(?:please\s+)?)?{_YOU_SHOULD}?"
    r"(?:(?:don'?t|do\s+not|never)(?:\s+ever)?|always|stop)\s+"
    rf"|(?:please\s+)?{_TIME}(?:\s*[,:]\s*|\s+)(?:please\s+)?{_YOU_SHOULD}?|(?=prefer\s|avoid\s))(?P<verb>[a-z]+)",
    re.IGNORECASE)
# possessive: a long run of openers ("no no no ...") is not tried again with fewer, each time scanning the sentence
_REJECTS = re.compile(_SENTENCE + _OPENER + r"*+(?:please\s+)?(?P<verb>[^\W\d_]++)" + _IN_SENTENCE
                      + rf"*?(?:,\s*not\b|\binstead\s+of\b|\brather\s+than\b|{langs.REJECTS})", re.IGNORECASE)
_AFTER_LEAD = re.compile(
    rf"^\W*(?:(?:{_LEADS})\W+)*(?:(?:please|just|then)\s+|{langs.FILLERS})*"
    r"(?:(?:you|we)\s+(?:should|must|need\s+to|have\s+to|always|never|only)\s+|we\s+)?"
    r"(?:(?:don'?t|do\s+not|never|always)\s+)?(?P<verb>[^\W\d_]+)(?P<next>\s+[^\W\d_]+(?:n't)?)?", re.IGNORECASE)
# "No, test is failing", "No, USA is the market": the word after "no" is the sentence's subject, not a verb
_SUBJECT_NEXT = frozenset(["is", "are", "was", "were", "has", "have", "had", "does", "did", "will", "would", "isn't",
                           "aren't", "wasn't", "doesn't", "didn't", "won't", "can", "can't", "could"])
_SEP = rf"(?:\s+|(?<=[{langs.CJK}']))"  # between words: a space, none after a Chinese one or "n'"
_FOREIGN_STANDING = tuple(
    (lang, re.compile(
        _START + rf"(?P<marker>(?:(?P<time>{lang.time})(?:[\s,，:：]+|(?<=[{langs.CJK}])))?{langs.FILLERS}*"
        + (rf"(?:(?P<pre>{lang.before}){_SEP})?" if lang.before else "(?:(?P<pre>(?!)))?")
        + r")(?P<verb>[^\W\d_]+)"
        + (rf"(?:\s+(?P<post>{lang.after})\b)?" if lang.after else "(?:(?P<post>(?!)))?")
        + r"(?(time)|(?(pre)|(?(post)|(?!))))", re.IGNORECASE))  # a marker at least: else try another split
    for lang in langs.LANGUAGES)
_GIVES_SECRET = re.compile(CREDENTIAL_VALUE, re.IGNORECASE)
_DEICTIC_OBJECT = re.compile(r"\b(?P<verb>[a-z]+)\s+(?:it|this|them|those|these|that(?=\s*(?:[,.;:!?]|$|again|"
                             r"instead|anymore|please|then|now|too|here|there|in|on|to|for|with)))\b", re.IGNORECASE)
_DEICTIC_NOUN = re.compile(rf"\b(?:that|this|these|those|its?|same|other|{langs.DEICTIC})\s+[\w'-]+", re.IGNORECASE)
_ELISION = re.compile(r"\b(?:[nldsjmtc]|qu)'(?=\w)", re.IGNORECASE)  # French "n'utilise", "l'autre"


@dataclass(frozen=True)
class Detection:
    correction: bool
    directive: str | None = None
    # "strong:<pattern>" | "standing:<marker>+<verb>" | "weak:<pattern>+<word>" | "negative:<pattern>" |
    # "vague" (names nothing to act on) | "credential" (mostly a secret) | None
    rule: str | None = None

    def to_dict(self) -> dict:
        return {"correction": self.correction, "directive": self.directive, "rule": self.rule}


@dataclass
class CorrectionRules:
    strong: list[re.Pattern] = field(default_factory=list)
    weak: list[re.Pattern] = field(default_factory=list)
    negative: list[re.Pattern] = field(default_factory=list)
    directives: frozenset[str] = frozenset(DEFAULT_DIRECTIVES)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def from_lists(cls, strong=None, weak=None, negative=None, directives=None) -> CorrectionRules:
        """Rules from settings lists (``None``: the defaults above). Invalid regexes land in ``problems``."""
        rules = cls(directives=frozenset(w.lower() for w in (DEFAULT_DIRECTIVES if directives is None else directives)))
        for name, given, default in (("Strong", strong, DEFAULT_STRONG), ("Weak", weak, DEFAULT_WEAK),
                                     ("Negative", negative, DEFAULT_NEGATIVE)):
            for pattern in default if given is None else given:
                try:
                    getattr(rules, name.lower()).append(re.compile(pattern, re.IGNORECASE))
                except (re.error, TypeError) as exc:
                    rules.problems.append(f"correction{name}Patterns: {pattern!r} is not a valid regular expression "
                                          f"({exc}); it is skipped")
        return rules

    def detect(self, text: str) -> Detection:
        text = readable(text)
        if not text:
            return Detection(False)
        for p in self.negative:
            if p.search(text):
                return Detection(False, None, f"negative:{p.pattern}")
        found = self._find(text)
        if found is None:
            return Detection(False)
        start, rule, extent = found
        lesson = directive(text[start:], extent)
        if (why := unusable(lesson, self.directives)) is not None:
            return Detection(False, None, why)
        return Detection(True, lesson, rule)

    def _find(self, text: str) -> tuple[int, str, str] | None:
        """The first place a rule finds a correction: where its lesson starts, the rule, and how far the lesson
        goes (``"sentence"``, ``"line"``, or ``"line+lead"``: the line with its "wrong X," kept)."""
        found: list[tuple[int, int, str, str]] = []  # (start, rule order, rule, extent)
        for p in self.strong:
            if (m := p.search(text)) and not _question(text, m.start()):
                found.append((_sentence_start(text, m.start()), 0, f"strong:{p.pattern}", "line"))
        for m in _STANDING.finditer(text):
            marker = " ".join(m.group("marker").lower().replace(",", " ").replace(":", " ").split())
            verb = m.group("verb").lower()
            verb = _base(verb, self.directives) if marker.endswith("stop") else verb
            if verb in self.directives and not _question(text, m.start("marker")):
                found.append((m.start("marker"), 1, f"standing:{marker}+{verb}" if marker else f"standing:{verb}",
                              "sentence"))
                break
        found += self._foreign_standing(text)
        for m in _REJECTS.finditer(text):
            if (verb := _verb(m.group("verb"), self.directives)) in self.directives and not _question(
                    text, m.start("verb")):
                found.append((m.start("verb"), 1, f"standing:rejects+{verb}", "sentence"))
                break
        for p in self.weak:
            m = p.search(text)
            if not m or _question(text, m.end()):
                continue
            rest = text[m.end():]
            after = _AFTER_LEAD.match(rest)
            verb = _verb(after.group("verb"), self.directives) if after else None
            if after and (after.group("next") or "").strip().lower() in _SUBJECT_NEXT:
                verb = None  # "No, test is failing": a subject, not a verb
            line = rest.split("\n", 1)[0].lower()
            if verb in self.directives and not any(re.search(o, line) for o in ONE_OFF):
                lead_only = bool(_LEAD_ONLY.match(m.group(0)))
                found.append((m.end() if lead_only else m.start(), 2, f"weak:{p.pattern}+{verb}",
                              "line" if lead_only else "line+lead"))
                break
        if not found:
            return None
        start, _, rule, extent = min(found)
        return start, rule, extent

    def _foreign_standing(self, text: str) -> list[tuple[int, int, str, str]]:
        """Standing corrections in the other languages (:mod:`.correction_languages`): a time marker ("ab
        jetzt", "以后") or an always / never / don't marker before ("nunca", "никогда не", "不要") or after the
        verb ("nimm immer", "n'utilise jamais"), and one of the language's directive verbs."""
        for lang, pattern in _FOREIGN_STANDING:
            for m in pattern.finditer(text):
                pre, post = (m.group("pre") or "").lower(), (m.group("post") or "").lower()
                verb = _verb(m.group("verb"), self.directives)
                own = verb in lang.negated if pre == "no" else verb in lang.verbs or verb in lang.negated
                if lang.needs_after and pre and re.fullmatch(lang.needs_after, pre) and not post:
                    continue  # French "ne" without "pas" / "jamais"
                if not (m.group("time") or pre or post) or not own or verb not in self.directives:
                    continue
                if _question(text, m.start("verb")):
                    continue
                said = " ".join(p for p in (m.group("time"), pre, post) if p).lower().replace(",", "")
                return [(m.start("marker"), 1, f"standing:{lang.code}:{' '.join(said.split())}+{verb}", "sentence")]
        return []


@dataclass(frozen=True)
class Capture:
    """What the capture of one user message does: ``entry`` is the FAILURES.md entry it saves (``None``: not a
    correction), ``redacted`` the kinds of credential taken out of it, ``refused`` the finding the store would
    refuse it for (a threat pattern), ``None`` when it would be saved; ``control``: the entry holds a control character
    (an escape sequence), which the store refuses too (:func:`pi_memory.terminal_text.holds_control`)."""

    detection: Detection
    entry: str | None = None
    redacted: tuple[str, ...] = ()
    refused: object | None = None  # pi_memory.safety.Finding
    control: bool = False  # the entry holds a control character, which every store refuses (``invalid_content``)


def capture(rules: CorrectionRules, text: str, project: str | None) -> Capture:
    """The rule-based capture of ``text`` (a user message) in ``project`` (``None``: outside a project)."""
    found = rules.detect(text)
    if not found.correction:
        return Capture(found)
    entry, redacted = correction_entry(found.directive or "", project)
    from pi_memory import safety
    from pi_memory.terminal_text import holds_control

    return Capture(found, entry, redacted, safety.check_write(entry), holds_control(entry))


def correction_entry(directive: str, project: str | None) -> tuple[str, tuple[str, ...]]:
    """The FAILURES.md entry saving ``directive``, with its credentials redacted, and their kinds."""
    from pi_memory import safety
    from pi_memory.curated.entries import failure_entry

    redacted = tuple(dict.fromkeys(f.id for f in safety.scan_secrets(directive)))
    # Scoped to the project when there is one: FAILURES.md is one file, so the reason names the project.
    reason = REASON + (f" in project {project}" if project else "")
    return failure_entry(safety.redact(directive) if redacted else directive, "correction", reason), redacted


def readable(text: str | None) -> str:
    """The part of a message the rules read: curly apostrophes straight, no fenced code, no ``>`` quoted lines."""
    text = (text or "").replace("\u2019", "'").replace("\u2018", "'")
    return _QUOTED.sub("", _FENCE.sub("", text)).strip()


def directive(text: str, extent: str = "line") -> str:
    """The lesson in ``text`` (which starts where a rule found it): to the end of its line (``extent`` "line"),
    or of its sentence ("sentence"), without a leading "no," / "wrong," / "actually" / "stop," (kept for
    "line+lead": "Wrong file, use ...") or a trailing "thanks", at most 400 characters, first letter up."""
    line = text.strip().split("\n", 1)[0]
    if extent == "sentence" and (end := _LESSON_END.search(line)) is not None:
        line = line[:end.start()]
    rest = (line if extent == "line+lead" else _LEAD.sub("", line)).strip() or line.strip()
    # cut first: what follows reads at most a few hundred characters, whatever runs of spaces or commas follow
    rest = _SPACES.sub(" ", rest)[:_READ].strip()
    rest = _strip_thanks(rest)
    if rest.endswith((".", "\u3002")) and not rest.endswith(("..", "etc.", "e.g.", "i.e.")):
        rest = rest[:-1]  # the closing period off, as the other entries end
    rest = rest[:400].strip()
    return rest[:1].upper() + rest[1:]


def _strip_thanks(text: str) -> str:
    """``text`` without a trailing "thanks" / "please" and what separates it ("use uv, thanks" -> "use uv")."""
    m = _THANKS.search(text)
    if m is None:
        return text
    end = m.start()
    while end > 0 and (text[end - 1].isspace() or text[end - 1] in _THANKS_SEP):
        end -= 1
    return text[:end].strip() or text


def unusable(lesson: str, directives: frozenset[str]) -> str | None:
    """Why ``lesson`` is no lesson a later session can use (``"vague"``, ``"credential"``), or ``None``."""
    from pi_memory.safety import redact

    # a credential, whatever else the lesson says: the store keeps none, and its redacted form teaches nothing
    if (_REDACTED.search(redact(lesson)) or _GIVES_SECRET.search(lesson)
            or gives_password(lesson, FUNCTION_WORDS, directives)):  # "password swordfish": letters alone
        return "credential"
    if not _content(lesson, directives):
        return "vague"
    m = _DEICTIC_OBJECT.search(lesson)
    if m and m.group("verb").lower() in directives:
        return "vague"
    return None


def _content(text: str, skip: frozenset[str]) -> list[str]:
    """The words of ``text`` that name something: not function words, directive verbs, nor nouns after "that"
    (a run of Chinese characters: what is left of it without those, :func:`.correction_languages.cjk_names_something`)."""
    text = _ELISION.sub(" ", _DEICTIC_NOUN.sub(" ", text))
    return [w for w in _WORD.findall(text.lower()) if w not in FUNCTION_WORDS and w not in skip
            and (not langs.is_cjk(w) or langs.cjk_names_something(w, skip))]


def _verb(word: str, directives: frozenset[str]) -> str:
    """The verb a rule found, lower case; a run of Chinese characters gives the directive it starts with."""
    word = word.lower()
    return langs.cjk_verb(word, directives) if langs.is_cjk(word) else word


def _base(word: str, directives: frozenset[str]) -> str:
    """``using`` -> ``use``, ``running`` -> ``run``, ``adding`` -> ``add`` (a directive verb), else ``word``."""
    if not word.endswith("ing"):
        return word
    stem = word[:-3]
    for candidate in (stem, stem + "e", stem[:-1]):
        if candidate in directives:
            return candidate
    return word


def _sentence_start(text: str, pos: int) -> int:
    return max((m.end() for m in _SENTENCE_END.finditer(text, 0, pos)), default=0)


def _question(text: str, pos: int) -> bool:
    """Whether the sentence holding ``pos`` ends with a question mark."""
    end = _SENTENCE_END.search(text, pos)
    return end is not None and end.group() in ("?", "？")
