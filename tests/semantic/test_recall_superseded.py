"""Session turns that say what a superseded memory said rank below the current fact, with a note."""

from __future__ import annotations

import pytest
from semantic_helpers import ALICE, ALICE_OTHER_PROJECT, insert_turns

from pi_memory.index.mirror import add_extended
from pi_memory.retrieval.engine import (
    FENCE_CLOSE,
    FENCE_OPEN,
    NOTICE,
    evidence_reasons,
    format_recall,
    recall,
    render_line,
)
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


# --- a replaced fact whose replacement the prompt does not recall; values named as the past; curated entries ---
TEAM_OLD = "Priya Shah works on the search team and approves every index migration."
TEAM_NEW = "Priya Shah moved to the mobile team; Tom Berg now approves index migrations."
TEAM_PROMPT = "Priya from search, can she check the catalog rollout?"


def fenced(*lines: str) -> str:
    return "\n".join([FENCE_OPEN, NOTICE, *lines, FENCE_CLOSE])


@pytest.fixture
def moved_team(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("t1", "2026-10-12T09:00:00.000Z", "Priya Shah from the search team should approve the catalog index migration."),
        ("t2", "2026-10-12T09:01:00.000Z", "the catalog page loads slowly on mobile"),
    ])
    old = backend.add(TEAM_OLD, scope=ALICE, observed_at="2026-05-02T10:00:00Z")
    return backend.update(old.id, TEAM_NEW, scope=ALICE, observed_at="2026-11-16T10:00:00Z")


def test_a_turn_saying_a_replaced_fact_brings_in_the_current_fact_the_floor_dropped(backend, conn, moved_team):
    new = moved_team
    assert recall(backend, TEAM_PROMPT, scope=ALICE, conn=conn) == []  # the fact alone has too little evidence
    hits = recall(backend, TEAM_PROMPT, scope=ALICE, include=("semantic", "sessions"), conn=conn)
    assert [(h.id, h.replaced_by, h.recalled_for) for h in hits] == [
        (new.id, "", "s1#t1"), ("s1#t1", new.id, ""), ("s1#t2", "", "")]
    assert hits[0].memory is not None and hits[0].memory.text == TEAM_NEW  # read whole, as recalled facts are
    assert hits[0].to_public()["recalledFor"] == "s1#t1"
    assert evidence_reasons(hits[0], 0.4) == ["it replaced what s1#t1 says"]
    assert format_recall(hits) == fenced(
        f'- {new.id} (2026-11-16): "{TEAM_NEW}"',
        f"- session:s1#t1 (2026-10-12, said before 2026-11-16, since replaced by {new.id}): "
        '"user: Priya Shah from the search team should approve the catalog index migration."',
        '- session:s1#t2 (2026-10-12): "user: the catalog page loads slowly on mobile"')


def test_no_fact_is_brought_in_before_the_change_or_for_a_turn_about_something_current(backend, conn, moved_team):
    before = recall(backend, TEAM_PROMPT, scope=ALICE, include=("semantic", "sessions"), conn=conn,
                    as_of="2026-11-01")  # the new fact did not exist yet: the turn was right then
    assert [(h.id, h.replaced_by) for h in before] == [("s1#t1", ""), ("s1#t2", "")]
    other = backend.add("Anna Roy works on the search team and approves every catalog rollout.", scope=ALICE)
    insert_turns_more(conn, [("t3", "2026-10-20T09:00:00.000Z",
                              "Anna Roy from the search team should approve the catalog rollout.")])
    hits = recall(backend, "Anna from search, can she check the catalog rollout?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn)
    by_id = {h.id: h for h in hits}
    assert other.id in by_id and "s2#t3" in by_id
    assert by_id["s2#t3"].replaced_by == ""  # it matches Anna's current fact better than Priya's old one
    assert moved_team.id not in by_id or not by_id[moved_team.id].recalled_for


def insert_turns_more(conn, rows) -> None:
    """Session ``s2`` of ALICE's project (``insert_turns`` writes ``s1``)."""
    from pi_memory.index.db import transaction
    from pi_memory.index.indexer import insert_messages

    with transaction(conn):
        sid = conn.execute("INSERT INTO sessions(source, session_key, cwd, project_id, project_name) "
                           "VALUES ('pi', 's2', '/w', ?, 'demo') RETURNING id", (ALICE.project_id,)).fetchone()[0]
        fid = conn.execute("INSERT INTO session_files(path, session_id, size, mtime_ns) VALUES ('/s2', ?, 0, 0) "
                           "RETURNING id", (sid,)).fetchone()[0]
        insert_messages(conn, [(sid, fid, eid, None, i, stamp, "user", "message", None, "active", text)
                               for i, (eid, stamp, text) in enumerate(rows, 1)])


REDIS_OLD = "The cache cluster runs Redis 6 on three nodes."
REDIS_NEW = "The cache cluster runs Redis 7 on three nodes (upgraded from 6 in March)."


def test_turns_are_marked_when_the_new_fact_names_the_old_value_as_the_past(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("r1", "2026-02-10T09:00:00.000Z", "our cache cluster is on Redis 6, so skip anything that needs 7"),
        ("r2", "2026-02-11T09:00:00.000Z", "keep the client code compatible with Redis 6 (no client-side caching)"),
    ])
    old = backend.add(REDIS_OLD, scope=ALICE, observed_at="2025-12-01T10:00:00Z")
    new = backend.update(old.id, REDIS_NEW, scope=ALICE, observed_at="2026-03-15T10:00:00Z")
    hits = recall(backend, "which redis version does the cache cluster run?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn)
    assert format_recall(hits) == fenced(
        f'- {new.id} (2026-03-15): "{REDIS_NEW}"',
        f"- session:s1#r1 (2026-02-10, said before 2026-03-15, since replaced by {new.id}): "
        '"user: our cache cluster is on Redis 6, so skip anything that needs 7"',
        f"- session:s1#r2 (2026-02-11, said before 2026-03-15, since replaced by {new.id}): "
        '"user: keep the client code compatible with Redis 6 (no client-side caching)"')


EXPORTER_OLD = "The metrics exporter listens on port 9100 inside the cluster."
EXPORTER_NEW = "The metrics exporter listens on port 9400 inside the cluster."


def test_a_curated_entry_saying_a_replaced_fact_gets_the_note_and_keeps_its_rank(backend, conn):
    early, _ = add_extended(conn, "The metrics exporter is on port 9100; the scrape config points there.",
                            target="project", scope="project", project=ALICE.project_id,
                            created="2026-06-01T10:00:00.000Z")
    late, _ = add_extended(conn, "Scrape the metrics exporter on port 9100 for the staging dashboards.",
                           target="project", scope="project", project=ALICE.project_id,
                           created="2026-10-01T10:00:00.000Z")  # written after the change: left alone
    old = backend.add(EXPORTER_OLD, scope=ALICE, observed_at="2026-01-05T10:00:00Z")
    new = backend.update(old.id, EXPORTER_NEW, scope=ALICE, observed_at="2026-09-01T10:00:00Z")
    hits = recall(backend, "which port does the metrics exporter listen on?", scope=ALICE,
                  include=("semantic", "curated"), conn=conn)
    assert [(h.kind, h.id, h.replaced_by, h.replaced_on) for h in hits] == [
        ("semantic", new.id, "", ""), ("curated", str(late), "", ""), ("curated", str(early), new.id, "2026-09-01")]
    assert format_recall(hits).splitlines()[4] == (
        f"- curated:{early} (2026-06-01, said before 2026-09-01, since replaced by {new.id}): "
        '"The metrics exporter is on port 9100; the scrape config points there."')


def test_the_keyword_search_hands_over_the_superseded_memories_it_met_in_the_scope(backend):
    old = backend.add(TEAM_OLD, scope=ALICE)
    backend.update(old.id, TEAM_NEW, scope=ALICE)
    theirs = backend.add("Priya Shah works on the search team for project B.", scope=ALICE_OTHER_PROJECT)
    backend.update(theirs.id, "Priya Shah left project B.", scope=ALICE_OTHER_PROJECT)
    met: list[int] = []
    found = backend.keyword_candidates("does Priya approve index migrations?", scope=ALICE, replaced=met)
    assert [i for i, _ in found] == [backend.get(old.id, scope=ALICE).superseded_by]  # active ones only, as before
    pk = backend.conn.execute("SELECT pk FROM semantic_memories WHERE id = ?", (old.id,)).fetchone()[0]
    assert met == [pk]  # not project B's


def test_a_turn_saying_a_value_two_replacements_ago_is_marked_with_the_active_fact(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("b1", "2026-04-02T09:00:00.000Z", "the nightly backup starts at 01:00 UTC, keep deploys away from it"),
    ])
    first = backend.add("The nightly backup starts at 01:00 UTC.", scope=ALICE, observed_at="2026-03-01T10:00:00Z")
    second = backend.update(first.id, "The nightly backup starts at 02:00 UTC.", scope=ALICE,
                            observed_at="2026-06-01T10:00:00Z")
    third = backend.update(second.id, "The nightly backup starts at 03:00 UTC.", scope=ALICE,
                           observed_at="2026-09-01T10:00:00Z")
    hits = recall(backend, "when does the nightly backup start?", scope=ALICE, include=("semantic", "sessions"),
                  conn=conn)
    marked = {h.id: (h.replaced_by, h.replaced_on) for h in hits if h.kind == "session"}
    assert marked == {"s1#b1": (third.id, "2026-06-01")}  # said before the first change (observed June 1)
    assert [h.id for h in hits].index(third.id) < [h.id for h in hits].index("s1#b1")


def test_a_turn_saying_what_a_negation_replaced_is_marked_below_the_current_rule(backend, conn):
    insert_turns(conn, ALICE.project_id, [
        ("f1", "2026-11-02T10:00:00.000Z", "let's deploy to production on Friday afternoon, as usual"),
        ("f2", "2026-11-03T10:00:00.000Z", "lunch plans for the team offsite next month"),
    ])
    old = backend.add("We deploy to production on Fridays.", scope=ALICE)
    new = backend.update(old.id, "We never deploy to production on Fridays.", scope=ALICE)
    hits = recall(backend, "can we deploy to production on Friday?", scope=ALICE,
                  include=("semantic", "sessions"), conn=conn)
    turn = next(h for h in hits if h.kind == "session")
    assert [h.id for h in hits].index(new.id) < hits.index(turn)
    assert turn.replaced_by == new.id and "since replaced by" in render_line(turn)
