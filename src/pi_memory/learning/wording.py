"""Texts a person reads about a learning job that did not do its work (the CLI, pi's notifications, the
learning log): what happened and what to do next, in words, never a schema's or a tool's.

The model of a job gets its own texts (the problem of a reply it must fix, in :mod:`pi_memory.llm`'s words);
these are what the job's report and log say about it.
"""

from __future__ import annotations

import json
import math

from pi_memory.curated.entries import joined_length
from pi_memory.curated.messages import for_person
from pi_memory.curated.results import preview

# A consolidation's system prompt, its estimate's allowance and its reply cap (consolidate.py), besides the store
CONSOLIDATION_TOKENS = 2_300
_KINDS = {"string": "text", "list": "a list", "dict": "an object", "model": "an object", "int": "a whole number",
          "bool": "true or false", "float": "a number"}


# What a job ended before its first model call says first: it did not run, and cost nothing because of that
NOT_CALLED = "not run, the model was not called"


def calls_said(calls: int, input_tokens: int, output_tokens: int) -> str:
    """A job's model calls and what they counted, for a person: a call that never reached the model (a server
    that refused the connection) counts nothing, which is said as such, not as "0 in / 0 out"."""
    if not calls:
        return "the model was not called"
    if input_tokens + output_tokens == 0:
        return f"{calls} call(s) tried, none reached the model, so no tokens were spent"
    return f"{calls} call(s), {input_tokens:,} in / {output_tokens:,} out"


def unusable_reply(calls: int, max_calls: int, schema, problem: str, last_text: str) -> str:
    """A job whose ``calls`` model answers all failed ``schema``; ``problem`` / ``last_text``: of the last one."""
    what = reply_problem(schema, last_text) or f"its last answer could not be used: {problem}"
    cut = " (it was cut off at the job's reply length)" if "cut off" in problem else ""
    return (f"the model answered {calls} time(s) (learning.maxCallsPerJob = {max_calls}) but never in the form this "
            f"job needs, so nothing was written; {what}{cut}. A model that follows JSON instructions more reliably "
            "(pi-memory.llm) would help")


def runaway_reply(chars: int, operations: int, max_tokens: int, max_operations: int, chars_per_token: int) -> str:
    """A reply past a job's bounds (:data:`pi_memory.learning.runner.MAX_JOB_OPERATIONS`, the characters its
    ``max_tokens`` can hold), said with what it held and what a reply may hold; none of it was applied."""
    held = f"{chars:,} characters" + (f" with {operations:,} operations" if operations else "")
    return (f"the model ran away: its reply was {held}, far more than a reply to this job may hold (at most "
            f"{max_operations:,} operations and {max_tokens * chars_per_token:,} characters, for a reply of "
            f"{max_tokens:,} tokens), so none of it was applied and nothing was written. A model that loops, or a "
            "server that ignores max_tokens, answers like this; another model (pi-memory.llm) would help")


def reply_problem(schema, text: str) -> str | None:
    """What is wrong with ``text`` as a ``schema`` reply, as a clause about "its last answer" (``None``: fine)."""
    from pydantic import ValidationError

    from pi_memory.llm.base import parse_json_reply

    try:
        parse_json_reply(text, schema)
    except ValueError as exc:
        cause = exc.__cause__
        if not isinstance(cause, ValidationError):
            return "its last answer " + str(exc).removeprefix("the reply ")  # "was empty", "is not valid JSON: ..."
        return "in its last answer, " + "; ".join(_field_problem(e) for e in cause.errors(include_url=False)[:3])
    return None


def _field_problem(error: dict) -> str:
    parts: list[str] = []
    for p in error["loc"]:
        if isinstance(p, int) and parts:
            parts[-1] = f"{parts[-1].removesuffix('s')} {p + 1}"
        else:
            parts.append(str(p))
    where = (f'"{parts[-1]}" of {" ".join(reversed(parts[:-1]))}' if len(parts) > 1 else
             f'"{parts[0]}"' if parts else "the answer")
    kind, given = error["type"], json.dumps(error.get("input"), ensure_ascii=False)[:60]
    if kind == "missing":
        return f"{where} is missing"
    if kind == "literal_error":
        return f"{where} is {given}, which is none of {error['ctx']['expected'].replace(chr(39), '')}"
    if kind == "extra_forbidden":
        return f"{where} is not a field the job knows"
    if kind.endswith("_type") and kind[:-5] in _KINDS:
        return f"{where} is {given}, not {_KINDS[kind[:-5]]}"
    return f"{where}: {error['msg'][:1].lower()}{error['msg'][1:]}"


def unmatched(name: str, misses: list) -> str:
    """The model's operations whose ``oldText`` is in no entry, or in several, of ``name``, or names an entry an
    earlier operation changed (``(op, count, earlier step)``: :func:`pi_memory.learning.runner.plan_writes`)."""
    op, count, earlier = misses[0]
    if not (op.old_text or "").strip():
        return (f"the model's answer could not be applied: it does not say which entry of {name} to {op.action}, "
                "so nothing was written")
    if earlier:
        return (f"the model's answer could not be applied: it names the entry to {op.action} by "
                f"{preview(op.old_text or '')!r}, an entry of {name} that its operation {earlier} already changed "
                "(each entry may be replaced or removed once), so nothing was written")
    where = "no entry" if count == 0 else f"{count} entries"
    return (f"the model's answer could not be applied: it names the entry to {op.action} by "
            f"{preview(op.old_text or '')!r}, which is in {where} of {name} (it must be in exactly one), so nothing "
            "was written")


def consolidation_tokens(store_chars: int) -> int:
    """About what a consolidation of a store of ``store_chars`` characters reserves of the day's budget."""
    return math.ceil(store_chars / 4) + CONSOLIDATION_TOKENS


MODEL_ANSWER = "the model's answer"  # who wrote a job's writes, unless the job says (JobContext.author)


def store_refusal(store, target: str, result, planned: list, misses: list, budget_left: int | None = None,
                  author: str = MODEL_ANSWER) -> str:
    """Why the store refused a job's batch on ``target``: ``planned`` writes, ``misses`` of :func:`unmatched`.
    ``budget_left``: tokens left of the day's learning budget (``None``: not known); when a consolidation does not
    fit them, a full store's refusal does not send a person to ``pi-memory consolidate``. ``author``: what the
    writes came from, for a scanner's refusal ("the model's answer"; a rule-based correction names itself, since
    no model was involved)."""
    from pi_memory.curated.store import LIMIT_SETTINGS

    name = store.name(target)
    if result.code in ("no_match", "ambiguous", "conflict") and misses:
        return unmatched(name, misses)
    if result.code == "over_limit":
        after = store.entries(target)
        for w in planned:
            if w.action == "add":
                after.append(w.after)
            elif w.before in after:
                after[after.index(w.before)] = w.after
        size = joined_length([e for e in after if e is not None])
        full = (f"{name} would hold {size:,} of its {store.limit(target):,} characters after this job's writes, so "
                "nothing was written.")
        need = consolidation_tokens(joined_length(store.entries(target)))
        if budget_left is not None and budget_left < need:
            from pi_memory.learning.log import next_reset

            return (f"{full} Make room by hand (`pi-memory remove {target} TEXT`), or raise {LIMIT_SETTINGS[target]} "
                    f"in settings; `pi-memory consolidate {target}` needs about {need:,} tokens of the daily learning "
                    f"budget, which has {budget_left:,} left until it resets at {next_reset()}")
        return (f"{full} Make room first (`pi-memory consolidate {target}`, or `pi-memory remove {target} TEXT`), "
                f"or raise {LIMIT_SETTINGS[target]} in settings")
    if result.code in ("secret", "threat") and result.findings:
        what = ("a credential" if result.code == "secret" else "text matching a threat pattern")
        return f"{author} would have put {what} ({result.findings[0]}) in {name}, so nothing was written"
    return f"{name}: {for_person(result.error)}"


def duplicates(n: int) -> str:
    """``n`` exact duplicate entries, in words (a job's message: the copies its write merged, an undo gave back)."""
    return "1 exact duplicate entry" if n == 1 else f"{n} exact duplicate entries"
