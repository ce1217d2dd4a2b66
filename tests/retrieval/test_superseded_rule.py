"""The rule that decides whether a text states what a replaced memory said (pi_memory.retrieval.superseded):
the values that changed between the old and new texts, and which of them a text states."""

from __future__ import annotations

import pytest

from pi_memory.retrieval.superseded import change, outdated_by

# the new text names the old value as the past: it must not count as saying it
REDIS_OLD = "The cache cluster runs Redis 6 on three nodes."
REDIS_NEW = "The cache cluster runs Redis 7 on three nodes (upgraded from 6 in March)."
PORT_OLD = "The metrics exporter listens on port 9100 inside the cluster."
PORT_NEW = "The metrics exporter listens on port 9400 inside the cluster; it was 9100 until the agent update."
TEAM_OLD = "Priya Shah works on the search team and approves every index migration."
TEAM_NEW = "Priya Shah moved to the mobile team; Tom Berg now approves index migrations."


def test_what_changed_leaves_out_the_old_value_named_as_the_past_and_the_words_telling_of_the_change():
    redis = change(REDIS_OLD, REDIS_NEW)
    assert (redis.old, redis.new) == ({"6"}, {"7", "march"})
    port = change(PORT_OLD, PORT_NEW)
    assert (port.old, port.new) == ({"9100"}, {"9400", "agent", "update"})
    team = change(TEAM_OLD, TEAM_NEW)
    assert (team.old, team.new) == ({"works", "search", "every"}, {"mobile", "tom", "berg"})  # not "moved", "now"
    assert {"priya", "shah", "team", "approves", "index", "migration"} <= team.subject


@pytest.mark.parametrize(("text", "expected"), [
    # states the old value beside the subject, and only mentions the new one in another clause
    ("our cache cluster is on Redis 6, so skip anything that needs 7", True),
    ("keep the client code compatible with Redis 6 (no client-side caching)", True),  # one subject word, as the
    # old text has it: "Redis 6"
    ("the cache cluster now runs redis 7", False),  # the new value
    ("we went from redis 6 to 7 on the cache cluster", False),  # both stated: a tie
    ("the build machine has 6 cores", False),  # the old value, but no subject word beside it
    ("three nodes is plenty for the cache", False),  # the subject, no value
])
def test_a_new_text_holding_upgraded_from_the_old_value_still_outdates_texts_stating_it(text, expected):
    assert outdated_by(text, REDIS_OLD, REDIS_NEW) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("the metrics exporter is on 9100, scrape it there", True),
    ("point prometheus at the exporter port 9100", True),
    ("the exporter listens on 9400 since the agent update", False),
    ("node 9100 in the rack inventory is down", False),  # not about the exporter
])
def test_was_the_old_value_in_the_new_text_is_not_a_new_value(text, expected):
    assert outdated_by(text, PORT_OLD, PORT_NEW) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Priya Shah from the search team should approve the catalog index migration.", True),
    ("I'll ask Priya Shah on the search team to approve it.", True),
    ("Tom Berg approves index migrations, Priya Shah is on mobile", False),  # the new values
    ("the search page is slow on mobile", False),  # one old and one new value, no subject
])
def test_a_person_who_changed_teams(text, expected):
    assert outdated_by(text, TEAM_OLD, TEAM_NEW) is expected


FRIDAY_OLD = "We deploy to production on Fridays."
FRIDAY_NEW = "We never deploy to production on Fridays."
MIGRATE_OLD = "Never run database migrations on Fridays."
MIGRATE_NEW = "Database migrations may run on Fridays now."


def test_a_change_by_negation_is_a_flip_and_its_negation_words_are_no_values():
    assert change(FRIDAY_OLD, FRIDAY_NEW).flip is False  # the old text said it without a negation
    assert change(FRIDAY_OLD, FRIDAY_NEW).new == frozenset()
    assert change(MIGRATE_OLD, MIGRATE_NEW).flip is True
    assert change(MIGRATE_OLD, MIGRATE_NEW).old == frozenset()
    assert change("We don't deploy on Fridays.", "We never deploy on Fridays.").flip is None  # both negated
    assert change(REDIS_OLD, REDIS_NEW).flip is None


@pytest.mark.parametrize(("text", "expected"), [
    ("let's deploy to prod on Friday afternoon", True),  # the whole subject, said the old way
    ("ok, deploying the hotfix to production this Friday", True),
    ("we don't deploy to production on Fridays", False),  # the new way
    ("no, never deploy to production on a Friday", False),
    ("the production deploy failed", False),  # not the whole subject: says nothing of Fridays
    ("I can't deploy to production on Friday, but staging is fine on Fridays", False),  # the new way
])
def test_a_text_saying_what_a_negation_replaced(text, expected):
    assert outdated_by(text, FRIDAY_OLD, FRIDAY_NEW) is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("don't run the database migrations on Friday", True),
    ("we never run database migrations on Fridays", True),
    ("database migrations can run on Fridays", False),
    ("the database migrations ran fine", False),  # no Friday
])
def test_a_text_saying_what_an_undone_negation_replaced(text, expected):
    assert outdated_by(text, MIGRATE_OLD, MIGRATE_NEW) is expected
