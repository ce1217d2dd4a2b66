"""pi's slash commands, Python side: the bridge's ``command {name, args}`` method lands here.

Each command calls the library function its CLI twin calls and returns text for a person (lines from
:mod:`pi_memory.reports`): ``{"text", "level": "info"|"warning"|"error", ...}``. The TypeScript side
(``extension/commands.ts``) shows it in pi's TUI (a notification, or a pager when it is long).

========================  ============================  ========================================
pi command                name here                     CLI twin
========================  ============================  ========================================
``/memory``               ``memory``                    ``pi-memory blocks list`` + ``status``
``/memory status``        ``status``                    ``pi-memory status``
``/memory limit K N``     ``memory``                    ``pi-memory blocks limit K N``
``/memory-insights``      ``insights``                  ``pi-memory insights``
``/memory-pin``           ``pin``                       ``pi-memory pin add|list|remove|clear``
``/memory-preview-...``   ``preview``                   ``pi-memory preview-context``
``/memory-interview``     ``interview`` / ``interview_save``  ``pi-memory interview``
``/memory-switch-...``    ``projects``                  ``pi-memory projects``
``/memory-index-...``     ``index_sessions``            ``pi-memory index-sessions``
``/memory-sync-markdown`` ``sync_markdown``             ``pi-memory sync-markdown``
``/mem0 ...``             ``mem0``                      ``pi-memory semantic status|search|add|...``
========================  ============================  ========================================
"""

from __future__ import annotations

import shlex
from typing import Any

from pi_memory import insights, reports
from pi_memory.standing import StandingStore

INTERVIEW = (
    ("name", "What should the agent call you?", "The user's name is {}."),
    ("role", "What is your role, and what do you mostly work on?", "Role and work: {}."),
    ("stack", "Which languages, tools and package managers do you prefer?", "Preferred languages and tools: {}."),
    ("style", "How should answers be: short or detailed, and in which language?", "Prefers answers: {}."),
    ("avoid", "Anything the agent should avoid or always check first?", "Asked the agent to: {}."),
)
PIN_HELP = "Usage: /memory-pin TEXT | /memory-pin list | /memory-pin remove N [N ...] | /memory-pin clear"
LIMIT_HELP = ("Usage: /memory limit KEY CHARS (a memory block's character limit, e.g. /memory limit user 4000; "
              "/memory lists the blocks)")



def _reply(lines: list[str], level: str = "info", **extra: Any) -> dict[str, Any]:
    return {"text": "\n".join(lines), "level": level, **extra}


def _words(args: str) -> list[str]:
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def run(session: Any, name: str, args: str = "", data: dict | None = None) -> dict[str, Any]:
    """Run one command for ``session`` (an :class:`pi_memory.session.AgentSession`)."""
    handler = _COMMANDS.get(name)
    if handler is None:
        return _reply([f"Unknown pi-memory command {name!r}."], "error")
    return handler(session.memory, (args or "").strip(), data or {})


def _memory(memory, args: str, _data: dict) -> dict[str, Any]:
    if args.split()[:1] == ["status"]:
        return _status(memory, "", _data)
    if args.split()[:1] == ["limit"]:
        return _limit(memory, _words(args)[1:])
    blocks = memory.blocks()
    listed = reports.block_lines(blocks.listed(), withheld=blocks.withheld(), skipped=blocks.skipped(),
                                 fitted=blocks.in_prompt(blocks.default_preview()))
    lines = ["Memory blocks", *listed, "", "Stores", *reports.store_lines(insights.store_usage(memory))]
    return _reply(lines)


def _limit(memory, words: list[str]) -> dict[str, Any]:
    """``/memory limit KEY CHARS``: :func:`pi_memory.blocks.change_limit`, as ``pi-memory blocks limit``."""
    from pi_memory.blocks import change_limit

    if len(words) != 2 or not words[1].isdigit():
        return _reply([LIMIT_HELP], "warning")
    result = change_limit(memory.blocks(), words[0], int(words[1]))
    if not result.success:
        return _reply([f"refused: {result.error}"], "warning", code=result.code)
    return _reply([result.message or "ok"], code=result.code)


def _status(memory, _args: str, _data: dict) -> dict[str, Any]:
    data = insights.status_data(memory)
    drift = any(info.get("drift") for info in data["stores"].values())
    return _reply(reports.status_lines(data), "warning" if drift or data["readOnly"] else "info")


def _insights(memory, _args: str, _data: dict) -> dict[str, Any]:
    return _reply(reports.insights_lines(insights.collect(memory)))


_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»"}


def pin_action(args: str) -> tuple[str, Any]:
    """What ``/memory-pin ARGS`` asks: ``("list", None)`` for nothing or exactly ``list``, ``("clear", None)`` for
    exactly ``clear``, ``("remove", numbers)`` for ``remove`` followed by numbers only (``("add", "")``, the usage,
    for ``remove`` alone, with one other word, or with numbers and words), else ``("add", rule)``: the text after an ``add``, or
    the whole text, one pair of quotes around it dropped (``""``: the usage). A verb is one only as the whole
    command: a rule that starts with one ("Clear the build cache before the tests", "List the changed files",
    "Remove debug prints") is pinned, where it used to clear every rule, list them or print the usage."""
    text = " ".join((args or "").split())
    word, _, rest = text.partition(" ")
    if text.casefold() in ("", "list"):
        return "list", None
    if text.casefold() == "clear":
        return "clear", None
    if word.casefold() == "remove" and (len(rest.split()) < 2 or rest.split()[0].isdigit()):  # "remove x": usage
        numbers = rest.split()
        return ("remove", [int(n) for n in numbers]) if numbers and all(n.isdigit() for n in numbers) else ("add", "")
    rule = rest if word.casefold() == "add" else text
    if len(rule) >= 2 and _QUOTES.get(rule[0]) == rule[-1]:
        rule = rule[1:-1].strip()
    return "add", rule


def _pin(memory, args: str, _data: dict) -> dict[str, Any]:
    settings = memory.settings
    store = StandingStore.in_data_dir(settings.data_dir, settings.lock_timeout)
    action, value = pin_action(args)
    if action == "list":
        result = store.list()
    elif action == "remove":
        result = store.remove(*value)
    elif action == "clear":
        result = store.clear()
    elif not value:
        return _reply([PIN_HELP], "warning")
    else:
        result = store.add(value)
    return _reply(reports.pin_lines(result, settings.standing_enabled), "info" if result.success else "warning")


def _preview(memory, args: str, _data: dict) -> dict[str, Any]:
    from pi_memory.prompt import build_context

    ctx = build_context(memory, prompt=args or None)
    return _reply(reports.context_lines(ctx))


def _interview(_memory, _args: str, _data: dict) -> dict[str, Any]:
    return _reply(["A few questions to pre-fill your profile (USER.md); leave one empty to skip it."],
                  questions=[{"key": k, "question": q} for k, q, _ in INTERVIEW])


def interview_entries(answers: dict[str, str]) -> list[str]:
    """The USER.md entries for interview answers (empty answers skipped)."""
    out = []
    for key, _question, template in INTERVIEW:
        answer = " ".join(str(answers.get(key) or "").split()).rstrip(".")
        if answer:
            out.append(template.format(answer))
    return out


def save_interview(memory, answers: dict[str, str]) -> list[str]:
    """Add the answers to USER.md; the lines say what was saved or refused (the CLI twin uses it too)."""
    entries = interview_entries(answers)
    if not entries:
        return ["Nothing to save: every answer was empty."]
    from pi_memory.shown_text import shown

    lines = []
    for entry in entries:
        result = memory.store.add("user", entry)
        # a person reads this (pi's notification, the CLI): the answer redacted and escaped, as a refusal stores
        # nothing of it, and the store's reason in a person's words
        if result.success:
            lines.append(f"saved: {shown(entry)}")
        else:
            why = (result.for_person().error or "").removeprefix("Not saved: ").replace("the memory text", "the answer")
            lines.append(f"not saved ({result.code}): {shown(entry)} — {why}")
    lines.append(f"USER.md now: {memory.store.usage('user')}.")
    return lines


def _interview_save(memory, _args: str, data: dict) -> dict[str, Any]:
    answers = data.get("answers") if isinstance(data.get("answers"), dict) else {}
    lines = save_interview(memory, answers)
    return _reply(lines, "warning" if any(line.startswith("not saved") for line in lines) else "info")


def _projects(memory, _args: str, _data: dict) -> dict[str, Any]:
    return _reply(reports.projects_lines(insights.projects(memory)))


def _index_sessions(memory, _args: str, _data: dict) -> dict[str, Any]:
    from pi_memory.index import index_paths

    stats = index_paths(memory.index(), None).to_dict()
    lines = [f"Indexed sessions: {reports.index_pass_text(stats)}."]
    lines += [f"  {e}" for e in stats["errors"][:10]]
    return _reply(lines, "warning" if stats["files_failed"] else "info")


def _sync_markdown(memory, _args: str, _data: dict) -> dict[str, Any]:
    from pi_memory.index import sync_markdown
    from pi_memory.index.mirror import not_mirrored_text

    stats = sync_markdown(memory.index(), memory.settings.data_dir)
    skipped = sum(1 for s in stats.values() if s.too_large or s.unreadable)
    lines = [f"Mirrored {len(stats) - skipped} Markdown store(s) into the search index:"]
    for path, s in stats.items():
        if s.too_large:
            lines.append(f"  {not_mirrored_text(path, s.too_large)}")
        elif s.unreadable:
            lines.append(f"  {path}: cannot be read ({s.unreadable}); its entries in the index are left as they "
                         "were. Fix the file's permissions or type, then sync again.")
        else:
            lines.append(f"  {path}: {s.added} added, {s.updated} updated, {s.removed} removed, {s.kept} kept")
    return _reply(lines, "warning" if skipped else "info")


def _mem0(memory, args: str, _data: dict) -> dict[str, Any]:
    from pi_memory.integrations.pi.mem0_command import mem0

    return mem0(memory, args)


_COMMANDS = {
    "memory": _memory, "status": _status, "insights": _insights, "pin": _pin, "preview": _preview,
    "interview": _interview, "interview_save": _interview_save, "projects": _projects,
    "index_sessions": _index_sessions, "sync_markdown": _sync_markdown, "mem0": _mem0,
}
