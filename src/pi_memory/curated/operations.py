"""One step of a curated store's batch write (:meth:`pi_memory.curated.store.MemoryStore.apply`), as the tools,
the learning jobs and the team server's project stores send it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class Operation(BaseModel):
    """One step of a batch (:meth:`MemoryStore.apply`)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)

    action: Literal["add", "replace", "remove"]
    content: str | None = Field(default=None, description="add: the entry; replace: the new entry")
    old_text: str | None = Field(default=None, description="replace/remove: a short unique piece of the entry")
