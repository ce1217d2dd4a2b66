"""Tools an agent calls, defined once and served by every host (pi bridge, MCP server, Python function calling).

Each :class:`ToolSpec` carries a name, a description written for the model, a JSON Schema generated from a
pydantic model, annotations (read-only / destructive / idempotent) and a ``call(arguments)`` that validates
the arguments and returns a :class:`ToolOutcome`. Invalid arguments never raise: the outcome is an error the
model can act on (for the curated tools it lists the current entries, because clients that leave out
``oldText`` otherwise dead-end -- Hermes #43412).

``create_memory_tools(store)`` -> the four curated-memory tools ``memory_add``, ``memory_replace``,
``memory_remove``, ``memory_read``; ``create_skill_tools(skill_store)`` -> ``skill_manage``. ``spec.openai()`` / ``spec.anthropic()`` give the tool definition in the
shape each provider's function-calling API takes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from pi_memory import safety
from pi_memory.tools.curated import create_memory_tools
from pi_memory.tools.skills import create_skill_tools


@dataclass(frozen=True)
class ToolOutcome:
    """What a tool call produced: ``text`` for the model, ``result`` as structured data, ``is_error``."""

    text: str
    result: dict
    is_error: bool


@dataclass(frozen=True)
class ToolSpec:
    name: str
    label: str
    description: str
    args_model: type[BaseModel]
    handler: Callable[[BaseModel], dict]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    on_invalid: Callable[[str, dict], dict] | None = None
    result_model: type[BaseModel] | None = None  # the structured output's schema, when there is one
    render: Callable[[dict], str] | None = None  # the model's text for a result (default: the result as JSON)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def parameters(self) -> dict:
        """JSON Schema of the arguments (pydantic, camelCase names, no titles)."""
        return _clean_schema(self.args_model.model_json_schema(by_alias=True))

    def call(self, arguments: dict | None) -> ToolOutcome:
        arguments = safety.replace_unencodable(arguments)  # lone surrogates -> U+FFFD, never a lost write
        try:
            args = self.args_model.model_validate(arguments if arguments is not None else {})
        except ValidationError as exc:
            problems = "; ".join(self._problem(e) for e in exc.errors())
            error = f"Invalid arguments for {self.name}: {problems}. Fix them and call the tool again."
            result = self.on_invalid(error, arguments if isinstance(arguments, dict) else {}) if self.on_invalid else {"success": False, "error": error}
            return _outcome(result)
        return _outcome(self.handler(args), self.render)

    def _problem(self, error: Any) -> str:
        """One validation error in words; an argument the tool does not take is named with the ones it does."""
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
            known = ", ".join(self.parameters.get("properties", {}))
            return f"{where}: not an argument of {self.name} (it takes: {known})"
        return f"{where}: {error['msg']}"

    def openai(self) -> dict:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}

    def anthropic(self) -> dict:
        return {"name": self.name, "description": self.description, "input_schema": self.parameters}

    def describe(self) -> dict:
        """Name, label, description and schema, as the pi bridge sends them."""
        return {"name": self.name, "label": self.label, "description": self.description, "parameters": self.parameters}


def _outcome(result: dict, render: Callable[[dict], str] | None = None) -> ToolOutcome:
    text = render(result) if render is not None else json.dumps(result, ensure_ascii=False)
    return ToolOutcome(text=text, result=result, is_error=not result.get("success", False))


def _clean_schema(schema: dict) -> dict:
    """Drop pydantic's ``title`` keys: they add tokens and some clients show them as parameter names."""
    if isinstance(schema, dict):
        return {k: _clean_schema(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_clean_schema(v) for v in schema]
    return schema


__all__ = ["ToolOutcome", "ToolSpec", "create_memory_tools", "create_skill_tools"]
