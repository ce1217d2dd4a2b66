"""The secret row of numeric codes (:mod:`.secrets` holds the table): a PIN, a PUK, a phone's passcode, the code of
a door, gate or alarm, the combination of a safe or lock. The validator takes the match and the text and returns
the code's span, or ``None``.

The rule (``pin_code``)
-----------------------
A code is a few digits, and digits are everywhere (pin 13 of a board, error code 4012, zip code 28001), so the
label decides, and a code counts only when all of these hold:

* the label names a secret code: ``PIN`` (``PIN code``, ``PIN-Nummer``, ``PIN-код``, ``ПИН``, ``Geheimzahl``,
  ``暗証番号``; the CJK password words ``密码``, ``비밀번호`` with digits, as a bank card's PIN is written), ``PUK``,
  ``passcode``, ``digicode``; or ``code`` / ``código`` / ``код`` / ``combination`` with a word naming what it opens
  or proves right before it or in a qualifier after it (``door code``, ``alarm code``, ``Türcode``, ``safe
  combination``, ``the code for the front door``, ``код от домофона``, ``verification code``), or a word glued
  before it (``passcode``, ``digicode``, ``Zugangscode``, ``Zahlenkombination``; ``_GLUED``). "error code", "exit
  code", "zip code", "area code", "código postal", "unicode", "opcode" name no such thing and are never read;
* the value is introduced definitely: ``:``/``=``, a copula (``is``, ``ist``, ``lautet``, ``es``, ``est``, ``é``,
  ``это``, a dash; ``は``/``是``/``는`` glued), ``set/change … to``, or only a space for ``PUK``, ``passcode``,
  ``digicode``, a door-style code, ``PIN`` in capitals, or a lower-case ``pin`` with an owner word before it (``card
  pin 0917``, ``my pin 4821``); a value after a qualifier and only a space ends the clause (``код от домофона
  1234``);
* the value is 4-8 digits, not all the same digit (``0000`` is a factory default); a combination may also be two
  to five groups of 1-3 digits (``12-34-56``, ``36 24 12``); it is not part of a version, a decimal or a longer
  token, and no unit word follows it ("4 digits", "1234 lines");
* for ``pin`` in any case, the line does not speak of electronics (GPIO, Arduino, LED, PCB, header, board, ...):
  "pin: 13 (LED)", "the pin on the PCB is GPIO 4", "set pin 4 high" are pins. Two- and three-digit values are
  never codes, so Arduino pin numbers stay whatever the context.

A code with no label (``pin_code``, its verb form)
------------------------------------------------
``the office door opens with 7731``, ``unlock the lockbox with 0917``, ``disarm the alarm with 4821``, ``punch in
7731 at the gate``: a verb of opening (open, unlock, disarm) and ``with``, or punch/key/type and ``in``, then 4-8
digits as above, when a thing such a code opens (``_OPENS``: door, gate, safe, alarm, keypad, lockbox, …) stands
within 40 characters before the verb, as its object (a phone or laptop too) or in the words after the digits, and
the digits end the clause or go on with "at/on/for the …" or "when/before/if …" ("the gate opens with 1200 ms
delay" gives a unit; "the door opens with 2 keys" is too short). Digits alone
with no verb or label ("door 7731", "7731 opens it") are not read: they are room numbers, extensions and counts as
often as codes, and nothing in the words around them tells which.

Costs: a lower-case ``pin`` with only a space and no owner word ("pin 4821"), a PIN of fewer than 4 digits, a code in
a line that also speaks of a circuit board, and a code with no label or opening verb are missed; a lower-case "pin:
4821" outside electronics is taken for a PIN.
"""

from __future__ import annotations

import re

from ._secret_values import _in_marker
from ._text import fold


def _spellings(words: tuple[str, ...]) -> list[str]:
    """Each word folded as written, in capitals and capitalised: folding gives Cyrillic capitals their Latin
    look-alikes but not every small letter its own ("ПИН" folds to "ПИH", "пин" stays), so the case-blind regex
    and the lower-cased keyword need every spelling."""
    seen: dict[str, None] = {}
    for word in words:
        for form in (word, word.upper(), word.capitalize()):
            seen.setdefault(fold(form).text, None)
    return sorted(seen, key=len, reverse=True)


def _folded(*words: str) -> str:
    """``words`` as a regex alternation in their folded spellings (the rows run on folded text), spaces matching
    spaces or tabs."""
    return "|".join(re.escape(w).replace(r"\ ", r"[ \t]+") for w in _spellings(words))


# Labels that are a secret code by themselves.
_PIN_LABELS = (r"pin(?:[ \t-]?(?:" + _folded("code", "number", "nummer", "no.", "nr.", "код") + r"))?|"
               + _folded("пин-код", "пин код", "пин", "geheimzahl", "code pin", "código pin", "puk1", "puk2",
                         "puk code", "puk"))
# Labels that need a word naming what the code opens or proves (``_OPENS``).
_CODE_LABELS = _folded("code", "código", "код", "combination", "combinación", "combinaison", "kombination",
                       "combinação")
# Words glued before "code" or "kombination" that make it a secret code ("passcode", "Türcode", "Zahlenkombination");
# any other glued word is another thing ("unicode", "vscode", "opcode").
_GLUED = re.compile(r"(?:" + _folded("pass", "digi", "tür", "tor", "alarm", "zugangs", "tresor", "zahlen", "schloss",
                                     "sicherheits") + r")$", re.IGNORECASE)
_LETTERS_BEFORE = re.compile(r"[^\W\d_]{1,20}$")
_COMBINATION = re.compile(_folded("komb", "comb"), re.IGNORECASE)
_CJK_LABELS = _folded("暗証番号", "密码", "密碼", "비밀번호", "비밀 번호")
_COPULA = _folded("is", "was", "ist", "lautet", "war", "es", "era", "est", "était", "é", "это", "—", "–")
_CJK_COPULA = _folded("は", "是", "为", "為", "는", "은")
_VALUE = r"(?P<v>\d{1,3}(?:[- /.]\d{1,3}){1,4}|\d{3,8})(?![A-Za-z0-9_]|[.,:/-]\d)"
_PREP = _folded("for", "of", "to", "on", "at", "für", "von", "zur", "zum", "de", "del", "da", "do", "du", "pour", "para",
                "от", "для", "к")

CODE_PATTERN = (
    rf"(?:(?<![^\W_])(?P<pin>{_PIN_LABELS})(?![^\W_])|(?P<code>{_CODE_LABELS})(?![^\W_])|(?P<cjk>{_CJK_LABELS}))"
    rf"(?P<qual>[ \t]+(?:{_PREP})[ \t]+[^\n:=.!?]{{1,30}}?)?[\"'”」]?"
    rf"(?:(?P<sep>[ \t]*(?:=>|:=|[:=])[ \t]*)|[ \t]+(?P<is>{_COPULA})[ \t]*:?[ \t]+"
    rf"|[ \t]*(?P<cis>{_CJK_COPULA})[ \t]*|(?P<to>[ \t]+to[ \t]+)|(?P<bare>[ \t]+))"
    rf"[\"'`]?{_VALUE}"
)
# Every match starts with one of these (the row is tried only at their places; each is looked for in the whole
# text, so the compounds are read from the letters before "code" instead of words of their own).
CODE_KEYWORDS = tuple(sorted({w.lower() for w in _spellings((
    "pin", "puk", "geheimzahl", "code", "código", "код", "пин", "combina", "kombination", "暗証番号", "密码", "密碼",
    "비밀"))}))
CODE_ANCHOR = 0

# What a code opens or proves: before the label ("door code", "safe combination") or in its qualifier ("the code
# for the front door", "код от домофона").
_OPENS = re.compile(
    r"(?<![^\W_])(?:" + _folded(
        "door", "front door", "back door", "gate", "garage", "alarm", "entry", "access", "keypad", "lock", "lockbox",
        "locker", "padlock", "safe", "vault", "security", "unlock", "intercom", "buzzer", "apartment", "pin", "puk",
        "verification", "one-time", "2fa", "mfa", "otp", "sms", "tür", "tor", "zugang", "tresor", "schloss",
        "puerta", "alarma", "acceso", "portón", "caja fuerte", "candado", "seguridad", "verificación", "porte",
        "alarme", "accès", "coffre", "coffre-fort", "cadenas", "portail", "sécurité", "vérification", "porta",
        "alarme", "acesso", "cofre", "cadeado", "portão", "segurança", "verificação", "домофон", "домофона",
        "двери", "дверь", "подъезда", "подъезд", "сейфа", "сейф", "сигнализации", "замка", "доступа", "калитки",
        "ворот") + r")(?![^\W_])", re.IGNORECASE)
_OPENS_BEFORE = re.compile(_OPENS.pattern + r"[ \t_-]*$", re.IGNORECASE)  # "door code", "DOOR_CODE"
# Owner words that make "pin 4821" (only a space) a PIN: "card pin 0917", "my pin 4821".
_OWNER = re.compile(r"(?<![^\W_])(?:my|your|our|his|her|their|card|bank|debit|credit|atm|sim|phone|iphone|android"
                    r"|voicemail|door|office|safe|alarm|account|app|visa|mastercard|amex|wallet)[ \t-]+$",
                    re.IGNORECASE)
# A line about electronics: a lower-case "pin" there is a pin.
_ELECTRONICS = re.compile(
    r"(?<![^\W_])(?:gpio\w*|arduino|pcb|leds?|pinout|header|breadboard|esp32|esp8266|raspberry|rpi|pwm|analog"
    r"|digital|adc|dac|sensor|resistor|i2c|spi|uart|gnd|vcc|volts?|voltage|jumper|connector|socket|chip|mcu|fpga"
    r"|microcontroller|board|pins|wire|wiring|high|low|input|output|pull-?up|pull-?down)(?![^\W_])", re.IGNORECASE)
_UNIT = re.compile(r"[ \t]*(?:-[ \t]*)?(?:digits?|chars?|characters?|lines?|bytes?|bits?|times|ms|seconds?|minutes?"
                   r"|hours?|days?|px|mm|ohms?|mhz|khz|hz|stellen|zeichen|dígitos|chiffres|цифр\w*|символ\w*)"
                   r"(?![^\W_])", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[ \t]*(?:[.!?;,)\n#]|$)")
_SET_VERB = re.compile(r"(?<![^\W_])(?:set|change|changed|reset|update|updated)(?![^\W_])", re.IGNORECASE)


def _line_around(text: str, start: int, end: int) -> str:
    low = max(text.rfind("\n", 0, start) + 1, start - 80)
    high = text.find("\n", end)
    return text[low: min(high if high >= 0 else len(text), end + 80)]


def code_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    start, end = m.span("v")
    value = m.group("v")
    grouped = not value.isdigit()
    digits = re.sub(r"\D", "", value)
    if len(set(digits)) <= 1 or _in_marker(text, start) or _UNIT.match(text, end):
        return None
    label = m.group("pin") or m.group("code") or m.group("cjk")
    combination = _COMBINATION.search(label) is not None
    if grouped and not (combination and len(digits) >= 4):
        return None  # only a combination is written in groups ("12-34-56"); "PIN 12.34" is no code
    if not grouped and len(value) < 4:
        return None  # "pin: 13", "code 404": no secret code is that short
    if m.group("code") is not None:
        glued = _LETTERS_BEFORE.search(text, max(0, m.start() - 20), m.start())
        if glued is not None:
            if not _GLUED.search(glued.group()):
                return None  # "unicode", "vscode": another word
        elif not (_OPENS_BEFORE.search(text, max(0, m.start() - 30), m.start()) or _OPENS.search(m.group("qual") or "")):
            return None  # "error code is 4012", "the code is 4821 lines long": a code of nothing
    if m.group("to") is not None and not _SET_VERB.search(text, max(0, m.start() - 40), m.start()):
        return None  # "pin the version to 4.2.1", "code to 1234" without a set verb
    if m.group("cis") is not None and m.group("cjk") is None:
        return None  # a glued CJK copula belongs to the CJK labels
    if m.group("cjk") is not None and m.group("cis") is None and m.group("sep") is None:
        return None
    pin = m.group("pin")
    if pin is not None and pin[:3].lower() == "pin":  # a pin of a board as often as a PIN ("LED_PIN = 2048")
        if _ELECTRONICS.search(_line_around(text, m.start(), end)):
            return None
        if (m.group("bare") is not None and pin[:3] != "PIN"
                and not _OWNER.search(text, max(0, m.start() - 20), m.start())):
            return None  # "pin 4821": a lower-case pin with only a space needs an owner ("card pin 0917")
    if m.group("bare") is not None and m.group("qual") and not _CLAUSE_END.match(text, end):
        return None  # after a qualifier and a space only a value that ends the clause: "код от домофона 1234"
    return (start, end)


# ---- a code with no label: "the door opens with 7731" ------------------------------------------------------------
OPEN_PATTERN = (r"(?<![^\W_])(?:(?:open|unlock|disarm)(?:s|ed)?(?P<obj>[ \t]+[^\n\d.,;:!?]{1,40}?)?[ \t]+with"
                r"|(?:punch|key|type)(?:es|s|ed)?[ \t]+in)[ \t]+(?:(?:the[ \t]+)?code[ \t]+)?[\"'`]?" + _VALUE)
OPEN_KEYWORDS = ("open", "unlock", "disarm", "punch", "key in", "keys in", "keyed in", "type in", "types in",
                 "typed in")
_GOES_ON_TO = re.compile(r"[ \t]+(?:(?:at|on|for|to)[ \t]+(?:the|a|an|our|my|your|its)?[ \t]*[^\W\d_]{2,}"
                         r"|(?:when|before|after|if|and|then)(?![^\W_]))", re.IGNORECASE)
# What the verb form also opens: a device's lock screen ("unlock the phone with 4821").
_DEVICE = re.compile(r"(?<![^\W_])(?:screen|phone|iphone|ipad|tablet|laptop)(?![^\W_])", re.IGNORECASE)


def open_value(m: re.Match[str], text: str) -> tuple[int, int] | None:
    """A code after a verb of opening, with a thing it opens before the verb or as its object (module docstring)."""
    start, end = m.span("v")
    value = m.group("v")
    if not value.isdigit() or not 4 <= len(value) <= 8 or len(set(value)) <= 1 or _in_marker(text, start):
        return None
    if _UNIT.match(text, end) or not (_CLAUSE_END.match(text, end) or _GOES_ON_TO.match(text, end)):
        return None
    line_start = max(text.rfind("\n", 0, m.start()) + 1, m.start() - 40)
    obj, after = m.group("obj") or "", text[end:end + 30]
    if not (_OPENS.search(text, line_start, m.start()) or _OPENS.search(obj) or _DEVICE.search(obj)
            or _OPENS.search(after)):
        return None
    return (start, end)
