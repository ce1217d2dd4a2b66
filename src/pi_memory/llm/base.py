"""The provider-neutral chat-model interface: messages in, text (or a validated pydantic object) out.

Shapes and units
----------------
* ``messages``: a string (one user message) or a list of ``{"role": "user" | "assistant", "content": str}``.
  The system prompt goes in ``system=``, never in the list (Anthropic has no system role in messages).
* :class:`Usage`: ``input_tokens`` / ``output_tokens`` as reported by the server (0 when it reports none, or
  a count that is not a whole number of at least 0: :func:`reported_tokens`), but never more than the request
  can have cost: input at most one token per UTF-8 byte of the prompt sent plus a template allowance
  (:func:`prompt_token_bound`), output at most the ``max_tokens`` the request sent (:func:`believable_usage`; the
  completion's ``doubts`` say which figure was not believed); ``cost_usd`` in US dollars, ``None`` when no price
  is known for the model.
* :class:`Completion`: ``text``, ``usage``, ``model`` (as the server named it), ``latency_ms`` (wall time,
  milliseconds, retries and backoff included), ``stop_reason`` (provider's own word: ``stop`` / ``length`` /
  ``end_turn`` / ``max_tokens`` / ``tool_use``...), ``attempts`` (requests that produced a reply).
* :class:`Price`: US dollars per million tokens, pi's ``models.json`` ``cost`` convention.

Reliability
-----------
* Each HTTP request has a timeout (``timeout_s``, default 60 s). SDK-internal retries are switched off
  (``max_retries=0`` on the client) so this class owns the retry policy for both providers:
  transient failures (timeouts, refused connections, HTTP 408/409/429/5xx) are retried up to ``max_retries``
  times (default 2) with exponential backoff (0.5 s, 1 s, 2 s... capped at 8 s, jittered) or the server's
  ``Retry-After`` (capped at 30 s). Worst-case wall time of one call is therefore about
  ``(max_retries + 1) × timeout_s`` plus backoff.
* :meth:`ChatModel.complete_json` asks for JSON (provider JSON mode where available), parses, and validates
  with the pydantic ``schema``. A reply that fails is sent back to the model with the exact problem, up to
  ``json_retries`` more times (default 2); then :class:`MalformedReplyError` is raised. It never returns a
  default or empty object in place of a bad reply.
* :attr:`ChatModel.usage_totals` keeps a running count per instance (thread-safe).
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from pi_memory.llm.errors import LLMError, MalformedReplyError

T = TypeVar("T", bound=BaseModel)
Messages = str | Sequence[dict[str, Any]]

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_JSON_RETRIES = 2
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 8.0
RETRY_AFTER_MAX_S = 30.0
PLACEHOLDER_KEY = "not-needed"  # local servers ignore the key, but the SDKs insist on one
MAX_REPORTED_TOKENS = 1_000_000_000  # a larger count in one reply is no count; kept at this (an over-count)
PROMPT_OVERHEAD_TOKENS = 1_000  # a chat template's tokens around the messages, a provider's tool-use preamble
PER_MESSAGE_TOKENS = 8  # the role markers of one message


def reported_tokens(value: Any) -> int:
    """A server's token count as a whole number of at least 0: ``None``, a negative or fractional number, a
    string, a boolean or NaN are 0 (no report), a count past :data:`MAX_REPORTED_TOKENS` is that many. A caller
    that keeps a budget counts a 0 as unknown (the learning runner counts its own estimate then)."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or value < 0:
        return 0
    return min(value, MAX_REPORTED_TOKENS)


def prompt_token_bound(messages: Sequence[dict[str, str]], system: str | None,
                       json_schema: type[BaseModel] | None = None) -> int:
    """The most input tokens a request can be billed: one per UTF-8 byte of its system prompt, messages and JSON
    schema (no tokenizer makes a token of less than a byte), :data:`PER_MESSAGE_TOKENS` a message and
    :data:`PROMPT_OVERHEAD_TOKENS` for the template or a tool-use preamble the provider adds."""
    sent = len((system or "").encode("utf-8")) + sum(len(str(m.get("content", "")).encode("utf-8")) for m in messages)
    if json_schema is not None:
        sent += len(json.dumps(json_schema.model_json_schema(), separators=(",", ":")).encode("utf-8"))
    return sent + PER_MESSAGE_TOKENS * (len(messages) + 1) + PROMPT_OVERHEAD_TOKENS


def tokens_said(count: int) -> str:
    """A reported count in words: ``1,234``, or ``1,000,000,000 or more`` at :data:`MAX_REPORTED_TOKENS`."""
    return f"{count:,}" + (" or more" if count >= MAX_REPORTED_TOKENS else "")


def believable_usage(input_tokens: int, output_tokens: int, *, prompt_bound: int, output_cap: int,
                     ) -> tuple[int, int, tuple[str, ...]]:
    """A server's counts of one call, each kept at what the request can have cost: input at most
    ``prompt_bound`` (:func:`prompt_token_bound`), output at most ``output_cap`` (the ``max_tokens`` it sent).
    Returns the counts and, for each figure not believed, a sentence saying so (for a log and a person)."""
    doubts: list[str] = []
    if input_tokens > prompt_bound:
        doubts.append(f"the server reported {tokens_said(input_tokens)} input tokens, more than the prompt sent can "
                      f"be (at most {prompt_bound:,}); not believed, counted {prompt_bound:,}")
        input_tokens = prompt_bound
    if output_tokens > output_cap:
        doubts.append(f"the server reported {tokens_said(output_tokens)} output tokens, more than the {output_cap:,} "
                      f"the request allowed (max_tokens); not believed, counted {output_cap:,}")
        output_tokens = output_cap
    return input_tokens, output_tokens, tuple(doubts)


@dataclass(frozen=True)
class PriceTier:
    """Applies to the whole request when its input exceeds ``input_tokens_above`` tokens."""

    input_tokens_above: int
    input_per_mtok: float
    output_per_mtok: float


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens. The tier with the highest threshold below the input size wins."""

    input_per_mtok: float
    output_per_mtok: float
    tiers: tuple[PriceTier, ...] = ()

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float:
        rate_in, rate_out = self.input_per_mtok, self.output_per_mtok
        for tier in sorted(self.tiers, key=lambda t: t.input_tokens_above):
            if input_tokens > tier.input_tokens_above:
                rate_in, rate_out = tier.input_per_mtok, tier.output_per_mtok
        return (input_tokens * rate_in + output_tokens * rate_out) / 1_000_000


@dataclass(frozen=True)
class Usage:
    """Tokens of one call (or a sum of calls) and its cost in USD (``None``: price unknown)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def __add__(self, other: Usage) -> Usage:
        if self.cost_usd is None and other.cost_usd is None:
            cost = None
        else:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens, cost)

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True)
class Completion:
    """One finished call. For :meth:`ChatModel.complete_json`, usage and latency cover every attempt."""

    text: str
    usage: Usage
    model: str
    latency_ms: float
    stop_reason: str | None = None
    attempts: int = 1
    doubts: tuple[str, ...] = ()  # the server's figures not believed (:func:`believable_usage`), in words


@dataclass(frozen=True)
class UsageTotals:
    """Running totals of one :class:`ChatModel` instance.

    ``calls``: replies received (each JSON re-ask counts); ``failed_calls``: calls that raised after retries;
    ``malformed_replies``: replies that failed to parse or validate; ``cost_usd``: ``None`` while no priced
    reply has been counted.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    failed_calls: int = 0
    malformed_replies: int = 0


@dataclass(frozen=True)
class RawReply:
    """What a provider's ``_send`` returns: the reply text and the server's own accounting."""

    text: str
    input_tokens: int
    output_tokens: int
    model: str
    stop_reason: str | None = None


@dataclass
class _Counter:
    lock: threading.Lock = field(default_factory=threading.Lock)
    totals: UsageTotals = field(default_factory=UsageTotals)


def normalize_messages(messages: Messages) -> list[dict[str, str]]:
    """``"text"`` → ``[{"role": "user", "content": "text"}]``; content part lists are flattened to text."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    out: list[dict[str, str]] = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("user", "assistant"):
            raise ValueError(
                f"messages[{i}] has role {role!r}; only 'user' and 'assistant' are allowed "
                "(pass the system prompt as system=...)."
            )
        content = msg.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            raise ValueError(f"messages[{i}].content must be a string or a list of text parts.")
        out.append({"role": role, "content": content})
    if not out:
        raise ValueError("messages is empty; give at least one user message.")
    return out


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Parse a model's reply into ``schema``. Raises ``ValueError`` whose text can be shown to the model.

    Tolerated: ``<think>…</think>`` blocks (local reasoning models), Markdown code fences, prose around one
    JSON object. Not tolerated: anything that does not validate.
    """
    cleaned = _THINK.sub("", text).strip()
    fenced = _FENCE.search(cleaned)
    if fenced:
        cleaned = fenced.group(1).strip()
    if not cleaned:
        raise ValueError("the reply was empty; it must be one JSON object")
    start = cleaned.find("{")
    if start < 0:
        raise ValueError("the reply contains no JSON object (no '{' found)")
    try:
        value, _ = json.JSONDecoder().raw_decode(cleaned[start:])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the reply is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    try:
        return schema.model_validate(value)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors(include_url=False)[:10]
        ]
        raise ValueError("the JSON does not match the schema: " + "; ".join(problems)) from exc


def schema_name(schema: type[BaseModel]) -> str:
    """A name both APIs accept for a schema or tool: ``[A-Za-z0-9_-]{1,64}``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", schema.__name__)[:64] or "reply"


def json_instruction(schema: type[BaseModel]) -> str:
    """System-prompt text that asks for one JSON object validating against ``schema``."""
    return (
        "Reply with exactly one JSON object and nothing else: no prose, no Markdown fences. "
        "It must validate against this JSON Schema:\n"
        + json.dumps(schema.model_json_schema(), separators=(",", ":"))
    )


def _feedback(problem: str) -> str:
    return (
        f"Your previous reply could not be used: {problem}. "
        "Reply again with only one JSON object that validates against the schema."
    )


class ChatModel(ABC):
    """A chat model behind one endpoint. Subclasses implement :meth:`_send` and :meth:`_classify`.

    ``where`` names the endpoint in error messages (base URL); ``price`` turns tokens into dollars.
    """

    provider: str = "abstract"

    def __init__(
        self,
        model: str,
        *,
        where: str,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        json_retries: int = DEFAULT_JSON_RETRIES,
        price: Price | None = None,
        backoff_base_s: float = BACKOFF_BASE_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        if max_retries < 0 or json_retries < 0:
            raise ValueError("max_retries and json_retries must be >= 0")
        self.model = model
        from pi_memory.safety.urls import redact_url  # here: the scanners' import is not every caller's

        self.where = redact_url(where)  # shown in messages and status lines only: never its credentials
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.json_retries = int(json_retries)
        self.price = price
        self.backoff_base_s = backoff_base_s
        self._sleep = sleep
        self._counter = _Counter()

    # --- provider hooks --------------------------------------------------------------------------------
    @abstractmethod
    def _send(
        self,
        messages: list[dict[str, str]],
        *,
        system: str | None,
        max_tokens: int,
        temperature: float | None,
        json_schema: type[BaseModel] | None,
    ) -> RawReply:
        """One request to the server, no retries. ``json_schema`` set → ask for JSON in the provider's way."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> LLMError:
        """Map an exception raised by :meth:`_send` to an :class:`LLMError`."""

    def _json_system(self, system: str | None, schema: type[BaseModel]) -> str:
        """The system prompt used for JSON calls (caller's prompt + the JSON instruction)."""
        instruction = json_instruction(schema)
        return f"{system}\n\n{instruction}" if system else instruction

    def close(self) -> None:  # noqa: B027 - optional hook; providers with a connection pool override it
        """Release the HTTP connection pool. Safe to call twice."""

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def describe(self) -> str:
        """E.g. ``openai-compatible model 'qwen2.5:7b' at http://127.0.0.1:11434/v1``."""
        return f"{self.provider} model {self.model!r} at {self.where}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.describe()}>"

    # --- public API ------------------------------------------------------------------------------------
    @property
    def usage_totals(self) -> UsageTotals:
        with self._counter.lock:
            return self._counter.totals

    def complete(
        self,
        messages: Messages,
        *,
        system: str | None = None,
        max_tokens: int,
        temperature: float | None = 0.0,
    ) -> Completion:
        """Send ``messages`` and return the reply text. Raises :class:`LLMError` (after retries)."""
        msgs = normalize_messages(messages)
        start = time.perf_counter()
        raw = self._request(msgs, system=system, max_tokens=max_tokens, temperature=temperature, json_schema=None)
        usage, doubts = self._usage(raw, prompt_token_bound(msgs, system), self._output_cap(max_tokens))
        self._count(usage, malformed=False)
        return Completion(raw.text, usage, raw.model, _ms_since(start), raw.stop_reason, 1, doubts)

    def complete_json(
        self,
        messages: Messages,
        schema: type[T],
        *,
        system: str | None = None,
        max_tokens: int,
        temperature: float | None = 0.0,
        retries: int | None = None,
    ) -> tuple[T, Completion]:
        """Ask for one JSON object validating against ``schema``; return ``(instance, completion)``.

        ``retries`` (default ``json_retries``) bounds the re-asks after a malformed reply. The returned
        completion's ``usage``, ``latency_ms`` and ``attempts`` cover all of them. Raises
        :class:`MalformedReplyError` when no attempt validates, :class:`LLMError` on transport failures.
        """
        msgs = normalize_messages(messages)
        budget = self.json_retries if retries is None else max(0, int(retries))
        json_system = self._json_system(system, schema)
        start = time.perf_counter()
        total = Usage(0, 0, None)
        convo = list(msgs)
        problem = ""
        raw: RawReply | None = None
        doubts: tuple[str, ...] = ()
        for attempt in range(1, budget + 2):
            raw = self._request(
                convo, system=json_system, max_tokens=max_tokens, temperature=temperature, json_schema=schema
            )
            usage, doubted = self._usage(raw, prompt_token_bound(convo, json_system, schema),
                                         self._output_cap(max_tokens))
            total, doubts = total + usage, doubts + doubted
            try:
                value = parse_json_reply(raw.text, schema)
            except ValueError as exc:
                problem = str(exc)
                if raw.stop_reason in ("length", "max_tokens"):
                    problem += f" (the reply was cut off at max_tokens={max_tokens})"
                self._count(usage, malformed=True)
                convo = [*convo, {"role": "assistant", "content": raw.text or "(empty)"},
                         {"role": "user", "content": _feedback(problem)}]
                continue
            self._count(usage, malformed=False)
            completion = Completion(raw.text, total, raw.model, _ms_since(start), raw.stop_reason, attempt, doubts)
            return value, completion
        attempts = budget + 1
        last_text = raw.text if raw is not None else ""
        hint = " Raise max_tokens." if "cut off" in problem else ""
        raise MalformedReplyError(
            f"{self.describe()} gave no valid {schema.__name__} JSON in {attempts} attempt(s); last problem: "
            f"{problem}.{hint} The model may be too small for this task or not follow JSON instructions; "
            "try a stronger model or check the prompt. Nothing was changed.",
            attempts=attempts,
            last_error=problem,
            last_text=last_text,
            usage=total,
            doubts=doubts,
        )

    # --- internals -------------------------------------------------------------------------------------
    def _request(self, messages: list[dict[str, str]], **kwargs: Any) -> RawReply:
        attempt = 0
        while True:
            try:
                return self._send(messages, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every failure is classified below
                err = self._classify(exc)
                if not err.transient or attempt >= self.max_retries:
                    if attempt:
                        err.message = f"{err.message} (gave up after {attempt + 1} attempts)"
                        err.args = (err.message,)
                    with self._counter.lock:
                        t = self._counter.totals
                        self._counter.totals = replace(t, failed_calls=t.failed_calls + 1)
                    raise err from exc
                delay = min(BACKOFF_MAX_S, self.backoff_base_s * (2**attempt)) * (0.75 + random.random() / 2)
                if err.retry_after_s is not None:
                    delay = min(RETRY_AFTER_MAX_S, max(delay, err.retry_after_s))
                self._sleep(delay)
                attempt += 1

    def _output_cap(self, max_tokens: int) -> int:
        """The output tokens a request of ``max_tokens`` lets the server bill (a thinking budget adds to it)."""
        return max_tokens

    def _usage(self, raw: RawReply, prompt_bound: int, output_cap: int) -> tuple[Usage, tuple[str, ...]]:
        inp, out, doubts = believable_usage(raw.input_tokens, raw.output_tokens, prompt_bound=prompt_bound,
                                            output_cap=output_cap)
        cost = self.price.cost_usd(inp, out) if self.price else None
        return Usage(inp, out, cost), doubts

    def _count(self, usage: Usage, *, malformed: bool) -> None:
        with self._counter.lock:
            t = self._counter.totals
            cost = t.cost_usd
            if usage.cost_usd is not None:
                cost = (cost or 0.0) + usage.cost_usd
            self._counter.totals = UsageTotals(
                calls=t.calls + 1,
                input_tokens=t.input_tokens + usage.input_tokens,
                output_tokens=t.output_tokens + usage.output_tokens,
                cost_usd=cost,
                failed_calls=t.failed_calls,
                malformed_replies=t.malformed_replies + (1 if malformed else 0),
            )


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)
