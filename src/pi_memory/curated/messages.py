"""Texts of curated-store results: what happened, then what to do next.

Kept apart from the store logic so wording can be reviewed (and translated) in one place. A result's text is
written for the model that called a tool: it names the tools (``memory_replace``), the result's fields
(``currentEntries``) and what the model must not do ("do not repeat it"). A person reads the same result
through :func:`for_person` (``MemoryResult.for_person``, used by the CLI), which swaps those phrases for
commands and for the lists the CLI prints below the message.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pi_memory import safety
from pi_memory.curated.entries import Analysis
from pi_memory.curated.results import MemoryResult, preview
from pi_memory.terminal_text import reworded

EMPTY_OLD_TEXT = (
    "oldText is empty, so there is no way to tell which entry you mean. Nothing was changed. "
    "Pass a short piece of text copied exactly from one of the entries in currentEntries."
)


UNREADABLE = (
    f"The content has no readable text: {safety.UNREADABLE}. Nothing was saved. Retype the text, or check the "
    "encoding of what was sent."
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
    """``path`` could not be read: its data folder being a file (or under one) is said as such."""
    from pathlib import Path

    from pi_memory.storage import describe

    folder = Path(path).parent
    blocker = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if blocker is not None and not blocker.is_dir():
        what, todo = describe("not_a_folder", folder, f"{blocker} is a file, not a folder")
        return f"Cannot read {name}. {what} Nothing was changed. {todo}"
    return (
        f"Cannot read {name} at {path} ({detail}). Nothing was changed. Fix the file's permissions or type "
        "(it must be a readable text file), then retry."
    )


def io_error(name: str, folder, exc: OSError) -> dict[str, str]:
    """``code`` and ``error`` of a write the system refused: a read-only folder or file, no permission, a full disk
    are ``read_only`` in :func:`write_refused`'s words (the refusal a write checked up front gets); anything
    else ``io_error``, with the system's words."""
    from pathlib import Path

    from pi_memory.storage import ERRNO_KIND, describe, write_failure

    problem = write_failure(exc, Path(exc.filename) if exc.filename else Path(folder) / name)
    if problem is not None:
        what, todo = describe(problem.kind, problem.folder, problem.detail, file=problem.file)
        return {"code": "read_only", "error": f"Nothing was saved to {name}: {what[0].lower()}{what[1:]} "
                                              f"{_NO_RETRY}{todo}"}
    kind = ERRNO_KIND.get(exc.errno or 0)
    if kind is None:
        return {"code": "io_error", "error": (
            f"Could not read or write {name} in {folder} ({exc.strerror or exc}). Nothing was changed. Check that "
            "the file and its folder are writable and the disk has space, then retry.")}
    what, todo = describe(kind, folder)
    return {"code": "io_error", "error": f"Could not write {name}. {what} Nothing was changed. {todo}"}


_NO_RETRY = NO_RETRY = "Retrying will not help; tell the user, who can fix it: "
_NO_RETRY_END = " Retrying will not help; tell the user."


def write_refused(name: str, problem) -> dict[str, str]:
    """``code`` and ``error`` of a write refused before ``name`` was touched (``MemoryStore.write_check``): the data
    folder cannot take it (``read_only``: read-only, no permission, a full disk), or its search index cannot be
    used (``unreadable``, ``not_an_index``, ``not_a_file``), so the entry could not be kept in both."""
    from pi_memory.storage import describe

    if problem.kind in ("read_only", "permission", "disk_full"):
        what, todo = describe(problem.kind, problem.folder, problem.detail, file=getattr(problem, "file", None))
        return {"code": "read_only", "error": f"Nothing was saved to {name}: {what[0].lower()}{what[1:]} "
                                              f"{_NO_RETRY}{todo}"}
    return {"code": problem.kind, "error": f"Nothing was saved to {name}: its search index cannot be used. "
                                           f"{problem.message}{_NO_RETRY_END}"}


def not_written(subject: str, problem, for_model: bool = True, label: str = "data folder") -> str:
    """The refusal of a write checked before anything was touched, when the data folder is open for reading only
    (``problem``: :func:`pi_memory.storage.data_write_problem`): ``subject`` says what was not done ("Nothing was
    saved to block 'agent'"), then what is wrong and what to do; a model is also told that retrying will not help
    (:func:`for_person` drops that). ``label``: the role of ``problem.folder`` ("folder" for one inside the data
    folder, as :func:`pi_memory.storage.write_failure` was told)."""
    from pi_memory.storage import describe

    what, todo = describe(problem.kind, problem.folder, problem.detail, label, file=getattr(problem, "file", None))
    return f"{subject}: {what[0].lower()}{what[1:]} {_NO_RETRY if for_model else ''}{todo}"


_INDEX_FIX = {  # what a person does about a storage problem that kept a saved entry out of the search index
    "disk_full": "free some space on that disk",
    "read_only": "remount it read-write",
    "permission": "give your user write access to it",
}


def not_mirrored(name: str, exc: BaseException, folder) -> str:
    """A person's words for a write of ``name`` that was saved to its Markdown file while updating the search index
    failed (``exc``): what was saved, what was not and why (no exception class: a person reads it), and what to do.
    A storage problem (a disk that filled up between the file and the index, a folder made read-only) is said in
    :func:`pi_memory.storage.describe`'s words, whose "nothing was saved" would contradict the saved file."""
    from pi_memory.storage import describe, is_locked, storage_problem

    searches = "searches may not find the change until the index is brought up to date"
    if is_locked(exc):
        return (f"{name} was saved, but another process held the search index, so {searches} (the next pi-memory "
                "command or session does it; `pi-memory sync-markdown` does it now).")
    problem = storage_problem(exc, Path(folder))
    if problem is not None and problem.kind in _INDEX_FIX:
        what, _ = describe(problem.kind, problem.folder, problem.detail, file=problem.file)
        return (f"{name} was saved, but its search index was not updated: {what[0].lower()}{what[1:]} Searches may "
                f"not find the change until the index is updated: {_INDEX_FIX[problem.kind]}, then run `pi-memory "
                "sync-markdown`.")
    detail = " ".join(str(exc).split()) or "no reason given"
    return (f"{name} was saved, but updating its search index failed ({detail}), so {searches} (the next pi-memory "
            "command or session tries again; `pi-memory sync-markdown` does it now).")


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


def merged_note(name: str, n: int, dry_run: bool = False) -> str:
    """What a write that merged ``n`` exact duplicate entries of ``name`` says of them (a dry run: would merge)."""
    what = "1 exact duplicate entry" if n == 1 else f"{n} exact duplicate entries"
    if dry_run:
        return f"Would also merge {what} in {name} (the same text as an earlier entry; no text would be lost)."
    return f"Also merged {what} in {name} (the same text as an earlier entry; no text was lost)."


def with_merged(message: str, name: str, n: int) -> str:
    """``message`` of a write that also merged ``n`` exact duplicate entries the file held (``n`` 0: as it is)."""
    if not n:
        return message
    note = " " + merged_note(name, n)
    return message[: -len(DONE)] + note + DONE if message.endswith(DONE) else message + note


def not_placed(name: str, n: int) -> str:
    """A team server that put ``n`` added entries at the end of ``name``, not at the place the client gave."""
    what, where, them = ("1 entry was", "it belongs", "it") if n == 1 else (f"{n} entries were", "they belong", "them")
    return (f"{what} added at the end of {name}, not where {where}: that server cannot place an entry (it runs an "
            f"older pi-memory; upgrading it fixes this). Move {them} by hand if the order matters.")


def no_match(name: str, old_text: str) -> str:
    """``old_text`` is quoted with its credentials redacted (it may be a whole entry, secret and all)."""
    return (
        f"No entry in {name} contains {preview(safety.redact(old_text))!r}. Nothing was changed. Matching is exact "
        "and case-sensitive: copy a short piece of the entry you mean from currentEntries and retry."
    )


def changed_in_batch(entry_preview: str, step: int) -> str:
    """A batch's step names an entry that step ``step`` of the same batch already replaced or removed."""
    return (f"the entry it names ({entry_preview!r}) was already changed by operation {step} of this batch. Give "
            "each entry at most one replace or remove; nothing was changed.")


def ambiguous(name: str, old_text: str, count: int) -> str:
    """``old_text`` is quoted with its credentials redacted, as in :func:`no_match`."""
    return (
        f"{preview(safety.redact(old_text))!r} appears in {count} different entries of {name}, so it is unclear "
        "which one you mean. Nothing was changed. Retry with a longer piece of text found in only one of the "
        "entries in matches."
    )


def over_budget(name: str, cur: int, limit: int, longest: int, setting: str) -> str:
    """Notice for a store holding more than its limit (the limit was lowered, or text was appended outside)."""
    cause = (f" One entry alone is {longest:,} chars, more than the whole limit (text appended without a line "
             "holding only '§' joins the entry before it)." if longest > limit else "")
    return (f"{name} is over budget: it holds {cur:,} chars and its limit is {limit:,}, so nothing can be added "
            f"until it is back under the limit.{cause} Merge or shorten entries with memory_replace, delete stale "
            f"ones with memory_remove, or raise {setting} in settings; nothing is lost meanwhile.")


def full_on_add(name: str, cur: int, limit: int, needed: int, setting: str) -> str:
    if cur > limit:
        return (
            f"{name} is over budget: it uses {cur:,} of {limit:,} chars (its limit is lower than what it already "
            "holds), so no entry can be added. Nothing was saved; the file is unchanged. Make room first: merge "
            "related entries with memory_replace or delete stale ones with memory_remove (see currentEntries), or "
            f"raise {setting} in settings, then retry this add in the same turn."
        )
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


def over_limit(name: str, limit: int, cur: int, new_total: int, single, setting: str) -> str:
    """Why a write that would take ``name`` from ``cur`` to ``new_total`` chars (over ``limit``) was refused;
    ``single``: the one operation of a single call, ``None`` for a batch."""
    if single is None:
        return full_on_batch(name, new_total, limit)
    if single.content and len(single.content) > limit:
        return entry_too_long(name, len(single.content), limit)
    if single.action == "add":
        return full_on_add(name, cur, limit, new_total - cur, setting)
    return full_on_replace(name, new_total, limit)


DONE = " This change is complete; do not repeat it."

# Model phrase -> person phrase. The CLI prints `currentEntries` / `matches` as lists below the message.
_FOR_PERSON = (
    (DONE, ""),
    ("oldText is empty, so there is no way", "The text to find is empty, so there is no way"),
    ("newContent is empty, so", "The new text is empty, so"),
    ("content is empty, so", "The text is empty, so"),
    ("is shown to you only as this marker; to delete it, give its Ref as oldText to memory_remove",
     "`pi-memory read` shows its text; `pi-memory remove <target> \"Ref <its Ref>\"` deletes it"),
    ("one of the entries in currentEntries", "one of the entries (`pi-memory read` lists them)"),
    ("Its current text is in currentEntries:", "Its current text is listed below:"),
    ("from currentEntries and retry", "from the entries listed below and retry"),
    ("found in only one of the entries in matches", "found in only one of the entries listed below"),
    ("(see currentEntries)", "(see the entries listed below)"),
    (", then retry this add in the same turn", ", then add it again"),
    ("use memory_remove instead", "use `pi-memory remove` instead"),
    ("with memory_replace", "with `pi-memory replace`"),
    ("with memory_remove", "with `pi-memory remove`"),
    ("with memory_add", "with `pi-memory add`"),
    (_NO_RETRY, ""),
    (_NO_RETRY_END, ""),
    # safety.refusal_message's advice shows a model what a memory looks like; a person rewords their own text
    (' Rephrase it as a plain fact (e.g. "User prefers X") without that wording.',
     " Reword it as a plain note, without that wording."),
    # a team project server's answers (:mod:`.team_answers`): the person is the user; who can act runs the server
    ("; if the server keeps not answering, tell the user.", "; if the server keeps not answering, tell whoever runs it."),
    ("; tell the user if this repeats: the server", "; if this repeats, the server"),
    (" or a broken one: tell the user.", " or a broken one: tell whoever runs it."),
    ("memory_read with target 'project' asks again", "`pi-memory read project` asks again"),
    ("(memory_read, or `pi-memory read project`)", "(`pi-memory read project`)"),
    ("a proxy or a login page: tell the user to check teamProjectStore.url.",
     "a proxy or a login page: check teamProjectStore.url."),
    ("Tell the user: the server may be a different program.",
     "The server may be a different program: check teamProjectStore.url, and tell whoever runs the server."),
    ("A start waits only this long", "A session start waits only this long"),
    ("and a start does not wait for it again", "and a session start does not wait for it again"),
)


def for_person(text: str | None) -> str | None:
    """``text`` (a result's message or error, written for a model) in words for a person at a terminal."""
    return reworded(text, _FOR_PERSON)


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
    return text + DONE


_DRIFT_CAUSE = {
    "not_utf8": "is not valid UTF-8 text",
    "round_trip": "has a malformed entry separator",
    "unreadable": "cannot be read",
    "plain_markdown": "looks like hand-written Markdown notes with no '§' separators between entries",
}


def drift_notice(name: str, target: str, analysis: Analysis, path) -> str:
    cause = _DRIFT_CAUSE.get(analysis.drift or "", "was changed outside pi-memory")
    return f"{name} {cause} ({analysis.detail}). Changes through pi-memory are refused until it is fixed. " + remedy(
        name, target, analysis, path
    )


def _split_command(target: str, path, apply: bool = False) -> str:
    """``pi-memory split TARGET --dir ROOT`` for the store file at ``path``: with the data root it was read
    from, so the command acts on this store and not on the default one."""
    path = Path(path)
    root = path.parents[2] if target == "project" else path.parent  # projects/<folder>/MEMORY.md
    return f"pi-memory split {target} --dir {shlex.quote(str(root))}" + (" --apply" if apply else "")


def remedy(name: str, target: str, analysis: Analysis, path) -> str:
    """What to do about ``analysis.drift`` of the store file at ``path`` (commands spelled out in full)."""
    if analysis.drift == "plain_markdown":
        return (
            f"Run `{_split_command(target, path)}` to see it split into entries, then "
            f"`{_split_command(target, path, apply=True)}` to save them (the original is kept as a .bak file)."
        )
    if analysis.drift == "not_utf8":
        quoted = shlex.quote(str(path))
        encoding = analysis.encoding or "ISO-8859-1"
        return (
            f"It looks like {encoding} text: convert it with `iconv -f {encoding} -t UTF-8 {quoted} > {quoted}.utf8 "
            f"&& mv {quoted}.utf8 {quoted}` (check the result; name another encoding if the text looks wrong), or "
            f"restore an earlier copy (a {path.name}.bak.* file beside it, if a refused write made one), then retry."
        )
    return (
        f"Open the backup, re-add anything missing with memory_add, and rewrite {name} as entries separated by "
        "lines holding only '§' (or delete it to start empty). `pi-memory status` shows when it is clean again."
    )


def drift_error(name: str, target: str, analysis: Analysis, bak, path) -> str:
    cause = _DRIFT_CAUSE.get(analysis.drift or "", "was changed outside pi-memory")
    return (
        f"Refusing to change {name}: the file on disk {cause} ({analysis.detail}), so writing it back could lose "
        f"text. Nothing was written; the file as found was saved to {bak}. " + remedy(name, target, analysis, path)
    )


def plain_markdown_notice(name: str, target: str, path) -> str:
    return (
        f"{name} has no '§' separators, so all of it counts as one entry. If it holds separate notes, "
        + remedy(name, target, Analysis(entries=[], drift="plain_markdown"), path)
    )


def retry_limit(target: str, name: str, failures: int) -> MemoryResult:
    """The loop guard's answer to a call that already failed ``failures`` times in this turn (:mod:`.retry_guard`):
    the same call again is not carried out; a changed one is."""
    return MemoryResult(
        success=False,
        code="retry_limit",
        target=target,
        done=True,
        error=(
            f"Stop: this same call for {name} already failed {failures} times in this turn, so it was not run "
            "again. Do not repeat it. Read the earlier error: if the call can be fixed (other text for oldText, "
            "a shorter entry, valid arguments), make the changed call; other memory calls still work. Otherwise "
            "leave memory as it is and carry on with your reply to the user."
        ),
    )
