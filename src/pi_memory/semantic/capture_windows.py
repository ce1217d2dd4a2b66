"""Long turns read whole: the turn cut into windows that the extraction step reads one call each, within a
token budget.

A 120,000-character turn with ten topics used to be clipped to its first 4,000 and last 2,000 characters per
side, so most of its facts were never seen. :func:`plan` cuts the turn instead:

* a turn of at most ``window_chars`` characters (both sides, default :data:`WINDOW_CHARS`, about 6,000 tokens)
  is one window, as before;
* a longer one is cut into windows of at most ``window_chars`` characters, user side first, each cut at the
  last paragraph break, else line break, else sentence end, else space in the window's last fifth (a hard cut
  only when there is none). A window holding only the assistant side opens with the first
  :data:`CONTEXT_CHARS` characters of the user's message, marked as context, so the model knows what was asked;
* windows are read in order while their estimated input (prompt plus window,
  :func:`pi_memory.retrieval.engine.estimate_tokens`) fits in what is left of ``max_input_tokens`` (setting
  ``captureMaxInputTokens``, default :data:`DEFAULT_MAX_INPUT_TOKENS`: a 120,000-character English turn is
  read whole). With a budget smaller than one window, windows shrink (to no less than
  :data:`MIN_WINDOW_CHARS`), and the first window is always read, so a turn never goes entirely unread.
  What does not fit is left unread and said: :class:`Plan` ``unread_chars`` and ``unread_windows`` go into
  the capture report, its message, the log and the index's job outcomes (``pi-memory semantic status``).

The budget counts the extraction calls, which read the turn; the decision calls that follow read only the
extracted facts and their neighbours (at most :data:`~pi_memory.semantic.capture.MAX_FACTS` facts per window).
"""

from __future__ import annotations

from dataclasses import dataclass, field

WINDOW_CHARS = 24_000
MIN_WINDOW_CHARS = 2_000
CONTEXT_CHARS = 600
DEFAULT_MAX_INPUT_TOKENS = 40_000
_BREAKS = ("\n\n", "\n", ". ", "。", " ")


@dataclass
class Window:
    """One extraction call's conversation text; ``chars``: characters of the turn it covers."""

    text: str
    chars: int


@dataclass
class Plan:
    """The windows to read (in order) and what was left out: ``unread_chars`` characters in
    ``unread_windows`` windows; ``total_chars``: the turn's length (both sides)."""

    windows: list[Window] = field(default_factory=list)
    total_chars: int = 0
    unread_chars: int = 0
    unread_windows: int = 0

    @property
    def parts(self) -> int:
        return len(self.windows) + self.unread_windows


def split_text(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters, cut at a natural break (module docstring)."""
    pieces: list[str] = []
    rest = text
    while len(rest) > size:
        cut = -1
        for mark in _BREAKS:
            at = rest.rfind(mark, size * 4 // 5, size)
            if at > 0:
                cut = at + len(mark)
                break
        cut = cut if cut > 0 else size
        pieces.append(rest[:cut])
        rest = rest[cut:]
    if rest.strip() or not pieces:
        pieces.append(rest)
    return pieces


def plan(user: str, assistant: str, *, prompt_tokens: int, max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
         window_chars: int = WINDOW_CHARS) -> Plan:
    """The windows of a turn and what the budget leaves unread (module docstring). ``prompt_tokens``: the
    extraction prompt's estimated tokens, paid once per window."""
    total = len(user) + len(assistant)
    room = max(0, max_input_tokens - prompt_tokens - 50)  # 50: the labels around the turn
    size = max(MIN_WINDOW_CHARS, min(window_chars, room * 3))  # 3 characters a token: a safe side for code
    if total <= size:
        texts = [(f"user: {user}\n\nassistant: {assistant}", total)]
    else:
        parts: list[tuple[str, str, str]] = [("", "user", p) for p in split_text(user, size)] if user else []
        context = user[:CONTEXT_CHARS] + ("…" if len(user) > CONTEXT_CHARS else "")
        head = f"user (context only, the start of the request): {context}\n\n" if user else ""
        parts += [(head, "assistant", p) for p in split_text(assistant, size)] if assistant else []
        texts = [(f"{ctx}{side} (part {i} of {len(parts)}): {piece}", len(piece))
                 for i, (ctx, side, piece) in enumerate(parts, 1)]
    from pi_memory.retrieval.fenced import estimate_tokens  # here: the settings read only the default

    out = Plan(total_chars=total)
    used = 0
    for i, (text, chars) in enumerate(texts):
        cost = prompt_tokens + estimate_tokens(text) + 50
        if out.windows and used + cost > max_input_tokens:
            out.unread_windows = len(texts) - i
            out.unread_chars = sum(c for _, c in texts[i:])
            break
        used += cost
        out.windows.append(Window(text, chars))
    return out
