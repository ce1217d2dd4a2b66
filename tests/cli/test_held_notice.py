"""The read-only notice held back on the CLI's standard error (:mod:`pi_memory.cli.notices`): a command that ends
holds it until it ends, however slow; only a command that keeps running prints it after a delay."""

from __future__ import annotations

import logging
import time

import pytest

from pi_memory.cli.notices import DELAY_S, MARK, HeldNotices, delay_for


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def notice(text: str = "the folder is read-only") -> logging.LogRecord:
    record = logging.LogRecord("pi_memory.index", logging.WARNING, __file__, 1, text, None, None)
    setattr(record, MARK, True)
    return record


@pytest.mark.parametrize(("args", "delay"), [
    (["add", "memory", "x"], None),
    (["--json", "semantic", "add", "x"], None),
    (["memory-search", "build", "--dir", "/tmp/d"], None),
    ([], None),
    (["ui", "--no-browser"], DELAY_S),
    (["--json", "serve", "--port", "0"], DELAY_S),
    (["mcp"], DELAY_S),
    (["--dir", "/tmp/d", "mcp"], DELAY_S),
    (["--dir", "/tmp/serve", "status"], None),
    (["--dir"], None),
])
def test_only_commands_that_keep_running_print_the_notice_after_a_delay(args, delay):
    assert delay_for(args) == delay


def test_without_a_delay_the_notice_waits_for_the_end_of_the_command():
    out = Lines()
    held = HeldNotices(out, None)
    assert held.filter(notice()) is False
    time.sleep(DELAY_S + 0.2)  # a slow command: longer than the delay a running command gets
    assert out.lines == []
    held.release()
    assert out.lines == ["the folder is read-only"]


def test_without_a_delay_a_refusal_drops_the_notice_however_late_it_comes():
    out = Lines()
    held = HeldNotices(out, None)
    held.filter(notice())
    time.sleep(DELAY_S + 0.2)
    held.drop()
    held.release()  # what main() does at the end
    assert out.lines == []


def test_with_a_delay_the_notice_is_printed_while_the_command_runs():
    out = Lines()
    held = HeldNotices(out, 0.05)
    held.filter(notice())
    deadline = time.monotonic() + 5
    while not out.lines and time.monotonic() < deadline:
        time.sleep(0.01)
    assert out.lines == ["the folder is read-only"]


def test_other_records_pass_at_once():
    held = HeldNotices(Lines(), None)
    plain = logging.LogRecord("x", logging.WARNING, __file__, 1, "other", None, None)
    assert held.filter(plain) is True
