"""The word lists of the correction rules (:mod:`.corrections`): which verbs direct, which words name nothing,
which phrases only the conversation explains. English here; German, Spanish, French, Russian and Chinese in
:mod:`.correction_languages` (their verbs join the directive words below). Another language is not captured."""

from __future__ import annotations

from pi_memory.learning import correction_languages as _langs

# Verbs a lesson directs with ("use pnpm", "never run ...", "stop adding ..."); ``correctionDirectiveWords``.
DEFAULT_DIRECTIVES = (
    "use", "run", "install", "uninstall", "add", "remove", "delete", "put", "keep", "set", "write", "call", "name",
    "prefer", "avoid", "import", "change", "edit", "touch", "modify", "commit", "push", "merge", "rebase", "move",
    "rename", "create", "test", "build", "deploy", "skip", "leave", "format", "follow", "mock", "log", "print", "pin",
    "bump", "upgrade", "downgrade", "update", "store", "save", "wrap", "return", "raise", "throw", "catch", "hardcode",
    "be", "make", "ask", "reply", "answer", "include", "exclude", "mention", "start", "force", "disable", "enable",
    "ignore", "bypass", "suppress", "document", "comment", "rewrite", "refactor", "overwrite", "override", "patch",
    "sort", "split", "switch", "stick", "depend", "rely", "assume", "guess", "invent", "stage", "squash", "amend",
    "generate", "vendor", "lint", "type", "annotate", "declare", "define", "expose", "send", "share", "post",
    "publish", "release", "tag", "trust", "check",
    *_langs.all_verbs(),
)

# Words that name nothing on their own: a lesson made only of these (and directive verbs) is vague.
_FUNCTION = """
a an the this that these those it its it's them they their there here one ones some any all each every other another
same such so too very really just only also even still again already now then yet instead anymore please pls ok okay
yes yeah no nope nah not don't dont doesn't didn't do does did done doing never always ever stop actually wrong right
i i'm me my mine you you're your yours we we're us our ours he she him her his what which who whom whose why how when
where whatever whichever and or but nor if else than because as of to for from with without in on at by about into
onto over under up down out off before after like way thing things stuff something anything everything nothing
is are was were be been being am has have had having will would shall should can could may might must need needs
said say says told tell telling asked ask meant mean wanted want wrote thought think discussed talked mentioned
again time times more less much many few lot lots bit kind sort well back first second last next better best
thanks thank going ahead continue
"""
# Words about mood or effort: "always be nice", "keep smiling", "do your best" name no tool, command, file or
# flag a coding agent uses, so a lesson of nothing else is chit-chat, not a lesson.
_ATTITUDE = """
nice kind kindly polite friendly happy cheerful positive calm patient careful honest humble brave confident
smile smiles smiling laugh laughing best great awesome cool fun learn learning learned trying try hard hardest
yourself improving growing moving pushing
"""
FUNCTION_WORDS = frozenset(_FUNCTION.split()) | frozenset(_ATTITUDE.split()) | _langs.FUNCTION_WORDS | _langs.ATTITUDE

# A credential named and given ("password hunter2", "contraseña: hunter2", "密码是abc123", "token=abc123"): the
# name in any supported language, an optional "is" / ":" / "=", then a value holding a digit or a sign (plain
# words after it, "never put passwords in the repo", give none). A lesson holding one is not saved: the store
# keeps no secrets, and a secret redacted teaches nothing.
_CREDENTIAL_NAMES = (r"\b(?:passwor[dt]s?|passwd|pwd|kennw[oö]rt(?:er)?|contraseñas?|claves?|mots?\s+de\s+passe|"
                     r"пароль|пароля|паролем|токены?|токеном|tokens?|api[\s_-]?keys?|apikeys?|secrets?|"
                     r"passphrases?|credentials?)\b(?:[^\S\n]*[:=：][^\S\n]*|[^\S\n]+(?:(?:is|ist|es|est|это)[^\S\n]+)?)"
                     r"|(?:密码|口令|令牌|密钥)[^\S\n]*(?:[:=：是为][^\S\n]*)?")
CREDENTIAL_VALUE = rf"(?:{_CREDENTIAL_NAMES})(?=[^\s,;，；。]*[\d_&$%#@!*+=/\\^~|<>.-])[^\s,;，；。]{{3,}}"

# After a weak lead ("no, ..."), these make the instruction a one-off, not a standing lesson.
ONE_OFF = (r"\bagain\b", r"\b(?<!from )now\b", r"\bthis\s+time\b", r"\bfor\s+now\b", r"\bright\s+away\b",
           r"\bfor\s+this\s+one\b", *_langs.ONE_OFF)

# Default negative patterns: phrases only the conversation explains ("the second approach you suggested").
CONTEXT_NEGATIVE = (
    r"\byou\s+(just\s+)?(suggested|proposed|mentioned|showed|recommended|offered|listed|described)\b",
    r"\b(first|second|third|fourth|last|other|previous|earlier|original|former|latter|next)\s+(one|approach|option|"
    r"version|way|suggestion|solution|idea|choice|method|attempt|variant|proposal)\b",
    r"\b(that|this|the\s+other)\s+one\b",
    r"\boption\s*(\d+|[a-d])\b",
    r"\b(as|like)\s+(before|earlier|above|i\s+said)\b",
    r"\bthe\s+above\b",
    r"\bgo\s+back\b",
    *_langs.CONTEXT,
)
