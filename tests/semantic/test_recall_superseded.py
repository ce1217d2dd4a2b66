"""Session turns that say what a superseded memory said rank below the current fact, with a note."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE, insert_turns

from pi_memory.retrieval.engine import format_recall, recall, render_line
from pi_memory.retrieval.superseded import outdated_by

OLD, NEW = "Production runs PostgreSQL 15 behind pgbouncer.", "Production runs PostgreSQL 16 behind pgbouncer."


@pytest.mark.parametrize(("turn", "expected"), [
    ("we are still on postgres 15 in production", True),
    ("production postgresql 15 is what the dashboard shows", True),
    ("production moved to postgresql 16 yesterday", False),  # says the new thing
    ("postgres 15 and 16 both run in production this week", False),  # says both
    ("the staging box has 15 GB of disk", False),  # an old-only word, but not about the fact
    ("pgbouncer restarts every night", False),  # about the fact, but not what changed
])
def test_outdated_by(turn, expected):
    assert outdated_by(turn, OLD, NEW) is expected


@pytest.fixture
def replaced(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("e1", "2026-11-02T10:00:00.000Z", "we run postgresql 15 in production with pgbouncer in front"),
        ("e2", "2026-11-03T10:00:00.000Z", "lunch plans for the team offsite next month"),
        ("e3", "2026-11-04T10:00:00.000Z", "the production pgbouncer pool size is 40 for postgresql"),
    ])
    old = backend.add(OLD, scope=ALICE)
    new = backend.update(old.id, NEW, scope=ALICE)
    at = backend.get(old.id, scope=ALICE).superseded_at
    return new, at


def test_a_turn_saying_the_old_fact_ranks_below_the_new_one_with_a_note(backend, conn, replaced):
    new, at = replaced
    hits = recall(backend, "which postgresql version runs in production?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn)
    ids = [h.id for h in hits]
    assert ids.index(new.id) < ids.index("s1#e1")
    e1 = hits[ids.index("s1#e1")]
    assert (e1.replaced_by, e1.replaced_on) == (new.id, at[:10])
    assert e1.to_public()["replacedBy"] == new.id
    assert not hits[ids.index("s1#e3")].replaced_by  # about postgres, but not what changed
    line = render_line(e1)
    assert line.startswith(f"- session:s1#e1 (2026-11-02, said before {at[:10]}, since replaced by {new.id}): ")
    text = format_recall(hits)
    assert text.index(f"- {new.id} ") < text.index("- session:s1#e1 ")


def test_without_the_current_fact_or_after_the_change_turns_are_not_marked(backend, conn, replaced):
    only_turns = recall(backend, "which postgresql version runs in production?", scope=ALICE,
                        include=("sessions",), conn=conn)
    assert only_turns and not any(h.replaced_by for h in only_turns)
    _new, at = replaced
    later = recall(backend, "which postgresql version runs in production?", scope=ALICE,
                   include=("semantic", "sessions"), conn=conn, as_of="2026-11-03")  # before the change:
    assert not any(h.replaced_by for h in later)  # the new fact did not exist yet, nothing is outdated
    assert at > "2026-11-03"


PORT_OLD, PORT_NEW = "The staging database listens on port 5432", "The staging database listens on port 6543"


@pytest.mark.parametrize(("turn", "expected"), [
    ("the staging database is on 5432, connect there", True),
    ("staging listens on 5432 for now", True),
    ("the deploy database url is postgres://app@db:5432/app", False),  # another database: one shared word
    ("grafana listens on 5432? no, that is postgres", False),
    ("the staging database moved to 6543 this morning", False),
])
def test_a_turn_must_share_two_words_of_the_subject_to_be_outdated(turn, expected):
    assert outdated_by(turn, PORT_OLD, PORT_NEW) is expected


def test_a_fact_observed_before_it_was_recorded_dates_the_change_from_its_observed_day(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("p1", "2026-11-10T10:00:00.000Z", "the staging database listens on 5432, use that in the env file"),
        ("p2", "2026-11-25T10:00:00.000Z", "the staging database listens on 5432 again after the rollback"),
        ("p3", "2026-11-12T10:00:00.000Z", "the deploy database url is postgres://app@db:5432/app"),
    ])
    old = backend.add(PORT_OLD, scope=ALICE, observed_at="2026-05-08T10:00:00Z")
    new = backend.update(old.id, PORT_NEW, scope=ALICE, reason="moved", observed_at="2026-11-20T09:00:00Z")
    assert backend.get(old.id, scope=ALICE).superseded_at > "2026-12-01"  # recorded today, observed on the 20th
    hits = recall(backend, "which port does the staging database listen on?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn, min_similarity=0)
    marked = {h.id: (h.replaced_by, h.replaced_on) for h in hits if h.kind == "session"}
    assert marked["s1#p1"] == (new.id, "2026-11-20")  # said before the observed change
    assert marked.get("s1#p2", ("", "")) == ("", "")  # after the change: the replacement may be what is wrong
    assert marked.get("s1#p3", ("", "")) == ("", "")  # about another database
