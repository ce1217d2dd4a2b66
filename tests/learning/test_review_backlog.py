"""A long backlog of unreviewed messages. A review read the newest messages that fit its job budget and then moved
the mark past all of them, so the oldest ones fell off and were never reviewed. Now a review reads the backlog
oldest first, in parts that each fit the job budget (at most ``BACKLOG_PARTS`` jobs per trigger), the mark moves
only over what a part read, and each job's message says which messages it read and what happens to the rest."""

from __future__ import annotations

import re

import pytest
from learning_helpers import cli, llm_block, write_settings

import pi_memory.learning.triggers as triggers
from pi_memory.devtools.transcripts import write_pi_session
from pi_memory.session import AgentSession

MARK = re.compile(r"fact-(\d\d)\b")


def _backlog(count: int, size: int) -> list[tuple[str, str]]:
    """``count`` messages of about ``size`` characters, each naming its own number (``fact-07``)."""
    out = []
    for n in range(count):
        filler = " ".join(f"w{n}x{i}" for i in range(size // 7))
        out.append(("user" if n % 2 == 0 else "assistant", f"fact-{n:02d} {filler}"[:size]))
    return out


def _numbers(prompt: str) -> list[int]:
    return [int(m) for m in MARK.findall(prompt)]


def _trigger(session: AgentSession, path) -> list[dict]:
    """Three turns (a review is due: nudgeInterval 1), then the jobs that review ran."""
    before = len(session.learning_status()["jobs"])
    for text in ("a", "b", "c"):
        session.after_run(str(path), text)
    assert session.worker.drain(60)
    return session.learning_status()["jobs"][before:]


@pytest.mark.parametrize(("count", "size", "budget"), [
    (40, 1_000, 4_000),   # about four messages a part
    (56, 400, 3_000),     # short messages, a small budget
    (12, 3_000, 4_000),   # each message clipped to 2,000 characters: two a part
])
def test_a_long_backlog_is_reviewed_oldest_first_in_parts_and_nothing_is_skipped(agent, llm, brain, project, count,
                                                                                 size, budget):
    write_settings(agent, llm_block(llm, nudgeInterval=1, learning={"jobTokenBudget": budget},
                                    dreaming={"enabled": False}))
    session = AgentSession(project)
    path = write_pi_session(project / "s.jsonl", project, _backlog(count, size))
    jobs = _trigger(session, path)
    assert 1 < len(jobs) <= getattr(triggers, "BACKLOG_PARTS", 3) and all(j["outcome"] == "nothing" for j in jobs)
    seen = [_numbers(user) for _system, user in brain.prompts]
    assert seen[0][0] == 0  # before: the newest messages only, fact-00 never read
    read = [n for part in seen for n in part]
    assert read == list(range(len(read)))  # oldest first, each once, no gap between parts
    assert session.learning.reviewed == len(read)
    for job, part in zip(jobs, seen, strict=True):
        first, last = part[0] + 1, part[-1] + 1
        assert job["messages"] == {"from": first, "to": last, "of": count, "skipped": 0}
        if last < count:
            then = triggers.NEXT_PART if job is not jobs[-1] else triggers.AFTER_REVIEW
            assert job["message"].endswith(f"; read messages {first}-{last} of {count} (oldest first, as many as fit "
                                           f"learning.jobTokenBudget); the {count - last} after them {then}")
    for _ in range(count):  # the next reviews go on where the last one stopped, until the backlog is read
        if session.learning.reviewed >= count:
            break
        _trigger(session, path)
    read = [n for _system, user in brain.prompts for n in _numbers(user)]
    assert read == list(range(count))
    assert session.learning.reviewed == count
    session.shutdown()


def test_a_part_refused_by_the_budget_stops_the_backlog_and_keeps_the_mark(agent, llm, brain, project):
    write_settings(agent, llm_block(llm, nudgeInterval=1, learning={"jobTokenBudget": 4_000, "dailyTokenBudget": 4_000},
                                    dreaming={"enabled": False}))
    session = AgentSession(project)
    path = write_pi_session(project / "s.jsonl", project, _backlog(40, 1_000))
    jobs = _trigger(session, path)
    assert [j["outcome"] for j in jobs] == ["nothing", "budget"]
    first = _numbers(brain.prompts[0][1])
    assert first[0] == 0 and session.learning.reviewed == len(first)
    assert jobs[1]["message"].startswith("not run, the model was not called: ")
    session.shutdown()


@pytest.mark.parametrize(("recent", "count"), [(4, 10), (2, 9), (6, 30)])
def test_review_recent_messages_says_what_it_left_unread(agent, llm, brain, project, recent, count):
    write_settings(agent, llm_block(llm, nudgeInterval=1, reviewRecentMessages=recent, dreaming={"enabled": False}))
    session = AgentSession(project)
    path = write_pi_session(project / "s.jsonl", project, _backlog(count, 60))
    [job] = _trigger(session, path)
    assert _numbers(brain.prompts[0][1]) == list(range(count - recent, count))
    assert job["message"] == (f"nothing to save; the {count - recent} older message(s) before the newest {recent} were "
                              f"not read (reviewRecentMessages = {recent}; 0 reads them all)")
    assert job["messages"] == {"from": count - recent + 1, "to": count, "of": count, "skipped": count - recent}
    assert session.learning.reviewed == count
    session.shutdown()


@pytest.mark.parametrize(("count", "size"), [(30, 1_000), (16, 2_500)])
def test_the_review_command_reads_oldest_first_and_names_the_next_from(agent, llm, brain, project, monkeypatch,
                                                                       count, size):
    write_settings(agent, llm_block(llm, learning={"jobTokenBudget": 4_000}))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, _backlog(count, size))
    start, read = 1, []
    while True:
        code, report = cli("review", str(path), "--from", str(start), "--json")
        assert code == 0, report
        part = _numbers(brain.prompts[-1][1])
        assert part[0] == start - 1
        read += part
        if "nextFrom" not in report:
            break
        assert report["nextFrom"] == part[-1] + 2 == report["messages"]["to"] + 1
        assert report["message"].endswith(
            f"the {count - part[-1] - 1} after them were not read: `pi-memory review {path} --from "
            f"{report['nextFrom']}` reads them")
        start = report["nextFrom"]
    assert read == list(range(count))  # before: the newest only, and no way to read the rest


def test_the_review_command_from_past_the_end_has_nothing_to_read(agent, llm, brain, project, monkeypatch):
    write_settings(agent, llm_block(llm))
    monkeypatch.chdir(project)
    path = write_pi_session(project / "s.jsonl", project, _backlog(4, 50))
    code, report = cli("review", str(path), "--from", "9", "--json")
    assert (code, report["outcome"], report["message"], report["calls"]) == (
        0, "nothing", "the session has no messages to review", 0)
    assert brain.prompts == []
