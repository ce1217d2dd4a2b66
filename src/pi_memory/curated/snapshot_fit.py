"""The frozen snapshot cut to a host's limit on one injected text, each store keeping its start and a note the model
reads.

Claude Code keeps one hook's context whole only up to 10,000 characters; a longer one reaches the model as a short
preview and a file path, which the model may never open. A snapshot that large (character limits raised far above
the defaults, a hand-grown store) was logged and sent as it was. :func:`fit_snapshot` cuts it to the limit instead:
the fence, the preamble and every store's header stay, each store keeps as much of its start as its fair share of
the room allows (a short store whole, the longer ones cut at a line break), and a cut store ends with a note saying
how much of it was left out and that the ``memory_read`` tool reads it whole. The host tells the person (the hooks:
``systemMessage``; ``pi-memory status``).
"""

from __future__ import annotations

from collections.abc import Callable

from pi_memory.curated.entries import DELIMITER
from pi_memory.curated.snapshot import CLOSE_TAG, OPEN_TAG, RULE

SEPARATOR = f"\n\n{RULE}\n"


def cut_note(left: int, cap: int, what: str = "store", tool: str = "the memory_read tool") -> str:
    """The line that ends a store (or a text) cut to fit (read by the model)."""
    return (f"[… {left:,} more characters of this {what} are not shown here: the host keeps at most {cap:,} "
            f"characters of this text. Read the whole {what} with {tool} before relying on what is missing.]")


def fit_snapshot(text: str, cap: int, length: Callable[[str], int] = len, limit: int | None = None
                 ) -> tuple[str, int]:
    """``text`` (a rendered snapshot, or any text) within ``cap`` as ``length`` counts it, and how many characters
    were left out (0: it fitted as it was). ``limit``: the host's limit the notes name (default ``cap``; less
    room is left when other text follows the snapshot)."""
    if length(text) <= cap:
        return text, 0
    said = cap if limit is None else limit
    if text.startswith(OPEN_TAG) and text.endswith(CLOSE_TAG):
        head, *blocks = text[len(OPEN_TAG):-len(CLOSE_TAG)].split(SEPARATOR)
        titled = [b.split(f"\n{RULE}\n", 1) for b in blocks]
        if blocks and all(len(t) == 2 for t in titled):
            fitted = _fit_blocks(head, [(t[0], t[1]) for t in titled], cap, length, said)
            if fitted is not None:
                return fitted
    return _fit_plain(text, cap, length, said)


def _fit_blocks(head: str, blocks: list[tuple[str, str]], cap: int, length, said: int) -> tuple[str, int] | None:
    """The snapshot of ``blocks`` (title, content) after ``head``, each content cut to a fair share of the room,
    and how many characters of the stores were left out."""
    def build(contents: list[str]) -> str:
        joined = "".join(f"{SEPARATOR}{title}\n{RULE}\n{content}" for (title, _), content in zip(blocks, contents,
                                                                                                  strict=True))
        return f"{OPEN_TAG}{head}{joined}{CLOSE_TAG}"

    sizes = [length(content) for _, content in blocks]
    room = cap - length(build([""] * len(blocks)))
    for _ in range(6):  # the notes' own length depends on the numbers in them: shrink until it fits
        if room <= 0:
            return None
        shares = _shares(sizes, room)
        contents, left = [], 0
        for (_, content), share in zip(blocks, shares, strict=True):
            if length(content) <= share:
                contents.append(content)
                continue
            core = content.rstrip("\n")  # the last store's line break before the closing tag stays
            end = content[len(core):]
            kept = _cut(core, max(0, share - length(cut_note(len(core), said) + end) - 1), length)
            note = cut_note(len(core) - len(kept), said)  # no longer than the one it was sized with
            contents.append(f"{kept}\n{note}{end}" if kept else note + end)
            left += len(core) - len(kept)
        fitted = build(contents)
        over = length(fitted) - cap
        if over <= 0:
            return fitted, left
        room -= over
    return None


def _shares(sizes: list[int], room: int) -> list[int]:
    """``room`` shared fairly: a store needing less than an equal share gets what it needs, the rest is shared by
    the others (water-filling)."""
    shares = [0] * len(sizes)
    left, pending = room, sorted(range(len(sizes)), key=lambda i: sizes[i])
    while pending:
        equal = left // len(pending)
        i = pending.pop(0)
        shares[i] = min(sizes[i], equal)
        left -= shares[i]
    return shares


def _cut(text: str, units: int, length) -> str:
    """The start of ``text`` within ``units``: its whole entries (up to the last delimiter that fits), else its
    whole lines, else as many characters as fit."""
    if units <= 0:
        return ""
    kept = text[:units]
    while kept and length(kept) > units:
        kept = kept[: max(0, len(kept) - (length(kept) - units))]
    if len(kept) < len(text):
        entry, line = kept.rfind(DELIMITER), kept.rfind("\n")
        kept = kept[:entry] if entry > 0 else kept[:line] if line > 0 else kept
    return kept.rstrip()


def _fit_plain(text: str, cap: int, length, said: int) -> tuple[str, int]:
    """Not a snapshot (a policy text, a host's other text): its start, and the note."""
    def note(left: int) -> str:
        return cut_note(left, said, "text", "the memory tools")

    kept = _cut(text, cap - length(note(len(text))) - 1, length)
    left = len(text) - len(kept)
    return f"{kept}\n{note(left)}", left
