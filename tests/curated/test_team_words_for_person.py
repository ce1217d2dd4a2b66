"""The team client's errors are written for a model ("tell the user"); a person at the CLI reads them through
``for_person``, where the one who can act is whoever runs the team server."""

from __future__ import annotations

from pi_memory.curated.messages import for_person
from pi_memory.curated.team_answers import no_answer, result_fields, too_long

NAME = "team project store 'acme' on http://10.0.0.5:8765"


def test_a_write_without_an_answer():
    assert for_person(no_answer(NAME, 10, "POST")) == (
        f"the {NAME} did not answer within 10 s, so it is unknown whether the change was applied. Read the project "
        "store again (memory_read, or `pi-memory read project`) before you retry; if the server keeps not answering, "
        "tell whoever runs it.")


def test_an_answer_too_long():
    assert for_person(too_long(NAME, 8 * 1024 * 1024, "GET")) == (
        f"the {NAME} sent an answer of more than 8 MB, far more than a project store holds, so it was not read and "
        "its entries could not be read. The server may be a different program or a broken one: tell whoever runs it.")


def test_an_answer_that_cannot_be_read():
    error = result_fields({"success": "maybe"}, [], NAME)["error"]
    assert "tell the user" in error  # the model's words
    assert for_person(error) == (
        f"The {NAME} sent an answer pi-memory cannot read, so it is unknown whether the change was applied. Read "
        "the project store again (memory_read, or `pi-memory read project`) before you retry; if this repeats, the "
        "server may be a different program or a broken one.")
