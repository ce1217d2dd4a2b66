"""One step of a curated store's batch write (:meth:`pi_memory.curated.store.MemoryStore.apply`), as the tools,
the learning jobs and the team server's project stores send it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Place(BaseModel):
    """Where an added entry goes (:func:`pi_memory.curated.entries.slot`): right after the entry ``after``, else
    right before the entry ``before``, else at ``index``; ``after`` unset with an index means it was the first
    entry. A learning undo puts a removed entry back where it stood with it."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    after: str | None = None
    before: str | None = None
    index: int | None = Field(default=None, ge=0)


class Operation(BaseModel):
    """One step of a batch (:meth:`MemoryStore.apply`)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    action: Literal["add", "replace", "remove"]
    content: str | None = Field(default=None, description="add: the entry; replace: the new entry")
    old_text: str | None = Field(default=None, description="replace/remove: a short unique piece of the entry")
    place: Place | None = Field(default=None, description="add: where the entry goes (the end when unset)")
