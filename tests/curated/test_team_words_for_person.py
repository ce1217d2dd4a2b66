"""The team client's errors are written for a model ("tell the user"); a person at the CLI reads them through
``for_person``, where the one who can act is whoever runs the team server."""

from __future__ import annotations

from pi_memory.curated.messages import for_person
from pi_memory.curated.team_answers import no_answer, result_fields, too_long

NAME = "team project store 'acme' on http://10.0.0.5:8765"


def test_a_write_without_an_answer():
    assert for_person(no_answer(NAME, 10, "POST")) == (
        f"the {NAME} did not answer within 10 s, so it is unknown whether the change was applied. Read the project "
        "store again (`pi-memory read project`) before you retry; if the server keeps not answering, tell whoever "
        "runs it.")


def test_an_answer_too_long():
    assert for_person(too_long(NAME, 8 * 1024 * 1024, "GET")) == (
        f"the {NAME} sent an answer of more than 8 MB, far more than a project store holds, so it was not read and "
        "its entries could not be read. The server may be a different program or a broken one: tell whoever runs it.")


def test_an_answer_that_cannot_be_read():
    error = result_fields({"success": "maybe"}, [], NAME)["error"]
    assert "tell the user" in error  # the model's words
    assert for_person(error) == (
        f"The {NAME} sent an answer pi-memory cannot read, so it is unknown whether the change was applied. Read "
        "the project store again (`pi-memory read project`) before you retry; if this repeats, the server may be a "
        "different program or a broken one.")


MODEL_WORDS = ("tell the user", "memory_read", "memory_add", "memory_replace", "memory_remove", "currentEntries")


def every_team_error() -> list[str]:
    """Every error text the team client can give, each way it can be worded."""
    from pi_memory.curated import team_answers as ta

    texts = [ta.no_answer(NAME, 8, method, bound) for method in ("GET", "POST")
             for bound in (None, "start", "tool", "command")]
    texts += [ta.too_long(NAME, 8 * 1024 * 1024, method) for method in ("GET", "POST")]
    texts += [ta.not_asked(NAME, bound) for bound in ("start", "tool", "command")]
    texts += [ta.not_asked_again(NAME, waited, 30, by) for waited in (2, None) for by in ("start", "command")]
    texts.append(result_fields({"success": "maybe"}, [], NAME)["error"])
    return texts


def test_no_team_error_tells_a_person_to_tell_the_user_or_names_a_models_tool():
    for text in every_team_error():
        shown = for_person(text)
        assert not [w for w in MODEL_WORDS if w.lower() in shown.lower()], (text, shown)


def test_an_answer_that_is_no_team_servers_in_a_persons_words(tmp_path):
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from pi_memory.curated.team_client import TeamProjectClient, TeamProjectError

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the handler's name
            body = self.server.body
            self.send_response(200)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        name = f"team project store 'acme' on {url}"
        for body, said in ((b"<html>log in</html>", (
                f"the {name} answered HTTP 200 with something that is not a pi-memory team server's answer (it "
                'begins: "<html>log in</html>"); nothing was read or changed. The address may reach another program, '
                "a proxy or a login page: check teamProjectStore.url.")),
                           (json.dumps({"entries": "one"}).encode(), (
                f"the {name} sent entries pi-memory cannot read (not a list of texts); nothing was changed. The server "
                "may be a different program: check teamProjectStore.url, and tell whoever runs the server."))):
            server.body = body
            client = TeamProjectClient(url, "acme", None, timeout=5)
            try:
                client.entries()
            except TeamProjectError as exc:
                assert (exc.kind, for_person(str(exc))) == ("not_ours", said)
            else:
                raise AssertionError("no error")
            finally:
                client.close()
    finally:
        server.shutdown()
