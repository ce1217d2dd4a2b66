"""Texts a person reads, shared by the CLI and pi's commands (plain lines, no markup, no model wording).

Each ``*_lines`` function turns a library result into lines; the CLI prints them, the pi bridge sends them to
pi's TUI. Data for them comes from the same library calls in both hosts (:mod:`pi_memory.insights`,
:mod:`pi_memory.standing`, :mod:`pi_memory.blocks`, :mod:`pi_memory.prompt`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pi_memory.blocks import MAX_DESCRIPTION, Block, Skipped
from pi_memory.blocks.budget import Fitted, person_warning
from pi_memory.curated.entries import printable
from pi_memory.curated.messages import for_person
from pi_memory.index import describe_repair
from pi_memory.shown_text import shown
from pi_memory.standing import (
    LISTED_RULES,
    MAX_CHARS,
    MAX_RULES,
    OVER_CHARS,
    OVER_COUNT,
    PinResult,
    duplicate_words,
    reach_data,
)

BAR_WIDTH = 20


def usage_bar(chars: int, limit: int, width: int = BAR_WIDTH) -> str:
    """``[██████░░░░]`` for a share of a limit (full at or past it)."""
    filled = min(width, round(width * chars / limit)) if limit > 0 else width
    return "[" + "█" * filled + "░" * (width - filled) + "]"


def one_line(text: str, width: int = 120) -> str:
    flat = printable(" ".join(text.split()))
    return flat[:width] + "…" if len(flat) > width else flat


def redacted_line(text: str) -> str | None:
    """The line after a semantic memory was stored from ``text`` (``pi-memory semantic add``, pi's ``/mem0 add``)
    when ``text`` held credentials: they were stored redacted, never refused, so say it, lest someone believe the
    value was kept; ``None`` when it held none."""
    from pi_memory import safety

    found = sorted({span.id for span in safety.secret_spans(text)})
    if not found:
        return None
    return (f"Credentials were replaced by [REDACTED:…] and not stored ({', '.join(found)}); keep where a secret "
            "lives in memory, never its value.")


def more_rules_line(more: int, path: Path | str) -> str:
    """The line after the first :data:`~pi_memory.standing.LISTED_RULES` rules of a listing (``pin list``,
    ``insights``) when ``STANDING.md`` holds ``more`` besides."""
    return (f"  … and {more:,} more rule(s) in {path}, not listed: the agent is given at most {MAX_RULES} rules, "
            "so none of these reach it. Remove them from the file.")


def rule_lines(shown_rules: list[str], reach: list[dict], file_name: str) -> list[str]:
    """The listed rules (already shown: redacted, escaped), numbered, each followed by what the agent gets of it
    when that is not the rule as shown (``reach``: :func:`pi_memory.standing.reach_data`'s rows, the reading the
    prompt uses): withheld, a credential redacted, a repeat of an earlier rule, past a cap. ``pin list`` and
    ``insights`` both list rules with it. Removing rules renumbers the ones after them, so the duplicates are
    named in one ``pin remove`` command (highest number first), never one command per rule."""
    lines = []
    for text, row in zip(shown_rules, reach, strict=True):
        n, why = row["rule"], row["why"]
        lines.append(f"  {n}. {text}")
        if why in (OVER_CHARS, OVER_COUNT):
            cap = f"{MAX_CHARS:,} characters" if why == OVER_CHARS else f"{MAX_RULES} rules"
            lines.append(f"     not given to the agent: past the cap of {cap} for all the rules together")
        if row["threats"]:
            lines.append(f"     withheld from the agent: it matches the threat pattern(s) {', '.join(row['threats'])} "
                         "(it reads like an instruction to override the agent's safeguards, hide text or send "
                         f"data away); rephrase it in {file_name}, or pin remove {n}")
        if row["credentials"]:
            lines.append(f"     credential redacted ({', '.join(row['credentials'])})"
                         + (": the agent gets the rule as shown here" if why is None else "")
                         + "; write where the secret lives instead")
        if of := row["duplicateOf"]:
            lines.append("     " + duplicate_words(of, why, reach[of - 1]["why"]))
    repeats = sorted((row["rule"] for row in reach if row["duplicateOf"]), reverse=True)
    if len(repeats) == 1:
        lines.append(f"  To remove the duplicate: pin remove {repeats[0]}")
    elif repeats:
        lines.append(f"  To remove the {len(repeats)} duplicates, all in one command (removing a rule renumbers the "
                     f"rules after it): pin remove {' '.join(map(str, repeats))}")
    hinted = sorted({row["rule"] for row in reach if row["threats"]} | set(repeats), reverse=True)
    if len(hinted) > len(repeats) and len(hinted) > 1:  # per-rule hints (withheld) beside others: say it once
        lines.append("  Removing a rule renumbers the rules after it: to remove several of the rules marked above, "
                     f"name them in one command (pin remove {' '.join(map(str, hinted))} removes them all), or run "
                     "pin list again between removals.")
    return lines


def pin_lines(result: PinResult, enabled: bool = True) -> list[str]:
    """A pin command's outcome and, when it went through, the rules after it: the first
    :data:`~pi_memory.standing.LISTED_RULES` (the agent is given no more) with their notes (:func:`rule_lines`),
    and how many more the file holds. A refusal is its one line: the rules did not change (``pin list`` shows
    them)."""
    if not result.success:
        return [f"refused: {shown(result.error or '', MAX_CHARS)}"]
    lines = [shown(result.message, MAX_CHARS)] if result.message else []
    rules = result.rules
    if rules:
        lines.append(f"Standing instructions ({len(rules):,}/{MAX_RULES} rules, "
                     f"{result.chars:,}/{MAX_CHARS:,} chars):")
        listed = [shown(rule, MAX_CHARS) for rule in rules[:LISTED_RULES]]
        lines += rule_lines(listed, reach_data(rules)["reach"], result.path.name)
        if len(rules) > LISTED_RULES:
            lines.append(more_rules_line(len(rules) - LISTED_RULES, result.path))
    else:
        lines.append(f"No standing instructions pinned ({MAX_RULES} rules / {MAX_CHARS:,} chars available).")
    lines += [f"warning: {p}" for p in result.problems]
    if not enabled:
        lines.append("note: standingInstructionsEnabled is false, so these rules are not injected.")
    return lines


def block_lines(blocks: list[Block], preview: int = 120, withheld: list[Path] | tuple = (),
                skipped: list[Skipped] | tuple = (), fitted: Fitted | None = None) -> list[str]:
    """Every block with a usage bar, its description and a preview; ``withheld``: the block files of an
    untrusted project (``BlockStore.withheld``), named with what makes them count; ``skipped``: block files
    not read (``BlockStore.skipped``: links leading out of their folder, frontmatter refused), each with a
    warning; ``fitted``: which blocks the prompt's budget left out (``BlockStore.in_prompt``), warned about and
    marked."""
    lines = [*withheld_lines(withheld), *(f"warning: {printable(s.message)}" for s in skipped)]
    if fitted is not None and fitted.left_out:
        lines.append(f"warning: {printable(person_warning(fitted))}")
    if skipped or fitted is not None and fitted.left_out:
        lines.append("")
    left_out = {(b.scope, b.key) for b in fitted.left_out} if fitted is not None else set()
    if not blocks:
        return [*lines, "No memory blocks yet; they are created at the next session start (user, agent), or "
                "with pi-memory blocks create KEY."]
    for b in blocks:
        over = "  OVER LIMIT" if b.chars > b.limit else ""
        hidden = "  (hidden by the project block)" if b.shadowed else ""
        pending = "  (default: no file yet; the next session start creates it)" if b.default else ""
        out = "  (LEFT OUT of the prompt: over the blocks' budget)" if (b.scope, b.key) in left_out and \
            not b.shadowed else ""
        lines.append(f"{b.key} ({b.scope}) {usage_bar(b.chars, b.limit)} {b.usage}{over}{hidden}{pending}{out}")
        if b.description:
            lines.append(f"  {one_line(shown(b.description, MAX_DESCRIPTION))}")
        # only a prefix is redacted and flattened: a hand-made 10 MB block took a second here
        lines.append(f"  {one_line(shown(b.value, max(16 * preview, 2048)), preview) or '(empty)'}")
        lines += [f"  warning: {p}" for p in b.problems]
    return lines


def withheld_lines(files: list[Path] | tuple) -> list[str]:
    """The note on an untrusted project's block files (none: no lines)."""
    if not files:
        return []
    folder = files[0].parent
    names = ", ".join(printable(p.stem) for p in files)
    return [f"Not read: {len(files)} project block(s) in {folder} ({names}). This project is not trusted, so "
            "they go into no prompt. If you trust this repository's files, run `pi-memory trust "
            f"{folder.parent.parent}`.", ""]


def store_lines(stores: dict[str, dict[str, Any]]) -> list[str]:
    """The curated stores' usage (``insights.store_usage``), one line each with a bar."""
    lines = []
    for info in stores.values():
        health = "  COULD NOT BE READ" if info.get("problem") else f"  DRIFT: {info['drift']}" if info.get("drift") else ""
        count = info["entryCount"]
        lines.append(f"{info['name']} {usage_bar(info['chars'], info['limit'])} {info['usage']}, "
                     f"{count} {'entry' if count == 1 else 'entries'}{health}")
        if info.get("problem"):
            lines.append(f"  {info['problem']}")
    return lines


def status_lines(status: dict[str, Any]) -> list[str]:
    """``pi-memory status`` / ``/memory status``: data root, settings, and each store's counts and health."""
    state = " (its search index cannot be used)" if status.get("indexProblem") else \
        " (read-only)" if status.get("readOnly") else ""
    lines = [f"data dir: {status['dataDir']}{state}"]
    if status.get("readOnlyReason"):
        lines.append(f"  {status['readOnlyReason']}")
    lines += [f"settings: {', '.join(status['settings']) or 'defaults'}",
              f"prompt mode: {status.get('promptMode', 'snapshot')}"]
    for info in status["stores"].values():
        count = info["entryCount"] or 0
        withheld = info.get("withheld") or 0
        health = ("could not be read" if info.get("problem") else f"drift: {info['drift']}" if info.get("drift") else
                  "OVER BUDGET" if info.get("overBudget") else
                  f"{withheld} {'entry' if withheld == 1 else 'entries'} withheld from the prompt (see "
                  "`pi-memory read`)" if withheld else "ok")
        lines.append(f"{info['name']}: {count} {'entry' if count == 1 else 'entries'}, {info['usage']} — {health}")
        if info.get("problem"):
            lines.append(f"  {info['problem']}")
        if info.get("notice"):
            lines.append(f"  {for_person(info['notice'])}")
        if info.get("notMirrored"):
            from pi_memory.index.mirror import not_mirrored_text

            lines.append(f"  {not_mirrored_text(info['name'], info['notMirrored'], info.get('limit'))}")
    if status.get("indexRepair"):
        lines.append(describe_repair(status["indexRepair"]))
    if status.get("messagesNotSearchable"):
        lines.append(f"search index: {status['messagesNotSearchable']:,} older messages of past sessions are not "
                     "searchable yet: they come back over the next indexing passes (`pi-memory index-sessions` "
                     "brings them all back now).")
    if status.get("indexCheck"):
        lines.append(index_check_line(status["indexCheck"]))
    lines += [f"warning: {w}" for w in status.get("warnings", [])]
    lines += [f"warning: {printable(s['message'])}" for s in status.get("skippedBlocks", [])]
    if status.get("blocksLeftOut"):
        lines.append(f"warning: {printable(status['blocksLeftOut']['message'])}")
    return lines


def index_check_line(check: dict[str, Any]) -> str:
    """``pi-memory status --check``: what the page-by-page check of the index found
    (:meth:`pi_memory.index.integrity.IntegrityReport.to_dict`)."""
    if not check["ran"]:
        return f"index check: not run ({check['detail']})"
    read = f"{check['sizeBytes'] / 1_048_576:,.1f} MB read in {check['seconds']:.2f} s"
    if check["ok"]:
        return f"index check: ok ({read})"
    found = [x.strip() for x in check["detail"].split("\n") if x.strip() and not x.startswith("*** in database")]
    more = f" and {len(found) - 1} more finding{'s' if len(found) > 2 else ''}" if len(found) > 1 else ""
    return (f"index check: DAMAGED ({found[0] if found else check['detail']}{more}; {read}). `pi-memory reindex` "
            "sets the damaged file aside, copies back what it still holds (semantic memories first) and rebuilds "
            "the rest from the Markdown stores and session files.")


def context_lines(ctx: Any, full: bool = True) -> list[str]:
    """A :class:`pi_memory.prompt.SessionContext` part by part, with token estimates."""
    labels = {"memory": "memory", "blocks": "memory blocks", "standing": "standing instructions",
              "recall": "recall (first user-channel message)"}
    data = ctx.to_dict()
    lines = [f"Prompt mode: {ctx.mode}. The system prompt gets {len(ctx.system_prompt):,} chars "
             f"(~{data['systemTokens']:,} tokens) from pi-memory."]
    for part in ctx.parts:
        where = "system prompt" if part.channel == "system" else "user message"
        when = {"session": "frozen per session", "run": "rebuilt every run", "prompt": "per prompt"}[part.refresh]
        lines.append("")
        lines.append(f"── {labels.get(part.name, part.name)} · {where}, {when} · ~{part.tokens:,} tokens"
                     + (f" · {part.note}" if part.note else ""))
        if part.text and full:
            lines += part.text.splitlines()
        elif not part.text:
            lines.append("(nothing)")
    return lines


def insights_lines(data: dict[str, Any]) -> list[str]:
    """Everything stored (``insights.collect``): curated entries, blocks, standing rules, counts, recalls."""
    lines = ["Memory insights", ""]
    for info in data["stores"].values():
        lines.append(f"{info['name']} — {info['usage']}")
        lines += [f"  {i}. {one_line(e, 160)}" for i, e in enumerate(info["entries"], 1)] or ["  (empty)"]
        lines.append("")
    lines.append("Memory blocks")
    lines += [f"  {b['key']} ({b['scope']}) {b['usage']}: {one_line(b['value'], 160) or '(empty)'}"
              for b in data["blocks"]] or ["  (none)"]
    lines.append("")
    standing = data["standingInstructions"]
    lines.append(f"Standing instructions ({standing['count']:,}/{MAX_RULES})")
    if data["standing"]:
        listed = [one_line(r, 160) for r in data["standing"]]
        lines += rule_lines(listed, standing["reach"], Path(standing["file"]).name)
    else:
        lines.append("  (none)")
    if standing["given"] < len(data["standing"]):
        lines.append(f"  The agent is given {standing['given']:,} of the {standing['count']:,} rules (the notes "
                     "above say why not the others).")
    if standing.get("more"):
        lines.append(more_rules_line(standing["more"], standing["file"]))
    lines.append("")
    idx = data.get("index") or {}
    if idx:
        lines.append(f"Search index: {idx['sessions']:,} sessions, {idx['messages']:,} messages, "
                     f"{idx['memories']:,} memories ({idx['extended']:,} beyond the Markdown stores)")
    if data.get("semantic") is not None:
        lines.append(f"Semantic memories (this scope): {data['semantic']:,} active")
    recalled = data.get("recalled") or []
    if recalled:
        lines.append("")
        lines.append("Most recalled by memory_search")
        lines += [f"  {r['hits']}× {one_line(r['content'], 140)} (last {r['lastUsed']})" for r in recalled]
    elif idx:
        lines.append("No entry has been recalled by memory_search yet.")
    return lines


def projects_lines(projects: list[dict[str, Any]]) -> list[str]:
    """``/memory-switch-project``: every project store with its entry count; the current one marked."""
    if not projects:
        return ["No project memories yet. Start the agent inside a git repository and save with target "
                "'project'."]
    lines = [f"{len(projects)} project memory store(s):"]
    for p in projects:
        mark = "* " if p["current"] else "  "
        lines.append(f"{mark}{p['name']} — {p['entryCount']} {'entry' if p['entryCount'] == 1 else 'entries'}, "
                     f"{p['usage']}  ({p['folder']})")
    if any(p["current"] for p in projects):
        lines.append("* = this session's project (project memory follows the folder pi runs in).")
    return lines


def size_text(n: int) -> str:
    """A byte count for a person: ``512 bytes``, ``617 kB``, ``12.4 MB``, ``1.20 GB`` (decimal units)."""
    if n < 1000:
        return f"{n} byte{'' if n == 1 else 's'}"
    if n < 1_000_000:
        return f"{n / 1000:.0f} kB" if n >= 10_000 else f"{n / 1000:.1f} kB"
    if n < 1_000_000_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e9:.2f} GB"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 message``, ``2 messages`` (``plural``: when not ``noun + "s"``)."""
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"


def index_pass_text(stats: dict[str, Any]) -> str:
    """One index pass (:meth:`pi_memory.index.IndexStats.to_dict`) in a sentence: ``3 files: 1 new, 2 appended,
    0 rewritten, 0 unchanged, 0 failed; 1 message added, 12.4 kB in 0.05 s``."""
    return (f"{counted(stats['files_seen'], 'file')}: {stats['files_new']} new, {stats['files_appended']} appended, "
            f"{stats['files_replaced']} rewritten, {stats['files_unchanged']} unchanged, {stats['files_failed']} "
            f"failed; {counted(stats['messages_added'], 'message')} added, {size_text(stats['bytes_read'])} in "
            f"{stats['seconds']:.2f} s")
