"""Texts of curated-store results, written for a person and for an LLM: what happened, then what to do next.

Kept apart from the store logic so wording can be reviewed (and translated) in one place.
"""

from __future__ import annotations

from pi_memory.curated.entries import Analysis
from pi_memory.curated.results import MemoryResult, preview

EMPTY_OLD_TEXT = (
    "oldText is empty, so there is no way to tell which entry you mean. Nothing was changed. "
    "Pass a short piece of text copied exactly from one of the entries in currentEntries."
)


def empty_content(action: str) -> str:
    field = "content" if action == "add" else "newContent"
    hint = "" if action == "add" else " To delete an entry use memory_remove instead."
    return f"{field} is empty, so there is nothing to save. Nothing was changed.{hint}"


def delimiter(name: str) -> str:
    return (
        f"The content has a line holding only '§', which {name} uses to separate entries, so it would be read "
        "back as two entries. Nothing was saved. Drop that line (a '§' inside a sentence is fine), or save the "
        "parts as separate entries."
    )


_TARGET_HELP = {
    "memory": "'memory' (your own notes)",
    "user": "'user' (facts about the user)",
    "project": "'project' (notes about this repository)",
    "failure": "'failure' (lessons from mistakes and corrections)",
}


CONTROL_CHARS = (
    "The content holds control characters (terminal escape codes or similar), which can hide text from a "
    "person reading memory. Nothing was saved. Remove them and save plain text."
)


def changed_on_disk(name: str) -> str:
    return (
        f"That entry of {name} changed on disk since this session last saw it (another session, a script or an "
        "editor wrote to it), so replacing or removing it could lose that text. Nothing was changed. Its current "
        "text is in currentEntries: include anything worth keeping and retry."
    )


def entry_too_long(name: str, length: int, limit: int) -> str:
    return (
        f"This entry is {length:,} chars, longer than {name}'s whole limit of {limit:,}, so it can never fit. "
        "Nothing was saved. Save a short summary of it instead (one fact per entry)."
    )


def unreadable(name: str, path, detail: str) -> str:
    return (
        f"Cannot read {name} at {path} ({detail}). Nothing was changed. Fix the file's permissions or type "
        "(it must be a readable text file), then retry."
    )


def io_error(name: str, folder, exc: OSError) -> str:
    """A write the system refused (read-only folder, no permission, full disk...): which, and what to do."""
    from pi_memory.storage import ERRNO_KIND, describe

    kind = ERRNO_KIND.get(exc.errno or 0)
    if kind is None:
        return (f"Could not read or write {name} in {folder} ({type(exc).__name__}: {exc}). Nothing was changed. "
                "Check that the file and its folder are writable and the disk has space, then retry.")
    what, todo = describe(kind, folder)
    return f"Could not write {name}. {what} Nothing was changed. {todo}"


def invalid_target(target: object, available: tuple[str, ...] = ("memory", "user")) -> str:
    choices = ", ".join(_TARGET_HELP[t] for t in available)
    extra = ""
    if target == "project" and "project" not in available:
        extra = " There is no project here: start the agent inside a project folder to use 'project'."
    return f"Unknown target {target!r}. Use {choices}.{extra}"


def already_saved(name: str) -> str:
    return f"This exact entry is already in {name}; nothing was written."


def merged_duplicate(name: str) -> str:
    return f"The new text was already a separate entry in {name}, so the two were merged into one."


def no_match(name: str, old_text: str) -> str:
    return (
        f"No entry in {name} contains {preview(old_text)!r}. Nothing was changed. Matching is exact and "
        "case-sensitive: copy a short piece of the entry you mean from currentEntries and retry."
    )


def ambiguous(name: str, old_text: str, count: int) -> str:
    return (
        f"{preview(old_text)!r} appears in {count} different entries of {name}, so it is unclear which one you "
        "mean. Nothing was changed. Retry with a longer piece of text found in only one of the entries in matches."
    )


def full_on_add(name: str, cur: int, limit: int, needed: int) -> str:
    return (
        f"{name} is full: it uses {cur:,} of {limit:,} chars and this entry needs {needed:,} more (separator "
        "included). Nothing was saved. Make room first: merge related entries with memory_replace or delete "
        "stale ones with memory_remove (see currentEntries), then retry this add in the same turn."
    )


def full_on_replace(name: str, new_total: int, limit: int) -> str:
    return (
        f"After this replacement {name} would use {new_total:,} of {limit:,} chars, over its limit. Nothing was "
        "changed. Shorten the new text, or remove stale entries first (see currentEntries), then retry."
    )


def full_on_batch(name: str, new_total: int, limit: int) -> str:
    return (
        f"After all operations {name} would use {new_total:,} of {limit:,} chars, over its limit. No operation "
        "was applied (a batch is all or nothing). Shorten or drop some additions, then retry."
    )


def success(ops: list, name: str, notes: list[str], single: bool) -> str:
    if single and notes:
        return notes[0]
    if single:
        verb = {"add": "Saved to", "replace": "Replaced the entry in", "remove": "Removed the entry from"}[ops[0].action]
        text = f"{verb} {name}."
    else:
        text = f"Applied {len(ops)} operation(s) to {name}."
        if notes:
            text += " " + " ".join(dict.fromkeys(notes))
    return text + " This change is complete; do not repeat it."


_DRIFT_CAUSE = {
    "not_utf8": "is not valid UTF-8 text",
    "round_trip": "has a malformed entry separator",
    "oversized_entry": "has an entry longer than the whole store's limit (text appended by a shell, a patch tool "
    "or another program without the '§' separators, or a limit lowered below an existing entry)",
    "unreadable": "cannot be read",
    "plain_markdown": "looks like hand-written Markdown notes with no '§' separators between entries",
}


def drift_notice(name: str, target: str, analysis: Analysis) -> str:
    cause = _DRIFT_CAUSE.get(analysis.drift or "", "was changed outside pi-memory")
    return f"{name} {cause} ({analysis.detail}). Changes through pi-memory are refused until it is fixed. " + remedy(
        name, target, analysis.drift
    )


def remedy(name: str, target: str, drift: str | None) -> str:
    if drift == "plain_markdown":
        return (
            f"Run `pi-memory split {target}` to see it split into entries, then `pi-memory split {target} --apply` "
            "to save them (the original is kept as a .bak file)."
        )
    if drift == "not_utf8":
        return (
            f"Convert {name} to UTF-8 (for example `iconv -f GBK -t UTF-8`) or restore it from the backup, then retry."
        )
    return (
        f"Open the backup, re-add anything missing with memory_add, and rewrite {name} as entries separated by "
        "lines holding only '§' (or delete it to start empty). `pi-memory status` shows when it is clean again."
    )


def drift_error(name: str, target: str, analysis: Analysis, bak) -> str:
    cause = _DRIFT_CAUSE.get(analysis.drift or "", "was changed outside pi-memory")
    return (
        f"Refusing to change {name}: the file on disk {cause} ({analysis.detail}), so writing it back could lose "
        f"text. Nothing was written; the file as found was saved to {bak}. " + remedy(name, target, analysis.drift)
    )


def plain_markdown_notice(name: str, target: str) -> str:
    return (
        f"{name} has no '§' separators, so all of it counts as one entry. If it holds separate notes, "
        + remedy(name, target, "plain_markdown")
    )


def retry_limit(target: str, name: str, failures: int) -> MemoryResult:
    return MemoryResult(
        success=False,
        code="retry_limit",
        target=target,
        done=True,
        error=(
            f"Stop: {failures} changes to {name} already failed in this turn. Do not call the memory tools for "
            f"'{target}' again in this turn. Leave memory as it is and carry on with your reply to the user; "
            "it can be tidied in a later turn."
        ),
    )
