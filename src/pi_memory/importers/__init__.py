"""Moving over from the seed extensions: each importer plans first (a dry run says what it would bring, what
clashes and what it skips), writes only with ``apply=True``, is idempotent and never overwrites our data.

* :func:`import_hermes` -- pi-hermes-memory (seed 001): Markdown stores, project stores, failures, skills,
  STANDING.md and the extended store of its ``sessions.db`` (:mod:`.hermes`);
* :func:`import_mem0` -- pi-memory-mem0's embedded store ``mem0-vectors.db`` (seed 004), re-embedded with our
  model, its history replayed (:mod:`.mem0`).

Seed 000's ``<agentDir>/memories/`` folder needs no import: it is our default data root, read in place. Seed
003's ``.pi/memory-blocks/*.md`` are read in place by the memory-blocks capability.
"""

from pi_memory.importers.hermes import ImportSourceError, import_hermes
from pi_memory.importers.mem0 import import_mem0
from pi_memory.importers.report import ImportItem, ImportReport

__all__ = ["ImportItem", "ImportReport", "ImportSourceError", "import_hermes", "import_mem0"]
