"""A learning undo's give-back: the entry texts a job took out of a store, which its undo may write back although
the content check (:func:`.entries.content_problem`) refuses them from every other writer.

A hand-edited MEMORY.md or USER.md entry can hold what no writer may store: control characters (a terminal escape
sequence, a bell, a C1 control) or nothing but U+FFFD. The store reads such an entry and shows it escaped
(:func:`.entries.printable`) or as it is, and a learning job (a consolidation, a review) may rewrite or remove it.
Its undo has to put the old text back, and the content check refused it, so the user could not undo the job.

:class:`GiveBack` lifts exactly those two rules (``control``, ``unreadable``) for exactly the texts it holds, on
one write:

* Only a local learning undo makes one (:func:`pi_memory.learning.undo.undo_job`, from the ``before`` texts of the
  job's own logged writes: what the store held before the job). It is a Python object handed to
  :meth:`MemoryStore.apply`, never part of :class:`.operations.Operation`: nothing a model's tool call, the CLI or a
  team server's request carries can ask for it, and ``tests/curated/test_give_back.py`` checks that no other module
  makes one.
* A team server's project store is not given it (:meth:`MemoryStore.apply`): the server checks what it stores on
  its own, so such an undo stays refused there.
* Every other rule still applies to a given-back text: an empty text, a ``§`` delimiter line, the store's limit,
  and the threat and secret scans (:func:`pi_memory.safety.check_write`). Decided so: a credential is never given
  back, because the learning log never held one (its writes are redacted when logged, and the undo redacts them
  again with the patterns known now; a key right after an escape sequence, ``\\x1b[1mghp_...``, is found since
  the scanners blank escape sequences), so the entry comes back redacted and the undo says so; a text that trips the
  threat scanner stays refused, as it is for every writer: the scans are what keep an injection out of a prompt,
  and an undo that cannot give one back says why and leaves the store as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

LIFTED = frozenset({"control", "unreadable"})  # the content rules a given-back text is not refused for


@dataclass(frozen=True)
class GiveBack:
    """The texts (as the store keeps an entry: LF line endings, stripped) one learning undo may write back
    although they hold control characters or nothing readable."""

    texts: frozenset[str]

    def allows(self, content: str, problem: str | None) -> bool:
        """Whether ``content``, refused by the content check for ``problem``, is one of these texts and the rule
        it breaks is one a give-back lifts."""
        return problem in LIFTED and content in self.texts
