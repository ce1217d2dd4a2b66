"""The YAML frontmatter of a Markdown file, read one safe way: memory blocks, ``SKILL.md`` files (the store, the
checks before a host gets one, ``pi-memory import``) and the hosts' own memory files all read it here.

A frontmatter is a few short keys. YAML can say much more than that, and a file edited by hand (or shipped in a
cloned repository) may: an alias (``*name``) repeats the value of an anchor (``&name``), so nine lines of aliases
nine deep stand for 387 million strings. PyYAML's safe loader builds such a value in a moment (the repeats are
one shared object), but every reader after it (``str()`` of a description, the threat scanner, a JSON answer)
walks all of them: ``blocks list`` ran past a minute, ``skills list`` took 2.5 GB, and the session-start hook of
Claude Code ran out of time and gave the session no memory at all. So :func:`load`:

* refuses an alias anywhere in the frontmatter (:class:`FrontMatterRefused`): a value reached twice in the
  composed YAML is an alias, found before any value is built. An anchor without an alias is harmless and read;
* refuses a frontmatter past :data:`MAX_CHARS` characters (``FrontMatterRefused``): a name, a description and a
  few keys fit many times over;
* turns a YAML error, and nesting too deep to build, into :class:`FrontMatterError` naming the first problem.

The messages complete a sentence about the file: ``f"{path} is not read: {error}"``. What a reader does with a
refused file is its own decision (a block file is skipped and named to a person, a skill is listed as
unreadable); :func:`kind` words a value that is not plain text (a list, a mapping) for a person, so no reader
shows a Python ``repr`` of it instead.

libyaml's parser is used when installed (PyYAML's ``CSafeLoader``), else PyYAML's own; both give the same nodes.
"""

from __future__ import annotations

import datetime as _dt
import re

# characters of one frontmatter: a hand-written description of 100,000 characters is still read (and cut where it is
# shown); 131,072 characters of the most node-dense YAML take libyaml about 0.3 s
MAX_CHARS = 131_072
BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)  # python-frontmatter's delimiter line, which hosts follow


class FrontMatterError(ValueError):
    """A frontmatter that could not be read; ``str()`` is for a person (``its frontmatter is not valid YAML
    (...)``)."""


class FrontMatterRefused(FrontMatterError):
    """A frontmatter that is refused unread: it uses YAML aliases, or is too long (see the module docstring)."""


ALIASES = ("its frontmatter uses YAML aliases (*name, repeating the value of an &name anchor), which pi-memory "
           "does not read: a few lines of them can stand for billions of values. Write each value out in full")


def split(text: str) -> tuple[str | None, str]:
    """``(frontmatter text or None, the rest)`` of ``text`` (a leading BOM dropped): the frontmatter is what lies
    between a first line of three or more dashes and the next such line; without both there is none."""
    text = text.lstrip("\ufeff")
    if BOUNDARY.match(text):
        parts = BOUNDARY.split(text, 2)
        if len(parts) == 3:
            return parts[1], parts[2]
    return None, text


def load(fm: str) -> object:
    """The value of the frontmatter text ``fm`` (``None`` for an empty one); raises :class:`FrontMatterRefused`
    for aliases or a text past :data:`MAX_CHARS`, :class:`FrontMatterError` for YAML that cannot be read."""
    if len(fm) > MAX_CHARS:
        raise FrontMatterRefused(f"its frontmatter has {len(fm):,} characters, past the {MAX_CHARS:,} pi-memory "
                                 "reads; keep it to a name, a one-line description and a few short keys")
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(fm)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _reached_twice(node):
            raise FrontMatterRefused(ALIASES)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split("\n", 1)[0].split())
        raise FrontMatterError(f"its frontmatter is not valid YAML ({first})") from None
    except RecursionError:
        raise FrontMatterRefused("its frontmatter nests values too deeply to read; write it as a few plain "
                                 "keys") from None
    finally:
        loader.dispose()


def _reached_twice(root: object) -> bool:
    """Whether a node of the composed document is reached twice: an alias (both parsers hand the anchored node
    itself to every alias of it). The walk visits each node once, so it ends quickly whatever the aliases say."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        value = getattr(node, "value", None)
        if isinstance(value, list):
            for item in value:
                stack.extend(item if isinstance(item, tuple) else (item,))  # a mapping's (key, value) pairs
    return False


def kind(value: object) -> str:
    """What a YAML value is, for a person: ``a list``, ``a mapping``, ``a number``, ``a date``, ``empty``..."""
    if isinstance(value, bool):
        return "true/false (YAML reads yes, no, on and off so)"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, _dt.date):
        return "a date"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return "empty" if value is None else f"a {type(value).__name__}"


def not_plain_text(key: str, value: object) -> str:
    """Why ``value`` of ``key`` is not read as text: ``its description is a list in the frontmatter, not plain
    text``."""
    return f"its {key} is {kind(value)} in the frontmatter, not plain text"
