"""Every ``pi-memory <command>`` that a text of ours quotes (in backticks or ``<code>``) names a command the CLI
has: the inspector told a person to run ``pi-memory index``, which does not exist (``index-sessions`` does), and
an import refusal named ``pi-memory doctor``.

Read: Python string literals (comments are for developers, not read), the inspector's templates, the pi
extension's TypeScript and the built-in skills' Markdown, all under ``src/pi_memory``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

from pi_memory.cli.app import build_command

SRC = Path(__file__).resolve().parents[2] / "src" / "pi_memory"
# `pi-memory WORD [WORD]...` closed by its backtick on the same line (a ${...} of TypeScript ends the match: a
# template literal that starts with the word pi-memory is a sentence, not a command), or <code>pi-memory ...</code>
QUOTED = re.compile(r"(?:`|<code>)pi-memory ([a-z][a-z0-9-]*)(?: ([a-z][a-z0-9-]*))?[^`$\n<]{0,160}(?:`|</code>)")


def _python_texts(path: Path) -> list[str]:
    texts = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            texts.append(node.value)
        elif isinstance(node, ast.JoinedStr):  # an f-string: its fixed parts, {} where a value goes
            texts.append("".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values))
    return texts


def quoted_commands() -> list[tuple[str, str, str | None]]:
    """``(file, first word, second word or None)`` of every quoted ``pi-memory`` command line under src/."""
    found = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix == ".py":
            texts = _python_texts(path)
        elif path.suffix in (".html", ".ts", ".md", ".js") and "node_modules" not in path.parts:
            texts = [path.read_text(encoding="utf-8", errors="replace")]
        else:
            continue
        rel = str(path.relative_to(SRC))
        for text in texts:
            found += [(rel, m[1], m[2]) for m in QUOTED.finditer(text.replace("\\`", "`"))]
    return found


def unknown_commands() -> list[str]:
    root = build_command([])
    bad = []
    for where, word, second in quoted_commands():
        command = root.commands.get(word)
        if command is None:
            bad.append(f"{where}: pi-memory {word}")
        elif isinstance(command, click.Group) and second is not None and second not in command.commands:
            bad.append(f"{where}: pi-memory {word} {second}")
    return sorted(set(bad))


def test_the_extractor_finds_the_commands_texts_name() -> None:
    found = {(w, s) for _, w, s in quoted_commands()}
    assert {("index-sessions", None), ("pin", "add"), ("skills", "export"), ("learning", "log")} <= found
    assert QUOTED.findall("run <code>pi-memory index</code>") == [("index", "")]
    assert QUOTED.findall("`pi-memory backend is not running: ${reason}. `") == []  # a sentence, not a command


def test_every_quoted_command_exists() -> None:
    assert unknown_commands() == []
